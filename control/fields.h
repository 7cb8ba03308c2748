// Reading one control-API request (CONTROL_API.md): an object's fields by name, with the API's
// rules (unknown fields refused, unsigned numbers as JSON numbers or "0x.." / decimal strings,
// hex bytes). A bad field throws RequestError naming the field's path
// ("post_send.wrs[1].sg_list[0].lkey"); the API turns it into ok = false. The reference
// target's control API and roceconf-agent both read requests through it, and the typed client
// (client.h) reads responses with its unsigned-number and hex rules.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace roceconf::control {

// A request has dozens of fields, each of which can be wrong: a bad one unwinds to the request
// handler as an exception rather than being checked by hand at every read.
struct RequestError {
  std::string message;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw RequestError{fmt::format(format, std::forward<Args>(args)...)};
}

// A short rendering of a JSON value for error messages. Lists and objects are named, not
// dumped: dumping recurses, and a request may nest arbitrarily deep.
std::string shown(const nlohmann::json& v);

// An object's fields, read by name; `where` prefixes messages ("post_send.wrs[1].sg_list[0]").
class Fields {
 public:
  // `request`: the top-level object, whose "id" and "op" belong to the envelope, not the op.
  Fields(const nlohmann::json& object, std::string where, bool request = false);

  // Refuses fields not in `known` (a typo must not be silently ignored); the lists are declared
  // in ops.h.
  void only(std::span<const std::string_view> known) const;
  void only(std::initializer_list<std::string_view> known) const {
    only(std::span<const std::string_view>(known.begin(), known.size()));
  }
  bool has(std::string_view key) const { return obj_.contains(key); }
  const nlohmann::json& at(std::string_view key) const;
  std::string path(std::string_view key) const { return fmt::format("{}.{}", where_, key); }
  const std::string& where() const { return where_; }

  // Unsigned integers: a JSON number, or a string "0x..." for values people write in hex.
  std::uint64_t u(std::string_view key, std::uint64_t max) const;
  std::uint64_t u(std::string_view key, std::uint64_t max, std::uint64_t fallback) const {
    return has(key) ? u(key, max) : fallback;
  }
  std::uint32_t u32(std::string_view key) const {
    return static_cast<std::uint32_t>(u(key, UINT32_MAX));
  }
  std::uint32_t u32(std::string_view key, std::uint32_t fallback) const {
    return static_cast<std::uint32_t>(u(key, UINT32_MAX, fallback));
  }
  std::uint16_t u16(std::string_view key) const {
    return static_cast<std::uint16_t>(u(key, UINT16_MAX));
  }
  std::uint8_t u8(std::string_view key) const {
    return static_cast<std::uint8_t>(u(key, UINT8_MAX));
  }
  bool boolean(std::string_view key, bool fallback) const;
  std::string text(std::string_view key) const;
  const nlohmann::json& array(std::string_view key) const;
  std::vector<std::uint8_t> hex(std::string_view key) const;

  static std::uint64_t to_unsigned(const nlohmann::json& v, const std::string& where,
                                   std::uint64_t max);

 private:
  const nlohmann::json& obj_;
  std::string where_;
  bool request_;
};

std::string to_hex(std::span<const std::uint8_t> bytes);

}  // namespace roceconf::control
