#include "suite/reference_nic/address_text.h"

#include <fmt/format.h>

namespace roceconf::target {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<MacAddress> parse_mac(std::string_view text) {
  // "xx:xx:xx:xx:xx:xx": 17 characters with one separator kind throughout.
  if (text.size() != 17) return std::nullopt;
  const char sep = text[2];
  if (sep != ':' && sep != '-') return std::nullopt;
  MacAddress mac{};
  for (std::size_t i = 0; i < 6; ++i) {
    const std::size_t at = i * 3;
    if (i > 0 && text[at - 1] != sep) return std::nullopt;
    const int hi = hex_digit(text[at]);
    const int lo = hex_digit(text[at + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    mac[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return mac;
}

std::string format_mac(const MacAddress& mac) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", mac[0], mac[1], mac[2], mac[3],
                     mac[4], mac[5]);
}

std::optional<Ipv4Address> parse_ipv4(std::string_view text) {
  Ipv4Address address{};
  std::size_t pos = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    if (i > 0) {
      if (pos >= text.size() || text[pos] != '.') return std::nullopt;
      ++pos;
    }
    const std::size_t start = pos;
    unsigned value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - start < 3) {
      value = value * 10 + static_cast<unsigned>(text[pos] - '0');
      ++pos;
    }
    const std::size_t digits = pos - start;
    // Leading zeros are refused: inet_aton would read "010" as octal 8.
    if (digits == 0 || value > 255 || (digits > 1 && text[start] == '0')) return std::nullopt;
    address[i] = static_cast<std::uint8_t>(value);
  }
  if (pos != text.size()) return std::nullopt;
  return address;
}

std::string format_ipv4(const Ipv4Address& address) {
  return fmt::format("{}.{}.{}.{}", address[0], address[1], address[2], address[3]);
}

}  // namespace roceconf::target
