#include "dissector/analysis/flags.h"

#include <array>

#include <fmt/format.h>

#include "dissector/analysis/cm_tracker.h"
#include "dissector/mad/cm.h"
#include "dissector/names.h"
#include "dissector/opcode.h"

namespace roceconf::analysis {

namespace {

struct FlagInfo {
  std::string_view name;
  Severity severity;
  std::string_view summary;  // fixed, so that tools can group by it (the values are fields)
};

constexpr std::array<FlagInfo, kFlagCodeCount> kFlags = {{
    {"cm-duplicate-req", Severity::kNote, "CM: duplicate REQ"},
    {"cm-retransmission", Severity::kNote, "CM: message retransmitted"},
    {"cm-tid-mismatch", Severity::kError, "CM: reply TID does not echo its request's"},
    {"cm-unknown-comm-id", Severity::kWarning, "CM: unknown communication ID"},
    {"cm-rejected", Severity::kWarning, "CM: connection rejected"},
    {"cm-unexpected", Severity::kWarning, "CM: message unexpected in the connection's state"},
    {"cm-established-by-data", Severity::kNote, "CM: connection established by data (no RTU)"},
    {"cm-start-psn", Severity::kError, "CM: requests start at the wrong Starting PSN"},
    {"out-of-sequence", Severity::kWarning, "Request PSN ahead of the expected PSN"},
    {"duplicate", Severity::kWarning, "Duplicate request (PSN behind the expected PSN)"},
    {"retransmission", Severity::kNote, "Retransmission"},
    {"opcode-sequence", Severity::kError, "FIRST/MIDDLE/LAST opcode order broken"},
    {"mtu-exceeded", Severity::kError, "Payload exceeds the path MTU"},
    {"mtu-short-first-middle", Severity::kError, "FIRST/MIDDLE payload not the path MTU"},
    {"pkey-mismatch", Severity::kError, "P_Key differs from the connection's"},
    {"acked-by", Severity::kNote, "Acknowledged"},
    {"nak-received", Severity::kWarning, "Request refused by a NAK"},
    {"acks", Severity::kNote, "Acknowledges requests"},
    {"read-response", Severity::kNote, "READ response"},
    {"read-response-split", Severity::kError, "READ responses do not match the request"},
    {"nak-seq-error", Severity::kWarning, "NAK: PSN sequence error"},
    {"nak-rnr", Severity::kNote, "RNR NAK: receiver not ready"},
    {"nak-invalid-request", Severity::kWarning, "NAK: invalid request"},
    {"nak-remote-access", Severity::kWarning, "NAK: remote access error"},
    {"nak-remote-op", Severity::kWarning, "NAK: remote operational error"},
    {"nak-invalid-rd-request", Severity::kWarning, "NAK: invalid RD request"},
    {"nak-repeated", Severity::kWarning, "Second sequence-error NAK for one gap"},
    {"ack-psn-unknown", Severity::kWarning, "Response PSN matches no request"},
    {"ack-over-gap", Severity::kWarning, "Acknowledges PSNs never sent"},
    {"msn-stuck", Severity::kWarning, "MSN not incremented"},
    {"nak-missing", Severity::kWarning, "Gap drew no sequence-error NAK"},
    {"out-of-sequence-answered", Severity::kError, "Out-of-sequence request answered"},
    {"duplicate-executed", Severity::kError, "Duplicate request executed again"},
    {"not-captured", Severity::kNote, "PSNs acknowledged that the capture missed"},
}};

std::string psn_text(std::uint64_t psn) {
  return fmt::format("{:#08x}", psn);
}

std::string attr_text(std::uint32_t attr) {
  const std::string_view name = cm_attr_name(static_cast<std::uint16_t>(attr));
  return name.empty() ? fmt::format("attribute {:#06x}", attr) : std::string(name);
}

std::string_view pmtu_source_text(std::uint32_t source) {
  return source == 1 ? "negotiated" : "inferred";
}

std::string after(const Flag& f) {
  return f.ns >= 0 ? " after " + format_duration(f.ns) : std::string();
}

std::string in_frame(std::uint64_t frame) {
  return frame != 0 ? fmt::format(" (frame {})", frame) : std::string();
}

std::string nak_text(std::string_view what, const Flag& f) {
  return fmt::format("NAK {} at PSN {}{}", what, psn_text(f.a), in_frame(f.frame));
}

}  // namespace

std::string_view flag_name(FlagCode code) {
  return kFlags[static_cast<std::size_t>(code)].name;
}

Severity flag_severity(FlagCode code) {
  return kFlags[static_cast<std::size_t>(code)].severity;
}

std::string_view flag_summary(FlagCode code) {
  return kFlags[static_cast<std::size_t>(code)].summary;
}

bool flag_from_name(std::string_view name, FlagCode* code) {
  for (std::size_t i = 0; i < kFlags.size(); ++i) {
    if (kFlags[i].name == name) {
      *code = static_cast<FlagCode>(i);
      return true;
    }
  }
  return false;
}

bool flag_is_capture_note(FlagCode code) {
  return code == FlagCode::kNotCaptured;
}

std::string format_duration(std::int64_t ns) {
  const double v = static_cast<double>(ns);
  if (ns < 0) return "-" + format_duration(-ns);
  if (ns < 1000) return fmt::format("{} ns", ns);
  if (ns < 1000000) return fmt::format("{:.1f} µs", v / 1e3);
  if (ns < 1000000000) return fmt::format("{:.2f} ms", v / 1e6);
  return fmt::format("{:.3f} s", v / 1e9);
}

std::string Flag::text() const {
  switch (code) {
    case FlagCode::kCmDuplicateReq:
      return fmt::format("duplicate REQ for communication ID {:#010x} (first in frame {})", a,
                         frame);
    case FlagCode::kCmRetransmission:
      return fmt::format("{} retransmitted (first in frame {})", attr_text(c), frame);
    case FlagCode::kCmTidMismatch:
      return fmt::format("TID {:#018x} does not echo the {} TID {:#018x}{}", a, attr_text(c), b,
                         in_frame(frame));
    case FlagCode::kCmUnknownCommId:
      return fmt::format("{} for unknown communication IDs (local {:#010x}, remote {:#010x})",
                         attr_text(c), a, b);
    case FlagCode::kCmRejected: {
      const std::string_view reason = rej_reason_name(static_cast<std::uint16_t>(a));
      return fmt::format("{} rejected, reason {} ({})",
                         mra_message_name(static_cast<std::uint8_t>(c)), a,
                         reason.empty() ? "unassigned" : reason);
    }
    case FlagCode::kCmUnexpected:
      return fmt::format("{} unexpected in state {}", attr_text(c),
                         cm_state_name(static_cast<CmState>(a)));
    case FlagCode::kCmEstablishedByData:
      return fmt::format("first data before RTU: connection {} established", a);
    case FlagCode::kCmStartPsn:
      return fmt::format(
          "first request PSN {} is the {} Starting PSN; the {} side's requests "
          "start at the {} Starting PSN {}",
          psn_text(a), c != 0 ? "REQ" : "REP", c != 0 ? "active" : "passive",
          c != 0 ? "REP" : "REQ", psn_text(b));
    case FlagCode::kOutOfSequence:
      return fmt::format("PSN {} ahead of expected PSN {} ({} missing)", psn_text(a), psn_text(b),
                         (a - b) & 0xFFFFFF);
    case FlagCode::kDuplicate:
      return fmt::format("duplicate PSN {}, expected PSN {}", psn_text(a), psn_text(b));
    case FlagCode::kRetransmission:
      if (frame != 0 && a != 0)
        return fmt::format("retransmission of frame {} after NAK in frame {}", frame, a);
      if (frame != 0) return fmt::format("retransmission of frame {}", frame);
      return fmt::format("resent after NAK in frame {}", a);
    case FlagCode::kOpcodeSequence: {
      const std::string_view op = opcode_info(static_cast<std::uint8_t>(a)).name;
      const std::string_view prev = opcode_info(static_cast<std::uint8_t>(b)).name;
      switch (c) {
        case 1:
          return fmt::format("{} without a FIRST (previous {}{})", op, prev, in_frame(frame));
        case 2:
          return fmt::format("{} while the message of {}{} lacks its LAST", op, prev,
                             in_frame(frame));
        default:
          return fmt::format("{} continues a different operation ({}{})", op, prev,
                             in_frame(frame));
      }
    }
    case FlagCode::kMtuExceeded:
      return fmt::format("payload of {} bytes exceeds the {} path MTU {}", a, pmtu_source_text(c),
                         b);
    case FlagCode::kMtuShortFirstMiddle:
      return fmt::format("FIRST/MIDDLE payload of {} bytes, must be exactly the {} path MTU {}", a,
                         pmtu_source_text(c), b);
    case FlagCode::kPkeyMismatch:
      return fmt::format(
          "P_Key {:#06x} does not match P_Key {:#06x} negotiated by CM "
          "(connection {})",
          a, b, c);
    case FlagCode::kAckedBy:
      return fmt::format("acked by frame {}{}", frame, after(*this));
    case FlagCode::kNakReceived:
      return fmt::format("{} in frame {}{}", syndrome_name(static_cast<std::uint8_t>(a)), frame,
                         after(*this));
    case FlagCode::kAcks:
      if (a <= 1) return fmt::format("acknowledges frame {}{}", frame, after(*this));
      return fmt::format("acknowledges {} requests (frames {}-{}){}", a, b, frame,
                         ns >= 0
                             ? ", " + format_duration(ns) + fmt::format(" after frame {}", frame)
                             : std::string());
    case FlagCode::kReadResponse:
      if (b == 0) return fmt::format("READ response {}", a);
      return fmt::format("READ response {} of {}", a, b);
    case FlagCode::kReadResponseSplit:
      switch (c) {
        case 1:
          return fmt::format("READ response in position {} of {} has the wrong opcode{}", a, b,
                             in_frame(frame));
        case 2:
          return fmt::format("READ response {} beyond the {} the request needs{}", a, b,
                             in_frame(frame));
        default:
          return fmt::format("READ responses carried {} bytes, the request asked for {}{}", a, b,
                             in_frame(frame));
      }
    case FlagCode::kNakSeqError:
      if (frame == 0) return fmt::format("NAK PSN sequence error, expected PSN {}", psn_text(a));
      return fmt::format("NAK PSN sequence error, expected PSN {} (caused by frame {})",
                         psn_text(a), frame);
    case FlagCode::kNakRnr:
      return fmt::format(
          "RNR NAK, timer {} ({}){}", a,
          format_duration(std::int64_t{rnr_timer_usec(static_cast<std::uint8_t>(a))} * 1000),
          frame != 0 ? fmt::format(" for frame {}", frame) : std::string());
    case FlagCode::kNakInvalidRequest:
      return nak_text("invalid request", *this);
    case FlagCode::kNakRemoteAccess:
      return nak_text("remote access error", *this);
    case FlagCode::kNakRemoteOp:
      return nak_text("remote operational error", *this);
    case FlagCode::kNakInvalidRdRequest:
      return nak_text("invalid RD request", *this);
    case FlagCode::kNakRepeated:
      return fmt::format(
          "another sequence-error NAK for PSN {} before any resend (first NAK in "
          "frame {})",
          psn_text(a), frame);
    case FlagCode::kAckPsnUnknown:
      return fmt::format("{} PSN {} matches no request (next request PSN {})",
                         opcode_info(static_cast<std::uint8_t>(c)).op_name, psn_text(a),
                         psn_text(b));
    case FlagCode::kAckOverGap:
      return fmt::format("acknowledges {} PSN(s) from {} never seen on the wire", b, psn_text(a));
    case FlagCode::kMsnStuck:
      return fmt::format("MSN {} not incremented though {} message(s) completed", psn_text(a), b);
    case FlagCode::kNakMissing:
      return fmt::format(
          "expected PSN {} arrived, but the out-of-sequence PSN {}{} drew no sequence-error NAK",
          psn_text(b), psn_text(a), in_frame(frame));
    case FlagCode::kOosAnswered:
      return fmt::format("answers PSN {}{}, which arrived out of sequence (expected PSN {})",
                         psn_text(a), in_frame(frame), psn_text(b));
    case FlagCode::kDuplicateExecuted:
      return fmt::format("MSN moved from {} to {} answering the duplicate{}: executed again",
                         psn_text(a), psn_text(b), in_frame(frame));
    case FlagCode::kNotCaptured:
      return fmt::format(
          "acknowledges {} PSN(s) from {} the capture never saw (capture loss, not graded)", b,
          psn_text(a));
  }
  return std::string(name());
}

}  // namespace roceconf::analysis
