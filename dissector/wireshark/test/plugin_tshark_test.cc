// Over 600 lines: every plugin behaviour checked in tshark shares this one fixture.
// The plugin inside tshark: captures built here with the codec (PSN gap with NAK and go-back-N,
// duplicate, PSN wrap, multi-packet READ, bad ICRC among good ones, MTU and P_Key violations,
// header checks, CM connect/reject/disconnect and the other CM messages, evidence comments)
// are dissected by `tshark -2 -T json` with the plugin loaded, and the roceconf fields and
// expert infos of every frame are checked.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dissector/analysis/test/loss_capture.h"
#include "dissector/mad/cm.h"
#include "dissector/names.h"
#include "dissector/packet.h"
#include "dissector/wireshark/test/tshark_harness.h"

namespace roceconf::wireshark::test {
namespace {

constexpr std::uint32_t kQpA = 0x11;  // the active side's QP
constexpr std::uint32_t kQpB = 0x22;

const std::vector<std::uint8_t>& payload_bytes() {
  static const std::vector<std::uint8_t> bytes = [] {
    std::vector<std::uint8_t> b(8192);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(i * 7);
    return b;
  }();
  return bytes;
}

enum class Net { kV4, kV6, kV1 };

// A frame from A (192.0.2.1) to B (192.0.2.2), or back.
Packet frame(bool from_a, Net net = Net::kV4) {
  Packet p;
  p.eth = Ethernet{};
  p.eth->src = {0x02, 0, 0, 0, 0, static_cast<std::uint8_t>(from_a ? 1 : 2)};
  p.eth->dst = {0x02, 0, 0, 0, 0, static_cast<std::uint8_t>(from_a ? 2 : 1)};
  if (net == Net::kV1) {
    p.grh = Grh{};
    if (!from_a) std::swap(p.grh->sgid, p.grh->dgid);
    return p;
  }
  if (net == Net::kV6) {
    p.ipv6 = Ipv6{};
    if (!from_a) std::swap(p.ipv6->src, p.ipv6->dst);
  } else {
    p.ipv4 = Ipv4{};
    if (!from_a) std::swap(p.ipv4->src, p.ipv4->dst);
  }
  p.udp = Udp{};
  return p;
}

Packet rc(bool from_a, std::uint8_t op, std::uint32_t psn, std::size_t payload = 0) {
  Packet p = frame(from_a);
  p.bth = Bth{};
  p.bth->opcode = op;
  p.bth->dqpn = from_a ? kQpB : kQpA;
  p.bth->psn = psn;
  p.bth->ackreq = from_a;
  p.payload = Bytes(payload_bytes().data(), payload);
  return p;
}

Packet ack(std::uint32_t psn, std::uint8_t syndrome = 0x1F, std::uint32_t msn = 0) {
  Packet p = rc(false, opcode::kRcAck, psn);
  p.aeth = Aeth{syndrome, msn};
  return p;
}

Packet cm(bool from_a, CmMessage msg, std::uint64_t tid) {
  Packet p = frame(from_a);
  p.bth = Bth{};
  p.bth->opcode = opcode::kUdSendOnly;
  p.bth->dqpn = 1;
  p.deth = Deth{0x80010000, 0, 1};
  Mad m;
  m.header.tid = tid;
  m.cm = std::move(msg);
  p.mad = std::move(m);
  return p;
}

CmReq req(std::uint8_t mtu_enum = 3, std::uint16_t pkey = 0xFFFF) {
  CmReq r;
  r.local_comm_id = 0x1000;
  r.service_id = 0x1234;
  r.local_qpn = kQpA;
  r.transport_type = cm_transport::kRc;
  r.starting_psn = 500;  // B's requests start here
  r.path_mtu = mtu_enum;
  r.pkey = pkey;
  r.responder_resources = 4;
  r.initiator_depth = 4;
  return r;
}

CmRep rep() {
  CmRep r;
  r.local_comm_id = 0x2000;
  r.remote_comm_id = 0x1000;
  r.local_qpn = kQpB;
  r.starting_psn = 100;  // A's requests start here
  r.responder_resources = 4;
  r.initiator_depth = 4;
  return r;
}

// REQ, REP and RTU: A's requests start at PSN 100.
std::vector<Packet> connect(std::uint8_t mtu_enum = 3, std::uint16_t pkey = 0xFFFF) {
  return {cm(true, req(mtu_enum, pkey), 7), cm(false, rep(), 7),
          cm(true, CmRtu{0x1000, 0x2000, {}}, 7)};
}

class PluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = tshark_unavailable();
    if (!why.empty()) GTEST_SKIP() << why;
  }

