#include "dissector/mad/rdma_cm.h"

#include <algorithm>

namespace roceconf {

bool is_rdma_cm_service_id(std::uint64_t service_id) {
  return (service_id & kRdmaIpCmServiceIdPrefixMask) == kRdmaIpCmServiceIdPrefix ||
         (service_id & kRdmaCmPortSpaceMask) == rdma_cm_service_id(rdma_cm_ps::kIpoib, 0);
}

std::string_view rdma_cm_port_space_name(std::uint16_t port_space) {
  switch (port_space) {
    case rdma_cm_ps::kIpoib:
      return "IPoIB";
    case rdma_cm_ps::kTcp:
      return "TCP";
    case rdma_cm_ps::kUdp:
      return "UDP";
    case rdma_cm_ps::kIb:
      return "IB";
    default:
      return "";
  }
}

std::optional<RdmaCmHeader> decode_rdma_cm_header(Bytes private_data) {
  if (private_data.size() < kRdmaCmHeaderSize) return std::nullopt;
  const std::uint8_t* p = private_data.data();
  RdmaCmHeader h;
  h.major = p[0] >> 4;
  h.minor = p[0] & 0x0F;
  h.ip_version = p[1] >> 4;
  h.reserved = p[1] & 0x0F;
  h.src_port = be::load16(p + 2);
  std::copy_n(p + 4, 16, h.src_ip.begin());
  std::copy_n(p + 20, 16, h.dst_ip.begin());
  return h;
}

void encode_rdma_cm_header(const RdmaCmHeader& header,
                           std::span<std::uint8_t, kRdmaCmHeaderSize> out) {
  std::uint8_t* p = out.data();
  p[0] = static_cast<std::uint8_t>((header.major << 4) | (header.minor & 0x0F));
  p[1] = static_cast<std::uint8_t>((header.ip_version << 4) | (header.reserved & 0x0F));
  be::store16(p + 2, header.src_port);
  std::copy(header.src_ip.begin(), header.src_ip.end(), p + 4);
  std::copy(header.dst_ip.begin(), header.dst_ip.end(), p + 20);
}

Bytes rdma_cm_consumer_data(Bytes private_data) {
  if (private_data.size() < kRdmaCmHeaderSize) return {};
  return private_data.subspan(kRdmaCmHeaderSize);
}

void build_rdma_cm_private_data(const RdmaCmHeader& header, Bytes consumer,
                                std::span<std::uint8_t, kReqPrivateDataSize> out) {
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  encode_rdma_cm_header(header, out.first<kRdmaCmHeaderSize>());
  const std::size_t n = std::min(consumer.size(), kRdmaCmConsumerDataSize);
  std::copy_n(consumer.begin(), n, out.begin() + kRdmaCmHeaderSize);
}

}  // namespace roceconf
