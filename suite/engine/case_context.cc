#include "suite/engine/case_context.h"

#include <algorithm>

#include <fmt/format.h>

#include "control/rcnf_private_data.h"
#include "dissector/analysis/psn.h"
#include "dissector/mad/rdma_cm.h"
#include "dissector/names.h"
#include "dissector/summary.h"
#include "suite/engine/annotator.h"

namespace roceconf::engine {

namespace {

std::uint32_t ipv4_u32(const Ipv4Address& a) {
  return std::uint32_t{a[0]} << 24 | std::uint32_t{a[1]} << 16 | std::uint32_t{a[2]} << 8 | a[3];
}

std::string mac_text(const MacAddress& m) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4],
                     m[5]);
}

std::string ip_text(const Ipv4Address& a) {
  return fmt::format("{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
}

// The REP's own fields (the tester answering the target's REQ); false for a key that is not one
// (the comm IDs are set_cm_field's).
bool set_rep_field(CmRep& r, const Assignment& item) {
  const auto number = [&](std::uint64_t max) {
    auto n = parse_uint(item.value);
    if (!n || *n > max)
      throw CaseStop(report::Verdict::kError, fmt::format("{}: '{}' is not a number up to {:#x}",
                                                          item.key, item.value, max));
    return *n;
  };
  const std::string& k = item.key;
  if (k == "local_qpn")
    r.local_qpn = static_cast<std::uint32_t>(number(0xFFFFFF));
  else if (k == "starting_psn")
    r.starting_psn = static_cast<std::uint32_t>(number(0xFFFFFF));
  else if (k == "local_qkey")
    r.local_qkey = static_cast<std::uint32_t>(number(0xFFFFFFFF));
  else if (k == "responder_resources")
    r.responder_resources = static_cast<std::uint8_t>(number(0xFF));
  else if (k == "initiator_depth")
    r.initiator_depth = static_cast<std::uint8_t>(number(0xFF));
  else if (k == "target_ack_delay")
    r.target_ack_delay = static_cast<std::uint8_t>(number(31));
  else if (k == "failover_accepted")
    r.failover_accepted = static_cast<std::uint8_t>(number(3));
  else if (k == "end_to_end_flow_control")
    r.end_to_end_flow_control = number(1) != 0;
  else if (k == "rnr_retry_count")
    r.rnr_retry_count = static_cast<std::uint8_t>(number(7));
  else if (k == "srq")
    r.srq = number(1) != 0;
  else if (k == "local_ca_guid")
    r.local_ca_guid = number(UINT64_MAX);
  else
    return false;
  return true;
}

// The tester's CA GUID in the REQs and REPs it sends.
constexpr std::uint64_t kTesterCaGuid = 0x0200'00FF'FE00'0002ULL;

bool is_mad_header_key(std::string_view key) {
  return key == "tid" || key == "class_version" || key == "base_version" || key == "method" ||
         key == "qkey" || key == "bth.pkey";
}

}  // namespace

CaseContext::CaseContext(Target& target, const Timing& timing, report::CaseResult& result,
                         std::uint64_t seed)
    : target_(target),
      timing_(timing),
      result_(result),
      random_(seed),
      annotator_(std::make_unique<Annotator>()) {
  // QPNs, comm IDs and TIDs differ between cases (a target may still remember the previous
  // case's connection) and repeat exactly between runs of the same case.
  next_qpn_ = 0x100 + static_cast<std::uint32_t>(random_() % 0xF000) * 0x10;
  next_tid_ = random_() & 0x0000FFFFFFFF0000ULL;
}

CaseContext::~CaseContext() = default;

Addresses CaseContext::addresses() const {
  return {target_.tester(), target_.device(), Udp::kRocePort};
}

