#include "suite/engine/evidence.h"

#include <fmt/format.h>

#include "dissector/evidence_comment.h"
#include "reports/text.h"

namespace roceconf::engine {
namespace {

std::string error_line(const std::string& path, const PortError& error) {
  return fmt::format("cannot write evidence {}: {}", path, error.message);
}

std::expected<void, std::string> write_frames(PcapngWriter& writer,
                                              const report::CaseResult& result) {
  for (const report::Event* event : report::events_in_time_order(result)) {
    const bool sent = event->kind == report::EventKind::kSent;
    if (!sent && event->kind != report::EventKind::kReceived) continue;
    if (event->frame.empty()) continue;  // nothing to show in a capture
    const std::string comment = evidence_comment(result, *event);
    auto written =
        writer.write({.frame = event->frame,
                      .unix_ns = event->unix_ns,
                      .comment = comment,
                      .interface = 0,
                      .direction = sent ? PacketDirection::kOutbound : PacketDirection::kInbound});
    if (!written) return std::unexpected(error_line(writer.path(), written.error()));
  }
  return {};
}

std::expected<PcapngWriter, std::string> create(const std::string& path) {
  PcapngOptions options;
  options.interfaces = {"tester"};
  auto created = PcapngWriter::create(path, options);
  if (!created) return std::unexpected(error_line(path, created.error()));
  return std::move(*created);
}

}  // namespace

std::string evidence_comment(const report::CaseResult& result, const report::Event& event) {
  // One line of valid UTF-8 first (reports/text.h); the format makes the tokens.
  const std::string id = report::one_line(result.id);
  const std::string step = report::one_line(event.step);
  const std::string note = report::one_line(event.text);
  const bool failed =
      result.verdict == report::Verdict::kFail || result.verdict == report::Verdict::kError;
  return format_evidence_comment(
      {.case_id = id,
       .step = step,
       .verdict = report::verdict_name(result.verdict),
       .event = report::event_kind_name(event.kind),
       .note = note,
       .failed_here = failed && !result.failed_step.empty() && event.step == result.failed_step});
}

std::expected<void, std::string> EvidenceWriter::open(const std::string& path) {
  if (auto closed = close(); !closed) return closed;
  auto created = create(path);
  if (!created) return std::unexpected(std::move(created.error()));
  writer_.emplace(std::move(*created));
  return {};
}

std::expected<void, std::string> EvidenceWriter::add_case(const report::CaseResult& result) {
  if (!writer_) return std::unexpected(std::string("evidence writer is not open (call open())"));
  if (auto written = write_frames(*writer_, result); !written) return written;
  if (auto flushed = writer_->flush(); !flushed)
    return std::unexpected(error_line(writer_->path(), flushed.error()));
  return {};
}

std::expected<void, std::string> EvidenceWriter::close() {
  if (!writer_) return {};
  auto closed = writer_->close();
  const std::string path = writer_->path();
  writer_.reset();
  if (!closed) return std::unexpected(error_line(path, closed.error()));
  return {};
}

std::expected<void, std::string> write_evidence_pcapng(const report::RunResult& run,
                                                       const std::string& path) {
  // One close() at the end: flushing per case copies the file each time.
  auto writer = create(path);
  if (!writer) return std::unexpected(std::move(writer.error()));
  for (const report::CaseResult& result : run.cases)
    if (auto written = write_frames(*writer, result); !written) return written;
  if (auto closed = writer->close(); !closed)
    return std::unexpected(error_line(path, closed.error()));
  return {};
}

}  // namespace roceconf::engine
