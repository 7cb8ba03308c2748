// The HTML certification report: one self-contained file (inline CSS and a little inline JS, no
// external assets and no network; a Content-Security-Policy forbids any fetch): the headline box
// (certificate, coverage, device, target), identity and reproducibility (device, tester host,
// catalogue version and digest, command line, seed, profile, evidence SHA-256), a summary by
// area, the blocking cases, findings, waived cases and every waiver, how the verdict is decided,
// every case with its citation and rule, verdict, grade, reason, field diffs and packet ladder,
// and an appendix tracing every case to its citation, and one with the public compliance statements
// the run covers (reports/statements.h).
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

// The certificate's headline (certify(), reports/verdict.h): "NOT CONFORMANT", "INCOMPLETE",
// "INSUFFICIENT COVERAGE" or "CONFORMANT".
std::string_view overall_verdict(const RunResult& run);

}  // namespace roceconf::report
