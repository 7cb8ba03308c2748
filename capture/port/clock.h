// Time for ports and the engine: a steady real clock, and a virtual clock for deterministic tests
// in which time moves only when a test advances it or when every participant is blocked waiting
// (so a case with a 4-second silence window runs in microseconds and gives the same result on
// every machine).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <vector>

namespace roceconf {

using TimeNs = std::int64_t;  // nanoseconds on one Clock's time line
inline constexpr TimeNs kForever = std::numeric_limits<TimeNs>::max();

// `t + d`, clamped to kForever instead of overflowing.
constexpr TimeNs add_saturating(TimeNs t, TimeNs d) {
  return d > 0 && t > kForever - d ? kForever : t + d;
}

class Clock {
 public:
  virtual ~Clock() = default;

  virtual TimeNs now_ns() const = 0;
  // Nanoseconds since the Unix epoch at time `t` of this clock (for evidence files).
  virtual std::int64_t unix_ns(TimeNs t) const = 0;

  // Blocks until `ready()` is true or the clock reaches `deadline`; returns the last ready().
  // `ready` runs under the clock's lock: it may take its owner's locks, but must not call back
  // into the clock. Whoever makes it true must call notify() afterwards.
  virtual bool wait_until(TimeNs deadline, const std::function<bool()>& ready) = 0;
  // Wakes the waiters so they re-check their condition.
  virtual void notify() = 0;

  void sleep_until(TimeNs deadline) {
    wait_until(deadline, [] { return false; });
  }
};

// CLOCK_MONOTONIC (std::chrono::steady_clock), mapped to Unix time by the offset between the
// two clocks measured once at construction.
class SteadyClock final : public Clock {
 public:
  SteadyClock();

  TimeNs now_ns() const override;
  std::int64_t unix_ns(TimeNs t) const override { return t + unix_offset_; }
  TimeNs from_unix_ns(std::int64_t unix) const { return unix - unix_offset_; }
  bool wait_until(TimeNs deadline, const std::function<bool()>& ready) override;
  void notify() override;

 private:
  std::int64_t unix_offset_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
};

// Simulated time, in nanoseconds since the Unix epoch. In kManual mode only advance() and
// advance_to() move it. In kWhenIdle mode it also jumps to the earliest waiting deadline as soon
// as `participants` threads are blocked in wait_until() and none of them is ready: with one
// participant (a single-threaded test), a wait with nothing to receive returns at once with the
// clock at its deadline. Set `participants` to the number of threads that drive ports on this
// clock; a thread that is busy elsewhere (not waiting) holds time still.
class VirtualClock final : public Clock {
 public:
  enum class Mode : std::uint8_t { kManual, kWhenIdle };

  explicit VirtualClock(TimeNs start = 0, Mode mode = Mode::kWhenIdle, int participants = 1);

  TimeNs now_ns() const override { return now_.load(std::memory_order_acquire); }
  std::int64_t unix_ns(TimeNs t) const override { return t; }
  bool wait_until(TimeNs deadline, const std::function<bool()>& ready) override;
  void notify() override;

  void advance(TimeNs delta);
  void advance_to(TimeNs t);  // never moves backwards
  void set_participants(int participants);
  // Threads blocked in wait_until() right now (lets a test wait until a peer is parked).
  int waiting() const;

 private:
  struct Waiter {
    TimeNs deadline;
    const std::function<bool()>* ready;
  };
  bool try_advance_locked();
  void set_locked(TimeNs t);

  std::atomic<TimeNs> now_;
  const Mode mode_;
  int participants_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<const Waiter*> waiters_;
};

}  // namespace roceconf
