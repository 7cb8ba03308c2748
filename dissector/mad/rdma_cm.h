// rdma_cm over IP: the service ID layout and the REQ private-data header of IBA Vol 1 Annex A11
// ("RDMA IP CM Service"), as Linux drivers/infiniband/core/cma.c writes them
// (cma_get_service_id, struct cma_hdr, cma_format_hdr).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "dissector/bytes.h"
#include "dissector/mad/cm.h"

namespace roceconf {

// Service ID = (port_space << 16) | port. TCP/UDP/IB fall under the A11 prefix
// 0x00000000_01xxxxxx (byte 5 = IP protocol number); IPoIB (0x0002) is Linux-only.
namespace rdma_cm_ps {
inline constexpr std::uint16_t kIpoib = 0x0002;
inline constexpr std::uint16_t kTcp = 0x0106;
inline constexpr std::uint16_t kUdp = 0x0111;
inline constexpr std::uint16_t kIb = 0x013F;
}  // namespace rdma_cm_ps

inline constexpr std::uint64_t kRdmaIpCmServiceIdPrefix = 0x0000000001000000;
inline constexpr std::uint64_t kRdmaIpCmServiceIdPrefixMask = 0xFFFFFFFFFF000000;
inline constexpr std::uint64_t kRdmaCmPortSpaceMask = 0xFFFFFFFFFFFF0000;

inline constexpr std::size_t kRdmaCmHeaderSize = 36;
inline constexpr std::size_t kRdmaCmConsumerDataSize = kReqPrivateDataSize - kRdmaCmHeaderSize;
static_assert(kRdmaCmConsumerDataSize == 56);

constexpr std::uint64_t rdma_cm_service_id(std::uint16_t port_space, std::uint16_t port) {
  return (std::uint64_t{port_space} << 16) | port;
}
constexpr std::uint16_t rdma_cm_port_space(std::uint64_t service_id) {
  return static_cast<std::uint16_t>(service_id >> 16);
}
constexpr std::uint16_t rdma_cm_port(std::uint64_t service_id) {
  return static_cast<std::uint16_t>(service_id);
}
// True for an A11 service ID and for Linux's IPoIB port space: a REQ to it carries the header.
bool is_rdma_cm_service_id(std::uint64_t service_id);
std::string_view rdma_cm_port_space_name(std::uint16_t port_space);  // "TCP", ...; "" unknown

// The 36-byte header at the start of an rdma_cm REQ's private data (CMA_VERSION 0x00).
// IPv4 addresses occupy the last 4 bytes with the first 12 zero (cma.c's union cma_ip_addr; no
// ::ffff: mapping here, unlike the REQ GIDs).
struct RdmaCmHeader {
  std::uint8_t major = 0;       // 4 bits
  std::uint8_t minor = 0;       // 4 bits
  std::uint8_t ip_version = 4;  // 4 bits: 4 or 6
  std::uint8_t reserved = 0;    // low 4 bits of byte 1
  std::uint16_t src_port = 0;
  std::array<std::uint8_t, 16> src_ip{};
  std::array<std::uint8_t, 16> dst_ip{};

  bool operator==(const RdmaCmHeader&) const = default;
};

// The header's encoding of an IPv4 address.
constexpr std::array<std::uint8_t, 16> rdma_cm_ipv4(std::uint32_t ipv4) {
  return {0,
          0,
          0,
          0,
          0,
          0,
          0,
          0,
          0,
          0,
          0,
          0,
          static_cast<std::uint8_t>(ipv4 >> 24),
          static_cast<std::uint8_t>(ipv4 >> 16),
          static_cast<std::uint8_t>(ipv4 >> 8),
          static_cast<std::uint8_t>(ipv4)};
}

// nullopt when `private_data` is shorter than the header.
std::optional<RdmaCmHeader> decode_rdma_cm_header(Bytes private_data);
void encode_rdma_cm_header(const RdmaCmHeader& header,
                           std::span<std::uint8_t, kRdmaCmHeaderSize> out);
// The consumer's bytes after the header (empty when the header does not fit).
Bytes rdma_cm_consumer_data(Bytes private_data);
// Builds a full REQ private-data area: header, then `consumer` truncated/zero-padded to 56.
void build_rdma_cm_private_data(const RdmaCmHeader& header, Bytes consumer,
                                std::span<std::uint8_t, kReqPrivateDataSize> out);

}  // namespace roceconf
