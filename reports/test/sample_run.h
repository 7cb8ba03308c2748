// A small run for the report tests and the browser check: one case of each verdict, the failing
// one with field diffs and a timeline of frames, control events, expectations, a counter change
// and a kernel log line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/result.h"

namespace roceconf::report::test {

constexpr std::int64_t kT0 = 1'700'000'000'123'456'789;  // 2023-11-14T22:13:20.123Z

// An Ethernet/IPv4/UDP-4791 frame whose last byte tells frames apart; the payload is filler.
inline std::vector<std::uint8_t> sample_frame(std::uint8_t tag, std::size_t size = 78) {
  std::vector<std::uint8_t> f(size, 0);
  const std::uint8_t head[] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0x00};
  for (std::size_t i = 0; i < sizeof head && i < size; ++i) f[i] = head[i];
  f[size - 1] = tag;
  return f;
}

inline Event event(std::int64_t t_us, EventKind kind, std::string step, std::string text,
                   std::vector<std::uint8_t> frame = {}, std::vector<std::string> analysis = {}) {
  return Event{kT0 + t_us * 1000,  kind, std::move(step), std::move(text), std::move(frame),
               std::move(analysis)};
}

inline CaseResult failing_case() {
  CaseResult c;
  c.id = "psn/gap-naks-once";
  c.area = "psn";
  c.title = "A PSN gap draws exactly one NAK";
  c.description = "The responder must NAK the first out-of-sequence packet once\nand stay quiet.";
  c.clause = "IBA Vol 1 9.7.5.1.2 (C9-112)";
  c.requirement = "MUST";
  c.needs = {"responder"};
  c.source = "cases/psn/gap-naks-once.rcase";
  c.verdict = Verdict::kFail;
  c.reason = "expected one NAK <PSN sequence error>, got an ACK";
  c.failed_step = "psn/gap-naks-once.rcase:9 expect c NAK psn=1";
  c.diffs = {{"bth.psn", "0x000010", "0x000011"},
             {"aeth.syndrome", "0x60 (NAK PSN sequence error)", "0x1f (ACK)"}};
  c.start_unix_ns = kT0;
  c.duration_ns = 2'500'000;
  const std::string rc = "cases/psn/gap-naks-once.rcase:";
  // Recorded slightly out of order: writers must sort by time.
  c.events = {
      event(0, EventKind::kNote, rc + "1", "connected: QPN 0x12, PSN 0x00000f"),
      event(10, EventKind::kSent, rc + "7", "RC SEND_ONLY psn=0x00000f len=64", sample_frame(1)),
      event(55, EventKind::kReceived, rc + "8", "RC ACK psn=0x00000f msn=1", sample_frame(2),
            {"ack"}),
      event(40, EventKind::kExpectMet, rc + "8", "ACK psn=0x00000f matched frame 2"),
      event(70, EventKind::kSent, rc + "9", "RC SEND_ONLY psn=0x000011 (gap) len=64",
            sample_frame(3), {"out-of-sequence"}),
      event(120, EventKind::kReceived, rc + "9", "RC ACK psn=0x000011 msn=2", sample_frame(4)),
      event(121, EventKind::kExpectFailed, rc + "9", "expected NAK psn=0x000010, got ACK"),
      event(300, EventKind::kControl, rc + "10", "poll_cq: SUCCESS RECV 64 B"),
      event(310, EventKind::kControl, rc + "11", "query_qp: RTS"),
      event(315, EventKind::kKernelLog, "", "rdma_rxe: qp#18 moved to error state", {}, {"warn"}),
      event(320, EventKind::kCounter, "", "rcv_packets +2 (40 → 42)"),
  };
  // The kernel line as the device host stamped it: its clock 1.5 ms ahead.
  c.events[9].host_unix_ns = c.events[9].unix_ns + 1'500'000;
  return c;
}

inline RunResult sample_run() {
  RunResult run;
  run.version = "0.1.0";
  run.target_kind = "reference";
  run.target_description = "in-process reference NIC, quirks: psn-gap-ack";
  run.quirks = {"psn-gap-ack"};
  run.start_unix_ns = kT0;
  run.duration_ns = 1'234'000'000;
  run.rtt_ns = 41'000;
  run.silence_ns = 2'000'000;
  run.catalogue = {"2026.12", std::string(64, 'a'), "IBA Vol 1 Release 1.2.1 + Annex A17", 5, 5};
  run.identity.device = {{"name", "roceconf reference NIC"},
                         {"fw_ver", "0.1.0"},
                         {"quirks", "psn-gap-ack"},
                         {"source", "built-in"}};
  run.identity.host = {{"hostname", "tester"}, {"kernel", "6.1.0-test"}, {"os", "Debian 12"}};
  run.identity.seed = 7;
  run.identity.command_line = "roceconf run --quirk psn-gap-ack";

  CaseResult pass;
  pass.id = "psn/in-order-acks";
  pass.area = "psn";
  pass.title = "In-order SENDs are ACKed";
  pass.citation = "9.7.5.1; 9.7.5.1.1 C9-81";
  pass.rule = "An in-order request with AckReq set is ACKed with its own PSN";
  pass.release = "IBA Vol 1 Release 1.2.1 + Annex A17";
  pass.checked = "pib; unchecked: 9.7.5.1.1, C9-81";
  pass.clause = pass.citation + " (" + pass.release + "): " + pass.rule;
  pass.requirement = "MUST";
  pass.verdict = Verdict::kPass;
  pass.start_unix_ns = kT0 - 5'000'000;
  pass.duration_ns = 1'000'000;
  pass.events = {event(-5000, EventKind::kSent, "cases/psn/in-order-acks.rcase:4",
                       "RC SEND_ONLY psn=0", sample_frame(9)),
                 event(-4950, EventKind::kReceived, "cases/psn/in-order-acks.rcase:5",
                       "RC ACK psn=0", sample_frame(10))};

  CaseResult skip;
  skip.id = "cq/overflow";
  skip.area = "cq";
  skip.title = "CQ overflow raises CQ_ERR";
  skip.verdict = Verdict::kSkip;
  skip.reason = "needs control: the target has no control API";

  CaseResult error;
  error.id = "cm/rej-reason";
  error.area = "cm";
  error.title = "REJ names the reason";
  error.verdict = Verdict::kError;
  error.reason = "control socket closed";

  CaseResult inconclusive;
  inconclusive.id = "cm/mra";
  inconclusive.area = "cm";
  inconclusive.title = "MRA extends the timeout";
  inconclusive.verdict = Verdict::kInconclusive;
  inconclusive.reason = "round trip too noisy to judge the timer";

  run.cases = {pass, failing_case(), skip, error, inconclusive};
  return run;
}

}  // namespace roceconf::report::test
