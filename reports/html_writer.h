// The HTML certification report: one self-contained file (inline CSS and a little inline JS, no
// external assets and no network; a Content-Security-Policy forbids any fetch) with the target,
// a summary by area with the overall verdict, every case with its citation and rule, verdict,
// reason, field diffs and packet ladder, and an appendix tracing every case to its citation.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "reports/result.h"

namespace roceconf::report {

struct HtmlOptions {
  // Timeline entries shown per case: the first and last halves, with a note of how many were
  // left out between them (the JSON report and the pcapng evidence keep all of them).
  std::size_t max_events_per_case = 400;
};

std::string to_html(const RunResult& run, const HtmlOptions& options = {});

// The element id of a case's section: "case-" + id with '/' and whitespace as '-'.
std::string case_anchor(std::string_view id);

// conformance() of the whole run: "CONFORMANT", "NOT CONFORMANT", "INCOMPLETE" (interrupted)
// or "NOT TESTED" (nothing passed).
std::string_view overall_verdict(const RunResult& run);

}  // namespace roceconf::report
