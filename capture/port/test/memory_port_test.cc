// The in-memory pair: delivery, order, deadlines on both clocks, the capture hook, closing, and
// impairments that replay exactly from their seed.
#include "capture/port/memory_port.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "capture/port/test/port_test_util.h"

namespace roceconf {
namespace {

using test::psn_of;
using test::roce_frame;
using namespace std::chrono_literals;

constexpr TimeNs kSecond = 1'000'000'000;

std::vector<std::uint8_t> must_receive(Port& port, TimeNs timeout = kSecond) {
  auto got = port.receive_for(timeout);
  EXPECT_TRUE(got.has_value()) << (got ? "" : got.error().message);
  if (!got || !*got) {
    ADD_FAILURE() << "nothing received on " << port.name();
    return {};
  }
  return std::move((*got)->data);
}

TEST(MemoryPortTest, FramesCrossInBothDirections) {
  auto [a, b] = make_memory_pair();
  EXPECT_EQ(a->name(), "mem-a");
  EXPECT_EQ(b->name(), "mem-b");
  const auto x = roce_frame(1);
  const auto y = roce_frame(2);
  ASSERT_TRUE(a->send(x));
  ASSERT_TRUE(b->send(y));
  EXPECT_EQ(b->queued(), 1u);
  auto got = b->receive_for(kSecond);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->data, x);
  EXPECT_LE((*got)->time_ns, b->clock().now_ns());
  EXPECT_EQ((*got)->unix_ns, b->clock().unix_ns((*got)->time_ns));
  EXPECT_EQ(must_receive(*a), y);
}

TEST(MemoryPortTest, DeliversInSendOrder) {
  auto [a, b] = make_memory_pair();
  for (std::uint32_t psn = 0; psn < 1000; ++psn) ASSERT_TRUE(a->send(roce_frame(psn)));
  for (std::uint32_t psn = 0; psn < 1000; ++psn) ASSERT_EQ(psn_of(must_receive(*b)), psn);
}

TEST(MemoryPortTest, OrderHoldsAcrossThreads) {
  auto [a, b] = make_memory_pair();
  std::thread sender([&] {
    for (std::uint32_t psn = 0; psn < 2000; ++psn) ASSERT_TRUE(a->send(roce_frame(psn)));
  });
  for (std::uint32_t psn = 0; psn < 2000; ++psn) ASSERT_EQ(psn_of(must_receive(*b)), psn);
  sender.join();
}

TEST(MemoryPortTest, SteadyClockDeadlinePassesInRealTime) {
  auto [a, b] = make_memory_pair();
  const TimeNs start = b->clock().now_ns();
  auto got = b->receive(start + 30'000'000);
  ASSERT_TRUE(got);
  EXPECT_FALSE(*got);
  EXPECT_GE(b->clock().now_ns() - start, 30'000'000);
}

TEST(MemoryPortTest, VirtualClockDeadlineReturnsAtOnce) {
  auto clock = std::make_shared<VirtualClock>(5 * kSecond);
  auto [a, b] = make_memory_pair({.clock = clock});
  const auto real_start = std::chrono::steady_clock::now();
  auto got = b->receive(9 * kSecond);  // a 4 s silence window
  ASSERT_TRUE(got);
  EXPECT_FALSE(*got);
  EXPECT_EQ(clock->now_ns(), 9 * kSecond);
  EXPECT_LT(std::chrono::steady_clock::now() - real_start, 1s);

  // Queued frames come first, stamped with the virtual send time.
  ASSERT_TRUE(a->send(roce_frame(7)));
  got = b->receive(clock->now_ns());
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->time_ns, 9 * kSecond);
  EXPECT_EQ((*got)->unix_ns, 9 * kSecond);
}

