// The active side of the CM agent (IBA Vol 1 12.9.5, spec-facts §9): the REQ built from the
// connect parameters (RoCE GIDs, permissive LIDs, an rdma_cm header for Annex A11 service IDs),
// the QP's RTR and RTS transitions from the REP, and the RTU.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "dissector/mad/rdma_cm.h"
#include "suite/reference_nic/cm_agent.h"
#include "suite/reference_nic/nic.h"

namespace roceconf::target {

namespace {

// cma.c's address encoding: IPv4 in the last 4 bytes with zeros before, IPv6 as is.
std::array<std::uint8_t, 16> rdma_cm_address(const Gid& gid) {
  const auto v4 = gid_ipv4(gid);
  if (!v4) return gid;
  return rdma_cm_ipv4((std::uint32_t{(*v4)[0]} << 24) | (std::uint32_t{(*v4)[1]} << 16) |
                      (std::uint32_t{(*v4)[2]} << 8) | (*v4)[3]);
}

}  // namespace

std::expected<std::uint32_t, std::string> CmAgent::connect(const ConnectParams& params,
                                                           ConnectCallbacks callbacks) {
  Device& dev = nic_.device();
  const Port& port = dev.port();
  const QpLimits& limits = dev.attr().qp;
  const Qp* qp = dev.qp(params.qp_num);
  if (!qp) return std::unexpected(fmt::format("connect: no QP {:#x}", params.qp_num));
  const QpType type = qp->qp_type();
  if (type != QpType::kRc && type != QpType::kUc) {
    return std::unexpected(fmt::format("connect: QP {:#x} is {}; the CM connects RC and UC QPs",
                                       params.qp_num, qp_type_name(type)));
  }
  if (qp->state() != QpState::kReset && qp->state() != QpState::kInit) {
    return std::unexpected(fmt::format("connect: QP {:#x} is in {}, not RESET or INIT",
                                       params.qp_num, qp_state_name(qp->state())));
  }
  const bool rdma_cm = is_rdma_cm_service_id(params.service_id);
  const std::size_t room = rdma_cm ? kRdmaCmConsumerDataSize : kReqPrivateDataSize;
  if (params.private_data.size() > room) {
    return std::unexpected(fmt::format("connect: {} bytes of private data; a REQ{} holds {}",
                                       params.private_data.size(),
                                       rdma_cm ? " after the rdma_cm header" : "", room));
  }
  if (!path_mtu_valid(static_cast<std::uint8_t>(params.path_mtu))) {
    return std::unexpected(fmt::format("connect: path MTU {} is not a path MTU",
                                       static_cast<unsigned>(params.path_mtu)));
  }
  const auto pkey_index = port.pkey_table.find(params.pkey);
  if (!pkey_index) {
    return std::unexpected(
        fmt::format("connect: P_Key {:#06x} is not in the P_Key table", params.pkey));
  }
  const bool rc = type == QpType::kRc;
  if (qp->state() == QpState::kReset) {
    QpAttr init;
    init.qp_state = QpState::kInit;
    init.pkey_index = static_cast<std::uint16_t>(*pkey_index);
    init.port_num = port.attr.port_num;
    init.qp_access_flags = rc ? access::kRemote : access::kRemoteWrite;
    const auto r = nic_.modify_qp(
        params.qp_num, init,
        qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kAccessFlags);
    if (!r) return std::unexpected("connect: " + r.error().to_string());
  }

  const std::uint64_t now = nic_.now();
  CmConnection& c = add_connection(true);
  c.state = CmState::kReqSent;
  c.service_id = params.service_id;
  c.qp_num = params.qp_num;
  c.qp_type = type;
  c.local_psn = params.starting_psn & 0xFFFFFF;
  c.tid = new_tid();
  c.cm_av = params.peer;
  c.cm_av.udp_sport = 0;  // QP1's own flow, not the data QP's
  c.cm_av.flow_label = 0;
  c.pkey = params.pkey;
  c.max_cm_retries = std::min<std::uint8_t>(config_.max_cm_retries, 15);
  c.retries_left = c.max_cm_retries;
  // Linux cm.c: twice the packet lifetime plus the time the peer says it needs to answer.
  c.timeout_ns =
      2 * cm_timeout_ns(config_.packet_lifetime) + cm_timeout_ns(config_.cm_response_timeout);
  const std::uint8_t responder_resources =
      rc ? std::min(params.responder_resources, limits.max_qp_rd_atom) : 0;
  const std::uint8_t initiator_depth =
      rc ? std::min(params.initiator_depth, limits.max_qp_init_rd_atom) : 0;

  // What RTR and RTS take from us; the REP brings the rest.
  QpAttr rtr;
  rtr.qp_state = QpState::kRtr;
  rtr.ah_attr = params.peer;
  rtr.path_mtu = params.path_mtu;
  rtr.min_rnr_timer = config_.min_rnr_timer;
  rtr.rq_psn = c.local_psn;  // announced in the REQ: the passive side sends from it
  c.rtr = rtr;
  c.rtr_mask = qp_attr::kState | qp_attr::kAv | qp_attr::kPathMtu | qp_attr::kDestQpn |
               qp_attr::kRqPsn | (rc ? qp_attr::kMaxDestRdAtomic | qp_attr::kMinRnrTimer : 0);
  c.rts.qp_state = QpState::kRts;
  c.rts.retry_cnt = params.retry_count;
  c.rts_mask =
      qp_attr::kState | qp_attr::kSqPsn |
      (rc ? qp_attr::kTimeout | qp_attr::kRetryCnt | qp_attr::kRnrRetry | qp_attr::kMaxQpRdAtomic
          : 0);
  by_qp_.emplace(params.qp_num, c.local_comm_id);
  connect_callbacks_[c.local_comm_id] = std::move(callbacks);

  CmReq req;
  req.local_comm_id = c.local_comm_id;
  req.service_id = params.service_id;
  req.local_ca_guid = dev.attr().node_guid;
  req.local_qpn = params.qp_num;
  req.responder_resources = responder_resources;
  req.initiator_depth = initiator_depth;
  req.remote_cm_response_timeout = config_.cm_response_timeout;
  req.transport_type = rc ? cm_transport::kRc : cm_transport::kUc;
  req.starting_psn = c.local_psn;
  req.local_cm_response_timeout = config_.cm_response_timeout;
  req.retry_count = params.retry_count;
  req.pkey = params.pkey;
  req.path_mtu = static_cast<std::uint8_t>(params.path_mtu);
  req.rnr_retry_count = params.rnr_retry_count;
  req.max_cm_retries = c.max_cm_retries;
  // RoCE paths (Linux cm_format_req): GIDs are the IP addresses, LIDs permissive; the ACK
  // timeout is the packet lifetime plus one.
  req.primary = kRocePrimaryPath;
  req.primary.local_gid = source_gid(port, params.peer);
  req.primary.remote_gid = params.peer.dgid;
  req.primary.flow_label = params.peer.flow_label;
  req.primary.traffic_class = params.peer.traffic_class;
  req.primary.hop_limit = params.peer.hop_limit;
  req.primary.sl = params.peer.sl;
  req.primary.local_ack_timeout =
      static_cast<std::uint8_t>(std::min(config_.packet_lifetime + 1, 31));
  std::array<std::uint8_t, kReqPrivateDataSize> private_data{};
  if (rdma_cm) {
    // Annex A11: the rdma_cm header (addresses and our port) comes first.
    RdmaCmHeader h;
    h.ip_version = gid_is_ipv4_mapped(params.peer.dgid) ? 4 : 6;
    h.src_port = static_cast<std::uint16_t>(0xC000 | (random() & 0x3FFF));
    h.src_ip = rdma_cm_address(req.primary.local_gid);
    h.dst_ip = rdma_cm_address(params.peer.dgid);
    build_rdma_cm_private_data(h, params.private_data, private_data);
  } else {
    std::copy(params.private_data.begin(), params.private_data.end(), private_data.begin());
  }
  req.private_data = private_data;
  send_stored(c, c.tid, req);
  set_deadline(c, now + c.timeout_ns);
  return c.local_comm_id;
}

void CmAgent::on_rep(const CmRep& rep, std::uint64_t now) {
  CmConnection* c = find(rep.remote_comm_id);
  if (!c && nic_.quirks().has(Quirk::kForgedRepAccepted)) {
    // The defect: any connection of ours still waiting for a REP takes it.
    for (auto& [id, other] : connections_)
      if (other.active && awaiting_rep(other.state)) c = &other;
  }
  if (!c || !c->active) return;
  if (!awaiting_rep(c->state)) {
    counters_.rep_duplicates++;
    // IBA 12.9 state machine: the REP again after our RTU means the RTU was lost: send it again.
    if (c->state == CmState::kEstablished && c->remote_comm_id == rep.local_comm_id &&
        c->remote_ca_guid == rep.local_ca_guid) {
      resend(*c);
    }
    return;
  }
  c->remote_comm_id = rep.local_comm_id;
  c->remote_ca_guid = rep.local_ca_guid;
  c->remote_qpn = rep.local_qpn;
  if (!index_remote(*c)) {
    c->remote_comm_id = 0;  // the peer's ID still names a connection in TIMEWAIT here
    return;
  }
  const QpLimits& limits = nic_.device().attr().qp;
  c->rtr->dest_qp_num = rep.local_qpn;
  c->rts.sq_psn = rep.starting_psn & 0xFFFFFF;  // the passive side receives from it
  // Linux cm_rep_handler swaps the REP's resources as the passive side swapped the REQ's.
  c->rtr->max_dest_rd_atomic = std::min(rep.initiator_depth, limits.max_qp_rd_atom);
  c->rts.max_rd_atomic = std::min(rep.responder_resources, limits.max_qp_init_rd_atom);
  c->rts.timeout = cm_ack_timeout(rep.target_ack_delay, config_.packet_lifetime);
  c->rts.rnr_retry = rep.rnr_retry_count;
  if (!establish(*c)) {
    // rdma_cm rejects a REP it cannot take as the consumer (cma_rep_recv).
    CmRej rej;
    rej.local_comm_id = c->local_comm_id;
    rej.remote_comm_id = c->remote_comm_id;
    rej.message_rejected = cm_msg_kind::kRep;
    rej.reason = rej_reason::kConsumer;
    counters_.rej_sent++;
    send_stored(*c, c->tid, rej);
    finish(*c, Ending::kRejected, rej.reason, now);
    return;
  }
  CmRtu rtu;
  rtu.local_comm_id = c->local_comm_id;
  rtu.remote_comm_id = c->remote_comm_id;
  send_stored(*c, c->tid, rtu);
  const auto it = connect_callbacks_.find(c->local_comm_id);
  if (it == connect_callbacks_.end()) return;
  const ConnectCallbacks cb = it->second;
  if (cb.established) cb.established(c->qp_num, rep);
}

}  // namespace roceconf::target
