// The JSON report: the whole run for tools (dashboards, diffing two runs, the Python module).
// Keys and the verdict words are a stable interface; see to_json() for the layout.
#pragma once

#include <string>

#include "reports/result.h"

namespace roceconf::report {

// {"tool", "version", "target": {"kind", "description", "quirks"}, "filter", "started"
// (ISO-8601 UTC), "duration_s", "rtt_us", "silence_ms", "interrupted", "summary": {"pass",
// "fail", "skip", "error", "inconclusive", "total"}, "areas": {AREA: counts}, "cases": [{"id",
// "area", "title", "description", "clause" (the human line), "citation" (clause numbers and
// statement IDs), "rule", "release", "checked", "requirement", "needs", "source", "verdict",
// "reason", "failed_step", "diffs": [{"field", "expected", "actual"}], "started",
// "duration_ms", "events": [{"t_us" (from the case start), "kind", "step", "text", "analysis",
// "frame" (hex; sent and received only)}]}]}. Invalid UTF-8 in any text becomes U+FFFD.
std::string to_json(const RunResult& run);

}  // namespace roceconf::report
