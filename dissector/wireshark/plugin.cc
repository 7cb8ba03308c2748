// Over 600 lines: epan's registration tables stay next to the glue that uses them.
// The roceconf Wireshark/tshark plugin: a postdissector that runs the project's codec and stream
// analysis over every RoCE frame and shows ICRC validity, PSN analysis, request/response
// pairing, CM connection state, codec findings and the suite's evidence comments as filterable
// fields and expert infos, next to Wireshark's own InfiniBand tree.
//
// epan reports errors by longjmp, which would skip C++ destructors: each frame is analysed first
// in C++ (analyse_frame, exceptions caught there) into a flat FrameReport kept in the plugin's
// state, and only then copied into the tree by emit_report, whose frames hold no object with a
// destructor.
#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/proto.h>
#include <epan/tap.h>
#include <wiretap/wtap.h>
#include <ws_symbol_export.h>
#include <ws_version.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "dissector/analysis/stream_analyzer.h"
#include "dissector/evidence_comment.h"
#include "dissector/finding.h"
#include "dissector/packet.h"
#include "dissector/wireshark/connection_tap.h"
#include "dissector/wireshark/field_catalogue.h"
#include "dissector/wireshark/frame_report.h"
#include "dissector/wireshark/result_store.h"

extern "C" WS_DLL_PUBLIC_DEF const gchar plugin_version[] = ROCECONF_PLUGIN_VERSION;
extern "C" WS_DLL_PUBLIC_DEF const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
extern "C" WS_DLL_PUBLIC_DEF const int plugin_want_minor = WIRESHARK_VERSION_MINOR;
extern "C" WS_DLL_PUBLIC_DEF void plugin_register(void);

