#include "dissector/analysis/cm_tracker.h"

#include <variant>

#include "dissector/names.h"

namespace roceconf::analysis {

std::string_view cm_state_name(CmState state) {
  switch (state) {
    case CmState::kReqSent:
      return "req-sent";
    case CmState::kMraReceived:
      return "mra-received";
    case CmState::kRepReceived:
      return "rep-received";
    case CmState::kEstablished:
      return "established";
    case CmState::kRejected:
      return "rejected";
    case CmState::kTimewait:
      return "timewait";
    case CmState::kClosed:
      return "closed";
  }
  return "unknown";
}

namespace {

bool setting_up(CmState s) {
  return s == CmState::kReqSent || s == CmState::kMraReceived || s == CmState::kRepReceived;
}

bool finished(CmState s) {
  return s == CmState::kRejected || s == CmState::kClosed;
}

}  // namespace

CmTracker::CmTracker(std::size_t max_connections)
    : max_connections_(max_connections < 16 ? 16 : max_connections) {}

const CmConnection* CmTracker::connection(std::uint32_t id) const {
  const auto it = connections_.find(id);
  return it == connections_.end() ? nullptr : &it->second;
}

const CmConnection* CmTracker::find(const NetAddress& src, const NetAddress& dst,
                                    std::uint32_t dqpn) const {
  const auto it = by_qpn_.find(AddressKey{dst, src, dqpn});
  return it == by_qpn_.end() ? nullptr : connection(it->second);
}

bool CmTracker::note_data(std::uint32_t id, std::uint64_t frame, std::int64_t time_ns) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return false;
  CmConnection& c = it->second;
  c.last_frame = frame;
  if (c.state != CmState::kRepReceived) return false;
  // The passive side enters Established on the first packet of the new connection when the
  // RTU is lost or late (IBA ch. 12, "communication established").
  c.state = CmState::kEstablished;
  c.established_by_data = true;
  c.established_frame = frame;
  c.established_time_ns = time_ns;
  return true;
}

CmConnection* CmTracker::match(const NetAddress& src, const NetAddress& dst, std::uint32_t local,
                               std::uint32_t remote, bool* from_active) {
  // Sent by the active side: its own ID is the local one.
  if (const auto it = by_comm_.find(AddressKey{src, dst, local}); it != by_comm_.end()) {
    CmConnection& c = connections_.at(it->second);
    if (c.passive_comm_id == 0 || remote == 0 || c.passive_comm_id == remote) {
      *from_active = true;
      return &c;
    }
  }
  // Sent by the passive side: the active side's ID is the remote one. A REJ issued before the
  // passive side committed an ID carries local 0.
  if (const auto it = by_comm_.find(AddressKey{dst, src, remote}); it != by_comm_.end()) {
    CmConnection& c = connections_.at(it->second);
    if (c.passive_comm_id == 0 || local == 0 || c.passive_comm_id == local) {
      *from_active = false;
      return &c;
    }
  }
  return nullptr;
}

CmConnection& CmTracker::create(const NetAddress& active, const NetAddress& passive,
                                std::uint32_t active_comm_id) {
  const std::uint32_t id = next_id_++;
  CmConnection& c = connections_[id];
  c.id = id;
  c.active = active;
  c.passive = passive;
  c.active_comm_id = active_comm_id;
  by_comm_[AddressKey{active, passive, active_comm_id}] = id;
  if (connections_.size() > max_connections_) evict();
  return connections_.at(id);
}

void CmTracker::index_qpn(const NetAddress& at, const NetAddress& peer, std::uint32_t qpn,
                          std::uint32_t id) {
  by_qpn_[AddressKey{at, peer, qpn}] = id;
}

std::map<std::uint32_t, CmConnection>::iterator CmTracker::erase(
    std::map<std::uint32_t, CmConnection>::iterator it) {
  const CmConnection& c = it->second;
  auto drop = [&](auto& index, const AddressKey& key) {
    const auto found = index.find(key);
    if (found != index.end() && found->second == c.id) index.erase(found);
  };
  drop(by_comm_, AddressKey{c.active, c.passive, c.active_comm_id});
  drop(by_qpn_, AddressKey{c.active, c.passive, c.active_qpn});
  drop(by_qpn_, AddressKey{c.passive, c.active, c.passive_qpn});
  return connections_.erase(it);
}

void CmTracker::evict() {
  // Forget the oldest finished connections first, then the oldest of any state, down to 7/8.
  const std::size_t target = max_connections_ - max_connections_ / 8;
  for (auto it = connections_.begin(); it != connections_.end() && connections_.size() > target;)
    it = finished(it->second.state) ? erase(it) : std::next(it);
  // The newest (just created) connection is last and never reached here.
  while (connections_.size() > target) erase(connections_.begin());
}

void CmTracker::retire(const CmConnection& c) {
  if (!finished(c.state) || !finished_queued_.insert(c.id).second) return;
  finished_order_.push_back(c.id);
  while (finished_order_.size() > kFinishedKept) {
    const std::uint32_t id = finished_order_.front();
    finished_order_.pop_front();
    finished_queued_.erase(id);
    if (const auto it = connections_.find(id);
        it != connections_.end() && finished(it->second.state))
      erase(it);
  }
}

