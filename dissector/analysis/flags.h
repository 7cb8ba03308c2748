// Judgements the stream analysis attaches to frames: a stable kebab-case code (for JSON, tests,
// Wireshark expert info), a severity, and a few numbers from which text() renders the human
// sentence. Numbers rather than strings keep a million annotated frames small.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dissector/finding.h"

namespace roceconf::analysis {

enum class FlagCode : std::uint8_t {
  // CM (cm_tracker)
  kCmDuplicateReq,       // REQ for a communication ID already in progress
  kCmRetransmission,     // a REP, RTU, MRA, REJ, DREQ or DREP seen again
  kCmTidMismatch,        // a reply whose TID does not echo its request's
  kCmUnknownCommId,      // communication IDs that match no connection
  kCmRejected,           // REJ, with its reason
  kCmUnexpected,         // a message that does not fit the connection's state
  kCmEstablishedByData,  // first data before any RTU established the connection
  kCmStartPsn,           // first request at the other message's Starting PSN (REQ/REP swapped)
  // RC/UC requests (rc_tracker)
  kOutOfSequence,        // PSN ahead of the responder's expected PSN
  kDuplicate,            // PSN behind the responder's expected PSN (already accepted)
  kRetransmission,       // PSN seen before in this flow, or a go-back-N resend after a NAK
  kOpcodeSequence,       // FIRST/MIDDLE/LAST order broken
  kMtuExceeded,          // payload above the path MTU
  kMtuShortFirstMiddle,  // FIRST/MIDDLE payload other than exactly the path MTU
  kPkeyMismatch,         // BTH P_Key does not match the CM-negotiated P_Key
  kAckedBy,              // the response that answered this request (added when it arrives)
  kNakReceived,          // the NAK that refused this request (added when it arrives)
  // RC responses (rc_tracker)
  kAcks,               // the requests this ACK (or atomic ACK) acknowledges
  kReadResponse,       // READ response k of n
  kReadResponseSplit,  // READ response positions or byte count disagree with the request
  kNakSeqError,        // NAK PSN sequence error, with the frame that caused it
  kNakRnr,             // RNR NAK, with its timer
  kNakInvalidRequest,
  kNakRemoteAccess,
  kNakRemoteOp,
  kNakInvalidRdRequest,
  kNakRepeated,    // a second sequence-error NAK for one gap before any resend
  kAckPsnUnknown,  // response PSN that matches no request sent
  kAckOverGap,     // response acknowledging PSNs never sent (complete captures only)
  kMsnStuck,       // MSN not incremented by a response that completes messages
  // Responder checks from its PSN state machine (rc_tracker)
  kNakMissing,         // the expected PSN arrived with no sequence-error NAK for the gap
  kOosAnswered,        // a response to a request that arrived out of sequence
  kDuplicateExecuted,  // the MSN moved answering a duplicate: it was executed again
  kNotCaptured,        // the response acknowledges PSNs the capture never saw (capture loss)
};

inline constexpr std::size_t kFlagCodeCount = static_cast<std::size_t>(FlagCode::kNotCaptured) + 1;

// Flags about the capture rather than the devices in it (not-captured): shown, never graded.
bool flag_is_capture_note(FlagCode code);

std::string_view flag_name(FlagCode code);  // "out-of-sequence", ...
Severity flag_severity(FlagCode code);
// What the judgement is, without its values ("NAK: PSN sequence error"): a fixed text that
// tools can group by (Wireshark's expert infos); Flag::text() gives the full sentence.
std::string_view flag_summary(FlagCode code);
// Parses a name back; false when unknown.
bool flag_from_name(std::string_view name, FlagCode* code);

// One judgement. What a, b, c, frame and ns mean depends on the code (see flags.cc); unused
// members stay zero (ns: -1).
struct Flag {
  FlagCode code{};
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::uint32_t c = 0;
  std::uint64_t frame = 0;  // a frame the judgement points at (cause, original, answer)
  std::int64_t ns = -1;     // a delay, when there is one

  std::string_view name() const { return flag_name(code); }
  Severity severity() const { return flag_severity(code); }
  std::string text() const;  // "expected PSN 0x000001", "acked by frame 12 after 3.2 µs", ...
};

using Flags = std::vector<Flag>;

// "850 ns", "3.2 µs", "1.28 ms", "2.500 s".
std::string format_duration(std::int64_t ns);

}  // namespace roceconf::analysis
