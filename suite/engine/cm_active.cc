#include "suite/engine/cm_active.h"

#include <fmt/format.h>

#include "control/rcnf_private_data.h"
#include "dissector/analysis/psn.h"
#include "dissector/icrc.h"
#include "dissector/mad/rdma_cm.h"
#include "dissector/names.h"
#include "suite/engine/case_stop.h"
#include "suite/engine/frame_builder.h"

namespace roceconf::engine {

namespace {

std::uint32_t ipv4_u32(const Ipv4Address& a) {
  return std::uint32_t{a[0]} << 24 | std::uint32_t{a[1]} << 16 | std::uint32_t{a[2]} << 8 | a[3];
}

// The REP's own fields (the tester answering the target's REQ); false for a key that is not one
// (the comm IDs are set_cm_field's).
// The tester's CA GUID in the REQs and REPs it sends.
constexpr std::uint64_t kTesterCaGuid = 0x0200'00FF'FE00'0002ULL;

bool is_mad_header_key(std::string_view key) {
  return key == "tid" || key == "class_version" || key == "base_version" || key == "method" ||
         key == "qkey" || key == "bth.pkey";
}

}  // namespace

CmActive::CmActive(Target& target, const Timing& timing, EvidenceRecorder& evidence,
                   WireSteps& wire, ControlSteps& control, PassiveTable& passive)
    : target_(target),
      timing_(timing),
      evidence_(evidence),
      wire_(wire),
      control_(control),
      passive_(passive) {}

std::vector<std::uint8_t> CmActive::cm_send(Connection& c, std::string_view message,
                                            const Assignments& a) {
  Assignments header;
  CmMessage msg;
  std::array<std::uint8_t, kReqPrivateDataSize> req_private{};
  std::uint64_t tid = 0;
  if (message == "REQ") {
    CmReq r;
    RdmaCmHeader h;
    h.src_port = static_cast<std::uint16_t>(40000 + (c.local_qpn & 0x3FFF));
    const Endpoint tester = target_.tester(), device = target_.device();
    if (c.ipv6 && (!tester.ip6 || !device.ip6))
      evidence_.error("REQ over IPv6: the tester or the target has no IPv6 address");
    if (c.ipv6) {
      // cma.c's header for AF_INET6: the addresses as they are, IP version 6.
      h.ip_version = 6;
      h.src_ip = *tester.ip6;
      h.dst_ip = *device.ip6;
    } else {
      h.src_ip = rdma_cm_ipv4(ipv4_u32(tester.ip));
      h.dst_ip = rdma_cm_ipv4(ipv4_u32(device.ip));
    }
    build_rdma_cm_private_data(h, {}, req_private);
    r.local_comm_id = c.local_comm_id;
    r.service_id = c.service_id != 0 ? c.service_id
                                     : rdma_cm_service_id(rdma_cm_ps::kTcp, target_.service_port());
    r.local_ca_guid = kTesterCaGuid;
    r.local_qpn = c.local_qpn;
    r.starting_psn = c.remote_psn0;  // the target sends from it; the REP says where we do
    r.responder_resources = 4;
    r.initiator_depth = 4;
    r.path_mtu = mtu_enum(c.pmtu);
    r.pkey = c.pkey;
    // The primary path's GIDs: the IPv6 addresses themselves, or IPv4-mapped (Annex A17.4.5.1).
    r.primary.local_gid = c.ipv6 ? *tester.ip6 : cm_ipv4_gid(ipv4_u32(tester.ip));
    r.primary.remote_gid = c.ipv6 ? *device.ip6 : cm_ipv4_gid(ipv4_u32(device.ip));
    r.primary.hop_limit = 64;
    r.primary.local_ack_timeout = 14;
    r.private_data = req_private;
    msg = r;
    c.req_tid = next_tid_++;
    tid = c.req_tid;
  } else if (message == "REP") {
    // The tester as the passive side answers the target's REQ (accept).
    CmRep r;
    r.local_comm_id = c.local_comm_id;
    r.remote_comm_id = c.remote_comm_id;
    r.local_qpn = c.local_qpn;
    r.starting_psn = c.remote_psn0;  // the target sends from it; the REQ said where we do
    r.responder_resources = c.responder_resources;
    r.initiator_depth = c.initiator_depth;
    r.rnr_retry_count = 7;
    r.local_ca_guid = kTesterCaGuid;
    msg = r;
    tid = c.req_tid;
  } else if (message == "RTU") {
    msg = CmRtu{c.local_comm_id, c.remote_comm_id, {}};
    tid = c.req_tid;
  } else if (message == "DREQ") {
    CmDreq d;
    d.local_comm_id = c.local_comm_id;
    d.remote_comm_id = c.remote_comm_id;
    d.remote_qpn = c.remote_qpn;
    msg = d;
    tid = next_tid_++;
  } else if (message == "DREP") {
    msg = CmDrep{c.local_comm_id, c.remote_comm_id, {}};
    tid = next_tid_++;
  } else if (message == "MRA") {
    CmMra m;
    m.local_comm_id = c.local_comm_id;
    m.remote_comm_id = c.remote_comm_id;
    // The passive side (accept) asks for time to answer the REQ, the active side the REP.
    m.message_mraed = passive_.contains(c.name) ? cm_msg_kind::kReq : cm_msg_kind::kRep;
    msg = m;
    tid = c.req_tid;
  } else if (message == "REJ") {
    CmRej r;
    r.local_comm_id = c.local_comm_id;
    r.remote_comm_id = c.remote_comm_id;
    r.message_rejected = passive_.contains(c.name) ? cm_msg_kind::kReq : cm_msg_kind::kRep;
    msg = r;
    tid = c.req_tid;
  } else if (message == "LAP") {
    // A new alternate path on the same GIDs: RoCE has no second port to load.
    CmLap l;
    l.local_comm_id = c.local_comm_id;
    l.remote_comm_id = c.remote_comm_id;
    l.remote_qpn = c.remote_qpn;
    l.alternate.local_gid = cm_ipv4_gid(ipv4_u32(target_.tester().ip));
    l.alternate.remote_gid = cm_ipv4_gid(ipv4_u32(target_.device().ip));
    l.alternate.hop_limit = 64;
    l.alternate.local_ack_timeout = 14;
    msg = l;
    tid = next_tid_++;
  } else if (message == "ClassPortInfo") {
    msg = ClassPortInfo{};
    tid = next_tid_++;
    header.set("method", "1");
  } else {
    evidence_.error(fmt::format(
        "unknown CM message '{}' (REQ, REP, RTU, DREQ, DREP, MRA, REJ, LAP, ClassPortInfo)",
        message));
  }
  std::uint16_t pkey = c.pkey;
  bool bad_icrc = false;
  std::optional<std::size_t> cut;  // the MAD (and DETH) cut or extended: a MAD of the wrong size
  for (const auto& item : a.items()) {
    if (item.key == "cut") {
      auto n = parse_uint(item.value);
      if (!n || *n > 0xFFFF) evidence_.error("cut: a byte count up to 65535");
      cut = static_cast<std::size_t>(*n);
    } else if (item.key == "icrc") {
      if (item.value != "bad") evidence_.error("icrc: a CM message takes icrc=bad only");
      bad_icrc = true;
    } else if (item.key == "tid") {
      auto n = parse_uint(item.value);
      if (!n) evidence_.error("tid: " + n.error());
      tid = *n;
      if (message == "REQ") c.req_tid = tid;
    } else if (item.key == "bth.pkey") {
      auto n = parse_uint(item.value);
      if (!n || *n > 0xFFFF) evidence_.error("bth.pkey: not a P_Key");
      pkey = static_cast<std::uint16_t>(*n);
    } else if (is_mad_header_key(item.key)) {
      header.set(item.key, item.value);
    } else if (auto ok = set_cm_field(msg, item.key, item.value); !ok) {
      evidence_.error(ok.error());
    }
  }
  if (const auto* r = std::get_if<CmReq>(&msg)) {
    c.service_id = r->service_id;
    c.local_comm_id = r->local_comm_id;
    c.remote_psn0 = r->starting_psn & psn::kMask;
    c.local_qpn = r->local_qpn;
    if (mtu_bytes(r->path_mtu) != 0) c.pmtu = mtu_bytes(r->path_mtu);
    c.pkey = r->pkey;
    c.av_hop_limit = r->primary.hop_limit;
    c.av_traffic_class = r->primary.traffic_class;
    c.state = ConnState::kReqSent;
  }
  if (const auto* r = std::get_if<CmRep>(&msg)) {
    c.local_comm_id = r->local_comm_id;
    c.local_qpn = r->local_qpn;
    c.remote_psn0 = r->starting_psn & psn::kMask;
    c.responder_resources = r->responder_resources;
    c.initiator_depth = r->initiator_depth;
    if (const auto p = passive_.find(c.name); p != passive_.end()) p->second.rep_sent = true;
  }
  if (std::holds_alternative<CmRej>(msg)) {
    if (const auto p = passive_.find(c.name); p != passive_.end()) {
      p->second.rej_sent = true;
      c.state = ConnState::kRejected;
    }
  }
  if (std::holds_alternative<CmDreq>(msg)) c.state = ConnState::kDreqSent;
  // A Get on a connection with no CM exchange of its own: its GetResp is the connection's.
  if (std::holds_alternative<ClassPortInfo>(msg) && c.state == ConnState::kIdle) c.req_tid = tid;
  Addresses addr = tester_addresses(target_);
  addr.ipv6 = c.ipv6;
  auto frame = build_mad(addr, pkey, msg, tid, header);
  if (!frame) evidence_.error(frame.error());
  if (cut) {
    const std::size_t ip_at = Ethernet::kSize + (addr.marking.vlan ? Vlan::kSize : 0);
    const std::size_t bth_at = ip_at + (addr.ipv6 ? Ipv6::kSize : Ipv4::kSize) + Udp::kSize;
    if (!resize_roce_v2_transport(frame->bytes, ip_at, bth_at, *cut))
      evidence_.error("cut: the MAD's frame has no RoCEv2 transport to cut");
  }
  // The ICRC is the frame's last four bytes (a MAD frame is never padded).
  if (bad_icrc) frame->bytes.back() ^= 0xFF;
  wire_.transmit(frame->bytes,
                 fmt::format("CM {} {} tid={:#x}{}{}", message, c.name, tid,
                             bad_icrc ? " icrc=bad" : "", cut ? fmt::format(" cut={}", *cut) : ""));
  return std::move(frame->bytes);
}

void CmActive::connect(Connection& c, const Assignments& a) {
  // A connection needs a listener; whether the case also needs the convention it says itself.
  control_.require("listener");
  Assignments req;
  bool rtu = true;
  for (const auto& item : a.items()) {
    if (item.key == "pmtu") {
      auto n = parse_uint(item.value);
      if (!n || mtu_enum(static_cast<std::uint32_t>(*n)) == 0)
        evidence_.error(fmt::format("pmtu: {} is not 256, 512, 1024, 2048 or 4096", item.value));
      c.pmtu = static_cast<std::uint32_t>(*n);
      if (c.pmtu > target_.capabilities().max_pmtu)
        evidence_.skip(fmt::format("needs a path MTU of {}; the link to the target carries {}",
                                   c.pmtu, target_.capabilities().max_pmtu));
    } else if (item.key == "pkey") {
      auto n = parse_uint(item.value);
      if (!n || *n > 0xFFFF) evidence_.error("pkey: not a P_Key");
      c.pkey = static_cast<std::uint16_t>(*n);
    } else if (item.key == "psn") {
      evidence_.error(
          "psn: with CM the target chooses the PSN the tester sends from (REP Starting PSN); "
          "use target_psn= for the REQ's, or open (control) to choose both");
    } else if (item.key == "target_psn") {
      auto n = parse_uint(item.value);
      if (!n || *n > psn::kMask) evidence_.error("target_psn: not a 24-bit PSN");
      c.remote_psn0 = static_cast<std::uint32_t>(*n);
    } else if (item.key == "rtu") {
      rtu = item.value != "0" && item.value != "no" && item.value != "false";
    } else if (item.key == "gid") {
      if (item.value != "ipv4" && item.value != "ipv6")
        evidence_.error(fmt::format("gid: '{}' is not ipv4 or ipv6", item.value));
      c.ipv6 = item.value == "ipv6";
      if (c.ipv6) control_.require("ipv6");
    } else {
      req.set(item.key, item.value);
    }
  }
  cm_send(c, "REQ", req);
  wire_.expect(&c, {{"REP", {}}}, timing_.expect_window(), ExpectMode::kNext);
  if (!rtu) return;
  cm_send(c, "RTU", {});
  c.state = ConnState::kEstablished;
}

void CmActive::after_match(Connection* c, const Packet& p) {
  if (!c) return;
  if (p.aeth) c->last_msn = p.aeth->msn;
  if (!p.mad || !p.mad->cm) return;
  if (const auto* rep = std::get_if<CmRep>(&*p.mad->cm)) {
    c->remote_qpn = rep->local_qpn;
    // IBA 12.7.36: the REP's Starting PSN is the one the active side (we) sends from.
    c->local_psn0 = rep->starting_psn & psn::kMask;
    c->next_psn = c->local_psn0;
    c->flow_psn = c->local_psn0;
    c->remote_comm_id = rep->local_comm_id;
    c->responder_resources = rep->responder_resources;
    c->initiator_depth = rep->initiator_depth;
    c->state = ConnState::kRepReceived;
    if (p.mad->header.tid != c->req_tid)
      evidence_.note(
          fmt::format("REP TID {:#x} differs from the REQ's {:#x}", p.mad->header.tid, c->req_tid));
    if (auto rcnf = control::RcnfPrivateData::decode(rep->private_data)) {
      c->region =
          RemoteRegion{rcnf->region_va,        rcnf->rkey, rcnf->region_length, rcnf->recv_depth,
                       rcnf->recv_buffer_size, 0};
      target_.saw_rep(true, {});
    } else {
      evidence_.note("REP private data has no RCNF block (" + rcnf.error() + "): no remote region");
      target_.saw_rep(false, rcnf.error());
      if (control_.needs_convention() && !target_.no_convention().empty())
        control_.skip_no_convention();
    }
  } else if (std::holds_alternative<CmRej>(*p.mad->cm)) {
    c->state = ConnState::kRejected;
  } else if (std::holds_alternative<CmDrep>(*p.mad->cm)) {
    c->state = ConnState::kClosed;
  }
}

void CmActive::after_mismatch(Connection* c, const Packet& p) {
  if (!c || !p.mad || !p.mad->cm) return;
  const auto* rej = std::get_if<CmRej>(&*p.mad->cm);
  constexpr std::uint16_t kInvalidServiceId = 8;
  if (!rej || rej->reason != kInvalidServiceId || c->state != ConnState::kReqSent) return;
  if (c->service_id != rdma_cm_service_id(rdma_cm_ps::kTcp, target_.service_port())) return;
  evidence_.inconclusive(fmt::format(
      "the REQ to the responder's service ID {:#x} (TCP port {}) got REJ Invalid Service ID: "
      "nothing listens there now, so the case grades nothing (is the responder running?)",
      c->service_id, target_.service_port()));
}

void CmActive::disconnect(Connection& c) {
  cm_send(c, "DREQ", {});
  wire_.expect(&c, {{"DREP", {}}}, timing_.expect_window(), ExpectMode::kEventually);
}

}  // namespace roceconf::engine
