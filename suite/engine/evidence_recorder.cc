#include "suite/engine/evidence_recorder.h"

#include <fmt/format.h>

#include "suite/engine/annotator.h"
#include "suite/engine/case_stop.h"

namespace roceconf::engine {

EvidenceRecorder::EvidenceRecorder(report::CaseResult& result, Clock& clock)
    : result_(result), clock_(clock), annotator_(std::make_unique<Annotator>()) {}

EvidenceRecorder::~EvidenceRecorder() = default;

void EvidenceRecorder::record(report::EventKind kind, std::string text,
                              std::vector<std::uint8_t> frame, std::vector<std::string> analysis) {
  // A flooding target must not grow the evidence without bound.
  if (!frame.empty() && ++frame_events_ > kMaxFrameEvents) {
    ++dropped_frames_;
    return;
  }
  report::Event e;
  e.analysis = std::move(analysis);
  e.unix_ns = clock_.unix_ns(clock_.now_ns());
  e.kind = kind;
  e.step = step_;
  e.text = std::move(text);
  e.frame = std::move(frame);
  result_.events.push_back(std::move(e));
}

void EvidenceRecorder::record_frame(report::EventKind kind, std::string text, const Packet& packet,
                                    std::vector<std::uint8_t> frame, TimeNs time,
                                    std::vector<std::string> more) {
  auto flags = annotator_->add(packet, time);
  flags.insert(flags.end(), std::make_move_iterator(more.begin()),
               std::make_move_iterator(more.end()));
  record(kind, std::move(text), std::move(frame), std::move(flags));
}

void EvidenceRecorder::measure(report::Measurement m) {
  note(fmt::format("measured {}: {}{}", m.name, m.value, m.finding ? " (finding)" : ""));
  result_.measurements.push_back(std::move(m));
}

void EvidenceRecorder::note(std::string text) {
  record(report::EventKind::kNote, std::move(text));
}

void EvidenceRecorder::fail(std::string reason, std::vector<report::FieldDiff> diffs) {
  record(report::EventKind::kExpectFailed, reason);
  throw CaseStop(report::Verdict::kFail, std::move(reason), std::move(diffs));
}

void EvidenceRecorder::skip(std::string reason) {
  throw CaseStop(report::Verdict::kSkip, std::move(reason));
}

void EvidenceRecorder::inconclusive(std::string reason) {
  record(report::EventKind::kNote, reason);
  throw CaseStop(report::Verdict::kInconclusive, std::move(reason));
}

void EvidenceRecorder::error(std::string reason) {
  throw CaseStop(report::Verdict::kError, std::move(reason));
}

}  // namespace roceconf::engine
