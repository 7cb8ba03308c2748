#include "suite/engine/assignments.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace roceconf::engine {

void Assignments::set(std::string key, std::string value) {
  for (auto& a : items_)
    if (a.key == key) {
      a.value = std::move(value);
      return;
    }
  items_.push_back({std::move(key), std::move(value)});
}

const std::string* Assignments::find(std::string_view key) const {
  for (const auto& a : items_)
    if (a.key == key) return &a.value;
  return nullptr;
}

std::string Assignments::text() const {
  std::string out;
  for (const auto& a : items_) {
    if (!out.empty()) out += ' ';
    out += a.key + "=" + a.value;
  }
  return out;
}

std::expected<std::int64_t, std::string> parse_int(std::string_view text) {
  if (text == "true" || text == "yes") return 1;
  if (text == "false" || text == "no") return 0;
  std::string_view t = text;
  bool negative = false;
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) {
    negative = t[0] == '-';
    t.remove_prefix(1);
  }
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    base = 16;
    t.remove_prefix(2);
  }
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (ec != std::errc() || end != t.data() + t.size() || t.empty() ||
      v > static_cast<std::uint64_t>(INT64_MAX))
    return std::unexpected(fmt::format("'{}' is not a number", text));
  return negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
}

std::expected<std::uint64_t, std::string> parse_uint(std::string_view text) {
  std::string_view t = text;
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    base = 16;
    t.remove_prefix(2);
  }
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (ec == std::errc() && end == t.data() + t.size() && !t.empty()) return v;
  if (auto i = parse_int(text); i && *i >= 0) return static_cast<std::uint64_t>(*i);
  return std::unexpected(fmt::format("'{}' is not an unsigned number", text));
}

std::expected<Duration, std::string> parse_duration(std::string_view text) {
  const auto number = [&](std::string_view digits) -> std::optional<double> {
    double v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty() ||
        !std::isfinite(v) || v < 0)
      return std::nullopt;
    return v;
  };
  // A script's windows are short; the caps keep the nanosecond count inside TimeNs.
  constexpr double kMaxNs = 3600e9;
  constexpr double kMaxRtts = 1e6;
  struct Unit {
    std::string_view suffix;
    double ns;
  };
  static constexpr Unit kUnits[] = {{"rtt", 0},  {"ato", 0}, {"us", 1e3},
                                    {"ms", 1e6}, {"ns", 1},  {"s", 1e9}};
  if (text == "0") return Duration{};
  for (const auto& u : kUnits) {
    if (!text.ends_with(u.suffix)) continue;
    const auto v = number(text.substr(0, text.size() - u.suffix.size()));
    if (!v) break;
    if (u.suffix == "rtt") {
      if (*v > kMaxRtts)
        return std::unexpected(fmt::format("'{}' is too long (at most 1000000rtt)", text));
      return Duration{0, *v, std::nullopt};
    }
    if (u.suffix == "ato") {
      if (*v > 1000)
        return std::unexpected(fmt::format("'{}' is too long (at most 1000ato)", text));
      return Duration{0, std::nullopt, *v};
    }
    if (*v * u.ns > kMaxNs)
      return std::unexpected(fmt::format("'{}' is too long (at most 3600s)", text));
    return Duration{static_cast<TimeNs>(*v * u.ns), std::nullopt, std::nullopt};
  }
  return std::unexpected(
      fmt::format("'{}' is not a duration (write 0, 4rtt, 2ato, 500us, 10ms or 2s)", text));
}

}  // namespace roceconf::engine
