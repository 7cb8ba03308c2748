#include "dissector/analysis/address.h"

#include <algorithm>

#include <fmt/format.h>

namespace roceconf::analysis {

NetAddress NetAddress::ipv4(const Ipv4Address& a) {
  NetAddress n;
  n.kind = Kind::kIpv4;
  std::copy(a.begin(), a.end(), n.bytes.begin());
  return n;
}

NetAddress NetAddress::ipv6(const Ipv6Address& a) {
  NetAddress n;
  n.kind = Kind::kIpv6;
  n.bytes = a;
  return n;
}

NetAddress NetAddress::gid(const Gid& g) {
  NetAddress n;
  n.kind = Kind::kGid;
  n.bytes = g;
  return n;
}

NetAddress NetAddress::lid(std::uint16_t lid) {
  NetAddress n;
  n.kind = Kind::kLid;
  n.bytes[0] = static_cast<std::uint8_t>(lid >> 8);
  n.bytes[1] = static_cast<std::uint8_t>(lid);
  return n;
}

NetAddress NetAddress::source(const Packet& p) {
  if (p.ipv4) return ipv4(p.ipv4->src);
  if (p.ipv6) return ipv6(p.ipv6->src);
  if (p.grh) return gid(p.grh->sgid);
  if (p.lrh) return lid(p.lrh->slid);
  return {};
}

NetAddress NetAddress::destination(const Packet& p) {
  if (p.ipv4) return ipv4(p.ipv4->dst);
  if (p.ipv6) return ipv6(p.ipv6->dst);
  if (p.grh) return gid(p.grh->dgid);
  if (p.lrh) return lid(p.lrh->dlid);
  return {};
}

namespace {

// RFC 5952 text: lower case, the longest run of two or more zero groups shortened to "::".
std::string ipv6_text(const std::array<std::uint8_t, 16>& b) {
  std::array<unsigned, 8> g{};
  for (std::size_t i = 0; i < 8; ++i) g[i] = unsigned{b[2 * i]} << 8 | b[2 * i + 1];
  std::size_t best = 8, best_len = 0;
  for (std::size_t i = 0; i < 8;) {
    if (g[i] != 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len && j - i >= 2) {
      best = i;
      best_len = j - i;
    }
    i = j;
  }
  std::string out;
  for (std::size_t i = 0; i < 8; ++i) {
    if (i == best) {
      out += "::";
      i += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ':';
    out += fmt::format("{:x}", g[i]);
  }
  return out;
}

}  // namespace

std::string NetAddress::to_string() const {
  switch (kind) {
    case Kind::kNone:
      return "-";
    case Kind::kIpv4:
      return fmt::format("{}.{}.{}.{}", bytes[0], bytes[1], bytes[2], bytes[3]);
    case Kind::kIpv6:
      return ipv6_text(bytes);
    case Kind::kGid:
      return "gid " + ipv6_text(bytes);
    case Kind::kLid:
      return fmt::format("lid {:#06x}", unsigned{bytes[0]} << 8 | bytes[1]);
  }
  return "-";
}

}  // namespace roceconf::analysis
