// The packet comment (pcapng opt_comment, Wireshark's frame.comment) that tags every frame of
// the suite's evidence file (reports/EVIDENCE.md) with its case, step and verdict. Written by
// the engine (suite/engine/evidence.h), read by the Wireshark plugin: both go through here, so
// this header is the format's specification. One line, UTF-8:
//
//   roceconf case=<id> step=<step> verdict=<verdict> event=<sent|received>[ failed=yes]
//            [ note=<text>]
//
//   case     the case id, e.g. psn/gap-naks-once
//   step     the case line that sent or matched the frame, e.g. cases/psn/gap-naks-once.rcase:9;
//            "-" when unknown
//   verdict  the verdict of the whole case: pass, fail, skip, error or inconclusive
//   event    sent or received
//   failed   "yes" on the frames of the step that failed the case (its verdict fail or error);
//            absent on every other frame
//   note     optional, always last: the event's one-line description, e.g.
//            "RC SEND_ONLY psn=0x000011 len=64"
//
// Parsing: the comment starts with "roceconf "; the rest is split at the first " note=" into
// the fixed part and the note; the fixed part splits on single spaces into key=value pairs,
// each at its first '='. Values before the note never contain spaces (whitespace and control
// characters in them are written as '_', an empty value as '-'); the note may hold anything but
// control characters (written as spaces). Readers ignore keys they do not know, so keys may be
// added before the note later. Example:
//
//   roceconf case=psn/gap-naks-once step=cases/psn/gap-naks-once.rcase:9 verdict=fail
//   event=received note=RC ACK psn=0x000011 msn=2            (one line)
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace roceconf {

struct EvidenceComment {
  std::string_view case_id = {};  // parsed: views into the comment
  std::string_view step = {};
  std::string_view verdict = {};
  std::string_view event = {};
  std::string_view note = {};  // empty: none
  bool failed_here = false;    // the frame belongs to the step that failed the case
};

// The comment for `c`, its values made safe as above (the caller makes text one line UTF-8).
std::string format_evidence_comment(const EvidenceComment& c);

// nullopt unless the comment starts with "roceconf "; unknown keys are ignored, missing ones
// stay empty.
std::optional<EvidenceComment> parse_evidence_comment(std::string_view comment);

}  // namespace roceconf
