#include "dissector/analysis/stream_analyzer.h"

#include <utility>

namespace roceconf::analysis {

bool FrameAnalysis::has(FlagCode code) const {
  return find(code) != nullptr;
}

const Flag* FrameAnalysis::find(FlagCode code) const {
  for (const Flag& f : flags)
    if (f.code == code) return &f;
  return nullptr;
}

StreamAnalyzer::StreamAnalyzer(AnalyzerOptions options)
    : options_(options),
      cm_(options.max_connections),
      rc_(RcTracker::Options{options.window, options.max_channels, options.capture_complete}) {}

const FrameAnalysis& StreamAnalyzer::add(std::uint64_t frame_number, std::int64_t time_ns,
                                         const Packet& p) {
  if (options_.keep_results) {
    if (const auto it = results_.find(frame_number); it != results_.end()) return it->second;
  }
  ++frames_;
  FrameAnalysis fa;
  fa.frame = frame_number;
  fa.time_ns = time_ns;
  answers_.clear();
  if (p.bth) {
    if (p.mad && p.mad->cm) {
      fa.cm = cm_.process(frame_number, time_ns, p, fa.flags);
      if (fa.cm->connection != 0 && fa.cm->state == CmState::kClosed && !fa.cm->retransmission)
        rc_.release(fa.cm->connection);
    } else {
      const Service service = opcode_info(p.bth->opcode).service;
      if (service == Service::kRc || service == Service::kUc)
        fa.rc = rc_.process(frame_number, time_ns, p, &cm_, fa.flags, answers_);
    }
  }
  if (!options_.keep_results) {
    scratch_ = std::move(fa);
    return scratch_;
  }
  for (const RcAnswer& a : answers_) {
    const auto it = results_.find(a.request_frame);
    if (it == results_.end()) continue;
    FrameAnalysis& earlier = it->second;
    if (earlier.rc && a.flag.code == FlagCode::kAckedBy && earlier.rc->acked_by == 0) {
      earlier.rc->acked_by = a.flag.frame;
      earlier.rc->ack_delay_ns = a.flag.ns;
    }
    earlier.flags.push_back(a.flag);
  }
  return results_.emplace(frame_number, std::move(fa)).first->second;
}

const FrameAnalysis* StreamAnalyzer::result(std::uint64_t frame_number) const {
  const auto it = results_.find(frame_number);
  return it == results_.end() ? nullptr : &it->second;
}

AnalyzerStats StreamAnalyzer::stats() const {
  AnalyzerStats s;
  s.frames = frames_;
  s.results = results_.size();
  s.connections = cm_.size();
  s.rc = rc_.stats();
  return s;
}

}  // namespace roceconf::analysis
