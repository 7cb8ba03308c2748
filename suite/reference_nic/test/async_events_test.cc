#include "suite/reference_nic/async_events.h"

#include <gtest/gtest.h>

namespace roceconf::target {
namespace {

TEST(AsyncEvents, NamesFollowIbvEventType) {
  EXPECT_EQ(async_event_name(AsyncEventType::kCqErr), "CQ_ERR");
  EXPECT_EQ(async_event_name(AsyncEventType::kQpFatal), "QP_FATAL");
  EXPECT_EQ(async_event_name(AsyncEventType::kCommEst), "COMM_EST");
  EXPECT_EQ(async_event_name(AsyncEventType::kSqDrained), "SQ_DRAINED");
  EXPECT_EQ(async_event_name(AsyncEventType::kGidChange), "GID_CHANGE");
  EXPECT_EQ(static_cast<int>(AsyncEventType::kSqDrained), 5);
  EXPECT_EQ(async_event_from_name("PATH_MIG"), AsyncEventType::kPathMig);
  EXPECT_FALSE(async_event_from_name("NOPE"));
}

TEST(AsyncEvents, QueueIsFifoAndBounded) {
  AsyncEventQueue q(2);
  q.push({AsyncEventType::kCqErr, 1});
  q.push({AsyncEventType::kQpFatal, 0x11});
  q.push({AsyncEventType::kCommEst, 0x12});  // over the bound
  EXPECT_EQ(q.dropped(), 1u);
  EXPECT_EQ(q.poll(), (AsyncEvent{AsyncEventType::kCqErr, 1}));
  EXPECT_EQ(q.drain(), (std::vector<AsyncEvent>{{AsyncEventType::kQpFatal, 0x11}}));
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.poll());
}

}  // namespace
}  // namespace roceconf::target
