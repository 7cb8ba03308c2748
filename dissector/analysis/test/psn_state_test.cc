// The responder's PSN state machine: expected PSN, out-of-sequence (one NAK per gap, the rest
// dropped), duplicates, go-back-N resends, capture loss, and the responder checks that follow.
// Over the real loss capture (frames 44-66, ../shared/captures/README.md) and over synthetic
// go-back-N streams seen from both ends of the lossy link.
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dissector/analysis/stream_analyzer.h"
#include "dissector/analysis/test/frames.h"
#include "dissector/analysis/test/loss_capture.h"
#include "dissector/names.h"

namespace roceconf::analysis {
namespace {

using namespace test;
using opcode::kRcSendOnly;
using opcode::kRcWriteFirst;
using opcode::kRcWriteLast;
using opcode::kRcWriteMiddle;

const std::vector<std::string> kNoProblems;

// Flags that would blame a device: the responder checks and the request/response mismatches.
constexpr std::array kDeviceFaults = {
    FlagCode::kNakMissing,        FlagCode::kNakRepeated,
    FlagCode::kAckOverGap,        FlagCode::kOosAnswered,
    FlagCode::kDuplicateExecuted, FlagCode::kAckPsnUnknown,
    FlagCode::kMsnStuck,          FlagCode::kOpcodeSequence,
    FlagCode::kMtuExceeded,       FlagCode::kMtuShortFirstMiddle,
};

std::vector<std::string> faults(const FrameAnalysis& fa) {
  std::vector<std::string> out;
  for (const Flag& f : fa.flags)
    for (FlagCode c : kDeviceFaults)
      if (f.code == c) out.emplace_back(f.name());
  return out;
}

std::string state(const FrameAnalysis& fa) {
  return fa.rc ? std::string(psn_state_name(fa.rc->psn_state)) : "none";
}

struct PcapClose {
  void operator()(pcap_t* p) const { pcap_close(p); }
};

// Every frame of a shared capture through a stream analyzer with stored results.
bool analyze(const std::string& name, StreamAnalyzer& analyzer, std::uint64_t* frames) {
  const std::filesystem::path path = std::filesystem::path(ROCECONF_SHARED_CAPTURES) / name;
  if (!std::filesystem::exists(path)) return false;
  std::array<char, PCAP_ERRBUF_SIZE> err{};
  std::unique_ptr<pcap_t, PcapClose> pcap(pcap_open_offline_with_tstamp_precision(
      path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err.data()));
  EXPECT_TRUE(pcap) << err.data();
  if (!pcap) return true;
  const auto link = static_cast<LinkType>(pcap_datalink(pcap.get()));
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  std::uint64_t n = 0;
  while (pcap_next_ex(pcap.get(), &header, &data) == 1) {
    const std::int64_t t =
        static_cast<std::int64_t>(header->ts.tv_sec) * 1000000000 + header->ts.tv_usec;
    analyzer.add(++n, t, decode(Bytes(data, header->caplen), link));
  }
  *frames = n;
  return true;
}

TEST(PsnState, LossCaptureFrames44To66) {
  StreamAnalyzer analyzer;
  std::uint64_t frames = 0;
  if (!analyze(std::string(kLossCapture), analyzer, &frames))
    GTEST_SKIP() << "shared capture " << kLossCapture << " is absent from "
                 << ROCECONF_SHARED_CAPTURES;
  for (const LossRequest& want : loss_requests()) {
    SCOPED_TRACE("frame " + std::to_string(want.frame));
    const FrameAnalysis* fa = analyzer.result(want.frame);
    ASSERT_TRUE(fa != nullptr && fa->rc);
    EXPECT_EQ(fa->rc->role, RcRole::kRequest);
    EXPECT_EQ(fa->rc->psn, kLossPsnBase | want.psn);
    EXPECT_EQ(fa->rc->expected_psn, kLossPsnBase | want.expected);
    EXPECT_EQ(state(*fa), want.state);
    EXPECT_EQ(fa->rc->nak_due, want.nak_due);
    EXPECT_EQ(fa->rc->retransmission, want.retransmission);
    EXPECT_EQ(fa->rc->retransmission_of, want.retransmission_of);
    EXPECT_EQ(fa->rc->resend_after_nak, want.resent_after_nak);
    EXPECT_EQ(fa->has(FlagCode::kOutOfSequence), want.state == "out-of-sequence");
    EXPECT_EQ(fa->has(FlagCode::kRetransmission), want.retransmission);
    EXPECT_FALSE(fa->has(FlagCode::kDuplicate));
    EXPECT_EQ(faults(*fa), kNoProblems);
  }
  for (const LossResponse& want : loss_responses()) {
    SCOPED_TRACE("frame " + std::to_string(want.frame));
    const FrameAnalysis* fa = analyzer.result(want.frame);
    ASSERT_TRUE(fa != nullptr && fa->rc);
    EXPECT_EQ(fa->rc->role, RcRole::kResponse);
    EXPECT_EQ(fa->rc->psn, kLossPsnBase | want.psn);
    EXPECT_EQ(fa->has(FlagCode::kNakSeqError), want.nak);
    EXPECT_EQ(fa->rc->nak_cause_frame, want.nak_cause);
    EXPECT_EQ(fa->rc->not_captured, 0u);
    EXPECT_EQ(faults(*fa), kNoProblems);
  }
  EXPECT_EQ(analyzer.result(63)->find(FlagCode::kNakSeqError)->text(),
            "NAK PSN sequence error, expected PSN 0x95c52e (caused by frame 57)");
  EXPECT_EQ(analyzer.result(56)->find(FlagCode::kRetransmission)->text(),
            "resent after NAK in frame 54");

  // The whole capture: rxe recovers from every loss as the rules want, and the capture is
  // complete (the lost packets never reached the wire, nothing the responder got is missing).
  std::map<std::string, std::size_t> counts;
  for (std::uint64_t n = 1; n <= frames; ++n)
    for (const Flag& f : analyzer.result(n)->flags) ++counts[std::string(f.name())];
  for (FlagCode c : kDeviceFaults) EXPECT_EQ(counts[std::string(flag_name(c))], 0u) << flag_name(c);
  EXPECT_EQ(counts["not-captured"], 0u);
  // One real duplicate: frame 652 sends 0x95c564 again after frame 648's copy was accepted;
  // the responder re-ACKs it (frame 654, ACK 0x95c565, MSN unchanged) without executing it.
  EXPECT_EQ(counts["duplicate"], 1u);
  ASSERT_GE(frames, 655u);
  EXPECT_EQ(state(*analyzer.result(652)), "duplicate");
  EXPECT_EQ(analyzer.result(652)->rc->retransmission_of, 648u);
  EXPECT_EQ(faults(*analyzer.result(654)), kNoProblems);
  EXPECT_GT(counts["nak-seq-error"], 10u);
  const auto summaries = analyzer.rc().summaries();
  ASSERT_FALSE(summaries.empty());
  for (const RcChannelSummary& c : summaries) EXPECT_TRUE(c.gradable()) << c.channel;
}

// A WRITE of ten packets, PSNs 100..109, the sixth (105) lost on the way to the responder.
Packet write_packet(std::uint32_t psn) {
  const std::uint8_t op = psn == 100 ? kRcWriteFirst : psn == 109 ? kRcWriteLast : kRcWriteMiddle;
  return request(op, psn, psn == 109 ? 100 : 1024);
}

// Captured at the responder (or anywhere after the loss): 105 never on the wire.
TEST(PsnState, GoBackNLostBeforeTheCapture) {
  Stream s;
  for (std::uint32_t psn = 100; psn <= 104; ++psn)
    EXPECT_EQ(state(s.send(write_packet(psn))), "expected");  // frames 1-5
  const FrameAnalysis& gap = s.send(write_packet(106));       // 6: owed a NAK
  EXPECT_EQ(state(gap), "out-of-sequence");
  EXPECT_TRUE(gap.rc->nak_due);
  EXPECT_EQ(gap.rc->expected_psn, 105u);
  for (std::uint32_t psn = 107; psn <= 108; ++psn) {  // 7, 8: dropped silently
    const FrameAnalysis& fa = s.send(write_packet(psn));
    EXPECT_EQ(state(fa), "out-of-sequence");
    EXPECT_FALSE(fa.rc->nak_due);
    EXPECT_EQ(fa.rc->expected_psn, 105u);
    EXPECT_EQ(fa.rc->sender_next, psn);  // the sender's view: in order
  }
  const FrameAnalysis& nak = s.send(ack(105, 0, syndrome::kNakPsnSeqError));  // 9
  EXPECT_EQ(nak.rc->nak_cause_frame, 6u);
  EXPECT_EQ(faults(nak), kNoProblems);
  EXPECT_EQ(state(s.send(write_packet(109))), "out-of-sequence");  // 10: in flight before the NAK
  // Go-back-N from 105: 105 was never on the wire, the rest were.
  const FrameAnalysis& r105 = s.send(write_packet(105));  // 11
  EXPECT_EQ(state(r105), "expected");
  EXPECT_TRUE(r105.rc->retransmission);
  EXPECT_EQ(r105.rc->retransmission_of, 0u);
  EXPECT_EQ(r105.rc->resend_after_nak, 9u);
  for (std::uint32_t psn = 106; psn <= 109; ++psn) {  // 12-15
    const FrameAnalysis& fa = s.send(write_packet(psn));
    SCOPED_TRACE(psn);
    EXPECT_EQ(state(fa), "expected");
    EXPECT_EQ(fa.rc->expected_psn, psn);
    EXPECT_EQ(fa.rc->retransmission_of, psn == 109 ? 10u : psn - 100);
    EXPECT_FALSE(fa.has(FlagCode::kDuplicate));
    EXPECT_EQ(faults(fa), kNoProblems);
  }
  const FrameAnalysis& fin = s.send(ack(109, 1));
  EXPECT_EQ(faults(fin), kNoProblems);
  EXPECT_EQ(fin.rc->not_captured, 0u);
  for (const RcChannelSummary& c : s.analyzer.rc().summaries()) {
    EXPECT_TRUE(c.gradable());
    EXPECT_EQ(c.duplicates, 0u);
    EXPECT_EQ(c.out_of_sequence, 4u);
    EXPECT_EQ(c.retransmissions, 5u);
  }
}

// Captured at the requester: 105 is on the wire once, then lost. The responder's NAK shows it
// never got it; the resends are not duplicates, and nothing is the responder's fault.
TEST(PsnState, GoBackNCapturedAtTheRequester) {
  Stream s;
  for (std::uint32_t psn = 100; psn <= 109; ++psn) s.send(write_packet(psn));  // frames 1-10
  const FrameAnalysis& nak = s.send(ack(105, 0, syndrome::kNakPsnSeqError));   // 11
  EXPECT_TRUE(nak.has(FlagCode::kNakSeqError));
  EXPECT_EQ(nak.rc->nak_cause_frame, 7u);  // 106, the first the responder got after the loss
  EXPECT_EQ(nak.rc->acked_count, 5u);      // 100-104, implicitly
  EXPECT_EQ(faults(nak), kNoProblems);
  for (std::uint32_t psn = 105; psn <= 109; ++psn) {  // 12-16
    const FrameAnalysis& fa = s.send(write_packet(psn));
    SCOPED_TRACE(psn);
    EXPECT_EQ(state(fa), "expected");
    EXPECT_EQ(fa.rc->expected_psn, psn);
    EXPECT_TRUE(fa.rc->retransmission);
    EXPECT_EQ(fa.rc->retransmission_of, psn - 99);
    EXPECT_EQ(fa.rc->resend_after_nak, 11u);
    EXPECT_EQ(faults(fa), kNoProblems);
  }
  const FrameAnalysis& fin = s.send(ack(109, 1));
  EXPECT_EQ(faults(fin), kNoProblems);
  EXPECT_EQ(fin.rc->not_captured, 0u);
  EXPECT_EQ(fin.rc->acked_count, 5u);
  for (const RcChannelSummary& c : s.analyzer.rc().summaries()) {
    EXPECT_TRUE(c.gradable());
    EXPECT_EQ(c.duplicates, 0u);
  }
}

// The capture missed a request the responder got: its ACK says so. Capture loss, not a fault.
TEST(PsnState, CaptureLossIsNotADeviceFault) {
  Stream s;
  s.send(request(kRcSendOnly, 10, 8));
  s.send(request(kRcSendOnly, 11, 8));
  // 12 and 13 reached the responder but not the capture.
  s.send(request(kRcSendOnly, 14, 8));
  const FrameAnalysis& a = s.send(ack(14, 5));
  ASSERT_TRUE(a.has(FlagCode::kNotCaptured));
  EXPECT_EQ(a.find(FlagCode::kNotCaptured)->text(),
            "acknowledges 2 PSN(s) from 0x00000c the capture never saw (capture loss, not graded)");
  EXPECT_EQ(a.rc->not_captured, 2u);
  EXPECT_EQ(a.rc->capture_gaps, 2u);
  EXPECT_EQ(faults(a), kNoProblems);
  EXPECT_EQ(problems(a), kNoProblems);  // a note: shown, not graded
  // The responder is past the gap: what follows is in order again.
  EXPECT_EQ(state(s.send(request(kRcSendOnly, 15, 8))), "expected");
  const auto summaries = s.analyzer.rc().summaries();
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].not_captured, 2u);
  EXPECT_FALSE(summaries[0].gradable());

