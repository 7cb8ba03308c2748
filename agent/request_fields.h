// Reading one control-API request (suite/target/CONTROL_API.md) as the agent receives it: an
// object's fields by name, with the API's rules (unknown fields refused, unsigned numbers as JSON
// numbers or "0x.." / decimal strings, hex bytes). A bad field throws RequestError naming the
// field's path ("post_send.wrs[1].sg_list[0].lkey"); the session turns it into ok = false.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace roceconf::agent {

struct RequestError {
  std::string message;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw RequestError{fmt::format(format, std::forward<Args>(args)...)};
}

// A short rendering of a value for messages; lists and objects are named, never dumped.
std::string shown(const nlohmann::json& v);

class Fields {
 public:
  // `request`: the top-level object, whose "id" and "op" are the envelope's.
  Fields(const nlohmann::json& object, std::string where, bool request = false);

  void only(std::initializer_list<std::string_view> known) const;
  bool has(std::string_view key) const { return obj_.contains(key); }
  const nlohmann::json& at(std::string_view key) const;
  std::string path(std::string_view key) const { return fmt::format("{}.{}", where_, key); }

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

}  // namespace roceconf::agent