void CaseContext::require(std::string_view capability) {
  const Capabilities caps = target_.capabilities();
  if (capability == "responder") {
    if (!caps.responder)
      skip("needs a responder following the RCNF convention on the target's service port");
    return;
  }
  if (capability == "control") {
    if (!caps.control) skip("needs the control API (reference target, daemon, or a DUT agent)");
    return;
  }
  if (capability == "pkey-limited") {
    if (!caps.control) skip("needs the control API to choose the target QP's P_Key");
    if (hello_.is_null()) hello_ = control_ok({{"op", "hello"}});
    const auto& pkeys = hello_["port"]["pkeys"];
    bool limited = false, full = false;
    for (const auto& k : pkeys) {
      const auto v =
          k.is_number() ? k.get<std::uint64_t>() : parse_uint(k.get<std::string>()).value_or(0);
      if (v == 0x1234) limited = true;
      if (v == 0x9234) full = true;
    }
    if (!limited || !full)
      skip("needs P_Keys 0x9234 (full) and 0x1234 (limited) in the target's P_Key table");
    return;
  }
  error(fmt::format("unknown capability '{}' (responder, control, pkey-limited)", capability));
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

void CaseContext::cm_send(Connection& c, std::string_view message, const Assignments& a) {
  Assignments header;
  CmMessage msg;
  std::array<std::uint8_t, kReqPrivateDataSize> req_private{};
  std::uint64_t tid = 0;
  if (message == "REQ") {
    CmReq r;
    RdmaCmHeader h;
    h.src_port = static_cast<std::uint16_t>(40000 + (c.local_qpn & 0x3FFF));
    h.src_ip = rdma_cm_ipv4(ipv4_u32(target_.tester().ip));
    h.dst_ip = rdma_cm_ipv4(ipv4_u32(target_.device().ip));
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
    r.primary.local_gid = cm_ipv4_gid(ipv4_u32(target_.tester().ip));
    r.primary.remote_gid = cm_ipv4_gid(ipv4_u32(target_.device().ip));
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
    m.message_mraed = passive(c) ? cm_msg_kind::kReq : cm_msg_kind::kRep;
    msg = m;
    tid = c.req_tid;
  } else if (message == "REJ") {
    CmRej r;
    r.local_comm_id = c.local_comm_id;
    r.remote_comm_id = c.remote_comm_id;
    r.message_rejected = passive(c) ? cm_msg_kind::kReq : cm_msg_kind::kRep;
    msg = r;
    tid = c.req_tid;
  } else if (message == "ClassPortInfo") {
    msg = ClassPortInfo{};
    tid = next_tid_++;
    header.set("method", "1");
  } else {
    error(fmt::format(
        "unknown CM message '{}' (REQ, REP, RTU, DREQ, DREP, MRA, REJ, ClassPortInfo)", message));
  }
  std::uint16_t pkey = c.pkey;
  for (const auto& item : a.items()) {
    if (item.key == "tid") {
      auto n = parse_uint(item.value);
      if (!n) error("tid: " + n.error());
      tid = *n;
      if (message == "REQ") c.req_tid = tid;
    } else if (item.key == "bth.pkey") {
      auto n = parse_uint(item.value);
      if (!n || *n > 0xFFFF) error("bth.pkey: not a P_Key");
      pkey = static_cast<std::uint16_t>(*n);
    } else if (is_mad_header_key(item.key)) {
      header.set(item.key, item.value);
    } else if (auto* r = std::get_if<CmRep>(&msg); r && set_rep_field(*r, item)) {
    } else if (auto ok = set_cm_field(msg, item.key, item.value); !ok) {
      error(ok.error());
    }
  }
  if (const auto* r = std::get_if<CmReq>(&msg)) {
    c.service_id = r->service_id;
    c.local_comm_id = r->local_comm_id;
    c.remote_psn0 = r->starting_psn & psn::kMask;
    c.local_qpn = r->local_qpn;
    if (mtu_bytes(r->path_mtu) != 0) c.pmtu = mtu_bytes(r->path_mtu);
    c.pkey = r->pkey;
    c.state = ConnState::kReqSent;
  }
  if (const auto* r = std::get_if<CmRep>(&msg)) {
    c.local_comm_id = r->local_comm_id;
    c.local_qpn = r->local_qpn;
    c.remote_psn0 = r->starting_psn & psn::kMask;
    c.responder_resources = r->responder_resources;
    c.initiator_depth = r->initiator_depth;
    if (Passive* p = passive(c)) p->rep_sent = true;
  }
  if (std::holds_alternative<CmRej>(msg)) {
    if (Passive* p = passive(c)) {
      p->rej_sent = true;
      c.state = ConnState::kRejected;
    }
  }
  if (std::holds_alternative<CmDreq>(msg)) c.state = ConnState::kDreqSent;
  auto frame = build_mad(addresses(), pkey, msg, tid, header);
  if (!frame) error(frame.error());
  transmit(std::move(frame->bytes), fmt::format("CM {} {} tid={:#x}", message, c.name, tid));
}

void CaseContext::connect(Connection& c, const Assignments& a) {
  require("responder");
  Assignments req;
  bool rtu = true;
  for (const auto& item : a.items()) {
    if (item.key == "pmtu") {
      auto n = parse_uint(item.value);
      if (!n || mtu_enum(static_cast<std::uint32_t>(*n)) == 0)
        error(fmt::format("pmtu: {} is not 256, 512, 1024, 2048 or 4096", item.value));
      c.pmtu = static_cast<std::uint32_t>(*n);
      if (c.pmtu > target_.capabilities().max_pmtu)
        skip(fmt::format("needs a path MTU of {}; the link to the target carries {}", c.pmtu,
                         target_.capabilities().max_pmtu));
    } else if (item.key == "pkey") {
      auto n = parse_uint(item.value);
      if (!n || *n > 0xFFFF) error("pkey: not a P_Key");
      c.pkey = static_cast<std::uint16_t>(*n);
    } else if (item.key == "psn") {
      error(
          "psn: with CM the target chooses the PSN the tester sends from (REP Starting PSN); "
          "use target_psn= for the REQ's, or open (control) to choose both");
    } else if (item.key == "target_psn") {
      auto n = parse_uint(item.value);
      if (!n || *n > psn::kMask) error("target_psn: not a 24-bit PSN");
      c.remote_psn0 = static_cast<std::uint32_t>(*n);
    } else if (item.key == "rtu") {
      rtu = item.value != "0" && item.value != "no" && item.value != "false";
    } else {
      req.set(item.key, item.value);
    }
  }
  cm_send(c, "REQ", req);
  Received rep = expect(&c, {"REP", {}}, timing_.expect_window(), false);
  if (!rtu) return;
  cm_send(c, "RTU", {});
  c.state = ConnState::kEstablished;
}

void CaseContext::after_match(Connection* c, const Packet& p) {
  if (!c) return;
  if (p.aeth) c->last_msn = p.aeth->msn;
  if (!p.mad || !p.mad->cm) return;
  if (const auto* rep = std::get_if<CmRep>(&*p.mad->cm)) {
    c->remote_qpn = rep->local_qpn;
    // IBA 12.7.36: the REP's Starting PSN is the one the active side (we) sends from.
    c->local_psn0 = rep->starting_psn & psn::kMask;
    c->next_psn = c->local_psn0;
    c->remote_comm_id = rep->local_comm_id;
    c->responder_resources = rep->responder_resources;
    c->initiator_depth = rep->initiator_depth;
    c->state = ConnState::kRepReceived;
    if (p.mad->header.tid != c->req_tid)
      note(
          fmt::format("REP TID {:#x} differs from the REQ's {:#x}", p.mad->header.tid, c->req_tid));
    if (auto rcnf = control::RcnfPrivateData::decode(rep->private_data)) {
      c->region =
          RemoteRegion{rcnf->region_va,        rcnf->rkey, rcnf->region_length, rcnf->recv_depth,
                       rcnf->recv_buffer_size, 0};
    } else {
      note("REP private data has no RCNF block (" + rcnf.error() + "): no remote region");
    }
  } else if (std::holds_alternative<CmRej>(*p.mad->cm)) {
    c->state = ConnState::kRejected;
  } else if (std::holds_alternative<CmDrep>(*p.mad->cm)) {
    c->state = ConnState::kClosed;
  }
}

void CaseContext::disconnect(Connection& c) {
  cm_send(c, "DREQ", {});
  expect(&c, {"DREP", {}}, timing_.expect_window(), true);
}

CaseContext::Passive* CaseContext::passive(const Connection& c) {
  const auto it = passive_.find(c.name);
  return it == passive_.end() ? nullptr : &it->second;
}

void CaseContext::accept(Connection& c, const Assignments& a) {
  require("control");
  if (passive(c)) error(fmt::format("connection '{}' was accepted already", c.name));
  std::uint32_t recv = 16, recv_len = 4096, region = 64 * 1024;
  bool rep = true;
  std::optional<std::uint32_t> psn;
  std::optional<std::uint16_t> pkey;
  // A TCP port of its own per case: a REQ a target still retries from an earlier case is not
  // taken for this one.
  std::uint64_t service_id =
      rdma_cm_service_id(rdma_cm_ps::kTcp, static_cast<std::uint16_t>(4000 + random_() % 1000));
  nlohmann::json connect_fields = nlohmann::json::object();
  Assignments req_fields, rep_fields;
  for (const auto& item : a.items()) {
    const auto num = [&](std::uint64_t max) {
      auto n = parse_uint(item.value);
      if (!n || *n > max)
        error(fmt::format("{}: '{}' is not a number up to {:#x}", item.key, item.value, max));
      return *n;
    };
    if (item.key == "rep") {
      rep = item.value != "0" && item.value != "no" && item.value != "false";
    } else if (item.key == "pmtu") {
      c.pmtu = static_cast<std::uint32_t>(num(4096));
      if (mtu_enum(c.pmtu) == 0) error("pmtu: not 256, 512, 1024, 2048 or 4096");
      if (c.pmtu > target_.capabilities().max_pmtu)
        skip(fmt::format("needs a path MTU of {}; the link to the target carries {}", c.pmtu,
                         target_.capabilities().max_pmtu));
    } else if (item.key == "pkey") {
      pkey = static_cast<std::uint16_t>(num(0xFFFF));
    } else if (item.key == "psn") {
      psn = static_cast<std::uint32_t>(num(psn::kMask));
    } else if (item.key == "target_psn") {
      c.remote_psn0 = static_cast<std::uint32_t>(num(psn::kMask));
    } else if (item.key == "service_id") {
      service_id = num(UINT64_MAX);
    } else if (item.key == "port") {
      service_id = rdma_cm_service_id(rdma_cm_ps::kTcp, static_cast<std::uint16_t>(num(0xFFFF)));
    } else if (item.key == "recv") {
      recv = static_cast<std::uint32_t>(num(0xFFFF));
    } else if (item.key == "recv_len") {
      recv_len = static_cast<std::uint32_t>(num(0xFFFFFFFF));
    } else if (item.key == "region") {
      region = static_cast<std::uint32_t>(num(0xFFFFFFFF));
    } else if (item.key.starts_with("connect.")) {
      const std::string field = item.key.substr(8);
      if (auto n = parse_uint(item.value))
        connect_fields[field] = *n;
      else
        connect_fields[field] = item.value;
    } else if (item.key.starts_with("req.")) {
      req_fields.set(item.key.substr(4), item.value);
    } else {
      rep_fields.set(item.key, item.value);
    }
  }

  // The target's QP, as open() makes it, in INIT (as rdma_create_qp leaves it) so receives can be
  // posted before the connect.
  if (hello_.is_null()) hello_ = control_ok({{"op", "hello"}});
  if (const auto ops = hello_.find("ops"); ops != hello_.end() && ops->is_array()) {
    for (const char* op : {"cm_connect", "cm_status"})
      if (std::find(ops->begin(), ops->end(), op) == ops->end())
        skip(fmt::format("needs the control API's {} (the target's CM active side)", op));
  }
  std::uint32_t pkey_index = 0;
  if (pkey) {
    const auto& pkeys = hello_["port"]["pkeys"];
    std::optional<std::uint32_t> found;
    for (std::uint32_t i = 0; i < pkeys.size() && !found; ++i) {
      const auto& k = pkeys[i];
      const auto v =
          k.is_number() ? k.get<std::uint64_t>() : parse_uint(k.get<std::string>()).value_or(0);
      if (v == *pkey) found = i;
    }
    if (!found) skip(fmt::format("needs P_Key {:#06x} in the target's P_Key table", *pkey));
    pkey_index = *found;
    c.pkey = *pkey;
  }
  make_target_qp(c, {.cq_name = {},
                     .recv = recv,
                     .recv_len = recv_len,
                     .region = region,
                     .qp_access = {"REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"},
                     .pkey_index = pkey_index});
  c.local_comm_id = 0;  // the tester's comes with the REP
  passive_[c.name].service_id = service_id;

  // The target connects to the tester.
  const Endpoint tester = target_.tester();
  nlohmann::json request = {{"op", "cm_connect"},
                            {"qp_num", c.remote_qpn},
                            {"service_id", fmt::format("{:#x}", service_id)},
                            {"dgid", ip_text(tester.ip)},
                            {"dmac", mac_text(tester.mac)},
                            {"path_mtu", c.pmtu},
                            {"pkey", c.pkey}};
  if (psn) request["starting_psn"] = *psn;
  for (const auto& [k, v] : connect_fields.items()) request[k] = v;
  const nlohmann::json connected = control_ok(request);
  if (connected.contains("comm_id") && connected["comm_id"].is_number_unsigned())
    passive_[c.name].target_comm_id = connected["comm_id"].get<std::uint32_t>();

  // Its REQ.
  const Received got = expect(&c, {"REQ", req_fields}, timing_.expect_window(), false);
  const CmReq& req = std::get<CmReq>(*got.packet.mad->cm);
  std::vector<report::FieldDiff> diffs;
  if (req.local_comm_id == 0) diffs.push_back({"cm.local_comm_id", "not 0", "0x0"});
  if (req.local_qpn != c.remote_qpn)
    diffs.push_back({"cm.local_qpn",
                     fmt::format("{:#x} (the QP given to cm_connect)", c.remote_qpn),
                     fmt::format("{:#x}", req.local_qpn)});
  if (req.service_id != service_id)
    diffs.push_back({"cm.service_id", fmt::format("{:#018x}", service_id),
                     fmt::format("{:#018x}", req.service_id)});
  if (req.transport_type != cm_transport::kRc)
    diffs.push_back({"cm.transport_type", "0 (RC)", std::to_string(req.transport_type)});
  if (mtu_bytes(req.path_mtu) == 0)
    diffs.push_back({"cm.path_mtu", "1-5 (256-4096 bytes)", std::to_string(req.path_mtu)});
  if (psn && (req.starting_psn & psn::kMask) != *psn)
    diffs.push_back({"cm.starting_psn", fmt::format("{:#08x} (cm_connect's)", *psn),
                     fmt::format("{:#08x}", req.starting_psn)});
  if (!diffs.empty())
    fail("the target's REQ does not ask for the connection cm_connect named", diffs);
  const auto* info = passive(c);
  if (info->target_comm_id && *info->target_comm_id != req.local_comm_id)
    note(fmt::format("cm_connect answered comm_id {:#x}; the REQ's Local Communication ID is {:#x}",
                     *info->target_comm_id, req.local_comm_id));
  passive_[c.name].req_seen = true;
  c.remote_comm_id = req.local_comm_id;
  c.req_tid = got.packet.mad->header.tid;
  c.service_id = req.service_id;
  c.pmtu = mtu_bytes(req.path_mtu);
  c.pkey = req.pkey;
  // IBA 12.7.23: the REQ's Starting PSN is where the passive side (the tester) sends from.
  c.local_psn0 = req.starting_psn & psn::kMask;
  c.next_psn = c.local_psn0;
  // The REP's resources answer the REQ's: the tester's responder takes as many reads as the
  // target's initiator depth, and issues at most the target's responder resources.
  c.responder_resources = req.initiator_depth;
  c.initiator_depth = req.responder_resources;
  do c.local_comm_id = static_cast<std::uint32_t>(random_());
  while (c.local_comm_id == 0);
  if (!rep) return;

  cm_send(c, "REP", rep_fields);
  expect(&c, {"RTU", {}}, timing_.expect_window(), false);
  c.state = ConnState::kEstablished;
  Assignments established;
  established.set("state", "established");
  expect_status(c, established, timing_.expect_window());
}

void CaseContext::expect_status(Connection& c, const Assignments& want, TimeNs window) {
  if (!passive(c))
    error(fmt::format("status: '{}' is not a connection the target made (accept)", c.name));
  const TimeNs deadline = add_saturating(now(), window);
  const nlohmann::json request = {{"op", "cm_status"}, {"qp_num", c.remote_qpn}};
  std::string last_answer;
  for (;;) {
    // Asked every few ms: only answers that differ from the one before go on the timeline.
    auto response = target_.control(request);
    if (!response) error("control API: " + response.error());
    nlohmann::json r = *response;
    r.erase("id");
    if (const std::string text = r.dump(); text != last_answer) {
      record(report::EventKind::kControl,
             fmt::format("cm_status {{\"qp_num\":{}}} -> {}", c.remote_qpn, text));
      last_answer = text;
    }
    if (!r.value("ok", false))
      inconclusive(fmt::format("cm_status failed on the target: {}",
                               r.value("error", std::string("no error text"))));
    std::vector<report::FieldDiff> diffs;
    for (const auto& [key, value] : want.items()) {
      const std::string field = "cm_status." + key;
      if (!r.contains(key)) {
        diffs.push_back({field, value, "(absent)"});
        continue;
      }
      const auto& v = r[key];
      if (v.is_number_unsigned()) {
        const auto n = parse_uint(value);
        if (!n || *n != v.get<std::uint64_t>())
          diffs.push_back({field, value, std::to_string(v.get<std::uint64_t>())});
      } else if (!v.is_string() || v.get<std::string>() != value) {
        diffs.push_back({field, value, v.is_string() ? v.get<std::string>() : v.dump()});
      }
    }
    if (diffs.empty()) return;
    if (now() >= deadline)
      fail(fmt::format("cm_status of {} within {} ms: {}", c.name, window / kMillisecond,
                       last_answer),
           diffs);
    wait(std::min<TimeNs>(5 * kMillisecond, deadline - now()));
  }
}

// A target RC QP for `c` through the control API: PD, CQ (a named one or its own), the QP, a
// region open to remote access, INIT, and `recv` receive buffers posted.
void CaseContext::make_target_qp(Connection& c, const TargetQpSpec& spec) {
  const std::uint32_t pd = control_ok({{"op", "alloc_pd"}})["pd"];
  const std::uint32_t cq =
      spec.cq_name.empty()
          ? control_ok({{"op", "create_cq"}, {"depth", 256}})["cq"].get<std::uint32_t>()
          : this->cq(spec.cq_name);
  const nlohmann::json qp = control_ok(
      {{"op", "create_qp"},
       {"qp_type", "RC"},
       {"pd", pd},
       {"send_cq", cq},
       {"recv_cq", cq},
       {"cap", {{"max_send_wr", 64}, {"max_recv_wr", std::max<std::uint32_t>(spec.recv, 64)}}}});
  c.remote_qpn = qp["qp_num"];
  c.target_cq = cq;
  c.target_pd = pd;
  c.via_control = true;
  const nlohmann::json mr = control_ok(
      {{"op", "reg_mr"}, {"pd", pd}, {"length", spec.region}, {"access", spec.region_access}});
  c.region = RemoteRegion{mr["addr"].get<std::uint64_t>(),
                          mr["rkey"].get<std::uint32_t>(),
                          spec.region,
                          spec.recv,
                          spec.recv_len,
                          mr["handle"].get<std::uint32_t>()};
  control_ok({{"op", "modify_qp"},
              {"qp_num", c.remote_qpn},
              {"attr",
               {{"qp_state", "INIT"},
                {"pkey_index", spec.pkey_index},
                {"port_num", 1},
                {"qp_access_flags", spec.qp_access}}}});
  if (spec.recv == 0) return;
  const nlohmann::json buffers = control_ok({{"op", "reg_mr"},
                                             {"pd", pd},
                                             {"length", spec.recv * spec.recv_len},
                                             {"access", {"LOCAL_WRITE"}}});
  nlohmann::json wrs = nlohmann::json::array();
  for (std::uint32_t i = 0; i < spec.recv; ++i)
    wrs.push_back(
        {{"wr_id", i},
         {"sg_list",
          {{{"addr", buffers["addr"].get<std::uint64_t>() + std::uint64_t{i} * spec.recv_len},
            {"length", spec.recv_len},
            {"lkey", buffers["lkey"]}}}}});
  control_ok({{"op", "post_recv"}, {"qp_num", c.remote_qpn}, {"wrs", wrs}});
}

void CaseContext::open(Connection& c, const Assignments& a) {
  require("control");
  std::uint32_t pkey_index = 0, recv = 16, recv_len = 4096, region = 64 * 1024;
  std::uint32_t min_rnr_timer = 1, max_dest_rd_atomic = 4;
  std::string cq_name;
  nlohmann::json access = {"LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"};
  nlohmann::json qp_access = {"REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"};
  for (const auto& item : a.items()) {
    const auto num = [&]() {
      auto n = parse_uint(item.value);
      if (!n || *n > 0xFFFFFFFF)
        error(fmt::format("{}: '{}' is not a number", item.key, item.value));
      return static_cast<std::uint32_t>(*n);
    };
    if (item.key == "pmtu") {
      c.pmtu = num();
      if (mtu_enum(c.pmtu) == 0) error("pmtu: not 256, 512, 1024, 2048 or 4096");
      if (c.pmtu > target_.capabilities().max_pmtu)
        skip(fmt::format("needs a path MTU of {}; the link to the target carries {}", c.pmtu,
                         target_.capabilities().max_pmtu));
    } else if (item.key == "target_psn") {
      c.remote_psn0 = num() & psn::kMask;
    } else if (item.key == "pkey_index")
      pkey_index = num();
    else if (item.key == "psn") {
      c.local_psn0 = num() & psn::kMask;
      c.next_psn = c.local_psn0;
    } else if (item.key == "recv")
      recv = num();
    else if (item.key == "recv_len")
      recv_len = num();
    else if (item.key == "region")
      region = num();
    else if (item.key == "cq")
      cq_name = item.value;
    else if (item.key == "min_rnr_timer")
      min_rnr_timer = num();
    else if (item.key == "max_dest_rd_atomic")
      max_dest_rd_atomic = num();
    else if (item.key == "access") {
      qp_access = nlohmann::json::array();
      std::string_view rest = item.value;
      while (!rest.empty()) {
        const auto comma = rest.find(',');
        const auto flag = rest.substr(0, comma);
        if (flag != "none") qp_access.push_back(std::string(flag));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      }
    } else
      error(fmt::format("unknown option '{}' for open", item.key));
  }
  make_target_qp(c, {.cq_name = cq_name,
                     .recv = recv,
                     .recv_len = recv_len,
                     .region = region,
                     .region_access = access,
                     .qp_access = qp_access,
                     .pkey_index = pkey_index});
  const Endpoint tester = target_.tester();
  control_ok(
      {{"op", "modify_qp"},
       {"qp_num", c.remote_qpn},
       {"attr",
        {{"qp_state", "RTR"},
         {"path_mtu", c.pmtu},
         {"dest_qp_num", c.local_qpn},
         {"rq_psn", c.local_psn0},
         {"max_dest_rd_atomic", max_dest_rd_atomic},
         {"min_rnr_timer", min_rnr_timer},
         {"ah_attr",
          {{"dgid", ip_text(tester.ip)}, {"dmac", mac_text(tester.mac)}, {"hop_limit", 64}}}}}});
  control_ok({{"op", "modify_qp"},
              {"qp_num", c.remote_qpn},
              {"attr",
               {{"qp_state", "RTS"},
                {"sq_psn", c.remote_psn0},
                {"timeout", 14},
                {"retry_cnt", 7},
                {"rnr_retry", 7},
                {"max_rd_atomic", 4}}}});
  c.pkey = static_cast<std::uint16_t>(0xFFFF);
  if (hello_.is_null()) hello_ = control_ok({{"op", "hello"}});
  const auto& pkeys = hello_["port"]["pkeys"];
  if (pkey_index < pkeys.size()) {
    const auto& k = pkeys[pkey_index];
    c.pkey = static_cast<std::uint16_t>(
        k.is_number() ? k.get<std::uint64_t>() : parse_uint(k.get<std::string>()).value_or(0xFFFF));
  }
  c.state = ConnState::kEstablished;
}

// ---- data -------------------------------------------------------------------------------

void CaseContext::send(Connection& c, std::string_view op, const Assignments& a) {
  const bool message = op == "SEND" || op == "RDMA_WRITE" || op == "WRITE" ||
                       op == "SEND_WITH_IMM" || op == "RDMA_WRITE_WITH_IMM";
  const auto need_region = [&](std::uint8_t code) {
    const OpcodeInfo& info = opcode_info(code);
    if (info.kind == OpKind::kSend && info.position != Position::kMiddle && c.region &&
        c.region->recv_size > 0) {
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
                      "(suite/target/RESPONDER_CONVENTION.md)",
                      c.name));
  };
  if (!message) {
    auto code = request_opcode(op);
    if (!code) error(code.error());
    need_region(*code);
    auto frame = build_request(addresses(), c, *code, a);
    if (!frame) error(frame.error());
    if (opcode_info(*code).is_request) c.next_psn = psn::add(frame->psn, frame->psn_span);
    transmit(std::move(frame->bytes), fmt::format("{} {} {}", c.name, op, a.text()));
    return;
  }
  // A whole message, segmented at the path MTU.
  const bool write = op.find("WRITE") != std::string_view::npos;
  const bool imm = op.ends_with("_IMM");
  std::uint64_t len = 0;
  if (const auto* l = a.find("len")) {
    auto n = parse_uint(*l);
    if (!n) error("len: " + n.error());
    len = *n;
  }
  std::uint32_t seed = c.next_psn & 0xFF;
  if (const auto* f = a.find("fill")) {
    auto n = parse_uint(*f);
    if (!n) error("fill: " + n.error());
    seed = static_cast<std::uint32_t>(*n);
  }
  const std::uint64_t packets = std::max<std::uint64_t>(1, (len + c.pmtu - 1) / c.pmtu);
  for (std::uint64_t i = 0; i < packets; ++i) {
    const bool first = i == 0, last = i + 1 == packets;
    std::string name = write ? "RDMA_WRITE_" : "SEND_";
    name += packets == 1 ? "ONLY" : first ? "FIRST" : last ? "LAST" : "MIDDLE";
    if (imm && last) name += "_WITH_IMMEDIATE";
    Assignments pa;
    const std::uint64_t size = last ? len - i * c.pmtu : c.pmtu;
    pa.set("len", std::to_string(size));
    pa.set("fill", std::to_string((seed + i * c.pmtu) & 0xFFFFFFFF));
    if (last) pa.set("ackreq", "1");
    for (const auto& item : a.items()) {
      if (item.key == "len" || item.key == "fill") continue;
      const bool reth_key = item.key == "offset" || item.key == "va" || item.key == "rkey";
      if (reth_key && !first) continue;
      if (item.key == "imm" && !last) continue;
      if (item.key == "psn" && !first) continue;
      pa.set(item.key, item.value);
    }
    if (write && first) pa.set("dmalen", std::to_string(len));
    auto code = request_opcode(name);
    if (!code) error(code.error());
    need_region(*code);
    auto frame = build_request(addresses(), c, *code, pa);
    if (!frame) error(frame.error());
    c.next_psn = psn::add(frame->psn, frame->psn_span);
    transmit(std::move(frame->bytes), fmt::format("{} {} {}", c.name, name, pa.text()));
  }
}

