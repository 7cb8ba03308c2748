// Independent cross-check against Wireshark's InfiniBand dissector (tshark 4.0): every valid
// RC/UC/RD/UD/CNP/XRC opcode and every CM message is built by encode() with a distinctive value in
// every header field, written to a pcap, dissected by our decode() and by `tshark -T json`, and
// every field both decoders report is compared. Two decoders written from the spec by different
// people rarely share a bug, so agreement here is evidence neither misplaces a field.
//
// What tshark 4.0 does not decode, or decodes wrongly, is not compared; each case is named where
// it is excluded (search for "tshark 4.0").
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dissector/mad/cm.h"
#include "dissector/mad/rdma_cm.h"
#include "dissector/packet.h"

namespace roceconf {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using ByteVec = std::vector<std::uint8_t>;

// ---------------------------------------------------------------------------------------------
// Frames
// ---------------------------------------------------------------------------------------------

enum class Net { kV2Ipv4, kV2Ipv6, kV1, kV2Ipv4Vlan };

std::string_view net_name(Net net) {
  switch (net) {
    case Net::kV2Ipv4:
      return "RoCEv2/IPv4";
    case Net::kV2Ipv6:
      return "RoCEv2/IPv6";
    case Net::kV1:
      return "RoCEv1";
    case Net::kV2Ipv4Vlan:
      return "RoCEv2/IPv4/VLAN";
  }
  return "";
}

// Which of our layers tshark 4.0 is expected to decode in a frame.
struct Expect {
  bool ext_headers = true;  // the extension headers after the BTH
  bool mad = false;
  std::uint16_t cm_attr = 0;  // CM message whose body tshark decodes; 0: none
};

struct Frame {
  std::string name;
  ByteVec bytes;
  Expect expect;
  bool is_cm = false;
};

// Distinctive per-frame values: `base` names the field, `i` (the frame number) keeps frames apart.
template <typename T>
T v(std::uint64_t base, std::uint64_t i) {
  return static_cast<T>(base + i);
}

Gid gid(std::uint8_t seed) {
  Gid g;
  for (std::size_t k = 0; k < g.size(); ++k) g[k] = static_cast<std::uint8_t>(seed + 0x11 * k);
  return g;
}

ByteVec pattern(std::size_t size, std::uint8_t seed) {
  ByteVec b(size);
  for (std::size_t k = 0; k < size; ++k) b[k] = static_cast<std::uint8_t>(seed + 3 * k);
  return b;
}

// 2001:db8::<tag><i>
Ipv6Address doc_ipv6(std::uint8_t tag, std::uint32_t i) {
  Ipv6Address a{0x20, 0x01, 0x0d, 0xb8};
  a[14] = tag;
  a[15] = static_cast<std::uint8_t>(i);
  return a;
}

// Link and network headers with non-default values everywhere tshark looks.
Packet network(Net net, std::uint32_t i) {
  Packet p;
  p.eth = Ethernet{};
  p.eth->dst = {0x02, 0x11, 0x22, 0x33, 0x44, static_cast<std::uint8_t>(i)};
  p.eth->src = {0x02, 0x55, 0x66, 0x77, 0x88, static_cast<std::uint8_t>(i)};
  if (net == Net::kV2Ipv4Vlan) {
    p.vlans.push_back(Vlan{ethertype::kVlan, static_cast<std::uint8_t>(1 + i % 7), i % 2 == 0,
                           v<std::uint16_t>(0x123, i), 0});
  }
  if (net == Net::kV1) {
    Grh g;
    g.traffic_class = v<std::uint8_t>(0x41, i);
    g.flow_label = v<std::uint32_t>(0xA5000, i);
    g.hop_limit = v<std::uint8_t>(0x21, i);
    g.sgid = gid(static_cast<std::uint8_t>(0x10 + i));
    g.dgid = gid(static_cast<std::uint8_t>(0x80 + i));
    p.grh = g;
    return p;
  }
  if (net == Net::kV2Ipv6) {
    Ipv6 ip;
    ip.traffic_class = v<std::uint8_t>(0x61, i);
    ip.flow_label = v<std::uint32_t>(0x5A000, i);
    ip.hop_limit = v<std::uint8_t>(0x31, i);
    ip.src = doc_ipv6(0x1a, i);
    ip.dst = doc_ipv6(0x2b, i);
    p.ipv6 = ip;
  } else {
    Ipv4 ip;
    ip.dscp = static_cast<std::uint8_t>(1 + i % 63);
    ip.ecn = static_cast<std::uint8_t>(1 + i % 3);
    ip.id = v<std::uint16_t>(0x4D00, i);
    ip.df = i % 2 == 0;  // MF and the fragment offset stay 0: tshark would wait for reassembly
    ip.ttl = static_cast<std::uint8_t>(0x20 + i % 200);
    ip.src = {10, 1, 2, static_cast<std::uint8_t>(i)};
    ip.dst = {10, 3, 4, static_cast<std::uint8_t>(i)};
    p.ipv4 = ip;
  }
  Udp udp;
  udp.sport = v<std::uint16_t>(0xC100, i);
  udp.checksum = i % 2 ? v<std::uint16_t>(0x1234, i) : 0;  // not verified by tshark by default
  p.udp = udp;
  return p;
}

Bth bth(std::uint8_t opcode, std::uint32_t i) {
  Bth b;
  b.opcode = opcode;
  b.solicited = i % 2 == 0;
  b.migreq = i % 3 != 0;
  b.version = static_cast<std::uint8_t>(1 + i % 15);
  b.pkey = static_cast<std::uint16_t>(0x8A00 + i);
  b.fecn = i % 4 < 2;
  b.becn = i % 4 == 1 || i % 4 == 2;
  b.resv6 = static_cast<std::uint8_t>((0x15 + i) & 0x3F);
  b.dqpn = (0xD00000 + i * 0x101) & kQpnMask;
  b.ackreq = i % 2 == 1;
  b.resv7 = static_cast<std::uint8_t>((0x2A + i) & 0x7F);
  b.psn = (0xC00000 + i * 0x10101) & kPsnMask;
  return b;
}

// Every extension header is set; encode() writes only those the opcode calls for.
void extension_headers(Packet& p, std::uint32_t i) {
  static constexpr std::array<std::uint8_t, 8> kSyndromes = {0x1F, 0x05, 0x3A, 0x60,
                                                             0x63, 0x21, 0x7F, 0x0C};
  p.rdeth = Rdeth{v<std::uint8_t>(0x71, i), v<std::uint32_t>(0xEEC000, i)};
  p.deth = Deth{v<std::uint32_t>(0x0C0D0000, i), v<std::uint8_t>(0x41, i),
                v<std::uint32_t>(0x5C0000, i)};
  p.xrceth = XrcEth{v<std::uint8_t>(0x72, i), v<std::uint32_t>(0x5E0000, i)};
  p.feth = Feth{0, static_cast<std::uint8_t>(1 + i % 3), 2};
  p.reth = Reth{v<std::uint64_t>(0x1122334455660000, i), v<std::uint32_t>(0x7E000000, i),
                v<std::uint32_t>(0x00100000, i)};
  p.atomiceth =
      AtomicEth{v<std::uint64_t>(0xA1A2A3A4A5A60000, i), v<std::uint32_t>(0x3C000000, i),
                v<std::uint64_t>(0x5353535353530000, i), v<std::uint64_t>(0xC0C0C0C0C0C00000, i)};
  p.aeth = Aeth{kSyndromes[i % kSyndromes.size()], v<std::uint32_t>(0x4D0000, i)};
  p.atomicacketh = AtomicAckEth{v<std::uint64_t>(0x0A0B0C0D0E0F0000, i)};
  p.immdt = ImmDt{v<std::uint32_t>(0x1DD10000, i)};
  p.ieth = Ieth{v<std::uint32_t>(0x1E7E0000, i)};
}

// Opcodes tshark 4.0 dissects beyond the BTH. It has no XRC, FLUSH, ATOMIC_WRITE or CNP (0x81)
// header sequences (it shows the rest as vendor bytes), and it takes the whole RD range 0x40-0x5F
// for Mellanox DC: a 20-byte BTH, so every RD header it shows sits 8 bytes late.
bool tshark_decodes_headers(std::uint8_t opcode) {
  const OpcodeInfo& op = opcode_info(opcode);
  if (op.service == Service::kXrc || op.service == Service::kCnp || op.service == Service::kRd)
    return false;
  return op.kind != OpKind::kFlush && op.kind != OpKind::kAtomicWrite;
}

bool carries_payload(const OpcodeInfo& op) {
  return op.payload != PayloadRule::kNoPayload && op.payload != PayloadRule::kUnknown;
}

Frame opcode_frame(std::uint8_t opcode, Net net, std::uint32_t i) {
  static const ByteVec kPayload = pattern(64, 0xA5);
  Packet p = network(net, i);
  p.bth = bth(opcode, i);
  extension_headers(p, i);
  const OpcodeInfo& op = opcode_info(opcode);
  // 13..16 bytes: every pad count occurs.
  if (carries_payload(op))
    p.payload = Bytes(kPayload).first(op.kind == OpKind::kAtomicWrite ? 8 : 13 + i % 4);
  return Frame{fmt::format("{} (0x{:02x}) over {}", op.name, opcode, net_name(net)), encode(p),
               Expect{.ext_headers = tshark_decodes_headers(opcode)}};
}

// --- CM messages: every field gets its own number so that a swapped pair shows up ---

CmPath path(std::uint32_t s, std::uint8_t seed) {
  CmPath c;
  c.local_lid = v<std::uint16_t>(0x1A00 + seed, s);
  c.remote_lid = v<std::uint16_t>(0x2B00 + seed, s);
  c.local_gid = gid(static_cast<std::uint8_t>(seed + s));
  c.remote_gid = gid(static_cast<std::uint8_t>(seed + 0x40 + s));
  c.flow_label = v<std::uint32_t>(0x20438 + seed, s);
  c.traffic_class = v<std::uint8_t>(0x6C + seed, s);
  c.hop_limit = v<std::uint8_t>(0x3E + seed, s);
  c.packet_rate = static_cast<std::uint8_t>((0x13 + seed + s) & 0x3F);
  c.sl = static_cast<std::uint8_t>((0xB + seed + s) & 0xF);
  c.subnet_local = (seed + s) % 2 == 0;
  c.resv_sl = static_cast<std::uint8_t>((5 + seed + s) & 7);
  c.local_ack_timeout = static_cast<std::uint8_t>((0x15 + seed + s) & 0x1F);
  c.resv_ack = static_cast<std::uint8_t>((3 + seed + s) & 3);
  return c;
}

// Storage for the Bytes members of the messages (views must outlive encode()).
struct CmStore {
  std::vector<ByteVec> blobs;
  Bytes blob(std::size_t size, std::uint8_t seed) {
    return blobs.emplace_back(pattern(size, seed));
  }
};

CmReq req(std::uint32_t s, CmStore& st, bool rdma_cm, bool ipv6) {
  CmReq m;
  m.local_comm_id = v<std::uint32_t>(0x1C0A1000, s);
  m.resv4 = 0x04;
  m.vendor_id = v<std::uint32_t>(0x0E0D0C, s);
  m.service_id = rdma_cm ? rdma_cm_service_id(rdma_cm_ps::kTcp, v<std::uint16_t>(18515, s))
                         : v<std::uint64_t>(0x0ABC0DEF12340000, s);
  m.local_ca_guid = v<std::uint64_t>(0x0002C90300A1B200, s);
  m.resv24 = 0x24252627;
  m.local_qkey = v<std::uint32_t>(0x0C0C0000, s);
  m.local_qpn = v<std::uint32_t>(0x00A100, s);
  m.responder_resources = v<std::uint8_t>(3, s);
  m.local_eecn = v<std::uint32_t>(0x00EEC1, s);
  m.initiator_depth = v<std::uint8_t>(5, s);
  m.remote_eecn = v<std::uint32_t>(0x00EEC2, s);
  m.remote_cm_response_timeout = static_cast<std::uint8_t>((17 + s) & 0x1F);
  // XRC on one REQ, UC on the other: both transport fields are exercised.
  m.transport_type = rdma_cm ? cm_transport::kExtended : cm_transport::kUc;
  m.extended_transport_type = rdma_cm ? cm_transport::kExtendedXrc : 0;
  m.end_to_end_flow_control = true;
  m.starting_psn = v<std::uint32_t>(0x5A5A00, s);
  m.local_cm_response_timeout = static_cast<std::uint8_t>((19 + s) & 0x1F);
  m.retry_count = 6;
  m.pkey = v<std::uint16_t>(0x8123, s);
  m.path_mtu = 5;
  m.rdc_exists = true;
  m.rnr_retry_count = 4;
  m.max_cm_retries = 9;
  m.srq = true;
  m.primary = path(s, 0);
  m.alternate = path(s, 7);
  m.sap_supported = true;
  if (rdma_cm) {
    RdmaCmHeader h;
    h.major = 2;
    h.minor = 5;
    h.ip_version = ipv6 ? 6 : 4;
    h.reserved = 0x3;
    h.src_port = v<std::uint16_t>(0xC0DE, s);
    if (ipv6) {
      h.src_ip = gid(static_cast<std::uint8_t>(0x90 + s));
      h.dst_ip = gid(static_cast<std::uint8_t>(0xB0 + s));
    } else {
      h.src_ip = rdma_cm_ipv4(v<std::uint32_t>(0x0A0B0C00, s));
      h.dst_ip = rdma_cm_ipv4(v<std::uint32_t>(0xC0A80100, s));
    }
    ByteVec& pd = st.blobs.emplace_back(kReqPrivateDataSize);
    const ByteVec consumer = pattern(kRdmaCmConsumerDataSize, 0x77);
    build_rdma_cm_private_data(h, consumer, std::span<std::uint8_t, kReqPrivateDataSize>(pd));
    m.private_data = pd;
  } else {
    m.private_data = st.blob(kReqPrivateDataSize, 0x31);
  }
  return m;
}

std::vector<std::pair<CmMessage, std::string>> cm_messages(std::uint32_t s, CmStore& st,
                                                           bool ipv6) {
  std::vector<std::pair<CmMessage, std::string>> out;
  out.emplace_back(req(s, st, true, ipv6), "rdma_cm service ID");
  out.emplace_back(req(s + 1, st, false, ipv6), "plain service ID");

  CmMra mra;
  mra.local_comm_id = v<std::uint32_t>(0x3A000001, s);
  mra.remote_comm_id = v<std::uint32_t>(0x3B000002, s);
  mra.message_mraed = cm_msg_kind::kRep;
  mra.resv8 = 0x2A;
  mra.service_timeout = 13;
  mra.resv9 = 5;
  mra.private_data = st.blob(kMraPrivateDataSize, 0x12);
  out.emplace_back(mra, "");

  CmRej rej;
  rej.local_comm_id = v<std::uint32_t>(0x4A000001, s);
  rej.remote_comm_id = v<std::uint32_t>(0x4B000002, s);
  rej.message_rejected = cm_msg_kind::kOther;
  rej.resv8 = 0x15;
  rej.reject_info_length = 16;
  rej.resv9 = 1;
  rej.reason = 24;
  rej.ari = st.blob(kRejAriSize, 0x23);
  rej.private_data = st.blob(kRejPrivateDataSize, 0x34);
  out.emplace_back(rej, "");

  CmRep rep;
  rep.local_comm_id = v<std::uint32_t>(0x5A000001, s);
  rep.remote_comm_id = v<std::uint32_t>(0x5B000002, s);
  rep.local_qkey = v<std::uint32_t>(0x5C0C0000, s);
  rep.local_qpn = v<std::uint32_t>(0x00B100, s);
  rep.vendor_id = v<std::uint32_t>(0xA1B2C3, s);
  rep.local_eecn = v<std::uint32_t>(0x00EEC3, s);
  rep.starting_psn = v<std::uint32_t>(0x6B6B00, s);
  rep.responder_resources = 7;
  rep.initiator_depth = 9;
  rep.target_ack_delay = 11;
  rep.failover_accepted = 2;
  rep.end_to_end_flow_control = true;
  rep.rnr_retry_count = 5;
  rep.srq = true;
  rep.resv27 = 0xA;
  rep.local_ca_guid = v<std::uint64_t>(0x0002C90300B2C300, s);
  rep.private_data = st.blob(kRepPrivateDataSize, 0x45);
  out.emplace_back(rep, "");

  CmRtu rtu;
  rtu.local_comm_id = v<std::uint32_t>(0x6A000001, s);
  rtu.remote_comm_id = v<std::uint32_t>(0x6B000002, s);
  rtu.private_data = st.blob(kRtuPrivateDataSize, 0x56);
  out.emplace_back(rtu, "");

  CmDreq dreq;
  dreq.local_comm_id = v<std::uint32_t>(0x7A000001, s);
  dreq.remote_comm_id = v<std::uint32_t>(0x7B000002, s);
  dreq.remote_qpn = v<std::uint32_t>(0x00BEEF, s);
  dreq.resv11 = 0x11;
  dreq.private_data = st.blob(kDreqPrivateDataSize, 0x67);
  out.emplace_back(dreq, "");

  CmDrep drep;
  drep.local_comm_id = v<std::uint32_t>(0x8A000001, s);
  drep.remote_comm_id = v<std::uint32_t>(0x8B000002, s);
  drep.private_data = st.blob(kDrepPrivateDataSize, 0x78);
  out.emplace_back(drep, "");

  CmSidrReq sreq;
  sreq.request_id = v<std::uint32_t>(0x9A000001, s);
  sreq.pkey = v<std::uint16_t>(0x8456, s);
  sreq.resv6 = 0x0606;
  sreq.service_id = v<std::uint64_t>(0x0000000001110000, s);
  sreq.private_data = st.blob(kSidrReqPrivateDataSize, 0x89);
  out.emplace_back(sreq, "");

  CmSidrRep srep;
  srep.request_id = v<std::uint32_t>(0x9B000002, s);
  srep.sidr_status = sidr_status::kRedirect;
  srep.additional_info_length = 20;
  srep.vendor_id = v<std::uint32_t>(0xD4E5F6, s);
  srep.qpn = v<std::uint32_t>(0x00C100, s);
  srep.service_id = v<std::uint64_t>(0x0000000001110100, s);
  srep.qkey = v<std::uint32_t>(0x9C0C0000, s);
  srep.additional_info = st.blob(kSidrRepInfoSize, 0x9A);
  srep.private_data = st.blob(kSidrRepPrivateDataSize, 0xAB);
  out.emplace_back(srep, "");

  CmLap lap;
  lap.local_comm_id = v<std::uint32_t>(0xAA000001, s);
  lap.remote_comm_id = v<std::uint32_t>(0xAB000002, s);
  lap.resv8 = 0x08080808;
  lap.remote_qpn = v<std::uint32_t>(0x00D100, s);
  lap.remote_cm_response_timeout = 21;
  lap.resv15 = 3;
  lap.resv16 = 0x16161616;
  lap.alternate = path(s, 0x21);
  lap.private_data = st.blob(kLapPrivateDataSize, 0xBC);
  out.emplace_back(lap, "");

  CmApr apr;
  apr.local_comm_id = v<std::uint32_t>(0xBA000001, s);
  apr.remote_comm_id = v<std::uint32_t>(0xBB000002, s);
  apr.additional_info_length = 24;
  apr.ap_status = 5;
  apr.resv10 = 0x1010;
  apr.additional_info = st.blob(kAprInfoSize, 0xCD);
  apr.private_data = st.blob(kAprPrivateDataSize, 0xDE);
  out.emplace_back(apr, "");

  ClassPortInfo cpi;
  cpi.capability_mask = 0x0C0C;
  cpi.capability_mask2 = 0x0123456;
  cpi.resp_time_value = 17;
  cpi.redirect_gid = gid(0x5D);
  cpi.redirect_tc = 0x7C;
  cpi.redirect_sl = 9;
  cpi.redirect_flow_label = 0x6F1A5;
  cpi.redirect_lid = 0x3C3C;
  cpi.redirect_pkey = 0x8765;
  cpi.redirect_qp = 0x00E100;
  cpi.redirect_qkey = 0x80010000;
  cpi.trap_gid = gid(0x6E);
  cpi.trap_tc = 0x8D;
  cpi.trap_sl = 6;
  cpi.trap_flow_label = 0x7A2B6;
  cpi.trap_lid = 0x4D4D;
  cpi.trap_pkey = 0x8ABC;
  cpi.trap_hop_limit = 0x3F;
  cpi.trap_qp = 0x00F100;
  cpi.trap_qkey = 0x0F0F0F0F;
  out.emplace_back(cpi, "");
  return out;
}

// The CM messages whose body tshark 4.0 decodes; for MRA, SIDR_REQ/REP, LAP, APR and (under the
// CM class) ClassPortInfo it shows the data area undecoded, so only the MAD header is compared.
bool tshark_decodes_cm(std::uint16_t attr) {
  return attr == cm_attr::kReq || attr == cm_attr::kRep || attr == cm_attr::kRtu ||
         attr == cm_attr::kRej || attr == cm_attr::kDreq || attr == cm_attr::kDrep;
}

Frame cm_frame(const CmMessage& msg, std::string_view note, Net net, std::uint32_t i) {
  Packet p = network(net, i);
  Bth b = bth(opcode::kUdSendOnly, i);
  b.dqpn = 1;  // GSI
  p.bth = b;
  p.deth = Deth{kGsiQkey, 0, 1};
  Mad mad;
  const std::uint16_t attr = cm_attr_id(msg);
  mad.header.method = attr == cm_attr::kClassPortInfo ? mad_method::kGetResp : mad_method::kSend;
  mad.header.status = v<std::uint16_t>(0x0100, i);
  mad.header.class_specific = v<std::uint16_t>(0x0C50, i);
  mad.header.tid = v<std::uint64_t>(0x7D1D000000000000, i * 0x100 + attr);
  mad.header.resv = v<std::uint16_t>(0x0E00, i);
  mad.header.attr_mod = v<std::uint32_t>(0xA77D0000, i);
  mad.cm = msg;
  p.mad = mad;
  std::string name = fmt::format("CM {}{}{} over {}", cm_message_name(msg),
                                 note.empty() ? "" : ", ", note, net_name(net));
  return Frame{std::move(name), encode(p),
               Expect{.ext_headers = true,
                      .mad = true,
                      .cm_attr = tshark_decodes_cm(attr) ? attr : std::uint16_t{0}},
               true};
}

std::vector<Frame> build_frames() {
  std::vector<Frame> frames;
  std::uint32_t i = 0;
  // Every valid opcode of the six services over RoCEv2/IPv4.
  for (int op = 0; op < 256; ++op) {
    const OpcodeInfo& info = opcode_info(static_cast<std::uint8_t>(op));
    if (!info.valid || info.service == Service::kManufacturer) continue;
    frames.push_back(opcode_frame(static_cast<std::uint8_t>(op), Net::kV2Ipv4, i++));
  }
  // RC and UD again over IPv6, RoCEv1 (GRH) and a VLAN tag.
  for (Net net : {Net::kV2Ipv6, Net::kV1, Net::kV2Ipv4Vlan}) {
    for (int op = 0; op < 256; ++op) {
      const OpcodeInfo& info = opcode_info(static_cast<std::uint8_t>(op));
      if (!info.valid || (info.service != Service::kRc && info.service != Service::kUd)) continue;
      frames.push_back(opcode_frame(static_cast<std::uint8_t>(op), net, i++));
    }
  }
  // Every CM message; IPv6 and RoCEv1 make tshark show whole GIDs (over IPv4 it shows 4 bytes).
  CmStore store;  // encode() copies the bytes, so the views need only outlive the loop
  for (Net net : {Net::kV2Ipv4, Net::kV2Ipv6, Net::kV1}) {
    for (const auto& [msg, note] : cm_messages(i, store, net == Net::kV2Ipv6))
      frames.push_back(cm_frame(msg, note, net, i++));
  }
  return frames;
}

// ---------------------------------------------------------------------------------------------
// Our side: decode() + visit_fields() into "layer.name" -> value, plus a few raw values the field
// vocabulary does not carry (reserved bits) but tshark shows.
// ---------------------------------------------------------------------------------------------

using Value = std::variant<std::uint64_t, ByteVec>;

class Collector : public FieldSink {
 public:
  void field(std::string_view layer, std::string_view name, const FieldValue& value) override {
    const std::string key = fmt::format("{}.{}", layer, name);
    if (const auto* u = std::get_if<std::uint64_t>(&value)) {
      fields[key] = *u;
    } else if (const auto* b = std::get_if<bool>(&value)) {
      fields[key] = std::uint64_t{*b};
    } else if (const auto* a = std::get_if<Address>(&value)) {
      fields[key] = ByteVec(a->bytes.begin(), a->bytes.end());
    } else if (const auto* r = std::get_if<Bytes>(&value)) {
      fields[key] = ByteVec(r->begin(), r->end());
    }  // names (string_view) are ours alone
  }
  std::map<std::string, Value> fields;
};

ByteVec slice(const ByteVec& b, std::size_t from, std::size_t n) {
  return ByteVec(b.begin() + static_cast<std::ptrdiff_t>(from),
                 b.begin() + static_cast<std::ptrdiff_t>(from + n));
}

std::map<std::string, Value> our_fields(const Packet& p) {
  Collector c;
  visit_fields(p, c);
  auto& f = c.fields;
  if (p.ipv4) {
    f["ipv4.hdr_bytes"] = std::uint64_t{p.ipv4->ihl} * 4u;  // tshark shows bytes, not words
    f["ipv4.reserved_flag"] = std::uint64_t{p.ipv4->reserved_flag};
  }
  if (p.bth) {
    // tshark 4.0 shows BTH byte 4 (FECN, BECN, 6 reserved bits) as one reserved byte.
    f["bth.byte4"] =
        std::uint64_t((p.bth->fecn ? 0x80u : 0u) | (p.bth->becn ? 0x40u : 0u) | p.bth->resv6);
  }
  if (p.deth) f["deth.resv"] = std::uint64_t{p.deth->resv};
  // Our ICRC is the little-endian read of the wire bytes; tshark reads them big-endian.
  if (p.icrc) f["icrc.wire_be"] = std::uint64_t{__builtin_bswap32(p.icrc->value)};
  if (!p.mad) return f;
  f["mad.resv"] = std::uint64_t{p.mad->header.resv};
  if (!p.mad->cm) return f;
  const bool v4 = p.ipv4.has_value();
  if (const auto* m = std::get_if<CmReq>(&*p.mad->cm)) {
    // Over IPv4 tshark shows only the last 4 bytes of the primary GIDs, as an IPv4 address.
    for (const char* g : {"cm.primary_local_gid", "cm.primary_remote_gid"}) {
      const ByteVec& full = std::get<ByteVec>(f.at(g));
      f[fmt::format("{}.{}", g, v4 ? "ipv4" : "full")] = v4 ? slice(full, 12, 4) : full;
    }
    f["cm.req.bytes4_7"] = (std::uint64_t{m->resv4} << 24) | m->vendor_id;
    f["cm.req.resv24"] = std::uint64_t{m->resv24};
    f["cm.primary_resv_sl"] = std::uint64_t{m->primary.resv_sl};
    f["cm.primary_resv_ack"] = std::uint64_t{m->primary.resv_ack};
    f["cm.alternate_resv_sl"] = std::uint64_t{m->alternate.resv_sl};
    const auto h = decode_rdma_cm_header(m->private_data);
    if (is_rdma_cm_service_id(m->service_id) && h) {
      f["cm.rdma_cm.protocol"] = std::uint64_t{rdma_cm_port_space(m->service_id) & 0xFFu};
      f["cm.rdma_cm.major"] = std::uint64_t{h->major};
      f["cm.rdma_cm.minor"] = std::uint64_t{h->minor};
      f["cm.rdma_cm.reserved"] = std::uint64_t{h->reserved};
      const char* suffix = h->ip_version == 4 ? "ip4" : "ip6";
      f[fmt::format("cm.rdma_cm.src_{}", suffix)] = std::get<ByteVec>(f.at("cm.rdma_cm.src_ip"));
      f[fmt::format("cm.rdma_cm.dst_{}", suffix)] = std::get<ByteVec>(f.at("cm.rdma_cm.dst_ip"));
      const Bytes consumer = rdma_cm_consumer_data(m->private_data);
      f["cm.rdma_cm.consumer_data"] = ByteVec(consumer.begin(), consumer.end());
    } else {
      f["cm.req.private_data"] = std::get<ByteVec>(f.at("cm.private_data"));
    }
  } else if (const auto* r = std::get_if<CmRep>(&*p.mad->cm)) {
    // tshark shows bytes 15, 19 and 23 as reserved; Linux puts the vendor ID (ECE) there.
    f["cm.rep.vendor_hi"] = std::uint64_t{r->vendor_id >> 16};
    f["cm.rep.vendor_mid"] = std::uint64_t{(r->vendor_id >> 8) & 0xFFu};
    f["cm.rep.vendor_lo"] = std::uint64_t{r->vendor_id & 0xFFu};
    f["cm.rep.resv27"] = std::uint64_t{r->resv27};
  } else if (const auto* j = std::get_if<CmRej>(&*p.mad->cm)) {
    f["cm.rej.resv9"] = std::uint64_t{j->resv9};
  } else if (const auto* d = std::get_if<CmDreq>(&*p.mad->cm)) {
    f["cm.dreq.resv11"] = std::uint64_t{d->resv11};
  }
  return f;
}

// ---------------------------------------------------------------------------------------------
// tshark's side: the JSON tree flattened to (enclosing tree, field) -> values. With
// --no-duplicate-keys a repeated field becomes an array, kept in order.
// ---------------------------------------------------------------------------------------------

struct TsharkFrame {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> fields;

