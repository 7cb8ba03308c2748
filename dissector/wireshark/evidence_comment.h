// The packet comment the suite's pcapng evidence writes on every frame (reports/EVIDENCE.md):
//   roceconf case=<id> step=<step> verdict=<verdict> event=<sent|received>[ note=<text>]
#pragma once

#include <optional>
#include <string_view>

namespace roceconf::wireshark {

struct EvidenceComment {
  std::string_view case_id;  // views into the parsed comment
  std::string_view step;
  std::string_view verdict;
  std::string_view event;
  std::string_view note;
};

// nullopt unless the comment starts with "roceconf "; unknown keys are ignored, missing ones
// stay empty.
std::optional<EvidenceComment> parse_evidence_comment(std::string_view comment);

}  // namespace roceconf::wireshark