void CaseContext::send_frame(std::vector<std::uint8_t> frame, std::string text) {
  transmit(std::move(frame), std::move(text));
}

void CaseContext::transmit(std::vector<std::uint8_t> frame, std::string text) {
  // The summary line is the decoder's: what actually went on the wire.
  const Packet p = decode(frame);
  auto flags = annotator_->add(p, now());
  record(report::EventKind::kSent, text + "  |  " + summarize(p), frame, std::move(flags));
  if (auto sent = target_.port().send(frame); !sent)
    error("sending failed: " + sent.error().message);
}

// ---- receiving ---------------------------------------------------------------------------

Connection* CaseContext::owner_of(const Packet& p) {
  if (!p.bth) return nullptr;
  if (p.mad && p.mad->cm) {
    std::optional<std::uint32_t> remote, local;
    std::visit(
        [&](const auto& m) {
          if constexpr (requires { m.remote_comm_id; }) remote = m.remote_comm_id;
          if constexpr (requires { m.local_comm_id; }) local = m.local_comm_id;
        },
        *p.mad->cm);
    for (auto& [name, c] : connections_) {
      if (remote && *remote == c->local_comm_id && *remote != 0) return c.get();
      if (local && c->remote_comm_id != 0 && *local == c->remote_comm_id) return c.get();
    }
    // The target's first REQ for a connection the tester accepts: by the comm ID cm_connect
    // answered, else by the service ID asked for (no comm ID of the target is known yet).
    if (const auto* req = std::get_if<CmReq>(&*p.mad->cm)) {
      for (auto& [name, info] : passive_)
        if (info.target_comm_id && *info.target_comm_id == req->local_comm_id)
          return connections_.at(name).get();
      for (auto& [name, info] : passive_)
        if (!info.req_seen && info.service_id == req->service_id)
          return connections_.at(name).get();
    }
    for (auto& [name, c] : connections_)
      if (p.mad->header.tid == c->req_tid) return c.get();
    return nullptr;
  }
  for (auto& [name, c] : connections_)
    if (p.bth->dqpn == c->local_qpn) return c.get();
  return nullptr;
}