  const std::vector<std::string>* find(std::string_view scope, std::string_view key) const {
    const auto it = fields.find({std::string(scope), std::string(key)});
    return it == fields.end() ? nullptr : &it->second;
  }
};

void flatten(const Json& node, const std::string& scope, TsharkFrame& out) {
  for (const auto& [key, value] : node.items()) {
    if (value.is_object()) {
      flatten(value, key, out);
    } else if (value.is_array()) {
      for (const Json& e : value) {
        if (e.is_object()) {
          flatten(e, key, out);
        } else if (e.is_string()) {
          out.fields[{scope, key}].push_back(e.get<std::string>());
        }
      }
    } else if (value.is_string()) {
      out.fields[{scope, key}].push_back(value.get<std::string>());
    }
  }
}

// tshark prints integers in decimal or as 0x-prefixed hex, by the field's display base.
std::optional<std::uint64_t> parse_number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  const bool hex = s.starts_with("0x") || s.starts_with("0X");
  const std::string text(hex ? s.substr(2) : s);
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const std::uint64_t n = std::strtoull(text.c_str(), &end, hex ? 16 : 10);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return n;
}

// FT_BYTES and FT_ETHER: "aa:bb:cc" (or "aabbcc").
std::optional<ByteVec> parse_hex_bytes(std::string_view s) {
  ByteVec out;
  std::size_t k = 0;
  while (k < s.size()) {
    if (s[k] == ':') {
      ++k;
      continue;
    }
    if (k + 1 >= s.size()) return std::nullopt;
    const auto byte = parse_number(fmt::format("0x{}", s.substr(k, 2)));
    if (!byte) return std::nullopt;
    out.push_back(static_cast<std::uint8_t>(*byte));
    k += 2;
  }
  return out;
}