  // Encodes `packets` (1 µs apart) with their comments and dissects them.
  Dissection run(const std::vector<Packet>& packets, const std::vector<std::string>& comments = {},
                 const EncodeOptions& options = {}) {
    std::vector<Record> records;
    for (std::size_t i = 0; i < packets.size(); ++i) {
      Record r;
      r.bytes = encode(packets[i], options);
      r.ns = 1'700'000'000'000'000'000 + static_cast<std::int64_t>(i) * 1000;
      if (i < comments.size()) r.comment = comments[i];
      records.push_back(std::move(r));
    }
    return run_records(records);
  }

  Dissection run_records(const std::vector<Record>& records) {
    const std::string path = dir_.file("capture.pcapng");
    write_pcapng(path, records);
    // -T json builds a visible tree: every header field is added.
    Dissection d = dissect(dir_, path, "-2");
    EXPECT_EQ(d.status, 0) << d.error;
    EXPECT_EQ(d.error, "") << "tshark printed warnings or errors";
    EXPECT_EQ(d.frames.size(), records.size());
    d.frames.resize(records.size());
    return d;
  }

  TempDir dir_;
};

#define EXPECT_FIELD(frames, n, field, value)                                               \
  EXPECT_EQ((frames)[(n)-1].get(field), value) << "frame " << (n) << " " << (field) << "\n" \
                                               << (frames)[(n)-1].dump()
#define EXPECT_HAS(frames, n, field)                                                         \
  EXPECT_TRUE((frames)[(n)-1].has(field)) << "frame " << (n) << " lacks " << (field) << "\n" \
                                          << (frames)[(n)-1].dump()
#define EXPECT_LACKS(frames, n, field)                                                      \
  EXPECT_FALSE((frames)[(n)-1].has(field)) << "frame " << (n) << " has " << (field) << "\n" \
                                           << (frames)[(n)-1].dump()

TEST_F(PluginTest, CmConnectDataDisconnect) {
  std::vector<Packet> p = connect();
  p.push_back(rc(true, opcode::kRcSendOnly, 100, 64));            // 4
  p.push_back(ack(100));                                          // 5
  p.push_back(cm(true, CmDreq{0x1000, 0x2000, kQpB, 0, {}}, 9));  // 6
  p.push_back(cm(false, CmDrep{0x2000, 0x1000, {}}, 9));          // 7
  const auto f = run(p).frames;
  EXPECT_FIELD(f, 1, "roceconf.cm.msg", "REQ");
  EXPECT_FIELD(f, 1, "roceconf.conn.state", "req-sent");
  EXPECT_FIELD(f, 1, "roceconf.conn.pmtu", "1024");
  EXPECT_FIELD(f, 1, "roceconf.conn.pkey", "0xffff");
  EXPECT_FIELD(f, 2, "roceconf.conn.state", "rep-received");
  EXPECT_FIELD(f, 2, "roceconf.conn.request_frame", "1");
  EXPECT_FIELD(f, 2, "roceconf.conn.passive_qpn", fmt::format("{:#08x}", kQpB));  // 24 bits
  EXPECT_FIELD(f, 3, "roceconf.conn.state", "established");
  EXPECT_FIELD(f, 5, "roceconf.link", "cm");
  EXPECT_FIELD(f, 4, "roceconf.conn.state", "established");
  EXPECT_FIELD(f, 4, "roceconf.psn.expected", "0x000064");
  EXPECT_FIELD(f, 4, "roceconf.pmtu", "1024");
  EXPECT_LACKS(f, 4, "roceconf.pmtu.source");  // named only when not negotiated
  EXPECT_FIELD(f, 4, "roceconf.analysis.acked_by", "5");
  EXPECT_FIELD(f, 4, "roceconf.icrc.valid", "1");
  EXPECT_FIELD(f, 5, "roceconf.analysis.ack_frame", "4");
  EXPECT_FIELD(f, 5, "roceconf.analysis.response_time", "0.000001000");
  EXPECT_FIELD(f, 5, "roceconf.aeth.syndrome_name", "ACK");
  EXPECT_FIELD(f, 6, "roceconf.conn.state", "timewait");
  EXPECT_FIELD(f, 7, "roceconf.conn.state", "closed");
  EXPECT_FIELD(f, 7, "roceconf.conn.request_frame", "6");
  for (std::size_t i = 1; i <= f.size(); ++i) EXPECT_LACKS(f, i, "roceconf.finding");
}

TEST_F(PluginTest, CmReject) {
  CmRej rej;
  rej.local_comm_id = 0x2000;
  rej.remote_comm_id = 0x1000;
  rej.reason = 8;  // invalid Service ID
  const auto f = run({cm(true, req(), 7), cm(false, rej, 7)}).frames;
  EXPECT_FIELD(f, 2, "roceconf.conn.state", "rejected");
  EXPECT_FIELD(f, 2, "roceconf.cm.reason", "8");
  EXPECT_FIELD(f, 2, "roceconf.cm.reason_name", std::string(rej_reason_name(8)));
  EXPECT_HAS(f, 2, "roceconf.analysis.cm_rejected");
  // Fixed expert summaries (tools group by them); the values are fields.
  EXPECT_TRUE(f[1].contains("_ws.expert.message", "CM: connection rejected")) << f[1].dump();
}