std::optional<Received> CaseContext::next_for(Connection* c, TimeNs deadline, bool pending) {
  for (auto it = pending_.begin(); pending && it != pending_.end(); ++it) {
    if (c == nullptr || it->owner == c) {
      Received r = std::move(it->frame);
      pending_.erase(it);
      return r;
    }
  }
  for (;;) {
    auto got = target_.port().receive(deadline);
    if (!got) error("receiving failed: " + got.error().message);
    if (!*got) return std::nullopt;
    Received r;
    r.bytes = std::move((*got)->data);
    r.time = (*got)->time_ns;
    r.packet = decode(r.bytes);
    if (!r.packet.bth) {
      // Not RoCE (ARP, IPv6 neighbour discovery on a real link): kept out of the ladder.
      continue;
    }
    Connection* owner = owner_of(r.packet);
    auto flags = annotator_->add(r.packet, r.time);
    record(report::EventKind::kReceived,
           fmt::format("{}{}  |  {}", owner ? owner->name + " " : "",
                       describe_received(r.packet, owner), summarize(r.packet)),
           r.bytes, std::move(flags));
    if (c == nullptr || owner == c) return r;
    if (owner) pending_.push_back({std::move(r), owner});
  }
}

Received CaseContext::expect(Connection* c, const Expectation& e, TimeNs window, bool eventually) {
  return expect(c, std::vector<Expectation>{e}, window,
                eventually ? ExpectMode::kEventually : ExpectMode::kNext);
}

