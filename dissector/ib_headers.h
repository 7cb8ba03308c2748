// The InfiniBand routing and base transport headers: LRH (native IB only), GRH (native IB and
// RoCEv1), BTH (every packet). IBA Vol 1 ch. 7.7 (LRH), 8.3 (GRH), 9.2 (BTH).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "dissector/bytes.h"

namespace roceconf {

using Gid = std::array<std::uint8_t, 16>;

// Local Route Header: VL(4) LVer(4) | SL(4) resv(2) LNH(2) | DLID(16) | resv(5) PktLen(11) | SLID.
struct Lrh {
  static constexpr std::size_t kSize = 8;
  enum Lnh : std::uint8_t { kRaw = 0, kIpNonIba = 1, kIbaLocal = 2, kIbaGlobal = 3 };
  std::uint8_t vl = 0;
  std::uint8_t lver = 0;
  std::uint8_t sl = 0;
  std::uint8_t resv2 = 0;
  std::uint8_t lnh = kIbaLocal;
  std::uint16_t dlid = 0;
  std::uint8_t resv5 = 0;
  std::uint16_t pkt_len = 0;  // 4-byte words from LRH through ICRC; filled on encode
  std::uint16_t slid = 0;

  static Lrh decode(std::span<const std::uint8_t, kSize> b) {
    Lrh h;
    h.vl = b[0] >> 4;
    h.lver = b[0] & 0x0F;
    h.sl = b[1] >> 4;
    h.resv2 = (b[1] >> 2) & 3;
    h.lnh = b[1] & 3;
    h.dlid = be::load16(&b[2]);
    h.resv5 = b[4] >> 3;
    h.pkt_len = be::load16(&b[4]) & 0x07FF;
    h.slid = be::load16(&b[6]);
    return h;
  }
  void encode(std::span<std::uint8_t, kSize> b) const {
    b[0] = static_cast<std::uint8_t>(vl << 4 | (lver & 0x0F));
    b[1] = static_cast<std::uint8_t>(sl << 4 | (resv2 & 3) << 2 | (lnh & 3));
    be::store16(&b[2], dlid);
    be::store16(&b[4], static_cast<std::uint16_t>((resv5 & 0x1F) << 11 | (pkt_len & 0x07FF)));
    be::store16(&b[6], slid);
  }
};

// Global Route Header: IPVer(4) TClass(8) FlowLabel(20) | PayLen(16) NxtHdr(8) HopLmt(8) | SGID
// | DGID. PayLen counts BTH through ICRC.
struct Grh {
  static constexpr std::size_t kSize = 40;
  static constexpr std::uint8_t kNextHeaderBth = 0x1B;
  std::uint8_t ip_version = 6;
  std::uint8_t traffic_class = 0;
  std::uint32_t flow_label = 0;
  std::uint16_t pay_len = 0;  // filled on encode
  std::uint8_t next_header = kNextHeaderBth;
  std::uint8_t hop_limit = 64;
  Gid sgid{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  Gid dgid{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

  static Grh decode(std::span<const std::uint8_t, kSize> b) {
    Grh h;
    const std::uint32_t w = be::load32(&b[0]);
    h.ip_version = static_cast<std::uint8_t>(w >> 28);
    h.traffic_class = static_cast<std::uint8_t>(w >> 20);
    h.flow_label = w & 0xFFFFF;
    h.pay_len = be::load16(&b[4]);
    h.next_header = b[6];
    h.hop_limit = b[7];
    std::copy_n(&b[8], 16, h.sgid.begin());
    std::copy_n(&b[24], 16, h.dgid.begin());
    return h;
  }
  void encode(std::span<std::uint8_t, kSize> b) const {
    be::store32(&b[0], std::uint32_t{ip_version} << 28 | std::uint32_t{traffic_class} << 20 |
                           (flow_label & 0xFFFFF));
    be::store16(&b[4], pay_len);
    b[6] = next_header;
    b[7] = hop_limit;
    std::copy(sgid.begin(), sgid.end(), &b[8]);
    std::copy(dgid.begin(), dgid.end(), &b[24]);
  }
};

// Base Transport Header. Field names follow Scapy's BTH layer.
struct Bth {
  static constexpr std::size_t kSize = 12;
  static constexpr std::uint16_t kDefaultPkey = 0xFFFF;
  std::uint8_t opcode = 0x04;  // RC SEND_ONLY
  bool solicited = false;
  bool migreq = false;
  std::uint8_t padcount = 0;  // filled on encode from the payload length
  std::uint8_t version = 0;   // TVer
  std::uint16_t pkey = kDefaultPkey;
  bool fecn = false;
  bool becn = false;
  std::uint8_t resv6 = 0;
  std::uint32_t dqpn = 0;
  bool ackreq = false;
  std::uint8_t resv7 = 0;
  std::uint32_t psn = 0;

  static Bth decode(std::span<const std::uint8_t, kSize> b) {
    Bth h;
    h.opcode = b[0];
    h.solicited = (b[1] & 0x80) != 0;
    h.migreq = (b[1] & 0x40) != 0;
    h.padcount = (b[1] >> 4) & 3;
    h.version = b[1] & 0x0F;
    h.pkey = be::load16(&b[2]);
    h.fecn = (b[4] & 0x80) != 0;
    h.becn = (b[4] & 0x40) != 0;
    h.resv6 = b[4] & 0x3F;
    h.dqpn = be::load24(&b[5]);
    h.ackreq = (b[8] & 0x80) != 0;
    h.resv7 = b[8] & 0x7F;
    h.psn = be::load24(&b[9]);
    return h;
  }
  void encode(std::span<std::uint8_t, kSize> b) const {
    b[0] = opcode;
    b[1] = static_cast<std::uint8_t>((solicited ? 0x80 : 0) | (migreq ? 0x40 : 0) |
                                     (padcount & 3) << 4 | (version & 0x0F));
    be::store16(&b[2], pkey);
    b[4] = static_cast<std::uint8_t>((fecn ? 0x80 : 0) | (becn ? 0x40 : 0) | (resv6 & 0x3F));
    be::store24(&b[5], dqpn);
    b[8] = static_cast<std::uint8_t>((ackreq ? 0x80 : 0) | (resv7 & 0x7F));
    be::store24(&b[9], psn);
  }
};

inline constexpr std::uint32_t kPsnMask = 0xFFFFFF;
inline constexpr std::uint32_t kQpnMask = 0xFFFFFF;

}  // namespace roceconf