CmFrameInfo CmTracker::process(std::uint64_t frame, std::int64_t time_ns, const Packet& p,
                               Flags& flags) {
  CmFrameInfo info;
  if (!p.mad || !p.mad->cm) return info;
  const Mad& mad = *p.mad;
  const CmMessage& msg = *mad.cm;
  info.attr_id = cm_attr_id(msg);
  info.message = cm_message_name(msg);
  info.tid = mad.header.tid;
  const NetAddress src = NetAddress::source(p);
  const NetAddress dst = NetAddress::destination(p);
  const std::uint64_t tid = mad.header.tid;

  CmConnection* c = nullptr;
  bool from_active = false;

  auto unknown = [&](std::uint32_t local, std::uint32_t remote) {
    info.unknown_comm_id = true;
    flags.push_back(
        {.code = FlagCode::kCmUnknownCommId, .a = local, .b = remote, .c = info.attr_id});
  };
  auto unexpected = [&] {
    flags.push_back({.code = FlagCode::kCmUnexpected,
                     .a = static_cast<std::uint64_t>(c->state),
                     .c = info.attr_id});
  };
  auto again = [&](std::uint64_t first) {
    info.retransmission = true;
    flags.push_back({.code = FlagCode::kCmRetransmission, .c = info.attr_id, .frame = first});
  };
  // Replies echo the TID of the request they answer (REQ for MRA/REJ/REP, DREQ for DREP).
  auto check_tid = [&](std::uint64_t expected, std::uint16_t request_attr,
                       std::uint64_t request_frame) {
    if (request_frame == 0 || tid == expected) return;
    info.tid_mismatch = true;
    flags.push_back({.code = FlagCode::kCmTidMismatch,
                     .a = tid,
                     .b = expected,
                     .c = request_attr,
                     .frame = request_frame});
  };

  if (const auto* req = std::get_if<CmReq>(&msg)) {
    from_active = true;
    if (const auto it = by_comm_.find(AddressKey{src, dst, req->local_comm_id});
        it != by_comm_.end() && !finished(connections_.at(it->second).state) &&
        connections_.at(it->second).state != CmState::kTimewait) {
      c = &connections_.at(it->second);
      ++c->req_count;
      info.duplicate = true;
      flags.push_back(
          {.code = FlagCode::kCmDuplicateReq, .a = req->local_comm_id, .frame = c->req_frame});
    } else {
      c = &create(src, dst, req->local_comm_id);
      c->service_id = req->service_id;
      c->transport_type = req->transport_type;
      c->active_qpn = req->local_qpn;
      c->req_starting_psn = req->starting_psn;
      c->path_mtu_enum = req->path_mtu;
      c->pmtu = mtu_bytes(req->path_mtu);
      c->pkey = req->pkey;
      c->req_responder_resources = req->responder_resources;
      c->req_initiator_depth = req->initiator_depth;
      c->req_tid = tid;
      c->req_frame = frame;
      c->req_time_ns = time_ns;
      c->req_count = 1;
      c->state = CmState::kReqSent;
      index_qpn(src, dst, req->local_qpn, c->id);
    }
  } else if (const auto* mra = std::get_if<CmMra>(&msg)) {
    c = match(src, dst, mra->local_comm_id, mra->remote_comm_id, &from_active);
    if (c == nullptr) {
      unknown(mra->local_comm_id, mra->remote_comm_id);
    } else {
      if (!from_active && c->passive_comm_id == 0) c->passive_comm_id = mra->local_comm_id;
      if (c->mra_frame != 0)
        again(c->mra_frame);
      else
        c->mra_frame = frame;
      if (!c->partial) check_tid(c->req_tid, cm_attr::kReq, c->req_frame);
      info.request_frame = c->req_frame;
      if (mra->message_mraed == cm_msg_kind::kReq && !from_active &&
          (c->state == CmState::kReqSent || c->state == CmState::kMraReceived)) {
        c->state = CmState::kMraReceived;
      } else if (mra->message_mraed == cm_msg_kind::kRep && from_active &&
                 c->state == CmState::kRepReceived) {
        // The active side needs time before its RTU: state unchanged.
      } else if (!info.retransmission) {
        unexpected();
      }
    }
  } else if (const auto* rej = std::get_if<CmRej>(&msg)) {
    info.reject_reason = rej->reason;
    flags.push_back({.code = FlagCode::kCmRejected, .a = rej->reason, .c = rej->message_rejected});
    c = match(src, dst, rej->local_comm_id, rej->remote_comm_id, &from_active);
    if (c == nullptr) {
      unknown(rej->local_comm_id, rej->remote_comm_id);
    } else {
      if (!from_active && c->passive_comm_id == 0) c->passive_comm_id = rej->local_comm_id;
      c->reject_reason = rej->reason;
      if (rej->message_rejected != cm_msg_kind::kOther && !c->partial)
        check_tid(c->req_tid, cm_attr::kReq, c->req_frame);
      info.request_frame = c->req_frame;
      if (c->rej_frame != 0 && c->state == CmState::kRejected) {
        again(c->rej_frame);
      } else if (setting_up(c->state)) {
        c->rej_frame = frame;
        c->state = CmState::kRejected;
      } else {
        unexpected();
      }
    }
  } else if (const auto* rep = std::get_if<CmRep>(&msg)) {
    c = match(src, dst, rep->local_comm_id, rep->remote_comm_id, &from_active);
    if (c == nullptr) {
      unknown(rep->local_comm_id, rep->remote_comm_id);
      // Seen mid-way: keep what the REP tells so that later messages and data find it.
      c = &create(dst, src, rep->remote_comm_id);
      c->partial = true;
      c->state = CmState::kReqSent;
    }
    if (c->has_rep) {
      ++c->rep_count;
      again(c->rep_frame);
    } else {
      if (from_active) unexpected();
      c->has_rep = true;
      c->passive_comm_id = rep->local_comm_id;
      c->passive_qpn = rep->local_qpn;
      c->rep_starting_psn = rep->starting_psn;
      c->rep_responder_resources = rep->responder_resources;
      c->rep_initiator_depth = rep->initiator_depth;
      c->rep_tid = tid;
      c->rep_frame = frame;
      c->rep_count = 1;
      index_qpn(src, dst, rep->local_qpn, c->id);
      if (c->state == CmState::kReqSent || c->state == CmState::kMraReceived)
        c->state = CmState::kRepReceived;
      else
        unexpected();
    }
    if (!c->partial) check_tid(c->req_tid, cm_attr::kReq, c->req_frame);
    info.request_frame = c->req_frame;
  } else if (const auto* rtu = std::get_if<CmRtu>(&msg)) {
    c = match(src, dst, rtu->local_comm_id, rtu->remote_comm_id, &from_active);
    if (c == nullptr) {
      unknown(rtu->local_comm_id, rtu->remote_comm_id);
    } else if (c->rtu_frame != 0) {
      again(c->rtu_frame);
    } else {
      c->rtu_frame = frame;
      info.request_frame = c->rep_frame;
      if (c->state == CmState::kRepReceived) {
        c->state = CmState::kEstablished;
        c->established_frame = frame;
        c->established_time_ns = time_ns;
      } else if (c->state != CmState::kEstablished || !from_active) {
        unexpected();
      }
    }
  } else if (const auto* dreq = std::get_if<CmDreq>(&msg)) {
    c = match(src, dst, dreq->local_comm_id, dreq->remote_comm_id, &from_active);
    if (c == nullptr) {
      unknown(dreq->local_comm_id, dreq->remote_comm_id);
      // Seen mid-way: remember it so that the DREP pairs with it.
      c = &create(src, dst, dreq->local_comm_id);
      c->partial = true;
      c->passive_comm_id = dreq->remote_comm_id;
      c->state = CmState::kEstablished;
      from_active = true;
    }
    if (c->dreq_frame != 0 && (c->state == CmState::kTimewait || c->state == CmState::kClosed)) {
      again(c->dreq_frame);
    } else {
      c->dreq_frame = frame;
      c->dreq_tid = tid;
      c->dreq_from_active = from_active;
      if (c->state != CmState::kEstablished && c->state != CmState::kRepReceived) unexpected();
      if (!finished(c->state)) c->state = CmState::kTimewait;
    }
  } else if (const auto* drep = std::get_if<CmDrep>(&msg)) {
    c = match(src, dst, drep->local_comm_id, drep->remote_comm_id, &from_active);
    if (c == nullptr) {
      unknown(drep->local_comm_id, drep->remote_comm_id);
    } else {
      info.request_frame = c->dreq_frame;
      if (c->drep_frame != 0) {
        again(c->drep_frame);
      } else {
        c->drep_frame = frame;
        if (c->dreq_frame == 0)
          unexpected();
        else
          check_tid(c->dreq_tid, cm_attr::kDreq, c->dreq_frame);
      }
      c->state = CmState::kClosed;
    }
  } else if (const auto* lap = std::get_if<CmLap>(&msg)) {
    c = match(src, dst, lap->local_comm_id, lap->remote_comm_id, &from_active);
    if (c == nullptr) unknown(lap->local_comm_id, lap->remote_comm_id);
  } else if (const auto* apr = std::get_if<CmApr>(&msg)) {
    c = match(src, dst, apr->local_comm_id, apr->remote_comm_id, &from_active);
    if (c == nullptr) unknown(apr->local_comm_id, apr->remote_comm_id);
  }
  // SIDR_REQ / SIDR_REP / ClassPortInfo belong to no connection.

  if (c != nullptr) {
    c->last_frame = frame;
    info.connection = c->id;
    info.state = c->state;
    info.from_active = from_active;
    retire(*c);  // last: may forget an older connection, never this one
  }
  return info;
}

}  // namespace roceconf::analysis
