#include "cli/duration.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace roceconf::cli {

std::expected<double, std::string> parse_duration_s(std::string_view text) {
  const auto bad = [&] {
    return std::unexpected(fmt::format(
        "'{}' is not a duration: write seconds (20), or a number with s, m, h or ms (90s, 10m, "
        "24h, 500ms)",
        text));
  };
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() || !std::isfinite(value) || value < 0) return bad();
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  double scale = 0;
  if (unit.empty() || unit == "s")
    scale = 1;
  else if (unit == "ms")
    scale = 1e-3;
  else if (unit == "m" || unit == "min")
    scale = 60;
  else if (unit == "h")
    scale = 3600;
  else if (unit == "d")
    scale = 86400;
  else
    return bad();
  const double seconds = value * scale;
  if (seconds <= 0)
    return std::unexpected(fmt::format("'{}': a duration must be above zero", text));
  if (seconds > 30.0 * 86400) return std::unexpected(fmt::format("'{}': at most 30 days", text));
  return seconds;
}

void add_duration_option(CLI::App& cmd, std::optional<double>& seconds) {
  cmd.add_option_function<std::string>(
         "--duration",
         [&seconds](const std::string& text) {
           auto s = parse_duration_s(text);
           if (!s) throw CLI::ValidationError("--duration", s.error());
           seconds = *s;
         },
         "stop after this long: seconds, or 90s, 10m, 24h")
      ->type_name("DURATION");
}

}  // namespace roceconf::cli
