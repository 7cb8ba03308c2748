// What the plugin shows for one frame, worked out in plain C++ before any Wireshark call: the
// decoded packet, the stream analysis result and the evidence comment become a flat list of
// items (fields, expert infos, subtree brackets). The Wireshark glue then only copies the list
// into the tree, so no C++ object with a destructor lives in a frame that epan can longjmp out of.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dissector/analysis/flags.h"
#include "dissector/analysis/stream_analyzer.h"
#include "dissector/evidence_comment.h"
#include "dissector/finding.h"
#include "dissector/packet.h"
#include "dissector/wireshark/field_catalogue.h"

namespace roceconf::wireshark {

// The plugin's own fields (besides the catalogue's codec fields).
enum class Hf : std::uint16_t {
  kFraming,
  kIcrcValid,
  kIcrcValue,
  kIcrcExpected,
  kVcrcValid,
  kVcrcValue,
  kVcrcExpected,
  kFinding,
  kChannel,
  kDirection,
  kPeerChannel,
  kLink,
  kPsnExpected,
  kPsnState,
  kPsnSenderNext,
  kPsnNakDue,
  kPsnRetransmissionOf,
  kPsnResentAfterNak,
  kNotCaptured,
  kCaptureGaps,
  kPmtu,
  kPmtuSource,
  kFlag,
  kAckedBy,
  kAckFrame,
  kResponseTime,
  kAckedCount,
  kFirstAckedFrame,
  kReadResponse,
  kReadIndex,
  kReadCount,
  kNakCause,
  kNakFrame,
  kConnId,
  kConnState,
  kConnMessage,
  kConnRequestFrame,
  kConnPmtu,
  kConnPkey,
  kConnServiceId,
  kConnActiveQpn,
  kConnPassiveQpn,
  kCase,
  kStep,
  kVerdict,
  kEvent,
  kNote,
  kCount
};

enum class Subtree : std::uint8_t { kRoot, kAnalysis, kConnection, kEvidence, kLayer, kCount };

enum class VerdictExpert : std::uint8_t { kFail, kError, kCount };

enum class ItemKind : std::uint8_t {
  kUnsigned,  // u (uint32 fields)
  kUnsigned64,
  kBool,
  kString,         // text
  kFrame,          // u: frame number
  kTime,           // ns: relative time
  kCatalogue,      // field: catalogue index; value in u / text / bytes by the field's kind
  kFindingExpert,  // code: FindingCode; text: message
  kFlagExpert,     // code: FlagCode; text: message
  kVerdictExpert,  // code: VerdictExpert; text: message
  kOpen,           // code: Subtree; text: label
  kClose,
};

struct ReportItem {
  ItemKind kind = ItemKind::kUnsigned;
  std::uint16_t code = 0;  // Hf, catalogue index, FindingCode, FlagCode, Subtree
  std::uint32_t offset = 0;
  std::uint32_t length = 0;
  std::uint64_t u = 0;
  std::int64_t ns = 0;
  std::uint32_t text = 0;  // index into FrameReport::texts (kString, experts, kOpen)
  Bytes bytes;             // catalogue addresses and bytes (views into the frame)
  bool generated = true;
};

struct FrameReport {
  std::vector<ReportItem> items;
  std::vector<std::string> texts;  // index 0 is ""
  void clear();
};

// Flags that become fields rather than expert infos (pairing notes shown on every frame).
bool flag_is_field(analysis::FlagCode code);

// "192.0.2.11 QP 0x00002a -> 192.0.2.12 QP 0x000029" per (channel, sending QP), formatted once
// rather than on every frame. Cleared with the analysis (channel numbers start over).
using DirectionNames = std::unordered_map<std::uint64_t, std::string>;

struct ReportInput {
  const Packet* packet = nullptr;  // decoded frame (null: not RoCE)
  std::uint32_t frame_length = 0;  // captured bytes
  const analysis::FrameAnalysis* analysis = nullptr;
  const analysis::CmTracker* cm = nullptr;
  std::optional<EvidenceComment> comment;
  const FieldCatalogue* catalogue = nullptr;
  bool codec_fields = true;  // emit every catalogue field; otherwise only MAD and CM ones
  DirectionNames* directions = nullptr;  // optional cache
};

// Fills `out` (cleared first).
void build_report(const ReportInput& in, FrameReport& out);
// The Info column tags for the frame's warnings and errors: " [bad-icrc] [out-of-sequence]".
// Cheap enough for every frame (no messages are formatted).
void build_info(const ReportInput& in, std::string& out);

}  // namespace roceconf::wireshark
