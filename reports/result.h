// The result model of a conformance run: what the engine fills in while it runs cases and what
// every writer (JSON, JUnit XML, HTML, and the pcapng evidence in suite/) reads. Plain values,
// no behaviour beyond counting, so a report can be written at any moment of a run (Ctrl-C
// writes what completed).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace roceconf::report {

enum class Verdict : std::uint8_t { kPass, kFail, kSkip, kError, kInconclusive };

// "pass", "fail", "skip", "error", "inconclusive" (the JSON report's words).
std::string_view verdict_name(Verdict verdict);

// A field that did not match: `bth.psn expected 0x000010 vs actual 0x000011`.
struct FieldDiff {
  std::string field;     // dotted name, e.g. "aeth.syndrome"
  std::string expected;  // as the case wrote it, e.g. "0x60 (NAK PSN sequence error)"
  std::string actual;    // as received, e.g. "0x1f (ACK)"
};

enum class EventKind : std::uint8_t {
  kSent,          // a frame the tester sent (frame set)
  kReceived,      // a frame the tester received (frame set)
  kExpectMet,     // an expectation matched (text names the frame it matched)
  kExpectFailed,  // an expectation failed: nothing came, or something else came
  kSilenceOk,     // an expect-nothing window passed quietly
  kControl,       // a control-API exchange: CQE polled, QP state read, counter read, ...
  kNote,          // anything else worth seeing on the timeline (calibration, skip reason)
  kCounter,       // a target counter that changed across the case: "rcv_packets +12 (40 → 52)"
  kKernelLog,     // a line of the device host's kernel log within the case's window
};

std::string_view event_kind_name(EventKind kind);  // "sent", "received", "expect-met", ...

// One entry of a case's timeline (the packet ladder). Packets, control events, counter changes
// and kernel log lines share it, on the tester's clock.
struct Event {
  std::int64_t unix_ns = 0;  // when it happened, nanoseconds since the Unix epoch
  EventKind kind = EventKind::kNote;
  std::string step;  // the case line that caused it: "cases/psn/gap-naks-once.rcase:9"
  std::string text;  // one line: "RC SEND_ONLY psn=+3 ackreq len=64", "poll_cq: SUCCESS RECV 64 B"
  std::vector<std::uint8_t> frame;    // the Ethernet frame for kSent / kReceived, else empty
  std::vector<std::string> analysis;  // flags from the analysis: "out-of-sequence", "nak", ...
  // kKernelLog: the line's time on the device host's clock, before the shift onto the tester's
  // (unix_ns); 0 for every other kind.
  std::int64_t host_unix_ns = 0;
};

// A figure a measuring case reports (area sec), beside its verdict: what was measured, its value,
// the threshold it is judged against and whether it crossed it.
struct Measurement {
  std::string name;       // "QPN: most common step"
  std::string value;      // "+1 (31 of 31 differences)"
  std::string threshold;  // "a finding when one step makes half the differences"
  bool finding = false;   // the value is past the threshold
};

struct CaseResult {
  std::string id;           // "psn/gap-naks-once"
  std::string area;         // "psn"
  std::string title;        // one line
  std::string description;  // a few lines: what the case checks and why
  // "9.7.5.1 C9-97 (IBA Vol 1 Release 1.2.1 + Annex A17): one NAK per PSN gap": the human line
  // made of the four fields below (or the text a case gave without a citation).
  std::string clause;
  std::string citation;            // clause numbers and statement IDs only: "9.7.5.1 C9-97"
  std::string rule;                // what the citation requires, paraphrased
  std::string release;             // "IBA Vol 1 Release 1.2.1 + Annex A17"
  std::string checked;             // where the citation was checked, or "unchecked"
  std::string requirement;         // "MUST" or "SHOULD"
  std::vector<std::string> needs;  // capabilities: "responder", "control", ...
  std::string source;              // "cases/psn/gap-naks-once.rcase" or "cases/scale/concurrent.cc"

  Verdict verdict = Verdict::kError;
  std::string reason;  // one line; empty on a plain pass
  std::string
      failed_step;  // the case line that failed: "psn/gap-naks-once.rcase:9 expect c NAK psn=1"
  std::vector<FieldDiff> diffs;

