#include "dissector/wireshark/frame_report.h"

#include <fmt/format.h>

#include "dissector/analysis/address.h"
#include "dissector/analysis/cm_tracker.h"
#include "dissector/names.h"

namespace roceconf::wireshark {

namespace {

using analysis::Flag;
using analysis::FlagCode;

std::string_view framing_name(Framing f) {
  switch (f) {
    case Framing::kRoceV2:
      return "RoCEv2";
    case Framing::kRoceV1:
      return "RoCEv1";
    case Framing::kInfiniBand:
      return "InfiniBand";
    case Framing::kNone:
      break;
  }
  return "none";
}

std::string_view link_name(analysis::LinkSource l) {
  switch (l) {
    case analysis::LinkSource::kCm:
      return "cm";
    case analysis::LinkSource::kUnique:
      return "unique";
    case analysis::LinkSource::kPsn:
      return "psn";
    case analysis::LinkSource::kNone:
      break;
  }
  return "none";
}

std::string_view pmtu_source_name(analysis::PmtuSource s) {
  switch (s) {
    case analysis::PmtuSource::kCm:
      return "negotiated";
    case analysis::PmtuSource::kInferred:
      return "inferred";
    case analysis::PmtuSource::kUnknown:
      break;
  }
  return "unknown";
}

class Builder {
 public:
  explicit Builder(FrameReport& out) : out_(out) {}

  std::uint32_t text(std::string_view s) {
    out_.texts.emplace_back(s);
    return static_cast<std::uint32_t>(out_.texts.size() - 1);
  }
  ReportItem& push(ItemKind kind, std::uint16_t code) {
    out_.items.push_back(ReportItem{});
    ReportItem& item = out_.items.back();
    item.kind = kind;
    item.code = code;
    return item;
  }
  void u(Hf hf, std::uint64_t v) { push(ItemKind::kUnsigned, code(hf)).u = v; }
  void u64(Hf hf, std::uint64_t v) { push(ItemKind::kUnsigned64, code(hf)).u = v; }
  void b(Hf hf, bool v) { push(ItemKind::kBool, code(hf)).u = v ? 1 : 0; }
  void s(Hf hf, std::string_view v) {
    const std::uint32_t t = text(v);
    push(ItemKind::kString, code(hf)).text = t;
  }
  void frame(Hf hf, std::uint64_t v) {
    if (v != 0) push(ItemKind::kFrame, code(hf)).u = v;
  }
  void time(Hf hf, std::int64_t ns) {
    if (ns >= 0) push(ItemKind::kTime, code(hf)).ns = ns;
  }
  void open(Subtree st, std::string_view label) {
    const std::uint32_t t = text(label);
    push(ItemKind::kOpen, static_cast<std::uint16_t>(st)).text = t;
  }
  void close() { push(ItemKind::kClose, 0); }
  void expert(ItemKind kind, std::uint16_t code, std::string_view message, std::uint32_t offset = 0,
              std::uint32_t length = 0) {
    const std::uint32_t t = text(message);
    ReportItem& item = push(kind, code);
    item.text = t;
    item.offset = offset;
    item.length = length;
  }

 private:
  static std::uint16_t code(Hf hf) { return static_cast<std::uint16_t>(hf); }
  FrameReport& out_;
};

class CatalogueSink : public FieldSink {
 public:
  CatalogueSink(Builder& b, const FieldCatalogue& catalogue, bool all)
      : b_(b), catalogue_(catalogue), all_(all) {}
  ~CatalogueSink() override {
    if (!layer_.empty()) b_.close();
  }

