// BTH extension headers (IBA Vol 1 ch. 9.3): which of them follow a BTH is decided by the
// opcode table (opcode.h). All big-endian, no padding between fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "dissector/bytes.h"

namespace roceconf {

inline constexpr std::uint32_t kGsiQkey = 0x80010000;  // Q_Key of QP1 (GSI)

struct Rdeth {  // Reliable Datagram ETH
  static constexpr std::size_t kSize = 4;
  std::uint8_t resv = 0;
  std::uint32_t eecnxt = 0;
  static Rdeth decode(std::span<const std::uint8_t, kSize> b) { return {b[0], be::load24(&b[1])}; }
  void encode(std::span<std::uint8_t, kSize> b) const {
    b[0] = resv;
    be::store24(&b[1], eecnxt);
  }
};

struct Deth {  // Datagram ETH
  static constexpr std::size_t kSize = 8;
  std::uint32_t qkey = 0;
  std::uint8_t resv = 0;
  std::uint32_t srcqp = 0;
  static Deth decode(std::span<const std::uint8_t, kSize> b) {
    return {be::load32(&b[0]), b[4], be::load24(&b[5])};
  }
  void encode(std::span<std::uint8_t, kSize> b) const {
    be::store32(&b[0], qkey);
    b[4] = resv;
    be::store24(&b[5], srcqp);
  }
};

struct XrcEth {  // XRC ETH: the destination XRC SRQ
  static constexpr std::size_t kSize = 4;
  std::uint8_t resv = 0;
  std::uint32_t xrcsrq = 0;
  static XrcEth decode(std::span<const std::uint8_t, kSize> b) { return {b[0], be::load24(&b[1])}; }
  void encode(std::span<std::uint8_t, kSize> b) const {
    b[0] = resv;
    be::store24(&b[1], xrcsrq);
  }
};

struct Reth {  // RDMA ETH
  static constexpr std::size_t kSize = 16;
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint32_t dmalen = 0;  // filled on encode from the payload for ONLY packets when 0
  static Reth decode(std::span<const std::uint8_t, kSize> b) {
    return {be::load64(&b[0]), be::load32(&b[8]), be::load32(&b[12])};
  }
  void encode(std::span<std::uint8_t, kSize> b) const {
    be::store64(&b[0], va);
    be::store32(&b[8], rkey);
    be::store32(&b[12], dmalen);
  }
};

struct AtomicEth {
  static constexpr std::size_t kSize = 28;
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint64_t swap_add = 0;  // swap value (CMP_SWAP) or addend (FETCH_ADD)
  std::uint64_t compare = 0;
  static AtomicEth decode(std::span<const std::uint8_t, kSize> b) {
    return {be::load64(&b[0]), be::load32(&b[8]), be::load64(&b[12]), be::load64(&b[20])};
  }
  void encode(std::span<std::uint8_t, kSize> b) const {
    be::store64(&b[0], va);
    be::store32(&b[8], rkey);
    be::store64(&b[12], swap_add);
    be::store64(&b[20], compare);
  }
};

struct Aeth {  // ACK ETH
  static constexpr std::size_t kSize = 4;
  std::uint8_t syndrome = 0x1F;  // ACK, unlimited credits
  std::uint32_t msn = 0;
  static Aeth decode(std::span<const std::uint8_t, kSize> b) { return {b[0], be::load24(&b[1])}; }
  void encode(std::span<std::uint8_t, kSize> b) const {
    b[0] = syndrome;
    be::store24(&b[1], msn);
  }
};

struct AtomicAckEth {
  static constexpr std::size_t kSize = 8;
  std::uint64_t orig = 0;  // original remote data
  static AtomicAckEth decode(std::span<const std::uint8_t, kSize> b) { return {be::load64(&b[0])}; }
  void encode(std::span<std::uint8_t, kSize> b) const { be::store64(&b[0], orig); }
};

struct ImmDt {
  static constexpr std::size_t kSize = 4;
  std::uint32_t imm = 0;  // opaque, kept in network order as a number
  static ImmDt decode(std::span<const std::uint8_t, kSize> b) { return {be::load32(&b[0])}; }
  void encode(std::span<std::uint8_t, kSize> b) const { be::store32(&b[0], imm); }
};

struct Ieth {  // Invalidate ETH
  static constexpr std::size_t kSize = 4;
  std::uint32_t rkey = 0;
  static Ieth decode(std::span<const std::uint8_t, kSize> b) { return {be::load32(&b[0])}; }
  void encode(std::span<std::uint8_t, kSize> b) const { be::store32(&b[0], rkey); }
};

struct Feth {  // FLUSH ETH: reserved(26) | selectivity level(2) | placement type(4)
  static constexpr std::size_t kSize = 4;
  std::uint32_t resv = 0;
  std::uint8_t sel = 0;
  std::uint8_t plt = 1;  // global visibility
  static Feth decode(std::span<const std::uint8_t, kSize> b) {
    const std::uint32_t w = be::load32(&b[0]);
    return {w >> 6, static_cast<std::uint8_t>((w >> 4) & 3), static_cast<std::uint8_t>(w & 0xF)};
  }
  void encode(std::span<std::uint8_t, kSize> b) const {
    be::store32(&b[0], (resv << 6) | std::uint32_t(sel & 3) << 4 | (plt & 0xF));
  }
};

// Congestion Notification Packet body: 16 reserved bytes after the BTH (IBA Annex A17.9.3).
inline constexpr std::size_t kCnpBodySize = 16;

}  // namespace roceconf
