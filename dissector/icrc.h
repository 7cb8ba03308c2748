// Invariant CRC (IBA Vol 1 ch. 7.8.1, Annex A16/A17) and the native-IB Variant CRC (ch. 7.8.2).
//
// ICRC: CRC-32 (zlib's / ISA-L's gzip CRC) over the packet from the routing header to the end of
// the payload and pad, with fields that may change in flight forced to all-ones:
//   RoCEv2: 8 x 0xFF for the absent LRH; IPv4 TOS, TTL, checksum; IPv6 traffic class, flow
//           label, hop limit; UDP checksum; BTH byte 4 (FECN, BECN, reserved).
//   RoCEv1: 8 x 0xFF; GRH traffic class, flow label, hop limit; BTH byte 4.
//   Native IB: with a GRH as RoCEv1 (routers rewrite the LRH); without, the LRH with VL forced.
// The CRC is sent least significant byte first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dissector/bytes.h"

namespace roceconf {

enum class IcrcFraming : std::uint8_t {
  kRoceV2Ipv4,  // data starts at the IPv4 header
  kRoceV2Ipv6,  // data starts at the IPv6 header
  kRoceV1,      // data starts at the GRH
  kIbLocal,     // data starts at the LRH, no GRH
  kIbGlobal,    // data starts at the LRH, GRH follows
};

// `data` runs from the first covered header up to (excluding) the ICRC; `bth_offset` is where
// the BTH starts within it. Returns the CRC as a number (wire bytes are its little-endian form);
// 0 when `data` is too short to hold the headers it claims.
std::uint32_t compute_icrc(Bytes data, IcrcFraming framing, std::size_t bth_offset);

constexpr std::uint32_t load_icrc(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}
constexpr void store_icrc(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
  p[2] = static_cast<std::uint8_t>(v >> 16);
  p[3] = static_cast<std::uint8_t>(v >> 24);
}

// Recomputes, in place, the ICRC (the last 4 bytes) of a RoCEv2-over-IPv4 frame whose IPv4
// header starts at `ip_at` and BTH at `bth_at`: for frames edited after they were encoded.
void refresh_roce_v2_ipv4_icrc(std::span<std::uint8_t> frame, std::size_t ip_at,
                               std::size_t bth_at);

// Cuts (or extends with zeros) the bytes between the BTH and the ICRC of a RoCEv2 frame, IPv4 or
// IPv6 at `ip_at`, BTH at `bth_at`, to `n`, then sets the IP and UDP lengths, the IPv4 header
// checksum and the ICRC to agree with it: a frame whose only fault is what its length leaves
// out or adds (a truncated header, a MAD of the wrong size). False, frame untouched, when the
// offsets do not fit the frame.
bool resize_roce_v2_transport(std::vector<std::uint8_t>& frame, std::size_t ip_at,
                              std::size_t bth_at, std::size_t n);

// VCRC: CRC-16, polynomial 0x100B (reflected 0xD008), initial 0xFFFF, final XOR 0xFFFF, over
// LRH through ICRC; sent least significant byte first (checked against real DAG captures).
std::uint16_t compute_vcrc(Bytes lrh_through_icrc);

}  // namespace roceconf
