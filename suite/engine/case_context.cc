#include "suite/engine/case_context.h"

#include <algorithm>

#include <fmt/format.h>

#include "dissector/address_text.h"
#include "dissector/analysis/psn.h"
#include "dissector/opcode.h"
#include "suite/engine/segmenter.h"

namespace roceconf::engine {

CaseContext::CaseContext(Target& target, const Timing& timing, report::CaseResult& result,
                         std::uint64_t seed)
    : target_(target),
      timing_(timing),
      random_(seed),
      evidence_(result, target.port().clock()),
      demux_(target.port(), evidence_, connections_, passive_),
      wire_(target.port(), evidence_, demux_),
      control_(target, evidence_),
      cm_(target, timing_, evidence_, wire_, control_, passive_),
      qps_(target, evidence_, control_, wire_, passive_),
      cm_passive_(target, timing_, evidence_, wire_, control_, cm_, qps_, passive_, random_) {
  wire_.set_on_match([this](Connection* c, const Packet& p) { cm_.after_match(c, p); });
  wire_.set_on_mismatch([this](Connection* c, const Packet& p) { cm_.after_mismatch(c, p); });
  // Every frame the target sends is graded for framing (header/sent-framing folds the findings).
  SentFramingExpect framing;
  framing.congestion_management = target.capabilities().congestion_management;
  framing.declared_ecn = target.capabilities().congestion.ecn;
  framing.source_gid = gid_from_ipv4(target.device().ip);
  framing.destination_gid = gid_from_ipv4(target.tester().ip);
  std::optional<SentFramingExpect> framing6;
  if (target.device().ip6 && target.tester().ip6) {
    framing6 = framing;
    framing6->source_gid = *target.device().ip6;
    framing6->destination_gid = *target.tester().ip6;
  }
  demux_.set_framing(framing, framing6);
  // QPNs, comm IDs and TIDs differ between cases (a target may still remember the previous
  // case's connection) and repeat exactly between runs of the same case.
  next_qpn_ = 0x100 + static_cast<std::uint32_t>(random_() % 0xF000) * 0x10;
  cm_.set_first_tid(random_() & 0x0000FFFFFFFF0000ULL);
}

CaseContext::~CaseContext() = default;

Addresses CaseContext::addresses() const {
  return tester_addresses(target_);
}

void CaseContext::require(std::string_view capability) {
  control_.require(capability);
}

// ---- connections -------------------------------------------------------------------------

Connection& CaseContext::connection(const std::string& name) {
  const auto it = connections_.find(name);
  if (it == connections_.end()) error(fmt::format("no connection named '{}'", name));
  return *it->second;
}

Connection& CaseContext::new_connection(const std::string& name) {
  if (connections_.contains(name)) error(fmt::format("connection '{}' exists already", name));
  auto c = std::make_unique<Connection>();
  c->name = name;
  c->local_qpn = new_qpn();
  c->local_psn0 = static_cast<std::uint32_t>(random_()) & psn::kMask;
  c->next_psn = c->local_psn0;
  c->flow_psn = c->local_psn0;
  c->remote_psn0 = static_cast<std::uint32_t>(random_()) & psn::kMask;
  c->local_comm_id = static_cast<std::uint32_t>(random_());
  c->udp_sport = static_cast<std::uint16_t>(0xC000 | (c->local_qpn & 0x3FFF));
  auto& ref = *c;
  connections_.emplace(name, std::move(c));
  return ref;
}

std::uint32_t CaseContext::new_qpn() {
  const std::uint32_t q = next_qpn_ & psn::kMask;
  next_qpn_ += 1;
  return q;
}

std::vector<std::uint8_t> CaseContext::cm_send(Connection& c, std::string_view message,
                                               const Assignments& a) {
  return cm_.cm_send(c, message, a);
}

void CaseContext::connect(Connection& c, const Assignments& a) {
  cm_.connect(c, a);
}

void CaseContext::disconnect(Connection& c) {
  cm_.disconnect(c);
}

void CaseContext::accept(Connection& c, const Assignments& a) {
  cm_passive_.accept(c, a);
}

void CaseContext::expect_status(Connection& c, const Assignments& want, TimeNs window) {
  qps_.expect_status(c, want, window);
}

void CaseContext::open(Connection& c, const Assignments& a) {
  qps_.open(c, a);
}

// ---- data -------------------------------------------------------------------------------

std::vector<std::vector<std::uint8_t>> CaseContext::send(Connection& c, std::string_view op,
                                                         const Assignments& a) {
  // A SEND of more than the responder's receive buffers hold, or an RDMA operation with no
  // region to address, cannot say anything about the target: SKIP before sending. A QP the case
  // opened has the receive size the case chose, so a longer SEND there is meant (C9-205).
  const auto need_region = [&](std::uint8_t code) {
    const OpcodeInfo& info = opcode_info(code);
    if (info.kind == OpKind::kSend && info.position != Position::kMiddle && c.region &&
        c.region->recv_size > 0 && !c.via_control) {
      std::uint64_t total = 0;
      if (const auto* l = a.find("len")) total = parse_uint(*l).value_or(0);
      if (const auto* d = a.find("dmalen")) total = std::max(total, parse_uint(*d).value_or(0));
      if (total > c.region->recv_size)
        skip(fmt::format("a SEND of {} bytes; the responder's receive buffers hold {}", total,
                         c.region->recv_size));
    }
    const std::uint16_t h = info.headers;
    if ((h & (hdr::kReth | hdr::kAtomicEth)) && !c.region && !a.has("va"))
      skip(
          fmt::format("{} has no remote region to address: the REP carried no RCNF block "
                      "(suite/reference_nic/RESPONDER_CONVENTION.md)",
                      c.name));
  };
  const std::optional<MessageOp> message = message_op(op);
  if (!message) {
    auto code = request_opcode(op);
    if (!code) error(code.error());
    need_region(*code);
    auto frame = build_request(addresses(), c, *code, a);
    if (!frame) error(frame.error());
    if (opcode_info(*code).is_request) {
      c.next_psn = psn::add(frame->psn, frame->psn_span);
      if (frame->psn == c.flow_psn && !a.has("psn") && !a.has("bth.psn")) c.flow_psn = c.next_psn;
    }
    wire_.transmit(frame->bytes, fmt::format("{} {} {}", c.name, op, a.text()));
    return {std::move(frame->bytes)};
  }
  // A whole message, segmented at the path MTU.
  auto segments = MessageSegmenter::make(*message, a, c.pmtu, c.next_psn & 0xFF);
  if (!segments) error(segments.error());
  std::vector<std::vector<std::uint8_t>> sent;
  for (std::uint64_t i = 0; i < segments->packets(); ++i) {
    const Segment s = segments->segment(i);
    need_region(s.opcode);
    auto frame = build_request(addresses(), c, s.opcode, s.fields);
    if (!frame) error(frame.error());
    c.next_psn = psn::add(frame->psn, frame->psn_span);
    if (frame->psn == c.flow_psn && !a.has("psn") && !a.has("bth.psn")) c.flow_psn = c.next_psn;
    wire_.transmit(frame->bytes,
                   fmt::format("{} {} {}", c.name, opcode_info(s.opcode).op_name, s.fields.text()));
    sent.push_back(std::move(frame->bytes));
  }
  return sent;
}

void CaseContext::send_frame(std::vector<std::uint8_t> frame, std::string text) {
  wire_.transmit(std::move(frame), std::move(text));
}

// ---- receiving ---------------------------------------------------------------------------

Received CaseContext::expect(Connection* c, const Expectation& e, TimeNs window, bool eventually) {
  return wire_.expect(c, std::vector<Expectation>{e}, window,
                      eventually ? ExpectMode::kEventually : ExpectMode::kNext);
}

Received CaseContext::expect(Connection* c, const std::vector<Expectation>& alternatives,
                             TimeNs window, ExpectMode mode) {
  return wire_.expect(c, alternatives, window, mode);
}

void CaseContext::expect_nothing(Connection* c, TimeNs window) {
  wire_.expect_nothing(c, window);
}

std::vector<Received> CaseContext::collect(Connection* c, TimeNs window) {
  return wire_.collect(c, window);
}

void CaseContext::wait(TimeNs duration) {
  wire_.wait(duration);
}

// ---- control -----------------------------------------------------------------------------

nlohmann::json CaseContext::control(nlohmann::json request) {
  return control_.control(std::move(request));
}

nlohmann::json CaseContext::control_ok(nlohmann::json request) {
  return control_.control_ok(std::move(request));
}

std::map<std::string, std::uint64_t> CaseContext::counters() {
  return control_.counters();
}

std::uint32_t CaseContext::create_cq(const std::string& name, std::uint32_t depth) {
  return control_.create_cq(name, depth);
}

std::uint32_t CaseContext::cq(const std::string& name) {
  return control_.cq(name);
}

// ---- verdicts ----------------------------------------------------------------------------

void CaseContext::fail(std::string reason, std::vector<report::FieldDiff> diffs) {
  evidence_.fail(std::move(reason), std::move(diffs));
}
void CaseContext::skip(std::string reason) {
  evidence_.skip(std::move(reason));
}
void CaseContext::inconclusive(std::string reason) {
  evidence_.inconclusive(std::move(reason));
}
void CaseContext::error(std::string reason) {
  evidence_.error(std::move(reason));
}
void CaseContext::note(std::string text) {
  evidence_.note(std::move(text));
}

void CaseContext::measure(report::Measurement m) {
  evidence_.measure(std::move(m));
}

void CaseContext::close_all() {
  std::vector<Connection*> closing;  // DREQ sent
  for (auto& [name, c] : connections_) {
    try {
      if (const auto it = passive_.find(name); it != passive_.end()) {
        const PassiveSide* p = &it->second;
        // The target's active side must not go on retrying into the next case: a REP sent means
        // its connection is up (DREQ), a REQ not answered yet is rejected (Consumer).
        if (c->state == ConnState::kDreqSent || c->state == ConnState::kClosed || p->rej_sent) {
        } else if (p->rep_sent) {
          cm_.cm_send(*c, "DREQ", {});
          closing.push_back(c.get());
        } else if (p->req_seen || p->target_comm_id) {
          if (!p->req_seen) c->remote_comm_id = *p->target_comm_id;
          cm_.cm_send(*c, "REJ", {{"reason", "28"}});
        }
      } else if (!c->via_control &&
                 (c->state == ConnState::kEstablished || c->state == ConnState::kRepReceived)) {
        cm_.cm_send(*c, "DREQ", {});
        closing.push_back(c.get());
      }
    } catch (const CaseStop&) {
    }
  }
  try {
    await_dreps(std::move(closing));
    wait(timing_.silence_floor / 4);
  } catch (const CaseStop&) {
  }
  // The case's control-made objects are freed by one `reset`, which frees memory windows before
  // QPs: a device may block destroying a QP a bound window still holds (rxe), and a QP must not
  // go on retransmitting into the next case. Not recorded: the case's verdict is made.
  if (std::ranges::any_of(connections_, [](const auto& kv) { return kv.second->via_control; })) {
    try {
      (void)control::Client([this](const auto& request) {
        return target_.control(request);
      }).reset();
    } catch (const CaseStop&) {
    }
  }
  demux_.clear();
}

// A target slow to tear connections down (many at once, an emulated host) would otherwise still
// be answering these DREQs, and be busy, when the next case sends its first REQ. Waits while
// DREPs keep coming, each within an expect window of the last frame; grades nothing.
void CaseContext::await_dreps(std::vector<Connection*> closing) {
  const TimeNs window = timing_.expect_window();
  while (!closing.empty()) {
    const auto r = demux_.next_for(nullptr, add_saturating(now(), window));
    if (!r) return;  // a whole window without a frame: nothing more is coming
    const auto& mad = r->packet.mad;
    if (mad && mad->cm && std::holds_alternative<CmDrep>(*mad->cm))
      std::erase(closing, demux_.owner_of(r->packet));
  }
}

}  // namespace roceconf::engine
