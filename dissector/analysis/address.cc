#include "dissector/analysis/address.h"

#include <algorithm>

#include <fmt/format.h>

#include "dissector/address_text.h"

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

std::string NetAddress::to_string() const {
  switch (kind) {
    case Kind::kNone:
      return "-";
    case Kind::kIpv4:
      return format_ipv4({bytes[0], bytes[1], bytes[2], bytes[3]});
    case Kind::kIpv6:
      return format_gid(bytes);
    case Kind::kGid:
      return "gid " + format_gid(bytes);
    case Kind::kLid:
      return fmt::format("lid {:#06x}", unsigned{bytes[0]} << 8 | bytes[1]);
  }
  return "-";
}

}  // namespace roceconf::analysis
