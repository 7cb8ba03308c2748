// `key=value` lists of case steps (`send c SEND_ONLY psn=3 ackreq=1 len=64`) and the value
// syntax they share: numbers (decimal, 0x hex, signed offsets), names, and durations.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capture/port/clock.h"

namespace roceconf::engine {

struct Assignment {
  std::string key;
  std::string value;
};

class Assignments {
 public:
  Assignments() = default;
  Assignments(std::initializer_list<Assignment> items) : items_(items) {}

  void set(std::string key, std::string value);
  bool has(std::string_view key) const { return find(key) != nullptr; }
  const std::string* find(std::string_view key) const;
  const std::vector<Assignment>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  std::string text() const;  // "psn=3 ackreq=1"

 private:
  std::vector<Assignment> items_;
};

// "12", "0x1F", "-1", "+4"; also true/false/yes/no as 1/0.
std::expected<std::int64_t, std::string> parse_int(std::string_view text);
std::expected<std::uint64_t, std::string> parse_uint(std::string_view text);

// A duration: "0", "250us", "10ms", "2s", "1.5ms", or round trips "4rtt" (returned in
// `rtts`; the caller scales them with the run's Timing).
struct Duration {
  TimeNs ns = 0;
  std::optional<double> rtts;
  std::optional<double> ack_timeouts;  // `2ato`: local ACK timeouts of the step's connection
};
std::expected<Duration, std::string> parse_duration(std::string_view text);

}  // namespace roceconf::engine
