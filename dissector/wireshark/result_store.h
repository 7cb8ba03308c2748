// Per-frame stream analysis results kept for Wireshark's later passes, compactly: a million-frame
// capture must not cost a heap node and a flag vector per frame (StreamAnalyzer's own
// keep_results map does, which in tshark costs more than the analysis itself). RC/UC results sit
// in a deque in frame order, flags in one array; CM frames, rarer, are kept whole.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "dissector/analysis/stream_analyzer.h"

namespace roceconf::wireshark {

class ResultStore {
 public:
  // Stores the result of a frame analysed with keep_results off; frames come in order.
  void put(const analysis::FrameAnalysis& result);
  // A later frame's judgement about an earlier one.
  void answer(const analysis::RcAnswer& answer);
  // The stored result of `frame` rebuilt into `out`; false when none.
  bool get(std::uint64_t frame, analysis::FrameAnalysis& out) const;
  void clear();

 private:
  struct Slot {
    std::int64_t time_ns = 0;
    std::uint32_t flags_begin = 0;
    std::uint32_t flags_count = 0;
    analysis::RcFrameInfo rc;
  };
  std::vector<std::uint32_t> slot_of_;  // frame - 1 -> slot + 1; 0: none
  std::deque<Slot> slots_;
  std::vector<analysis::Flag> flags_;
  std::unordered_map<std::uint64_t, analysis::FrameAnalysis> other_;     // CM and flag-only
  std::unordered_map<std::uint64_t, std::vector<analysis::Flag>> late_;  // nak-received, ...
};

}  // namespace roceconf::wireshark