TEST_F(PluginTest, OtherCmMessagesDecoded) {
  CmMra mra;
  mra.local_comm_id = 0x2000;
  mra.remote_comm_id = 0x1000;
  mra.service_timeout = 17;
  CmLap lap;
  lap.local_comm_id = 0x1000;
  lap.remote_comm_id = 0x2000;
  lap.remote_qpn = kQpB;
  CmApr apr;
  apr.local_comm_id = 0x2000;
  apr.remote_comm_id = 0x1000;
  apr.ap_status = 1;
  CmSidrReq sreq;
  sreq.request_id = 0x77;
  sreq.service_id = 0x4321;
  CmSidrRep srep;
  srep.request_id = 0x77;
  srep.qpn = 0x99;
  srep.service_id = 0x4321;
  ClassPortInfo cpi;
  cpi.resp_time_value = 18;
  const auto f = run({cm(true, req(), 7), cm(false, mra, 7), cm(false, rep(), 7),
                      cm(true, CmRtu{0x1000, 0x2000, {}}, 7), cm(true, lap, 8), cm(false, apr, 8),
                      cm(true, sreq, 10), cm(false, srep, 10), cm(true, cpi, 11)})
                     .frames;
  EXPECT_FIELD(f, 2, "roceconf.cm.msg", "MRA");
  EXPECT_FIELD(f, 2, "roceconf.cm.service_timeout", "17");
  EXPECT_FIELD(f, 2, "roceconf.conn.state", "mra-received");
  EXPECT_FIELD(f, 5, "roceconf.cm.msg", "LAP");
  // Identifiers are hexadecimal, as the field table declares them.
  EXPECT_FIELD(f, 5, "roceconf.cm.remote_qpn", fmt::format("{:#08x}", kQpB));
  EXPECT_FIELD(f, 6, "roceconf.cm.msg", "APR");
  EXPECT_FIELD(f, 6, "roceconf.cm.ap_status_name", std::string(apr_status_name(1)));
  EXPECT_FIELD(f, 7, "roceconf.cm.msg", "SIDR_REQ");
  EXPECT_FIELD(f, 7, "roceconf.cm.service_id", "0x0000000000004321");
  EXPECT_FIELD(f, 8, "roceconf.cm.msg", "SIDR_REP");
  EXPECT_FIELD(f, 8, "roceconf.cm.qpn", "0x000099");  // 24 bits, as Wireshark's IB tree
  EXPECT_FIELD(f, 8, "roceconf.cm.sidr_status_name", std::string(sidr_status_name(0)));
  EXPECT_FIELD(f, 9, "roceconf.cm.msg", "ClassPortInfo");
  EXPECT_FIELD(f, 9, "roceconf.cm.resp_time_value", "18");
}

TEST_F(PluginTest, PsnGapNakAndGoBackN) {
  const auto f = run({
                         rc(true, opcode::kRcSendOnly, 0, 32),  // 1
                         rc(true, opcode::kRcSendOnly, 1, 32),  // 2
                         rc(true, opcode::kRcSendOnly, 3, 32),  // 3: PSN 2 lost
                         ack(2, syndrome::kNakPsnSeqError),     // 4
                         rc(true, opcode::kRcSendOnly, 2, 32),  // 5: go back to 2
                         rc(true, opcode::kRcSendOnly, 3, 32),  // 6
                         ack(3),                                // 7
                     })
                     .frames;
  EXPECT_FIELD(f, 3, "roceconf.psn.expected", "0x000002");
  EXPECT_HAS(f, 3, "roceconf.analysis.out_of_sequence");
  EXPECT_TRUE(f[2].contains("roceconf.analysis.flag", "out-of-sequence"));
  for (int n : {1, 2, 5, 6}) EXPECT_LACKS(f, n, "roceconf.analysis.out_of_sequence");
  EXPECT_HAS(f, 4, "roceconf.analysis.nak_seq_error");
  EXPECT_FIELD(f, 4, "roceconf.analysis.nak_cause", "3");
  EXPECT_FIELD(f, 4, "roceconf.aeth.syndrome_name", std::string(syndrome_name(0x60)));
  EXPECT_TRUE(f[3].contains("_ws.expert.message", "NAK: PSN sequence error")) << f[3].dump();
  EXPECT_HAS(f, 6, "roceconf.analysis.retransmission");
  EXPECT_FIELD(f, 6, "roceconf.psn.retransmission_of", "3");
  EXPECT_FIELD(f, 7, "roceconf.analysis.ack_frame", "6");
  EXPECT_FIELD(f, 6, "roceconf.analysis.acked_by", "7");
  // Paired by the first response: the only request channel between the two addresses.
  EXPECT_FIELD(f, 4, "roceconf.link", "unique");
}

