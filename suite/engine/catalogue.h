// The conformance catalogue: every case with its metadata (id, area, citation, requirement,
// capabilities) and how to run it. Script cases (cases/**/*.rcase, compiled into the binary)
// and C++ cases (cases/cpp/) are both CaseDefs.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "suite/engine/case_context.h"

namespace roceconf::engine {

// The specification release every citation of the catalogue comes from, unless a case names
// its own: clause numbers move between releases (Modify QP is 11.2.4.2 in 1.2.1, 11.2.5.x
// later), and Annex A17 is a supplement to 1.2.1.
inline constexpr std::string_view kCatalogueRelease = "IBA Vol 1 Release 1.2.1 + Annex A17";

struct CaseDef {
  std::string id;    // "psn/gap-naks-once": area / name
  std::string area;  // "psn"
  std::string title;
  std::string description;
  // What a certification report quotes. `citation` holds clause numbers and statement IDs only
  // ("9.7.5.1 C9-97; 9.7.5.2"), `rule` the paraphrase of what they require, `release` the
  // spec release of the numbers, `checked` where the citation was checked against public text
  // ("Linux rxe check_psn; pib pib_rc.c") or "unchecked". `clause` is the human line made of
  // them (clause_text), or, for a case that gives no citation, the text it gave.
  std::string citation;
  std::string rule;
  std::string release;
  std::string checked;
  std::string clause;
  std::string requirement;  // MUST, SHOULD or MAY
  std::vector<std::string> needs;
  std::string source;
  std::function<void(CaseContext&)> run;
  // Set for a run-level case (header/sent-framing): the runner runs it after every other case
  // of the run, then hands it their results to fold into its own verdict.
  std::function<void(report::CaseResult& own, std::span<const report::CaseResult> others)>
      grade_run;
};

// "9.7.5.1 C9-97 (IBA Vol 1 Release 1.2.1 + Annex A17): one NAK per PSN gap".
std::string clause_text(std::string_view citation, std::string_view release, std::string_view rule);

// Whether a case's `checked` says that (some of) its citation was not found in public text.
bool has_unchecked_citation(const CaseDef& def);

class Catalogue {
 public:
  // Fills what a case left empty: the catalogue's release, and `clause` from the citation.
  void add(CaseDef def);
  const std::vector<CaseDef>& cases() const { return cases_; }
  // Cases whose id matches a glob ("psn/*", "*dup*"); all when the glob is empty.
  std::vector<const CaseDef*> select(std::string_view glob) const;
  // Keeps the order stable: by area in the order below, then by id.
  void sort();

 private:
  std::vector<CaseDef> cases_;
};

// fnmatch-style glob: * and ? (no character classes).
bool glob_match(std::string_view glob, std::string_view text);

}  // namespace roceconf::engine
