#include "dissector/address_text.h"

#include <arpa/inet.h>

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

namespace roceconf {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string format_mac(const MacAddress& m) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4],
                     m[5]);
}

std::optional<MacAddress> parse_mac(std::string_view text) {
  MacAddress mac{};
  char sep = 0;
  std::size_t pos = 0;
  for (std::size_t i = 0; i < mac.size(); ++i) {
    if (i > 0) {
      if (pos >= text.size()) return std::nullopt;
      if (sep == 0 && (text[pos] == ':' || text[pos] == '-')) sep = text[pos];
      if (text[pos] != sep) return std::nullopt;
      ++pos;
    }
    unsigned value = 0;
    std::size_t digits = 0;
    for (; pos < text.size() && digits < 3; ++pos, ++digits) {
      const int d = hex_digit(text[pos]);
      if (d < 0) break;
      value = value << 4 | static_cast<unsigned>(d);
    }
    if (digits == 0 || digits > 2) return std::nullopt;
    mac[i] = static_cast<std::uint8_t>(value);
  }
  if (pos != text.size()) return std::nullopt;
  return mac;
}

std::string format_ipv4(const Ipv4Address& a) {
  return fmt::format("{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
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
    if (digits == 0 || value > 255 || (digits > 1 && text[start] == '0')) return std::nullopt;
    address[i] = static_cast<std::uint8_t>(value);
  }
  if (pos != text.size()) return std::nullopt;
  return address;
}

Ipv6Address gid_from_ipv4(const Ipv4Address& address) {
  Ipv6Address gid{};
  gid[10] = gid[11] = 0xFF;
  std::copy(address.begin(), address.end(), gid.begin() + 12);
  return gid;
}

bool gid_is_ipv4_mapped(const Ipv6Address& gid) {
  for (std::size_t i = 0; i < 10; ++i)
    if (gid[i] != 0) return false;
  return gid[10] == 0xFF && gid[11] == 0xFF;
}

std::optional<Ipv4Address> gid_ipv4(const Ipv6Address& gid) {
  if (!gid_is_ipv4_mapped(gid)) return std::nullopt;
  return Ipv4Address{gid[12], gid[13], gid[14], gid[15]};
}

std::string format_gid(const Ipv6Address& a) {
  if (const auto v4 = gid_ipv4(a)) return "::ffff:" + format_ipv4(*v4);
  std::uint16_t g[8];
  for (std::size_t i = 0; i < 8; ++i) g[i] = be::load16(&a[2 * i]);
  // RFC 5952: the longest run of two or more zero groups becomes "::" (the first on a tie).
  int best = -1, best_len = 1;
  for (int i = 0; i < 8;) {
    if (g[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len) best = i, best_len = j - i;
    i = j;
  }
  fmt::memory_buffer out;
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      fmt::format_to(std::back_inserter(out), "::");
      i += best_len - 1;
      continue;
    }
    if (i > 0 && i != best + best_len) fmt::format_to(std::back_inserter(out), ":");
    fmt::format_to(std::back_inserter(out), "{:x}", g[i]);
  }
  return fmt::to_string(out);
}

std::optional<Ipv6Address> parse_ipv6(std::string_view text) {
  // libc reads the many IPv6 forms; it needs a terminated string, so an embedded NUL (which it
  // would stop at) is refused first.
  if (text.find('\0') != std::string_view::npos) return std::nullopt;
  const std::string terminated(text);
  Ipv6Address address{};
  if (inet_pton(AF_INET6, terminated.c_str(), address.data()) != 1) return std::nullopt;
  return address;
}

std::optional<Ipv6Address> parse_gid(std::string_view text) {
  if (const auto v4 = parse_ipv4(text)) return gid_from_ipv4(*v4);
  return parse_ipv6(text);
}

std::string format_address(Bytes a) {
  switch (a.size()) {
    case 6:
      return format_mac({a[0], a[1], a[2], a[3], a[4], a[5]});
    case 4:
      return format_ipv4({a[0], a[1], a[2], a[3]});
    case 16: {
      Ipv6Address gid;
      std::copy(a.begin(), a.end(), gid.begin());
      return format_gid(gid);
    }
    default:
      break;
  }
  std::string out;
  for (std::uint8_t b : a) out += fmt::format("{:02x}", b);
  return out;
}

}  // namespace roceconf
