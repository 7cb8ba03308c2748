// MAD common header + CM dispatch: real CM MADs from a Soft-RoCE capture checked against what
// tshark 4.0 reads from them, exact re-encoding, findings, and garbage of every length.
#include "dissector/mad/mad.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "dissector/mad/rdma_cm.h"

namespace roceconf {
namespace {

std::vector<std::uint8_t> from_hex(std::string_view hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// The 256 MAD bytes (UD payload after BTH+DETH, frame offset 62) of frames 1, 2, 3, 11, 12 of
// /work/shared/captures/montybeatnik_roce_capture_read-write-ecn.pcap (rxe, RoCEv2/IPv4).
// tshark: CM ConnectRequest, TID 0x0000000252b5cf34, local comm ID 0x34cfb552, service ID
// 0x0000000001061d2f (rdma_cm TCP port 7471), local QPN 0x11, starting PSN 0xe1a47d, MTU 3,
// GIDs 192.168.65.5 -> 192.168.65.4, IP CM header sport 0x93d7.
constexpr std::string_view kReqHex =
    "01070203000000000000000252b5cf34001000000000000034cfb55200000000"
    "0000000001061d2f505400fffe0aaaba00000000000000000000110100000001"
    "000000a0e1a47da7ffff37f0ffffffff00000000000000000000ffffc0a84105"
    "00000000000000000000ffffc0a8410420438000004000980000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "00000000004093d7000000000000000000000000c0a841050000000000000000"
    "00000000c0a84104000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000";
// tshark: CM ConnectReply, local comm ID 0xa980e2d3, remote 0x34cfb552, local QPN 0x11,
// starting PSN 0x8c84dd, target ACK delay 15, RNR retry 7, CA GUID 0x505400fffebf4369.
constexpr std::string_view kRepHex =
    "01070203000000000000000252b5cf340013000000000000a980e2d334cfb552"
    "0000000000001100000000008c84dd00010178e0505400fffebf43690000aaab"
    "09dd5000000002d5000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000";
// tshark: CM ReadyToUse, local comm ID 0x34cfb552, remote 0xa980e2d3.
constexpr std::string_view kRtuHex =
    "01070203000000000000000252b5cf34001400000000000034cfb552a980e2d3"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000";
// tshark: CM DisconnectRequest, local comm ID 0x34cfb552, remote 0xa980e2d3, remote QPN 0x11.
constexpr std::string_view kDreqHex =
    "01070203000000000000000252b5cf34001500000000000034cfb552a980e2d3"
    "0000110000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000";
// tshark: CM DisconnectReply, local comm ID 0xa980e2d3, remote 0x34cfb552.
constexpr std::string_view kDrepHex =
    "01070203000000000000000252b5cf340016000000000000a980e2d334cfb552"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000";

constexpr std::uint32_t kMadBase = 62;  // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + DETH 8
constexpr std::uint64_t kTid = 0x0000000252b5cf34;

class Recorder : public FieldSink {
 public:
  void field(std::string_view layer, std::string_view name, const FieldValue& value) override {
    values[fmt::format("{}.{}", layer, name)] = value;
  }
  std::uint64_t u(const std::string& key) const { return std::get<std::uint64_t>(values.at(key)); }
  std::string_view s(const std::string& key) const {
    return std::get<std::string_view>(values.at(key));
  }
  std::vector<std::uint8_t> b(const std::string& key) const {
    const FieldValue& value = values.at(key);
    const auto* a = std::get_if<Address>(&value);
    const Bytes v = a ? a->bytes : std::get<Bytes>(value);
    return {v.begin(), v.end()};
  }
  std::map<std::string, FieldValue> values;
};

class NullSink : public FieldSink {
 public:
  void field(std::string_view, std::string_view, const FieldValue&) override {}
};

// Decodes a capture MAD, expects no findings, and checks it re-encodes byte for byte.
Mad decode_clean(const std::vector<std::uint8_t>& bytes) {
  Findings findings;
  const auto mad = decode_mad(bytes, kMadBase, findings);
  EXPECT_TRUE(mad.has_value());
  EXPECT_TRUE(findings.empty()) << findings.front().message;
  EXPECT_TRUE(mad->cm.has_value());
  std::array<std::uint8_t, kMadSize> again{};
  encode_mad(*mad, again);
  EXPECT_TRUE(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()));
  return *mad;
}

void expect_cm_header(const MadHeader& h, std::uint16_t attr_id) {
  EXPECT_EQ(h.base_version, 1);
  EXPECT_EQ(h.mgmt_class, kMgmtClassCm);
  EXPECT_EQ(h.class_version, 2);
  EXPECT_EQ(h.method, mad_method::kSend);
  EXPECT_EQ(h.status, 0);
  EXPECT_EQ(h.class_specific, 0);
  EXPECT_EQ(h.tid, kTid);
  EXPECT_EQ(h.attr_id, attr_id);
  EXPECT_EQ(h.attr_mod, 0u);
}

TEST(MadCapture, ConnectRequest) {
  const auto bytes = from_hex(kReqHex);
  ASSERT_EQ(bytes.size(), kMadSize);
  const Mad mad = decode_clean(bytes);
  expect_cm_header(mad.header, cm_attr::kReq);
  const auto& req = std::get<CmReq>(*mad.cm);
  // Values as tshark prints them (infiniband.cm.req.*).
  EXPECT_EQ(req.local_comm_id, 0x34cfb552u);
  EXPECT_EQ(req.vendor_id, 0u);
  EXPECT_EQ(req.service_id, 0x0000000001061d2fu);
  EXPECT_EQ(req.local_ca_guid, 0x505400fffe0aaabau);
  EXPECT_EQ(req.local_qkey, 0u);
  EXPECT_EQ(req.local_qpn, 0x11u);
  EXPECT_EQ(req.responder_resources, 1);
  EXPECT_EQ(req.local_eecn, 0u);
  EXPECT_EQ(req.initiator_depth, 1);
  EXPECT_EQ(req.remote_eecn, 0u);
  EXPECT_EQ(req.remote_cm_response_timeout, 0x14);
  EXPECT_EQ(req.transport_type, cm_transport::kRc);
  EXPECT_FALSE(req.end_to_end_flow_control);
  EXPECT_EQ(req.starting_psn, 0xe1a47du);
  EXPECT_EQ(req.local_cm_response_timeout, 0x14);
  EXPECT_EQ(req.retry_count, 7);
  EXPECT_EQ(req.pkey, 0xffff);
  EXPECT_EQ(req.path_mtu, 3);
  EXPECT_FALSE(req.rdc_exists);
  EXPECT_EQ(req.rnr_retry_count, 7);
  EXPECT_EQ(req.max_cm_retries, 15);
  EXPECT_FALSE(req.srq);
  EXPECT_EQ(req.extended_transport_type, 0);
  EXPECT_EQ(req.primary.local_lid, 65535);
  EXPECT_EQ(req.primary.remote_lid, 65535);
  EXPECT_EQ(req.primary.local_gid, cm_ipv4_gid(0xc0a84105));   // 192.168.65.5
  EXPECT_EQ(req.primary.remote_gid, cm_ipv4_gid(0xc0a84104));  // 192.168.65.4
  // tshark 4.0 shows prim_flowlabel 0x204 and prim_pktrate 0x20: its masks are off. Linux
  // (CM_REQ_PRIMARY_FLOW_LABEL = top 20 bits of word 88, rate = low 6 bits of byte 91) gives:
  EXPECT_EQ(req.primary.flow_label, 0x20438u);
  EXPECT_EQ(req.primary.packet_rate, 0);
  EXPECT_EQ(req.primary.traffic_class, 0);
  EXPECT_EQ(req.primary.hop_limit, 0x40);
  EXPECT_EQ(req.primary.sl, 0);
  EXPECT_FALSE(req.primary.subnet_local);
  EXPECT_EQ(req.primary.local_ack_timeout, 0x13);
  EXPECT_EQ(req.alternate.local_lid, 0);
  EXPECT_EQ(req.alternate.local_gid, CmGid{});
  EXPECT_FALSE(req.sap_supported);
  EXPECT_EQ(req.private_data.size(), kReqPrivateDataSize);
  EXPECT_EQ(req.private_data.data(), bytes.data() + 24 + 140);

  // rdma_cm (tshark infiniband.cm.req.ip_cm.*): IPV 4, sport 0x93d7, 192.168.65.5 -> .4.
  ASSERT_TRUE(is_rdma_cm_service_id(req.service_id));
  EXPECT_EQ(rdma_cm_port_space(req.service_id), rdma_cm_ps::kTcp);
  EXPECT_EQ(rdma_cm_port(req.service_id), 0x1d2f);
  const auto header = decode_rdma_cm_header(req.private_data);
  ASSERT_TRUE(header);
  EXPECT_EQ(header->major, 0);
  EXPECT_EQ(header->minor, 0);
  EXPECT_EQ(header->ip_version, 4);
  EXPECT_EQ(header->src_port, 0x93d7);
  EXPECT_EQ(header->src_ip, rdma_cm_ipv4(0xc0a84105));
  EXPECT_EQ(header->dst_ip, rdma_cm_ipv4(0xc0a84104));

  Recorder r;
  visit_mad_fields(mad, r);
  EXPECT_EQ(r.u("mad.base_version"), 1u);
  EXPECT_EQ(r.u("mad.mgmt_class"), 7u);
  EXPECT_EQ(r.u("mad.class_version"), 2u);
  EXPECT_EQ(r.u("mad.method"), 3u);
  EXPECT_EQ(r.u("mad.status"), 0u);
  EXPECT_EQ(r.u("mad.tid"), kTid);
  EXPECT_EQ(r.u("mad.attr_id"), 0x10u);
  EXPECT_EQ(r.u("mad.attr_mod"), 0u);
  EXPECT_EQ(r.s("cm.msg"), "REQ");
  EXPECT_EQ(r.u("cm.local_comm_id"), 0x34cfb552u);
  EXPECT_EQ(r.u("cm.local_qpn"), 0x11u);
  EXPECT_EQ(r.u("cm.starting_psn"), 0xe1a47du);
  EXPECT_EQ(r.u("cm.path_mtu"), 3u);
  EXPECT_EQ(r.u("cm.service_id"), 0x0000000001061d2fu);
  EXPECT_EQ(r.u("cm.local_qkey"), 0u);
  EXPECT_EQ(r.u("cm.responder_resources"), 1u);
  EXPECT_EQ(r.u("cm.initiator_depth"), 1u);
  EXPECT_EQ(r.u("cm.transport_type"), 0u);
  EXPECT_EQ(r.s("cm.transport_name"), "RC");
  EXPECT_EQ(r.u("cm.retry_count"), 7u);
  EXPECT_EQ(r.u("cm.rnr_retry_count"), 7u);
  EXPECT_EQ(r.u("cm.pkey"), 0xffffu);
  EXPECT_EQ(r.u("cm.local_cm_response_timeout"), 20u);
  EXPECT_EQ(r.u("cm.remote_cm_response_timeout"), 20u);
  EXPECT_EQ(r.u("cm.max_cm_retries"), 15u);
  EXPECT_FALSE(std::get<bool>(r.values.at("cm.srq")));
  EXPECT_FALSE(std::get<bool>(r.values.at("cm.end_to_end_flow_control")));
  EXPECT_EQ(r.b("cm.primary_local_gid"),
            (std::vector<std::uint8_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 65, 5}));
  EXPECT_EQ(r.b("cm.primary_remote_gid").back(), 4);
  EXPECT_EQ(r.u("cm.primary_local_lid"), 0xffffu);
  EXPECT_EQ(r.u("cm.primary_remote_lid"), 0xffffu);
  EXPECT_EQ(r.u("cm.primary_flow_label"), 0x20438u);
  EXPECT_EQ(r.u("cm.primary_traffic_class"), 0u);
  EXPECT_EQ(r.u("cm.primary_hop_limit"), 64u);
  EXPECT_EQ(r.u("cm.primary_sl"), 0u);
  EXPECT_EQ(r.u("cm.primary_local_ack_timeout"), 19u);
  EXPECT_EQ(r.u("cm.local_ca_guid"), 0x505400fffe0aaabau);
  EXPECT_EQ(r.b("cm.private_data").size(), kReqPrivateDataSize);
  EXPECT_EQ(r.u("cm.rdma_cm.port_space"), 0x0106u);
  EXPECT_EQ(r.u("cm.rdma_cm.port"), 7471u);
  EXPECT_EQ(r.u("cm.rdma_cm.ip_version"), 4u);
  EXPECT_EQ(r.u("cm.rdma_cm.src_port"), 0x93d7u);
  EXPECT_EQ(r.b("cm.rdma_cm.src_ip"), (std::vector<std::uint8_t>{192, 168, 65, 5}));
  EXPECT_EQ(r.b("cm.rdma_cm.dst_ip"), (std::vector<std::uint8_t>{192, 168, 65, 4}));
}

TEST(MadCapture, ConnectReply) {
  const auto bytes = from_hex(kRepHex);
  const Mad mad = decode_clean(bytes);
  expect_cm_header(mad.header, cm_attr::kRep);
  const auto& rep = std::get<CmRep>(*mad.cm);
  EXPECT_EQ(rep.local_comm_id, 0xa980e2d3u);
  EXPECT_EQ(rep.remote_comm_id, 0x34cfb552u);
  EXPECT_EQ(rep.local_qkey, 0u);
  EXPECT_EQ(rep.local_qpn, 0x11u);
  EXPECT_EQ(rep.vendor_id, 0u);
  EXPECT_EQ(rep.local_eecn, 0u);
  EXPECT_EQ(rep.starting_psn, 0x8c84ddu);
  EXPECT_EQ(rep.responder_resources, 1);
  EXPECT_EQ(rep.initiator_depth, 1);
  EXPECT_EQ(rep.target_ack_delay, 0x0f);
  EXPECT_EQ(rep.failover_accepted, 0);
  EXPECT_FALSE(rep.end_to_end_flow_control);
  EXPECT_EQ(rep.rnr_retry_count, 7);
  EXPECT_FALSE(rep.srq);
  EXPECT_EQ(rep.local_ca_guid, 0x505400fffebf4369u);
  // tshark infiniband.cm.rep.private starts 00:00:aa:ab:09:dd:50:00:00:00:02:d5.
  const std::vector<std::uint8_t> head(rep.private_data.begin(), rep.private_data.begin() + 12);
  EXPECT_EQ(head, from_hex("0000aaab09dd5000000002d5"));
}

TEST(MadCapture, ReadyToUseAndDisconnect) {
  // Keep the bytes alive: decoded messages view them.
  const auto rtu_bytes = from_hex(kRtuHex);
  const auto dreq_bytes = from_hex(kDreqHex);
  const auto drep_bytes = from_hex(kDrepHex);
  const Mad rtu = decode_clean(rtu_bytes);
  expect_cm_header(rtu.header, cm_attr::kRtu);
  EXPECT_EQ(std::get<CmRtu>(*rtu.cm).local_comm_id, 0x34cfb552u);
  EXPECT_EQ(std::get<CmRtu>(*rtu.cm).remote_comm_id, 0xa980e2d3u);

  const Mad dreq = decode_clean(dreq_bytes);
  expect_cm_header(dreq.header, cm_attr::kDreq);
  const auto& d = std::get<CmDreq>(*dreq.cm);
  EXPECT_EQ(d.local_comm_id, 0x34cfb552u);
  EXPECT_EQ(d.remote_comm_id, 0xa980e2d3u);
  EXPECT_EQ(d.remote_qpn, 0x11u);
  Recorder r;
  visit_mad_fields(dreq, r);
  EXPECT_EQ(r.s("cm.msg"), "DREQ");
  EXPECT_EQ(r.u("cm.remote_qpn"), 0x11u);

  const Mad drep = decode_clean(drep_bytes);
  expect_cm_header(drep.header, cm_attr::kDrep);
  EXPECT_EQ(std::get<CmDrep>(*drep.cm).local_comm_id, 0xa980e2d3u);
  EXPECT_EQ(std::get<CmDrep>(*drep.cm).remote_comm_id, 0x34cfb552u);
}

// --- building -------------------------------------------------------------------------------

TEST(MadEncode, AttrIdComesFromTheMessage) {
  Mad mad;
  mad.header.tid = 0x0102030405060708;
  mad.header.attr_id = 0x7777;  // ignored: the message decides
  mad.header.attr_mod = 0xA0B0C0D0;
  CmRej rej;
  rej.reason = 8;
  mad.cm = rej;
  std::array<std::uint8_t, kMadSize> out{};
  encode_mad(mad, out);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 0x07);
  EXPECT_EQ(out[2], 2);
  EXPECT_EQ(out[3], 0x03);
  EXPECT_EQ(be::load64(&out[8]), 0x0102030405060708u);
  EXPECT_EQ(be::load16(&out[16]), 0x0012);
  EXPECT_EQ(be::load32(&out[20]), 0xA0B0C0D0u);
  EXPECT_EQ(be::load16(&out[24 + 10]), 8);