namespace roceconf::wireshark {
namespace {

using analysis::FlagCode;

constexpr std::size_t kHfCount = static_cast<std::size_t>(Hf::kCount);
constexpr std::size_t kFindingCount = static_cast<std::size_t>(FindingCode::kLinkHeader) + 1;
constexpr std::size_t kVerdictCount = static_cast<std::size_t>(VerdictExpert::kCount);
constexpr std::size_t kSubtreeCount = static_cast<std::size_t>(Subtree::kCount);

int proto_roceconf = -1;
dissector_handle_t roceconf_handle = nullptr;
std::array<int, kHfCount> hf_ids;
std::array<int, kSubtreeCount> ett_ids;
std::array<expert_field, kFindingCount> ei_findings;
std::array<expert_field, analysis::kFlagCodeCount> ei_flags;
std::array<expert_field, kVerdictCount> ei_verdicts;

// Preferences.
guint pref_extra_udp_port = 0;
gboolean pref_codec_fields = TRUE;
gboolean pref_check_icrc = TRUE;

struct State {
  FieldCatalogue catalogue;
  std::vector<int> catalogue_hf;
  std::unique_ptr<analysis::StreamAnalyzer> analyzer;
  ResultStore results;             // for Wireshark's later passes over a frame
  analysis::FrameAnalysis stored;  // a stored result, rebuilt
  Packet packet;                   // the frame being dissected (decode_into reuses its storage)
  DirectionNames directions;
  FrameReport report;
  TapFrame tap_frame{&packet};  // queued on the roceconf tap (the connections table)
  int tap = -1;
  std::string info;
  // Storage for registration strings, which epan keeps pointers to for the process lifetime.
  std::deque<std::string> names;
  std::deque<std::vector<value_string>> vals;
  std::deque<std::vector<val64_string>> vals64;
  std::vector<hf_register_info> hf;
  std::vector<ei_register_info> ei;
};
State* state = nullptr;

const char* keep(std::string s) {
  state->names.push_back(std::move(s));
  return state->names.back().c_str();
}

// ---------------------------------------------------------------------------------------------
// Registration tables
// ---------------------------------------------------------------------------------------------

struct HfDef {
  Hf hf;
  const char* name;
  const char* abbrev;
  ftenum type;
  int display;
  const void* strings;
  const char* blurb;
};

const HfDef kHfDefs[] = {
    {Hf::kFraming, "Framing", "roceconf.framing", FT_STRING, BASE_NONE, nullptr,
     "RoCEv2, RoCEv1 or InfiniBand"},
    {Hf::kIcrcValid, "ICRC valid", "roceconf.icrc.valid", FT_BOOLEAN, BASE_NONE, nullptr,
     "The Invariant CRC matches the one computed over the frame"},
    {Hf::kIcrcValue, "ICRC", "roceconf.icrc.value", FT_UINT32, BASE_HEX, nullptr,
     "ICRC as carried"},
    {Hf::kIcrcExpected, "Expected ICRC", "roceconf.icrc.expected", FT_UINT32, BASE_HEX, nullptr,
     "ICRC computed over the frame"},
    {Hf::kVcrcValid, "VCRC valid", "roceconf.vcrc.valid", FT_BOOLEAN, BASE_NONE, nullptr,
     "The Variant CRC of a native InfiniBand frame matches the one computed over it"},
    {Hf::kVcrcValue, "VCRC", "roceconf.vcrc.value", FT_UINT16, BASE_HEX, nullptr,
     "VCRC as carried"},
    {Hf::kVcrcExpected, "Expected VCRC", "roceconf.vcrc.expected", FT_UINT16, BASE_HEX, nullptr,
     "VCRC computed over the frame"},
    {Hf::kFinding, "Finding", "roceconf.finding", FT_STRING, BASE_NONE, nullptr,
     "Code of a decoder finding (bad-icrc, pad-count, bth-tver, ...)"},
    {Hf::kChannel, "Channel", "roceconf.channel", FT_UINT32, BASE_DEC, nullptr,
     "Source, destination and destination QP of the frame, numbered in order of first sight"},
    {Hf::kDirection, "QP pair", "roceconf.direction", FT_STRING, BASE_NONE, nullptr,
     "Sending address and QP -> receiving address and QP (the sending QP once the two directions "
     "are paired)"},
    {Hf::kPeerChannel, "Peer channel", "roceconf.peer_channel", FT_UINT32, BASE_DEC, nullptr,
     "The channel of the other direction of this QP pair"},
    {Hf::kLink, "Pairing", "roceconf.link", FT_STRING, BASE_NONE, nullptr,
     "How the two directions were paired: cm (REQ/REP QPNs), unique or psn"},
    {Hf::kPsnExpected, "Expected PSN", "roceconf.psn.expected", FT_UINT24, BASE_HEX_DEC, nullptr,
     "The responder's expected PSN before this request (moves only when the request at it "
     "arrives)"},
    {Hf::kPsnState, "PSN state", "roceconf.psn.state", FT_STRING, BASE_NONE, nullptr,
     "expected, out-of-sequence (ahead of the expected PSN) or duplicate (behind it)"},
    {Hf::kPsnSenderNext, "Sender's next PSN", "roceconf.psn.sender_next", FT_UINT24, BASE_HEX_DEC,
     nullptr, "The sender's view: the PSN after the highest one it sent before this request"},
    {Hf::kPsnNakDue, "NAK due", "roceconf.psn.nak_due", FT_BOOLEAN, BASE_NONE, nullptr,
     "First out-of-sequence request since the last accepted one: the responder must NAK it "
     "once (later ones are dropped silently)"},
    {Hf::kPsnRetransmissionOf, "Retransmission of frame", "roceconf.psn.retransmission_of",
     FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_DUP_ACK),
     "The previous transmission of this PSN in the capture"},
    {Hf::kPsnResentAfterNak, "Resent after NAK in frame", "roceconf.psn.resent_after_nak",
     FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_RESPONSE),
     "The NAK this go-back-N resend follows"},
    {Hf::kNotCaptured, "PSNs not captured", "roceconf.analysis.not_captured.count", FT_UINT32,
     BASE_DEC, nullptr,
     "PSNs this response acknowledges that the capture never saw (capture loss, not graded)"},
    {Hf::kCaptureGaps, "Capture gaps on this QP pair", "roceconf.analysis.capture_gaps", FT_UINT32,
     BASE_DEC, nullptr,
     "PSNs acknowledged but never captured on this QP pair so far: when non-zero the capture is "
     "not complete enough to grade the responder"},
    {Hf::kPmtu, "Path MTU", "roceconf.pmtu", FT_UINT32, BASE_DEC, nullptr,
     "Path MTU the requests of this channel are held to (bytes)"},
    {Hf::kPmtuSource, "Path MTU source", "roceconf.pmtu.source", FT_STRING, BASE_NONE, nullptr,
     "negotiated (CM REQ) or inferred (first FIRST/MIDDLE payload)"},
    {Hf::kFlag, "Analysis flag", "roceconf.analysis.flag", FT_STRING, BASE_NONE, nullptr,
     "Name of a stream analysis judgement"},
    {Hf::kAckedBy, "Acked by frame", "roceconf.analysis.acked_by", FT_FRAMENUM, BASE_NONE,
     FRAMENUM_TYPE(FT_FRAMENUM_RESPONSE), "The response that acknowledged this request"},
    {Hf::kAckFrame, "Response to frame", "roceconf.analysis.ack_frame", FT_FRAMENUM, BASE_NONE,
     FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), "The request at this response's PSN"},
    {Hf::kResponseTime, "Response time", "roceconf.analysis.response_time", FT_RELATIVE_TIME,
     BASE_NONE, nullptr, "Time between request and response"},
    {Hf::kAckedCount, "Requests acknowledged", "roceconf.analysis.acked_count", FT_UINT32, BASE_DEC,
     nullptr, "Requests newly acknowledged, coalesced ones included"},
    {Hf::kFirstAckedFrame, "First acknowledged frame", "roceconf.analysis.first_acked_frame",
     FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_ACK),
     "The oldest request a coalesced acknowledgement covers"},
    {Hf::kReadResponse, "READ response", "roceconf.analysis.read_response", FT_STRING, BASE_NONE,
     nullptr, "READ response k of n"},
    {Hf::kReadIndex, "READ response index", "roceconf.analysis.read_index", FT_UINT32, BASE_DEC,
     nullptr, "Position k of this READ response (1 for the first)"},
    {Hf::kReadCount, "READ responses expected", "roceconf.analysis.read_count", FT_UINT32, BASE_DEC,
     nullptr, "How many responses the READ needs at the path MTU"},
    {Hf::kNakCause, "NAK caused by frame", "roceconf.analysis.nak_cause", FT_FRAMENUM, BASE_NONE,
     FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), "The out-of-sequence request this NAK answers"},
    {Hf::kNakFrame, "NAKed in frame", "roceconf.analysis.nak_frame", FT_FRAMENUM, BASE_NONE,
     FRAMENUM_TYPE(FT_FRAMENUM_RESPONSE), "The NAK that refused this request"},
    {Hf::kConnId, "CM connection", "roceconf.conn.id", FT_UINT32, BASE_DEC, nullptr,
     "CM connection number, in order of first sight"},
    {Hf::kConnState, "CM state", "roceconf.conn.state", FT_STRING, BASE_NONE, nullptr,
     "req-sent, mra-received, rep-received, established, rejected, timewait, closed"},
    {Hf::kConnMessage, "CM message", "roceconf.conn.message", FT_STRING, BASE_NONE, nullptr,
     "REQ, MRA, REJ, REP, RTU, DREQ, DREP, LAP, APR, SIDR_REQ or SIDR_REP"},
    {Hf::kConnRequestFrame, "Reply to frame", "roceconf.conn.request_frame", FT_FRAMENUM, BASE_NONE,
     FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), "The REQ or DREQ this message answers"},
    {Hf::kConnPmtu, "Negotiated path MTU", "roceconf.conn.pmtu", FT_UINT32, BASE_DEC, nullptr,
     "Path MTU of the connection's REQ (bytes)"},
    {Hf::kConnPkey, "Negotiated P_Key", "roceconf.conn.pkey", FT_UINT16, BASE_HEX, nullptr,
     "Partition key of the connection's REQ"},
    {Hf::kConnServiceId, "Service ID", "roceconf.conn.service_id", FT_UINT64, BASE_HEX, nullptr,
     "Service ID the connection's REQ asked for"},
    {Hf::kConnActiveQpn, "Active QPN", "roceconf.conn.active_qpn", FT_UINT24, BASE_HEX, nullptr,
     "QP of the side that sent the REQ"},
    {Hf::kConnPassiveQpn, "Passive QPN", "roceconf.conn.passive_qpn", FT_UINT24, BASE_HEX, nullptr,
     "QP of the side that sent the REP"},
    {Hf::kCase, "Case", "roceconf.case", FT_STRING, BASE_NONE, nullptr,
     "Conformance case that sent or matched the frame"},
    {Hf::kStep, "Step", "roceconf.step", FT_STRING, BASE_NONE, nullptr, "Case line"},
    {Hf::kVerdict, "Verdict", "roceconf.verdict", FT_STRING, BASE_NONE, nullptr,
     "pass, fail, skip, error or inconclusive"},
    {Hf::kEvent, "Event", "roceconf.event", FT_STRING, BASE_NONE, nullptr, "sent or received"},
    {Hf::kNote, "Note", "roceconf.note", FT_STRING, BASE_NONE, nullptr,
     "What the case noted about the frame (a diff, a timing)"},
};
static_assert(std::size(kHfDefs) == kHfCount);

