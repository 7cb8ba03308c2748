#include "dissector/analysis/connection_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "dissector/analysis/address.h"
#include "dissector/names.h"
#include "dissector/opcode.h"

namespace roceconf::analysis {

namespace {

constexpr std::uint64_t kSubBuckets = 16;

// Values below 16 ns have a bucket each; above, bucket (e, s) holds [(16 + s) << e, (17 + s) << e).
std::size_t bucket_of(std::uint64_t v) {
  if (v < kSubBuckets) return static_cast<std::size_t>(v);
  const auto e = static_cast<std::uint64_t>(std::bit_width(v)) - 5;  // v >> e is in [16, 32)
  return static_cast<std::size_t>(kSubBuckets + e * kSubBuckets + ((v >> e) - kSubBuckets));
}

double bucket_middle(std::size_t i) {
  if (i < kSubBuckets) return static_cast<double>(i);
  const std::uint64_t e = (i - kSubBuckets) / kSubBuckets;
  const std::uint64_t s = (i - kSubBuckets) % kSubBuckets;
  return std::ldexp(static_cast<double>(kSubBuckets + s) + 0.5, static_cast<int>(e));
}

bool ends_message(const OpcodeInfo& op) {
  return op.position == Position::kLast || op.position == Position::kOnly ||
         op.kind == OpKind::kReadRequest || op.kind == OpKind::kCompareSwap ||
         op.kind == OpKind::kFetchAdd;
}

double rate(std::uint64_t bytes, std::int64_t ns) {
  return ns <= 0 ? 0.0 : static_cast<double>(bytes) * 8e9 / static_cast<double>(ns);
}

}  // namespace

void LatencyHistogram::add(std::int64_t ns) {
  if (ns < 0) return;
  const auto i = static_cast<std::uint16_t>(bucket_of(static_cast<std::uint64_t>(ns)));
  const auto it =
      std::ranges::lower_bound(buckets_, i, {}, &std::pair<std::uint16_t, std::uint32_t>::first);
  if (it != buckets_.end() && it->first == i)
    ++it->second;
  else
    buckets_.insert(it, {i, 1});
  min_ = count_ == 0 ? ns : std::min(min_, ns);
  max_ = count_ == 0 ? ns : std::max(max_, ns);
  ++count_;
}

std::int64_t LatencyHistogram::quantile(double q) const {
  if (count_ == 0) return -1;
  const double want = std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_));
  const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(want));
  if (rank >= count_) return max_;
  if (rank == 1) return min_;
  std::uint64_t seen = 0;
  for (const auto& [bucket, n] : buckets_) {
    seen += n;
    if (seen >= rank) {
      const auto v = static_cast<std::int64_t>(std::llround(bucket_middle(bucket)));
      return std::clamp(v, min_, max_);
    }
  }
  return max_;
}

std::string_view nak_code_key(std::size_t index) {
  static constexpr std::array<std::string_view, kNakCodes> kKeys = {
      "psn_seq_err", "inv_req", "rem_access", "rem_op", "inv_rd_req"};
  return index < kKeys.size() ? kKeys[index] : "reserved";
}

std::uint64_t DirectionStats::nak_total() const {
  std::uint64_t n = 0;
  for (std::uint64_t k : naks) n += k;
  return n;
}

namespace {
std::string qp_text(const std::string& address, std::optional<std::uint32_t> qpn) {
  return qpn ? fmt::format("{} QP {:#08x}", address, *qpn) : address + " QP ?";
}
}  // namespace

std::string DirectionStats::requester_text() const {
  return qp_text(requester, requester_qpn);
}
std::string DirectionStats::responder_text() const {
  return qp_text(responder, responder_qpn);
}

double DirectionStats::goodput_bps() const {
  return rate(delivered, last_ns - first_ns);
}

std::uint64_t ConnectionSummary::packets() const {
  std::uint64_t n = 0;
  for (const DirectionStats& d : directions) n += d.packets;
  return n;
}
std::uint64_t ConnectionSummary::bytes() const {
  std::uint64_t n = 0;
  for (const DirectionStats& d : directions) n += d.bytes;
  return n;
}
std::int64_t ConnectionSummary::first_ns() const {
  std::int64_t t = directions.empty() ? 0 : directions.front().first_ns;
  for (const DirectionStats& d : directions) t = std::min(t, d.first_ns);
  return t;
}
std::int64_t ConnectionSummary::last_ns() const {
  std::int64_t t = directions.empty() ? 0 : directions.front().last_ns;
  for (const DirectionStats& d : directions) t = std::max(t, d.last_ns);
  return t;
}
double ConnectionSummary::goodput_bps() const {
  std::uint64_t delivered = 0;
  for (const DirectionStats& d : directions) delivered += d.delivered;
  return rate(delivered, last_ns() - first_ns());
}
bool ConnectionSummary::gradable() const {
  return std::ranges::all_of(directions, [](const DirectionStats& d) { return d.gradable(); });
}