TEST_F(PluginTest, Duplicate) {
  const auto f =
      run({rc(true, opcode::kRcSendOnly, 0, 16), rc(true, opcode::kRcSendOnly, 1, 16),
           rc(true, opcode::kRcSendOnly, 2, 16), ack(2), rc(true, opcode::kRcSendOnly, 1, 16)})
          .frames;
  EXPECT_FIELD(f, 5, "roceconf.psn.expected", "0x000003");
  EXPECT_HAS(f, 5, "roceconf.analysis.duplicate");
  for (int n : {1, 2, 3}) EXPECT_LACKS(f, n, "roceconf.analysis.duplicate");
}

TEST_F(PluginTest, PsnWrap) {
  const auto f =
      run({rc(true, opcode::kRcSendOnly, 0xFFFFFE, 8), rc(true, opcode::kRcSendOnly, 0xFFFFFF, 8),
           rc(true, opcode::kRcSendOnly, 0, 8), rc(true, opcode::kRcSendOnly, 1, 8), ack(1)})
          .frames;
  EXPECT_FIELD(f, 3, "roceconf.psn.expected", "0x000000");
  EXPECT_FIELD(f, 4, "roceconf.psn.expected", "0x000001");
  EXPECT_FIELD(f, 5, "roceconf.analysis.ack_frame", "4");
  EXPECT_FIELD(f, 5, "roceconf.analysis.acked_count", "4");  // coalesced
  EXPECT_FIELD(f, 5, "roceconf.analysis.first_acked_frame", "1");
  for (std::size_t n = 1; n <= f.size(); ++n) {
    EXPECT_LACKS(f, n, "roceconf.analysis.out_of_sequence");
    EXPECT_LACKS(f, n, "roceconf.analysis.duplicate");
  }
}

TEST_F(PluginTest, MultiPacketRead) {
  std::vector<Packet> p = connect();  // path MTU 1024
  Packet read = rc(true, opcode::kRcReadRequest, 100);
  read.reth = Reth{0x1000, 0x55, 2500};
  p.push_back(read);  // 4
  const std::uint8_t ops[] = {opcode::kRcReadResponseFirst, opcode::kRcReadResponseMiddle,
                              opcode::kRcReadResponseLast};
  const std::size_t sizes[] = {1024, 1024, 452};
  for (int i = 0; i < 3; ++i) {
    Packet r = rc(false, ops[i], 100 + i, sizes[i]);
    if (i != 1) r.aeth = Aeth{0x1F, 1};
    p.push_back(r);  // 5, 6, 7
  }
  const auto f = run(p).frames;
  EXPECT_FIELD(f, 5, "roceconf.analysis.read_response", "1 of 3");
  EXPECT_FIELD(f, 6, "roceconf.analysis.read_response", "2 of 3");
  EXPECT_FIELD(f, 7, "roceconf.analysis.read_response", "3 of 3");
  EXPECT_FIELD(f, 7, "roceconf.analysis.read_count", "3");
  for (int n : {5, 6, 7}) {
    EXPECT_FIELD(f, n, "roceconf.analysis.ack_frame", "4");
    EXPECT_LACKS(f, n, "roceconf.analysis.read_response_split");
  }
  EXPECT_HAS(f, 4, "roceconf.analysis.acked_by");
}

TEST_F(PluginTest, BadIcrcAmongGoodOnes) {
  std::vector<Record> records;
  const Net nets[] = {Net::kV4, Net::kV6, Net::kV1};
  std::uint32_t psn = 0;
  for (Net net : nets) {
    for (bool bad : {false, true}) {
      Packet p = frame(true, net);
      p.bth = Bth{};
      p.bth->opcode = opcode::kRcSendOnly;
      p.bth->dqpn = kQpB;
      p.bth->psn = psn++;
      p.payload = Bytes(payload_bytes().data(), 40);
      Record r;
      r.bytes = encode(p);
      if (bad) r.bytes[r.bytes.size() - 10] ^= 0x40;  // a payload bit the ICRC covers
      r.ns = 1'700'000'000'000'000'000 + static_cast<std::int64_t>(psn) * 1000;
      records.push_back(std::move(r));
    }
  }
  const auto f = run_records(records).frames;
  const char* framing[] = {"RoCEv2", "RoCEv2", "RoCEv2", "RoCEv2", "RoCEv1", "RoCEv1"};
  for (std::size_t n = 1; n <= 6; ++n) {
    const bool bad = n % 2 == 0;
    EXPECT_FIELD(f, n, "roceconf.framing", framing[n - 1]);
    EXPECT_FIELD(f, n, "roceconf.icrc.valid", bad ? "0" : "1");
    EXPECT_HAS(f, n, "roceconf.icrc.expected");
    if (bad) {
      EXPECT_HAS(f, n, "roceconf.finding.bad_icrc");
      EXPECT_TRUE(f[n - 1].contains("roceconf.finding", "bad-icrc"));
      EXPECT_NE(f[n - 1].get("roceconf.icrc.expected"), f[n - 1].get("roceconf.icrc.value"));
    } else {
      EXPECT_LACKS(f, n, "roceconf.finding.bad_icrc");
      EXPECT_LACKS(f, n, "roceconf.icrc.value");  // the carried value only when wrong
    }
  }
}

