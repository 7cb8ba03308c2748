// `roceconf compare A B [--json OUT] [--strict]`: the per-case differences between two runs, or
// between expected verdicts and a run. A and B are each a JSON report of `roceconf run`, an
// expected-verdicts JSON ({"verdicts": {CASE: VERDICT or [VERDICT, ...]}}), or an
// expected-verdicts text file (lines `CASE VERDICT[|VERDICT...]  # why`, as lab/rxe keeps).
// Per case: same, fixed, regressed, new, removed, changed. Regressions print first.
// Exit 1 when a case regressed (with --strict: when any case is not `same`), 0 otherwise, 2 on
// bad input.
#pragma once

#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace roceconf::cli {

// One side: each case's verdicts (one from a report; one or more accepted from expectations).
struct VerdictSet {
  std::string label;      // the file name
  std::string headline;   // the report's certificate line, if any
  std::string catalogue;  // "2026.12 (sha256 …)" of a report, if recorded
  std::map<std::string, std::set<std::string>> cases;
};

// Reads a report JSON, an expected-verdicts JSON or an expected-verdicts text file. The error
// is one line naming the file (and line) and what is wrong.
std::expected<VerdictSet, std::string> read_verdicts(const std::string& path);

enum class Change : std::uint8_t { kRegressed, kFixed, kChanged, kNew, kRemoved, kSame };
std::string_view change_name(
    Change c);  // "regressed", "fixed", "changed", "new", "removed", "same"

// same: the verdict sets share a verdict; regressed: A allowed pass and B has only fail, error
// or inconclusive; fixed: the reverse; changed: any other difference (pass -> skip, ...).
Change classify(const std::set<std::string>& a, const std::set<std::string>& b);

struct CaseChange {
  std::string id;
  Change change = Change::kSame;
  std::string a, b;  // "pass", "pass|skip", "" when absent
};

// Every case of A and B, regressions first, then fixed, changed, new, removed, same; by id
// within each.
std::vector<CaseChange> compare(const VerdictSet& a, const VerdictSet& b);

struct CompareArgs {
  std::string a, b;
  std::optional<std::string> json;
  bool strict = false;
  bool all = false;  // also list the cases that are the same
};

int run_compare(const CompareArgs& args);

void add_compare_command(CLI::App& app, std::function<int()>& run);

}  // namespace roceconf::cli
