// CM message codec: per-message round trips with every field set, golden byte offsets from
// Linux ibta_vol1_c12.h (spec-facts §9.4), field checks, name tables and the rdma_cm header.
#include "dissector/mad/cm.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dissector/mad/rdma_cm.h"

namespace roceconf {
namespace {

using Buffer = std::array<std::uint8_t, kCmDataSize>;

// Records fields as text so two visits can be compared (Bytes by content).
class Recorder : public FieldSink {
 public:
  void field(std::string_view layer, std::string_view name, const FieldValue& value) override {
    std::string text;
    if (const auto* u = std::get_if<std::uint64_t>(&value)) {
      text = fmt::format("{:#x}", *u);
    } else if (const auto* b = std::get_if<bool>(&value)) {
      text = *b ? "true" : "false";
    } else if (const auto* s = std::get_if<std::string_view>(&value)) {
      text = fmt::format("'{}'", *s);
    } else {
      const auto* a = std::get_if<Address>(&value);
      const Bytes bytes = a ? a->bytes : std::get<Bytes>(value);
      text = fmt::format("{:02x}", fmt::join(bytes, ""));
    }
    const auto [it, inserted] = fields.emplace(fmt::format("{}.{}", layer, name), text);
    EXPECT_TRUE(inserted) << "duplicate field " << it->first;
  }
  std::map<std::string, std::string> fields;
};

std::map<std::string, std::string> fields_of(const CmMessage& msg) {
  Recorder r;
  visit_cm_fields(msg, r);
  return r.fields;
}

// A private-data-like pattern that differs from zero in every byte.
std::vector<std::uint8_t> pattern(std::size_t size, std::uint8_t seed) {
  std::vector<std::uint8_t> v(size);
  for (std::size_t i = 0; i < size; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 7 + 1) | 1;
  return v;
}

CmGid gid(std::uint8_t seed) {
  CmGid g;
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = static_cast<std::uint8_t>(seed + i);
  return g;
}

// Encodes into `wire`, decodes, compares every emitted field, re-encodes byte-identically; also
// checks that `msg` really sets every field away from its default (so the round trip proves
// something). The result's Bytes members view `wire`.
template <class T>
T round_trip(const T& msg, Buffer& wire) {
  Buffer& first = wire;
  encode_cm(msg, first);
  const auto decoded = decode_cm(cm_attr_id(CmMessage{msg}), first);
  EXPECT_TRUE(decoded.has_value());
  const T out = std::get<T>(*decoded);
  EXPECT_EQ(fields_of(msg), fields_of(out));
  Buffer second{};
  encode_cm(out, second);
  EXPECT_EQ(first, second);

  const auto defaults = fields_of(T{});
  for (const auto& [name, value] : fields_of(msg)) {
    if (name == "cm.msg") continue;
    const auto it = defaults.find(name);
    EXPECT_TRUE(it == defaults.end() || it->second != value) << name << " left at its default";
  }
  return out;
}
template <class T>
void round_trip(const T& msg) {
  Buffer wire{};
  round_trip(msg, wire);
}

CmPath full_path(std::uint8_t seed) {
  return CmPath{.local_lid = static_cast<std::uint16_t>(0x1200 + seed),
                .remote_lid = static_cast<std::uint16_t>(0x3400 + seed),
                .local_gid = gid(seed),
                .remote_gid = gid(static_cast<std::uint8_t>(seed + 0x40)),
                .flow_label = 0xABCDEu + seed,
                .traffic_class = static_cast<std::uint8_t>(0x60 + seed),
                .hop_limit = static_cast<std::uint8_t>(2 + seed),
                .packet_rate = 0x2A,
                .sl = 0x9,
                .subnet_local = true,
                .local_ack_timeout = 0x15};
}

TEST(CmReq, RoundTripEveryField) {
  const auto pd = pattern(kReqPrivateDataSize, 3);
  CmReq m;
  m.local_comm_id = 0x11223344;
  m.vendor_id = 0x02C9AB;
  m.service_id = 0x0123456789ABCDEF;
  m.local_ca_guid = 0xFEDCBA9876543210;
  m.local_qkey = 0x11111111;
  m.local_qpn = 0xABCDEF;
  m.responder_resources = 16;
  m.local_eecn = 0x123456;
  m.initiator_depth = 8;
  m.remote_eecn = 0x654321;
  m.remote_cm_response_timeout = 31;
  m.transport_type = cm_transport::kExtended;
  m.extended_transport_type = cm_transport::kExtendedXrc;
  m.end_to_end_flow_control = true;
  m.starting_psn = 0xFEDCBA;
  m.local_cm_response_timeout = 17;
  m.retry_count = 3;
  m.pkey = 0x8001;
  m.path_mtu = 5;
  m.rdc_exists = true;
  m.rnr_retry_count = 2;
  m.max_cm_retries = 9;
  m.srq = true;
  m.primary = full_path(1);
  m.alternate = full_path(2);
  m.sap_supported = true;
  m.private_data = pd;
  Buffer wire{};
  const CmReq out = round_trip(m, wire);
  EXPECT_EQ(out.local_qpn, 0xABCDEFu);
  EXPECT_EQ(out.starting_psn, 0xFEDCBAu);
  EXPECT_EQ(out.primary.flow_label, 0xABCDFu);
  EXPECT_EQ(out.alternate.local_gid, gid(2));
  EXPECT_TRUE(out.sap_supported);
  EXPECT_EQ(out.alternate.resv_ack, 0);
  EXPECT_TRUE(std::equal(out.private_data.begin(), out.private_data.end(), pd.begin(), pd.end()));
  Findings findings;
  check_cm(out, 0, findings);
  EXPECT_TRUE(findings.empty());
}

TEST(CmReq, GoldenOffsets) {
  const auto pd = pattern(kReqPrivateDataSize, 9);
  CmReq m;
  m.local_comm_id = 0xA1A2A3A4;
  m.service_id = 0x0000000001061D2F;
  m.local_qpn = 0x000011;
  m.starting_psn = 0xE1A47D;
  m.pkey = 0x8001;
  m.path_mtu = 4;
  m.primary.local_gid = cm_ipv4_gid(0xC0A84105);
  m.primary.flow_label = 0x20438;
  m.private_data = pd;
  Buffer b{};
  encode_cm(m, b);
  EXPECT_EQ(be::load32(&b[0]), 0xA1A2A3A4u);
  EXPECT_EQ(be::load64(&b[8]), 0x0000000001061D2Fu);  // Service ID at 8
  EXPECT_EQ(be::load24(&b[32]), 0x000011u);           // Local QPN at 32
  EXPECT_EQ(b[35], 1);                                // Responder Resources (default 1)
  EXPECT_EQ(b[43], (20 << 3) | (0 << 1) | 0);         // remote CM timeout 20, RC, no E2E
  EXPECT_EQ(be::load24(&b[44]), 0xE1A47Du);           // Starting PSN at 44
  EXPECT_EQ(b[47], (20 << 3) | 7);                    // local CM timeout 20, retry 7
  EXPECT_EQ(be::load16(&b[48]), 0x8001);              // P_Key at 48
  EXPECT_EQ(b[50], (4 << 4) | 7);                     // MTU nibble at 50, RNR retry 7
  EXPECT_EQ(b[51], 15 << 4);                          // max CM retries 15
  EXPECT_EQ(be::load16(&b[52]), 0xFFFF);              // permissive LIDs on RoCE
  EXPECT_EQ(be::load16(&b[54]), 0xFFFF);
  EXPECT_EQ(b[66], 0xFF);  // ::ffff:192.168.65.5 at 56
  EXPECT_EQ(b[67], 0xFF);
  EXPECT_EQ(be::load32(&b[68]), 0xC0A84105u);
  EXPECT_EQ(be::load32(&b[88]), 0x20438000u);  // flow label: top 20 bits of word 88
  EXPECT_EQ(b[93], 64);                        // hop limit
  EXPECT_EQ(b[95], 19 << 3);                   // local ACK timeout
  EXPECT_EQ(std::vector<std::uint8_t>(b.begin() + 140, b.end()), pd);

  m = CmReq{};
  m.transport_type = cm_transport::kUc;
  m.end_to_end_flow_control = true;
  m.rdc_exists = true;
  m.srq = true;
  m.extended_transport_type = 5;
  m.alternate.sl = 0xA;
  m.alternate.subnet_local = true;
  m.alternate.packet_rate = 0x3F;
  m.alternate.local_ack_timeout = 0x1F;
  m.sap_supported = true;
  m.vendor_id = 0x123456;
  encode_cm(m, b);
  EXPECT_EQ(b[4], 0);
  EXPECT_EQ(be::load24(&b[5]), 0x123456u);  // ECE vendor ID at 5..7
  EXPECT_EQ(b[43] & 0x07, (1 << 1) | 1);
  EXPECT_EQ(b[50] & 0x08, 0x08);
  EXPECT_EQ(b[51] & 0x0F, 0x08 | 5);
  EXPECT_EQ(b[135], 0x3F);
  EXPECT_EQ(b[138], 0xA8);
  EXPECT_EQ(b[139], 0xFC);
}

TEST(CmReq, PrivateDataPaddedOrTruncated) {
  const auto short_pd = pattern(10, 1);
  CmReq m;
  m.private_data = short_pd;
  Buffer b{};
  b.fill(0xEE);
  encode_cm(m, b);
  EXPECT_TRUE(std::equal(short_pd.begin(), short_pd.end(), b.begin() + 140));
  EXPECT_TRUE(std::all_of(b.begin() + 150, b.end(), [](std::uint8_t x) { return x == 0; }));

  const auto long_pd = pattern(200, 2);
  m.private_data = long_pd;
  encode_cm(m, b);
  EXPECT_TRUE(std::equal(b.begin() + 140, b.end(), long_pd.begin()));
  const CmReq out = decode_cm_req(b);
  EXPECT_EQ(out.private_data.size(), kReqPrivateDataSize);
  EXPECT_EQ(out.private_data.data(), b.data() + 140);  // a view into the input
}

TEST(CmMra, RoundTripAndOffsets) {
  const auto pd = pattern(kMraPrivateDataSize, 4);
  CmMra m;
  m.local_comm_id = 1;
  m.remote_comm_id = 2;
  m.message_mraed = cm_msg_kind::kRep;
  m.service_timeout = 31;
  m.private_data = pd;
  round_trip(m);
  Buffer b{};
  encode_cm(m, b);
  EXPECT_EQ(b[8], 0x40);
  EXPECT_EQ(b[9], 31 << 3);
  EXPECT_EQ(b[10], pd[0]);
  EXPECT_EQ(b[231], pd.back());
}

TEST(CmRej, RoundTripAndOffsets) {
  const auto ari = pattern(kRejAriSize, 5);
  const auto pd = pattern(kRejPrivateDataSize, 6);
  CmRej m;
  m.local_comm_id = 0;
  m.local_comm_id = 0xDEAD;
  m.remote_comm_id = 0xBEEF;
  m.message_rejected = cm_msg_kind::kOther;
  m.reject_info_length = 16;
  m.reason = 8;
  m.ari = ari;
  m.private_data = pd;
  Buffer wire{};
  const CmRej out = round_trip(m, wire);
  EXPECT_EQ(out.reason, 8);
  EXPECT_EQ(rej_reason_name(out.reason), "Invalid Service ID");
  Buffer b{};
  encode_cm(m, b);
  EXPECT_EQ(b[8], 0x80);
  EXPECT_EQ(b[9], 16 << 1);
  EXPECT_EQ(be::load16(&b[10]), 8);
  EXPECT_EQ(b[12], ari[0]);
  EXPECT_EQ(b[83], ari.back());
  EXPECT_EQ(b[84], pd[0]);
  const auto fields = fields_of(out);
  EXPECT_EQ(fields.at("cm.reason"), "0x8");
  EXPECT_EQ(fields.at("cm.reason_name"), "'Invalid Service ID'");
  EXPECT_EQ(fields.at("cm.msg"), "'REJ'");
}

TEST(CmRep, RoundTripAndOffsets) {
  const auto pd = pattern(kRepPrivateDataSize, 7);
  CmRep m;
  m.local_comm_id = 0xA980E2D3;
  m.remote_comm_id = 0x34CFB552;
  m.local_qkey = 0x80010000;
  m.local_qpn = 0x123456;
  m.vendor_id = 0xAABBCC;
  m.local_eecn = 0x654321;
  m.starting_psn = 0x8C84DD;
  m.responder_resources = 4;
  m.initiator_depth = 5;
  m.target_ack_delay = 3;
  m.failover_accepted = 2;
  m.end_to_end_flow_control = true;
  m.rnr_retry_count = 1;
  m.srq = true;
  m.local_ca_guid = 0x505400FFFEBF4369;
  m.private_data = pd;
  round_trip(m);
  Buffer b{};
  encode_cm(m, b);
  EXPECT_EQ(be::load32(&b[8]), 0x80010000u);
  EXPECT_EQ(be::load24(&b[12]), 0x123456u);
  EXPECT_EQ(b[15], 0xAA);  // VendorID high
  EXPECT_EQ(be::load24(&b[16]), 0x654321u);
  EXPECT_EQ(b[19], 0xBB);
  EXPECT_EQ(be::load24(&b[20]), 0x8C84DDu);
  EXPECT_EQ(b[23], 0xCC);  // VendorID low
  EXPECT_EQ(b[24], 4);
  EXPECT_EQ(b[25], 5);
  EXPECT_EQ(b[26], (3 << 3) | (2 << 1) | 1);
  EXPECT_EQ(b[27], (1 << 5) | 0x10);
  EXPECT_EQ(be::load64(&b[28]), 0x505400FFFEBF4369u);
  EXPECT_EQ(b[36], pd[0]);
}

TEST(CmRtuDreqDrep, RoundTripAndOffsets) {
  const auto pd_rtu = pattern(kRtuPrivateDataSize, 8);
  CmRtu rtu{.local_comm_id = 7, .remote_comm_id = 9, .private_data = pd_rtu};
  round_trip(rtu);
  Buffer b{};
  encode_cm(rtu, b);
  EXPECT_EQ(be::load32(&b[4]), 9u);
  EXPECT_EQ(b[8], pd_rtu[0]);

  const auto pd_dreq = pattern(kDreqPrivateDataSize, 9);
  CmDreq dreq{
      .local_comm_id = 7, .remote_comm_id = 9, .remote_qpn = 0xABCDEF, .private_data = pd_dreq};
  round_trip(dreq);
  encode_cm(dreq, b);
  EXPECT_EQ(be::load24(&b[8]), 0xABCDEFu);
  EXPECT_EQ(b[11], 0);
  EXPECT_EQ(b[12], pd_dreq[0]);

  const auto pd_drep = pattern(kDrepPrivateDataSize, 10);
  CmDrep drep{.local_comm_id = 7, .remote_comm_id = 9, .private_data = pd_drep};
  round_trip(drep);
  encode_cm(drep, b);
  EXPECT_EQ(b[8], pd_drep[0]);
}

TEST(CmLap, RoundTripAndOffsets) {
  const auto pd = pattern(kLapPrivateDataSize, 11);
  CmLap m;
  m.local_comm_id = 1;
  m.remote_comm_id = 2;
  m.remote_qpn = 0x000123;
  m.remote_cm_response_timeout = 7;
  m.alternate = full_path(3);
  m.private_data = pd;
  round_trip(m);
  Buffer b{};
  encode_cm(m, b);
  EXPECT_EQ(be::load24(&b[12]), 0x000123u);
  EXPECT_EQ(b[15], 7 << 3);
  EXPECT_EQ(be::load16(&b[20]), 0x1203);
  EXPECT_EQ(be::load16(&b[22]), 0x3403);
  EXPECT_EQ(b[24], gid(3)[0]);
  EXPECT_EQ(b[40], gid(0x43)[0]);
  EXPECT_EQ(be::load24(&b[56]) >> 4, 0xABCDEu + 3);
  EXPECT_EQ(b[59], 0x63);  // traffic class
  EXPECT_EQ(b[60], 5);     // hop limit
  EXPECT_EQ(b[61], 0x2A);  // packet rate
  EXPECT_EQ(b[62], 0x98);  // SL 9, subnet local
  EXPECT_EQ(b[63], 0x15 << 3);
  EXPECT_EQ(b[64], pd[0]);
}

TEST(CmApr, RoundTripAndOffsets) {
  const auto info = pattern(kAprInfoSize, 12);
  const auto pd = pattern(kAprPrivateDataSize, 13);
  CmApr m{.local_comm_id = 1,
          .remote_comm_id = 2,
          .additional_info_length = 16,
          .ap_status = 5,
          .additional_info = info,
          .private_data = pd};
  round_trip(m);
  Buffer b{};
  encode_cm(m, b);
  EXPECT_EQ(b[8], 16);
  EXPECT_EQ(b[9], 5);
  EXPECT_EQ(b[12], info[0]);
  EXPECT_EQ(b[84], pd[0]);
  EXPECT_EQ(apr_status_name(5), "Path is current");
}

TEST(CmSidr, RoundTripAndOffsets) {
  const auto pd_req = pattern(kSidrReqPrivateDataSize, 14);
  CmSidrReq req{
      .request_id = 0x55, .pkey = 0x7FFF, .service_id = 0x0000000001113039, .private_data = pd_req};
  round_trip(req);
  Buffer b{};
  encode_cm(req, b);
  EXPECT_EQ(be::load16(&b[4]), 0x7FFF);
  EXPECT_EQ(be::load64(&b[8]), 0x0000000001113039u);
  EXPECT_EQ(b[16], pd_req[0]);

  const auto info = pattern(kSidrRepInfoSize, 15);
  const auto pd_rep = pattern(kSidrRepPrivateDataSize, 16);
  CmSidrRep rep{.request_id = 0x55,
                .sidr_status = sidr_status::kNoQp,
                .additional_info_length = 4,
                .vendor_id = 0x123456,
                .qpn = 0xABCDEF,
                .service_id = 0x0000000001113039,
                .qkey = 0x80010000,
                .additional_info = info,
                .private_data = pd_rep};
  round_trip(rep);
  encode_cm(rep, b);
  EXPECT_EQ(b[4], 3);
  EXPECT_EQ(b[5], 4);
  EXPECT_EQ(be::load16(&b[6]), 0x1234);  // VendorID high 16 bits
  EXPECT_EQ(be::load24(&b[8]), 0xABCDEFu);
  EXPECT_EQ(b[11], 0x56);  // VendorID low
  EXPECT_EQ(be::load64(&b[12]), 0x0000000001113039u);
  EXPECT_EQ(be::load32(&b[20]), 0x80010000u);
  EXPECT_EQ(b[24], info[0]);
  EXPECT_EQ(b[96], pd_rep[0]);
  EXPECT_EQ(fields_of(rep).at("cm.sidr_status"), "0x3");
}

TEST(ClassPortInfoMsg, RoundTripAndOffsets) {
  const auto reserved = pattern(kCmDataSize - kClassPortInfoSize, 17);
  ClassPortInfo m{.base_version = 2,
                  .class_version = 3,
                  .capability_mask = 0x1234,
                  .capability_mask2 = 0x5ABCDEF,
                  .resp_time_value = 18,
                  .redirect_gid = gid(0x10),
                  .redirect_tc = 0x22,
                  .redirect_sl = 0x3,
                  .redirect_flow_label = 0x45678,
                  .redirect_lid = 0x9ABC,
                  .redirect_pkey = 0xFFFF,
                  .redirect_qp = 0x123456,
                  .redirect_qkey = 0x80010000,
                  .trap_gid = gid(0x20),
                  .trap_tc = 0x44,
                  .trap_sl = 0x5,
                  .trap_flow_label = 0x6789A,
                  .trap_lid = 0xBCDE,
                  .trap_pkey = 0x7FFF,
                  .trap_hop_limit = 0x40,
                  .trap_qp = 0x654321,
                  .trap_qkey = 0x12345678,
                  .reserved = reserved};
  round_trip(m);
  Buffer b{};
  encode_cm(m, b);
  EXPECT_EQ(b[0], 2);
  EXPECT_EQ(b[1], 3);
  EXPECT_EQ(be::load16(&b[2]), 0x1234);
  EXPECT_EQ(be::load32(&b[4]), (0x5ABCDEFu << 5) | 18);
  EXPECT_EQ(b[8], 0x10);
  EXPECT_EQ(be::load32(&b[24]), 0x22345678u);  // TC 8 | SL 4 | FL 20
  EXPECT_EQ(be::load16(&b[28]), 0x9ABC);
  EXPECT_EQ(be::load16(&b[30]), 0xFFFF);
  EXPECT_EQ(be::load32(&b[32]), 0x00123456u);
  EXPECT_EQ(be::load32(&b[36]), 0x80010000u);
  EXPECT_EQ(b[40], 0x20);
  EXPECT_EQ(be::load32(&b[56]), 0x4456789Au);
  EXPECT_EQ(be::load16(&b[60]), 0xBCDE);
  EXPECT_EQ(be::load16(&b[62]), 0x7FFF);
  EXPECT_EQ(be::load32(&b[64]), 0x40654321u);
  EXPECT_EQ(be::load32(&b[68]), 0x12345678u);
  EXPECT_EQ(b[72], reserved[0]);
}

// Any 232 bytes decode to a message that re-encodes to the same bytes, for every attribute.
TEST(Cm, AnyBytesRoundTripExactly) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::uint16_t attr = 0; attr <= 0x20; ++attr) {
    for (int i = 0; i < 50; ++i) {
      Buffer in;
      for (auto& x : in) x = static_cast<std::uint8_t>(byte(rng));
      const auto msg = decode_cm(attr, in);
      ASSERT_EQ(msg.has_value(), !cm_attr_name(attr).empty()) << attr;
      if (!msg) continue;
      EXPECT_EQ(cm_attr_id(*msg), attr);
      Buffer out{};
      encode_cm(*msg, out);
      EXPECT_EQ(in, out) << cm_attr_name(attr);
      Findings findings;
      check_cm(*msg, 0, findings);
      Recorder r;
      visit_cm_fields(*msg, r);
    }
  }
}

