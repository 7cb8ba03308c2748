#include "reports/statements.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "reports/result.h"

namespace roceconf::report {
namespace {

TEST(Statements, CountsMatchThePublicList) {
  // 154 public items: 114 apply to RoCEv2, 40 do not (IB link, QP0, SM/SA, cancelled by A17).
  int applies = 0, na = 0;
  std::set<std::string_view> ids;
  for (const Statement& s : statements()) {
    EXPECT_TRUE(ids.insert(s.id).second) << "twice: " << s.id;
    EXPECT_FALSE(s.meaning.empty()) << s.id;
    if (s.kind == Statement::Kind::kApplies) ++applies;
    if (s.kind == Statement::Kind::kNotApplicable) {
      ++na;
      EXPECT_FALSE(s.note.empty()) << s.id << " is not applicable without a reason";
    }
  }
  EXPECT_EQ(applies, 114);
  EXPECT_EQ(na, 40);
}

TEST(Statements, EveryIdReadsBackAsAToken) {
  for (const Statement& s : statements()) {
    const auto tokens = statement_tokens(std::string("9.7.5 ") + std::string(s.id) + "; 9.3");
    ASSERT_EQ(tokens.size(), 1u) << s.id;
    EXPECT_EQ(tokens[0], s.id);
  }
}

TEST(Statements, TokensAreStatementIdsOnly) {
  EXPECT_EQ(statement_tokens("9.7.5 C9-105 C9-148; 9.3"),
            (std::vector<std::string>{"C9-105", "C9-148"}));
  EXPECT_EQ(statement_tokens("13.4 C13-4.2-1.1; Table 109"),
            (std::vector<std::string>{"C13-4.2-1.1"}));
  EXPECT_EQ(statement_tokens("Table 112 o12-5; CA17-22 CA17-24"),
            (std::vector<std::string>{"o12-5", "CA17-22", "CA17-24"}));
  EXPECT_EQ(statement_tokens("CTS-C09_060_01_01; RFC 1122 3.2.1.2; IEEE 802.1Q 36"),
            (std::vector<std::string>{"CTS-C09_060_01_01"}));
  EXPECT_TRUE(statement_tokens("Table 106; 12.7.23; A11; C; CA-1").empty());
}

TEST(Statements, CoverageComesFromCitations) {
  std::vector<CaseResult> cases(3);
  cases[0].id = "nak/a";
  cases[0].citation = "9.7.5.2; C9-88";
  cases[0].requirement = "MUST";
  cases[1].id = "nak/b";
  cases[1].citation = "C9-88; C9-94";
  cases[1].requirement = "SHOULD";
  cases[2].id = "header/c";
  cases[2].citation = "C9-999; C9-41";  // unknown; not applicable
  cases[2].requirement = "MUST";
  const Coverage c = coverage(cases);
  EXPECT_EQ(c.covered, 2);
  ASSERT_EQ(c.unknown.size(), 1u);
  EXPECT_EQ(c.unknown[0], "header/c: C9-999");
  for (const CoverageRow& row : c.rows) {
    if (row.statement->id == "C9-88") {
      EXPECT_EQ(row.case_ids, (std::vector<std::string>{"nak/a", "nak/b"}));
      EXPECT_EQ(row.levels, (std::vector<std::string>{"MUST", "SHOULD"}));
      EXPECT_EQ(row.cases.size(), 2u);
    }
  }
  const std::string md = coverage_markdown(c);
  EXPECT_NE(md.find("| C9-88 |"), std::string::npos);
  EXPECT_NE(md.find("`nak/a`, `nak/b`"), std::string::npos);
  EXPECT_NE(md.find("**2 are covered**"), std::string::npos);
  // Uncovered statements are listed with why, not hidden.
  EXPECT_NE(md.find("| C9-140 |"), std::string::npos);
  EXPECT_NE(md.find("not applicable to RoCEv2"), std::string::npos);
  EXPECT_NE(md.find("Cited IDs the registry does not know: header/c: C9-999;"), std::string::npos);
}

}  // namespace
}  // namespace roceconf::report
