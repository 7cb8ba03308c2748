// Time windows of a run. The round trip is measured once per run (calibrate.h); an expect
// window given in round trips is never shorter than the expect floor, and a silence window
// ("expect nothing") is max(silence floor, N x RTT), 4 RTT by default.
#pragma once

#include <algorithm>
#include <cstdint>

#include "capture/port/clock.h"

namespace roceconf::engine {

inline constexpr TimeNs kMillisecond = 1'000'000;

struct Timing {
  TimeNs rtt = 0;                            // measured round trip
  TimeNs expect_floor = 200 * kMillisecond;  // an expected packet may take this long
  TimeNs silence_floor = 20 * kMillisecond;  // shortest "expect nothing" window
  double silence_rtts = 4;
  // A requester timer (local ACK timeout, RNR timer) fires no earlier than its value and, to
  // pass, no later than tolerance x value + slack (hosts whose timers tick in jiffies).
  double timer_tolerance = 4;
  TimeNs timer_slack = 50 * kMillisecond;

  TimeNs scaled(double rtts) const { return static_cast<TimeNs>(rtts * static_cast<double>(rtt)); }
  TimeNs expect_window(double rtts = 1) const { return std::max(expect_floor, scaled(rtts)); }
  TimeNs silence_window(double rtts) const { return std::max(silence_floor, scaled(rtts)); }
  TimeNs silence_window() const { return silence_window(silence_rtts); }
};

}  // namespace roceconf::engine
