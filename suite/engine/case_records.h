// The records a case's timeline gets beside its packets and control exchanges, read from the
// target around the case: the counters that changed across it (one counters read before, one
// after) and, on a target that keeps one (an agent: /dev/kmsg), the device host's kernel log
// lines stamped within the case's window, moved onto the tester's clock. The host's clock is
// placed against the tester's from the kernel_log exchanges themselves: the host's now_unix_ns
// lies between the tester's send and receive times, so host = tester + offset within half the
// round trip; the narrowest exchange of the run gives the estimate.
//
// Nothing here changes a verdict: a read that fails is a note on the timeline, and a target
// without the control API (or without the ops) gets no records and no note.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "control/client.h"
#include "reports/result.h"
#include "suite/engine/target.h"

namespace roceconf::engine {

class CaseRecords {
 public:
  explicit CaseRecords(Target& target);

  // After the target's reset, before the case runs: its counters as the case starts.
  void begin(report::CaseResult& result);
  // After the case: the counters that changed and the kernel log lines of the case's window
  // (result.start_unix_ns to now), on the timeline.
  void end(report::CaseResult& result);

  // Kernel lines asked per case at most (the newest are kept).
  static constexpr std::uint32_t kMaxLinesPerCase = 200;

  // The host clock estimate so far (exchanges == 0: none).
  const report::HostClock& host_clock() const { return clock_; }
  // Said once for the run: the estimate, or why the records could not be read.
  std::vector<std::string> notes() const;

  // The narrowest of the estimates so far and one exchange: sent and received on the tester's
  // clock, `host_now` the host's Unix time in its reply.
  static report::HostClock narrowest(report::HostClock best, std::int64_t sent,
                                     std::int64_t received, std::int64_t host_now);

 private:
  void probe();
  std::int64_t now();
  // A note on the case's timeline, now.
  void note(report::CaseResult& result, std::string text);
  std::optional<control::KernelLogReply> fetch(const control::KernelLog& request,
                                               std::string& why_not);

  Target& target_;
  control::Client client_;
  bool probed_ = false;
  bool counters_ = false;
  bool kernel_log_ = false;
  std::optional<std::map<std::string, std::uint64_t>> before_;
  report::HostClock clock_;
  std::string off_reason_;   // why the records stopped, for the run note
  std::string stamp_clock_;  // how the host mapped its records' stamps, as it last said
};

}  // namespace roceconf::engine
