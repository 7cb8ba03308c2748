#include "capture/port/clock.h"

#include <algorithm>
#include <chrono>
#include <ctime>

namespace roceconf {
namespace {

std::int64_t read_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

SteadyClock::SteadyClock() {
  // Bracket the realtime read with two monotonic reads to halve the error of the offset.
  const std::int64_t before = read_ns(CLOCK_MONOTONIC);
  const std::int64_t real = read_ns(CLOCK_REALTIME);
  const std::int64_t after = read_ns(CLOCK_MONOTONIC);
  unix_offset_ = real - (before + (after - before) / 2);
}

TimeNs SteadyClock::now_ns() const {
  // libstdc++'s steady_clock is CLOCK_MONOTONIC, the clock the offset was measured against.
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool SteadyClock::wait_until(TimeNs deadline, const std::function<bool()>& ready) {
  std::unique_lock lock(mu_);
  const auto until = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(deadline));
  return cv_.wait_until(lock, until, ready);
}

void SteadyClock::notify() {
  // Taking the lock orders this after a waiter's check of ready(), so no wake-up is lost.
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

VirtualClock::VirtualClock(TimeNs start, Mode mode, int participants)
    : now_(start), mode_(mode), participants_(std::max(participants, 1)) {}

bool VirtualClock::wait_until(TimeNs deadline, const std::function<bool()>& ready) {
  std::unique_lock lock(mu_);
  const Waiter self{deadline, &ready};
  waiters_.push_back(&self);
  bool result = false;
  for (;;) {
    if (ready()) {
      result = true;
      break;
    }
    if (now_ns() >= deadline) break;
    if (!try_advance_locked()) cv_.wait(lock);
  }
  std::erase(waiters_, &self);
  return result;
}

bool VirtualClock::try_advance_locked() {
  if (mode_ != Mode::kWhenIdle || static_cast<int>(waiters_.size()) < participants_) return false;
  TimeNs earliest = kForever;
  for (const Waiter* w : waiters_) {
    // A waiter with something to do will act (and maybe send) at the current time.
    if ((*w->ready)()) return false;
    earliest = std::min(earliest, w->deadline);
  }
  // Nobody can ever wake a set of waiters that all wait forever; jumping to the end of time
  // would only hide that, so leave them blocked (an advance() or a frame still wakes them).
  if (earliest == kForever || earliest <= now_ns()) return false;
  set_locked(earliest);
  return true;
}

void VirtualClock::set_locked(TimeNs t) {
  if (t <= now_ns()) return;
  now_.store(t, std::memory_order_release);
  cv_.notify_all();
}

void VirtualClock::notify() {
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

void VirtualClock::advance(TimeNs delta) {
  std::lock_guard lock(mu_);
  set_locked(add_saturating(now_ns(), delta));
}

void VirtualClock::advance_to(TimeNs t) {
  std::lock_guard lock(mu_);
  set_locked(t);
}

void VirtualClock::set_participants(int participants) {
  std::lock_guard lock(mu_);
  participants_ = std::max(participants, 1);
  // Fewer participants may mean everyone left is now idle.
  cv_.notify_all();
}

int VirtualClock::waiting() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(waiters_.size());
}

}  // namespace roceconf
