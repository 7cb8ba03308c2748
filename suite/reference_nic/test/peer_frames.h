// Test helper: frames a peer host at 192.0.2.1 (MAC 02:00:00:00:00:aa) sends to a target — a
// RoCEv2 packet skeleton, a CM MAD to QP1, and the REQ rdma_cm sends for a connect to a TCP
// port (IBA Annex A11).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "dissector/mad/rdma_cm.h"
#include "dissector/opcode.h"
#include "dissector/packet.h"
#include "suite/reference_nic/port_tables.h"

namespace roceconf::target::test {

inline constexpr MacAddress kPeerMac{0x02, 0x00, 0x00, 0x00, 0x00, 0xAA};
inline constexpr Ipv4Address kPeerIp{192, 0, 2, 1};

// Ethernet / IPv4 / UDP / BTH from the peer to `mac`/`ip`; the caller adds the rest.
inline Packet peer_packet(const MacAddress& mac, const Ipv4Address& ip, std::uint8_t op,
                          std::uint32_t dqpn, std::uint32_t psn) {
  Packet p;
  Ethernet e;
  e.src = kPeerMac;
  e.dst = mac;
  p.eth = e;
  Ipv4 v4;
  v4.src = kPeerIp;
  v4.dst = ip;
  p.ipv4 = v4;
  p.udp = Udp{};
  Bth b;
  b.opcode = op;
  b.dqpn = dqpn;
  b.psn = psn;
  p.bth = b;
  return p;
}

// A CM message to the target's QP1 (UD SEND ONLY with the GSI Q_Key).
inline Packet peer_mad(const MacAddress& mac, const Ipv4Address& ip, const CmMessage& message,
                       std::uint64_t tid) {
  Packet p = peer_packet(mac, ip, opcode::kUdSendOnly, 1, 0);
  p.deth = Deth{kGsiQkey, 0, 1};
  Mad m;
  m.header.tid = tid;
  m.cm = message;
  p.mad = m;
  return p;
}

// The REQ of rdma_connect() to `ip`:`port`. `private_data` receives the rdma_cm header and must
// outlive the REQ (the REQ views it).
inline CmReq rdma_cm_req(const Ipv4Address& ip, std::uint16_t port, std::uint32_t comm_id,
                         std::uint32_t qpn, std::uint32_t psn,
                         std::array<std::uint8_t, kReqPrivateDataSize>& private_data) {
  const auto as_u32 = [](const Ipv4Address& a) {
    return std::uint32_t{a[0]} << 24 | std::uint32_t{a[1]} << 16 | std::uint32_t{a[2]} << 8 | a[3];
  };
  RdmaCmHeader h;
  h.src_port = 40000;
  h.src_ip = rdma_cm_ipv4(as_u32(kPeerIp));
  h.dst_ip = rdma_cm_ipv4(as_u32(ip));
  build_rdma_cm_private_data(h, {}, private_data);
  CmReq r;
  r.local_comm_id = comm_id;
  r.service_id = rdma_cm_service_id(rdma_cm_ps::kTcp, port);
  r.local_ca_guid = 0x0200AAFFFE000001;
  r.local_qpn = qpn;
  r.starting_psn = psn;
  r.responder_resources = 4;
  r.initiator_depth = 4;
  r.path_mtu = 3;
  r.primary.local_gid = gid_from_ipv4(kPeerIp);
  r.primary.remote_gid = gid_from_ipv4(ip);
  r.private_data = private_data;
  return r;
}

}  // namespace roceconf::target::test