TEST(Cm, WideValuesAreMasked) {
  CmReq m;
  m.local_qpn = 0xFF000001;
  m.path_mtu = 0xF3;
  m.retry_count = 0xFF;
  m.primary.flow_label = 0xFFF00001;
  Buffer b{};
  encode_cm(m, b);
  EXPECT_EQ(b[31], 0);  // local Q_Key untouched
  EXPECT_EQ(be::load24(&b[32]), 1u);
  EXPECT_EQ(b[35], 1);
  EXPECT_EQ(b[50] >> 4, 3);
  EXPECT_EQ(b[47], (20 << 3) | 7);
  EXPECT_EQ(be::load24(&b[88]), 0x000010u);
  EXPECT_EQ(b[91], 0);
}

// --- findings -------------------------------------------------------------------------------

std::vector<std::pair<FindingCode, std::uint32_t>> codes(const CmMessage& msg) {
  Findings findings;
  check_cm(msg, 1000, findings);
  std::vector<std::pair<FindingCode, std::uint32_t>> out;
  for (const auto& f : findings) {
    EXPECT_EQ(f.layer, Layer::kCm);
    EXPECT_FALSE(f.message.empty());
    out.emplace_back(f.code, f.offset);
  }
  return out;
}
using Codes = std::vector<std::pair<FindingCode, std::uint32_t>>;