  std::int64_t start_unix_ns = 0;
  std::int64_t duration_ns = 0;
  std::vector<Event> events;
  std::vector<Measurement> measurements;  // figures of a measuring case, in the order taken
};

struct Counts {
  int pass = 0, fail = 0, skip = 0, error = 0, inconclusive = 0;
  int total() const { return pass + fail + skip + error + inconclusive; }
};

// One line of a --waivers file: a case whose failure (or error, or inconclusive) is accepted
// for a stated reason, optionally until a date. Whether it applies is decided by certify()
// (reports/verdict.h) against the run's verdicts and start date.
struct Waiver {
  std::string id;      // exact case id
  std::string until;   // "YYYY-MM-DD" (valid through that day, UTC), empty: no expiry
  std::string reason;  // mandatory
  std::string where;   // "waivers.txt:3"
};

// What a certificate certifies and how to reproduce it. Key/value lists keep their order.
struct RunIdentity {
  // The device: Target::identity() ("name", "vendor_id", "fw_ver", ..., "source").
  std::vector<std::pair<std::string, std::string>> device;
  // The tester host: "hostname", "kernel" (uname -r), "os" (os-release PRETTY_NAME).
  std::vector<std::pair<std::string, std::string>> host;
  std::string command_line;  // shell-quoted
  std::uint64_t seed = 0;
  std::string profile_path, profile_sha256;  // the raw target's profile file, if any
  // The raw target's tester-host preflight: check, "level: message" (or "skipped").
  std::vector<std::pair<std::string, std::string>> preflight;
  std::string evidence_path, evidence_sha256;  // the pcapng, hashed after it was closed
};

// The catalogue a run was drawn from. `cases` == 0: not recorded (no certificate possible).
struct CatalogueInfo {
  std::string version;        // cases/builtin.h kCatalogueVersion
  std::string digest;         // SHA-256, hex, of every case's id, level, clause and source
  std::string specification;  // "IBA Vol 1 Release 1.2.1 + Annex A17"
  int cases = 0;              // cases in the catalogue the run selected from
  int must_cases = 0;         // of which MUST
};

// The device host's clock against the tester's, from control exchanges (the host's now_unix_ns
// against the midpoint of request and response): host = tester + offset_ns, within
// ± uncertainty_ns. Kernel log lines are shifted by it onto the tester's clock.
struct HostClock {
  std::int64_t offset_ns = 0;
  std::int64_t uncertainty_ns = 0;  // half the narrowest exchange's round trip
  int exchanges = 0;                // exchanges the estimate was chosen from
  std::string source;               // where the host's lines come from: "/dev/kmsg", "none"
};

struct RunResult {
  std::string tool = "roceconf";
  std::string version;
  std::string target_kind;           // "reference", "daemon", "raw"
  std::string target_description;    // one line: interface, addresses, quirks
  std::vector<std::string> quirks;   // enabled quirks of a reference target
  std::string filter;                // the --filter globs joined by spaces, empty: none
  std::vector<std::string> filters;  // each --filter glob
  std::string rerun_of;              // --rerun-failed REPORT.json, empty: not a rerun
  RunIdentity identity;
  CatalogueInfo catalogue;
  std::vector<Waiver> waivers;  // as read from --waivers, applied or not
  std::int64_t start_unix_ns = 0;
  std::int64_t duration_ns = 0;
  std::int64_t rtt_ns = 0;      // calibrated round trip
  std::int64_t silence_ns = 0;  // silence window used: max(floor, 4 x RTT)
  bool interrupted = false;     // Ctrl-C: the cases list holds what completed
  // What the run learnt of the target and says once rather than in every case: "The target's
  // responder follows no RCNF convention ...: 55 cases that need it were skipped".
  std::vector<std::string> notes;
  HostClock host_clock;  // exchanges == 0: not estimated (no kernel_log on the target)
  std::vector<CaseResult> cases;

  Counts counts() const;
  Counts counts(std::string_view area) const;
  std::vector<std::string> areas() const;  // in first-appearance order
};

}  // namespace roceconf::report
