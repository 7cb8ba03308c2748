// Text helpers shared by the report writers: escaping for XML and HTML, UTF-8 repair, times,
// hex, and the ordering of a case's timeline.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reports/result.h"

namespace roceconf::report {

// `text` as valid UTF-8 holding only characters XML 1.0 allows: invalid sequences, C0 controls
// other than tab, LF and CR, surrogates and U+FFFE/U+FFFF become U+FFFD.
std::string sanitize_utf8(std::string_view text);

// sanitize_utf8() then &, <, >, " and ' as entities; in attributes also tab, LF and CR as
// character references so they survive attribute normalisation. Good for HTML too.
std::string xml_escape(std::string_view text, bool attribute = false);

// One terminal or comment line: sanitize_utf8() with every control character (C0, DEL, C1) as
// a space.
std::string one_line(std::string_view text);

// "2023-11-14T22:13:20.123Z"; without_fraction: "2023-11-14T22:13:20Z".
std::string iso8601_utc(std::int64_t unix_ns, bool with_fraction = true);

// Lowercase hex, no separators.
std::string hex_string(std::span<const std::uint8_t> bytes);

// "bth.psn expected 0x000010 vs actual 0x000011".
std::string diff_text(const FieldDiff& diff);

// "PASS", "FAIL", "SKIP", "ERROR", "INCONCLUSIVE".
std::string_view verdict_label(Verdict verdict);

// Whether the run or area counts allow a conformance claim: nothing failed, errored or stayed
// inconclusive.
inline bool clean(const Counts& counts) {
  return counts.fail + counts.error + counts.inconclusive == 0;
}

// The verdict on a run or an area: "NOT CONFORMANT" unless clean(); then "NOT TESTED" when no
// case passed (all skipped, or none ran), "INCOMPLETE" when the run was interrupted, else
// "CONFORMANT".
std::string_view conformance(const Counts& counts, bool interrupted);

// The case's events by time; events with equal times keep their recorded order.
std::vector<const Event*> events_in_time_order(const CaseResult& result);

}  // namespace roceconf::report
