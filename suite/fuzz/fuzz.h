// `roceconf fuzz`: hostile wire input against a target, episode after episode, with a liveness
// oracle and a shrinker. An episode resets the target, opens a sentinel connection and a victim
// connection brought to some point of its life (inputs.h Phase), sends the episode's mutated
// frames to the victim, and then asks whether the device still works: the sentinel answers, the
// CM answers, the victim (through the control API) answers or is in Error by right, and no
// answer came that a conformant device never sends (an answer to a frame with a bad ICRC, an
// ACK for an access outside the region). The first finding of each class is shrunk to the
// fewest frames and field changes that still give it from a reset target, and written as a case
// script that `roceconf run --cases` replays.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/result.h"
#include "suite/engine/target.h"
#include "suite/engine/timing.h"
#include "suite/fuzz/inputs.h"

namespace roceconf::fuzz {

struct FuzzOptions {
  std::uint64_t seed = 1;
  std::optional<double> duration_s;     // stop after this much wall time
  std::optional<std::uint64_t> inputs;  // stop after this many inputs
  std::uint32_t max_inputs_per_episode = 3;
  double snapshot_every_s = 5;
  bool shrink = true;
  std::uint32_t shrink_budget = 400;  // reproduction runs per finding at most
  bool stop_at_first = false;         // stop when the first finding is shrunk
  engine::Timing timing;
  bool rtt_given = false;
  const std::atomic<bool>* interrupted = nullptr;
};

// What an episode found. `kind` is the class (dead, wedged, wrong-answer); `what` tells
// findings of one class apart while shrinking ("wedged: cm", "wrong-answer: bad-icrc").
struct Finding {
  std::string kind;
  std::string what;
  std::string detail;  // one line
  std::uint64_t episode = 0;
  std::uint64_t inputs_before = 0;  // inputs sent in the run before the episode's first
  double seconds = 0;               // into the run when it was found
  Phase phase = Phase::kEstablished;
  std::vector<Input> found;   // the episode's inputs
  std::vector<Input> shrunk;  // after shrinking
  std::size_t at = 0;         // the input after which it showed (wrong answers), in `shrunk`
  std::size_t shrink_runs = 0;
  std::string script;       // the reproducer (a case script)
  bool reproduces = false;  // the script FAILs alone on a reset target
  std::string reproduced_reason;
  report::CaseResult replay;  // that run: its timeline is the evidence of the finding
};

struct FuzzResult {
  std::uint64_t episodes = 0, inputs = 0;
  std::uint64_t refused = 0;  // inputs the frame builder could not make (counted, not sent)
  std::uint64_t setup_failures = 0;
  double seconds = 0;
  bool interrupted = false;
  std::vector<Finding> findings;              // the first of each class, shrunk
  std::map<std::string, std::uint64_t> seen;  // findings per class, all episodes
  std::string error;                          // the fuzz could not run at all
};

using LineSink = std::function<void(const std::string&)>;

// Runs the fuzz against `target` with seeds from `corpus`. `snapshots` gets a JSON line every
// snapshot_every_s and one at the end; `progress` human lines.
FuzzResult run_fuzz(engine::Target& target, const Corpus& corpus, const FuzzOptions& options,
                    const LineSink& snapshots, const LineSink& progress);

// The case script of `f` (its shrunk inputs at its phase) on a target with or without the
// control API: the set-up, the inputs, what a conformant device answers to each where a wrong
// answer was found, and the oracle's steps; `header` lines become its leading comments.
std::string render_script(const Finding& f, bool control, const std::vector<std::string>& header);

}  // namespace roceconf::fuzz
