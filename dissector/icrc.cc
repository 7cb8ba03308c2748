#include "dissector/icrc.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "dissector/ip.h"

namespace roceconf {

namespace {

constexpr std::size_t kLrhSize = 8;
constexpr std::size_t kMaxMaskedPrefix = kLrhSize + 60 + 8 + 40 + 12;  // LRH+IPv4 opts+UDP/GRH+BTH

void mask_ip6_style(std::uint8_t* h) {  // IPv6 header or GRH
  h[0] |= 0x0F;                         // low nibble of traffic class
  h[1] = h[2] = h[3] = 0xFF;            // rest of traffic class, flow label
  h[7] = 0xFF;                          // hop limit
}

// ISA-L's gzip CRC-32 has zlib's crc32() semantics (reflected 0xEDB88320, pre- and
// post-inverted, chainable) and is several times faster on short buffers.
std::uint32_t crc(std::uint32_t c, const std::uint8_t* p, std::size_t n) {
  return crc32_gzip_refl(c, p, n);
}

// ISA-L's AVX-512 CRC returns with the upper vector state dirty. Without a vzeroupper every SSE
// instruction the decoder runs afterwards pays the AVX-SSE transition penalty: measured, the
// decode loop ran 2-3x slower than decode and CRC apart.
void clear_upper_vector_state() {
#if defined(__x86_64__)
  static const bool avx = __builtin_cpu_supports("avx");
  if (avx) asm volatile("vzeroupper");
#endif
}

}  // namespace

bool resize_roce_v2_transport(std::vector<std::uint8_t>& frame, std::size_t ip_at,
                              std::size_t bth_at, std::size_t n) {
  constexpr std::size_t kBth = 12, kUdp = 8, kIcrc = 4, kIpv6 = 40;
  if (ip_at >= frame.size() || bth_at < ip_at + kUdp + 20 || bth_at + kBth + kIcrc > frame.size())
    return false;
  const bool v6 = (frame[ip_at] >> 4) == 6;
  const std::size_t hl =
      v6 ? kIpv6 : std::size_t{static_cast<std::uint8_t>(frame[ip_at] & 0x0F)} * 4;
  if (hl < 20 || ip_at + hl + kUdp != bth_at) return false;
  frame.resize(frame.size() - kIcrc);  // the old ICRC goes; what is added is zeros
  frame.resize(bth_at + kBth + n + kIcrc, 0);
  const std::size_t ip_total = frame.size() - ip_at;
  be::store16(&frame[ip_at + (v6 ? 4 : 2)],
              static_cast<std::uint16_t>(v6 ? ip_total - kIpv6 : ip_total));
  be::store16(&frame[bth_at - kUdp + 4],
              static_cast<std::uint16_t>(frame.size() - (bth_at - kUdp)));
  if (!v6) refresh_ipv4_checksum(std::span(frame).subspan(ip_at, hl));
  const std::size_t icrc_at = frame.size() - kIcrc;
  store_icrc(&frame[icrc_at], compute_icrc(Bytes(frame).subspan(ip_at, icrc_at - ip_at),
                                           v6 ? IcrcFraming::kRoceV2Ipv6 : IcrcFraming::kRoceV2Ipv4,
                                           bth_at - ip_at));
  return true;
}

void refresh_roce_v2_ipv4_icrc(std::span<std::uint8_t> frame, std::size_t ip_at,
                               std::size_t bth_at) {
  if (frame.size() < 4 || ip_at > bth_at || bth_at > frame.size() - 4) return;
  const std::size_t icrc_at = frame.size() - 4;
  store_icrc(&frame[icrc_at], compute_icrc(Bytes(frame).subspan(ip_at, icrc_at - ip_at),
                                           IcrcFraming::kRoceV2Ipv4, bth_at - ip_at));
}

std::uint32_t compute_icrc(Bytes data, IcrcFraming framing, std::size_t bth_offset) {
  const std::size_t prefix = bth_offset + 12;  // everything that carries masked fields
  if (prefix > data.size() || prefix > kMaxMaskedPrefix - kLrhSize) return 0;

  std::array<std::uint8_t, kMaxMaskedPrefix> buf;
  std::size_t start = 0;  // where the copied headers begin in buf
  std::uint8_t* h = buf.data() + kLrhSize;
  std::memcpy(h, data.data(), prefix);

  switch (framing) {
    case IcrcFraming::kRoceV2Ipv4: {
      std::memset(buf.data(), 0xFF, kLrhSize);
      const std::size_t ihl = std::size_t{static_cast<std::uint8_t>(h[0] & 0x0F)} * 4;
      if (ihl < 20 || ihl + 8 + 12 > prefix) return 0;
      h[1] = 0xFF;                     // TOS
      h[8] = 0xFF;                     // TTL
      h[10] = h[11] = 0xFF;            // header checksum
      h[ihl + 6] = h[ihl + 7] = 0xFF;  // UDP checksum
      break;
    }
    case IcrcFraming::kRoceV2Ipv6:
      std::memset(buf.data(), 0xFF, kLrhSize);
      if (prefix < 40 + 8 + 12) return 0;
      mask_ip6_style(h);
      h[46] = h[47] = 0xFF;  // UDP checksum
      break;
    case IcrcFraming::kRoceV1:
      std::memset(buf.data(), 0xFF, kLrhSize);
      if (prefix < 40 + 12) return 0;
      mask_ip6_style(h);
      break;
    case IcrcFraming::kIbGlobal:
      if (prefix < kLrhSize + 40 + 12) return 0;
      std::memset(h, 0xFF, kLrhSize);
      mask_ip6_style(h + kLrhSize);
      start = kLrhSize;
      break;
    case IcrcFraming::kIbLocal:
      if (prefix < kLrhSize + 12) return 0;
      h[0] |= 0xF0;  // VL
      start = kLrhSize;
      break;
  }
  h[bth_offset + 4] = 0xFF;  // FECN, BECN, Resv6a

  std::uint32_t c = crc(0, buf.data() + start, kLrhSize - start + prefix);
  c = crc(c, data.data() + prefix, data.size() - prefix);
  clear_upper_vector_state();
  return c;
}

std::uint16_t compute_vcrc(Bytes data) {
  static constexpr auto kTable = [] {
    std::array<std::uint16_t, 256> t{};
    for (unsigned i = 0; i < 256; ++i) {
      std::uint16_t c = static_cast<std::uint16_t>(i);
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? static_cast<std::uint16_t>((c >> 1) ^ 0xD008) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint16_t c = 0xFFFF;
  for (std::uint8_t b : data) c = static_cast<std::uint16_t>((c >> 8) ^ kTable[(c ^ b) & 0xFF]);
  return static_cast<std::uint16_t>(c ^ 0xFFFF);
}

}  // namespace roceconf
