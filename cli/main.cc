// roceconf: the command line. Each subcommand registers itself; main parses, then runs the one
// chosen. Exceptions stop here: CLI11 reports usage errors with them.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/compare_command.h"
#include "cli/decode_command.h"
#include "cli/doctor_command.h"
#include "cli/fleet_command.h"
#include "cli/fuzz_command.h"
#include "cli/run_command.h"
#include "cli/soak_command.h"
#include "cli/target_command.h"
#include "man/cli_roff.h"

namespace {

// One line: what is wrong, and which help to read.
int usage_error(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  std::string message = e.what();
  std::string help = app.get_name() + " --help";
  const auto chosen = app.get_subcommands();
  if (!chosen.empty()) {
    help = app.get_name() + " " + chosen.front()->get_name() + " --help";
  } else if (argc > 1 && argv[1][0] != '-') {
    message = fmt::format("unknown command '{}'", argv[1]);  // CLI11 only says one is required
  }
  std::replace(message.begin(), message.end(), '\n', ' ');
  fmt::print(stderr, "roceconf: error: {} (see '{}')\n", message, help);
  return roceconf::cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("RoCE conformance suite and packet dissector", "roceconf");
  app.set_version_flag("--version", ROCECONF_VERSION);
  app.require_subcommand(1);
  std::function<int()> run;
  roceconf::cli::add_run_command(app, run);
  roceconf::cli::add_decode_command(app, run);
  roceconf::cli::add_target_command(app, run);
  roceconf::cli::add_compare_command(app, run);
  roceconf::cli::add_fleet_command(app, run);
  roceconf::cli::add_soak_command(app, run);
  roceconf::cli::add_fuzz_command(app, run);
  roceconf::cli::add_doctor_command(app, run);
  // Hidden: the build writes roceconf(1) with it, from this very tree.
  app.add_subcommand("man", "print this command's man page (roff)")->group("")->callback([&] {
    run = [&] {
      fmt::print("{}",
                 roceconf::man::page(app, "1", ROCECONF_VERSION,
                                     ".BR roceconf\\-agent (8),\n.BR roceconf\\-profile (5),\n"
                                     ".BR roceconf\\-case (5),\n.BR tshark (1)"));
      return 0;
    };
  });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive as "errors" with exit code 0.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    return usage_error(app, e, argc, argv);
  }
  try {
    return run ? run() : roceconf::cli::kExitUsage;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "roceconf: error: internal: {}\n", e.what());
    return 1;
  }
}
