#include "cli/fuzz_command.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "capture/pcap_reader.h"
#include "cases/builtin.h"
#include "cli/decode_command.h"
#include "cli/duration.h"
#include "cli/run_command.h"
#include "reports/atomic_file.h"
#include "suite/engine/evidence.h"
#include "suite/engine/reference_target.h"
#include "suite/engine/runner.h"
#include "suite/fuzz/fuzz.h"

namespace roceconf::cli {

namespace {

struct FuzzArgs {
  RunArgs target;
  std::optional<double> duration_s;
  std::optional<std::uint64_t> inputs;
  std::uint32_t episode_inputs = 3;
  std::vector<std::string> corpus;
  bool no_catalogue = false;
  std::string snapshots = "fuzz-snapshots.jsonl";
  double snapshot_every_s = 5;
  std::string out_dir = "fuzz-findings";
  bool no_shrink = false, stop_at_first = false;
  std::uint32_t shrink_budget = 400;
  bool quiet = false;
};

int fuzz_error(const std::string& message) {
  std::fflush(stdout);
  fmt::print(stderr, "roceconf: error: {}\n", message);
  return kExitUsage;
}

// The frames the tester sends in the catalogue, from one run of it against a clean reference
// target in this process (nothing goes on any wire): the seeds of real traffic.
std::vector<std::pair<std::vector<std::uint8_t>, std::string>> catalogue_frames() {
  std::vector<std::pair<std::vector<std::uint8_t>, std::string>> out;
  auto target = engine::ReferenceTarget::create({});
  if (!target) return out;
  std::vector<const engine::CaseDef*> cases;
  for (const auto& c : cases::builtin_catalogue().cases()) cases.push_back(&c);
  engine::RunOptions o;
  report::RunResult run;
  engine::run_cases(**target, cases, o, run);
  for (const auto& c : run.cases)
    for (const auto& e : c.events)
      if (e.kind == report::EventKind::kSent && !e.frame.empty())
        out.emplace_back(e.frame, "catalogue " + c.id);
  return out;
}

std::expected<std::size_t, std::string> add_pcap(fuzz::Corpus& corpus, const std::string& path) {
  auto reader = PcapReader::open(path);
  if (!reader) return std::unexpected(reader.error());
  if (reader->link_type() != LinkType::kEthernet)
    return std::unexpected(fmt::format("{}: only Ethernet captures seed the fuzzer", path));
  std::vector<std::vector<std::uint8_t>> frames;
  for (;;) {
    auto f = reader->next();
    if (!f) return std::unexpected(f.error());
    if (!*f) break;
    frames.emplace_back((*f)->data.begin(), (*f)->data.end());
  }
  std::vector<std::pair<Bytes, std::string>> views;
  for (std::size_t i = 0; i < frames.size(); ++i)
    views.emplace_back(Bytes(frames[i]), fmt::format("{} frame {}", path, i + 1));
  return corpus.add_frames(views);
}

int run_fuzz_command(const FuzzArgs& args) {
  if (!args.duration_s && !args.inputs)
    return fuzz_error("give the fuzz a bound: --duration DURATION (90s, 10m, 24h) or --inputs N");
  if (args.target.target == "raw" && !args.target.destructive)
    return fuzz_error(
        "fuzzing a real device sends it input meant to crash or wedge it: add --destructive to "
        "say that is what you want (and run it on a lab device, never a production host)");
  fuzz::Corpus corpus = fuzz::Corpus::built_in();
  std::size_t from_catalogue = 0, from_pcap = 0;
  for (const auto& p : args.corpus) {
    auto n = add_pcap(corpus, p);
    if (!n) return fuzz_error(fmt::format("--corpus: {}", n.error()));
    from_pcap += *n;
  }
  if (!args.no_catalogue) {
    const auto frames = catalogue_frames();
    std::vector<std::pair<Bytes, std::string>> views;
    for (const auto& [f, origin] : frames) views.emplace_back(Bytes(f), origin);
    from_catalogue = corpus.add_frames(views);
  }
  std::ofstream snapshots(args.snapshots, std::ios::trunc);
  if (!snapshots)
    return fuzz_error(fmt::format("cannot write the snapshots to '{}'", args.snapshots));
  auto target = open_run_target(args.target);
  if (!target) return fuzz_error(target.error());
  (*target)->set_destructive(true);

  fuzz::FuzzOptions o;
  o.seed = args.target.seed;
  o.duration_s = args.duration_s;
  o.inputs = args.inputs;
  o.max_inputs_per_episode = args.episode_inputs;
  o.snapshot_every_s = args.snapshot_every_s;
  o.shrink = !args.no_shrink;
  o.shrink_budget = args.shrink_budget;
  o.stop_at_first = args.stop_at_first;
  o.timing = run_timing(args.target);
  const CtrlC ctrl_c;
  o.interrupted = ctrl_c.flag();
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  if (!args.quiet)
    fmt::print(stderr,
               "fuzz: {} seeds ({} from the catalogue, {} from --corpus, the rest built in) "
               "against {}\n",
               corpus.size(), from_catalogue, from_pcap, (*target)->describe());
  const fuzz::FuzzResult r = fuzz::run_fuzz(
      **target, corpus, o,
      [&](const std::string& line) {
        snapshots << line << '\n';
        snapshots.flush();
      },
      [&](const std::string& line) {
        if (args.quiet) return;
        const bool status = line.starts_with("fuzz: ") && line.find(" s, ") != std::string::npos;
        if (tty && status)
          fmt::print(stderr, "\r\033[K{}", line);
        else
          fmt::print(stderr, "{}{}\n", tty ? "\r\033[K" : "", line);
      });
  if (tty && !args.quiet) fmt::print(stderr, "\n");
  if (!r.error.empty()) return fuzz_error(fmt::format("the fuzz stopped: {}", r.error));
  fmt::print(
      "fuzz: {} inputs in {} episodes, {:.1f} s ({:.0f} inputs/s), {} refused by the "
      "builder, {} on {}\n",
      r.inputs, r.episodes, r.seconds,
      r.seconds > 0 ? static_cast<double>(r.inputs) / r.seconds : 0.0, r.refused,
      r.interrupted ? "interrupted" : "bound reached", (*target)->describe());
  fmt::print("snapshots: {}\n", args.snapshots);
  if (r.findings.empty()) {
    fmt::print("findings: 0\n");
    return r.interrupted ? 1 : kExitOk;
  }
  std::error_code ec;
  std::filesystem::create_directories(args.out_dir, ec);
  if (ec) return fuzz_error(fmt::format("cannot create '{}': {}", args.out_dir, ec.message()));
  std::string counts;
  for (const auto& [kind, n] : r.seen)
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, kind);
  fmt::print("findings: {} ({} episodes in all)\n", r.findings.size(), counts);
  for (const auto& f : r.findings) {
    const std::string base = (std::filesystem::path(args.out_dir) / ("fuzz-" + f.kind)).string();
    if (auto ok = report::write_file_atomic(base + ".rcase", f.script); !ok)
      return fuzz_error(fmt::format("cannot write '{}.rcase': {}", base, ok.error()));
    report::RunResult evidence;
    evidence.cases.push_back(f.replay);
    const bool pcap = static_cast<bool>(engine::write_evidence_pcapng(evidence, base + ".pcapng"));
    fmt::print("  {}: {}\n", f.kind, f.detail);
    fmt::print(
        "    found in episode {} (phase {}) after {} inputs, {:.1f} s; {} frames shrunk to {} in "
        "{} runs\n",
        f.episode, fuzz::phase_name(f.phase), f.inputs_before + f.found.size(), f.seconds,
        f.found.size(), f.shrunk.size(), f.shrink_runs);
    fmt::print("    reproducer: {}.rcase{}; alone it {}\n", base,
               pcap ? fmt::format(", evidence {}.pcapng", base) : "",
               f.reproduces ? "FAILs: " + f.reproduced_reason
                            : "does not fail (" + f.reproduced_reason +
                                  "): timing or state the episode does not hold");
  }
  fmt::print(
      "  replay: roceconf run --cases {}/fuzz-KIND.rcase --filter 'scripts/*' --destructive\n",
      args.out_dir);
  return 1;
}

}  // namespace