TEST(CmCheck, DefaultsAreClean) {
  for (std::uint16_t attr :
       {0x01, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A}) {
    Buffer zero{};
    auto msg = decode_cm(attr, zero);
    ASSERT_TRUE(msg);
    // Default-constructed messages of every kind: no findings.
    std::visit([](const auto& m) { EXPECT_TRUE(codes(std::decay_t<decltype(m)>{}).empty()); },
               *msg);
  }
}

TEST(CmCheck, InvalidMtu) {
  for (std::uint8_t mtu = 0; mtu < 16; ++mtu) {
    CmReq m;
    m.path_mtu = mtu;
    if (mtu >= 1 && mtu <= 5) {
      EXPECT_TRUE(codes(m).empty());
    } else {
      EXPECT_EQ(codes(m), (Codes{{FindingCode::kInvalidMtu, 1050}})) << int{mtu};
    }
  }
}

TEST(CmCheck, TransportType) {
  CmReq m;
  m.transport_type = cm_transport::kExtended;
  m.extended_transport_type = 2;
  EXPECT_EQ(codes(m), (Codes{{FindingCode::kCmField, 1051}}));
  m.extended_transport_type = cm_transport::kExtendedXrc;
  EXPECT_TRUE(codes(m).empty());
  EXPECT_EQ(transport_type_name(m.transport_type, m.extended_transport_type), "XRC");
  m.transport_type = cm_transport::kRd;
  EXPECT_EQ(codes(m), (Codes{{FindingCode::kCmField, 1051}}));
}

