// The stream analysis front door: feed decoded frames in capture order, get per-frame CM and
// RC/UC judgements. Results are kept per frame number, so a consumer that visits a frame again
// (Wireshark re-dissects) reads what the first pass found; judgements that only a later frame
// can make (acked-by, nak-received) are added to the earlier frame's stored result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "dissector/analysis/cm_tracker.h"
#include "dissector/analysis/flags.h"
#include "dissector/analysis/rc_tracker.h"
#include "dissector/packet.h"

namespace roceconf::analysis {

struct FrameAnalysis {
  std::uint64_t frame = 0;
  std::int64_t time_ns = 0;
  std::optional<CmFrameInfo> cm;  // CM MADs
  std::optional<RcFrameInfo> rc;  // RC and UC packets
  Flags flags;

  bool has(FlagCode code) const;
  const Flag* find(FlagCode code) const;
};

struct AnalyzerOptions {
  std::size_t window = 4096;            // request entries kept per channel
  std::size_t max_channels = 65536;     // RC/UC channels kept (least recently used dropped)
  std::size_t max_connections = 65536;  // CM connections kept (oldest finished dropped)
  bool keep_results = true;             // false: add() returns a view valid until the next add()
  bool capture_complete = false;        // see RcTracker::Options::capture_complete
};

struct AnalyzerStats {
  std::size_t frames = 0;
  std::size_t results = 0;  // per-frame results stored
  std::size_t connections = 0;
  RcStats rc;
};

class StreamAnalyzer {
 public:
  StreamAnalyzer() : StreamAnalyzer(AnalyzerOptions{}) {}
  explicit StreamAnalyzer(AnalyzerOptions options);

  // Analyses one frame. Frames must come in capture order; adding a frame number already
  // stored returns the stored result unchanged.
  const FrameAnalysis& add(std::uint64_t frame_number, std::int64_t time_ns, const Packet& p);
  // The stored result of a frame (nullptr when never added, or keep_results is off).
  const FrameAnalysis* result(std::uint64_t frame_number) const;

  // The judgements about earlier frames (acked-by, nak-received) the last add() made; for
  // consumers that keep their own per-frame results (keep_results off).
  const std::vector<RcAnswer>& answers() const { return answers_; }

  const CmTracker& cm() const { return cm_; }
  const RcTracker& rc() const { return rc_; }
  AnalyzerStats stats() const;

 private:
  AnalyzerOptions options_;
  CmTracker cm_;
  RcTracker rc_;
  std::unordered_map<std::uint64_t, FrameAnalysis> results_;
  FrameAnalysis scratch_;
  std::vector<RcAnswer> answers_;
  std::size_t frames_ = 0;
};

}  // namespace roceconf::analysis
