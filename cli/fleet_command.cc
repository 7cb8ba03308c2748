#include "cli/fleet_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/decode_command.h"
#include "reports/atomic_file.h"
#include "reports/fleet_report.h"
#include "reports/terminal.h"

namespace roceconf::cli {

int run_fleet_merge(const FleetMergeArgs& args) {
  const auto error = [](const std::string& message) {
    std::fflush(stdout);
    fmt::print(stderr, "roceconf: error: {}\n", message);
    return kExitUsage;
  };
  std::vector<report::FleetDevice> devices;
  std::vector<std::string> seen;
  for (const std::string& path : args.reports) {
    std::error_code ec;
    const std::string canonical = std::filesystem::weakly_canonical(path, ec).string();
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end())
      return error(fmt::format("{} is given twice (give each device's report once)", path));
    seen.push_back(canonical);
    auto device = report::read_device_report(path);
    if (!device) return error(device.error());
    devices.push_back(std::move(*device));
  }
  report::Fleet fleet = report::merge_fleet(std::move(devices));
#ifdef ROCECONF_VERSION
  fleet.version = ROCECONF_VERSION;
#endif
  if (args.json)
    if (auto ok = report::write_file_atomic(*args.json, report::fleet_to_json(fleet)); !ok)
      return error(ok.error());
  if (args.html)
    if (auto ok = report::write_file_atomic(*args.html, report::fleet_to_html(fleet)); !ok)
      return error(ok.error());
  if (!args.quiet) {
    fmt::print("{}", report::fleet_summary_text(fleet, report::is_terminal(stdout)));
    if (args.html) fmt::print("{:<12} {}\n", "HTML report", *args.html);
    if (args.json) fmt::print("{:<12} {}\n", "JSON report", *args.json);
  }
  return fleet.exit_status();
}

void add_fleet_command(CLI::App& app, std::function<int()>& run) {
  auto* fleet = app.add_subcommand("fleet", "Reports over many devices");
  fleet->require_subcommand(1);
  auto args = std::make_shared<FleetMergeArgs>();
  auto* merge = fleet->add_subcommand(
      "merge",
      "Merge devices' JSON reports into one fleet report: case x device, the cases where they "
      "disagree first; exit 1 when a device failed its set-up or its certificate");
  merge->add_option("REPORT", args->reports, "report.json of each device (roceconf run --json)")
      ->required();
  merge->add_option("--html", args->html, "write the fleet report as HTML here");
  merge->add_option("--json", args->json, "write the fleet report as JSON here");
  merge->add_flag("--quiet", args->quiet, "no summary");
  merge->callback([args, &run] { run = [args] { return run_fleet_merge(*args); }; });
}

}  // namespace roceconf::cli