const DirectionStats* ConnectionStats::add(const Packet& p, std::uint32_t wire_length,
                                           std::int64_t time_ns, const RcFrameInfo& info) {
  if (info.channel == 0 || !p.bth) return nullptr;
  const OpcodeInfo& op = opcode_info(p.bth->opcode);
  const bool request = info.role == RcRole::kRequest;
  const std::uint32_t key = request ? info.channel : info.peer_channel;
  if (key == 0) {
    ++unattributed_;
    return nullptr;
  }
  const auto [it, created] = directions_.try_emplace(key);
  DirectionStats& d = it->second;
  if (created) {
    d.channel = key;
    d.first_ns = time_ns;
    if (request) {
      d.requester = NetAddress::source(p).to_string();
      d.responder = NetAddress::destination(p).to_string();
      d.responder_qpn = p.bth->dqpn;
    } else {
      d.requester = NetAddress::destination(p).to_string();
      d.responder = NetAddress::source(p).to_string();
    }
  }
  d.first_ns = std::min(d.first_ns, time_ns);
  d.last_ns = std::max(d.last_ns, time_ns);
  ++d.packets;
  d.bytes += wire_length;
  d.delivered += info.delivered;
  if (info.connection != 0) d.connection = info.connection;
  Pending& pending = pending_[key];

  if (request) {
    if (info.peer_channel != 0) d.peer_channel = info.peer_channel;
    ++d.requests;
    if (info.retransmission) {
      ++d.retransmissions;
      if (pending.rnr_ns >= 0 && info.resend_after_nak != 0) {
        d.rnr_wait_ns += time_ns - pending.rnr_ns;
        pending.rnr_ns = -1;
      }
    }
    // A message counts once, where its last PSN is first on the wire (a go-back-N resend of a
    // PSN whose first copy the capture missed included).
    if (ends_message(op) && info.retransmission_of == 0) ++d.messages;
    if (info.delivered != 0) {
      pending.delivered_psn = p.bth->psn;
      pending.delivered_bytes = info.delivered;
    }
    if (info.psn_state == PsnState::kOutOfSequence) ++d.out_of_sequence;
    if (info.psn_state == PsnState::kDuplicate) ++d.duplicates;
    return &d;
  }

  d.peer_channel = info.channel;
  d.requester_qpn = p.bth->dqpn;
  ++d.responses;
  d.not_captured += info.not_captured;
  if (info.response_time_ns >= 0) d.response_time.add(info.response_time_ns);
  if (op.kind == OpKind::kReadResponse) ++d.read_responses;
  if (op.kind == OpKind::kAtomicAck) ++d.acks;
  if (p.aeth && op.kind != OpKind::kReadResponse && op.kind != OpKind::kAtomicAck) {
    const std::uint8_t syn = p.aeth->syndrome;
    // Refused (RNR, or a NAK other than a sequence error, which names a PSN not yet accepted):
    // the request at this PSN delivered nothing after all.
    const bool refused = aeth_type(syn) == AethType::kRnrNak ||
                         (aeth_type(syn) == AethType::kNak && syn != syndrome::kNakPsnSeqError);
    if (refused && pending.delivered_bytes != 0 && pending.delivered_psn == p.bth->psn) {
      d.delivered -= std::min<std::uint64_t>(d.delivered, pending.delivered_bytes);
      pending.delivered_bytes = 0;
    }
    switch (aeth_type(syn)) {
      case AethType::kAck:
        ++d.acks;
        break;
      case AethType::kRnrNak:
        ++d.rnr_naks;
        pending.rnr_ns = time_ns;
        break;
      case AethType::kNak:
        if (const std::size_t i = syn - syndrome::kNakPsnSeqError; i < kNakCodes) ++d.naks[i];
        break;
      case AethType::kReserved:
        break;
    }
  }
  return &d;
}

namespace {

// Groups directions (by request channel) into connections: a direction and the one whose
// requests travel on its response channel. `pick` selects the directions to group.
template <typename Pick>
std::vector<ConnectionSummary> group(const std::map<std::uint32_t, DirectionStats>& directions,
                                     std::uint32_t first_number, Pick pick) {
  std::vector<ConnectionSummary> out;
  std::set<std::uint32_t> done;
  for (const auto& [channel, d] : directions) {
    if (!pick(d) || done.contains(channel)) continue;
    ConnectionSummary c;
    c.number = first_number + static_cast<std::uint32_t>(out.size());
    c.directions.push_back(d);
    done.insert(channel);
    if (const auto other = directions.find(d.peer_channel);
        d.peer_channel != 0 && other != directions.end() && !done.contains(d.peer_channel) &&
        (other->second.peer_channel == channel || other->second.peer_channel == 0)) {
      c.directions.push_back(other->second);
      done.insert(d.peer_channel);
    }
    for (DirectionStats& x : c.directions) {
      if (c.connection == 0) c.connection = x.connection;
      // A direction with no response seen yet still knows its requester's QP from the other.
      if (!x.requester_qpn && c.directions.size() == 2)
        x.requester_qpn = c.directions[&x == &c.directions[0] ? 1 : 0].responder_qpn;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::vector<ConnectionSummary> ConnectionStats::close(std::uint32_t cm) {
  if (cm == 0) return {};
  std::vector<ConnectionSummary> out =
      group(directions_, closed_ + 1, [cm](const DirectionStats& d) { return d.connection == cm; });
  for (const ConnectionSummary& c : out) {
    for (const DirectionStats& d : c.directions) {
      directions_.erase(d.channel);
      pending_.erase(d.channel);
    }
  }
  closed_ += static_cast<std::uint32_t>(out.size());
  return out;
}

std::vector<ConnectionSummary> ConnectionStats::connections() const {
  return group(directions_, closed_ + 1, [](const DirectionStats&) { return true; });
}

}  // namespace roceconf::analysis
