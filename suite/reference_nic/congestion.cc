#include "suite/reference_nic/congestion.h"

#include <algorithm>
#include <vector>

#include "dissector/address_text.h"
#include "dissector/analysis/psn.h"
#include "suite/reference_nic/nic.h"
#include "suite/reference_nic/requester.h"
#include "suite/reference_nic/responder.h"

namespace roceconf::target {

namespace {

constexpr std::uint8_t kEcnCe = 3;
// Ethernet, IPv4, UDP, BTH and ICRC around a request's payload: a full-PMTU packet's slot.
constexpr std::uint64_t kFrameOverhead = 14 + 20 + 8 + 12 + 4;

std::uint8_t ecn_of(const Packet& p) {
  if (p.ipv4) return p.ipv4->ecn;
  if (p.ipv6) return p.ipv6->traffic_class & 3;
  return 0;
}

// Whether `p` comes from the peer the QP's address vector names.
bool from_peer(const Qp& qp, const Packet& p) {
  const Gid& peer = qp.attr().ah_attr.dgid;
  const auto peer_v4 = gid_ipv4(peer);
  return p.ipv4 ? (peer_v4 && *peer_v4 == p.ipv4->src)
                : (p.ipv6 && !peer_v4 && peer == p.ipv6->src);
}

}  // namespace

Congestion::Congestion(Nic& nic, CongestionConfig config) : nic_(nic), config_(config) {}

// ---- notification point -----------------------------------------------------------------------

std::uint64_t Congestion::pacing_key(const Qp& qp, const Packet&) const {
  // cnp-paced-per-port: one CNP per interval for the whole port, so a second congested QP
  // gets none (Lumina's finding on several NICs).
  if (nic_.quirks().has(Quirk::kCnpPacedPerPort)) return 0;
  return std::uint64_t{1} << 32 | qp.qp_num();
}

void Congestion::on_request(Qp& qp, const Packet& packet, std::uint64_t now_ns) {
  if (!config_.enabled || ecn_of(packet) != kEcnCe) return;  // Not-ECT, ECT(0), ECT(1)
  if (nic_.quirks().has(Quirk::kCnpMissing)) return;
  const QpType type = qp.qp_type();
  if (type != QpType::kRc && type != QpType::kUc) return;
  if (!nic_.quirks().has(Quirk::kCnpUnpaced) && config_.cnp_interval_ns > 0) {
    const std::uint64_t key = pacing_key(qp, packet);
    const auto it = last_cnp_sent_.find(key);
    if (it != last_cnp_sent_.end() && now_ns - it->second < config_.cnp_interval_ns) return;
    last_cnp_sent_[key] = now_ns;
  }
  // To the requester's QP, the one the connection names: the sender of the marked packet.
  const std::uint32_t dest =
      nic_.quirks().has(Quirk::kCnpWrongQpn) ? qp.qp_num() : qp.attr().dest_qp_num;
  // Along the QP's path, as its responses go (RC and UC take requests from that peer only).
  Packet cnp =
      nic_.wire().packet_to(qp.attr().ah_attr, qp.qp_num(), dest, qp.pkey().value_or(kDefaultPkey));
  cnp.bth->opcode = opcode::kCnp;
  cnp.bth->becn = true;
  cnp.bth->psn = 0;
  if (nic_.quirks().has(Quirk::kCnpConsumesPsn)) {
    // The defect: the CNP goes out as if it were a response, taking the responder's next PSN.
    if (ResponderState* st = nic_.responder().mutable_state(qp.qp_num())) {
      cnp.bth->psn = st->epsn;
      st->epsn = psn::add(st->epsn, 1);
    }
  }
  nic_.wire().send(cnp);
  ++cnps_sent_;
}

// ---- reaction point ---------------------------------------------------------------------------

std::uint32_t Congestion::cuts_at(const Limiter& l, std::uint64_t now_ns) const {
  if (l.cuts == 0 || config_.recovery_period_ns == 0) return 0;
  const std::uint64_t quiet = now_ns > l.last_cnp ? now_ns - l.last_cnp : 0;
  const std::uint64_t steps = quiet / config_.recovery_period_ns;
  return steps >= l.cuts ? 0 : l.cuts - static_cast<std::uint32_t>(steps);
}

void Congestion::cut(Limiter& l, std::uint64_t now_ns) {
  l.cuts = std::min(cuts_at(l, now_ns) + 1, config_.max_cuts);
  l.last_cnp = now_ns;
}

void Congestion::on_cnp(const Packet& packet, std::uint64_t now_ns) {
  if (!config_.enabled || nic_.quirks().has(Quirk::kCnpIgnored) || config_.line_rate_mbps == 0)
    return;
  if (nic_.quirks().has(Quirk::kCnpSlowsAll)) {
    // The defect: the rate of every sending QP is cut, whatever QP the CNP names.
    for (const std::uint32_t qpn : nic_.device().qp_nums()) {
      const Qp* qp = nic_.device().qp(qpn);
      if (qp && qp->qp_type() == QpType::kRc) cut(limiters_[qpn], now_ns);
    }
    ++cnps_handled_;
    return;
  }
  // Only a CNP for one of our RC QPs that sends to where the CNP came from slows anything.
  const Qp* qp = nic_.device().qp(packet.bth->dqpn);
  if (!qp || qp->qp_type() != QpType::kRc || !from_peer(*qp, packet)) return;
  cut(limiters_[qp->qp_num()], now_ns);
  ++cnps_handled_;
}

bool Congestion::admit(const Qp& qp, std::uint64_t now_ns) {
  if (!config_.enabled || config_.line_rate_mbps == 0) return true;
  Limiter& l = limiters_[qp.qp_num()];
  // One full-PMTU frame's time on the wire at the line rate, and at the QP's rate.
  const std::uint64_t bits = (qp.path_mtu_bytes() + kFrameOverhead) * 8;
  const std::uint64_t line_slot = bits * 1000 / config_.line_rate_mbps;
  // A packet may go while the QP's schedule runs at most a burst ahead of now.
  const std::uint64_t burst = line_slot * (std::max<std::uint32_t>(config_.burst_packets, 1) - 1);
  if (l.next_send > now_ns + burst) {
    l.wake = l.next_send - burst;
    return false;
  }
  l.next_send = std::max(l.next_send, now_ns) + (line_slot << cuts_at(l, now_ns));
  l.wake.reset();
  return true;
}

void Congestion::tick(std::uint64_t now_ns) {
  std::vector<std::uint32_t> due;
  for (auto& [qpn, l] : limiters_) {
    if (l.wake && *l.wake <= now_ns) {
      l.wake.reset();
      due.push_back(qpn);
    }
  }
  for (const std::uint32_t qpn : due)
    if (Qp* qp = nic_.device().qp(qpn)) nic_.requester().kick(*qp, now_ns);
}

std::optional<std::uint64_t> Congestion::next_deadline() const {
  std::optional<std::uint64_t> out;
  for (const auto& [qpn, l] : limiters_)
    if (l.wake && (!out || *l.wake < *out)) out = l.wake;
  return out;
}

void Congestion::forget(std::uint32_t qp_num) {
  limiters_.erase(qp_num);
  last_cnp_sent_.erase(std::uint64_t{1} << 32 | qp_num);
}

std::uint32_t Congestion::rate_mbps(std::uint32_t qp_num, std::uint64_t now_ns) const {
  const auto it = limiters_.find(qp_num);
  if (it == limiters_.end()) return config_.line_rate_mbps;
  return config_.line_rate_mbps >> cuts_at(it->second, now_ns);
}

}  // namespace roceconf::target
