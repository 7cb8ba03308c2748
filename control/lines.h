// JSON-lines framing of the control API (CONTROL_API.md): one request object per line, one
// response line per request. Both servers (suite/reference_nic/control_server.cc, agent/control_server.cc)
// and the engine's client (suite/engine/control_client.cc) cut their byte streams into lines with
// LineReader and write with the functions below, so the framing rules are the same everywhere:
// "\n" ends a line, a "\r" before it is dropped, blank lines are skipped, and a line longer than
// the reader's limit is an overflow (the server answers with an error line and closes).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace roceconf::control {

// The largest request line a server takes.
inline constexpr std::size_t kMaxRequestLine = 1u << 20;
// At most this many controllers are connected to one server at once.
inline constexpr std::size_t kMaxClients = 64;

class LineReader {
 public:
  explicit LineReader(std::size_t max_line) : max_line_(max_line) {}

  void append(std::string_view bytes) { buffer_.append(bytes); }
  // The next complete, non-blank line (without "\n" or a trailing "\r"), or nullopt when none
  // is complete yet or the stream overflowed.
  std::optional<std::string> next();
  // At the end of the stream: the last line when it lacks its "\n" but holds text.
  std::optional<std::string> rest();
  // A line (complete or not) is longer than the limit: the stream cannot be read further.
  bool overflowed() const { return overflowed_; }
  std::size_t buffered() const { return buffer_.size() - start_; }
  void clear();

 private:
  std::size_t max_line_;
  std::string buffer_;
  std::size_t start_ = 0;  // where the unread bytes begin
  bool overflowed_ = false;
};

// A JSON value on one line, without the newline; invalid UTF-8 in strings is replaced, never
// thrown on.
std::string dump_line(const nlohmann::json& value);
// The line a server sends when it, not a request, ends the exchange (with its newline):
// {"id":null,"ok":false[,"errno":E],"error":"[E: ]message"}.
std::string error_line(std::string_view message, std::string_view errno_name = {});

}  // namespace roceconf::control