Received CaseContext::expect(Connection* c, const std::vector<Expectation>& alternatives,
                             TimeNs window, ExpectMode mode) {
  if (alternatives.empty()) error("expect: nothing to expect");
  const TimeNs deadline = add_saturating(now(), window);
  std::string what = fmt::format("expect {}", c ? c->name + " " : "");
  for (std::size_t i = 0; i < alternatives.size(); ++i)
    what += fmt::format("{}{} {}", i ? " or " : "", alternatives[i].kind,
                        alternatives[i].fields.text());
  std::vector<report::FieldDiff> first_diffs;
  std::string first_seen;
  for (;;) {
    auto r = next_for(c, deadline);
    if (!r) {
      if (!first_diffs.empty())
        fail(fmt::format("{}: got {} and nothing matching within {} ms", what, first_seen,
                         window / kMillisecond),
             first_diffs);
      fail(fmt::format("{}: nothing arrived within {} ms", what, window / kMillisecond));
    }
    // The diffs of the alternative the packet came closest to.
    std::optional<std::vector<report::FieldDiff>> closest;
    for (const auto& e : alternatives) {
      auto diffs = match(r->packet, c, e);
      if (!diffs) error(diffs.error());
      if (diffs->empty()) {
        after_match(c, r->packet);
        record(report::EventKind::kExpectMet, what);
        return std::move(*r);
      }
      if (!closest || diffs->size() < closest->size()) closest = std::move(*diffs);
    }
    if (mode == ExpectMode::kAfterEarlierAcks &&
        acknowledges_earlier(r->packet, c, alternatives.front())) {
      record(report::EventKind::kNote, fmt::format("passed over {} (an earlier PSN acknowledged)",
                                                   describe_received(r->packet, c)));
      continue;
    }
    if (mode != ExpectMode::kEventually)
      fail(fmt::format("{}: got {}", what, describe_received(r->packet, c)), *closest);
    if (first_diffs.empty()) {
      first_diffs = *closest;
      first_seen = describe_received(r->packet, c);
    }
  }
}