hf_register_info make_hf(int* id, const char* name, const char* abbrev, ftenum type, int display,
                         const void* strings, const char* blurb) {
  hf_register_info r{};
  r.p_id = id;
  r.hfinfo.name = name;
  r.hfinfo.abbrev = abbrev;
  r.hfinfo.type = type;
  r.hfinfo.display = display;
  r.hfinfo.strings = strings;
  r.hfinfo.bitmask = 0;
  r.hfinfo.blurb = blurb;
  r.hfinfo.id = -1;
  r.hfinfo.parent = 0;
  r.hfinfo.ref_type = HF_REF_TYPE_NONE;
  r.hfinfo.same_name_prev_id = -1;
  r.hfinfo.same_name_next = nullptr;
  return r;
}

ei_register_info make_ei(expert_field* id, const char* name, int group, int severity,
                         const char* summary) {
  ei_register_info r{};
  *id = EI_INIT;
  r.ids = id;
  r.eiinfo.name = name;
  r.eiinfo.group = group;
  r.eiinfo.severity = severity;
  r.eiinfo.summary = summary;
  r.eiinfo.id = 0;
  r.eiinfo.protocol = nullptr;
  r.eiinfo.orig_severity = 0;
  r.eiinfo.hf_info = make_hf(nullptr, nullptr, nullptr, FT_NONE, BASE_NONE, nullptr, nullptr);
  r.eiinfo.hf_info.p_id = nullptr;
  return r;
}