  Findings findings;
  const auto back = decode_mad(out, 0, findings);
  ASSERT_TRUE(back && back->cm);
  EXPECT_TRUE(findings.empty());
  EXPECT_EQ(std::get<CmRej>(*back->cm).reason, 8);
}

TEST(MadEncode, RawDataWithoutMessage) {
  const std::vector<std::uint8_t> data = {1, 2, 3};
  Mad mad;
  mad.header.mgmt_class = 0x03;  // SubnAdm
  mad.header.attr_id = 0x0035;
  mad.data = data;
  std::array<std::uint8_t, kMadSize> out{};
  out.fill(0xEE);
  encode_mad(mad, out);
  EXPECT_EQ(be::load16(&out[16]), 0x0035);
  EXPECT_EQ(out[24], 1);
  EXPECT_EQ(out[26], 3);
  EXPECT_EQ(out[27], 0);
  EXPECT_EQ(out[255], 0);
}

// --- findings -------------------------------------------------------------------------------

struct Result {
  std::optional<Mad> mad;
  Findings findings;
};
Result decode(const std::vector<std::uint8_t>& bytes, std::uint32_t base = kMadBase) {
  Result r;
  r.mad = decode_mad(bytes, base, r.findings);
  return r;
}
bool has(const Findings& findings, FindingCode code, Layer layer, std::uint32_t offset) {
  return std::any_of(findings.begin(), findings.end(), [&](const Finding& f) {
    return f.code == code && f.layer == layer && f.offset == offset;
  });
}