TEST_F(PluginTest, MtuViolations) {
  std::vector<Packet> p = connect();                       // path MTU 1024
  p.push_back(rc(true, opcode::kRcSendFirst, 100, 512));   // 4: FIRST shorter than the PMTU
  p.push_back(rc(true, opcode::kRcSendLast, 101, 100));    // 5
  p.push_back(rc(true, opcode::kRcSendOnly, 102, 2048));   // 6: ONLY over it
  p.push_back(rc(true, opcode::kRcSendFirst, 103, 1024));  // 7: fine
  p.push_back(rc(true, opcode::kRcSendLast, 104, 1500));   // 8: LAST over it
  const auto f = run(p).frames;
  EXPECT_HAS(f, 4, "roceconf.analysis.mtu_short_first_middle");
  EXPECT_HAS(f, 6, "roceconf.analysis.mtu_exceeded");
  EXPECT_HAS(f, 8, "roceconf.analysis.mtu_exceeded");
  for (int n : {5, 7}) {
    EXPECT_LACKS(f, n, "roceconf.analysis.mtu_exceeded");
    EXPECT_LACKS(f, n, "roceconf.analysis.mtu_short_first_middle");
  }
  EXPECT_TRUE(f[5].contains("_ws.expert.message", "Payload exceeds the path MTU")) << f[5].dump();
}

TEST_F(PluginTest, PkeyMismatch) {
  std::vector<Packet> p = connect(3, 0xFFFF);
  p.push_back(rc(true, opcode::kRcSendOnly, 100, 8));  // 4
  Packet wrong = rc(true, opcode::kRcSendOnly, 101, 8);
  wrong.bth->pkey = 0x8001;
  p.push_back(wrong);  // 5
  const auto f = run(p).frames;
  EXPECT_LACKS(f, 4, "roceconf.analysis.pkey_mismatch");
  EXPECT_HAS(f, 5, "roceconf.analysis.pkey_mismatch");
  EXPECT_FIELD(f, 1, "roceconf.conn.pkey", "0xffff");
  EXPECT_TRUE(f[4].contains("_ws.expert.message", "P_Key differs from the connection's"))
      << f[4].dump();
  EXPECT_FIELD(f, 5, "roceconf.bth.pkey", "0x8001");  // hex, as the table shows it
}

TEST_F(PluginTest, HeaderChecksAndNakNames) {
  Packet tver = rc(true, opcode::kRcSendOnly, 0, 8);
  tver.bth->version = 1;
  Packet reserved = rc(true, opcode::kRcSendOnly, 1, 8);
  reserved.bth->resv7 = 0x11;
  Packet pad = rc(true, opcode::kRcSendOnly, 2, 8);
  pad.bth->padcount = 3;  // 8 bytes need no pad
  std::vector<Record> records;
  EncodeOptions keep_pad;
  keep_pad.fill_pad = false;
  for (const Packet* p : {&tver, &reserved, &pad}) {
    Record r;
    r.bytes = encode(*p, keep_pad);
    records.push_back(std::move(r));
  }
  Record rnr;
  rnr.bytes = encode(ack(3, static_cast<std::uint8_t>(syndrome::kRnrBase | 14)));
  records.push_back(std::move(rnr));
  Record inv;
  inv.bytes = encode(ack(3, syndrome::kNakInvalidRequest));
  records.push_back(std::move(inv));
  const auto f = run_records(records).frames;
  EXPECT_HAS(f, 1, "roceconf.finding.bth_tver");
  EXPECT_HAS(f, 2, "roceconf.finding.reserved_bits");
  EXPECT_HAS(f, 3, "roceconf.finding.pad_count");
  EXPECT_FIELD(f, 4, "roceconf.aeth.syndrome_name", "RNR_NAK");
  EXPECT_FIELD(f, 4, "roceconf.aeth.rnr_timer_usec", std::to_string(rnr_timer_usec(14)));
  EXPECT_HAS(f, 4, "roceconf.analysis.nak_rnr");
  EXPECT_FIELD(f, 5, "roceconf.aeth.syndrome_name", std::string(syndrome_name(0x61)));
  EXPECT_HAS(f, 5, "roceconf.analysis.nak_invalid_request");
}