std::optional<ByteVec> parse_address(std::string_view s, int family) {
  ByteVec out(family == AF_INET ? 4 : 16);
  if (inet_pton(family, std::string(s).c_str(), out.data()) != 1) return std::nullopt;
  return out;
}

// ---------------------------------------------------------------------------------------------
// The comparison table: our field, where tshark has it, and how to read tshark's text.
// ---------------------------------------------------------------------------------------------

enum class Conv {
  kNumber,       // integer field
  kBytesNumber,  // FT_BYTES holding a big-endian number (reserved bytes, ImmDt, IETH)
  kBytes,        // FT_BYTES / FT_ETHER vs our bytes
  kIpv4,
  kIpv6,
};

enum class Group {
  kAlways,    // Ethernet, VLAN, IP, UDP, GRH, BTH: tshark decodes them in every frame
  kExt,       // extension headers after the BTH
  kMad,       // MAD common header
  kCm,        // a CM message body (Check::attr says which)
  kOptional,  // compared only when tshark shows it (it shows the ICRC only on some paths)
};

struct Check {
  std::string_view ours;
  std::string_view scope;  // the tshark tree the field sits in
  std::string_view theirs;
  Conv conv = Conv::kNumber;
  Group group = Group::kAlways;
  std::uint16_t attr = 0;  // kCm: the message
  std::size_t index = 0;   // which occurrence when tshark repeats a field name in one tree
};