TEST(MadFindings, ShortMad) {
  auto bytes = from_hex(kReqHex);
  bytes.resize(100);
  const auto r = decode(bytes);
  ASSERT_TRUE(r.mad);
  EXPECT_FALSE(r.mad->cm);
  EXPECT_EQ(r.mad->header.attr_id, cm_attr::kReq);
  EXPECT_EQ(r.mad->data.size(), 76u);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].code, FindingCode::kMadLength);
  EXPECT_EQ(r.findings[0].layer, Layer::kMad);
  EXPECT_EQ(r.findings[0].offset, kMadBase + 100);
  EXPECT_NE(r.findings[0].message.find("not decoded"), std::string::npos);

  bytes.resize(255);
  EXPECT_FALSE(decode(bytes).mad->cm);

  bytes.resize(23);
  const auto tiny = decode(bytes);
  EXPECT_FALSE(tiny.mad);
  EXPECT_TRUE(has(tiny.findings, FindingCode::kMadLength, Layer::kMad, kMadBase + 23));
}

TEST(MadFindings, LongMad) {
  auto bytes = from_hex(kReqHex);
  bytes.resize(300, 0xAB);
  const auto r = decode(bytes);
  ASSERT_TRUE(r.mad && r.mad->cm);
  EXPECT_EQ(r.mad->data.size(), kCmDataSize);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_TRUE(has(r.findings, FindingCode::kMadLength, Layer::kMad, kMadBase + 256));
}

