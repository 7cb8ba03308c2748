// The public compliance items a RoCEv2 certification is measured against: the IBA Vol 1 and
// Annex A17 compliance statements that public text quotes, and the public IBTA CTS test pages.
// Coverage is derived, never declared: a case covers an item when its citation names the item's
// ID. What is left is listed with why (no case yet, or not applicable to RoCEv2), never hidden.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roceconf::report {

struct CaseResult;

struct Statement {
  enum class Kind {
    kApplies,        // applies to RoCEv2: a case should cover it
    kNotApplicable,  // IB-only or cancelled by Annex A17: `note` says why
    kExtra,          // cited by a case but not among the public items (no public text found)
  };
  constexpr Statement(std::string_view id_, std::string_view chapter_, std::string_view meaning_,
                      Kind kind_ = Kind::kApplies, std::string_view note_ = {})
      : id(id_), chapter(chapter_), meaning(meaning_), kind(kind_), note(note_) {}
  std::string_view id;       // as a citation names it: "C9-88", "CA17-33", "CTS-C09_060_05"
  std::string_view chapter;  // "9", "10", ..., "A17", "7 (IB only)"
  std::string_view meaning;  // paraphrased, one line
  Kind kind = Kind::kApplies;
  std::string_view note;  // not applicable: why; applies: what a case needs, while none covers it
};

// Every item, in chapter order.
std::span<const Statement> statements();
const Statement* find_statement(std::string_view id);

// The tokens of a citation that look like statement IDs ("C9-97", "o12-5", "CA17-22",
// "CTS-C09_060_05"), registered or not, in order.
std::vector<std::string> statement_tokens(std::string_view citation);

// One item and the cases that cite it.
struct CoverageRow {
  const Statement* statement = nullptr;
  std::vector<const CaseResult*> cases;  // for a run's coverage
  std::vector<std::string> case_ids;     // the cases' ids, in catalogue order
  std::vector<std::string> levels;       // their levels, deduplicated ("MUST", "SHOULD")
};

struct CaseCitation {
  std::string id, citation, level;
  const CaseResult* result = nullptr;  // when from a run
};

struct Coverage {
  std::vector<CoverageRow> rows;  // one per registered item, in registry order
  int applicable = 0, covered = 0, not_applicable = 0, extra = 0;
  std::vector<std::string> unknown;  // cited IDs the registry lacks ("case: ID")
};

Coverage coverage(const std::vector<CaseCitation>& cases);
Coverage coverage(const std::vector<CaseResult>& cases);

// The Markdown table (README, cases/COVERAGE): a summary by chapter, then every item with its
// cases and levels, "not covered: why" or "not applicable to RoCEv2: why".
std::string coverage_markdown(const Coverage& c);

}  // namespace roceconf::report
