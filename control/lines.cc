#include "control/lines.h"

#include <fmt/format.h>

namespace roceconf::control {
namespace {
bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}
}  // namespace

std::optional<std::string> LineReader::next() {
  while (!overflowed_) {
    const std::size_t end = buffer_.find('\n', start_);
    if (end == std::string::npos) {
      // Keep only the unread part; an unfinished line past the limit can never be taken.
      buffer_.erase(0, start_);
      start_ = 0;
      if (buffer_.size() > max_line_) overflowed_ = true;
      return std::nullopt;
    }
    std::string_view line(buffer_.data() + start_, end - start_);
    start_ = end + 1;
    if (line.size() > max_line_) {
      overflowed_ = true;
      break;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (blank(line)) continue;
    return std::string(line);
  }
  return std::nullopt;
}

std::optional<std::string> LineReader::rest() {
  if (overflowed_) return std::nullopt;
  std::string last = buffer_.substr(start_);
  clear();
  if (blank(last) || last.size() > max_line_) return std::nullopt;
  return last;
}

void LineReader::clear() {
  buffer_.clear();
  start_ = 0;
}

std::string dump_line(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string error_line(std::string_view message, std::string_view errno_name) {
  nlohmann::json line = {{"id", nullptr}, {"ok", false}};
  if (!errno_name.empty()) {
    line["errno"] = errno_name;
    line["error"] = fmt::format("{}: {}", errno_name, message);
  } else {
    line["error"] = message;
  }
  return dump_line(line) + "\n";
}

}  // namespace roceconf::control