TEST(CmCheck, ReservedBits) {
  Buffer b{};
  CmReq req;
  encode_cm(req, b);
  b[4] = 1;    // before the ECE vendor ID
  b[27] = 1;   // reserved word 24..27
  b[90] |= 1;  // after primary flow label
  b[91] |= 0x40;
  b[94] |= 1;
  b[95] |= 1;
  b[139] |= 0x01;  // alternate: only 2 bits reserved, 0x04 is SAP
  const auto m = decode_cm_req(b);
  EXPECT_EQ(codes(m), (Codes{{FindingCode::kReservedBits, 1004},
                             {FindingCode::kReservedBits, 1024},
                             {FindingCode::kReservedBits, 1090},
                             {FindingCode::kReservedBits, 1091},
                             {FindingCode::kReservedBits, 1094},
                             {FindingCode::kReservedBits, 1095},
                             {FindingCode::kReservedBits, 1139}}));
  Buffer again{};
  encode_cm(m, again);
  EXPECT_EQ(b, again);

  CmRep rep;
  rep.resv27 = 1;
  EXPECT_EQ(codes(rep), (Codes{{FindingCode::kReservedBits, 1027}}));
  CmDreq dreq;
  dreq.resv11 = 1;
  EXPECT_EQ(codes(dreq), (Codes{{FindingCode::kReservedBits, 1011}}));
  CmLap lap;
  lap.resv8 = 1;
  lap.alternate.resv_rate = 1;
  EXPECT_EQ(codes(lap),
            (Codes{{FindingCode::kReservedBits, 1008}, {FindingCode::kReservedBits, 1061}}));
  CmSidrReq sidr;
  sidr.resv6 = 1;
  EXPECT_EQ(codes(sidr), (Codes{{FindingCode::kReservedBits, 1006}}));
}

