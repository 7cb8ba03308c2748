// What a correct PSN analysis says about frames 44-66 of the shared capture
// rxe_ib_write_bw_rc_loss_nak.pcap (real rxe, netem loss on the requester's egress, so a lost
// packet reaches neither the responder nor the capture), as ../shared/captures/README.md reads
// them. One table for every consumer of the analysis: the analyzer itself, the Wireshark plugin
// and `roceconf decode --json` are each checked against it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace roceconf::analysis::test {

inline constexpr std::string_view kLossCapture = "rxe_ib_write_bw_rc_loss_nak.pcap";
inline constexpr std::uint32_t kLossPsnBase = 0x95c000;  // the table's PSNs are the low 12 bits

struct LossRequest {
  std::uint64_t frame;
  std::uint32_t psn;       // low 12 bits
  std::uint32_t expected;  // the responder's ePSN before it, low 12 bits
  std::string_view state;  // "expected", "out-of-sequence", "duplicate"
  bool nak_due;            // first out-of-sequence request after an accepted one
  bool retransmission;
  std::uint64_t retransmission_of;  // 0: its first copy never reached the wire
  std::uint64_t resent_after_nak;   // the NAK a go-back-N resend follows, 0: none
};

struct LossResponse {
  std::uint64_t frame;
  std::uint32_t psn;
  bool nak;                 // sequence-error NAK (else ACK)
  std::uint64_t nak_cause;  // the first out-of-sequence request after which the NAK came
};

inline const std::vector<LossRequest>& loss_requests() {
  static const std::vector<LossRequest> kTable = {
      {44, 0x528, 0x528, "expected", false, false, 0, 0},
      {45, 0x529, 0x529, "expected", false, false, 0, 0},
      {46, 0x52a, 0x52a, "expected", false, false, 0, 0},
      {47, 0x52b, 0x52b, "expected", false, false, 0, 0},
      {48, 0x52c, 0x52c, "expected", false, false, 0, 0},
      // 0x52d lost before the wire: the responder must NAK the first request after it, once.
      {49, 0x52e, 0x52d, "out-of-sequence", true, false, 0, 0},
      {51, 0x52f, 0x52d, "out-of-sequence", false, false, 0, 0},
      {52, 0x530, 0x52d, "out-of-sequence", false, false, 0, 0},
      {53, 0x531, 0x52d, "out-of-sequence", false, false, 0, 0},
      {55, 0x532, 0x52d, "out-of-sequence", false, false, 0, 0},
      // Go-back-N after the NAK of frame 54: 0x52d is accepted (its first copy never on the wire).
      {56, 0x52d, 0x52d, "expected", false, true, 0, 54},
      // The resend of 0x52e was lost again: the resends of frames 51-55 are out of sequence.
      {57, 0x52f, 0x52e, "out-of-sequence", true, true, 51, 54},
      {58, 0x530, 0x52e, "out-of-sequence", false, true, 52, 54},
      {59, 0x531, 0x52e, "out-of-sequence", false, true, 53, 54},
      {60, 0x532, 0x52e, "out-of-sequence", false, true, 55, 54},
      {61, 0x534, 0x52e, "out-of-sequence", false, false, 0, 0},
      {62, 0x535, 0x52e, "out-of-sequence", false, false, 0, 0},
      {64, 0x536, 0x52e, "out-of-sequence", false, false, 0, 0},
      {65, 0x537, 0x52e, "out-of-sequence", false, false, 0, 0},
      {66, 0x53a, 0x52e, "out-of-sequence", false, false, 0, 0},
  };
  return kTable;
}

inline const std::vector<LossResponse>& loss_responses() {
  static const std::vector<LossResponse> kTable = {
      {50, 0x52a, false, 0},  // coalesced ACK
      {54, 0x52d, true, 49},
      {63, 0x52e, true, 57},
  };
  return kTable;
}

}  // namespace roceconf::analysis::test
