// `roceconf soak`: random concurrent traffic against a target until a bound, checked operation
// by operation against an oracle (render.h), with periodic snapshots. The run is a sequence of
// episodes: each opens its connections afresh, runs a seeded batch of operations and closes
// them, so memory stays flat however long the soak runs. On the first divergence the episode's
// operations are shrunk to a short sequence that still fails, written as a case script.
#pragma once

#include <atomic>
#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "suite/engine/target.h"
#include "suite/engine/timing.h"
#include "suite/soak/plan.h"

namespace roceconf::soak {

struct SoakOptions {
  std::uint64_t seed = 1;
  std::uint32_t connections = 8;
  std::optional<double> duration_s;    // stop after this much wall time
  std::optional<std::uint64_t> ops;    // stop after this many operations
  std::uint32_t episode_batches = 64;  // batches per episode
  double snapshot_every_s = 5;
  std::uint32_t max_pmtu = 4096;
  Mix mix;
  bool shrink = true;
  std::uint32_t shrink_budget = 3000;  // candidate runs at most
  engine::Timing timing;
  bool rtt_given = false;
  const std::atomic<bool>* interrupted = nullptr;
};

// One line of the snapshot stream (JSON Lines), as written.
using SnapshotSink = std::function<void(const std::string& json_line)>;
using ProgressSink = std::function<void(const std::string& line)>;

struct Divergence {
  std::uint64_t episode = 0;
  std::uint64_t episode_seed = 0;
  std::string reason;  // the failing step's reason
  std::string step;    // the failing step as written
  std::size_t ops_before = 0, ops_after = 0;
  std::size_t shrink_runs = 0;
  std::string script;  // the shrunk reproducer (a case script)
  std::size_t script_steps = 0;
  bool reproduces = false;  // the shrunk script FAILs alone, run once more from scratch
  std::string reproduced_reason;
};

struct SoakResult {
  std::uint64_t episodes = 0, ops = 0, payload = 0;
  double seconds = 0;
  bool interrupted = false;
  std::optional<Divergence> divergence;
  std::string error;  // the soak could not run (a set-up step ERRORed): what and why
};

// Runs the soak. `snapshots` gets a line every snapshot_every_s and a last one at the end,
// `progress` a human line each time.
SoakResult run_soak(engine::Target& target, const SoakOptions& options,
                    const SnapshotSink& snapshots, const ProgressSink& progress);

// The target's layout for a soak: control QPs where the target has control, else connections
// to its responder (one probe connection reads the region and receive sizes it announces).
std::expected<Layout, std::string> soak_layout(engine::Target& target, const SoakOptions& options,
                                               std::mt19937_64& random);

}  // namespace roceconf::soak