TEST_F(PluginTest, EvidenceComments) {
  const std::vector<std::string> comments = {
      "roceconf case=psn/in-order-ack step=cases/psn/in-order-ack.rcase:5 verdict=pass "
      "event=sent note=RC SEND_ONLY psn=0x000000 len=8",
      "roceconf case=psn/gap-naks-once step=cases/psn/gap-naks-once.rcase:9 verdict=fail "
      "event=received failed=yes note=RC ACK psn=0x000000 msn=1",
      "a comment of someone else",
      "roceconf case=psn/gap-naks-once step=cases/psn/gap-naks-once.rcase:8 verdict=fail "
      "event=sent note=RC SEND_ONLY psn=0x000001 len=8",
  };
  const auto f = run({rc(true, opcode::kRcSendOnly, 0, 8), ack(0),
                      rc(true, opcode::kRcSendOnly, 1, 8), rc(true, opcode::kRcSendOnly, 1, 8)},
                     comments)
                     .frames;
  EXPECT_FIELD(f, 1, "roceconf.case", "psn/in-order-ack");
  EXPECT_FIELD(f, 1, "roceconf.verdict", "pass");
  EXPECT_FIELD(f, 1, "roceconf.step", "cases/psn/in-order-ack.rcase:5");
  EXPECT_FIELD(f, 1, "roceconf.event", "sent");
  EXPECT_FIELD(f, 1, "roceconf.note", "RC SEND_ONLY psn=0x000000 len=8");
  EXPECT_LACKS(f, 1, "roceconf.verdict.fail");
  EXPECT_FIELD(f, 2, "roceconf.case", "psn/gap-naks-once");
  EXPECT_FIELD(f, 2, "roceconf.verdict", "fail");
  EXPECT_FIELD(f, 2, "roceconf.event", "received");
  EXPECT_HAS(f, 2, "roceconf.verdict.fail");
  EXPECT_LACKS(f, 3, "roceconf.case");
  // A frame of the failed case from a step that did not fail it: no failure mark.
  EXPECT_FIELD(f, 4, "roceconf.verdict", "fail");
  EXPECT_LACKS(f, 4, "roceconf.verdict.fail");
}

TEST_F(PluginTest, SinglePassDisplayFilter) {
  std::vector<Record> records;
  for (std::uint32_t psn : {0u, 1u, 3u}) {
    Record r;
    r.bytes = encode(rc(true, opcode::kRcSendOnly, psn, 8));
    records.push_back(std::move(r));
  }
  const std::string path = dir_.file("gap.pcapng");
  write_pcapng(path, records);
  const auto r = testutil::run(tshark_command(dir_.path()) + " -r " + quote(path) +
                               " -Y roceconf.analysis.out_of_sequence -T fields -e frame.number "
                               "-e roceconf.psn.expected 2>&1");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output, "3\t0x000002\n");
}

TEST_F(PluginTest, LoadsWithoutWarnings) {
#ifdef ROCECONF_SANITIZER_PRELOAD
  GTEST_SKIP() << "tshark -G starts Wireshark's extcap helpers, which would inherit the preloaded "
                  "sanitizer runtimes; the plain build checks loading";
#endif
  const auto r = testutil::run(tshark_command(dir_.path()) + " -G plugins 2>&1");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("roceconf.so"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("arning"), std::string::npos) << r.output;
  const auto p = testutil::run(tshark_command(dir_.path()) + " -G protocols 2>&1");
  EXPECT_NE(p.output.find("\troceconf\troceconf"), std::string::npos);
}

// The real loss capture (rxe, netem loss, go-back-N losing packets again), frames 44-66 as
// ../shared/captures/README.md reads them: the responder's expected PSN, out of sequence (one
// NAK owed per gap), go-back-N resends that are retransmissions and never duplicates, and the
// request each NAK answers.
TEST_F(PluginTest, LossCaptureFollowsTheResponder) {
  using namespace analysis::test;
  const std::filesystem::path shared =
      std::filesystem::path(ROCECONF_SHARED_CAPTURES) / kLossCapture;
  if (!std::filesystem::exists(shared))
    GTEST_SKIP() << "shared capture " << kLossCapture << " is absent from "
                 << ROCECONF_SHARED_CAPTURES;
  // A copy the unprivileged tshark can surely read.
  const std::string path = dir_.file("loss.pcap");
  std::filesystem::copy_file(shared, path);
  ::chmod(path.c_str(), 0644);
  Dissection d = dissect(dir_, path, "-2");
  ASSERT_EQ(d.status, 0) << d.error;
  const auto& f = d.frames;
  ASSERT_GE(f.size(), 66u);
  for (const LossRequest& want : loss_requests()) {
    const std::uint64_t n = want.frame;
    EXPECT_FIELD(f, n, "roceconf.psn.expected",
                 fmt::format("{:#08x}", kLossPsnBase | want.expected));
    EXPECT_FIELD(f, n, "roceconf.psn.state", std::string(want.state));
    EXPECT_FIELD(f, n, "roceconf.psn.nak_due", want.nak_due ? "1" : "");
    EXPECT_FIELD(f, n, "roceconf.psn.retransmission_of",
                 want.retransmission_of != 0 ? std::to_string(want.retransmission_of) : "");
    EXPECT_FIELD(f, n, "roceconf.psn.resent_after_nak",
                 want.resent_after_nak != 0 ? std::to_string(want.resent_after_nak) : "");
    EXPECT_EQ(f[n - 1].has("roceconf.analysis.out_of_sequence"), want.state == "out-of-sequence")
        << "frame " << n << "\n"
        << f[n - 1].dump();
    EXPECT_EQ(f[n - 1].has("roceconf.analysis.retransmission"), want.retransmission)
        << "frame " << n << "\n"
        << f[n - 1].dump();
    EXPECT_LACKS(f, n, "roceconf.analysis.duplicate");
  }
  for (const LossResponse& want : loss_responses()) {
    const std::uint64_t n = want.frame;
    EXPECT_FIELD(f, n, "roceconf.analysis.nak_cause",
                 want.nak_cause != 0 ? std::to_string(want.nak_cause) : "");
    EXPECT_EQ(f[n - 1].has("roceconf.analysis.nak_seq_error"), want.nak) << "frame " << n;
    EXPECT_LACKS(f, n, "roceconf.analysis.not_captured");
    EXPECT_LACKS(f, n, "roceconf.analysis.nak_repeated");
  }
  EXPECT_TRUE(f[62].contains("_ws.expert.message", "NAK: PSN sequence error")) << f[62].dump();
  // Frame 652 resends 0x95c564 after it was accepted (frame 648): the one real duplicate.
  for (std::size_t n = 1; n <= f.size(); ++n) {
    EXPECT_EQ(f[n - 1].has("roceconf.analysis.duplicate"), n == 652) << "frame " << n;
    EXPECT_FALSE(f[n - 1].has("roceconf.analysis.not_captured")) << "frame " << n;
  }
}

