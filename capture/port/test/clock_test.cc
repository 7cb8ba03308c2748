// SteadyClock against the system clocks, and VirtualClock's rule: time moves only when advanced
// or when every participant waits and none is ready.
#include "capture/port/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>

namespace roceconf {
namespace {

using namespace std::chrono_literals;

std::int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Spins (really sleeping) until `clock` has `n` waiters, so a test can act on a parked thread.
void await_waiters(const VirtualClock& clock, int n) {
  while (clock.waiting() < n) std::this_thread::sleep_for(1ms);
}

TEST(SteadyClockTest, MapsToUnixTime) {
  SteadyClock clock;
  const TimeNs t = clock.now_ns();
  EXPECT_NEAR(static_cast<double>(clock.unix_ns(t)), static_cast<double>(realtime_ns()), 50e6);
  EXPECT_EQ(clock.from_unix_ns(clock.unix_ns(t)), t);
  EXPECT_GE(clock.now_ns(), t);
}

TEST(SteadyClockTest, WaitEndsAtTheDeadline) {
  SteadyClock clock;
  const TimeNs start = clock.now_ns();
  EXPECT_FALSE(clock.wait_until(start + 20'000'000, [] { return false; }));
  EXPECT_GE(clock.now_ns() - start, 20'000'000);
}

TEST(SteadyClockTest, NotifyWakesAWaiterBeforeItsDeadline) {
  SteadyClock clock;
  std::atomic<bool> flag = false;
  std::thread setter([&] {
    std::this_thread::sleep_for(10ms);
    flag = true;
    clock.notify();
  });
  const TimeNs start = clock.now_ns();
  EXPECT_TRUE(clock.wait_until(start + 10'000'000'000, [&] { return flag.load(); }));
  EXPECT_LT(clock.now_ns() - start, 5'000'000'000);
  setter.join();
}

TEST(VirtualClockTest, ManualModeMovesOnlyWhenAdvanced) {
  VirtualClock clock(1'000, VirtualClock::Mode::kManual);
  EXPECT_EQ(clock.now_ns(), 1'000);
  clock.advance(500);
  EXPECT_EQ(clock.now_ns(), 1'500);
  clock.advance_to(1'200);  // never backwards
  EXPECT_EQ(clock.now_ns(), 1'500);
  EXPECT_EQ(clock.unix_ns(1'500), 1'500);
}

TEST(VirtualClockTest, ManualWaitEndsWhenAdvancedToTheDeadline) {
  VirtualClock clock(0, VirtualClock::Mode::kManual);
  std::atomic<bool> returned = false;
  std::thread waiter([&] {
    EXPECT_FALSE(clock.wait_until(200, [] { return false; }));
    returned = true;
  });
  await_waiters(clock, 1);
  clock.advance(100);
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(returned);  // 100 < 200
  clock.advance(100);
  waiter.join();
  EXPECT_TRUE(returned);
  EXPECT_EQ(clock.now_ns(), 200);
}

TEST(VirtualClockTest, SingleParticipantJumpsStraightToTheDeadline) {
  VirtualClock clock(1'000);
  const auto real_start = std::chrono::steady_clock::now();
  EXPECT_FALSE(clock.wait_until(1'000 + 4'000'000'000, [] { return false; }));  // 4 s window
  EXPECT_EQ(clock.now_ns(), 1'000 + 4'000'000'000);
  EXPECT_LT(std::chrono::steady_clock::now() - real_start, 1s);
  // A deadline already passed returns at once without moving time.
  EXPECT_FALSE(clock.wait_until(5, [] { return false; }));
  EXPECT_EQ(clock.now_ns(), 1'000 + 4'000'000'000);
}

TEST(VirtualClockTest, TwoParticipantsAdvanceOnlyWhenBothWait) {
  VirtualClock clock(0, VirtualClock::Mode::kWhenIdle, 2);
  std::atomic<TimeNs> a_woke_at = -1;
  std::thread a([&] {
    EXPECT_FALSE(clock.wait_until(100, [] { return false; }));
    a_woke_at = clock.now_ns();
    clock.set_participants(1);  // leaving: the main thread alone drives time from here
  });
  await_waiters(clock, 1);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(clock.now_ns(), 0);  // one of two waiting: time holds

  EXPECT_FALSE(clock.wait_until(50, [] { return false; }));  // earliest deadline first
  EXPECT_EQ(clock.now_ns(), 50);
  EXPECT_FALSE(clock.wait_until(300, [] { return false; }));
  a.join();
  EXPECT_EQ(a_woke_at, 100);
  EXPECT_EQ(clock.now_ns(), 300);
}

TEST(VirtualClockTest, AReadyWaiterHoldsTimeStill) {
  VirtualClock clock(0, VirtualClock::Mode::kWhenIdle, 2);
  std::atomic<bool> flag = false;
  std::atomic<TimeNs> ready_at = -1;
  std::thread a([&] {
    EXPECT_TRUE(clock.wait_until(1'000, [&] { return flag.load(); }));
    ready_at = clock.now_ns();
    EXPECT_FALSE(clock.wait_until(500, [] { return false; }));
    clock.set_participants(1);
  });
  await_waiters(clock, 1);
  flag = true;
  clock.notify();
  // Whether or not `a` has woken yet, time must not pass its moment of readiness.
  EXPECT_FALSE(clock.wait_until(10, [] { return false; }));
  EXPECT_EQ(clock.now_ns(), 10);
  EXPECT_FALSE(clock.wait_until(600, [] { return false; }));
  a.join();
  EXPECT_EQ(ready_at, 0);
  EXPECT_EQ(clock.now_ns(), 600);
}

TEST(VirtualClockTest, NeverJumpsToForever) {
  VirtualClock clock(0, VirtualClock::Mode::kWhenIdle, 1);
  std::atomic<bool> returned = false;
  std::thread waiter([&] {
    EXPECT_FALSE(clock.wait_until(kForever, [] { return false; }));
    returned = true;
  });
  await_waiters(clock, 1);
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(returned);
  clock.advance_to(kForever);  // only an explicit advance ends a wait for ever
  waiter.join();
  EXPECT_EQ(add_saturating(kForever, 5), kForever);
}

}  // namespace
}  // namespace roceconf
