// What a running case leaves behind: its events (frames sent and received, expectations met or
// failed, control exchanges, notes), each tagged with the case line that made it, and the
// verdicts that end a case early (CaseStop). Frames also pass through the stream analysis
// (annotator.h) so the evidence carries its flags beside each packet.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "capture/port/clock.h"
#include "dissector/packet.h"
#include "reports/result.h"

namespace roceconf::engine {

class Annotator;

class EvidenceRecorder {
 public:
  // Events go into `result`, stamped with `clock`'s Unix time.
  EvidenceRecorder(report::CaseResult& result, Clock& clock);
  ~EvidenceRecorder();
  EvidenceRecorder(const EvidenceRecorder&) = delete;
  EvidenceRecorder& operator=(const EvidenceRecorder&) = delete;

  // The case line the next events belong to ("cases/psn/gap.rcase:9").
  void set_step(std::string step) { step_ = std::move(step); }
  const std::string& step() const { return step_; }

  void record(report::EventKind kind, std::string text, std::vector<std::uint8_t> frame = {},
              std::vector<std::string> analysis = {});
  // A frame sent or received: the stream analysis sees it (at `time`, even when the frame
  // itself is no longer recorded), then it is recorded with the flags that analysis gave it and
  // `more` (the sent-framing findings of a frame the target sent).
  void record_frame(report::EventKind kind, std::string text, const Packet& packet,
                    std::vector<std::uint8_t> frame, TimeNs time,
                    std::vector<std::string> more = {});
  void note(std::string text);
  // A figure of a measuring case: kept in the result, and noted on the timeline.
  void measure(report::Measurement m);

  // Verdicts: each throws CaseStop. A failure and an inconclusive end leave their reason on the
  // timeline too; a skip and an error (the case itself is wrong) only in the result.
  [[noreturn]] void fail(std::string reason, std::vector<report::FieldDiff> diffs = {});
  [[noreturn]] void skip(std::string reason);
  [[noreturn]] void inconclusive(std::string reason);
  [[noreturn]] void error(std::string reason);

  // Frames recorded per case at most; the rest are counted (dropped_frames()).
  static constexpr std::uint64_t kMaxFrameEvents = 5000;
  std::uint64_t dropped_frames() const { return dropped_frames_; }

 private:
  report::CaseResult& result_;
  Clock& clock_;
  std::string step_;
  std::uint64_t frame_events_ = 0;
  std::uint64_t dropped_frames_ = 0;
  std::unique_ptr<Annotator> annotator_;
};

}  // namespace roceconf::engine