void add_fuzz_command(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<FuzzArgs>();
  auto* cmd = app.add_subcommand(
      "fuzz",
      "Hostile wire input against a target: mutated frames of real traffic, a liveness probe "
      "after each episode, and each class of finding shrunk to a case script");
  add_target_options(*cmd, args->target);
  cmd->add_option("--seed", args->target.seed, "the mutations' seed (default 1)");
  add_duration_option(*cmd, args->duration_s);
  cmd->add_option("--inputs", args->inputs, "stop after this many mutated frames");
  cmd->add_option("--episode-inputs", args->episode_inputs,
                  "mutated frames per episode at most, before the liveness probe (default 3)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--corpus", args->corpus,
                  "a pcap or pcapng whose RoCEv2 frames seed the mutations too (repeatable)")
      ->check(CLI::ExistingFile);
  cmd->add_flag(
      "--no-catalogue-seeds", args->no_catalogue,
      "do not seed from the frames the catalogue sends (built-in seeds and --corpus only)");
  cmd->add_flag("--destructive", args->target.destructive,
                "required with --target raw: the device may crash or wedge");
  cmd->add_option("--snapshots", args->snapshots,
                  "JSON Lines of inputs, throughput and findings (default fuzz-snapshots.jsonl)");
  cmd->add_option("--snapshot-every", args->snapshot_every_s,
                  "seconds between snapshots (default 5)")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--out", args->out_dir,
                  "where reproducers and their evidence go (default fuzz-findings)");
  cmd->add_flag("--no-shrink", args->no_shrink, "write each finding's episode as it came");
  cmd->add_option("--shrink-runs", args->shrink_budget,
                  "reproduction runs the shrinker may make per finding (default 400)");
  cmd->add_flag("--stop-at-first", args->stop_at_first, "stop when the first finding is shrunk");
  cmd->add_flag("--quiet", args->quiet, "no progress line");
  cmd->callback([args, &run] { run = [args] { return run_fuzz_command(*args); }; });
}

}  // namespace roceconf::cli