  void field(std::string_view layer, std::string_view name, const FieldValue& value) override {
    if (!all_ && layer != "mad" && layer != "cm") return;
    const FieldKind kind = FieldCatalogue::kind_of(value);
    const int index = catalogue_.find(layer, name, kind);
    if (index < 0) return;
    if (layer != layer_) {
      if (!layer_.empty()) b_.close();
      layer_ = layer;
      std::string label(layer);
      for (char& c : label) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
      b_.open(Subtree::kLayer, label);
    }
    std::uint32_t text = 0;
    if (const auto* s = std::get_if<std::string_view>(&value)) text = b_.text(*s);
    ReportItem& item = b_.push(ItemKind::kCatalogue, static_cast<std::uint16_t>(index));
    item.generated = false;
    item.text = text;
    if (const auto* n = std::get_if<std::uint64_t>(&value))
      item.u = *n;
    else if (const auto* f = std::get_if<bool>(&value))
      item.u = *f ? 1 : 0;
    else if (const auto* bytes = std::get_if<Bytes>(&value))
      item.bytes = *bytes;
    else if (const auto* a = std::get_if<Address>(&value))
      item.bytes = a->bytes;
  }

 private:
  Builder& b_;
  const FieldCatalogue& catalogue_;
  bool all_;
  std::string_view layer_;
};

// The carried value only when it is wrong: Wireshark's own tree shows it anyway.
void add_checksums(Builder& b, const Packet& p) {
  if (p.icrc) {
    b.b(Hf::kIcrcValid, p.icrc->ok());
    b.u(Hf::kIcrcExpected, p.icrc->expected);
    if (!p.icrc->ok()) b.u(Hf::kIcrcValue, p.icrc->value);
  }
  if (p.vcrc) {
    b.b(Hf::kVcrcValid, p.vcrc->ok());
    b.u(Hf::kVcrcExpected, p.vcrc->expected);
    if (!p.vcrc->ok()) b.u(Hf::kVcrcValue, p.vcrc->value);
  }
}

void add_findings(Builder& b, const Packet& p, std::uint32_t frame_length) {
  for (const Finding& f : p.findings) {
    const std::uint32_t offset = std::min(f.offset, frame_length);
    b.s(Hf::kFinding, f.code_name());
    b.expert(ItemKind::kFindingExpert, static_cast<std::uint16_t>(f.code), f.message, offset, 0);
  }
}

// `state`: the state this frame left the connection in (a later frame may have moved it on).
// `full`: what the two sides negotiated too (on CM frames; data frames name only the state).
void add_connection(Builder& b, const analysis::CmConnection& c, std::string_view state,
                    bool full) {
  b.u(Hf::kConnId, c.id);
  b.s(Hf::kConnState, state);
  if (!full) return;
  if (!c.partial) {
    if (c.pmtu != 0) b.u(Hf::kConnPmtu, c.pmtu);
    b.u(Hf::kConnPkey, c.pkey);
    b.u64(Hf::kConnServiceId, c.service_id);
    b.u(Hf::kConnActiveQpn, c.active_qpn);
  }
  if (c.has_rep) b.u(Hf::kConnPassiveQpn, c.passive_qpn);
}

// The state a connection was in when `frame` passed (the tracker keeps only the latest).
analysis::CmState state_at(const analysis::CmConnection& c, std::uint64_t frame) {
  using analysis::CmState;
  if (c.drep_frame != 0 && frame > c.drep_frame) return CmState::kClosed;
  if (c.dreq_frame != 0 && frame > c.dreq_frame) return CmState::kTimewait;
  if (c.rej_frame != 0 && frame > c.rej_frame) return CmState::kRejected;
  if (c.established_frame != 0 && frame >= c.established_frame) return CmState::kEstablished;
  if (c.rep_frame != 0 && frame > c.rep_frame) return CmState::kRepReceived;
  if (c.mra_frame != 0 && frame > c.mra_frame) return CmState::kMraReceived;
  if (c.req_frame != 0 && frame > c.req_frame) return CmState::kReqSent;
  return c.state;
}

// "192.0.2.11 QP 0x00002a -> 192.0.2.12 QP 0x000029": who sends to whom (the sending QP once
// the analysis has paired the two directions).
std::string direction_text(const Packet& p, const analysis::RcFrameInfo& rc) {
  const std::string from = analysis::NetAddress::source(p).to_string();
  const std::string to = analysis::NetAddress::destination(p).to_string();
  const std::uint32_t dqpn = p.bth ? p.bth->dqpn : 0;
  if (rc.source_qpn)
    return fmt::format("{} QP {:#08x} -> {} QP {:#08x}", from, *rc.source_qpn, to, dqpn);
  return fmt::format("{} -> {} QP {:#08x}", from, to, dqpn);
}

void add_rc(Builder& b, const analysis::RcFrameInfo& rc) {
  // Kept short: every item costs on every frame of a million-frame capture.
  const bool request = rc.role == analysis::RcRole::kRequest;
  b.u(Hf::kChannel, rc.channel);
  if (request) {
    if (rc.pmtu != 0) {
      b.u(Hf::kPmtu, rc.pmtu);
      if (rc.pmtu_source != analysis::PmtuSource::kCm)
        b.s(Hf::kPmtuSource, pmtu_source_name(rc.pmtu_source));
    }
    if (rc.expected_psn) b.u(Hf::kPsnExpected, *rc.expected_psn);
    if (rc.psn_state != analysis::PsnState::kUnknown)
      b.s(Hf::kPsnState, analysis::psn_state_name(rc.psn_state));
    if (rc.sender_next && *rc.sender_next != rc.expected_psn)
      b.u(Hf::kPsnSenderNext, *rc.sender_next);
    if (rc.nak_due) b.b(Hf::kPsnNakDue, true);
    b.frame(Hf::kPsnRetransmissionOf, rc.retransmission_of);
    b.frame(Hf::kPsnResentAfterNak, rc.resend_after_nak);
    b.frame(Hf::kAckedBy, rc.acked_by);
    if (rc.acked_by != 0) b.time(Hf::kResponseTime, rc.ack_delay_ns);
    return;
  }
  if (rc.peer_channel != 0) b.u(Hf::kPeerChannel, rc.peer_channel);
  b.s(Hf::kLink, link_name(rc.link));
  b.frame(Hf::kAckFrame, rc.request_frame);
  if (rc.request_frame != 0) b.time(Hf::kResponseTime, rc.response_time_ns);
  if (rc.acked_count > 1) {  // coalesced: more than the request at this PSN
    b.u(Hf::kAckedCount, rc.acked_count);
    b.frame(Hf::kFirstAckedFrame, rc.first_acked_frame);
  }
  if (rc.read_index != 0) {
    b.s(Hf::kReadResponse, rc.read_count != 0
                               ? fmt::format("{} of {}", rc.read_index, rc.read_count)
                               : fmt::format("{}", rc.read_index));
    b.u(Hf::kReadIndex, rc.read_index);
    if (rc.read_count != 0) b.u(Hf::kReadCount, rc.read_count);
  }
  b.frame(Hf::kNakCause, rc.nak_cause_frame);
  if (rc.not_captured != 0) b.u(Hf::kNotCaptured, rc.not_captured);
  if (rc.capture_gaps != 0) b.u(Hf::kCaptureGaps, rc.capture_gaps);
}

void add_flags(Builder& b, const analysis::Flags& flags) {
  for (const Flag& f : flags) {
    if (flag_is_field(f.code)) continue;  // shown by its own fields
    b.s(Hf::kFlag, f.name());
    b.expert(ItemKind::kFlagExpert, static_cast<std::uint16_t>(f.code), f.text());
    if (f.code == FlagCode::kNakReceived) b.frame(Hf::kNakFrame, f.frame);
  }
}

void add_comment(Builder& b, const EvidenceComment& c) {
  b.open(Subtree::kEvidence, fmt::format("Evidence: case {}, verdict {}", c.case_id, c.verdict));
  if (!c.case_id.empty()) b.s(Hf::kCase, c.case_id);
  if (!c.step.empty()) b.s(Hf::kStep, c.step);
  if (!c.verdict.empty()) b.s(Hf::kVerdict, c.verdict);
  // Only the frames of the step that failed the case, not every frame of a failed case.
  if (c.failed_here && (c.verdict == "fail" || c.verdict == "error")) {
    const auto which = c.verdict == "fail" ? VerdictExpert::kFail : VerdictExpert::kError;
    b.expert(ItemKind::kVerdictExpert, static_cast<std::uint16_t>(which),
             fmt::format("case {}, step {}", c.case_id, c.step.empty() ? "-" : c.step));
  }
  if (!c.event.empty()) b.s(Hf::kEvent, c.event);
  if (!c.note.empty()) b.s(Hf::kNote, c.note);
  b.close();
}

}  // namespace

void FrameReport::clear() {
  items.clear();
  texts.clear();
  texts.emplace_back();
}

void build_info(const ReportInput& in, std::string& out) {
  out.clear();
  auto tag = [&out](std::string_view t) { out.append(" [").append(t).append("]"); };
  if (in.packet)
    for (const Finding& f : in.packet->findings)
      if (f.severity() != Severity::kNote) tag(f.code_name());
  if (in.analysis)
    for (const Flag& f : in.analysis->flags)
      if (!flag_is_field(f.code) &&
          (f.severity() != Severity::kNote || analysis::flag_is_capture_note(f.code)))
        tag(f.name());
  if (in.comment && in.comment->failed_here &&
      (in.comment->verdict == "fail" || in.comment->verdict == "error")) {
    out.append(" [case ").append(in.comment->verdict).append("]");
  }
}

bool flag_is_field(FlagCode code) {
  return code == FlagCode::kAckedBy || code == FlagCode::kAcks || code == FlagCode::kReadResponse;
}

void build_report(const ReportInput& in, FrameReport& out) {
  out.clear();
  Builder b(out);
  if (in.packet) {
    const Packet& p = *in.packet;
    b.s(Hf::kFraming, framing_name(p.framing));
    add_checksums(b, p);
    add_findings(b, p, in.frame_length);
  }
  if (const analysis::FrameAnalysis* a = in.analysis) {
    std::uint32_t conn = a->cm ? a->cm->connection : 0;
    if (a->rc && conn == 0) conn = a->rc->connection;
    const analysis::CmConnection* c = in.cm && conn != 0 ? in.cm->connection(conn) : nullptr;
    if (a->rc || !a->flags.empty()) {
      if (a->rc && in.packet) {
        const std::uint64_t key =
            std::uint64_t{a->rc->channel} << 32 | a->rc->source_qpn.value_or(0xFFFFFFFFu);
        std::string computed;
        const std::string* name = nullptr;
        if (in.directions != nullptr) {
          auto [it, added] = in.directions->try_emplace(key);
          if (added) it->second = direction_text(*in.packet, *a->rc);
          name = &it->second;
        } else {
          computed = direction_text(*in.packet, *a->rc);
          name = &computed;
        }
        const std::string& direction = *name;
        b.open(Subtree::kAnalysis,
               fmt::format("Analysis: {} {}",
                           a->rc->role == analysis::RcRole::kRequest ? "request" : "response",
                           direction));
        b.s(Hf::kDirection, direction);
      } else {
        b.open(Subtree::kAnalysis, "Analysis");
      }
      if (a->rc) add_rc(b, *a->rc);
      add_flags(b, a->flags);
      // Data frames name their connection here, without a subtree of their own.
      if (!a->cm && c)
        add_connection(b, *c, analysis::cm_state_name(state_at(*c, a->frame)), false);
      b.close();
    }
    if (a->cm) {
      const std::string_view state =
          conn != 0 ? analysis::cm_state_name(a->cm->state) : std::string_view{};
      b.open(Subtree::kConnection,
             conn != 0 ? fmt::format("CM connection {}: {}", conn, state) : "CM (no connection)");
      b.s(Hf::kConnMessage, a->cm->message);
      b.frame(Hf::kConnRequestFrame, a->cm->request_frame);
      if (c) add_connection(b, *c, state, true);
      b.close();
    }
  }
  if (in.comment) add_comment(b, *in.comment);
  if (in.packet && in.catalogue && (in.codec_fields || in.packet->mad)) {
    CatalogueSink sink(b, *in.catalogue, in.codec_fields);
    visit_fields(*in.packet, sink);
  }
}

}  // namespace roceconf::wireshark