void CaseContext::expect_nothing(Connection* c, TimeNs window) {
  const TimeNs deadline = add_saturating(now(), window);
  if (auto r = next_for(c, deadline)) {
    fail(fmt::format("expected nothing {}within {} ms, got {}", c ? "from " + c->name + " " : "",
                     window / kMillisecond, describe_received(r->packet, c)));
  }
  record(
      report::EventKind::kSilenceOk,
      fmt::format("nothing {}for {} ms", c ? "from " + c->name + " " : "", window / kMillisecond));
}

std::vector<Received> CaseContext::collect(Connection* c, TimeNs window) {
  const TimeNs deadline = add_saturating(now(), window);
  std::vector<Received> out;
  while (auto r = next_for(c, deadline)) out.push_back(std::move(*r));
  return out;
}

void CaseContext::wait(TimeNs duration) {
  const TimeNs deadline = add_saturating(now(), duration);
  // Only new frames: what is pending already stays where it is, in order.
  while (auto r = next_for(nullptr, deadline, false)) {
    Connection* owner = owner_of(r->packet);
    pending_.push_back({std::move(*r), owner});
  }
}

// ---- control -----------------------------------------------------------------------------

nlohmann::json CaseContext::control(nlohmann::json request) {
  if (!target_.capabilities().control) skip("needs the control API");
  auto response = target_.control(request);
  if (!response) error("control API: " + response.error());
  std::string text = request.value("op", std::string("?"));
  nlohmann::json shown = request;
  shown.erase("op");
  shown.erase("id");
  nlohmann::json answer = *response;
  answer.erase("id");
  std::string answer_text = answer.dump();
  if (answer_text.size() > 600) answer_text = answer_text.substr(0, 600) + "...";
  record(report::EventKind::kControl,
         fmt::format("{} {} -> {}", text, shown.empty() ? "" : shown.dump(), answer_text));
  return *response;
}

