// CM connection tracking, and data packets judged against what CM negotiated.
#include "dissector/analysis/cm_tracker.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dissector/analysis/test/frames.h"

namespace roceconf::analysis {
namespace {

using namespace test;

const std::vector<std::string> kNoProblems;
constexpr std::uint64_t kTid = 0x0000000100000abcull;
constexpr std::uint32_t kCommA = 0x1000;
constexpr std::uint32_t kCommB = 0x2000;

CmReq req() {
  CmReq r;
  r.local_comm_id = kCommA;
  r.service_id = 0x0000000001060000ull | 7471;
  r.local_qpn = kQpA;
  r.starting_psn = 500;
  r.path_mtu = 3;  // 1024
  r.pkey = 0x8001;
  r.responder_resources = 4;
  r.initiator_depth = 2;
  return r;
}

CmRep rep() {
  CmRep r;
  r.local_comm_id = kCommB;
  r.remote_comm_id = kCommA;
  r.local_qpn = kQpB;
  r.starting_psn = 900;
  r.responder_resources = 2;
  r.initiator_depth = 4;
  return r;
}

CmRtu rtu() {
  CmRtu r;
  r.local_comm_id = kCommA;
  r.remote_comm_id = kCommB;
  return r;
}

// REQ, REP, RTU between A (active) and B.
void connect(Stream& s) {
  s.send(cm(true, req(), kTid));
  s.send(cm(false, rep(), kTid));
  s.send(cm(true, rtu(), kTid));
}

Packet with_pkey(Packet p, std::uint16_t pkey) {
  p.bth->pkey = pkey;
  return p;
}

TEST(CmTracker, ReqRepRtuEstablishes) {
  Stream s;
  const FrameAnalysis& f1 = s.send(cm(true, req(), kTid));
  ASSERT_TRUE(f1.cm);
  EXPECT_EQ(f1.cm->connection, 1u);
  EXPECT_EQ(f1.cm->message, "REQ");
  EXPECT_EQ(f1.cm->state, CmState::kReqSent);
  EXPECT_TRUE(f1.cm->from_active);
  EXPECT_EQ(problems(f1), kNoProblems);

  const FrameAnalysis& f2 = s.send(cm(false, rep(), kTid));
  EXPECT_EQ(f2.cm->connection, 1u);
  EXPECT_EQ(f2.cm->state, CmState::kRepReceived);
  EXPECT_FALSE(f2.cm->from_active);
  EXPECT_FALSE(f2.cm->tid_mismatch);
  EXPECT_EQ(f2.cm->request_frame, 1u);

  const FrameAnalysis& f3 = s.send(cm(true, rtu(), kTid));
  EXPECT_EQ(f3.cm->state, CmState::kEstablished);
  EXPECT_EQ(problems(f3), kNoProblems);

  const CmConnection* c = s.analyzer.cm().connection(1);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->service_id, 0x0000000001060000ull | 7471);
  EXPECT_EQ(c->active_qpn, kQpA);
  EXPECT_EQ(c->passive_qpn, kQpB);
  EXPECT_EQ(c->req_starting_psn, 500u);
  EXPECT_EQ(c->rep_starting_psn, 900u);
  EXPECT_EQ(c->pmtu, 1024u);
  EXPECT_EQ(c->pkey, 0x8001);
  EXPECT_EQ(c->req_responder_resources, 4);
  EXPECT_EQ(c->req_initiator_depth, 2);
  EXPECT_EQ(c->rep_responder_resources, 2);
  EXPECT_EQ(c->passive_comm_id, kCommB);
  EXPECT_EQ(c->established_frame, 3u);
  EXPECT_FALSE(c->established_by_data);