std::vector<std::vector<std::string>> connection_rows(const TempDir& dir, const std::string& path,
                                                      const std::string& extra) {
  const ConnectionTable t = connection_table(dir, path, extra);
  EXPECT_EQ(t.status, 0) << t.output;
  return t.rows;
}

// The statistics table, on one pass and on two: one row per direction with the numbers
// `roceconf decode --connections` prints (columns: requester, responder, CM, packets, bytes,
// messages, retransmissions, out of sequence, duplicates, NAKs, RNR NAKs, RNR wait, p50, p99,
// goodput, not captured, grade).
TEST_F(PluginTest, ConnectionsTable) {
  std::vector<Packet> packets = connect();
  for (const Packet& p : std::vector<Packet>{
           rc(true, opcode::kRcSendOnly, 100, 32), rc(true, opcode::kRcSendOnly, 101, 32),
           rc(true, opcode::kRcSendOnly, 103, 32),  // 102 lost
           ack(102, syndrome::kNakPsnSeqError), rc(true, opcode::kRcSendOnly, 102, 32),
           rc(true, opcode::kRcSendOnly, 103, 32), ack(103)})
    packets.push_back(p);
  std::vector<Record> records;
  for (std::size_t i = 0; i < packets.size(); ++i) {
    Record r;
    r.bytes = encode(packets[i]);
    r.ns = 1'700'000'000'000'000'000 + static_cast<std::int64_t>(i) * 1000;
    records.push_back(std::move(r));
  }
  const std::string path = dir_.file("conn.pcapng");
  write_pcapng(path, records);
  for (const std::string passes : {"", "-2"}) {
    const auto rows = connection_rows(dir_, path, passes + " -z roceconf,conn");
    ASSERT_EQ(rows.size(), 1u) << passes;
    const auto& r = rows[0];
    ASSERT_GE(r.size(), 17u);
    EXPECT_EQ(r[0], "192.0.2.1 QP 0x000011") << passes;
    EXPECT_EQ(r[1], "192.0.2.2 QP 0x000022");
    EXPECT_EQ(r[2], "1");  // bound through CM
    EXPECT_EQ(r[3], "7");  // 5 requests and 2 responses; the CM MADs are not data
    EXPECT_EQ(r[5], "4");  // messages: PSNs 100-103
    EXPECT_EQ(r[6], "2");  // the resends of 102 (first copy lost before the capture) and 103
    EXPECT_EQ(r[7], "1");  // 103 the first time
    EXPECT_EQ(r[9], "1/0/0/0/0");
    EXPECT_EQ(r[15], "0");
    EXPECT_EQ(r[16], "complete");
  }
  // A display filter limits what the table counts.
  const auto requests_only =
      connection_rows(dir_, path, "-z roceconf,conn,roceconf.analysis.out_of_sequence");
  ASSERT_EQ(requests_only.size(), 1u);
  EXPECT_EQ(requests_only[0][3], "1");
}