TEST(CmCheck, MessageKindsAndCodes) {
  CmMra mra;
  mra.message_mraed = 3;
  EXPECT_EQ(codes(mra), (Codes{{FindingCode::kCmField, 1008}}));
  CmRej rej;
  rej.message_rejected = 3;
  EXPECT_EQ(codes(rej), (Codes{{FindingCode::kCmField, 1008}}));
  for (std::uint16_t reason : {0, 34, 36, 0xFFFF}) {
    CmRej r;
    r.reason = reason;
    EXPECT_EQ(codes(r), (Codes{{FindingCode::kCmField, 1010}})) << reason;
  }
  rej = CmRej{};
  rej.reject_info_length = 73;
  EXPECT_EQ(codes(rej), (Codes{{FindingCode::kCmField, 1009}}));
  CmApr apr;
  apr.ap_status = 14;
  apr.additional_info_length = 100;
  EXPECT_EQ(codes(apr), (Codes{{FindingCode::kCmField, 1008}, {FindingCode::kCmField, 1009}}));
  CmSidrRep sidr;
  sidr.sidr_status = 6;
  EXPECT_EQ(codes(sidr), (Codes{{FindingCode::kCmField, 1004}}));
}

// --- names ----------------------------------------------------------------------------------

TEST(CmNames, Tables) {
  EXPECT_EQ(rej_reason_name(0), "");
  EXPECT_EQ(rej_reason_name(1), "No QP available");
  EXPECT_EQ(rej_reason_name(8), "Invalid Service ID");
  EXPECT_EQ(rej_reason_name(10), "Stale connection");
  EXPECT_EQ(rej_reason_name(26), "Invalid path MTU");
  EXPECT_EQ(rej_reason_name(28), "Consumer-defined");
  EXPECT_EQ(rej_reason_name(31), "Invalid class version");
  EXPECT_EQ(rej_reason_name(33), "Invalid alternate flow label");
  EXPECT_EQ(rej_reason_name(34), "");
  EXPECT_EQ(rej_reason_name(35), "Vendor option not supported");
  EXPECT_EQ(rej_reason_name(36), "");
  for (std::uint16_t r = 1; r <= 35; ++r) EXPECT_EQ(rej_reason_name(r).empty(), r == 34) << r;
  EXPECT_EQ(apr_status_name(0), "Success");
  EXPECT_EQ(apr_status_name(13), "Invalid SL");
  EXPECT_EQ(apr_status_name(14), "");
  EXPECT_EQ(sidr_status_name(0), "Success");
  EXPECT_EQ(sidr_status_name(5), "Unsupported version");
  EXPECT_EQ(sidr_status_name(6), "");
  EXPECT_EQ(mra_message_name(0), "REQ");
  EXPECT_EQ(mra_message_name(1), "REP");
  EXPECT_EQ(mra_message_name(2), "other");
  EXPECT_EQ(mra_message_name(3), "");
  EXPECT_EQ(transport_type_name(0), "RC");
  EXPECT_EQ(transport_type_name(1), "UC");
  EXPECT_EQ(transport_type_name(2), "RD");
  EXPECT_EQ(transport_type_name(3, 1), "XRC");
  EXPECT_EQ(transport_type_name(3, 0), "");
}