  const NetAddress a = NetAddress::ipv4({192, 0, 2, 1});
  const NetAddress b = NetAddress::ipv4({192, 0, 2, 2});
  EXPECT_EQ(s.analyzer.cm().find(a, b, kQpB), c);
  EXPECT_EQ(s.analyzer.cm().find(b, a, kQpA), c);
  EXPECT_EQ(s.analyzer.cm().find(a, b, kQpA), nullptr);
}

TEST(CmTracker, DataLinkedToConnection) {
  Stream s;
  connect(s);
  // The active side's requests start at the REP's Starting PSN.
  const FrameAnalysis& d1 = s.send(with_pkey(request(opcode::kRcSendOnly, 900, 64), 0x8001));
  ASSERT_TRUE(d1.rc);
  EXPECT_EQ(d1.rc->connection, 1u);
  EXPECT_EQ(d1.rc->link, LinkSource::kCm);
  EXPECT_EQ(d1.rc->pmtu, 1024u);
  EXPECT_EQ(d1.rc->pmtu_source, PmtuSource::kCm);
  EXPECT_EQ(d1.rc->expected_psn, 900u);
  EXPECT_EQ(problems(d1), kNoProblems);

  // Wrong partition, payload above the negotiated MTU.
  const FrameAnalysis& d2 = s.send(with_pkey(request(opcode::kRcSendOnly, 901, 1100), 0x8002));
  ASSERT_TRUE(d2.has(FlagCode::kPkeyMismatch));
  EXPECT_EQ(d2.find(FlagCode::kPkeyMismatch)->text(),
            "P_Key 0x8002 does not match P_Key 0x8001 negotiated by CM (connection 1)");
  ASSERT_TRUE(d2.has(FlagCode::kMtuExceeded));
  EXPECT_EQ(d2.find(FlagCode::kMtuExceeded)->text(),
            "payload of 1100 bytes exceeds the negotiated path MTU 1024");
  // A limited member of the partition still matches the full member the REQ named.
  EXPECT_FALSE(
      s.send(with_pkey(request(opcode::kRcSendOnly, 902, 8), 0x0001)).has(FlagCode::kPkeyMismatch));

  // B's ACK goes to A's QP: paired through CM, not by guessing.
  const FrameAnalysis& a = s.send(with_pkey(ack(902, 3), 0x8001));
  EXPECT_EQ(a.rc->link, LinkSource::kCm);
  EXPECT_EQ(a.rc->acked_count, 3u);
  EXPECT_EQ(problems(a), kNoProblems);

  // B's own requests start at the REQ's Starting PSN.
  const FrameAnalysis& b1 =
      s.send(with_pkey(request(opcode::kRcSendOnly, 501, 8, /*from_a=*/false), 0x8001));
  ASSERT_TRUE(b1.has(FlagCode::kOutOfSequence));
  EXPECT_EQ(b1.rc->expected_psn, 500u);

  // A FIRST shorter than the negotiated MTU.
  const FrameAnalysis& d3 = s.send(with_pkey(request(opcode::kRcSendFirst, 903, 512), 0x8001));
  EXPECT_TRUE(d3.has(FlagCode::kMtuShortFirstMiddle));
}

TEST(CmTracker, FirstDataEstablishesWithoutRtu) {
  Stream s;
  s.send(cm(true, req(), kTid));
  s.send(cm(false, rep(), kTid));
  const FrameAnalysis& d = s.send(with_pkey(request(opcode::kRcSendOnly, 900, 8), 0x8001));
  ASSERT_TRUE(d.has(FlagCode::kCmEstablishedByData));
  EXPECT_EQ(d.find(FlagCode::kCmEstablishedByData)->text(),
            "first data before RTU: connection 1 established");
  const CmConnection* c = s.analyzer.cm().connection(1);
  EXPECT_EQ(c->state, CmState::kEstablished);
  EXPECT_TRUE(c->established_by_data);
  EXPECT_EQ(c->established_frame, 3u);
  // A late RTU is still fine.
  EXPECT_EQ(problems(s.send(cm(true, rtu(), kTid))), kNoProblems);
}

TEST(CmTracker, RejectWithReason) {
  Stream s;
  s.send(cm(true, req(), kTid));
  CmRej rej;
  rej.local_comm_id = 0;  // rejected before the passive side committed an ID
  rej.remote_comm_id = kCommA;
  rej.reason = 8;
  const FrameAnalysis& f = s.send(cm(false, rej, kTid));
  EXPECT_EQ(f.cm->connection, 1u);
  EXPECT_EQ(f.cm->state, CmState::kRejected);
  EXPECT_EQ(f.cm->reject_reason, 8);
  ASSERT_TRUE(f.has(FlagCode::kCmRejected));
  EXPECT_EQ(f.find(FlagCode::kCmRejected)->text(), "REQ rejected, reason 8 (Invalid Service ID)");
  EXPECT_EQ(s.analyzer.cm().connection(1)->reject_reason, 8);
}

TEST(CmTracker, DisconnectDreqDrep) {
  Stream s;
  connect(s);
  CmDreq dreq;
  dreq.local_comm_id = kCommB;  // the passive side disconnects
  dreq.remote_comm_id = kCommA;
  dreq.remote_qpn = kQpA;
  const FrameAnalysis& f4 = s.send(cm(false, dreq, 0x77));
  EXPECT_EQ(f4.cm->connection, 1u);
  EXPECT_EQ(f4.cm->state, CmState::kTimewait);
  EXPECT_FALSE(f4.cm->from_active);
  CmDrep drep;
  drep.local_comm_id = kCommA;
  drep.remote_comm_id = kCommB;
  const FrameAnalysis& f5 = s.send(cm(true, drep, 0x77));
  EXPECT_EQ(f5.cm->state, CmState::kClosed);
  EXPECT_EQ(f5.cm->request_frame, 4u);
  EXPECT_EQ(problems(f5), kNoProblems);
  // A DREP repeated: a retransmission.
  EXPECT_TRUE(s.send(cm(true, drep, 0x77)).cm->retransmission);
}

TEST(CmTracker, DuplicatesRetransmissionsAndTids) {
  Stream s;
  s.send(cm(true, req(), kTid));
  const FrameAnalysis& dup = s.send(cm(true, req(), kTid));
  EXPECT_TRUE(dup.cm->duplicate);
  EXPECT_EQ(dup.cm->connection, 1u);
  ASSERT_TRUE(dup.has(FlagCode::kCmDuplicateReq));
  EXPECT_EQ(dup.find(FlagCode::kCmDuplicateReq)->frame, 1u);
  EXPECT_EQ(s.analyzer.cm().connection(1)->req_count, 2u);

  const FrameAnalysis& bad = s.send(cm(false, rep(), kTid + 1));
  EXPECT_TRUE(bad.cm->tid_mismatch);
  ASSERT_TRUE(bad.has(FlagCode::kCmTidMismatch));
  EXPECT_EQ(bad.find(FlagCode::kCmTidMismatch)->text(),
            "TID 0x0000000100000abd does not echo the REQ TID 0x0000000100000abc (frame 1)");
  const FrameAnalysis& again = s.send(cm(false, rep(), kTid));
  EXPECT_TRUE(again.cm->retransmission);
  EXPECT_EQ(s.analyzer.cm().connection(1)->rep_count, 2u);

  CmRtu stray = rtu();
  stray.local_comm_id = 0x9999;
  const FrameAnalysis& unknown = s.send(cm(true, stray, kTid));
  EXPECT_TRUE(unknown.cm->unknown_comm_id);
  EXPECT_EQ(unknown.cm->connection, 0u);
  EXPECT_TRUE(unknown.has(FlagCode::kCmUnknownCommId));

  // DREP with the wrong TID.
  s.send(cm(true, rtu(), kTid));
  CmDreq dreq;
  dreq.local_comm_id = kCommA;
  dreq.remote_comm_id = kCommB;
  s.send(cm(true, dreq, 0x55));
  CmDrep drep;
  drep.local_comm_id = kCommB;
  drep.remote_comm_id = kCommA;
  EXPECT_TRUE(s.send(cm(false, drep, 0x56)).has(FlagCode::kCmTidMismatch));
}

TEST(CmTracker, MraThenRep) {
  Stream s;
  s.send(cm(true, req(), kTid));
  CmMra mra;
  mra.local_comm_id = kCommB;
  mra.remote_comm_id = kCommA;
  const FrameAnalysis& m = s.send(cm(false, mra, kTid));
  EXPECT_EQ(m.cm->state, CmState::kMraReceived);
  EXPECT_EQ(problems(m), kNoProblems);
  EXPECT_EQ(s.send(cm(false, rep(), kTid)).cm->state, CmState::kRepReceived);
}

TEST(CmTracker, UnexpectedMessages) {
  Stream s;
  s.send(cm(true, req(), kTid));
  // RTU before any REP.
  const FrameAnalysis& early = s.send(cm(true, rtu(), kTid));
  ASSERT_TRUE(early.has(FlagCode::kCmUnexpected));
  EXPECT_EQ(early.find(FlagCode::kCmUnexpected)->text(), "RTU unexpected in state req-sent");
}

TEST(CmTracker, QpnReuseStartsAFreshFlow) {
  Stream s;
  connect(s);
  s.send(request(opcode::kRcSendOnly, 900, 8));
  s.send(request(opcode::kRcSendOnly, 901, 8));
  CmDreq dreq;
  dreq.local_comm_id = kCommA;
  dreq.remote_comm_id = kCommB;
  s.send(cm(true, dreq, 0x55));
  CmDrep drep;
  drep.local_comm_id = kCommB;
  drep.remote_comm_id = kCommA;
  s.send(cm(false, drep, 0x55));
  // Same QPNs, new communication IDs and PSNs.
  CmReq r2 = req();
  r2.local_comm_id = 0x3000;
  r2.starting_psn = 10;
  CmRep p2 = rep();
  p2.local_comm_id = 0x4000;
  p2.remote_comm_id = 0x3000;
  p2.starting_psn = 20;
  CmRtu u2;
  u2.local_comm_id = 0x3000;
  u2.remote_comm_id = 0x4000;
  s.send(cm(true, r2, kTid + 5));
  s.send(cm(false, p2, kTid + 5));
  s.send(cm(true, u2, kTid + 5));
  const FrameAnalysis& d = s.send(with_pkey(request(opcode::kRcSendOnly, 20, 8), 0x8001));
  EXPECT_EQ(d.rc->connection, 2u);
  EXPECT_EQ(d.rc->expected_psn, 20u);
  EXPECT_EQ(problems(d), kNoProblems);
  EXPECT_EQ(s.analyzer.stats().rc.window_entries, 1u);  // the closed connection's were freed
}

TEST(CmTracker, StartPsnTakenFromTheWrongMessage) {
  Stream s;
  connect(s);
  // The active side starts at its own REQ's Starting PSN instead of the REP's.
  const FrameAnalysis& d = s.send(with_pkey(request(opcode::kRcSendOnly, 500, 8), 0x8001));
  ASSERT_TRUE(d.has(FlagCode::kCmStartPsn));
  EXPECT_FALSE(d.has(FlagCode::kOutOfSequence));
  EXPECT_EQ(d.find(FlagCode::kCmStartPsn)->text(),
            "first request PSN 0x0001f4 is the REQ Starting PSN; the active side's requests "
            "start at the REP Starting PSN 0x000384");
  // Judged from there on.
  EXPECT_EQ(problems(s.send(with_pkey(request(opcode::kRcSendOnly, 501, 8), 0x8001))), kNoProblems);
  // Any other PSN is plainly out of sequence.
  Stream t;
  connect(t);
  const FrameAnalysis& e = t.send(with_pkey(request(opcode::kRcSendOnly, 1234, 8), 0x8001));
  EXPECT_TRUE(e.has(FlagCode::kOutOfSequence));
  EXPECT_FALSE(e.has(FlagCode::kCmStartPsn));
}

}  // namespace
}  // namespace roceconf::analysis