  // The suite's own ladder holds every request it sent: there, the same ACK is the device's.
  AnalyzerOptions complete;
  complete.capture_complete = true;
  Stream t(complete);
  t.send(request(kRcSendOnly, 10, 8));
  t.send(request(kRcSendOnly, 11, 8));
  t.send(request(kRcSendOnly, 14, 8));
  const FrameAnalysis& over = t.send(ack(14, 5));
  ASSERT_TRUE(over.has(FlagCode::kAckOverGap));
  EXPECT_EQ(over.find(FlagCode::kAckOverGap)->a, 12u);
  EXPECT_EQ(over.find(FlagCode::kAckOverGap)->b, 2u);
  EXPECT_FALSE(over.has(FlagCode::kNotCaptured));
}

// A NAK that says the responder got further than the capture: the PSNs between are capture loss.
TEST(PsnState, NakAheadOfTheCaptureIsCaptureLoss) {
  Stream s;
  s.send(request(kRcSendOnly, 0, 8));  // 1
  // 1 and 2 reached the responder but not the capture; 3 was seen, then lost.
  s.send(request(kRcSendOnly, 3, 8));  // 2
  s.send(request(kRcSendOnly, 4, 8));  // 3
  const FrameAnalysis& nak = s.send(ack(3, 3, syndrome::kNakPsnSeqError));
  ASSERT_TRUE(nak.has(FlagCode::kNotCaptured));
  EXPECT_EQ(nak.rc->not_captured, 2u);
  EXPECT_EQ(nak.rc->nak_cause_frame, 3u);  // 4, the first after the PSN the responder expects
  EXPECT_EQ(faults(nak), kNoProblems);
  EXPECT_EQ(state(s.send(request(kRcSendOnly, 3, 8))), "expected");
}