nlohmann::json CaseContext::control_ok(nlohmann::json request) {
  const std::string op = request.value("op", std::string("?"));
  nlohmann::json r = control(std::move(request));
  if (!r.value("ok", false))
    inconclusive(fmt::format("set-up step {} failed on the target: {}", op,
                             r.value("error", std::string("no error text"))));
  return r;
}

std::map<std::string, std::uint64_t> CaseContext::counters() {
  std::map<std::string, std::uint64_t> out;
  const auto r = control_ok({{"op", "counters"}});
  for (const auto& [k, v] : r["counters"].items())
    if (v.is_number_unsigned()) out[k] = v.get<std::uint64_t>();
  return out;
}

std::uint32_t CaseContext::create_cq(const std::string& name, std::uint32_t depth) {
  const std::uint32_t cq = control_ok({{"op", "create_cq"}, {"depth", depth}})["cq"];
  cqs_[name] = cq;
  return cq;
}

std::uint32_t CaseContext::cq(const std::string& name) {
  const auto it = cqs_.find(name);
  if (it == cqs_.end()) error(fmt::format("no CQ named '{}'", name));
  return it->second;
}

// ---- verdicts ----------------------------------------------------------------------------

void CaseContext::record(report::EventKind kind, std::string text, std::vector<std::uint8_t> frame,
                         std::vector<std::string> analysis) {
  // A flooding target must not grow the evidence without bound.
  if (!frame.empty() && ++frame_events_ > kMaxFrameEvents) {
    ++dropped_frames_;
    return;
  }
  report::Event e;
  e.analysis = std::move(analysis);
  e.unix_ns = target_.port().clock().unix_ns(now());
  e.kind = kind;
  e.step = step_;
  e.text = std::move(text);
  e.frame = std::move(frame);
  result_.events.push_back(std::move(e));
}

