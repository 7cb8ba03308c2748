#include "dissector/evidence_comment.h"

namespace roceconf {

namespace {

constexpr std::string_view kPrefix = "roceconf ";
constexpr std::string_view kNote = "note=";

bool is_control(char c) {
  return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
}

// A value before the note: one token, so a reader can split on spaces.
void put_token(std::string& out, std::string_view value) {
  if (value.empty()) {
    out += '-';
    return;
  }
  for (char c : value) out += c == ' ' || is_control(c) ? '_' : c;
}

}  // namespace

std::string format_evidence_comment(const EvidenceComment& c) {
  std::string out(kPrefix);
  out += "case=";
  put_token(out, c.case_id);
  out += " step=";
  put_token(out, c.step);
  out += " verdict=";
  put_token(out, c.verdict);
  out += " event=";
  put_token(out, c.event);
  if (c.failed_here) out += " failed=yes";
  if (!c.note.empty()) {
    out += " ";
    out += kNote;
    for (char ch : c.note) out += is_control(ch) ? ' ' : ch;
  }
  return out;
}

std::optional<EvidenceComment> parse_evidence_comment(std::string_view comment) {
  if (!comment.starts_with(kPrefix)) return std::nullopt;
  std::string_view rest = comment.substr(kPrefix.size());
  EvidenceComment out;
  // The note is last and may hold anything, so it is cut off before splitting on spaces.
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
    else if (key == "failed")
      out.failed_here = value == "yes";
  }
  return out;
}

}  // namespace roceconf
