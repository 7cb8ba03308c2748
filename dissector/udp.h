// UDP header (RFC 768) carrying RoCEv2 on destination port 4791 (IBA Annex A17).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "dissector/bytes.h"

namespace roceconf {

struct Udp {
  static constexpr std::size_t kSize = 8;
  static constexpr std::uint16_t kRocePort = 4791;  // IANA, IBA Annex A17
  std::uint16_t sport = 0xC000;
  std::uint16_t dport = kRocePort;
  std::uint16_t length = 0;    // filled on encode
  std::uint16_t checksum = 0;  // RoCEv2 senders commonly send 0; masked out of the ICRC

  static Udp decode(std::span<const std::uint8_t, kSize> b) {
    return Udp{be::load16(&b[0]), be::load16(&b[2]), be::load16(&b[4]), be::load16(&b[6])};
  }
  void encode(std::span<std::uint8_t, kSize> b) const {
    be::store16(&b[0], sport);
    be::store16(&b[2], dport);
    be::store16(&b[4], length);
    be::store16(&b[6], checksum);
  }
};

}  // namespace roceconf
