#include "reports/result.h"

#include <gtest/gtest.h>

#include "reports/test/sample_run.h"

namespace roceconf::report {
namespace {

TEST(Result, VerdictAndEventNames) {
  EXPECT_EQ(verdict_name(Verdict::kPass), "pass");
  EXPECT_EQ(verdict_name(Verdict::kFail), "fail");
  EXPECT_EQ(verdict_name(Verdict::kSkip), "skip");
  EXPECT_EQ(verdict_name(Verdict::kError), "error");
  EXPECT_EQ(verdict_name(Verdict::kInconclusive), "inconclusive");
  EXPECT_EQ(event_kind_name(EventKind::kSent), "sent");
  EXPECT_EQ(event_kind_name(EventKind::kReceived), "received");
  EXPECT_EQ(event_kind_name(EventKind::kExpectMet), "expect-met");
  EXPECT_EQ(event_kind_name(EventKind::kExpectFailed), "expect-failed");
  EXPECT_EQ(event_kind_name(EventKind::kSilenceOk), "silence-ok");
  EXPECT_EQ(event_kind_name(EventKind::kControl), "control");
  EXPECT_EQ(event_kind_name(EventKind::kNote), "note");
}

TEST(Result, CountsByAreaInFirstAppearanceOrder) {
  const RunResult run = test::sample_run();
  const Counts all = run.counts();
  EXPECT_EQ(all.pass, 1);
  EXPECT_EQ(all.fail, 1);
  EXPECT_EQ(all.skip, 1);
  EXPECT_EQ(all.error, 1);
  EXPECT_EQ(all.inconclusive, 1);
  EXPECT_EQ(all.total(), 5);
  EXPECT_EQ(run.areas(), (std::vector<std::string>{"psn", "cq", "cm"}));
  EXPECT_EQ(run.counts("psn").pass, 1);
  EXPECT_EQ(run.counts("psn").fail, 1);
  EXPECT_EQ(run.counts("cm").total(), 2);
  EXPECT_EQ(run.counts("nope").total(), 0);
  EXPECT_TRUE(RunResult{}.areas().empty());
}

}  // namespace
}  // namespace roceconf::report
