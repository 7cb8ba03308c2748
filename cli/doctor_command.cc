#include "cli/doctor_command.h"

#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/decode_command.h"
#include "cli/run_command.h"
#include "suite/engine/profile.h"
#include "suite/preflight/host_checks.h"

namespace roceconf::cli {
namespace {

struct DoctorArgs {
  RunArgs run;
  bool json = false;
};

std::expected<engine::Profile, std::string> run_profile(const RunArgs& r) {
  engine::Profile profile;
  if (!r.profile.empty()) {
    auto p = engine::load_profile(r.profile);
    if (!p) return std::unexpected(p.error());
    profile = std::move(*p);
  }
  engine::ProfileOverrides o{r.interface, r.target_mac,   r.target_ip, r.tester_mac,
                             r.tester_ip, r.service_port, r.agent};
  if (auto ok = engine::apply_overrides(profile, o); !ok) return std::unexpected(ok.error());
  if (auto ok = engine::validate(profile); !ok) return std::unexpected(ok.error());
  return profile;
}

int run_doctor(const DoctorArgs& args) {
  auto profile = run_profile(args.run);
  if (!profile) {
    fmt::print(stderr, "roceconf doctor: error: {}\n", profile.error());
    return kExitUsage;
  }
  auto checks = preflight::check_host(*profile, preflight::system_view(profile->netns));
  if (args.json) {
    fmt::print("{}\n", preflight::to_json(checks).dump(2));
  } else {
    for (const auto& c : checks) fmt::print("{}\n", preflight::format_line(c));
    int status = preflight::exit_status(checks);
    fmt::print("doctor: {}\n", status == 0   ? "all checks ok"
                               : status == 1 ? "warnings (the run can go ahead)"
                                             : "errors (fix them before a run)");
  }
  return preflight::exit_status(checks);
}

}  // namespace

std::expected<std::vector<std::pair<std::string, std::string>>, std::string> run_preflight(
    const RunArgs& args) {
  std::vector<std::pair<std::string, std::string>> out;
  if (args.skip_preflight) {
    out.emplace_back("skipped", "--skip-preflight");
    return out;
  }
  auto profile = run_profile(args);
  if (!profile) return out;
  auto checks = preflight::check_host(*profile, preflight::system_view(profile->netns));
  for (const auto& c : checks) {
    if (c.level == preflight::Level::error)
      return std::unexpected(fmt::format(
          "preflight: {}: {}; fix: {} (`roceconf doctor` lists every check; --skip-preflight "
          "overrides)",
          c.name, c.message, c.fix));
    out.emplace_back(c.name, fmt::format("{}: {}", preflight::level_name(c.level), c.message));
  }
  return out;
}

void add_doctor_command(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<DoctorArgs>();
  CLI::App* cmd = app.add_subcommand(
      "doctor",
      "Check the tester host for what silently breaks a raw run (its own RoCE, an rxe link, "
      "the tester IP, neighbour, MTU, offloads, privilege); exit 0 ok, 1 warnings, 2 errors");
  RunArgs& a = args->run;
  cmd->add_option("--profile", a.profile, "profile file (suite/engine/PROFILE.md)");
  cmd->add_option("--interface", a.interface, "interface to the device");
  cmd->add_option("--target-mac", a.target_mac, "the device's MAC");
  cmd->add_option("--target-ip", a.target_ip, "the device's IPv4 address");
  cmd->add_option("--tester-mac", a.tester_mac, "our MAC (default: the interface's)");
  cmd->add_option("--tester-ip", a.tester_ip, "our IPv4 address");
  cmd->add_option("--service-port", a.service_port, "the device's rdma_cm service port");
  cmd->add_option("--agent", a.agent, "HOST:PORT of roceconf-agent");
  cmd->add_flag("--json", args->json, "the checks as JSON on standard output");
  cmd->callback([args, &run] { run = [args] { return run_doctor(*args); }; });
}

}  // namespace roceconf::cli
