// IPv4 (RFC 791) and IPv6 (RFC 8200) headers as RoCEv2 uses them (IBA Annex A17): no options
// are generated, IPv4 options are skipped on decode, IPv6 extension headers are not followed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "dissector/bytes.h"

namespace roceconf {

using Ipv4Address = std::array<std::uint8_t, 4>;
using Ipv6Address = std::array<std::uint8_t, 16>;

inline constexpr std::uint8_t kIpProtoUdp = 17;

struct Ipv4 {
  static constexpr std::size_t kSize = 20;  // without options
  std::uint8_t version = 4;
  std::uint8_t ihl = 5;  // header length in 32-bit words
  std::uint8_t dscp = 0;
  std::uint8_t ecn = 0;
  std::uint16_t total_length = 0;  // filled on encode
  std::uint16_t id = 1;            // covered by the ICRC, so it must be chosen by the builder
  bool df = true;
  bool mf = false;
  bool reserved_flag = false;
  std::uint16_t frag_offset = 0;
  std::uint8_t ttl = 64;
  std::uint8_t protocol = kIpProtoUdp;
  std::uint16_t checksum = 0;  // filled on encode
  Ipv4Address src{192, 0, 2, 1};
  Ipv4Address dst{192, 0, 2, 2};

  std::size_t header_length() const { return std::size_t{ihl} * 4; }

  static Ipv4 decode(std::span<const std::uint8_t, kSize> b) {
    Ipv4 h;
    h.version = b[0] >> 4;
    h.ihl = b[0] & 0x0F;
    h.dscp = b[1] >> 2;
    h.ecn = b[1] & 3;
    h.total_length = be::load16(&b[2]);
    h.id = be::load16(&b[4]);
    const std::uint16_t ff = be::load16(&b[6]);
    h.reserved_flag = (ff & 0x8000) != 0;
    h.df = (ff & 0x4000) != 0;
    h.mf = (ff & 0x2000) != 0;
    h.frag_offset = ff & 0x1FFF;
    h.ttl = b[8];
    h.protocol = b[9];
    h.checksum = be::load16(&b[10]);
    std::copy_n(&b[12], 4, h.src.begin());
    std::copy_n(&b[16], 4, h.dst.begin());
    return h;
  }
  void encode(std::span<std::uint8_t, kSize> b) const {
    b[0] = static_cast<std::uint8_t>(version << 4 | (ihl & 0x0F));
    b[1] = static_cast<std::uint8_t>(dscp << 2 | (ecn & 3));
    be::store16(&b[2], total_length);
    be::store16(&b[4], id);
    be::store16(&b[6], static_cast<std::uint16_t>((reserved_flag ? 0x8000 : 0) | (df ? 0x4000 : 0) |
                                                  (mf ? 0x2000 : 0) | (frag_offset & 0x1FFF)));
    b[8] = ttl;
    b[9] = protocol;
    be::store16(&b[10], checksum);
    std::copy(src.begin(), src.end(), &b[12]);
    std::copy(dst.begin(), dst.end(), &b[16]);
  }
};

// RFC 1071 one's-complement sum over an IPv4 header (checksum field included: 0 when valid).
std::uint16_t ipv4_checksum(Bytes header);
// Recomputes, in place, the checksum of an IPv4 header (for headers edited after encoding).
void refresh_ipv4_checksum(std::span<std::uint8_t> header);

struct Ipv6 {
  static constexpr std::size_t kSize = 40;
  std::uint8_t version = 6;
  std::uint8_t traffic_class = 0;
  std::uint32_t flow_label = 0;
  std::uint16_t payload_length = 0;  // filled on encode
  std::uint8_t next_header = kIpProtoUdp;
  std::uint8_t hop_limit = 64;
  Ipv6Address src{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  Ipv6Address dst{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

  static Ipv6 decode(std::span<const std::uint8_t, kSize> b) {
    Ipv6 h;
    const std::uint32_t w = be::load32(&b[0]);
    h.version = static_cast<std::uint8_t>(w >> 28);
    h.traffic_class = static_cast<std::uint8_t>(w >> 20);
    h.flow_label = w & 0xFFFFF;
    h.payload_length = be::load16(&b[4]);
    h.next_header = b[6];
    h.hop_limit = b[7];
    std::copy_n(&b[8], 16, h.src.begin());
    std::copy_n(&b[24], 16, h.dst.begin());
    return h;
  }
  void encode(std::span<std::uint8_t, kSize> b) const {
    be::store32(&b[0], std::uint32_t{version} << 28 | std::uint32_t{traffic_class} << 20 |
                           (flow_label & 0xFFFFF));
    be::store16(&b[4], payload_length);
    b[6] = next_header;
    b[7] = hop_limit;
    std::copy(src.begin(), src.end(), &b[8]);
    std::copy(dst.begin(), dst.end(), &b[24]);
  }
};

}  // namespace roceconf