TEST(MadFindings, Versions) {
  auto bytes = from_hex(kReqHex);
  bytes[0] = 2;
  EXPECT_TRUE(has(decode(bytes).findings, FindingCode::kMadVersion, Layer::kMad, kMadBase));
  bytes[0] = 1;
  bytes[2] = 1;  // CM class version 1: a target must REJ with reason 31
  const auto r = decode(bytes);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].code, FindingCode::kMadVersion);
  EXPECT_EQ(r.findings[0].offset, kMadBase + 2);
  EXPECT_TRUE(r.mad->cm);  // still shown
}

TEST(MadFindings, UnknownAttributeAndMethod) {
  auto bytes = from_hex(kReqHex);
  bytes[17] = 0x20;
  auto r = decode(bytes);
  EXPECT_FALSE(r.mad->cm);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_TRUE(has(r.findings, FindingCode::kMadAttribute, Layer::kMad, kMadBase + 16));

  bytes[17] = 0x10;
  bytes[3] = mad_method::kGet;
  r = decode(bytes);
  EXPECT_TRUE(r.mad->cm);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_TRUE(has(r.findings, FindingCode::kMadAttribute, Layer::kMad, kMadBase + 3));

  // ClassPortInfo: Get / Set / GetResp are fine, Send is not.
  bytes[17] = 0x01;
  for (std::uint8_t method : {mad_method::kGet, mad_method::kSet, mad_method::kGetResp}) {
    bytes[3] = method;
    r = decode(bytes);
    EXPECT_TRUE(r.findings.empty()) << int{method};
    EXPECT_TRUE(std::holds_alternative<ClassPortInfo>(*r.mad->cm));
  }
  bytes[3] = mad_method::kSend;
  EXPECT_TRUE(has(decode(bytes).findings, FindingCode::kMadAttribute, Layer::kMad, kMadBase + 3));
}