void CaseContext::note(std::string text) {
  record(report::EventKind::kNote, std::move(text));
}

void CaseContext::fail(std::string reason, std::vector<report::FieldDiff> diffs) {
  record(report::EventKind::kExpectFailed, reason);
  throw CaseStop(report::Verdict::kFail, std::move(reason), std::move(diffs));
}
void CaseContext::skip(std::string reason) {
  throw CaseStop(report::Verdict::kSkip, std::move(reason));
}
void CaseContext::inconclusive(std::string reason) {
  record(report::EventKind::kNote, reason);
  throw CaseStop(report::Verdict::kInconclusive, std::move(reason));
}
void CaseContext::error(std::string reason) {
  throw CaseStop(report::Verdict::kError, std::move(reason));
}

}  // namespace roceconf::engine

namespace roceconf::engine {

void CaseContext::close_all() {
  for (auto& [name, c] : connections_) {
    try {
      if (Passive* p = passive(*c)) {
        // The target's active side must not go on retrying into the next case: a REP sent means
        // its connection is up (DREQ), a REQ not answered yet is rejected (Consumer).
        if (c->state == ConnState::kDreqSent || c->state == ConnState::kClosed || p->rej_sent) {
        } else if (p->rep_sent) {
          cm_send(*c, "DREQ", {});
        } else if (p->req_seen || p->target_comm_id) {
          if (!p->req_seen) c->remote_comm_id = *p->target_comm_id;
          cm_send(*c, "REJ", {{"reason", "28"}});
        }
      } else if (!c->via_control &&
                 (c->state == ConnState::kEstablished || c->state == ConnState::kRepReceived)) {
        cm_send(*c, "DREQ", {});
      }
    } catch (const CaseStop&) {
    }
  }
  try {
    wait(timing_.silence_floor / 4);
  } catch (const CaseStop&) {
  }
  for (auto& [name, c] : connections_) {
    try {
      if (c->via_control) (void)target_.control({{"op", "destroy_qp"}, {"qp_num", c->remote_qpn}});
    } catch (const CaseStop&) {
    }
  }
  pending_.clear();
}

}  // namespace roceconf::engine
