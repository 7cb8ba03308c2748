#include "suite/reference_nic/cm_agent.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <utility>

#include <fmt/format.h>

#include "dissector/mad/rdma_cm.h"
#include "suite/reference_nic/nic.h"

namespace roceconf::target {

namespace {

// MAD status (IBA 13.4.7, the MAD status field): the "invalid field" code sits in bits 4..2.
inline constexpr std::uint16_t kMadStatusBadVersion = 1 << 2;
inline constexpr std::uint16_t kMadStatusUnsupportedMethodAttr = 3 << 2;

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint32_t ipv4_value(const std::array<std::uint8_t, 4>& a) {
  return (std::uint32_t{a[0]} << 24) | (std::uint32_t{a[1]} << 16) | (std::uint32_t{a[2]} << 8) |
         a[3];
}

MadHeader send_header(std::uint64_t tid, const CmMessage& message) {
  MadHeader h;
  h.method = mad_method::kSend;
  h.tid = tid;
  h.attr_id = cm_attr_id(message);
  return h;
}

}  // namespace

CmAgent::CmAgent(Nic& nic) : nic_(nic) {
  configure({});
}

CmAgent::~CmAgent() = default;

void CmAgent::configure(const CmAgentConfig& config) {
  config_ = config;
  std::uint64_t seed = config.seed;
  if (seed == 0) {
    seed = nic_.device().attr().node_guid ^ (std::uint64_t{ipv4_value(nic_.config().ipv4)} << 16);
  }
  rng_ = seed;
  id_operand_ = static_cast<std::uint32_t>(random());
  next_id_ = static_cast<std::uint32_t>(random());
  tid_high_ = static_cast<std::uint32_t>(random());
}

std::uint64_t CmAgent::random() {
  return splitmix64(rng_);
}

std::uint32_t CmAgent::new_comm_id() {
  // Linux cm.c: a counter XORed with a random operand, so IDs are unique and hard to guess.
  for (;;) {
    const std::uint32_t id = next_id_++ ^ id_operand_;
    if (id != 0 && !connections_.contains(id)) return id;
  }
}

// ---- sending ---------------------------------------------------------------------------------

std::uint64_t CmAgent::reply_tid(std::uint64_t received_tid) const {
  // spec-facts §9.2: a response carries the request's TransactionID. The tid-mismatch defect
  // answers with the next one.
  return nic_.quirks().has(Quirk::kTidMismatch) ? received_tid + 1 : received_tid;
}

std::uint64_t CmAgent::new_tid() {
  return (std::uint64_t{tid_high_} << 32) | next_tid_++;
}

std::uint16_t CmAgent::pkey_at(std::uint16_t pkey_index, const Packet& received) const {
  return nic_.device().port().pkey_table.at(pkey_index).value_or(received.bth->pkey);
}

void CmAgent::transmit(Packet& p, const Mad& mad) {
  if (hung_) return;
  // spec-facts §9.1: UD SEND ONLY from QP1 to QP1 with the GSI Q_Key.
  p.bth->opcode = opcode::kUdSendOnly;
  p.bth->psn = gsi_psn_++ & 0xFFFFFF;
  p.deth = Deth{kGsiQkey, 0, Device::kGsiQpn};
  p.mad = mad;
  nic_.wire().send(p);
}

void CmAgent::reply(const Packet& received, std::uint16_t pkey, std::uint64_t tid,
                    const CmMessage& message) {
  Packet p = nic_.wire().reply_to(received, Device::kGsiQpn, pkey);
  transmit(p, Mad{send_header(tid, message), message, {}});
}

void CmAgent::send_stored(CmConnection& c, std::uint64_t tid, const CmMessage& message) {
  c.out_header = send_header(tid, message);
  encode_cm(message, c.out_data);
  resend(c);
}

void CmAgent::resend(CmConnection& c) {
  Packet p = nic_.wire().packet_to(c.cm_av, Device::kGsiQpn, Device::kGsiQpn, c.pkey);
  transmit(p, Mad{c.out_header, std::nullopt, Bytes(c.out_data)});
}

void CmAgent::reject_req(const Packet& received, std::uint16_t pkey, const CmReq& req,
                         std::uint16_t why, std::uint32_t local_comm_id, Bytes ari) {
  // spec-facts §9.6: a REQ rejected before a connection exists has LocalCommID 0 and echoes the
  // REQ's local communication ID as RemoteCommID.
  CmRej rej;
  rej.local_comm_id = local_comm_id;
  rej.remote_comm_id = req.local_comm_id;
  rej.message_rejected = cm_msg_kind::kReq;
  rej.reason = why;
  rej.reject_info_length = static_cast<std::uint8_t>(ari.size());
  rej.ari = ari;
  counters_.rej_sent++;
  reply(received, pkey, reply_tid(received.mad->header.tid), rej);
}

// ---- API -------------------------------------------------------------------------------------

std::expected<void, std::string> CmAgent::listen(std::uint64_t service_id,
                                                 ListenerCallbacks callbacks) {
  if (!callbacks.create_qp) return std::unexpected("listen: create_qp callback is required");
  if (listeners_.contains(service_id)) {
    return std::unexpected(fmt::format("listen: service ID {:#018x} has a listener", service_id));
  }
  listeners_.emplace(service_id, std::move(callbacks));
  return {};
}

std::expected<void, std::string> CmAgent::disconnect(std::uint32_t local_comm_id) {
  CmConnection* c = find(local_comm_id);
  if (!c) return std::unexpected(fmt::format("disconnect: no connection {:#010x}", local_comm_id));
  if (c->state != CmState::kEstablished) {
    return std::unexpected(fmt::format("disconnect: connection {:#010x} is {}, not ESTABLISHED",
                                       local_comm_id, cm_state_name(c->state)));
  }
  start_disconnect(*c, nic_.now());
  return {};
}

std::optional<CmConnectionInfo> CmAgent::connection(std::uint32_t local_comm_id) const {
  const auto it = connections_.find(local_comm_id);
  if (it == connections_.end()) return std::nullopt;
  const CmConnection& c = it->second;
  return CmConnectionInfo{c.active,     c.state,  c.local_comm_id, c.remote_comm_id,
                          c.service_id, c.qp_num, c.remote_qpn,    c.local_psn};
}

std::optional<std::uint32_t> CmAgent::comm_id_of_qp(std::uint32_t qp_num) const {
  auto [first, last] = by_qp_.equal_range(qp_num);
  if (first == last) return std::nullopt;
  return std::prev(last)->second;
}

// ---- receiving -------------------------------------------------------------------------------

namespace {

// What the malformed-mad-hangs-cm defect chokes on: a MAD not 256 bytes long (C13-3), or an
// rdma_cm REQ whose private-data header names an IP version other than 4 and 6 (Annex A11).
bool malformed_mad(const Packet& p) {
  if (p.has(FindingCode::kMadLength)) return true;
  if (!p.mad || !p.mad->cm) return false;
  const auto* req = std::get_if<CmReq>(&*p.mad->cm);
  if (!req || !is_rdma_cm_service_id(req->service_id)) return false;
  const auto header = decode_rdma_cm_header(req->private_data);
  return header && header->ip_version != 4 && header->ip_version != 6;
}

}  // namespace

void CmAgent::on_mad(const Packet& p, std::uint16_t pkey_index, std::uint64_t now_ns) {
  if (hung_) return;
  if (nic_.quirks().has(Quirk::kMalformedMadHangsCm) && malformed_mad(p)) {
    hung_ = true;
    return;
  }
  if (!p.mad || !p.bth) return;
  const MadHeader& h = p.mad->header;
  // Other management classes, and MADs of an unknown base version, are not the CM's.
  if (h.base_version != 1 || h.mgmt_class != kMgmtClassCm) return;
  const std::uint16_t pkey = pkey_at(pkey_index, p);
  if (h.method == mad_method::kGet || h.method == mad_method::kSet) {
    on_get_or_set(p, pkey);
    return;
  }
  // CM protocol messages are Sends (IBA 12.6); responses and other methods are not answered.
  if (h.method != mad_method::kSend || !p.mad->cm) return;
  const bool version_ok = h.class_version == kCmClassVersion;
  const CmMessage& m = *p.mad->cm;
  if (const auto* req = std::get_if<CmReq>(&m)) {
    if (!version_ok) {
      reject_req(p, pkey, *req, rej_reason::kInvalidClassVersion);
      return;
    }
    on_req(p, *req, pkey_index, now_ns);
  } else if (const auto* sidr = std::get_if<CmSidrReq>(&m)) {
    on_sidr_req(p, *sidr, version_ok, pkey);
  } else if (!version_ok) {
    return;  // a message of a class version we do not speak: nothing in it can be trusted
  } else if (const auto* rep = std::get_if<CmRep>(&m)) {
    on_rep(*rep, now_ns);
  } else if (const auto* rtu = std::get_if<CmRtu>(&m)) {
    on_rtu(*rtu, now_ns);
  } else if (const auto* rej = std::get_if<CmRej>(&m)) {
    on_rej(*rej, now_ns);
  } else if (const auto* mra = std::get_if<CmMra>(&m)) {
    on_mra(*mra, now_ns);
  } else if (const auto* dreq = std::get_if<CmDreq>(&m)) {
    on_dreq(p, *dreq, pkey, now_ns);
  } else if (const auto* drep = std::get_if<CmDrep>(&m)) {
    on_drep(*drep, now_ns);
  } else if (const auto* lap = std::get_if<CmLap>(&m)) {
    on_lap(p, *lap, pkey);
  }
  // SIDR_REP answers nothing we ask.
}

// Alternate paths do not exist on RoCE: a LAP is ignored, as Linux does, and its LID fields,
// reserved there (CA17-36, CA17-38), are never read. The lap-lid-checked defect validates them
// as an IB CM would and answers APR status 7, which A17 forbids (CA17-37).
void CmAgent::on_lap(const Packet& p, const CmLap& lap, std::uint16_t pkey) {
  if (!nic_.quirks().has(Quirk::kLapLidChecked)) return;
  if (lap.alternate.local_lid == 0 && lap.alternate.remote_lid == 0) return;
  const CmConnection* c = find(lap.remote_comm_id);
  if (!c) return;
  CmApr apr;
  apr.local_comm_id = c->local_comm_id;
  apr.remote_comm_id = lap.local_comm_id;
  apr.ap_status = 7;  // invalid LID
  reply(p, pkey, reply_tid(p.mad->header.tid), apr);
}

void CmAgent::on_get_or_set(const Packet& p, std::uint16_t pkey) {
  // IBA 13.4.8.1: every class answers Get(ClassPortInfo). Anything else asked of the CM class is
  // an unsupported method/attribute combination; an unknown class version is a bad version.
  MadHeader h = p.mad->header;
  h.method = mad_method::kGetResp;
  h.tid = reply_tid(h.tid);
  std::optional<CmMessage> body;
  if (h.class_version != kCmClassVersion) {
    h.status = kMadStatusBadVersion;
  } else if (p.mad->header.method == mad_method::kGet && h.attr_id == cm_attr::kClassPortInfo) {
    ClassPortInfo info;
    info.class_version = kCmClassVersion;
    info.resp_time_value = config_.cm_response_timeout;
    body = info;
    h.status = 0;
  } else {
    h.status = kMadStatusUnsupportedMethodAttr;
  }
  Packet out = nic_.wire().reply_to(p, Device::kGsiQpn, pkey);
  transmit(out, Mad{h, body, {}});
}

// ---- timers ----------------------------------------------------------------------------------

void CmAgent::set_deadline(CmConnection& c, std::optional<std::uint64_t> deadline) {
  if (c.deadline) timers_.erase({*c.deadline, c.local_comm_id});
  c.deadline = deadline;
  if (deadline) timers_.emplace(*deadline, c.local_comm_id);
}

void CmAgent::tick(std::uint64_t now_ns) {
  if (hung_) return;
  while (!timers_.empty() && timers_.begin()->first <= now_ns) {
    const std::uint32_t id = timers_.begin()->second;
    timers_.erase(timers_.begin());
    if (CmConnection* c = find(id)) {
      c->deadline.reset();
      expire(*c, now_ns);
    }
  }
}

std::optional<std::uint64_t> CmAgent::next_deadline() const {
  if (timers_.empty() || hung_) return std::nullopt;
  return timers_.begin()->first;
}

void CmAgent::expire(CmConnection& c, std::uint64_t now) {
  if (c.state == CmState::kTimewait) {
    remove(c.local_comm_id);
    return;
  }
  if (c.state == CmState::kEstablished) return;
  if (c.retries_left > 0) {
    // The answer did not come: the same message again, up to Max CM Retries times.
    c.retries_left--;
    if (awaiting_rep(c.state)) counters_.req_retries++;
    if (awaiting_rtu(c.state)) counters_.rep_retries++;
    if (c.state == CmState::kDreqSent) counters_.dreq_retries++;
    resend(c);
    set_deadline(c, now + c.timeout_ns);
    return;
  }
  counters_.timeouts++;
  if (c.state == CmState::kDreqSent) {
    // No DREP: the connection is released all the same (Linux: DREQ_ERROR, then TIMEWAIT).
    finish(c, Ending::kDisconnected, 0, now);
    return;
  }
  // No REP or no RTU after the last retry: REJ Timeout, ARI = our CA GUID, so the peer can find
  // the connection even without our communication ID (Linux cm_rej_handler looks it up so).
  std::array<std::uint8_t, 8> guid;
  const std::uint64_t g = nic_.device().attr().node_guid;
  for (std::size_t i = 0; i < 8; ++i) guid[i] = static_cast<std::uint8_t>(g >> (56 - 8 * i));
  CmRej rej;
  rej.local_comm_id = c.local_comm_id;
  rej.remote_comm_id = c.remote_comm_id;
  rej.message_rejected = cm_msg_kind::kOther;  // nothing received is being rejected
  rej.reason = rej_reason::kTimeout;
  rej.reject_info_length = guid.size();
  rej.ari = guid;
  counters_.rej_sent++;
  send_stored(c, c.tid, rej);
  finish(c, c.active ? Ending::kTimedOut : Ending::kDisconnected, rej_reason::kTimeout, now);
}

// ---- connection records ----------------------------------------------------------------------

CmConnection& CmAgent::add_connection(bool active) {
  const std::uint32_t id = new_comm_id();
  CmConnection& c = connections_[id];
  c.active = active;
  c.local_comm_id = id;
  return c;
}

CmConnection* CmAgent::find(std::uint32_t local_comm_id) {
  const auto it = connections_.find(local_comm_id);
  return it == connections_.end() ? nullptr : &it->second;
}

CmConnection* CmAgent::find_remote(std::uint64_t ca_guid, std::uint32_t remote_comm_id) {
  const auto it = by_remote_id_.find({ca_guid, remote_comm_id});
  return it == by_remote_id_.end() ? nullptr : find(it->second);
}

bool CmAgent::index_remote(CmConnection& c) {
  const auto [it, added] =
      by_remote_id_.try_emplace({c.remote_ca_guid, c.remote_comm_id}, c.local_comm_id);
  if (!added && it->second != c.local_comm_id) return false;
  c.indexed_remote_qpn =
      by_remote_qpn_.try_emplace({c.remote_ca_guid, c.remote_qpn}, c.local_comm_id).second;
  return true;
}

void CmAgent::remove(std::uint32_t local_comm_id) {
  CmConnection* c = find(local_comm_id);
  if (!c) return;
  set_deadline(*c, std::nullopt);
  const auto rid = by_remote_id_.find({c->remote_ca_guid, c->remote_comm_id});
  if (rid != by_remote_id_.end() && rid->second == local_comm_id) by_remote_id_.erase(rid);
  if (c->indexed_remote_qpn) by_remote_qpn_.erase({c->remote_ca_guid, c->remote_qpn});
  auto [first, last] = by_qp_.equal_range(c->qp_num);
  for (auto it = first; it != last;) {
    it = it->second == local_comm_id ? by_qp_.erase(it) : std::next(it);
  }
  connect_callbacks_.erase(local_comm_id);
  connections_.erase(local_comm_id);
}

void CmAgent::qp_to_error(std::uint32_t qp_num) {
  const Qp* qp = nic_.device().qp(qp_num);
  if (!qp || qp->state() == QpState::kErr || qp->state() == QpState::kReset) return;
  QpAttr attr;
  attr.qp_state = QpState::kErr;
  (void)nic_.modify_qp(qp_num, attr, qp_attr::kState);
}

bool CmAgent::establish(CmConnection& c) {
  const Qp* qp = nic_.device().qp(c.qp_num);
  if (!qp) return false;
  if (c.rtr) {
    // Deferred under rtu-required; a QP shared under qpn-reuse may have moved on already.
    if (qp->state() == QpState::kInit && !nic_.modify_qp(c.qp_num, *c.rtr, c.rtr_mask)) {
      return false;
    }
    c.rtr.reset();
  }
  if (qp->state() == QpState::kRtr && !nic_.modify_qp(c.qp_num, c.rts, c.rts_mask)) return false;
  if (qp->state() != QpState::kRts) return false;
  c.state = CmState::kEstablished;
  set_deadline(c, std::nullopt);
  return true;
}

void CmAgent::start_disconnect(CmConnection& c, std::uint64_t now) {
  if (c.state != CmState::kEstablished) {
    if (c.state != CmState::kTimewait && c.state != CmState::kDreqSent) {
      finish(c, Ending::kDisconnected, 0, now);
    }
    return;
  }
  // IBA 12.9 (release) / rdma_disconnect(): the QP stops first, then the DREQ goes out, retried as
  // any request until the DREP comes.
  c.state = CmState::kDreqSent;
  qp_to_error(c.qp_num);
  c.retries_left = c.max_cm_retries;
  CmDreq dreq;
  dreq.local_comm_id = c.local_comm_id;
  dreq.remote_comm_id = c.remote_comm_id;
  if (nic_.quirks().has(Quirk::kDreqIdsSwapped)) std::swap(dreq.local_comm_id, dreq.remote_comm_id);
  dreq.remote_qpn = c.remote_qpn;
  send_stored(c, new_tid(), dreq);
  set_deadline(c, now + c.timeout_ns);
}

void CmAgent::finish(CmConnection& c, Ending how, std::uint16_t why, std::uint64_t now) {
  const std::uint32_t id = c.local_comm_id;
  const std::uint32_t qp_num = c.qp_num;
  const bool active = c.active;
  const std::uint64_t service_id = c.service_id;
  // TIMEWAIT keeps the IDs so a late duplicate REQ is recognised as stale; the peer's QPN is
  // free again at once (Linux cm_enter_timewait).
  c.state = CmState::kTimewait;
  if (c.indexed_remote_qpn) {
    by_remote_qpn_.erase({c.remote_ca_guid, c.remote_qpn});
    c.indexed_remote_qpn = false;
  }
  set_deadline(c, now + config_.timewait_ns);
  qp_to_error(qp_num);
  // The application hears last: its callback may call back into the agent.
  if (active) {
    const auto it = connect_callbacks_.find(id);
    if (it == connect_callbacks_.end()) return;
    const ConnectCallbacks cb = it->second;
    if (how == Ending::kRejected && cb.rejected) cb.rejected(why);
    if (how == Ending::kTimedOut && cb.timed_out) cb.timed_out();
    if (how == Ending::kDisconnected && cb.disconnected) cb.disconnected(qp_num);
  } else {
    const auto it = listeners_.find(service_id);
    if (it != listeners_.end() && it->second.disconnected) it->second.disconnected(qp_num);
  }
}

// ---- messages of either side ----------------------------------------------------------------

void CmAgent::on_rej(const CmRej& rej, std::uint64_t now) {
  counters_.rej_received++;
  CmConnection* c = nullptr;
  if (rej.reason == rej_reason::kTimeout && rej.ari.size() >= 8) {
    // A Timeout REJ names its sender by CA GUID in the ARI: it may not know our ID.
    c = find_remote(be::load64(rej.ari.data()), rej.local_comm_id);
  }
  if (!c) {
    c = find(rej.remote_comm_id);
    // Past the REQ, a REJ must come from the connection's peer.
    if (c && rej.message_rejected != cm_msg_kind::kReq && c->remote_comm_id != 0 &&
        c->remote_comm_id != rej.local_comm_id) {
      c = nullptr;
    }
  }
  if (!c || c->state == CmState::kTimewait) return;
  if (awaiting_rep(c->state)) {
    finish(*c, Ending::kRejected, rej.reason, now);
  } else if (rej.message_rejected != cm_msg_kind::kReq) {
    // Our REP (or the connection) refused: the peer gave up on it.
    if (nic_.quirks().has(Quirk::kRejKeepsQp) && !c->active) return;
    finish(*c, Ending::kDisconnected, rej.reason, now);
  }
}

void CmAgent::on_mra(const CmMra& mra, std::uint64_t now) {
  CmConnection* c = find(mra.remote_comm_id);
  if (!c) return;
  CmState next;
  if (mra.message_mraed == cm_msg_kind::kReq && c->active && c->state == CmState::kReqSent) {
    next = CmState::kMraReqRcvd;
  } else if (mra.message_mraed == cm_msg_kind::kRep && !c->active &&
             c->state == CmState::kRepSent && c->remote_comm_id == mra.local_comm_id) {
    next = CmState::kMraRepRcvd;
  } else {
    if (c->state == CmState::kMraReqRcvd || c->state == CmState::kMraRepRcvd) {
      counters_.mra_duplicates++;
    }
    return;
  }
  c->state = next;
  // MRA (IBA 12.6): the peer needs Service Timeout longer; wait that plus the packet lifetime
  // before the next retry (Linux cm_mra_handler).
  set_deadline(*c,
               now + cm_timeout_ns(mra.service_timeout) + cm_timeout_ns(config_.packet_lifetime));
}

void CmAgent::on_dreq(const Packet& p, const CmDreq& dreq, std::uint16_t pkey, std::uint64_t now) {
  const std::uint64_t tid = reply_tid(p.mad->header.tid);
  CmConnection* c = find(dreq.remote_comm_id);
  if (c && c->remote_comm_id != dreq.local_comm_id) c = nullptr;
  if (!c) {
    // IBA 12.9 (release): a DREQ for a connection we do not know is answered all the same, so the
    // peer can finish its release (Linux cm_issue_drep).
    counters_.dreq_duplicates++;
    CmDrep drep;
    drep.local_comm_id = dreq.remote_comm_id;
    drep.remote_comm_id = dreq.local_comm_id;
    reply(p, pkey, tid, drep);
    return;
  }
  if (c->qp_num != dreq.remote_qpn) return;  // names another QP: not for this connection
  CmDrep drep;
  drep.local_comm_id = c->local_comm_id;
  drep.remote_comm_id = c->remote_comm_id;
  if (c->state == CmState::kTimewait) {
    counters_.dreq_duplicates++;  // our DREP was lost
    reply(p, pkey, tid, drep);
    return;
  }
  if (awaiting_rep(c->state)) return;  // nothing to release yet
  reply(p, pkey, tid, drep);
  finish(*c, Ending::kDisconnected, 0, now);
}

void CmAgent::on_drep(const CmDrep& drep, std::uint64_t now) {
  CmConnection* c = find(drep.remote_comm_id);
  if (!c || c->remote_comm_id != drep.local_comm_id || c->state != CmState::kDreqSent) return;
  finish(*c, Ending::kDisconnected, 0, now);
}

}  // namespace roceconf::target