TEST(MadFindings, InvalidMtuAtItsFrameOffset) {
  auto bytes = from_hex(kReqHex);
  for (std::uint8_t mtu : {0, 6, 7, 15}) {
    bytes[24 + 50] = static_cast<std::uint8_t>((mtu << 4) | (bytes[24 + 50] & 0x0F));
    const auto r = decode(bytes);
    ASSERT_EQ(r.findings.size(), 1u);
    // spec-facts §9.1: the MTU nibble of a CM REQ in an untagged IPv4 frame is byte 136.
    EXPECT_TRUE(has(r.findings, FindingCode::kInvalidMtu, Layer::kCm, 136)) << int{mtu};
  }
}

TEST(MadFindings, CmFieldsAndReservedHeader) {
  auto bytes = from_hex(kReqHex);
  bytes[19] = 1;  // MAD header reserved 18..19
  EXPECT_TRUE(has(decode(bytes).findings, FindingCode::kReservedBits, Layer::kMad, kMadBase + 18));

  Mad mad;
  CmRej rej;
  rej.reason = 0;
  rej.message_rejected = 3;
  mad.cm = rej;
  std::array<std::uint8_t, kMadSize> out{};
  encode_mad(mad, out);
  Findings findings;
  decode_mad(out, 1000, findings);
  EXPECT_TRUE(has(findings, FindingCode::kCmField, Layer::kCm, 1000 + 24 + 8));
  EXPECT_TRUE(has(findings, FindingCode::kCmField, Layer::kCm, 1000 + 24 + 10));
}

