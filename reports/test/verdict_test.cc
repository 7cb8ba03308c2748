// The certificate (reports/verdict.h): the verdict rule, coverage, waivers, and the waivers
// file format.
#include "reports/verdict.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reports/test/sample_run.h"

namespace roceconf::report {
namespace {

CaseResult make(std::string id, Verdict v, std::string level = "MUST") {
  CaseResult c;
  c.area = id.substr(0, id.find('/'));
  c.id = std::move(id);
  c.verdict = v;
  c.requirement = std::move(level);
  return c;
}

// A whole-catalogue run of `n` MUST cases, all passing.
RunResult full_run(int n) {
  RunResult run = test::sample_run();
  run.cases.clear();
  for (int i = 0; i < n; ++i)
    run.cases.push_back(make(fmt::format("psn/c{:02}", i), Verdict::kPass));
  run.catalogue.cases = n;
  run.catalogue.must_cases = n;
  return run;
}

TEST(Certificate, ACleanFullRunIsConformantWithItsCoverage) {
  RunResult run = full_run(10);
  run.cases[9] = make("psn/c09", Verdict::kSkip);
  const Certificate c = certify(run);
  EXPECT_EQ(c.headline, Headline::kConformant);
  EXPECT_EQ(c.exit_status, 0);
  EXPECT_EQ(c.line(),
            "CONFORMANT: 9 of 10 graded (9 pass), 1 skipped — catalogue 2026.12 (sha256 aaaaaaaa), "
            "IBA Vol 1 Release 1.2.1 + Annex A17");
}

TEST(Certificate, AMustFailureBlocksAndAShouldFailureIsAFinding) {
  RunResult run = full_run(10);
  run.cases[0] = make("psn/c00", Verdict::kFail, "SHOULD");
  run.catalogue.must_cases = 9;
  Certificate c = certify(run);
  EXPECT_EQ(c.headline, Headline::kConformant);
  EXPECT_EQ(c.exit_status, 0);
  EXPECT_EQ(c.should_findings, 1);
  EXPECT_EQ(c.grades[0], Grade::kFinding);
  EXPECT_NE(c.line().find("10 of 10 graded (9 pass, 1 SHOULD finding)"), std::string::npos)
      << c.line();

  run.cases[1] = make("psn/c01", Verdict::kInconclusive);
  c = certify(run);
  EXPECT_EQ(c.headline, Headline::kNotConformant);
  EXPECT_EQ(c.exit_status, 1);
  EXPECT_EQ(c.grades[1], Grade::kBlocking);
  EXPECT_NE(c.line().find("(8 pass, 1 blocking, 1 SHOULD finding)"), std::string::npos) << c.line();
  // A case without a level counts as MUST.
  run.cases[1].requirement = "";
  EXPECT_EQ(certify(run).headline, Headline::kNotConformant);
}

TEST(Certificate, AFilteredRerunOrInterruptedRunIsIncomplete) {
  RunResult run = full_run(10);
  run.cases.resize(3);
  run.filters = {"psn/c0[012]"};
  run.filter = "psn/c0[012]";
  Certificate c = certify(run);
  EXPECT_EQ(c.headline, Headline::kIncomplete);
  EXPECT_EQ(c.exit_status, 0);  // nothing blocks: a filtered run that passes exits 0
  EXPECT_EQ(c.line().rfind("INCOMPLETE: no certificate: 3 of 10 catalogue cases run", 0), 0u)
      << c.line();

  run.filters.clear();
  run.filter.clear();
  EXPECT_EQ(certify(run).headline, Headline::kIncomplete);  // fewer cases than the catalogue
  run.rerun_of = "old.json";
  EXPECT_NE(certify(run).why.find("rerun"), std::string::npos);

  RunResult stopped = full_run(10);
  stopped.interrupted = true;
  c = certify(stopped);
  EXPECT_EQ(c.headline, Headline::kIncomplete);
  EXPECT_EQ(c.exit_status, 1);

  RunResult unknown = full_run(3);
  unknown.catalogue.cases = 0;  // no catalogue recorded: never a certificate
  EXPECT_EQ(certify(unknown).headline, Headline::kIncomplete);
  // A blocking case beats everything.
  run.cases[0].verdict = Verdict::kFail;
  EXPECT_EQ(certify(run).headline, Headline::kNotConformant);
}

TEST(Certificate, AMostlySkippedRunIsNotConformant) {
  RunResult run = full_run(95);
  for (std::size_t i = 4; i < run.cases.size(); ++i) run.cases[i].verdict = Verdict::kSkip;
  const Certificate c = certify(run);
  EXPECT_EQ(c.headline, Headline::kInsufficientCoverage);
  EXPECT_EQ(c.exit_status, 0);
  EXPECT_EQ(c.line().rfind("INSUFFICIENT COVERAGE: 4 of 95 MUST cases graded, at least 48 needed; "
                           "4 of 95 graded (4 pass), 91 skipped",
                           0),
            0u)
      << c.line();
  // Half is enough.
  for (std::size_t i = 4; i < 47; ++i) run.cases[i].verdict = Verdict::kPass;
  EXPECT_EQ(certify(run).headline, Headline::kInsufficientCoverage);  // 47 of 95
  run.cases[47].verdict = Verdict::kPass;
  EXPECT_EQ(certify(run).headline, Headline::kConformant);
}

TEST(Certificate, WaiversApplyOnlyToFailuresAndNeverSilently) {
  RunResult run = full_run(6);
  run.start_unix_ns = test::kT0;  // 2023-11-14
  run.cases[0].verdict = Verdict::kInconclusive;
  run.cases[1].verdict = Verdict::kFail;
  run.waivers = {{"psn/c00", "", "rdma_cm cannot set per-connection CM timers", "w.txt:1"},
                 {"psn/c01", "2023-11-13", "expired yesterday", "w.txt:2"},
                 {"psn/c02", "2023-11-14", "the case passes", "w.txt:3"},
                 {"psn/zz", "", "not in this run", "w.txt:4"}};
  const Certificate c = certify(run);
  ASSERT_EQ(c.waivers.size(), 4u);
  EXPECT_EQ(c.waivers[0].status, WaiverStatus::kApplied);
  EXPECT_EQ(c.waivers[0].verdict, "inconclusive");
  EXPECT_EQ(c.waivers[1].status, WaiverStatus::kExpired);
  EXPECT_EQ(c.waivers[2].status, WaiverStatus::kUnused);
  EXPECT_EQ(c.waivers[3].status, WaiverStatus::kNotRun);
  EXPECT_EQ(c.grades[0], Grade::kWaived);
  EXPECT_EQ(c.waiver_of[0], 0);
  EXPECT_EQ(c.grades[1], Grade::kBlocking);  // the expired waiver is not applied
  EXPECT_EQ(c.headline, Headline::kNotConformant);

  run.waivers[1].until = "2023-11-14";  // valid through its day
  const Certificate d = certify(run);
  EXPECT_EQ(d.headline, Headline::kConformant);
  EXPECT_EQ(d.exit_status, 0);
  EXPECT_EQ(d.waived, 2);
  EXPECT_NE(d.line().find("4 of 6 graded (4 pass), 0 skipped, 2 waived"), std::string::npos)
      << d.line();
}

TEST(Certificate, TargetAndDeviceText) {
  const RunResult run = test::sample_run();
  EXPECT_EQ(target_text(run), "target reference: in-process reference NIC, quirks: psn-gap-ack");
  EXPECT_EQ(device_text(run),
            "roceconf reference NIC, fw_ver 0.1.0, quirks psn-gap-ack (built-in)");
  EXPECT_EQ(device_text(RunResult{}), "device not identified");
}

TEST(Waivers, TheFileFormat) {
  const auto known = [](std::string_view id) { return id.starts_with("cm/"); };
  const auto w = parse_waivers(
      "# the rxe lab\n"
      "\n"
      "cm/active-side-req-retried  until=2027-06-30  rdma_cm cannot set per-connection CM "
      "timers (see lab/rxe/RESULTS.md)\n"
      "  cm/data-before-rtu\trxe raises no COMM_EST # kept in the reason\r\n",
      "w.txt", known);
  ASSERT_TRUE(w) << w.error();
  ASSERT_EQ(w->size(), 2u);
  EXPECT_EQ((*w)[0].id, "cm/active-side-req-retried");
  EXPECT_EQ((*w)[0].until, "2027-06-30");
  EXPECT_EQ((*w)[0].reason, "rdma_cm cannot set per-connection CM timers (see lab/rxe/RESULTS.md)");
  EXPECT_EQ((*w)[0].where, "w.txt:3");
  EXPECT_EQ((*w)[1].until, "");
  EXPECT_EQ((*w)[1].reason, "rxe raises no COMM_EST # kept in the reason");
  EXPECT_EQ((*w)[1].where, "w.txt:4");
}

TEST(Waivers, MistakesNameTheLine) {
  const auto known = [](std::string_view id) { return id.starts_with("cm/"); };
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"psn/nope reason", "w.txt:1: unknown case id 'psn/nope'"},
      {"# c\ncm/a", "w.txt:2: the waiver of 'cm/a' has no reason"},
      {"cm/a until=2027-06-30", "w.txt:1: the waiver of 'cm/a' has no reason"},
      {"cm/a until=2027-02-30 why", "w.txt:1: bad date '2027-02-30'"},
      {"cm/a until=27-1-1 why", "w.txt:1: bad date '27-1-1'"},
      {"cm/a why\ncm/a again", "w.txt:2: case 'cm/a' is waived twice (also at w.txt:1)"},
  };
  for (const auto& [text, message] : bad) {
    const auto w = parse_waivers(text, "w.txt", known);
    ASSERT_FALSE(w) << text;
    EXPECT_EQ(w.error().rfind(message, 0), 0u) << w.error();
    EXPECT_EQ(w.error().find('\n'), std::string::npos);
  }
  EXPECT_TRUE(parse_waivers("cm/a until=2028-02-29 leap day", "w.txt", known));
}

}  // namespace
}  // namespace roceconf::report
