#include "suite/engine/receive_demux.h"

#include <fmt/format.h>

#include "dissector/mad/cm.h"
#include "dissector/summary.h"
#include "suite/engine/matcher.h"

namespace roceconf::engine {

ReceiveDemux::ReceiveDemux(Port& port, EvidenceRecorder& evidence,
                           const ConnectionTable& connections, const PassiveTable& passive)
    : port_(port), evidence_(evidence), connections_(connections), passive_(passive) {}

Connection* ReceiveDemux::owner_of(const Packet& p) const {
  if (!p.bth) return nullptr;
  if (p.mad && p.mad->cm) {
    std::optional<std::uint32_t> remote, local;
    std::visit(
        [&](const auto& m) {
          if constexpr (requires { m.remote_comm_id; }) remote = m.remote_comm_id;
          if constexpr (requires { m.local_comm_id; }) local = m.local_comm_id;
        },
        *p.mad->cm);
    for (const auto& [name, c] : connections_) {
      if (remote && *remote == c->local_comm_id && *remote != 0) return c.get();
      if (local && c->remote_comm_id != 0 && *local == c->remote_comm_id) return c.get();
    }
    // The target's first REQ for a connection the tester accepts: by the comm ID cm_connect
    // answered, else by the service ID asked for (no comm ID of the target is known yet).
    if (const auto* req = std::get_if<CmReq>(&*p.mad->cm)) {
      for (const auto& [name, info] : passive_)
        if (info.target_comm_id && *info.target_comm_id == req->local_comm_id)
          return connections_.at(name).get();
      for (const auto& [name, info] : passive_)
        if (!info.req_seen && info.service_id == req->service_id)
          return connections_.at(name).get();
    }
    for (const auto& [name, c] : connections_)
      if (p.mad->header.tid == c->req_tid) return c.get();
    return nullptr;
  }
  for (const auto& [name, c] : connections_)
    if (p.bth->dqpn == c->local_qpn) return c.get();
  return nullptr;
}

namespace {

bool in_stream(const Packet& p, Stream stream) {
  if (stream == Stream::kAll) return true;
  const bool cnp = p.bth && p.bth->opcode == opcode::kCnp;
  return cnp == (stream == Stream::kCnps);
}

}  // namespace

std::optional<Received> ReceiveDemux::next_for(Connection* c, TimeNs deadline, bool kept,
                                               Stream stream) {
  for (auto it = kept_.begin(); kept && it != kept_.end(); ++it) {
    if ((c == nullptr || it->owner == c) && in_stream(it->frame.packet, stream)) {
      Received r = std::move(it->frame);
      kept_.erase(it);
      return r;
    }
  }
  for (;;) {
    auto got = port_.receive(deadline);
    if (!got) evidence_.error("receiving failed: " + got.error().message);
    if (!*got) return std::nullopt;
    Received r;
    r.bytes = std::move((*got)->data);
    r.time = (*got)->time_ns;
    r.packet = decode(r.bytes);
    if (!r.packet.bth) continue;  // not RoCE: kept out of the ladder
    Connection* owner = owner_of(r.packet);
    std::vector<std::string> framing;
    // A connection's frames are graded against the GIDs it runs over (an IPv4 answer on an IPv6
    // connection breaks CA17-11/12); others against the family they arrive in.
    const bool over_ipv6 = owner ? owner->ipv6 : r.packet.ipv6.has_value();
    const auto& expect = over_ipv6 ? framing6_ : framing_;
    if (expect) {
      SentFramingExpect e = *expect;
      if (owner) {
        e.hop_limit = owner->av_hop_limit;
        e.traffic_class = owner->av_traffic_class;
      }
      for (const auto& f : check_sent_framing(r.packet, e)) framing.push_back(f.text());
    }
    evidence_.record_frame(report::EventKind::kReceived,
                           fmt::format("{}{}  |  {}", owner ? owner->name + " " : "",
                                       describe_received(r.packet, owner), summarize(r.packet)),
                           r.packet, r.bytes, r.time, std::move(framing));
    if ((c == nullptr || owner == c) && in_stream(r.packet, stream)) return r;
    if (owner) kept_.push_back({std::move(r), owner});
  }
}

void ReceiveDemux::keep_until(TimeNs deadline) {
  // Only new frames: what is kept already stays where it is, in order.
  while (auto r = next_for(nullptr, deadline, false)) {
    Connection* owner = owner_of(r->packet);
    kept_.push_back({std::move(*r), owner});
  }
}

}  // namespace roceconf::engine
