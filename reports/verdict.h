// The certificate: the one place the verdict of a run is decided (the rule is
// verdict_rule_text(), also in README.md and every HTML report). Every writer and the exit
// status of `roceconf run` read certify(); none decides on its own.
#pragma once

#include <expected>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/result.h"

namespace roceconf::report {

// First match wins, in this order.
enum class Headline : std::uint8_t {
  kNotConformant,         // a blocking case
  kIncomplete,            // interrupted, filtered, a rerun, or not the whole catalogue
  kInsufficientCoverage,  // fewer than half of the catalogue's MUST cases graded
  kConformant,
};
std::string_view headline_name(Headline h);  // "NOT CONFORMANT", ..., "CONFORMANT"

// What a case counts as in the certificate.
enum class Grade : std::uint8_t {
  kPass,
  kBlocking,  // MUST (or no level) and fail/error/inconclusive, not waived
  kFinding,   // SHOULD or MAY and fail/error/inconclusive, not waived
  kWaived,    // fail/error/inconclusive with a waiver that applies
  kSkipped,
};
std::string_view grade_name(Grade g);  // "pass", "blocking", "finding", "waived", "skipped"

enum class WaiverStatus : std::uint8_t {
  kApplied,  // the case failed (or error, inconclusive) and the waiver covers it
  kExpired,  // past its date: not applied, the case is graded as it is
  kUnused,   // the case passed or skipped: nothing to waive
  kNotRun,   // the case was not in this run
};
std::string_view waiver_status_name(WaiverStatus s);  // "applied", "expired", "unused", "not run"

struct WaiverUse {
  Waiver waiver;
  WaiverStatus status = WaiverStatus::kNotRun;
  std::string verdict;  // the case's real verdict ("inconclusive"), empty when not run
};

struct Certificate {
  Headline headline = Headline::kIncomplete;
  std::vector<Grade> grades;       // one per run.cases entry, same order
  std::vector<int> waiver_of;      // per case: index into `waivers` of the applied one, or -1
  std::vector<WaiverUse> waivers;  // every waiver of the run, in file order
  int run = 0;                     // cases that ran
  int catalogue = 0;               // cases in the catalogue
  int graded = 0;                  // ran, not skipped, not waived
  int pass = 0, skipped = 0, waived = 0, blocking = 0, should_findings = 0, may_findings = 0;
  int must_graded = 0;   // MUST cases with a pass or fail verdict
  int must_total = 0;    // MUST cases in the catalogue
  std::string why;       // why no certificate (INCOMPLETE, INSUFFICIENT COVERAGE); else empty
  std::string coverage;  // "90 of 95 graded (89 pass, 1 SHOULD finding), 4 skipped, 1 waived —
                         // catalogue 2026.12 (sha256 1a2b3c4d), IBA Vol 1 Release 1.2.1 + ..."
  int exit_status = 1;   // 0: nothing blocks and not interrupted; 1 otherwise

  int findings() const { return should_findings + may_findings; }
  // The headline line: "CONFORMANT: 90 of 95 graded ...", "INCOMPLETE: no certificate: ...".
  std::string line() const;
};

Certificate certify(const RunResult& run);

// "target reference: reference NIC in process (...)" — the target kind and describe().
std::string target_text(const RunResult& run);
// "roceconf reference NIC, fw_ver 0.1.0, quirks none (built-in)" — the device identity.
std::string device_text(const RunResult& run);

// The rule as paragraphs (plain text, one a line), for the HTML report.
std::vector<std::string> verdict_rule_text();

// Reads a waivers file's text (README.md, "Waivers"): `ID [until=YYYY-MM-DD] REASON`, `#`
// comment lines, blank lines. `is_case` says whether an id is in the catalogue. The error is
// one line: "FILE:LINE: what is wrong (what to do)".
std::expected<std::vector<Waiver>, std::string> parse_waivers(
    std::string_view text, std::string_view file_name,
    const std::function<bool(std::string_view)>& is_case);

}  // namespace roceconf::report