constexpr std::string_view kBthTree = "infiniband.bth_tree";
constexpr std::string_view kCmTree = "infiniband.smplid.smpdata_tree";  // tshark's name for it
constexpr std::string_view kMadTree = "infiniband.mad_tree";

std::vector<Check> checks() {
  using C = Conv;
  using G = Group;
  std::vector<Check> t = {
      {"eth.dst", "eth", "eth.dst", C::kBytes},
      {"eth.src", "eth", "eth.src", C::kBytes},
      {"eth.type", "eth", "eth.type"},
      {"vlan.prio", "vlan", "vlan.priority"},
      {"vlan.dei", "vlan", "vlan.dei"},
      {"vlan.vlan", "vlan", "vlan.id"},
      {"vlan.type", "vlan", "vlan.etype"},
      {"ipv4.version", "ip", "ip.version"},
      {"ipv4.hdr_bytes", "ip", "ip.hdr_len"},
      {"ipv4.dscp", "ip.dsfield_tree", "ip.dsfield.dscp"},
      {"ipv4.ecn", "ip.dsfield_tree", "ip.dsfield.ecn"},
      {"ipv4.len", "ip", "ip.len"},
      {"ipv4.id", "ip", "ip.id"},
      {"ipv4.reserved_flag", "ip.flags_tree", "ip.flags.rb"},
      {"ipv4.df", "ip.flags_tree", "ip.flags.df"},
      {"ipv4.mf", "ip.flags_tree", "ip.flags.mf"},
      {"ipv4.frag", "ip", "ip.frag_offset"},
      {"ipv4.ttl", "ip", "ip.ttl"},
      {"ipv4.proto", "ip", "ip.proto"},
      {"ipv4.chksum", "ip", "ip.checksum"},
      {"ipv4.src", "ip", "ip.src", C::kIpv4},
      {"ipv4.dst", "ip", "ip.dst", C::kIpv4},
      {"ipv6.version", "ipv6", "ipv6.version"},
      {"ipv6.tc", "ipv6", "ipv6.tclass"},
      {"ipv6.fl", "ipv6", "ipv6.flow"},
      {"ipv6.plen", "ipv6", "ipv6.plen"},
      {"ipv6.nh", "ipv6", "ipv6.nxt"},
      {"ipv6.hlim", "ipv6", "ipv6.hlim"},
      {"ipv6.src", "ipv6", "ipv6.src", C::kIpv6},
      {"ipv6.dst", "ipv6", "ipv6.dst", C::kIpv6},
      {"udp.sport", "udp", "udp.srcport"},
      {"udp.dport", "udp", "udp.dstport"},
      {"udp.len", "udp", "udp.length"},
      {"udp.chksum", "udp", "udp.checksum"},
      {"grh.ipver", "infiniband.grh_tree", "infiniband.grh.ipver"},
      {"grh.tclass", "infiniband.grh_tree", "infiniband.grh.tclass"},
      {"grh.flowlabel", "infiniband.grh_tree", "infiniband.grh.flowlabel"},
      {"grh.paylen", "infiniband.grh_tree", "infiniband.grh.paylen"},
      {"grh.nexthdr", "infiniband.grh_tree", "infiniband.grh.nxthdr"},
      {"grh.hoplmt", "infiniband.grh_tree", "infiniband.grh.hoplmt"},
      {"grh.sgid", "infiniband.grh_tree", "infiniband.grh.sgid", C::kIpv6},
      {"grh.dgid", "infiniband.grh_tree", "infiniband.grh.dgid", C::kIpv6},
      {"bth.opcode", kBthTree, "infiniband.bth.opcode"},
      {"bth.solicited", kBthTree, "infiniband.bth.se"},
      {"bth.migreq", kBthTree, "infiniband.bth.m"},
      {"bth.padcount", kBthTree, "infiniband.bth.padcnt"},
      {"bth.version", kBthTree, "infiniband.bth.tver"},
      {"bth.pkey", kBthTree, "infiniband.bth.p_key"},
      {"bth.byte4", kBthTree, "infiniband.reserved", C::kBytesNumber},
      {"bth.dqpn", kBthTree, "infiniband.bth.destqp"},
      {"bth.ackreq", kBthTree, "infiniband.bth.a"},
      {"bth.resv7", kBthTree, "infiniband.bth.reserved7"},
      {"bth.psn", kBthTree, "infiniband.bth.psn"},
      {"icrc.wire_be", "infiniband", "infiniband.invariant.crc", C::kNumber, G::kOptional},
      // tshark 4.0 has no XRCETH or FETH; RDETH only for RD, which it reads as DC (see above).
      {"deth.qkey", "infiniband.deth_tree", "infiniband.deth.q_key", C::kNumber, G::kExt},
      {"deth.resv", "infiniband.deth_tree", "infiniband.reserved", C::kBytesNumber, G::kExt},
      {"deth.srcqp", "infiniband.deth_tree", "infiniband.deth.srcqp", C::kNumber, G::kExt},
      {"reth.va", "infiniband.reth_tree", "infiniband.reth.va", C::kNumber, G::kExt},
      {"reth.rkey", "infiniband.reth_tree", "infiniband.reth.r_key", C::kNumber, G::kExt},
      {"reth.dmalen", "infiniband.reth_tree", "infiniband.reth.dmalen", C::kNumber, G::kExt},
      {"atomiceth.va", "infiniband.atomiceth_tree", "infiniband.reth.va", C::kNumber, G::kExt},
      {"atomiceth.rkey", "infiniband.atomiceth_tree", "infiniband.reth.r_key", C::kNumber, G::kExt},
      {"atomiceth.swap_add", "infiniband.atomiceth_tree", "infiniband.atomiceth.swapdt", C::kNumber,
       G::kExt},
      {"atomiceth.compare", "infiniband.atomiceth_tree", "infiniband.atomiceth.cmpdt", C::kNumber,
       G::kExt},
      {"aeth.syndrome", "infiniband.aeth_tree", "infiniband.aeth.syndrome", C::kNumber, G::kExt},
      {"aeth.msn", "infiniband.aeth_tree", "infiniband.aeth.msn", C::kNumber, G::kExt},
      {"atomicacketh.orig", "infiniband.atomicacketh_tree", "infiniband.atomicacketh.origremdt",
       C::kNumber, G::kExt},
      {"immdt.imm", "infiniband.immdt_tree", "infiniband.immdt", C::kBytesNumber, G::kExt},
      {"ieth.rkey", "infiniband.ieth_tree", "infiniband.ieth", C::kBytesNumber, G::kExt},
      {"mad.base_version", kMadTree, "infiniband.mad.baseversion", C::kNumber, G::kMad},
      {"mad.mgmt_class", kMadTree, "infiniband.mad.mgmtclass", C::kNumber, G::kMad},
      {"mad.class_version", kMadTree, "infiniband.mad.classversion", C::kNumber, G::kMad},
      {"mad.method", kMadTree, "infiniband.mad.method", C::kNumber, G::kMad},
      {"mad.status", kMadTree, "infiniband.mad.status", C::kNumber, G::kMad},
      {"mad.class_specific", kMadTree, "infiniband.mad.classspecific", C::kNumber, G::kMad},
      {"mad.tid", kMadTree, "infiniband.mad.transactionid", C::kNumber, G::kMad},
      {"mad.attr_id", kMadTree, "infiniband.mad.attributeid", C::kNumber, G::kMad},
      {"mad.resv", kMadTree, "infiniband.reserved", C::kBytesNumber, G::kMad},
      {"mad.attr_mod", kMadTree, "infiniband.mad.attributemodifier", C::kNumber, G::kMad},
  };

  auto cm = [&](std::uint16_t attr, std::string_view ours, std::string_view theirs,
                Conv conv = Conv::kNumber, std::size_t index = 0,
                std::string_view scope = kCmTree) {
    t.push_back(Check{ours, scope, theirs, conv, Group::kCm, attr, index});
  };
  using namespace cm_attr;
  // REQ (IBA Table 106).
  cm(kReq, "cm.local_comm_id", "infiniband.cm.req");
  cm(kReq, "cm.req.bytes4_7", "infiniband.reserved", C::kBytesNumber, 0);
  cm(kReq, "cm.service_id", "infiniband.cm.req.serviceid");
  cm(kReq, "cm.rdma_cm.protocol", "infiniband.cm.req.serviceid.protocol", C::kNumber, 0,
     "infiniband.cm.req.serviceid_tree");
  cm(kReq, "cm.rdma_cm.port", "infiniband.cm.req.serviceid.dport", C::kNumber, 0,
     "infiniband.cm.req.serviceid_tree");
  cm(kReq, "cm.local_ca_guid", "infiniband.cm.req.localcaguid");
  cm(kReq, "cm.req.resv24", "infiniband.reserved", C::kBytesNumber, 1);
  cm(kReq, "cm.local_qkey", "infiniband.cm.req.localqkey");
  cm(kReq, "cm.local_qpn", "infiniband.cm.req.localqpn");
  cm(kReq, "cm.responder_resources", "infiniband.cm.req.responderres");
  cm(kReq, "cm.local_eecn", "infiniband.cm.req.localeecn");
  cm(kReq, "cm.initiator_depth", "infiniband.cm.req.initdepth");
  cm(kReq, "cm.remote_eecn", "infiniband.cm.req.remoteeecn");
  cm(kReq, "cm.remote_cm_response_timeout", "infiniband.cm.req.remoteresptout");
  cm(kReq, "cm.transport_type", "infiniband.cm.req.transpsvctype");
  cm(kReq, "cm.end_to_end_flow_control", "infiniband.cm.req.e2eflowctrl");
  cm(kReq, "cm.starting_psn", "infiniband.cm.req.startpsn");
  cm(kReq, "cm.local_cm_response_timeout", "infiniband.cm.req.localresptout");
  cm(kReq, "cm.retry_count", "infiniband.cm.req.retrcount");
  cm(kReq, "cm.pkey", "infiniband.cm.req.pkey");
  cm(kReq, "cm.path_mtu", "infiniband.cm.req.pppmtu");
  cm(kReq, "cm.rdc_exists", "infiniband.cm.req.rdcexist");
  cm(kReq, "cm.rnr_retry_count", "infiniband.cm.req.rnrretrcount");
  cm(kReq, "cm.max_cm_retries", "infiniband.cm.req.maxcmretr");
  cm(kReq, "cm.srq", "infiniband.cm.req.srq");
  cm(kReq, "cm.extended_transport_type", "infiniband.cm.req.ext_transport");
  cm(kReq, "cm.primary_local_lid", "infiniband.cm.req.prim_locallid");
  cm(kReq, "cm.primary_remote_lid", "infiniband.cm.req.prim_remotelid");
  cm(kReq, "cm.primary_local_gid.ipv4", "infiniband.cm.req.prim_localgid_ipv4", C::kIpv4);
  cm(kReq, "cm.primary_remote_gid.ipv4", "infiniband.cm.req.prim_remotegid_ipv4", C::kIpv4);
  cm(kReq, "cm.primary_local_gid.full", "infiniband.cm.req.prim_localgid", C::kIpv6);
  cm(kReq, "cm.primary_remote_gid.full", "infiniband.cm.req.prim_remotegid", C::kIpv6);
  // Flow label and packet rate, primary and alternate, not compared: tshark 4.0 reads the flow
  // label as a 3-byte item under a 32-bit mask (0x20438 shows as 0x204), and the packet rate from
  // the flow label's first byte, not data byte 91 / 135 (Linux ibta_vol1_c12.h layout).
  cm(kReq, "cm.primary_traffic_class", "infiniband.cm.req.prim_tfcclass");
  cm(kReq, "cm.primary_hop_limit", "infiniband.cm.req.prim_hoplim");
  cm(kReq, "cm.primary_sl", "infiniband.cm.req.prim_sl");
  cm(kReq, "cm.primary_subnet_local", "infiniband.cm.req.prim_subnetlocal");
  cm(kReq, "cm.primary_resv_sl", "infiniband.cm.req.prim_reserved1");
  cm(kReq, "cm.primary_local_ack_timeout", "infiniband.cm.req.prim_localacktout");
  cm(kReq, "cm.primary_resv_ack", "infiniband.cm.req.prim_reserved2");
  cm(kReq, "cm.alternate_local_lid", "infiniband.cm.req.alt_locallid");
  cm(kReq, "cm.alternate_remote_lid", "infiniband.cm.req.alt_remotelid");
  cm(kReq, "cm.alternate_local_gid", "infiniband.cm.req.alt_localgid", C::kBytes);
  cm(kReq, "cm.alternate_remote_gid", "infiniband.cm.req.alt_remotegid", C::kBytes);
  cm(kReq, "cm.alternate_traffic_class", "infiniband.cm.req.alt_tfcclass");
  cm(kReq, "cm.alternate_hop_limit", "infiniband.cm.req.alt_hoplim");
  cm(kReq, "cm.alternate_sl", "infiniband.cm.req.alt_sl");
  cm(kReq, "cm.alternate_subnet_local", "infiniband.cm.req.alt_subnetlocal");
  cm(kReq, "cm.alternate_resv_sl", "infiniband.cm.req.alt_reserved1", C::kNumber, 0);
  cm(kReq, "cm.alternate_local_ack_timeout", "infiniband.cm.req.alt_localacktout");
  // Byte 139's low 3 bits are not compared: tshark 4.0 shows them as reserved; we read SAP
  // Supported from one of them (ibta_vol1_c12.h), so the two fields differ in meaning.
  cm(kReq, "cm.req.private_data", "infiniband.cm.req.private", C::kBytes);
  constexpr std::string_view kIpCm = "infiniband.cm.req.ip_cm_tree";
  cm(kReq, "cm.rdma_cm.major", "infiniband.cm.req.ip_cm.majv", C::kNumber, 0, kIpCm);
  cm(kReq, "cm.rdma_cm.minor", "infiniband.cm.req.ip_cm.minv", C::kNumber, 0, kIpCm);
  cm(kReq, "cm.rdma_cm.ip_version", "infiniband.cm.req.ip_cm.ipv", C::kNumber, 0, kIpCm);
  cm(kReq, "cm.rdma_cm.reserved", "infiniband.cm.req.ip_cm.reserved", C::kNumber, 0, kIpCm);
  cm(kReq, "cm.rdma_cm.src_port", "infiniband.cm.req.ip_cm.sport", C::kNumber, 0, kIpCm);
  cm(kReq, "cm.rdma_cm.src_ip4", "infiniband.cm.req.ip_cm.sip4", C::kIpv4, 0, kIpCm);
  cm(kReq, "cm.rdma_cm.dst_ip4", "infiniband.cm.req.ip_cm.dip4", C::kIpv4, 0, kIpCm);
  cm(kReq, "cm.rdma_cm.src_ip6", "infiniband.cm.req.ip_cm.sip6", C::kIpv6, 0, kIpCm);
  cm(kReq, "cm.rdma_cm.dst_ip6", "infiniband.cm.req.ip_cm.dip6", C::kIpv6, 0, kIpCm);
  cm(kReq, "cm.rdma_cm.consumer_data", "infiniband.cm.req.ip_cm.private", C::kBytes, 0, kIpCm);

  // REP (Table 110).
  cm(kRep, "cm.local_comm_id", "infiniband.cm.rep");
  cm(kRep, "cm.remote_comm_id", "infiniband.cm.rep.remotecommid");
  cm(kRep, "cm.local_qkey", "infiniband.cm.rep.localqkey");
  cm(kRep, "cm.local_qpn", "infiniband.cm.rep.localqpn");
  cm(kRep, "cm.rep.vendor_hi", "infiniband.reserved", C::kBytesNumber, 0);
  cm(kRep, "cm.local_eecn", "infiniband.cm.rep.localeecn");
  cm(kRep, "cm.rep.vendor_mid", "infiniband.reserved", C::kBytesNumber, 1);
  cm(kRep, "cm.starting_psn", "infiniband.cm.rep.startpsn");
  cm(kRep, "cm.rep.vendor_lo", "infiniband.reserved", C::kBytesNumber, 2);
  cm(kRep, "cm.responder_resources", "infiniband.cm.rep.respres");
  cm(kRep, "cm.initiator_depth", "infiniband.cm.rep.initdepth");
  cm(kRep, "cm.target_ack_delay", "infiniband.cm.rep.tgtackdelay");
  cm(kRep, "cm.failover_accepted", "infiniband.cm.rep.failoveracc");
  cm(kRep, "cm.end_to_end_flow_control", "infiniband.cm.rep.e2eflowctrl");
  cm(kRep, "cm.rnr_retry_count", "infiniband.cm.rep.rnrretrcount");
  cm(kRep, "cm.srq", "infiniband.cm.rep.srq");
  cm(kRep, "cm.rep.resv27", "infiniband.cm.rep.reserved");
  cm(kRep, "cm.local_ca_guid", "infiniband.cm.rep.localcaguid");
  cm(kRep, "cm.private_data", "infiniband.cm.rep.private", C::kBytes);

  // RTU (Table 111).
  cm(kRtu, "cm.local_comm_id", "infiniband.cm.rtu.localcommid");
  cm(kRtu, "cm.remote_comm_id", "infiniband.cm.rtu.remotecommid");
  cm(kRtu, "cm.private_data", "infiniband.cm.rtu.private", C::kBytes);

  // REJ (Table 108).
  cm(kRej, "cm.local_comm_id", "infiniband.cm.rej.localcommid");
  cm(kRej, "cm.remote_comm_id", "infiniband.cm.rej.remotecommid");
  cm(kRej, "cm.message_rejected", "infiniband.cm.rej.msgrej");
  // Byte 8's six reserved bits not compared: tshark 4.0 masks them with 0x03 (two bits).
  cm(kRej, "cm.reject_info_length", "infiniband.cm.rej.rejinfolen");
  cm(kRej, "cm.rej.resv9", "infiniband.cm.rej.reserved1");
  cm(kRej, "cm.reason", "infiniband.cm.rej.reason");
  cm(kRej, "cm.ari", "infiniband.cm.rej.ari", C::kBytes);
  cm(kRej, "cm.private_data", "infiniband.cm.rej.private", C::kBytes);

  // DREQ (Table 112); tshark 4.0 files its remote QPN under a "cm.req." name.
  cm(kDreq, "cm.local_comm_id", "infiniband.cm.dreq.localcommid");
  cm(kDreq, "cm.remote_comm_id", "infiniband.cm.dreq.remotecommid");
  cm(kDreq, "cm.remote_qpn", "infiniband.cm.req.remoteqpneecn");
  cm(kDreq, "cm.dreq.resv11", "infiniband.reserved", C::kBytesNumber);
  cm(kDreq, "cm.private_data", "infiniband.cm.dreq.private", C::kBytes);

  // DREP (Table 113).
  cm(kDrep, "cm.local_comm_id", "infiniband.cm.drsp.localcommid");
  cm(kDrep, "cm.remote_comm_id", "infiniband.cm.drsp.remotecommid");
  cm(kDrep, "cm.private_data", "infiniband.cm.drsp.private", C::kBytes);
  return t;
}

