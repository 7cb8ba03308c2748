// `roceconf run`: runs the conformance catalogue against a target and writes the reports
// (HTML, JSON, JUnit XML, pcapng evidence). Without arguments: the whole catalogue against the
// in-process reference target, reports in ./roceconf-report/.
#pragma once

#include <atomic>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace roceconf::engine {
struct CaseDef;
class Target;
struct Timing;
}  // namespace roceconf::engine

namespace roceconf::cli {

struct RunArgs {
  std::string target = "reference";  // reference | daemon | raw
  std::vector<std::string> quirks;
  bool stock_responder = false;      // reference/daemon: a responder without the RCNF convention
  bool destructive = false;          // cases that need "destructive" run (else they SKIP)
  std::string clock = "virtual";     // reference: virtual (default) or real (the wall clock)
  std::vector<std::string> filters;  // --filter, repeatable: the union of the globs
  std::string rerun_failed;          // a report.json: run its fail/error/inconclusive cases
  std::string waivers;               // --waivers FILE
  bool list = false;
  std::string list_format = "text";  // --list --format text|md|json
  std::string out_dir = "roceconf-report";
  std::optional<std::string> junit, json, html, pcap;
  // Overwrite existing reports instead of moving them to previous/<time>/ beside them.
  bool force = false;
  // raw target
  std::string profile;
  std::optional<std::string> interface, target_mac, target_ip, tester_mac, tester_ip, agent;
  std::optional<std::uint16_t> service_port;
  bool skip_preflight = false;  // raw target: no tester-host preflight (recorded in the report)
  // timing
  double expect_floor_ms = 200;
  double silence_floor_ms = 20;
  double silence_rtts = 4;
  double timer_tolerance = 4;
  double timer_slack_ms = 50;
  std::uint64_t seed = 1;
  bool quiet = false;
  // Python case files or directories (--cases): run beside the catalogue, in this process.
  std::vector<std::string> cases;
};

// The exit status is the certificate's (reports/verdict.h): 0 when no case is blocking and the
// run was not interrupted, 1 when a case is blocking (a MUST case failed, errored or was
// inconclusive without a waiver) or the run was interrupted, 2 for usage or set-up errors (bad
// profile, bad waivers file, no privilege, unreachable target, a raw-target option without
// --target raw).
int run_run(const RunArgs& args);
// Same, with `extra` cases added to the built-in catalogue. Without extra cases, --cases loads
// the Python cases into this process (bindings/embed.h) and runs them as the extra cases.
int run_run(const RunArgs& args, const std::vector<engine::CaseDef>* extra);

void add_run_command(CLI::App& app, std::function<int()>& run);

// What `run` and `soak` share: the target options (--target, --quirk, --clock, the raw target's
// profile and addresses) and the timing options, the target they open (one clear error for a
// bad profile, a missing privilege, an unreachable agent) and the windows they give.
void add_target_options(CLI::App& cmd, RunArgs& args);
std::expected<std::unique_ptr<engine::Target>, std::string> open_run_target(const RunArgs& args);
engine::Timing run_timing(const RunArgs& args);

// While one lives, the first Ctrl-C sets flag() (the run stops between steps and writes what it
// has) and a second one stops the process; the handler before it comes back at its end.
class CtrlC {
 public:
  CtrlC();
  ~CtrlC();
  CtrlC(const CtrlC&) = delete;
  CtrlC& operator=(const CtrlC&) = delete;
  const std::atomic<bool>* flag() const;

 private:
  void (*previous_)(int) = nullptr;
};

}  // namespace roceconf::cli