TEST(PsnState, NakMissing) {
  Stream s;
  s.send(request(kRcSendOnly, 0, 8));
  const FrameAnalysis& gap = s.send(request(kRcSendOnly, 2, 8));  // 2: owed a NAK
  EXPECT_TRUE(gap.rc->nak_due);
  s.send(request(kRcSendOnly, 3, 8));
  // The requester's ACK timer runs out and it resends 1: no NAK came in between.
  const FrameAnalysis& resend = s.send(request(kRcSendOnly, 1, 8));
  EXPECT_EQ(state(resend), "expected");
  ASSERT_TRUE(resend.has(FlagCode::kNakMissing));
  EXPECT_EQ(resend.find(FlagCode::kNakMissing)->text(),
            "expected PSN 0x000001 arrived, but the out-of-sequence PSN 0x000002 (frame 2) drew no "
            "sequence-error NAK");
}

TEST(PsnState, NakRepeatedForOneGap) {
  Stream s;
  s.send(request(kRcSendOnly, 0));
  s.send(request(kRcSendOnly, 2));
  s.send(request(kRcSendOnly, 3));
  EXPECT_EQ(faults(s.send(ack(1, 1, syndrome::kNakPsnSeqError))), kNoProblems);  // 4
  s.send(request(kRcSendOnly, 4));  // still out of sequence: dropped silently
  const FrameAnalysis& again = s.send(ack(1, 1, syndrome::kNakPsnSeqError));
  ASSERT_TRUE(again.has(FlagCode::kNakRepeated));
  EXPECT_EQ(again.find(FlagCode::kNakRepeated)->frame, 4u);
  // After the resend of 1 is accepted, a new gap earns a new NAK.
  s.send(request(kRcSendOnly, 1));
  s.send(request(kRcSendOnly, 2));
  s.send(request(kRcSendOnly, 4));  // 3 lost again
  const FrameAnalysis& next = s.send(ack(3, 3, syndrome::kNakPsnSeqError));
  EXPECT_EQ(faults(next), kNoProblems);
  EXPECT_EQ(next.rc->nak_cause_frame, 9u);
}