bool applies(const Check& c, const Frame& frame) {
  switch (c.group) {
    case Group::kAlways:
    case Group::kOptional:
      return true;
    case Group::kExt:
      return frame.expect.ext_headers;
    case Group::kMad:
      return frame.expect.mad;
    case Group::kCm:
      return c.attr == frame.expect.cm_attr;
  }
  return false;
}

std::string show(const Value& v) {
  if (const auto* n = std::get_if<std::uint64_t>(&v)) return fmt::format("{:#x}", *n);
  const auto& b = std::get<ByteVec>(v);
  return b.empty() ? "(empty)" : fmt::format("{:02x}", fmt::join(b, ":"));
}

// tshark's text in the form of our value; nullopt when it does not parse.
std::optional<Value> convert(std::string_view text, Conv conv) {
  switch (conv) {
    case Conv::kNumber:
      if (auto n = parse_number(text)) return Value{*n};
      return std::nullopt;
    case Conv::kBytesNumber: {
      const auto b = parse_hex_bytes(text);
      if (!b || b->empty() || b->size() > 8) return std::nullopt;
      std::uint64_t n = 0;
      for (std::uint8_t x : *b) n = n << 8 | x;
      return Value{n};
    }
    case Conv::kBytes:
      if (auto b = parse_hex_bytes(text)) return Value{std::move(*b)};
      return std::nullopt;
    case Conv::kIpv4:
      if (auto b = parse_address(text, AF_INET)) return Value{std::move(*b)};
      return std::nullopt;
    case Conv::kIpv6:
      if (auto b = parse_address(text, AF_INET6)) return Value{std::move(*b)};
      return std::nullopt;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Running tshark
// ---------------------------------------------------------------------------------------------

std::optional<fs::path> find_on_path(std::string_view program) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::string_view rest(path);
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

void write_pcap(const fs::path& file, const std::vector<Frame>& frames) {
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  ASSERT_NE(dead, nullptr);
  pcap_dumper_t* dumper = pcap_dump_open(dead, file.c_str());
  ASSERT_NE(dumper, nullptr) << pcap_geterr(dead);
  for (std::size_t k = 0; k < frames.size(); ++k) {
    pcap_pkthdr header{};
    header.ts.tv_sec = 1700000000;
    header.ts.tv_usec = static_cast<decltype(header.ts.tv_usec)>(k);
    header.caplen = header.len = static_cast<bpf_u_int32>(frames[k].bytes.size());
    pcap_dump(reinterpret_cast<u_char*>(dumper), &header, frames[k].bytes.data());
  }
  pcap_dump_close(dumper);
  pcap_close(dead);
}

// tshark's stdout; its stderr (the "running as root" warning among others) is dropped. -n: no
// name resolution, so addresses stay numeric.
std::string run_tshark(const fs::path& tshark, const fs::path& pcap, int& status) {
  const std::string command = fmt::format("'{}' -n -r '{}' -T json --no-duplicate-keys 2>/dev/null",
                                          tshark.string(), pcap.string());
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) {
    status = -1;
    return out;
  }
  std::array<char, 65536> buffer;
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  status = ::pclose(pipe);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------------------------

// Below these a frame was not really compared: a tshark field rename would otherwise make the
// test pass vacuously. BTH alone is 11 fields; Ethernet + GRH (RoCEv1) add 11, Ethernet + IP +
// UDP (RoCEv2) more.
constexpr std::size_t kMinFieldsPerFrame = 22;
constexpr std::size_t kMinMadFields = 10;
constexpr std::size_t kMinCmFields = 3;  // RTU and DREP have only two IDs and private data

TEST(TsharkCrosscheck, EveryOpcodeAndCmMessageAgreesWithTshark) {
  const auto tshark = find_on_path("tshark");
  if (!tshark)
    GTEST_SKIP() << "tshark is not on PATH: install tshark (Wireshark) to run the "
                    "independent cross-check";

  const std::vector<Frame> frames = build_frames();
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("roceconf-tshark-{}", static_cast<long>(::getpid()));
  fs::create_directories(dir);
  const fs::path pcap = dir / "crosscheck.pcap";
  write_pcap(pcap, frames);

  int status = 0;
  const std::string output = run_tshark(*tshark, pcap, status);
  ASSERT_EQ(status, 0) << "tshark failed on " << pcap;
  const Json json = Json::parse(output, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(json.is_array()) << "tshark output is not a JSON array";
  ASSERT_EQ(json.size(), frames.size()) << "tshark dissected a different number of frames";

  const std::vector<Check> table = checks();
  std::vector<std::string> problems;
  std::array<std::size_t, 5> per_group{};  // by Group
  std::vector<bool> used(table.size(), false);

  for (std::size_t k = 0; k < frames.size(); ++k) {
    const Frame& frame = frames[k];
    const std::string where = fmt::format("frame {} ({})", k + 1, frame.name);
    const Packet packet = decode(frame.bytes);
    if (!packet.bth) {
      problems.push_back(fmt::format("{}: our decoder found no BTH", where));
      continue;
    }
    if (frame.is_cm && !(packet.mad && packet.mad->cm)) {
      problems.push_back(fmt::format("{}: our decoder did not decode the CM message", where));
      continue;
    }
    const std::map<std::string, Value> ours = our_fields(packet);
    TsharkFrame theirs;
    flatten(json[k]["_source"]["layers"], "", theirs);

    std::size_t compared = 0, mad = 0, cm = 0;
    for (std::size_t row = 0; row < table.size(); ++row) {
      const Check& c = table[row];
      const auto mine = ours.find(std::string(c.ours));
      if (mine == ours.end() || !applies(c, frame)) continue;
      const auto* texts = theirs.find(c.scope, c.theirs);
      if (!texts || c.index >= texts->size()) {
        if (c.group != Group::kOptional) {
          problems.push_back(fmt::format("{}: {} = {} but tshark has no {} (in {})", where, c.ours,
                                         show(mine->second), c.theirs, c.scope));
        }
        continue;
      }
      const std::string& text = (*texts)[c.index];
      const auto value = convert(text, c.conv);
      if (!value) {
        problems.push_back(
            fmt::format("{}: cannot read tshark's {} = \"{}\"", where, c.theirs, text));
        continue;
      }
      ++compared;
      ++per_group[static_cast<std::size_t>(c.group)];
      used[row] = true;
      if (c.group == Group::kMad) ++mad;
      if (c.group == Group::kCm) ++cm;
      if (*value != mine->second) {
        problems.push_back(fmt::format("{}: {} ours {} vs tshark {} ({} = \"{}\")", where, c.ours,
                                       show(mine->second), show(*value), c.theirs, text));
      }
    }
    if (compared < kMinFieldsPerFrame)
      problems.push_back(fmt::format("{}: only {} fields compared", where, compared));
    if (frame.expect.mad && mad < kMinMadFields)
      problems.push_back(fmt::format("{}: only {} MAD header fields compared", where, mad));
    if (frame.expect.cm_attr != 0 && cm < kMinCmFields)
      problems.push_back(fmt::format("{}: only {} CM fields compared", where, cm));
  }

  // Every row of the table must have been used at least once, or it is dead (a typo, or a frame
  // kind that no longer exists).
  for (std::size_t row = 0; row < table.size(); ++row) {
    if (table[row].group != Group::kOptional && !used[row]) {
      problems.push_back(
          fmt::format("check {} -> {} was never compared", table[row].ours, table[row].theirs));
    }
  }

  std::string report;
  for (const std::string& p : problems) report += p + "\n";
  EXPECT_TRUE(problems.empty()) << problems.size() << " disagreement(s) with tshark (pcap kept at "
                                << pcap << "):\n"
                                << report;
  const auto cm_frames = static_cast<std::size_t>(
      std::count_if(frames.begin(), frames.end(), [](const Frame& f) { return f.is_cm; }));
  std::size_t total = 0;
  for (std::size_t n : per_group) total += n;
  std::printf(
      "tshark cross-check: %zu frames (%zu opcode, %zu CM), %zu field comparisons (%zu "
      "Ethernet/IP/UDP/GRH/BTH, %zu extension header, %zu MAD, %zu CM, %zu ICRC)\n",
      frames.size(), frames.size() - cm_frames, cm_frames, total, per_group[0], per_group[1],
      per_group[2], per_group[3], per_group[4]);
  if (problems.empty()) fs::remove_all(dir);
}

}  // namespace
}  // namespace roceconf
