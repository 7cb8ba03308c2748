// Ethernet II with optional 802.1Q / 802.1ad tags (IEEE 802.3, 802.1Q).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "dissector/bytes.h"

namespace roceconf {

using MacAddress = std::array<std::uint8_t, 6>;

namespace ethertype {
inline constexpr std::uint16_t kIpv4 = 0x0800;
inline constexpr std::uint16_t kIpv6 = 0x86DD;
inline constexpr std::uint16_t kVlan = 0x8100;
inline constexpr std::uint16_t kQinQ = 0x88A8;
inline constexpr std::uint16_t kRoceV1 = 0x8915;  // IBA Annex A16
}  // namespace ethertype

struct Ethernet {
  static constexpr std::size_t kSize = 14;
  MacAddress dst{0x02, 0, 0, 0, 0, 0x02};
  MacAddress src{0x02, 0, 0, 0, 0, 0x01};
  std::uint16_t type = ethertype::kIpv4;

  static Ethernet decode(std::span<const std::uint8_t, kSize> b) {
    Ethernet e;
    std::copy_n(b.data(), 6, e.dst.begin());
    std::copy_n(b.data() + 6, 6, e.src.begin());
    e.type = be::load16(b.data() + 12);
    return e;
  }
  void encode(std::span<std::uint8_t, kSize> b) const {
    std::copy(dst.begin(), dst.end(), b.data());
    std::copy(src.begin(), src.end(), b.data() + 6);
    be::store16(b.data() + 12, type);
  }
};

// One 802.1Q tag: TPID is the previous header's type; this holds the TCI and the inner type.
struct Vlan {
  static constexpr std::size_t kSize = 4;
  std::uint16_t tpid = ethertype::kVlan;  // the type field that introduced this tag
  std::uint8_t pcp = 0;                   // priority, used for PFC
  bool dei = false;
  std::uint16_t vid = 0;
  std::uint16_t type = ethertype::kIpv4;

  static Vlan decode(std::span<const std::uint8_t, kSize> b, std::uint16_t tpid) {
    const std::uint16_t tci = be::load16(b.data());
    return Vlan{tpid, static_cast<std::uint8_t>(tci >> 13), ((tci >> 12) & 1) != 0,
                static_cast<std::uint16_t>(tci & 0x0FFF), be::load16(b.data() + 2)};
  }
  void encode(std::span<std::uint8_t, kSize> b) const {
    be::store16(b.data(),
                static_cast<std::uint16_t>((pcp & 7) << 13 | (dei ? 1 << 12 : 0) | (vid & 0x0FFF)));
    be::store16(b.data() + 2, type);
  }
};

}  // namespace roceconf
