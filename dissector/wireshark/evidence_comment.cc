#include "dissector/wireshark/evidence_comment.h"

namespace roceconf::wireshark {

std::optional<EvidenceComment> parse_evidence_comment(std::string_view comment) {
  constexpr std::string_view kPrefix = "roceconf ";
  if (!comment.starts_with(kPrefix)) return std::nullopt;
  std::string_view rest = comment.substr(kPrefix.size());
  EvidenceComment out;
  // The note is last and may hold anything, so it is cut off before splitting on spaces.
  constexpr std::string_view kNote = "note=";
  std::string_view fixed = rest;
  if (rest.starts_with(kNote)) {
    out.note = rest.substr(kNote.size());
    fixed = {};
  } else if (const auto at = rest.find(" note="); at != std::string_view::npos) {
    out.note = rest.substr(at + 1 + kNote.size());
    fixed = rest.substr(0, at);
  }
  while (!fixed.empty()) {
    const auto space = fixed.find(' ');
    const std::string_view pair = fixed.substr(0, space);
    fixed = space == std::string_view::npos ? std::string_view{} : fixed.substr(space + 1);
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = pair.substr(0, eq);
    const std::string_view value = pair.substr(eq + 1);
    if (key == "case")
      out.case_id = value;
    else if (key == "step")
      out.step = value;
    else if (key == "verdict")
      out.verdict = value;
    else if (key == "event")
      out.event = value;
  }
  return out;
}

}  // namespace roceconf::wireshark