TEST(PsnState, OutOfSequenceRequestAnswered) {
  Stream s;
  s.send(request(kRcSendOnly, 10, 8));  // 1
  s.send(request(kRcSendOnly, 12, 8));  // 2: out of sequence
  EXPECT_EQ(faults(s.send(ack(11, 1, syndrome::kNakPsnSeqError))), kNoProblems);  // 3
  EXPECT_EQ(state(s.send(request(kRcSendOnly, 11, 8))), "expected");              // 4
  // The responder acknowledges 12 though it dropped it and 12 was never resent.
  const FrameAnalysis& a = s.send(ack(12, 3));
  ASSERT_TRUE(a.has(FlagCode::kOosAnswered));
  EXPECT_EQ(
      a.find(FlagCode::kOosAnswered)->text(),
      "answers PSN 0x00000c (frame 2), which arrived out of sequence (expected PSN 0x00000c)");
  EXPECT_FALSE(a.has(FlagCode::kNotCaptured));
}

TEST(PsnState, DuplicateExecutedTwice) {
  Stream s;
  s.send(request(kRcSendOnly, 50, 8));
  s.send(request(kRcSendOnly, 51, 8));
  s.send(ack(51, 2));
  const FrameAnalysis& dup = s.send(request(kRcSendOnly, 51, 8));
  EXPECT_EQ(state(dup), "duplicate");
  EXPECT_TRUE(dup.rc->retransmission);
  EXPECT_EQ(dup.rc->retransmission_of, 2u);
  const FrameAnalysis& reack = s.send(ack(51, 3));  // MSN moved: executed again
  ASSERT_TRUE(reack.has(FlagCode::kDuplicateExecuted));
  EXPECT_EQ(
      reack.find(FlagCode::kDuplicateExecuted)->text(),
      "MSN moved from 0x000002 to 0x000003 answering the duplicate (frame 4): executed again");
  // The right answer: the same MSN.
  Stream t;
  t.send(request(kRcSendOnly, 50, 8));
  t.send(ack(50, 1));
  t.send(request(kRcSendOnly, 50, 8));
  EXPECT_EQ(faults(t.send(ack(50, 1))), kNoProblems);
}

}  // namespace
}  // namespace roceconf::analysis
