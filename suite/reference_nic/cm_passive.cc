// The passive side of the CM agent (IBA Vol 1 12.9.6, spec-facts §9.6): REQ checks in the order
// of Linux cm_req_handler (duplicate, stale, listener) followed by the REQ's own fields, the
// QP's INIT and RTR transitions from the REQ, the REP, establishment on RTU or on the first
// packet in RTR, and SIDR.
#include <algorithm>
#include <utility>
#include <vector>

#include "suite/reference_nic/cm_agent.h"
#include "suite/reference_nic/nic.h"

namespace roceconf::target {

namespace {

// REP FailoverAccepted (IBA 12.6, Table 110): 1 = failover not supported (RoCE has no alternate
// paths).
inline constexpr std::uint8_t kFailoverNotSupported = 1;

Gid source_gid(const Packet& p) {
  return p.ipv4 ? gid_from_ipv4(p.ipv4->src) : p.ipv6->src;
}
Gid destination_gid(const Packet& p) {
  return p.ipv4 ? gid_from_ipv4(p.ipv4->dst) : p.ipv6->dst;
}

// Back to the sender of `p` from the GID it was sent to; the sender's MAC and UDP source port
// kept, as Wire::reply_to does.
AddressVector sender_av(const Port& port, const Packet& p) {
  AddressVector av;
  av.dgid = source_gid(p);
  if (p.eth) av.dmac = p.eth->src;
  if (p.udp) av.udp_sport = p.udp->sport;
  av.sgid_index = static_cast<std::uint8_t>(port.gid_table.find(destination_gid(p)).value_or(0));
  av.port_num = port.attr.port_num;
  return av;
}

}  // namespace

void CmAgent::on_req(const Packet& p, const CmReq& req, std::uint16_t pkey_index,
                     std::uint64_t now) {
  const std::uint16_t pkey = pkey_at(pkey_index, p);
  // The same REQ again (remote comm ID + CA GUID, spec-facts §9.6): our REP was lost, or the REQ
  // is late.
  if (CmConnection* c = find_remote(req.local_ca_guid, req.local_comm_id)) {
    counters_.req_duplicates++;
    if (!c->active && awaiting_rtu(c->state)) {
      resend(*c);
    } else if (c->state == CmState::kTimewait || (nic_.quirks().has(Quirk::kLateDupReqRejected) &&
                                                  c->state == CmState::kEstablished)) {
      reject_req(p, pkey, req, rej_reason::kStaleConnection, c->local_comm_id);
    }
    return;
  }
  // The peer's QP is still in a live connection here: the new REQ is stale, and the old
  // connection is released.
  if (const auto it = by_remote_qpn_.find({req.local_ca_guid, req.local_qpn});
      it != by_remote_qpn_.end()) {
    const std::uint32_t old = it->second;
    reject_req(p, pkey, req, rej_reason::kStaleConnection);
    if (CmConnection* c = find(old)) start_disconnect(*c, now);
    return;
  }
  const auto listener = listeners_.find(req.service_id);
  if (listener == listeners_.end()) {
    // The rej-wrong-reason defect says "no resources" where the service ID is unknown.
    reject_req(p, pkey, req,
               nic_.quirks().has(Quirk::kRejWrongReason) ? rej_reason::kNoResources
                                                         : rej_reason::kInvalidServiceId);
    return;
  }
  if (req.transport_type != cm_transport::kRc && req.transport_type != cm_transport::kUc) {
    reject_req(p, pkey, req, rej_reason::kInvalidTransport);  // RD and XRC are not offered
    return;
  }
  if (!path_mtu_valid(req.path_mtu)) {
    reject_req(p, pkey, req, rej_reason::kInvalidPathMtu);
    return;
  }
  // The req-lid-checked defect validates the LIDs as an IB CM would (Annex A17 reserves them).
  if (nic_.quirks().has(Quirk::kReqLidChecked) &&
      (req.primary.local_lid != 0 || req.primary.remote_lid != 0)) {
    reject_req(p, pkey, req, rej_reason::kInvalidPrimaryLid);
    return;
  }
  // The primary path must end at one of our GIDs; the ARI names the one the REQ reached
  // (spec-facts §9.6, Linux: REJ 12 with ARI = a local GID).
  if (!nic_.device().port().gid_table.find(req.primary.remote_gid)) {
    const Gid ours = destination_gid(p);
    reject_req(p, pkey, req, rej_reason::kInvalidGid, 0, ours);
    return;
  }
  accept(p, req, pkey_index, listener->second, now);
}

const CmConnection* CmAgent::pending_passive() const {
  // The newest QP among the passive connections still waiting for their RTU.
  const auto by_age = nic_.device().qp_nums_by_age();
  for (auto qp = by_age.rbegin(); qp != by_age.rend(); ++qp)
    for (const auto& [id, c] : connections_)
      if (!c.active && awaiting_rtu(c.state) && c.qp_num == *qp) return &c;
  return nullptr;
}

void CmAgent::accept(const Packet& p, const CmReq& req, std::uint16_t pkey_index,
                     const ListenerCallbacks& listener, std::uint64_t now) {
  const std::uint16_t pkey = pkey_at(pkey_index, p);
  const Port& port = nic_.device().port();
  const QpLimits& limits = nic_.device().attr().qp;
  const bool rc = req.transport_type == cm_transport::kRc;

  // The qpn-reuse defect: while a connection waits for its RTU, a new REQ is answered with that
  // connection's QP instead of a new one.
  const CmConnection* shared = nic_.quirks().has(Quirk::kQpnReuse) ? pending_passive() : nullptr;
  std::uint32_t qp_num = 0;
  if (shared) {
    qp_num = shared->qp_num;
  } else {
    const auto created = listener.create_qp(req);
    if (!created) {
      reject_req(p, pkey, req, created.error());
      return;
    }
    qp_num = *created;
  }
  const Qp* qp = nic_.device().qp(qp_num);
  const QpType type = rc ? QpType::kRc : QpType::kUc;
  const auto refuse = [&](std::uint16_t why, std::uint32_t local_comm_id) {
    reject_req(p, pkey, req, why, local_comm_id);
    if (local_comm_id) remove(local_comm_id);
    if (!shared && listener.disconnected) listener.disconnected(qp_num);
  };
  if (!qp || (!shared && qp->state() != QpState::kReset && qp->state() != QpState::kInit)) {
    refuse(rej_reason::kNoQp, 0);
    return;
  }
  if (qp->qp_type() != type) {
    refuse(rej_reason::kInvalidTransport, 0);
    return;
  }

  // Linux cm_req_handler swaps the REQ's resources: what the peer initiates we must answer.
  const std::uint8_t responder_resources =
      rc ? std::min(req.initiator_depth, limits.max_qp_rd_atom) : 0;
  const std::uint8_t initiator_depth =
      rc ? std::min(req.responder_resources, limits.max_qp_init_rd_atom) : 0;
  const auto mtu =
      static_cast<PathMtu>(std::min(req.path_mtu, static_cast<std::uint8_t>(port.attr.active_mtu)));

  CmConnection& c = add_connection(false);
  c.state = CmState::kRepSent;
  c.remote_comm_id = req.local_comm_id;
  c.remote_ca_guid = req.local_ca_guid;
  c.service_id = req.service_id;
  c.qp_num = qp_num;
  c.remote_qpn = req.local_qpn;
  c.qp_type = type;
  if (shared) {
    c.local_psn = shared->local_psn;
  } else if (nic_.quirks().has(Quirk::kSequentialPsns)) {
    // The sequential-psns defect: one more than the last connection's (a random first one).
    if (!last_psn_) last_psn_ = static_cast<std::uint32_t>(random() & 0xFFFFFF);
    c.local_psn = *last_psn_ = (*last_psn_ + 1) & 0xFFFFFF;
  } else {
    c.local_psn = static_cast<std::uint32_t>(random() & 0xFFFFFF);
  }
  c.tid = reply_tid(p.mad->header.tid);
  c.cm_av = sender_av(port, p);
  c.pkey = pkey;
  // The REP waits for the RTU as long as the REQ's sender says it takes to answer (Linux: the
  // REQ's Local CM Response Timeout), and is sent again up to its Max CM Retries.
  c.max_cm_retries = req.max_cm_retries;
  c.retries_left = req.max_cm_retries;
  c.timeout_ns = cm_timeout_ns(req.local_cm_response_timeout);
  index_remote(c);  // cannot clash: duplicates were answered above
  by_qp_.emplace(qp_num, c.local_comm_id);

  if (shared) {
    c.rts = shared->rts;
    c.rts_mask = shared->rts_mask;
  } else {
    if (qp->state() == QpState::kReset) {
      // INIT in the REQ's partition; the peer may read, write and use atomics (UC: write only).
      QpAttr init;
      init.qp_state = QpState::kInit;
      init.pkey_index = static_cast<std::uint16_t>(port.pkey_table.find(req.pkey).value_or(
          port.pkey_table.find_match(req.pkey).value_or(pkey_index)));
      init.port_num = port.attr.port_num;
      init.qp_access_flags = rc ? access::kRemote : access::kRemoteWrite;
      if (!nic_.modify_qp(
              qp_num, init,
              qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kAccessFlags)) {
        refuse(rej_reason::kNoQp, c.local_comm_id);
        return;
      }
    }
    // RTR toward the REQ's sender: its address as seen on the wire, its QP, PSN and path.
    QpAttr rtr;
    rtr.qp_state = QpState::kRtr;
    rtr.ah_attr.dgid = source_gid(p);
    if (p.eth) rtr.ah_attr.dmac = p.eth->src;
    rtr.ah_attr.sgid_index = c.cm_av.sgid_index;
    rtr.ah_attr.port_num = port.attr.port_num;
    rtr.ah_attr.flow_label = req.primary.flow_label;
    rtr.ah_attr.traffic_class = req.primary.traffic_class;
    rtr.ah_attr.hop_limit = req.primary.hop_limit ? req.primary.hop_limit : 64;
    rtr.ah_attr.sl = req.primary.sl;
    rtr.path_mtu = mtu;
    rtr.dest_qp_num = req.local_qpn;
    rtr.rq_psn = c.local_psn;  // announced in the REP: the active side sends from it
    rtr.max_dest_rd_atomic = responder_resources;
    rtr.min_rnr_timer = config_.min_rnr_timer;
    c.rtr_mask = qp_attr::kState | qp_attr::kAv | qp_attr::kPathMtu | qp_attr::kDestQpn |
                 qp_attr::kRqPsn | (rc ? qp_attr::kMaxDestRdAtomic | qp_attr::kMinRnrTimer : 0);
    c.rts.qp_state = QpState::kRts;
    c.rts.sq_psn = req.starting_psn & 0xFFFFFF;  // IBA 12.7.23; Linux cm_req_handler
    c.rts.timeout = req.primary.local_ack_timeout;
    c.rts.retry_cnt = req.retry_count;
    c.rts.rnr_retry = req.rnr_retry_count;
    c.rts.max_rd_atomic = initiator_depth;
    c.rts_mask =
        qp_attr::kState | qp_attr::kSqPsn |
        (rc ? qp_attr::kTimeout | qp_attr::kRetryCnt | qp_attr::kRnrRetry | qp_attr::kMaxQpRdAtomic
            : 0);
    if (nic_.quirks().has(Quirk::kRtuRequired)) {
      // The rtu-required defect: the QP stays in INIT, where data is dropped, until the RTU.
      c.rtr = rtr;
    } else if (!nic_.modify_qp(qp_num, rtr, c.rtr_mask)) {
      refuse(rej_reason::kNoQp, c.local_comm_id);
      return;
    }
  }

  std::vector<std::uint8_t> private_data;
  if (listener.private_data) private_data = listener.private_data(qp_num);
  private_data.resize(std::min(private_data.size(), kRepPrivateDataSize));
  CmRep rep;
  rep.local_comm_id = c.local_comm_id;
  rep.remote_comm_id = c.remote_comm_id;
  rep.local_qpn = qp_num;
  rep.starting_psn = c.local_psn;
  rep.responder_resources = responder_resources;
  rep.initiator_depth = initiator_depth;
  rep.target_ack_delay = config_.target_ack_delay;
  // Linux tests "alternate path present" by a non-zero alternate local LID.
  rep.failover_accepted = req.alternate.local_lid != 0 ? kFailoverNotSupported : 0;
  rep.rnr_retry_count = config_.rnr_retry_count;
  rep.local_ca_guid = nic_.device().attr().node_guid;
  rep.private_data = private_data;
  send_stored(c, c.tid, rep);
  set_deadline(c, now + c.timeout_ns);
}

void CmAgent::complete_passive(CmConnection& c, std::uint64_t now) {
  const std::uint32_t qp_num = c.qp_num;
  const std::uint64_t service_id = c.service_id;
  if (!establish(c)) {
    finish(c, Ending::kDisconnected, 0, now);  // the QP was destroyed or moved meanwhile
    return;
  }
  const auto it = listeners_.find(service_id);
  if (it != listeners_.end() && it->second.established) it->second.established(qp_num);
}

void CmAgent::on_rtu(const CmRtu& rtu, std::uint64_t now) {
  CmConnection* c = find(rtu.remote_comm_id);
  if (!c || c->active || c->remote_comm_id != rtu.local_comm_id) return;
  if (!awaiting_rtu(c->state)) {
    counters_.rtu_duplicates++;  // already established (by first data) or closing
    return;
  }
  complete_passive(*c, now);
}

void CmAgent::on_comm_est(std::uint32_t qp_num, std::uint64_t now_ns) {
  // The responder raised Communication Established for the first packet on a QP in RTR
  // (IBA ch. 11 asynchronous events); the CM takes it as the RTU it may have lost (IBA 12.9,
  // Linux ib_cm_notify).
  const Qp* qp = nic_.device().qp(qp_num);
  if (!qp || qp->state() != QpState::kRtr) return;
  // The rtu-required defect: data before the RTU does not establish the connection.
  if (nic_.quirks().has(Quirk::kRtuRequired)) return;
  std::vector<std::uint32_t> pending;
  auto [first, last] = by_qp_.equal_range(qp_num);
  for (auto it = first; it != last; ++it) {
    const CmConnection* c = find(it->second);
    if (c && !c->active && awaiting_rtu(c->state)) pending.push_back(c->local_comm_id);
  }
  for (const std::uint32_t id : pending) {
    CmConnection* c = find(id);
    if (c && awaiting_rtu(c->state)) complete_passive(*c, now_ns);
  }
}

void CmAgent::on_sidr_req(const Packet& p, const CmSidrReq& req, bool version_ok,
                          std::uint16_t pkey) {
  // IBA 12.11: every SIDR_REQ is answered; the status says why no QP is given.
  CmSidrRep rep;
  rep.request_id = req.request_id;
  rep.service_id = req.service_id;
  std::vector<std::uint8_t> private_data;
  const auto listener = listeners_.find(req.service_id);
  if (!version_ok) {
    rep.sidr_status = sidr_status::kUnsupportedVersion;
  } else if (listener == listeners_.end() || !listener->second.sidr) {
    rep.sidr_status = sidr_status::kUnsupported;
  } else if (auto answer = listener->second.sidr(req)) {
    rep.sidr_status = sidr_status::kSuccess;
    rep.qpn = answer->qp_num;
    rep.qkey = answer->qkey;
    private_data = std::move(answer->private_data);
    private_data.resize(std::min(private_data.size(), kSidrRepPrivateDataSize));
    rep.private_data = private_data;
  } else {
    rep.sidr_status = answer.error();
  }
  reply(p, pkey, reply_tid(p.mad->header.tid), rep);
}

}  // namespace roceconf::target
