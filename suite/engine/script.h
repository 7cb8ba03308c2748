// The case language (.rcase): one case a file, packetdrill-like. cases/README.md describes it.
//
//   // A request ahead of the expected PSN gets exactly one NAK ...
//   clause: 9.7.5.1 C9-97 C9-98; 9.7.5.2.1
//   rule: a PSN gap gets one PSN sequence error NAK ...
//   checked: Linux rxe check_psn; qib/hfi1 rc
//   level: MUST
//   needs: responder
//   connect c
//   send c SEND_ONLY psn=0 ackreq=1 len=64
//   +0...1rtt expect c ACK psn=0 syndrome=ack
//   +0...4rtt expect nothing from c
#pragma once

#include <expected>
#include <string>
#include <vector>

#include "suite/engine/catalogue.h"

namespace roceconf::engine {

struct Statement {
  int line = 0;
  std::string text;                // the line as written, without its comment
  std::optional<Duration> at;      // +T: wait this long before the step
  std::optional<Duration> window;  // +T...W: the step's window
  std::vector<std::string> words;  // words before the first key=value
  Assignments fields;              // key=value pairs
  std::vector<std::string> flags;  // bare words after the fields ("eventually")
  // `expect c A f=v or B g=w`: the kinds and fields after each `or` (A's are words/fields).
  struct Alternative {
    std::string kind;
    Assignments fields;
  };
  std::vector<Alternative> alternatives;
};

struct Script {
  std::string path;  // "cases/psn/gap-naks-once.rcase"
  std::string title, description, requirement;
  // clause: (numbers and statement IDs only), rule:, release: (empty: the catalogue's),
  // checked: (sources, or "unchecked").
  std::string citation, rule, release, checked;
  std::vector<std::string> needs;
  std::vector<Statement> statements;
};

// Parses a script; the error names path:line and what is wrong.
std::expected<Script, std::string> parse_script(const std::string& path, const std::string& text);

// Runs one statement (the step label is set by the caller).
void run_statement(CaseContext& ctx, const Script& script, const Statement& s);

// A CaseDef for a script at `path` ("cases/<area>/<name>.rcase"). A script that does not parse
// still becomes a case, which ERRORs with the parse error.
CaseDef load_script(const std::string& path, const std::string& text);

}  // namespace roceconf::engine
