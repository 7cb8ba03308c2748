// RC request/response analysis without CM: pairing, PSN sequence, NAKs, READ responses, MSN.
#include "dissector/analysis/rc_tracker.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dissector/analysis/test/frames.h"
#include "dissector/names.h"

namespace roceconf::analysis {
namespace {

using namespace test;
using opcode::kRcSendFirst;
using opcode::kRcSendLast;
using opcode::kRcSendMiddle;
using opcode::kRcSendOnly;

const std::vector<std::string> kNoProblems;

TEST(RcTracker, InOrderAckPairing) {
  Stream s;
  const FrameAnalysis& req = s.send(request(kRcSendOnly, 100, 64));
  ASSERT_TRUE(req.rc);
  EXPECT_EQ(req.rc->role, RcRole::kRequest);
  EXPECT_EQ(req.rc->expected_psn, 100u);
  EXPECT_EQ(problems(req), kNoProblems);

  const FrameAnalysis& resp = s.send(ack(100, 1));
  ASSERT_TRUE(resp.rc);
  EXPECT_EQ(resp.rc->role, RcRole::kResponse);
  EXPECT_EQ(resp.rc->request_frame, 1u);
  EXPECT_EQ(resp.rc->response_time_ns, 1000);
  EXPECT_EQ(resp.rc->acked_count, 1u);
  EXPECT_EQ(resp.rc->link, LinkSource::kUnique);
  EXPECT_EQ(resp.rc->peer_channel, req.rc->channel);
  EXPECT_EQ(resp.rc->msn, 1u);
  ASSERT_TRUE(resp.has(FlagCode::kAcks));
  EXPECT_EQ(resp.find(FlagCode::kAcks)->text(), "acknowledges frame 1 after 1.0 µs");
  EXPECT_EQ(problems(resp), kNoProblems);

  // The request's stored result learnt its answer.
  const FrameAnalysis& again = s.at(1);
  EXPECT_EQ(again.rc->acked_by, 2u);
  EXPECT_EQ(again.rc->ack_delay_ns, 1000);
  ASSERT_TRUE(again.has(FlagCode::kAckedBy));
  EXPECT_EQ(again.find(FlagCode::kAckedBy)->text(), "acked by frame 2 after 1.0 µs");
  // A second visit returns the stored result, not a new judgement.
  const FrameAnalysis& revisit = s.analyzer.add(1, 0, decode(encode(request(kRcSendOnly, 7))));
  EXPECT_EQ(&revisit, &again);
  EXPECT_EQ(s.analyzer.stats().frames, 2u);
}

TEST(RcTracker, PsnGapNakAndGoBackN) {
  Stream s;
  s.send(request(kRcSendOnly, 0, 8));                             // 1
  s.send(request(kRcSendOnly, 1, 8));                             // 2
  const FrameAnalysis& gap = s.send(request(kRcSendOnly, 3, 8));  // 3: PSN 2 lost
  ASSERT_TRUE(gap.has(FlagCode::kOutOfSequence));
  EXPECT_EQ(gap.find(FlagCode::kOutOfSequence)->text(),
            "PSN 0x000003 ahead of expected PSN 0x000002 (1 missing)");
  EXPECT_EQ(gap.rc->expected_psn, 2u);
  EXPECT_TRUE(gap.rc->nak_due);
  // Still waiting for 2: out of sequence too, but the responder drops it without another NAK.
  const FrameAnalysis& dropped = s.send(request(kRcSendOnly, 4, 8));  // 4
  EXPECT_TRUE(dropped.has(FlagCode::kOutOfSequence));
  EXPECT_FALSE(dropped.rc->nak_due);
  EXPECT_EQ(dropped.rc->expected_psn, 2u);
  EXPECT_EQ(dropped.rc->sender_next, 4u);

  const FrameAnalysis& nak = s.send(ack(2, 2, syndrome::kNakPsnSeqError));  // 5
  ASSERT_TRUE(nak.has(FlagCode::kNakSeqError));
  EXPECT_EQ(nak.rc->nak_cause_frame, 3u);
  EXPECT_EQ(nak.find(FlagCode::kNakSeqError)->text(),
            "NAK PSN sequence error, expected PSN 0x000002 (caused by frame 3)");
  EXPECT_EQ(nak.rc->acked_count, 2u);  // PSNs 0 and 1, implicitly
  EXPECT_FALSE(nak.has(FlagCode::kAckOverGap));

  // Go-back-N: 2, 3, 4 again. Resends, not duplicates.
  const FrameAnalysis& r2 = s.send(request(kRcSendOnly, 2, 8));  // 6
  EXPECT_EQ(problems(r2), kNoProblems);
  ASSERT_TRUE(r2.has(FlagCode::kRetransmission));
  EXPECT_EQ(r2.find(FlagCode::kRetransmission)->text(), "resent after NAK in frame 5");
  const FrameAnalysis& r3 = s.send(request(kRcSendOnly, 3, 8));  // 7
  EXPECT_EQ(problems(r3), kNoProblems);
  EXPECT_EQ(r3.rc->retransmission_of, 3u);
  EXPECT_EQ(r3.find(FlagCode::kRetransmission)->text(),
            "retransmission of frame 3 after NAK in frame 5");
  const FrameAnalysis& r4 = s.send(request(kRcSendOnly, 4, 8));  // 8
  EXPECT_EQ(r4.rc->retransmission_of, 4u);
  EXPECT_EQ(problems(r4), kNoProblems);

  const FrameAnalysis& fin = s.send(ack(4, 5));  // 9
  EXPECT_EQ(problems(fin), kNoProblems);
  EXPECT_EQ(fin.rc->acked_count, 3u);
  EXPECT_EQ(fin.rc->first_acked_frame, 6u);
  EXPECT_EQ(fin.rc->request_frame, 8u);
  EXPECT_EQ(s.at(7).rc->acked_by, 9u);  // the retransmission is what got acknowledged
  // New requests continue in order.
  EXPECT_EQ(problems(s.send(request(kRcSendOnly, 5, 8))), kNoProblems);
}

TEST(RcTracker, RepeatedSequenceNakAndAckOverGap) {
  Stream s;
  s.send(request(kRcSendOnly, 0));
  s.send(request(kRcSendOnly, 2));  // 2: PSN 1 lost
  s.send(request(kRcSendOnly, 3));
  EXPECT_FALSE(s.send(ack(1, 1, syndrome::kNakPsnSeqError)).has(FlagCode::kNakRepeated));
  const FrameAnalysis& again = s.send(ack(1, 1, syndrome::kNakPsnSeqError));  // 5
  ASSERT_TRUE(again.has(FlagCode::kNakRepeated));
  EXPECT_EQ(again.find(FlagCode::kNakRepeated)->frame, 4u);

  // A responder acknowledging across a hole that was never sent (the tester's own ladder, where
  // the capture holds every request: otherwise the hole is capture loss, see psn_state_test).
  AnalyzerOptions complete;
  complete.capture_complete = true;
  Stream t(complete);
  t.send(request(kRcSendOnly, 10));
  t.send(request(kRcSendOnly, 12));
  const FrameAnalysis& over = t.send(ack(12, 2));
  ASSERT_TRUE(over.has(FlagCode::kAckOverGap));
  EXPECT_EQ(over.find(FlagCode::kAckOverGap)->a, 11u);
  EXPECT_EQ(over.find(FlagCode::kAckOverGap)->b, 1u);
}

TEST(RcTracker, Duplicates) {
  Stream s;
  s.send(request(kRcSendOnly, 50));
  s.send(request(kRcSendOnly, 51));
  s.send(request(kRcSendOnly, 52));
  s.send(ack(52, 3));
  // The requester times out and sends 51 again: behind the expected PSN and seen before.
  const FrameAnalysis& dup = s.send(request(kRcSendOnly, 51));  // 5
  ASSERT_TRUE(dup.has(FlagCode::kDuplicate));
  EXPECT_EQ(dup.find(FlagCode::kDuplicate)->text(),
            "duplicate PSN 0x000033, expected PSN 0x000035");
  ASSERT_TRUE(dup.has(FlagCode::kRetransmission));
  EXPECT_EQ(dup.find(FlagCode::kRetransmission)->frame, 2u);
  EXPECT_EQ(dup.rc->retransmission_of, 2u);
  // The responder re-ACKs it: nothing new is acknowledged, and that is no problem.
  const FrameAnalysis& reack = s.send(ack(51, 3));
  EXPECT_EQ(problems(reack), kNoProblems);
  EXPECT_EQ(reack.rc->acked_count, 0u);
  EXPECT_EQ(reack.rc->request_frame, 5u);
  // A PSN far behind, never seen: a duplicate, but no retransmission of anything.
  const FrameAnalysis& old = s.send(request(kRcSendOnly, 40));
  EXPECT_TRUE(old.has(FlagCode::kDuplicate));
  EXPECT_FALSE(old.has(FlagCode::kRetransmission));
}

TEST(RcTracker, PsnWrapIsInOrder) {
  Stream s;
  for (std::uint32_t psn : {0xFFFFFEu, 0xFFFFFFu, 0u, 1u}) {
    const FrameAnalysis& fa = s.send(request(kRcSendOnly, psn, 16));
    EXPECT_EQ(problems(fa), kNoProblems) << psn;
    EXPECT_EQ(fa.rc->expected_psn, psn);
  }
  const FrameAnalysis& fin = s.send(ack(1, 4));
  EXPECT_EQ(problems(fin), kNoProblems);
  EXPECT_EQ(fin.rc->acked_count, 4u);
  EXPECT_EQ(fin.rc->first_acked_frame, 1u);
}

TEST(RcTracker, CoalescedAckAcknowledgesThree) {
  Stream s;
  s.send(request(kRcSendOnly, 10, 100));
  s.send(request(kRcSendOnly, 11, 100));
  s.send(request(kRcSendOnly, 12, 100));
  const FrameAnalysis& a = s.send(ack(12, 3));
  EXPECT_EQ(problems(a), kNoProblems);
  EXPECT_EQ(a.rc->acked_count, 3u);
  EXPECT_EQ(a.rc->first_acked_frame, 1u);
  EXPECT_EQ(a.rc->request_frame, 3u);
  EXPECT_EQ(a.find(FlagCode::kAcks)->text(),
            "acknowledges 3 requests (frames 1-3), 1.0 µs after frame 3");
  for (std::uint64_t f = 1; f <= 3; ++f) {
    EXPECT_EQ(s.at(f).rc->acked_by, 4u);
    EXPECT_EQ(s.at(f).rc->ack_delay_ns, static_cast<std::int64_t>((4 - f) * 1000));
  }
}

TEST(RcTracker, AckBeyondLastRequestIsUnknown) {
  Stream s;
  s.send(request(kRcSendOnly, 7));
  const FrameAnalysis& a = s.send(ack(8, 1));  // one past: an off-by-one responder
  ASSERT_TRUE(a.has(FlagCode::kAckPsnUnknown));
  EXPECT_EQ(a.find(FlagCode::kAckPsnUnknown)->text(),
            "ACKNOWLEDGE PSN 0x000008 matches no request (next request PSN 0x000008)");
  EXPECT_EQ(a.rc->acked_count, 0u);
}

TEST(RcTracker, MultiPacketReadResponses) {
  Stream s;
  const FrameAnalysis& rd = s.send(read_request(200, 4096));  // PMTU not yet known
  EXPECT_EQ(problems(rd), kNoProblems);
  const std::uint8_t ops[] = {opcode::kRcReadResponseFirst, opcode::kRcReadResponseMiddle,
                              opcode::kRcReadResponseMiddle, opcode::kRcReadResponseLast};
  for (std::uint32_t k = 1; k <= 4; ++k) {
    const FrameAnalysis& r = s.send(read_response(ops[k - 1], 200 + k - 1, 1024, 1));
    SCOPED_TRACE(k);
    EXPECT_EQ(problems(r), kNoProblems);
    EXPECT_EQ(r.rc->read_index, k);
    EXPECT_EQ(r.rc->read_count, 4u);  // the FIRST's payload showed PMTU 1024
    EXPECT_EQ(r.rc->request_frame, 1u);
    EXPECT_EQ(r.find(FlagCode::kReadResponse)->text(),
              "READ response " + std::to_string(k) + " of 4");
    EXPECT_EQ(r.rc->pmtu, 1024u);
    EXPECT_EQ(r.rc->pmtu_source, PmtuSource::kInferred);
  }
  EXPECT_EQ(s.at(1).rc->acked_by, 2u);
  // The next request follows the READ's four PSNs.
  const FrameAnalysis& next = s.send(request(kRcSendOnly, 204, 8));
  EXPECT_EQ(problems(next), kNoProblems);
  EXPECT_EQ(next.rc->expected_psn, 204u);
}

TEST(RcTracker, ReadSpanLearntWithoutAFirstResponse) {
  // One-way capture: only the requests. The PSN after a READ shows how many it took.
  Stream s;
  s.send(read_request(300, 4096));
  const FrameAnalysis& next = s.send(request(kRcSendOnly, 304, 8));
  EXPECT_EQ(problems(next), kNoProblems);
  EXPECT_EQ(next.rc->pmtu, 1024u);  // the only MTU that makes 4096 bytes four packets
  EXPECT_EQ(next.rc->pmtu_source, PmtuSource::kInferred);

  // Responses whose FIRST was not captured still find their READ.
  Stream t;
  t.send(read_request(300, 4096));
  const FrameAnalysis& m = t.send(read_response(opcode::kRcReadResponseMiddle, 301, 1024, 1));
  EXPECT_EQ(problems(m), kNoProblems);
  EXPECT_EQ(m.rc->request_frame, 1u);
  EXPECT_EQ(m.rc->read_index, 2u);
  EXPECT_EQ(m.rc->read_count, 4u);  // its payload showed the PMTU
  t.send(read_response(opcode::kRcReadResponseMiddle, 302, 1024, 1));
  const FrameAnalysis& last = t.send(read_response(opcode::kRcReadResponseLast, 303, 1024, 1));
  EXPECT_EQ(problems(last), kNoProblems);
  EXPECT_EQ(last.rc->read_index, 4u);
  EXPECT_EQ(problems(t.send(request(kRcSendOnly, 304, 8))), kNoProblems);
}

TEST(RcTracker, ReadResponseSplitWrong) {
  Stream s;
  // A two-packet SEND shows PMTU 1024.
  s.send(request(kRcSendFirst, 0, 1024));
  s.send(request(kRcSendLast, 1, 10));
  s.send(ack(1, 1));
  const FrameAnalysis& rd = s.send(read_request(2, 3000));  // 4: three responses at 1024
  EXPECT_EQ(rd.rc->span, 3u);
  EXPECT_EQ(problems(s.send(read_response(opcode::kRcReadResponseFirst, 2, 1024, 2))), kNoProblems);
  // The responder ends after two packets, the second too big for the PMTU.
  const FrameAnalysis& last = s.send(read_response(opcode::kRcReadResponseLast, 3, 1976, 2));
  ASSERT_TRUE(last.has(FlagCode::kReadResponseSplit));
  EXPECT_EQ(last.find(FlagCode::kReadResponseSplit)->text(),
            "READ response in position 2 of 3 has the wrong opcode (frame 4)");
  EXPECT_TRUE(last.has(FlagCode::kMtuExceeded));
}

TEST(RcTracker, MsnStuck) {
  Stream s;
  s.send(request(kRcSendOnly, 0));
  EXPECT_EQ(problems(s.send(ack(0, 1))), kNoProblems);
  s.send(request(kRcSendOnly, 1));
  const FrameAnalysis& stuck = s.send(ack(1, 1));
  ASSERT_TRUE(stuck.has(FlagCode::kMsnStuck));
  EXPECT_EQ(stuck.find(FlagCode::kMsnStuck)->text(),
            "MSN 0x000001 not incremented though 1 message(s) completed");
  // A multi-packet message completes only at its LAST: an ACK of the FIRST keeps the MSN.
  s.send(request(kRcSendFirst, 2, 1024));
  EXPECT_EQ(problems(s.send(ack(2, 1))), kNoProblems);
}

TEST(RcTracker, OpcodeSequence) {
  Stream s;
  s.send(request(kRcSendFirst, 0, 1024));
  const FrameAnalysis& only = s.send(request(kRcSendOnly, 1, 8));
  ASSERT_TRUE(only.has(FlagCode::kOpcodeSequence));
  EXPECT_EQ(only.find(FlagCode::kOpcodeSequence)->c, 2u);
  const FrameAnalysis& middle = s.send(request(kRcSendMiddle, 2, 1024));
  ASSERT_TRUE(middle.has(FlagCode::kOpcodeSequence));
  EXPECT_EQ(middle.find(FlagCode::kOpcodeSequence)->text(),
            "RC_SEND_MIDDLE without a FIRST (previous RC_SEND_ONLY (frame 2))");
  const FrameAnalysis& write_last = s.send(request(opcode::kRcWriteLast, 3, 8));
  ASSERT_TRUE(write_last.has(FlagCode::kOpcodeSequence));
  EXPECT_EQ(write_last.find(FlagCode::kOpcodeSequence)->c, 3u);
  // MTU inferred from the first FIRST: a short MIDDLE is flagged.
  EXPECT_TRUE(s.send(request(kRcSendFirst, 4, 1024)).flags.empty());
  const FrameAnalysis& short_middle = s.send(request(kRcSendMiddle, 5, 512));
  EXPECT_TRUE(short_middle.has(FlagCode::kMtuShortFirstMiddle));
  EXPECT_FALSE(short_middle.has(FlagCode::kOpcodeSequence));
}

TEST(RcTracker, RnrNakAndResend) {
  Stream s;
  s.send(request(kRcSendOnly, 30, 8));
  const FrameAnalysis& rnr = s.send(ack(30, 0, syndrome::kRnrBase | 14));
  ASSERT_TRUE(rnr.has(FlagCode::kNakRnr));
  EXPECT_EQ(rnr.find(FlagCode::kNakRnr)->text(), "RNR NAK, timer 14 (1.28 ms) for frame 1");
  EXPECT_TRUE(s.at(1).has(FlagCode::kNakReceived));
  const FrameAnalysis& resend = s.send(request(kRcSendOnly, 30, 8));
  EXPECT_EQ(problems(resend), kNoProblems);
  EXPECT_TRUE(resend.has(FlagCode::kRetransmission));
  EXPECT_EQ(problems(s.send(ack(30, 1))), kNoProblems);
}

TEST(RcTracker, ErrorNakNamesItsRequest) {
  Stream s;
  s.send(request(opcode::kRcWriteOnly, 9, 16));
  const FrameAnalysis& nak = s.send(ack(9, 0, syndrome::kNakRemoteAccess));
  ASSERT_TRUE(nak.has(FlagCode::kNakRemoteAccess));
  EXPECT_EQ(nak.find(FlagCode::kNakRemoteAccess)->text(),
            "NAK remote access error at PSN 0x000009 (frame 1)");
  EXPECT_EQ(nak.rc->nak_cause_frame, 1u);
  const Flag* received = s.at(1).find(FlagCode::kNakReceived);
  ASSERT_NE(received, nullptr);
  EXPECT_EQ(received->text(), "NAK_REMOTE_ACCESS_ERROR in frame 2 after 1.0 µs");
}

TEST(RcTracker, PairsByPsnAmongSeveralQps) {
  // Two QPs of A talk to two QPs of B; the responses name A's QPs only.
  Stream s;
  Packet r1 = request(kRcSendOnly, 1000);
  Packet r2 = request(kRcSendOnly, 5000);
  r2.bth->dqpn = 0x33;
  s.send(r1);
  s.send(r2);
  Packet a2 = ack(5000, 1);
  a2.bth->dqpn = 0x44;  // A's second QP
  const FrameAnalysis& fa2 = s.send(a2);
  EXPECT_EQ(fa2.rc->link, LinkSource::kPsn);
  EXPECT_EQ(fa2.rc->request_frame, 2u);
  const FrameAnalysis& fa1 = s.send(ack(1000, 1));
  EXPECT_EQ(fa1.rc->link, LinkSource::kUnique);  // the only one left
  EXPECT_EQ(fa1.rc->request_frame, 1u);
}

TEST(RcTracker, UnpairedResponseStillDecoded) {
  Stream s;
  const FrameAnalysis& nak = s.send(ack(77, 0, syndrome::kNakInvalidRequest));
  EXPECT_TRUE(nak.has(FlagCode::kNakInvalidRequest));
  EXPECT_EQ(nak.rc->peer_channel, 0u);
  EXPECT_FALSE(nak.has(FlagCode::kAckPsnUnknown));
}

TEST(RcTracker, WindowStaysBoundedOverALongStream) {
  AnalyzerOptions options;
  options.keep_results = false;
  Stream s(options);
  // 200,000 frames on one QP pair: 120,000 requests never acknowledged, then coalesced ACKs
  // every 63 requests.
  std::uint32_t psn = 0xFFF000;  // wraps on the way
  std::size_t max_entries = 0;
  for (int i = 0; i < 120000; ++i) {
    s.send(request(kRcSendOnly, psn, 4));
    psn = (psn + 1) & 0xFFFFFF;
    if (i % 1000 == 0) max_entries = std::max(max_entries, s.analyzer.stats().rc.window_entries);
  }
  EXPECT_EQ(s.analyzer.stats().rc.window_entries, 4096u);
  std::uint32_t msn = 0;
  while (s.frame <= 200000) {
    for (int i = 0; i < 63; ++i) {
      s.send(request(kRcSendOnly, psn, 4));
      psn = (psn + 1) & 0xFFFFFF;
    }
    const FrameAnalysis& a = s.send(ack((psn - 1) & 0xFFFFFF, ++msn));
    EXPECT_EQ(problems(a), kNoProblems);
    max_entries = std::max(max_entries, s.analyzer.stats().rc.window_entries);
  }
  const AnalyzerStats st = s.analyzer.stats();
  EXPECT_EQ(st.results, 0u);
  EXPECT_EQ(st.rc.channels, 2u);
  EXPECT_LE(max_entries, 4096u);
  EXPECT_LE(st.rc.window_entries, 1024u + 64u);  // answered entries are trimmed harder
  EXPECT_EQ(st.rc.unanswered, 0u);
}

}  // namespace
}  // namespace roceconf::analysis
