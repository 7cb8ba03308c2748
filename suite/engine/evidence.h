// The pcapng evidence of a run (reports/EVIDENCE.md): every frame the tester sent or received,
// in run order, each tagged with a comment naming its case, step and the case's verdict, in the
// format of dissector/evidence_comment.h (which the Wireshark plugin parses with the same code):
//
//   roceconf case=<id> step=<step> verdict=<verdict> event=<sent|received>[ note=<text>]
//
// Sent frames are outbound, received frames inbound (epb_flags).
#pragma once

#include <expected>
#include <optional>
#include <string>

#include "capture/port/pcapng_writer.h"
#include "reports/result.h"

namespace roceconf::engine {

// The comment of one frame event of `result` (see above).
std::string evidence_comment(const report::CaseResult& result, const report::Event& event);

// Writes the whole run to `path` (atomically: the file appears when complete). The error is one
// line naming the path and what to do.
std::expected<void, std::string> write_evidence_pcapng(const report::RunResult& run,
                                                       const std::string& path);

// The same file written while the run goes: each add_case() writes that case's frames and
// publishes the file, so an interrupted run keeps every case that completed.
class EvidenceWriter {
 public:
  std::expected<void, std::string> open(const std::string& path);
  std::expected<void, std::string> add_case(const report::CaseResult& result);
  // Idempotent; the destructor closes too (errors then ignored).
  std::expected<void, std::string> close();

  bool is_open() const { return writer_.has_value(); }
  std::uint64_t packets() const { return writer_ ? writer_->packets() : 0; }

 private:
  std::optional<PcapngWriter> writer_;
};

}  // namespace roceconf::engine
