// Durations on the command line: "90s", "10m", "24h", "1.5h", "500ms", or plain seconds ("20").
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace roceconf::cli {

// Seconds, or one line saying what is wrong with `text`.
std::expected<double, std::string> parse_duration_s(std::string_view text);

// `--duration DURATION` on `cmd`, parsed into `seconds` (which must outlive the parse).
void add_duration_option(CLI::App& cmd, std::optional<double>& seconds);

}  // namespace roceconf::cli