TEST(CmNames, AttrIdsAndMessageNames) {
  const std::vector<std::pair<CmMessage, std::pair<std::uint16_t, std::string_view>>> all = {
      {CmReq{}, {0x10, "REQ"}},          {CmMra{}, {0x11, "MRA"}},
      {CmRej{}, {0x12, "REJ"}},          {CmRep{}, {0x13, "REP"}},
      {CmRtu{}, {0x14, "RTU"}},          {CmDreq{}, {0x15, "DREQ"}},
      {CmDrep{}, {0x16, "DREP"}},        {CmSidrReq{}, {0x17, "SIDR_REQ"}},
      {CmSidrRep{}, {0x18, "SIDR_REP"}}, {CmLap{}, {0x19, "LAP"}},
      {CmApr{}, {0x1A, "APR"}},          {ClassPortInfo{}, {0x01, "ClassPortInfo"}},
  };
  for (const auto& [msg, expected] : all) {
    EXPECT_EQ(cm_attr_id(msg), expected.first);
    EXPECT_EQ(cm_message_name(msg), expected.second);
    EXPECT_EQ(cm_attr_name(expected.first), expected.second);
  }
  EXPECT_EQ(cm_attr_name(0x0002), "");
  EXPECT_EQ(cm_attr_name(0x001B), "");
}