int severity_of(Severity s) {
  switch (s) {
    case Severity::kNote:
      return PI_NOTE;
    case Severity::kWarning:
      return PI_WARN;
    case Severity::kError:
      return PI_ERROR;
  }
  return PI_NOTE;
}

int finding_group(FindingCode c) {
  switch (c) {
    case FindingCode::kIpChecksum:
    case FindingCode::kBadIcrc:
    case FindingCode::kBadVcrc:
      return PI_CHECKSUM;
    case FindingCode::kTruncated:
    case FindingCode::kIpLength:
    case FindingCode::kUdpLength:
    case FindingCode::kGrhLength:
    case FindingCode::kLrhLength:
    case FindingCode::kMadLength:
    case FindingCode::kPadCount:
    case FindingCode::kPayloadLength:
      return PI_MALFORMED;
    default:
      return PI_PROTOCOL;
  }
}

int flag_group(FlagCode c) {
  switch (c) {
    case FlagCode::kOutOfSequence:
    case FlagCode::kDuplicate:
    case FlagCode::kRetransmission:
    case FlagCode::kCmDuplicateReq:
    case FlagCode::kCmRetransmission:
    case FlagCode::kNakRepeated:
    case FlagCode::kAckPsnUnknown:
    case FlagCode::kAckOverGap:
    case FlagCode::kMsnStuck:
    case FlagCode::kOpcodeSequence:
    case FlagCode::kNakMissing:
    case FlagCode::kOosAnswered:
    case FlagCode::kDuplicateExecuted:
    case FlagCode::kNotCaptured:
      return PI_SEQUENCE;
    case FlagCode::kNakReceived:
    case FlagCode::kNakSeqError:
    case FlagCode::kNakRnr:
    case FlagCode::kNakInvalidRequest:
    case FlagCode::kNakRemoteAccess:
    case FlagCode::kNakRemoteOp:
    case FlagCode::kNakInvalidRdRequest:
    case FlagCode::kCmRejected:
      return PI_RESPONSE_CODE;
    default:
      return PI_PROTOCOL;
  }
}