TEST(MemoryPortTest, ManualVirtualClockWaitsForAdvance) {
  auto clock = std::make_shared<VirtualClock>(0, VirtualClock::Mode::kManual);
  auto [a, b] = make_memory_pair({.clock = clock});
  std::thread receiver([&b] {
    auto got = b->receive(100);
    ASSERT_TRUE(got);
    EXPECT_FALSE(*got);
  });
  while (clock->waiting() < 1) std::this_thread::sleep_for(1ms);
  clock->advance(100);
  receiver.join();

  // A frame wakes a manual-clock receiver without any advance.
  std::thread receiver2([&b] { EXPECT_EQ(psn_of(must_receive(*b, 1000)), 3u); });
  while (clock->waiting() < 1) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(a->send(roce_frame(3)));
  receiver2.join();
  EXPECT_EQ(clock->now_ns(), 100);
}

// Two threads on a virtual clock: a requester and an echo responder. Time stands still while
// frames flow and moves only when both are idle, so the final time is exact.
TEST(MemoryPortTest, ThreadedPingPongOnAVirtualClockIsExact) {
  auto clock = std::make_shared<VirtualClock>(0, VirtualClock::Mode::kWhenIdle, 2);
  auto [a, b] = make_memory_pair({.clock = clock});
  std::thread responder([&b, &clock] {
    for (;;) {
      auto got = b->receive_for(1'000);
      ASSERT_TRUE(got);
      if (!*got) continue;
      if (psn_of((*got)->data) == 0xFFFFFF) break;
      ASSERT_TRUE(b->send((*got)->data));
    }
    clock->set_participants(1);
  });
  for (std::uint32_t psn = 0; psn < 200; ++psn) {
    ASSERT_TRUE(a->send(roce_frame(psn)));
    ASSERT_EQ(psn_of(must_receive(*a, 1'000)), psn);
  }
  EXPECT_EQ(clock->now_ns(), 0);
  auto silence = a->receive_for(5'000);
  ASSERT_TRUE(silence);
  EXPECT_FALSE(*silence);
  EXPECT_EQ(clock->now_ns(), 5'000);
  ASSERT_TRUE(a->send(roce_frame(0xFFFFFF)));
  responder.join();
}

TEST(MemoryPortTest, CaptureHookSeesEveryFrameInOrder) {
  std::vector<std::string> seen;
  auto [a, b] = make_memory_pair({.capture = [&seen](const TapEvent& e) {
    seen.push_back(std::string(e.from) + ">" + std::string(e.to) + ":" +
                   std::to_string(psn_of({e.frame.begin(), e.frame.end()})) + ":" +
                   std::string(fate_name(e.fate)));
  }});
  ASSERT_TRUE(a->send(roce_frame(1)));
  ASSERT_TRUE(b->send(roce_frame(2)));
  ASSERT_TRUE(a->send(roce_frame(3)));
  EXPECT_EQ(seen, (std::vector<std::string>{"mem-a>mem-b:1:delivered", "mem-b>mem-a:2:delivered",
                                            "mem-a>mem-b:3:delivered"}));
}

TEST(MemoryPortTest, ClosingEndsBothSidesCleanly) {
  auto [a, b] = make_memory_pair();
  ASSERT_TRUE(b->send(roce_frame(1)));
  b.reset();  // destroying a port closes it
  auto sent = a->send(roce_frame(2));
  ASSERT_FALSE(sent);
  EXPECT_EQ(sent.error().code, PortErrorCode::kClosed);
  EXPECT_NE(sent.error().message.find("closed"), std::string::npos);
  EXPECT_EQ(psn_of(must_receive(*a)), 1u);  // what was queued still arrives
  auto got = a->receive_for(kSecond);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, PortErrorCode::kClosed);

  a->close();
  a->close();  // idempotent
  got = a->receive_for(0);
  ASSERT_FALSE(got);
  EXPECT_EQ(port_error_code_name(got.error().code), "closed");
}

TEST(MemoryPortTest, CloseWakesABlockedReceiver) {
  auto [a, b] = make_memory_pair();
  std::thread closer([&a] {
    std::this_thread::sleep_for(20ms);
    a->close();
  });
  auto got = b->receive_for(30 * kSecond);
  closer.join();
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code, PortErrorCode::kClosed);
}

// Sends `n` frames through an impaired pair and returns the PSNs in arrival order.
std::vector<std::uint32_t> impaired_run(const Impairment& impairment, int n,
                                        std::map<Fate, int>* fates = nullptr) {
  auto [a, b] = make_memory_pair({.capture =
                                      [fates](const TapEvent& e) {
                                        if (fates) ++(*fates)[e.fate];
                                      },
                                  .impairment = impairment});
  for (int i = 0; i < n; ++i) EXPECT_TRUE(a->send(roce_frame(static_cast<std::uint32_t>(i))));
  a->close();  // releases a frame still held for reordering
  std::vector<std::uint32_t> psns;
  while (b->queued() > 0) psns.push_back(psn_of(must_receive(*b)));
  return psns;
}

TEST(MemoryPortTest, ImpairmentReplaysExactlyFromItsSeed) {
  const Impairment impairment{.loss = 0.1, .reorder = 0.1, .duplicate = 0.1, .seed = 7};
  std::map<Fate, int> fates;
  const auto first = impaired_run(impairment, 1000, &fates);
  EXPECT_EQ(impaired_run(impairment, 1000), first);
  Impairment other = impairment;
  other.seed = 8;
  EXPECT_NE(impaired_run(other, 1000), first);

  // Every fate happens at about its rate, and the arrivals account for every fate.
  for (Fate f : {Fate::kDropped, Fate::kHeld, Fate::kDuplicated}) {
    EXPECT_GT(fates[f], 40) << fate_name(f);
    EXPECT_LT(fates[f], 160) << fate_name(f);
  }
  EXPECT_EQ(static_cast<int>(first.size()),
            fates[Fate::kDelivered] + fates[Fate::kHeld] + 2 * fates[Fate::kDuplicated]);
}

TEST(MemoryPortTest, LossDropsAndDuplicationRepeats) {
  EXPECT_TRUE(impaired_run({.loss = 1.0}, 50).empty());
  EXPECT_EQ(impaired_run({.duplicate = 1.0}, 3), (std::vector<std::uint32_t>{0, 0, 1, 1, 2, 2}));
}

TEST(MemoryPortTest, AHeldFrameArrivesRightAfterItsSuccessor) {
  const auto psns = impaired_run({.reorder = 0.3, .seed = 3}, 500);
  ASSERT_EQ(psns.size(), 500u);  // nothing lost
  auto sorted = psns;
  std::sort(sorted.begin(), sorted.end());
  for (std::uint32_t i = 0; i < 500; ++i) ASSERT_EQ(sorted[i], i);
  int swapped = 0;
  for (std::size_t i = 0; i < psns.size(); ++i) {
    // A frame is either in place or late; a late one follows a later frame.
    if (psns[i] != i && psns[i] < i) ++swapped;
    EXPECT_LE(static_cast<int>(i) - static_cast<int>(psns[i]), 1);
  }
  EXPECT_GT(swapped, 50);
}

TEST(MemoryPortTest, ImpairmentCanChangeMidTest) {
  auto [a, b] = make_memory_pair();
  a->set_impairment({.loss = 1.0});
  ASSERT_TRUE(a->send(roce_frame(1)));
  EXPECT_EQ(b->queued(), 0u);
  a->set_impairment({});
  ASSERT_TRUE(a->send(roce_frame(2)));
  EXPECT_EQ(psn_of(must_receive(*b)), 2u);
  ASSERT_TRUE(b->send(roce_frame(3)));  // the other direction was never impaired
  EXPECT_EQ(psn_of(must_receive(*a)), 3u);
}

}  // namespace
}  // namespace roceconf
