// The JSON report: the whole run for tools (dashboards, diffing two runs, the Python module).
// Keys and the verdict words are a stable interface; see to_json() for the layout.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "reports/result.h"

namespace roceconf::report {

// {"tool", "version", "certificate": {"headline" (NOT CONFORMANT, INCOMPLETE, INSUFFICIENT
// COVERAGE, CONFORMANT), "line", "why", "exit_status", "counts": {"catalogue", "run", "graded",
// "pass", "skipped", "waived", "blocking", "findings", "should_findings", "may_findings",
// "must_graded", "must_total"}, "blocking", "findings", "waived" (case ids), "waivers": [{"id",
// "until", "reason", "where", "status" (applied, expired, unused, not run), "verdict"}], "rule"
// (paragraphs)}, "target": {"kind", "description", "quirks", "device": {KEY: VALUE}},
// "identity": {"device", "tester_host", "roceconf_version", "catalogue": {"version", "sha256",
// "specification", "cases", "must_cases"}, "seed", "command_line", "profile": {"path",
// "sha256"}, "started", "evidence": {"path", "sha256" (of the closed pcapng file)}}, "filter"
// (globs joined by spaces), "filters", "rerun_of", "started" (ISO-8601 UTC), "duration_s",
// "rtt_us", "silence_ms", "interrupted", "notes" (what the run learnt of the target, each said
// once), "host_clock" (when the target answers kernel_log): {"offset_ns" (device host clock minus
// the tester's), "uncertainty_ns", "exchanges", "source"}, "summary": {"pass", "fail", "skip",
// "error", "inconclusive", "total"}, "areas": {AREA: counts}, "cases": [{"id", "area", "title",
// "description", "clause" (the human line), "citation" (clause numbers and statement IDs),
// "rule", "release", "checked", "requirement", "needs", "source", "verdict", "reason",
// "failed_step", "diffs": [{"field", "expected", "actual"}], "started", "duration_ms",
// "events": [{"t_us" (from the case start, tester's clock), "kind" (sent, received, expect-met,
// expect-failed, silence-ok, control, note, counter, kernel-log), "step", "text", "analysis",
// "frame" (hex; sent and received only), "host_unix_ns" (kernel-log only: the line's time on the
// device host's clock, before the shift)}], "grade" (pass, blocking, finding, waived, skipped),
// "waiver" (when one applies): {"id", "until", "reason", "where"}}]}. Invalid UTF-8 in any text
// becomes U+FFFD.
std::string to_json(const RunResult& run);

// {"pass", "fail", "skip", "error", "inconclusive", "total"}: the report's counts object (also
// the fleet report's).
nlohmann::ordered_json counts_json(const Counts& c);

}  // namespace roceconf::report