// The real loss capture: the write stream's direction as Wireshark's own InfiniBand dissector
// counts it (572 requests and 35 responses, 2,380,450 bytes, 18 sequence-error NAKs).
TEST_F(PluginTest, ConnectionsTableOfTheLossCapture) {
  using namespace analysis::test;
  const std::filesystem::path shared =
      std::filesystem::path(ROCECONF_SHARED_CAPTURES) / kLossCapture;
  if (!std::filesystem::exists(shared))
    GTEST_SKIP() << "shared capture " << kLossCapture << " is absent from "
                 << ROCECONF_SHARED_CAPTURES;
  const std::string path = dir_.file("loss.pcap");
  std::filesystem::copy_file(shared, path);
  ::chmod(path.c_str(), 0644);
  const auto rows = connection_rows(dir_, path, "-z roceconf,conn");
  ASSERT_EQ(rows.size(), 3u);
  const auto& w = rows[2];
  EXPECT_EQ(w[0], "192.0.2.11 QP 0x00002a");
  EXPECT_EQ(w[1], "192.0.2.12 QP 0x000029");
  EXPECT_EQ(w[2], "2");
  EXPECT_EQ(w[3], "607");
  EXPECT_EQ(w[4], "2380450");
  EXPECT_EQ(w[9], "18/0/0/0/0");
  EXPECT_EQ(w[16], "complete");
}

// The sentence with the values stays in the tree, on the item the fixed expert info belongs to.
TEST_F(PluginTest, ExpertDetailsInTheTree) {
  std::vector<Record> records;
  std::int64_t ns = 1'700'000'000'000'000'000;
  for (const Packet& p :
       {rc(true, opcode::kRcSendOnly, 0, 32), rc(true, opcode::kRcSendOnly, 2, 32),
        ack(1, syndrome::kNakPsnSeqError)}) {
    Record r;
    r.bytes = encode(p);
    r.ns = ns += 1000;
    records.push_back(std::move(r));
  }
  const std::string path = dir_.file("details.pcapng");
  write_pcapng(path, records);
  const auto r = testutil::run(tshark_command(dir_.path()) + " -r " + quote(path) + " -2 -V 2>&1");
  EXPECT_NE(r.output.find("Analysis flag: nak-seq-error (NAK PSN sequence error, expected PSN "
                          "0x000001 (caused by frame 2))"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("[NAK: PSN sequence error]"), std::string::npos) << r.output;
  // Requests name their sending QP once a response has paired the directions.
  EXPECT_NE(r.output.find("[Analysis: request 192.0.2.1 -> 192.0.2.2 QP 0x000022]"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("[Analysis: response 192.0.2.2 QP 0x000022 -> 192.0.2.1 QP 0x000011]"),
            std::string::npos)
      << r.output;
}

// Without any preference, -T fields -e fills the codec's fields on every RoCE frame of the real
// captures, and -z expert groups each kind of judgement on one line.
TEST_F(PluginTest, FieldsAndExpertsOnTheRealCaptures) {
  const std::filesystem::path shared(ROCECONF_SHARED_CAPTURES);
  if (!std::filesystem::is_directory(shared))
    GTEST_SKIP() << "shared capture folder " << ROCECONF_SHARED_CAPTURES << " is absent";
  std::size_t captures = 0;
  for (const auto& entry : std::filesystem::directory_iterator(shared)) {
    if (entry.path().extension() != ".pcap") continue;
    ++captures;
    SCOPED_TRACE(entry.path().filename().string());
    const std::string path = dir_.file(entry.path().filename().string());
    std::filesystem::copy_file(entry.path(), path);
    ::chmod(path.c_str(), 0644);
    const auto r = testutil::run(tshark_command(dir_.path()) + " -r " + quote(path) +
                                 " -Y roceconf.framing -T fields -e roceconf.bth.psn"
                                 " -e roceconf.bth.dqpn 2>/dev/null");
    ASSERT_EQ(r.status, 0);
    std::istringstream in(r.output);
    std::size_t lines = 0;
    for (std::string line; std::getline(in, line); ++lines) {
      const auto tab = line.find('\t');
      ASSERT_NE(tab, std::string::npos) << line;
      EXPECT_TRUE(line.starts_with("0x") && line.substr(tab + 1).starts_with("0x")) << line;
    }
    EXPECT_GT(lines, 0u);
  }
  EXPECT_GT(captures, 0u);

  const std::string loss = dir_.file(std::string(analysis::test::kLossCapture));
  if (!std::filesystem::exists(loss)) return;
  const auto r = testutil::run(tshark_command(dir_.path()) + " -r " + quote(loss) +
                               " -q -z expert 2>/dev/null");
  ASSERT_EQ(r.status, 0);
  std::map<std::string, int> summaries;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find("  roceconf  ");
    if (at != std::string::npos) ++summaries[line.substr(at + 12)];
  }
  for (const auto& [summary, lines] : summaries) EXPECT_EQ(lines, 1) << summary;
  EXPECT_EQ(summaries.count("Request PSN ahead of the expected PSN"), 1u) << r.output;
  EXPECT_EQ(summaries.count("NAK: PSN sequence error"), 1u) << r.output;
  EXPECT_NE(r.output.find("18   Response           roceconf  NAK: PSN sequence error"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace roceconf::wireshark::test
