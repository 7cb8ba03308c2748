// The run-level framing check end to end against the in-process reference target: a framing
// defect shows up as a finding on another case's packets and fails header/sent-framing, which
// runs last; the clean reference leaves no finding anywhere in the catalogue; the case is
// honest alone and when it is not selected.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>

#include "cases/builtin.h"
#include "dissector/analysis/sent_framing.h"
#include "suite/engine/reference_target.h"
#include "suite/engine/runner.h"

namespace roceconf::engine {
namespace {

constexpr std::string_view kCase = "header/sent-framing";

// The cases with these ids, or every case for {"*"}, in catalogue order.
report::RunResult run(const std::vector<std::string>& quirks,
                      const std::vector<std::string_view>& ids) {
  ReferenceOptions o;
  o.quirks = quirks;
  auto target = ReferenceTarget::create(o);
  EXPECT_TRUE(target) << target.error();
  report::RunResult result;
  std::vector<const CaseDef*> selected;
  for (const auto& c : cases::builtin_catalogue().cases())
    if (ids == std::vector<std::string_view>{"*"} || std::ranges::find(ids, c.id) != ids.end())
      selected.push_back(&c);
  run_cases(**target, selected, RunOptions{}, result);
  return result;
}

std::vector<std::string> findings(const report::CaseResult& r) {
  std::vector<std::string> out;
  for (const auto& e : r.events)
    for (const auto& a : e.analysis)
      if (a.starts_with(kFramingPrefix)) out.push_back(a);
  return out;
}

const report::CaseResult* find(const report::RunResult& r, std::string_view id) {
  for (const auto& c : r.cases)
    if (c.id == id) return &c;
  return nullptr;
}

TEST(SentFramingRun, DefectOnAnotherCasesPacketsFailsTheRunLevelCase) {
  // header/sent-framing sorts before psn/: the runner still runs it last.
  const auto r = run({"df-clear"}, {"psn/in-order-ack", kCase});
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases.back().id, kCase);
  const auto* other = find(r, "psn/in-order-ack");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->verdict, report::Verdict::kPass) << other->reason;  // graded once, not here
  const auto f = findings(*other);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front(), "framing: ipv4.df 0, expected 1 (don't fragment) (CA17-7)");
  const auto& grade = r.cases.back();
  EXPECT_EQ(grade.verdict, report::Verdict::kFail);
  EXPECT_NE(grade.reason.find("in 2 cases break framing; first: "), std::string::npos)
      << grade.reason;
  EXPECT_NE(grade.reason.find("(CA17-7)"), std::string::npos) << grade.reason;
  ASSERT_FALSE(grade.diffs.empty());
  EXPECT_NE(grade.diffs.front().field.find("psn/in-order-ack frame "), std::string::npos)
      << grade.diffs.front().field;
  EXPECT_EQ(grade.diffs.front().actual, "0");
}

TEST(SentFramingRun, AloneItGradesItsOwnTraffic) {
  // Its own connection asks for hop limit 17: a TTL fixed at 64 is caught with no other case.
  const auto bad = run({"ttl-fixed-64"}, {kCase});
  ASSERT_EQ(bad.cases.size(), 1u);
  EXPECT_EQ(bad.cases[0].verdict, report::Verdict::kFail);
  EXPECT_NE(bad.cases[0].reason.find("ipv4.ttl 64, expected 17 (the AV's hop limit) (CA17-9)"),
            std::string::npos)
      << bad.cases[0].reason;
  const auto ecn = run({"ecn-ect-without-cc"}, {kCase});
  EXPECT_EQ(ecn.cases[0].verdict, report::Verdict::kFail);
  EXPECT_NE(ecn.cases[0].reason.find("(CA17-5)"), std::string::npos) << ecn.cases[0].reason;

  const auto good = run({}, {kCase});
  ASSERT_EQ(good.cases.size(), 1u);
  EXPECT_EQ(good.cases[0].verdict, report::Verdict::kPass) << good.cases[0].reason;
  EXPECT_TRUE(good.cases[0].reason.ends_with("in 1 case checked: none breaks framing"))
      << good.cases[0].reason;
}

TEST(SentFramingRun, NotSelectedNothingIsGradedAndTheRunSaysSo) {
  const auto r = run({"df-clear"}, {"psn/in-order-ack"});
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].verdict, report::Verdict::kPass);
  EXPECT_FALSE(findings(r.cases[0]).empty());
  bool said = false;
  for (const auto& n : r.notes) said = said || n.find("header/sent-framing did not run") != n.npos;
  EXPECT_TRUE(said);
}

TEST(SentFramingRun, CleanReferenceHasNoFindingInTheWholeCatalogue) {
  const auto r = run({}, {"*"});
  std::string where;
  for (const auto& c : r.cases)
    for (const auto& f : findings(c)) where += fmt::format("\n  {}: {}", c.id, f);
  EXPECT_TRUE(where.empty()) << where;
  const auto* grade = find(r, kCase);
  ASSERT_NE(grade, nullptr);
  EXPECT_EQ(grade->verdict, report::Verdict::kPass) << grade->reason;
  // The run-level cases go last: header/'s, then ipv6/'s (the IPv6 header's statements).
  ASSERT_GE(r.cases.size(), 2u);
  EXPECT_EQ(&r.cases[r.cases.size() - 2], grade);
  const auto* ipv6 = find(r, "ipv6/sent-framing");
  ASSERT_NE(ipv6, nullptr);
  EXPECT_EQ(&r.cases.back(), ipv6);
  EXPECT_EQ(ipv6->verdict, report::Verdict::kPass) << ipv6->reason;
}

}  // namespace
}  // namespace roceconf::engine