TEST(MadFindings, OtherClassesOnlyHeader) {
  for (std::uint8_t mgmt_class : {0x01, 0x81, 0x03, 0x04}) {
    std::vector<std::uint8_t> bytes(kMadSize, 0xFF);
    bytes[0] = 1;
    bytes[1] = mgmt_class;
    const auto r = decode(bytes);
    ASSERT_TRUE(r.mad);
    EXPECT_TRUE(r.findings.empty()) << int{mgmt_class};
    EXPECT_FALSE(r.mad->cm);
    EXPECT_EQ(r.mad->header.mgmt_class, mgmt_class);
    EXPECT_EQ(r.mad->header.attr_id, 0xFFFF);
    EXPECT_EQ(r.mad->data.size(), kCmDataSize);
    Recorder rec;
    visit_mad_fields(*r.mad, rec);
    EXPECT_EQ(rec.u("mad.mgmt_class"), mgmt_class);
    EXPECT_FALSE(rec.values.contains("cm.msg"));
  }
}

// Garbage of every length 0..300 never crashes, and what decodes re-encodes stably.
TEST(MadFuzz, EveryLength) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> byte(0, 255);
  NullSink sink;
  for (std::size_t len = 0; len <= 300; ++len) {
    for (int round = 0; round < 20; ++round) {
      std::vector<std::uint8_t> bytes(len);
      for (auto& x : bytes) x = static_cast<std::uint8_t>(byte(rng));
      if (round % 2 == 0 && len >= 24) {  // steer half of them into the CM decoders
        bytes[1] = kMgmtClassCm;
        bytes[16] = 0;
        bytes[17] = static_cast<std::uint8_t>(round % 4 == 0 ? 0x10 + byte(rng) % 11 : 0x01);
      }
      Findings findings;
      const auto mad = decode_mad(bytes, 7, findings);
      ASSERT_EQ(mad.has_value(), len >= kMadHeaderSize);
      for (const auto& f : findings) {
        EXPECT_GE(f.offset, 7u);
        EXPECT_LE(f.offset, 7u + std::max<std::size_t>(len, kMadSize));
      }
      if (!mad) continue;
      visit_mad_fields(*mad, sink);
      std::array<std::uint8_t, kMadSize> out{};
      encode_mad(*mad, out);
      if (len >= kMadSize) {
        EXPECT_TRUE(std::equal(out.begin(), out.end(), bytes.begin()));
      }
    }
  }
}

}  // namespace
}  // namespace roceconf
