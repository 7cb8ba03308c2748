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

int run_doctor(const DoctorArgs& args) {
  engine::Profile profile;
  if (!args.run.profile.empty()) {
    auto p = engine::load_profile(args.run.profile);
    if (!p) {
      fmt::print(stderr, "roceconf doctor: error: {}\n", p.error());
      return kExitUsage;
    }
    profile = std::move(*p);
  }
  const RunArgs& r = args.run;
  engine::ProfileOverrides o{r.interface, r.target_mac,   r.target_ip, r.tester_mac,
                             r.tester_ip, r.service_port, r.agent};
  auto ok = engine::apply_overrides(profile, o);
  if (ok) ok = engine::validate(profile);
  if (!ok) {
    fmt::print(stderr, "roceconf doctor: error: {}\n", ok.error());
    return kExitUsage;
  }
  auto checks = preflight::check_host(profile, preflight::system_view(profile.netns));
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
