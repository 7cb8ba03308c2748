#include "suite/reference_nic/cq.h"

#include <gtest/gtest.h>

namespace roceconf::target {
namespace {

Cqe cqe(std::uint64_t wr_id, std::uint32_t qp = 0x11, WcStatus st = WcStatus::kSuccess) {
  Cqe c;
  c.wr_id = wr_id;
  c.qp_num = qp;
  c.status = st;
  return c;
}

class CqTest : public ::testing::Test {
 protected:
  AsyncEventQueue events;
  CompChannel channel;
  Counters counters;
  Cq::Env env{&events, &channel, &counters};
};

TEST_F(CqTest, OverflowAtExactlyDepthPlusOneRaisesCqErrOnceOnThatCqOnly) {
  Cq a(1, 4, env);
  Cq b(2, 4, env);
  for (std::uint64_t i = 0; i < 4; ++i) EXPECT_EQ(a.push(cqe(i)), Cq::PushResult::kQueued);
  EXPECT_TRUE(events.empty()) << "a full CQ is not an overflow yet";
  EXPECT_FALSE(a.overflowed());

  EXPECT_EQ(a.push(cqe(4)), Cq::PushResult::kOverflow);  // completion number depth+1
  EXPECT_TRUE(a.overflowed());
  EXPECT_EQ(events.drain(), (std::vector<AsyncEvent>{{AsyncEventType::kCqErr, 1}}));

  // Nothing more is queued on it, and no second CQ_ERR.
  EXPECT_EQ(a.poll(10).size(), 4u);
  EXPECT_EQ(a.push(cqe(5)), Cq::PushResult::kDropped);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(counters.cq_overflow, 2u);

  // The other CQ is unaffected.
  for (std::uint64_t i = 0; i < 4; ++i) EXPECT_EQ(b.push(cqe(i)), Cq::PushResult::kQueued);
  EXPECT_FALSE(b.overflowed());
  EXPECT_TRUE(events.empty());
}

TEST_F(CqTest, PollIsFifoAndBounded) {
  Cq cq(1, 8, env);
  for (std::uint64_t i = 0; i < 5; ++i) cq.push(cqe(i));
  const auto first = cq.poll(2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].wr_id, 0u);
  EXPECT_EQ(first[1].wr_id, 1u);
  EXPECT_EQ(cq.poll_one()->wr_id, 2u);
  EXPECT_EQ(cq.poll(100).size(), 2u);
  EXPECT_FALSE(cq.poll_one());
}

TEST_F(CqTest, NoNotificationWhenPolling) {
  Cq cq(1, 8, env);
  cq.push(cqe(1));
  cq.push(cqe(2), true);
  EXPECT_EQ(cq.comp_events(), 0u);
  EXPECT_EQ(channel.size(), 0u);
  EXPECT_EQ(cq.notify_mode(), CqNotify::kNone);
}

TEST_F(CqTest, ArmedForNextFiresOnceThenDisarms) {
  Cq cq(3, 8, env);
  cq.req_notify(false);
  EXPECT_EQ(cq.notify_mode(), CqNotify::kNextComp);
  cq.push(cqe(1));  // unsolicited completion is enough
  EXPECT_EQ(cq.comp_events(), 1u);
  EXPECT_EQ(channel.get_event(), 3u);
  EXPECT_EQ(cq.notify_mode(), CqNotify::kNone);
  cq.push(cqe(2));
  cq.push(cqe(3), true);
  EXPECT_EQ(cq.comp_events(), 1u) << "one event per arming";
  EXPECT_FALSE(channel.get_event());
  cq.req_notify(false);
  cq.push(cqe(4));
  EXPECT_EQ(cq.comp_events(), 2u);
}

TEST_F(CqTest, ArmedForSolicitedWaitsForSolicitedOrError) {
  Cq cq(4, 8, env);
  cq.req_notify(true);
  EXPECT_EQ(cq.notify_mode(), CqNotify::kSolicited);
  cq.push(cqe(1));
  cq.push(cqe(2));
  EXPECT_EQ(cq.comp_events(), 0u) << "unsolicited completions do not fire";
  cq.push(cqe(3), true);
  EXPECT_EQ(cq.comp_events(), 1u);
  EXPECT_EQ(cq.notify_mode(), CqNotify::kNone);
  cq.push(cqe(4), true);
  EXPECT_EQ(cq.comp_events(), 1u) << "disarmed after firing";

  cq.req_notify(true);
  cq.push(cqe(5, 0x11, WcStatus::kRemAccessErr));
  EXPECT_EQ(cq.comp_events(), 2u) << "an error completion counts as solicited";
}

TEST_F(CqTest, ArmingForNextWidensASolicitedArming) {
  Cq cq(5, 8, env);
  cq.req_notify(true);
  cq.req_notify(false);
  EXPECT_EQ(cq.notify_mode(), CqNotify::kNextComp);
  cq.req_notify(true);  // does not narrow it back
  EXPECT_EQ(cq.notify_mode(), CqNotify::kNextComp);
  cq.push(cqe(1));
  EXPECT_EQ(cq.comp_events(), 1u);
}

TEST_F(CqTest, SolicitedEventAlwaysDefectFiresOnAnyCompletion) {
  Cq::Env defective = env;
  defective.solicited_always = true;
  Cq cq(6, 8, defective);
  cq.req_notify(true);
  cq.push(cqe(1));
  EXPECT_EQ(cq.comp_events(), 1u) << "an unsolicited completion fired the solicited arming";
}

TEST_F(CqTest, StaysArmedDefectFiresOnEveryCompletion) {
  Cq::Env defective = env;
  defective.stays_armed = true;
  Cq cq(7, 8, defective);
  cq.req_notify(false);
  cq.push(cqe(1));
  cq.push(cqe(2));
  EXPECT_EQ(cq.comp_events(), 2u) << "the event did not disarm the CQ";
  EXPECT_EQ(cq.notify_mode(), CqNotify::kNextComp);
}

TEST_F(CqTest, PurgeRemovesOneQpsCompletions) {
  Cq cq(1, 8, env);
  cq.push(cqe(1, 0x11));
  cq.push(cqe(2, 0x12));
  cq.push(cqe(3, 0x11));
  EXPECT_EQ(cq.purge_qp(0x11), 2u);
  ASSERT_EQ(cq.size(), 1u);
  EXPECT_EQ(cq.entries().front().wr_id, 2u);
}

TEST_F(CqTest, StandaloneCqNeedsNoEnvironment) {
  Cq cq(1, 1);
  cq.req_notify(false);
  EXPECT_EQ(cq.push(cqe(1)), Cq::PushResult::kQueued);
  EXPECT_EQ(cq.push(cqe(2)), Cq::PushResult::kOverflow);
}

TEST(CqNames, StatusAndOpcodeNames) {
  EXPECT_EQ(wc_status_name(WcStatus::kSuccess), "SUCCESS");
  EXPECT_EQ(wc_status_name(WcStatus::kWrFlushErr), "WR_FLUSH_ERR");
  EXPECT_EQ(wc_status_name(WcStatus::kRnrRetryExcErr), "RNR_RETRY_EXC_ERR");
  EXPECT_EQ(static_cast<int>(WcStatus::kRemAccessErr), 10);
  EXPECT_EQ(wc_status_from_name("LOC_PROT_ERR"), WcStatus::kLocProtErr);
  EXPECT_EQ(wc_opcode_name(WcOpcode::kRecvRdmaWithImm), "RECV_RDMA_WITH_IMM");
  EXPECT_EQ(wc_opcode_from_name("COMP_SWAP"), WcOpcode::kCompSwap);
  EXPECT_EQ(static_cast<int>(WcOpcode::kRecv), 128);
  EXPECT_EQ(cq_notify_name(CqNotify::kSolicited), "solicited");
}

}  // namespace
}  // namespace roceconf::target
