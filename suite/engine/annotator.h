// Analysis flags for the ladder: each frame of a case, in order, through the dissector's
// stream analysis (dissector/analysis, the code the Wireshark plugin runs), so the evidence says
// "out-of-sequence", "nak-seq-error (caused by frame 3)", "acked-by ..." beside the packets.
// Frame numbers are the case's own: the n-th frame sent or received in the case.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

#include "capture/port/clock.h"
#include "dissector/analysis/stream_analyzer.h"
#include "dissector/packet.h"

namespace roceconf::engine {

class Annotator {
 public:
  Annotator() : analyzer_(options()) {}

  std::vector<std::string> add(const Packet& p, TimeNs time) {
    const auto& result = analyzer_.add(++frames_, time, p);
    std::vector<std::string> out;
    for (const auto& f : result.flags) out.push_back(fmt::format("{}: {}", f.name(), f.text()));
    return out;
  }

 private:
  static analysis::AnalyzerOptions options() {
    analysis::AnalyzerOptions o;
    o.keep_results = false;  // a case reads each result once, as it is made
    // The ladder holds every frame the tester sent: an ACK of a PSN it never sent is the
    // device's fault, not capture loss.
    o.capture_complete = true;
    return o;
  }
  analysis::StreamAnalyzer analyzer_;
  std::uint64_t frames_ = 0;
};

}  // namespace roceconf::engine
