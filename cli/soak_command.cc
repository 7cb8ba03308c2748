#include "cli/soak_command.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/decode_command.h"
#include "cli/duration.h"
#include "cli/run_command.h"
#include "reports/atomic_file.h"
#include "suite/engine/target.h"
#include "suite/soak/soak.h"

namespace roceconf::cli {

namespace {

struct SoakArgs {
  RunArgs target;  // the target and timing options, as `run` takes them
  std::uint32_t connections = 8;
  std::optional<double> duration_s;
  std::optional<std::uint64_t> ops;
  std::uint32_t episode_batches = 64;
  double snapshot_every_s = 5;
  std::string snapshots = "soak-snapshots.jsonl";
  std::string reproducer = "soak-reproducer.rcase";
  bool no_faults = false, no_target_ops = false, no_shrink = false;
  std::uint32_t shrink_budget = 3000;
  bool quiet = false;
};

int soak_error(const std::string& message) {
  std::fflush(stdout);
  fmt::print(stderr, "roceconf: error: {}\n", message);
  return kExitUsage;
}

int run_soak_command(const SoakArgs& args) {
  if (!args.duration_s && !args.ops)
    return soak_error(
        "give the soak a bound: --duration DURATION (90s, 10m, 24h) or --ops N (or both)");
  if (args.connections == 0 || args.connections > 64) return soak_error("--connections is 1 to 64");
  std::ofstream snapshots(args.snapshots, std::ios::trunc);
  if (!snapshots)
    return soak_error(fmt::format("cannot write the snapshots to '{}'", args.snapshots));
  auto target = open_run_target(args.target);
  if (!target) return soak_error(target.error());

  soak::SoakOptions o;
  o.seed = args.target.seed;
  o.connections = args.connections;
  o.duration_s = args.duration_s;
  o.ops = args.ops;
  o.episode_batches = args.episode_batches;
  o.snapshot_every_s = args.snapshot_every_s;
  o.mix.faults = !args.no_faults;
  o.mix.target_ops = !args.no_target_ops;
  o.shrink = !args.no_shrink;
  o.shrink_budget = args.shrink_budget;
  o.timing = run_timing(args.target);
  const CtrlC ctrl_c;
  o.interrupted = ctrl_c.flag();
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const soak::SoakResult r = soak::run_soak(
      **target, o,
      [&](const std::string& line) {
        snapshots << line << '\n';
        snapshots.flush();  // an interrupted soak keeps every snapshot written so far
      },
      [&](const std::string& line) {
        if (args.quiet) return;
        if (tty && line.starts_with("soak: ") && line.find("divergence in") == std::string::npos)
          fmt::print(stderr, "\r\033[K{}", line);
        else
          fmt::print(stderr, "{}{}\n", tty ? "\r\033[K" : "", line);
      });
  if (tty && !args.quiet) fmt::print(stderr, "\n");
  if (!r.error.empty()) return soak_error(fmt::format("the soak stopped: {}", r.error));
  fmt::print("soak: {} operations in {} episodes, {:.1f} MB moved, {:.1f} s, {} on {}\n", r.ops,
             r.episodes, static_cast<double>(r.payload) / 1e6, r.seconds,
             r.interrupted ? "interrupted" : "bound reached", (*target)->describe());
  fmt::print("snapshots:  {}\n", args.snapshots);
  if (!r.divergence) {
    fmt::print("divergences: 0\n");
    if (r.interrupted)
      fmt::print(stderr, "roceconf: interrupted: the snapshots hold what ran ({} operations)\n",
                 r.ops);
    return r.interrupted ? 1 : kExitOk;
  }
  const soak::Divergence& d = *r.divergence;
  if (auto ok = report::write_file_atomic(args.reproducer, d.script); !ok)
    return soak_error(
        fmt::format("cannot write the reproducer to '{}': {}", args.reproducer, ok.error()));
  fmt::print("divergences: 1, in episode {}: {}\n", d.episode, d.reason);
  fmt::print("  at: {}\n", d.step);
  if (d.reproduces)
    fmt::print(
        "reproducer: {} ({} operations of {}, {} steps, {} shrink runs); alone it FAILs: {}\n",
        args.reproducer, d.ops_after, d.ops_before, d.script_steps, d.shrink_runs,
        d.reproduced_reason);
  else
    fmt::print(
        "reproducer: {} (the whole episode, {} operations): the operations up to the divergence "
        "did not fail again from a reset target, so it depends on timing or on state the "
        "episode does not hold (a late answer: see --expect-floor-ms)\n",
        args.reproducer, d.ops_after);
  fmt::print("  run it:  roceconf run --cases {} --filter 'scripts/*'\n", args.reproducer);
  return 1;
}

}  // namespace

void add_soak_command(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<SoakArgs>();
  auto* cmd = app.add_subcommand(
      "soak",
      "Random concurrent traffic against a target, checked by an oracle, until a bound; the "
      "first divergence is shrunk to a short case script");
  add_target_options(*cmd, args->target);
  cmd->add_option("--seed", args->target.seed, "the traffic's seed (default 1)");
  add_duration_option(*cmd, args->duration_s);
  cmd->add_option("--ops", args->ops, "stop after this many operations");
  cmd->add_option("--connections", args->connections, "connections at once (default 8)");
  cmd->add_option("--episode-batches", args->episode_batches,
                  "batches of operations before the connections are opened afresh (default 64)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--snapshots", args->snapshots,
                  "JSON Lines of counters, QP states and throughput (default "
                  "soak-snapshots.jsonl)");
  cmd->add_option("--snapshot-every", args->snapshot_every_s,
                  "seconds between snapshots (default 5)")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--reproducer", args->reproducer,
                  "where the shrunk case script of a divergence goes (default "
                  "soak-reproducer.rcase)");
  cmd->add_flag("--no-faults", args->no_faults, "no duplicates and no PSN gaps");
  cmd->add_flag("--no-target-requests", args->no_target_ops,
                "the tester is the only requester (by default a target with the control API "
                "also posts SEND, WRITE and READ work)");
  cmd->add_flag("--no-shrink", args->no_shrink, "write the failing operations as they came");
  cmd->add_option("--shrink-runs", args->shrink_budget,
                  "candidate runs the shrinker may make (default 3000)");
  cmd->add_flag("--quiet", args->quiet, "no progress line");
  cmd->callback([args, &run] { run = [args] { return run_soak_command(*args); }; });
}

}  // namespace roceconf::cli
