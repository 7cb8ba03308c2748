// The evidence a case leaves (evidence_recorder.h): the step on every event, the verdicts, and
// the bound on recorded frames.
#include "suite/engine/evidence_recorder.h"

#include <gtest/gtest.h>

#include "capture/port/clock.h"
#include "suite/engine/case_stop.h"

namespace roceconf::engine {
namespace {

TEST(EvidenceRecorder, TagsEventsWithTheStepAndTheClocksTime) {
  VirtualClock clock(1'700'000'000'000'000'000);
  report::CaseResult result;
  EvidenceRecorder e(result, clock);
  e.set_step("c.rcase:4");
  e.note("hello");
  clock.advance(5);
  e.record(report::EventKind::kControl, "hello {} -> {}");
  ASSERT_EQ(result.events.size(), 2u);
  EXPECT_EQ(result.events[0].kind, report::EventKind::kNote);
  EXPECT_EQ(result.events[0].step, "c.rcase:4");
  EXPECT_EQ(result.events[0].text, "hello");
  EXPECT_EQ(result.events[1].unix_ns - result.events[0].unix_ns, 5);
}

TEST(EvidenceRecorder, VerdictsThrowAndFailuresStayOnTheTimeline) {
  VirtualClock clock;
  report::CaseResult result;
  EvidenceRecorder e(result, clock);
  try {
    e.fail("no ACK", {{"aeth.syndrome", "0x1f", "0x60"}});
  } catch (const CaseStop& stop) {
    EXPECT_EQ(stop.verdict, report::Verdict::kFail);
    ASSERT_EQ(stop.diffs.size(), 1u);
  }
  EXPECT_THROW(e.skip("no responder"), CaseStop);
  EXPECT_THROW(e.error("bad case"), CaseStop);
  EXPECT_THROW(e.inconclusive("set-up failed"), CaseStop);
  // fail and inconclusive leave their reason; skip and error only in the result.
  ASSERT_EQ(result.events.size(), 2u);
  EXPECT_EQ(result.events[0].kind, report::EventKind::kExpectFailed);
  EXPECT_EQ(result.events[0].text, "no ACK");
  EXPECT_EQ(result.events[1].kind, report::EventKind::kNote);
  EXPECT_EQ(result.events[1].text, "set-up failed");
}

TEST(EvidenceRecorder, BoundsTheFramesOfACaseAndCountsTheRest) {
  VirtualClock clock;
  report::CaseResult result;
  EvidenceRecorder e(result, clock);
  for (std::uint64_t i = 0; i < EvidenceRecorder::kMaxFrameEvents + 3; ++i)
    e.record(report::EventKind::kReceived, "frame", {0x01});
  e.note("still recorded");  // events without a frame are never dropped
  EXPECT_EQ(e.dropped_frames(), 3u);
  EXPECT_EQ(result.events.size(), EvidenceRecorder::kMaxFrameEvents + 1);
  EXPECT_EQ(result.events.back().text, "still recorded");
}

}  // namespace
}  // namespace roceconf::engine