// --- rdma_cm (Annex A11) --------------------------------------------------------------------

TEST(RdmaCm, ServiceId) {
  EXPECT_EQ(rdma_cm_service_id(rdma_cm_ps::kTcp, 7471), 0x0000000001061D2Fu);
  EXPECT_EQ(rdma_cm_service_id(rdma_cm_ps::kUdp, 1), 0x0000000001110001u);
  EXPECT_EQ(rdma_cm_service_id(rdma_cm_ps::kIb, 0xFFFF), 0x00000000013FFFFFu);
  EXPECT_EQ(rdma_cm_service_id(rdma_cm_ps::kIpoib, 5), 0x0000000000020005u);
  EXPECT_EQ(rdma_cm_port_space(0x0000000001061D2F), rdma_cm_ps::kTcp);
  EXPECT_EQ(rdma_cm_port(0x0000000001061D2F), 7471);
  for (std::uint16_t ps :
       {rdma_cm_ps::kTcp, rdma_cm_ps::kUdp, rdma_cm_ps::kIb, rdma_cm_ps::kIpoib}) {
    EXPECT_TRUE(is_rdma_cm_service_id(rdma_cm_service_id(ps, 4791))) << ps;
  }
  EXPECT_FALSE(is_rdma_cm_service_id(0));
  EXPECT_FALSE(is_rdma_cm_service_id(0x0200000000000000));  // IB_CM_ASSIGN_SERVICE_ID
  EXPECT_FALSE(is_rdma_cm_service_id(0x0000000101061D2F));
  EXPECT_FALSE(is_rdma_cm_service_id(0x0000000000010000));  // SDP
  EXPECT_EQ(rdma_cm_port_space_name(rdma_cm_ps::kTcp), "TCP");
  EXPECT_EQ(rdma_cm_port_space_name(rdma_cm_ps::kUdp), "UDP");
  EXPECT_EQ(rdma_cm_port_space_name(rdma_cm_ps::kIb), "IB");
  EXPECT_EQ(rdma_cm_port_space_name(rdma_cm_ps::kIpoib), "IPoIB");
  EXPECT_EQ(rdma_cm_port_space_name(0x0107), "");
}

