// Test helper: bytes from hex text ("7cfe 9075 ..."); anything but hex digits is skipped.
#pragma once

#include <cctype>
#include <cstdint>
#include <string_view>
#include <vector>

namespace roceconf::test {

inline std::vector<std::uint8_t> from_hex(std::string_view text) {
  std::vector<std::uint8_t> out;
  int hi = -1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!std::isxdigit(static_cast<unsigned char>(c))) continue;
    const int v =
        std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10);
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(static_cast<std::uint8_t>(hi << 4 | v));
      hi = -1;
    }
  }
  return out;
}

}  // namespace roceconf::test