std::string underscored(std::string_view s) {
  std::string out(s);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

// The hf type of a codec field: numbers by width, BASE_HEX where the table says so.
ftenum catalogue_type(const CatalogueField& f, int* display) {
  *display = BASE_NONE;
  switch (f.kind) {
    case FieldKind::kUnsigned:
      *display = f.hex ? BASE_HEX : BASE_DEC;
      switch (f.width) {
        case 8:
          return FT_UINT8;
        case 16:
          return FT_UINT16;
        case 24:
          return FT_UINT24;
        case 32:
          return FT_UINT32;
        case 40:
          return FT_UINT40;
        case 48:
          return FT_UINT48;
        case 56:
          return FT_UINT56;
        default:
          return FT_UINT64;
      }
    case FieldKind::kBool:
      return FT_BOOLEAN;
    case FieldKind::kString:
      return FT_STRING;
    case FieldKind::kBytes:
      return FT_BYTES;
    case FieldKind::kEther:
      return FT_ETHER;
    case FieldKind::kIpv4:
      return FT_IPv4;
    case FieldKind::kIpv6:
      return FT_IPv6;
  }
  return FT_BYTES;
}

// The field's value names as epan wants them (null-terminated, kept for the process), or null.
const void* catalogue_strings(const CatalogueField& f, ftenum type, int* display) {
  if (f.values.empty() || f.kind != FieldKind::kUnsigned) return nullptr;
  if (type == FT_UINT64) {
    auto& v = state->vals64.emplace_back();
    for (const ValueName& n : f.values) v.push_back({n.value, keep(std::string(n.name))});
    v.push_back({0, nullptr});
    *display |= BASE_VAL64_STRING;
    return v.data();
  }
  auto& v = state->vals.emplace_back();
  for (const ValueName& n : f.values)
    v.push_back({static_cast<guint32>(n.value), keep(std::string(n.name))});
  v.push_back({0, nullptr});
  return v.data();
}

// ---------------------------------------------------------------------------------------------
// Per-capture state
// ---------------------------------------------------------------------------------------------

void init_routine() {
  analysis::AnalyzerOptions options;
  options.keep_results = false;  // state->results keeps them, compactly
  state->analyzer = std::make_unique<analysis::StreamAnalyzer>(options);
  state->results.clear();
  state->directions.clear();
}

void cleanup_routine() {
  state->analyzer.reset();
  state->results.clear();
  state->report.clear();
}

// ---------------------------------------------------------------------------------------------
// Dissection
// ---------------------------------------------------------------------------------------------

enum class Outcome { kNotRoce, kNoTree, kReport };

bool link_type(const packet_info* pinfo, LinkType* link) {
  if (pinfo->rec == nullptr || pinfo->rec->rec_type != REC_TYPE_PACKET) return false;
  switch (pinfo->rec->rec_header.packet_header.pkt_encap) {
    case WTAP_ENCAP_ETHERNET:
      *link = LinkType::kEthernet;
      return true;
    case WTAP_ENCAP_RAW_IP:
      *link = LinkType::kRaw;
      return true;
    case WTAP_ENCAP_SLL:
      *link = LinkType::kLinuxSll;
      return true;
    case WTAP_ENCAP_SLL2:
      *link = LinkType::kLinuxSll2;
      return true;
    case WTAP_ENCAP_INFINIBAND:
      *link = LinkType::kInfiniBand;
      return true;
    case WTAP_ENCAP_ERF: {
      // wiretap hands over the record without its ERF header (and Ethernet pad).
      if (pinfo->pseudo_header == nullptr) return false;
      switch (pinfo->pseudo_header->erf.phdr.type & 0x7F) {
        case 2:   // ETH
        case 10:  // COLOR_ETH
        case 16:  // DSM_COLOR_ETH
        case 22:  // COLOR_HASH_ETH
          *link = LinkType::kEthernet;
          return true;
        case 21:  // INFINIBAND
        case 25:  // INFINIBAND_LINK
          *link = LinkType::kInfiniBand;
          return true;
        default:
          return false;
      }
    }
    default:
      return false;
  }
}

// The packet comments of the frame; the first that is evidence wins.
std::optional<EvidenceComment> evidence_of(const packet_info* pinfo) {
  if (pinfo->rec == nullptr || pinfo->rec->block == nullptr) return std::nullopt;
  const guint n = wtap_block_count_option(pinfo->rec->block, OPT_COMMENT);
  for (guint i = 0; i < n; ++i) {
    char* text = nullptr;
    if (wtap_block_get_nth_string_option_value(pinfo->rec->block, OPT_COMMENT, i, &text) !=
            WTAP_OPTTYPE_SUCCESS ||
        text == nullptr)
      continue;
    if (auto c = parse_evidence_comment(text)) return c;
  }
  return std::nullopt;
}

// Everything C++ for one frame. Never throws; stores its result in `state`.
Outcome analyse_frame(const std::uint8_t* data, std::uint32_t length, LinkType link,
                      std::uint64_t frame, std::int64_t time_ns, bool visited, bool want_tree,
                      bool codec_fields, bool want_info,
                      const std::optional<EvidenceComment>& comment) noexcept {
  try {
    Packet& p = state->packet;
    DecodeOptions options;
    options.check_icrc = pref_check_icrc != FALSE;
    const Bytes bytes(data, length);
    decode_into(p, bytes, link, options);
    if (!p.bth && pref_extra_udp_port != 0 && p.udp && p.udp->dport == pref_extra_udp_port) {
      options.udp_port = static_cast<std::uint16_t>(pref_extra_udp_port);
      decode_into(p, bytes, link, options);
    }
    const bool roce = p.bth.has_value();
    if (!roce && !comment) return Outcome::kNotRoce;

    const analysis::FrameAnalysis* result = nullptr;
    if (roce && state->analyzer) {
      if (!visited) {
        result = &state->analyzer->add(frame, time_ns, p);
        state->results.put(*result);
        for (const analysis::RcAnswer& a : state->analyzer->answers()) state->results.answer(a);
      } else if (state->results.get(frame, state->stored)) {
        result = &state->stored;
      }
    }
    ReportInput in;
    in.packet = roce ? &p : nullptr;
    in.frame_length = length;
    in.analysis = result;
    in.cm = state->analyzer ? &state->analyzer->cm() : nullptr;
    in.comment = comment;
    in.catalogue = &state->catalogue;
    in.codec_fields = codec_fields;
    in.directions = &state->directions;
    state->info.clear();
    if (want_info) build_info(in, state->info);
    if (!want_tree) return Outcome::kNoTree;
    build_report(in, state->report);
    return Outcome::kReport;
  } catch (...) {
    // Out of memory is the only way here; show nothing for this frame rather than abort.
    state->report.clear();
    state->info.clear();
    return Outcome::kNotRoce;
  }
}

void add_catalogue_item(proto_tree* tree, tvbuff_t* tvb, const ReportItem& it, proto_item** last) {
  const int hf = state->catalogue_hf[it.code];
  const CatalogueField& f = state->catalogue.fields()[it.code];
  switch (f.kind) {
    case FieldKind::kUnsigned:
      if (f.width > 32)
        *last = proto_tree_add_uint64(tree, hf, tvb, 0, 0, it.u);
      else
        *last = proto_tree_add_uint(tree, hf, tvb, 0, 0, static_cast<guint32>(it.u));
      break;
    case FieldKind::kBool:
      *last = proto_tree_add_boolean(tree, hf, tvb, 0, 0, static_cast<guint32>(it.u));
      break;
    case FieldKind::kString:
      *last = proto_tree_add_string(tree, hf, tvb, 0, 0, state->report.texts[it.text].c_str());
      break;
    case FieldKind::kBytes:
      *last = proto_tree_add_bytes_with_length(tree, hf, tvb, 0, 0, it.bytes.data(),
                                               static_cast<gint>(it.bytes.size()));
      break;
    case FieldKind::kEther:
      if (it.bytes.size() == 6) *last = proto_tree_add_ether(tree, hf, tvb, 0, 0, it.bytes.data());
      break;
    case FieldKind::kIpv4:
      if (it.bytes.size() == 4) {
        ws_in4_addr a;
        std::memcpy(&a, it.bytes.data(), 4);
        *last = proto_tree_add_ipv4(tree, hf, tvb, 0, 0, a);
      }
      break;
    case FieldKind::kIpv6:
      if (it.bytes.size() == 16 || it.bytes.size() == 4) {
        ws_in6_addr a{};
        if (it.bytes.size() == 4) {  // IPv4-mapped (::ffff:a.b.c.d)
          a.bytes[10] = a.bytes[11] = 0xFF;
          std::memcpy(a.bytes + 12, it.bytes.data(), 4);
        } else {
          std::memcpy(a.bytes, it.bytes.data(), 16);
        }
        *last = proto_tree_add_ipv6(tree, hf, tvb, 0, 0, &a);
      }
      break;
  }
}

// Copies state->report into the tree. Only trivially destructible locals: epan may longjmp.
void emit_report(tvbuff_t* tvb, packet_info* pinfo, proto_item* root_item, proto_tree* root) {
  const FrameReport& r = state->report;
  const guint frame_length = tvb_captured_length(tvb);
  proto_tree* stack[16];
  std::size_t depth = 0;
  stack[0] = root;
  proto_item* last = root_item;
  for (std::size_t i = 0; i < r.items.size(); ++i) {
    const ReportItem& it = r.items[i];
    proto_tree* tree = stack[depth];
    const int hf = it.code < kHfCount ? hf_ids[it.code] : -1;
    proto_item* item = nullptr;
    switch (it.kind) {
      case ItemKind::kUnsigned:
        item = proto_tree_add_uint(tree, hf, tvb, 0, 0, static_cast<guint32>(it.u));
        break;
      case ItemKind::kUnsigned64:
        item = proto_tree_add_uint64(tree, hf, tvb, 0, 0, it.u);
        break;
      case ItemKind::kBool:
        item = proto_tree_add_boolean(tree, hf, tvb, 0, 0, static_cast<guint32>(it.u));
        break;
      case ItemKind::kString:
        item = proto_tree_add_string(tree, hf, tvb, 0, 0, r.texts[it.text].c_str());
        break;
      case ItemKind::kFrame:
        item = proto_tree_add_uint(tree, hf, tvb, 0, 0, static_cast<guint32>(it.u));
        break;
      case ItemKind::kTime: {
        nstime_t t;
        t.secs = static_cast<time_t>(it.ns / 1000000000);
        t.nsecs = static_cast<int>(it.ns % 1000000000);
        item = proto_tree_add_time(tree, hf, tvb, 0, 0, &t);
        break;
      }
      case ItemKind::kCatalogue:
        add_catalogue_item(tree, tvb, it, &item);
        break;
      case ItemKind::kFindingExpert:
      case ItemKind::kFlagExpert:
      case ItemKind::kVerdictExpert: {
        expert_field* ei = it.kind == ItemKind::kFindingExpert ? &ei_findings[it.code]
                           : it.kind == ItemKind::kFlagExpert  ? &ei_flags[it.code]
                                                               : &ei_verdicts[it.code];
        // The registered summary is fixed (tools group by it); the sentence with the values
        // goes on the item the expert info belongs to.
        if (it.text != 0 && last != nullptr)
          proto_item_append_text(last, " (%s)", r.texts[it.text].c_str());
        expert_add_info(pinfo, last, ei);
        (void)frame_length;
        continue;
      }
      case ItemKind::kOpen: {
        proto_item* sub_item = nullptr;
        proto_tree* sub = proto_tree_add_subtree(tree, tvb, 0, 0, ett_ids[it.code], &sub_item,
                                                 r.texts[it.text].c_str());
        if (sub_item) proto_item_set_generated(sub_item);
        if (depth + 1 < std::size(stack)) stack[++depth] = sub;
        last = sub_item;
        continue;
      }
      case ItemKind::kClose:
        if (depth > 0) --depth;
        continue;
    }
    if (item) {
      if (it.generated) proto_item_set_generated(item);
      last = item;
    }
  }
}

// Whether anything may look at our tree items: a visible tree (Wireshark's details pane,
// tshark -V, -T json, -T fields), a filter or column naming one of our fields (which marks the
// protocol referenced), or the expert tap (-z expert). `codec_fields`: whether the codec's
// header fields are added too: with a visible tree (so -T fields -e roceconf.bth.psn works;
// Wireshark 4.0 does not tell a dissector which -e fields are wanted) or when a filter or column
// names one; otherwise only the MAD and CM fields, which Wireshark's InfiniBand dissector lacks,
// keeping the cost per data frame of a filter pass low.
bool tree_wanted(proto_tree* tree, bool* codec_fields) {
  *codec_fields = false;
  // The expert tap (-z expert, Wireshark's Expert Information) counts expert infos even when
  // no tree is built.
  static const int expert_tap = find_tap_id("expert");
  const bool experts = expert_tap >= 0 && have_tap_listener(expert_tap);
  if (tree == nullptr) return experts;
  const bool visible = PTREE_DATA(tree)->visible;
  // A filter naming a field marks its protocol referenced too: only then look further.
  const header_field_info* proto = proto_registrar_get_nth(static_cast<guint>(proto_roceconf));
  const bool referenced = proto != nullptr && proto->ref_type != HF_REF_TYPE_NONE;
  *codec_fields = visible && pref_codec_fields != FALSE;
  // A filter or column on one header field asks for all of them (they are decoded together).
  for (std::size_t i = 0; referenced && !*codec_fields && i < state->catalogue_hf.size(); ++i) {
    const header_field_info* hf =
        proto_registrar_get_nth(static_cast<guint>(state->catalogue_hf[i]));
    *codec_fields = hf != nullptr && hf->ref_type != HF_REF_TYPE_NONE;
  }
  return referenced || visible || experts;
}

int dissect_roceconf(tvbuff_t* tvb, packet_info* pinfo, proto_tree* tree, void*) {
  if (state == nullptr) return 0;
  LinkType link;
  if (!link_type(pinfo, &link)) return 0;
  const guint length = tvb_captured_length(tvb);
  if (length == 0) return 0;
  // The top-level tvb is the frame itself: no copy, no exception.
  const guint8* data = tvb_get_ptr(tvb, 0, static_cast<gint>(length));
  bool codec_fields = false;
  const bool want_tree = tree_wanted(tree, &codec_fields);
  const bool want_info = pinfo->cinfo != nullptr;
  const std::int64_t time_ns =
      static_cast<std::int64_t>(pinfo->abs_ts.secs) * 1000000000 + pinfo->abs_ts.nsecs;
  const Outcome outcome =
      analyse_frame(data, length, link, pinfo->num, time_ns, PINFO_FD_VISITED(pinfo), want_tree,
                    codec_fields, want_info, want_tree ? evidence_of(pinfo) : std::nullopt);
  if (outcome == Outcome::kNotRoce) return 0;
  if (state->packet.bth && have_tap_listener(state->tap))
    tap_queue_packet(state->tap, pinfo, &state->tap_frame);
  if (!state->info.empty()) col_append_str(pinfo->cinfo, COL_INFO, state->info.c_str());
  if (outcome == Outcome::kReport) {
    proto_item* root_item = proto_tree_add_item(tree, proto_roceconf, tvb, 0, 0, ENC_NA);
    proto_tree* root = proto_item_add_subtree(root_item, ett_ids[0]);
    emit_report(tvb, pinfo, root_item, root);
  }
  return static_cast<int>(length);
}

void apply_prefs() {}

void register_protocol() {
  state = new State;
  proto_roceconf =
      proto_register_protocol("RoCE conformance analysis (roceconf)", "roceconf", "roceconf");

  for (std::size_t i = 0; i < kHfCount; ++i) {
    const HfDef& d = kHfDefs[i];
    hf_ids[static_cast<std::size_t>(d.hf)] = -1;
    state->hf.push_back(make_hf(&hf_ids[static_cast<std::size_t>(d.hf)], d.name, d.abbrev, d.type,
                                d.display, d.strings, d.blurb));
  }
  // One hf per field of the codec's field table; the plugin's own ICRC/VCRC fields keep their
  // abbrevs (roceconf.icrc.value) and stand for the table's fields of the same name.
  std::vector<std::string> own;
  for (const HfDef& d : kHfDefs) own.emplace_back(d.abbrev);
  state->catalogue = FieldCatalogue::build("roceconf", own);
  state->catalogue_hf.assign(state->catalogue.fields().size(), -1);
  for (std::size_t i = 0; i < state->catalogue.fields().size(); ++i) {
    const CatalogueField& f = state->catalogue.fields()[i];
    int display = BASE_NONE;
    const ftenum type = catalogue_type(f, &display);
    const void* strings = catalogue_strings(f, type, &display);
    state->hf.push_back(make_hf(&state->catalogue_hf[i], f.label.c_str(), f.abbrev.c_str(), type,
                                display, strings, f.blurb.empty() ? nullptr : f.blurb.c_str()));
  }
  proto_register_field_array(proto_roceconf, state->hf.data(), static_cast<int>(state->hf.size()));

  static gint* ett[kSubtreeCount];
  for (std::size_t i = 0; i < kSubtreeCount; ++i) {
    ett_ids[i] = -1;
    ett[i] = &ett_ids[i];
  }
  proto_register_subtree_array(ett, static_cast<int>(kSubtreeCount));

  for (std::size_t i = 0; i < kFindingCount; ++i) {
    const auto code = static_cast<FindingCode>(i);
    const FindingInfo& info = finding_info(code);
    state->ei.push_back(make_ei(&ei_findings[i], keep("roceconf.finding." + underscored(info.code)),
                                finding_group(code), severity_of(info.severity),
                                keep("Decoder finding: " + std::string(info.code))));
  }
  for (std::size_t i = 0; i < analysis::kFlagCodeCount; ++i) {
    const auto code = static_cast<FlagCode>(i);
    ei_flags[i] = EI_INIT;
    if (flag_is_field(code)) continue;  // shown as fields (acked_by, ack_frame, read_response)
    state->ei.push_back(make_ei(&ei_flags[i],
                                keep("roceconf.analysis." + underscored(analysis::flag_name(code))),
                                flag_group(code), severity_of(analysis::flag_severity(code)),
                                keep(std::string(analysis::flag_summary(code)))));
  }
  state->ei.push_back(make_ei(&ei_verdicts[static_cast<std::size_t>(VerdictExpert::kFail)],
                              "roceconf.verdict.fail", PI_PROTOCOL, PI_WARN,
                              "Conformance case failed"));
  state->ei.push_back(make_ei(&ei_verdicts[static_cast<std::size_t>(VerdictExpert::kError)],
                              "roceconf.verdict.error", PI_PROTOCOL, PI_WARN,
                              "Conformance case could not run"));
  expert_module_t* expert = expert_register_protocol(proto_roceconf);
  expert_register_field_array(expert, state->ei.data(), static_cast<int>(state->ei.size()));

  module_t* prefs = prefs_register_protocol(proto_roceconf, apply_prefs);
  prefs_register_uint_preference(prefs, "extra_udp_port", "Extra RoCEv2 UDP port",
                                 "Also analyse RoCEv2 on this UDP destination port (0: none)", 10,
                                 &pref_extra_udp_port);
  prefs_register_bool_preference(
      prefs, "codec_fields", "Add every decoded header field when a tree is built",
      "Add every header field the roceconf codec decodes (roceconf.eth.src ... roceconf.bth.psn) "
      "whenever a tree is built (details pane, tshark -V, -T json, -T fields), so that -e and "
      "columns find them; off: only when a filter or column names one, for faster -T fields "
      "passes that need none of them",
      &pref_codec_fields);
  prefs_register_bool_preference(prefs, "check_icrc", "Validate the ICRC",
                                 "Compute the Invariant CRC (and VCRC) of every frame",
                                 &pref_check_icrc);

  state->tap = register_connection_tap();
  register_init_routine(init_routine);
  register_cleanup_routine(cleanup_routine);
}

void register_handoff() {
  roceconf_handle = create_dissector_handle(dissect_roceconf, proto_roceconf);
  register_postdissector(roceconf_handle);
}

}  // namespace
}  // namespace roceconf::wireshark

void plugin_register(void) {
  static proto_plugin plugin;
  plugin.register_protoinfo = roceconf::wireshark::register_protocol;
  plugin.register_handoff = roceconf::wireshark::register_handoff;
  proto_register_plugin(&plugin);
}