TEST(RdmaCm, HeaderRoundTrip) {
  const RdmaCmHeader v4{.ip_version = 4,
                        .src_port = 0x93D7,
                        .src_ip = rdma_cm_ipv4(0xC0A84105),
                        .dst_ip = rdma_cm_ipv4(0xC0A84104)};
  std::array<std::uint8_t, kRdmaCmHeaderSize> h{};
  encode_rdma_cm_header(v4, h);
  // What rxe sent in the capture's REQ (tshark: IPV 4, sport 0x93d7, 192.168.65.5 -> .4).
  const std::array<std::uint8_t, 36> golden = {
      0x00, 0x40, 0x93, 0xD7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,    0,    0xC0, 0xA8,
      0x41, 0x05, 0,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xC0, 0xA8, 0x41, 0x04};
  EXPECT_EQ(h, golden);
  EXPECT_EQ(decode_rdma_cm_header(h), v4);

  RdmaCmHeader v6{.major = 1, .minor = 2, .ip_version = 6, .reserved = 3, .src_port = 1};
  v6.src_ip = gid(0x20);
  v6.dst_ip = gid(0x30);
  encode_rdma_cm_header(v6, h);
  EXPECT_EQ(h[0], 0x12);
  EXPECT_EQ(h[1], 0x63);
  EXPECT_EQ(decode_rdma_cm_header(h), v6);
  EXPECT_FALSE(decode_rdma_cm_header(Bytes(h).first(35)));
}

TEST(RdmaCm, PrivateDataAndReqFields) {
  const auto consumer = pattern(60, 1);  // 4 bytes too many: truncated to 56
  std::array<std::uint8_t, kReqPrivateDataSize> pd{};
  const RdmaCmHeader header{
      .src_port = 40000, .src_ip = rdma_cm_ipv4(0x0A000001), .dst_ip = rdma_cm_ipv4(0x0A000002)};
  build_rdma_cm_private_data(header, consumer, pd);
  EXPECT_EQ(decode_rdma_cm_header(pd), header);
  const Bytes rest = rdma_cm_consumer_data(pd);
  ASSERT_EQ(rest.size(), kRdmaCmConsumerDataSize);
  EXPECT_TRUE(std::equal(rest.begin(), rest.end(), consumer.begin()));
  EXPECT_TRUE(rdma_cm_consumer_data(Bytes(pd).first(10)).empty());

  CmReq req;
  req.service_id = rdma_cm_service_id(rdma_cm_ps::kTcp, 18515);
  req.private_data = pd;
  const auto fields = fields_of(req);
  EXPECT_EQ(fields.at("cm.rdma_cm.port_space"), "0x106");
  EXPECT_EQ(fields.at("cm.rdma_cm.port_space_name"), "'TCP'");
  EXPECT_EQ(fields.at("cm.rdma_cm.port"), fmt::format("{:#x}", 18515));
  EXPECT_EQ(fields.at("cm.rdma_cm.ip_version"), "0x4");
  EXPECT_EQ(fields.at("cm.rdma_cm.src_port"), fmt::format("{:#x}", 40000));
  EXPECT_EQ(fields.at("cm.rdma_cm.src_ip"), "0a000001");
  EXPECT_EQ(fields.at("cm.rdma_cm.dst_ip"), "0a000002");

  req.service_id = 0x1234;  // not rdma_cm: no rdma_cm.* fields
  for (const auto& [name, value] : fields_of(req))
    EXPECT_EQ(name.find("rdma_cm"), std::string::npos);
}

}  // namespace
}  // namespace roceconf
