// Over 600 lines: the responder's PSN state machine and request/response pairing share the
// per-QP state.
#include "dissector/analysis/rc_tracker.h"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <utility>

#include "dissector/analysis/address.h"
#include "dissector/analysis/cm_tracker.h"
#include "dissector/analysis/psn.h"
#include "dissector/names.h"

namespace roceconf::analysis {

namespace {

// A READ of 2^31 bytes at PMTU 256 would take 2^23 PSNs; keep spans well inside the half of the
// PSN space that diff() can order.
constexpr std::uint32_t kMaxSpan = 1u << 20;

constexpr std::uint32_t kMtus[] = {256, 512, 1024, 2048, 4096};

bool is_data(OpKind k) {
  return k == OpKind::kSend || k == OpKind::kWrite;
}
// Requests answered by a READ response (rxe answers FLUSH and ATOMIC_WRITE that way).
bool read_like(OpKind k) {
  return k == OpKind::kReadRequest || k == OpKind::kFlush || k == OpKind::kAtomicWrite;
}
bool atomic(OpKind k) {
  return k == OpKind::kCompareSwap || k == OpKind::kFetchAdd;
}
bool message_end(Position pos) {
  return pos == Position::kLast || pos == Position::kOnly;
}

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) {
  return a == 0 ? 1 : static_cast<std::uint32_t>((std::uint64_t{a} + b - 1) / b);
}

std::uint32_t read_span(std::uint32_t dmalen, std::uint32_t pmtu) {
  return std::min(ceil_div(dmalen, pmtu), kMaxSpan);
}

// Linux rxe pkey_match(): same partition, and at least one side a full member.
bool pkey_match(std::uint16_t a, std::uint16_t b) {
  return (a & 0x7FFF) != 0 && (a & 0x7FFF) == (b & 0x7FFF) && ((a | b) & 0x8000) != 0;
}

struct Entry {
  std::uint32_t psn = 0;
  std::uint32_t span = 1;
  std::uint64_t first_frame = 0;
  std::uint64_t last_frame = 0;
  std::int64_t last_time = 0;
  std::uint32_t dmalen = 0;
  std::uint32_t read_bytes = 0;  // READ response payload received so far
  std::uint32_t read_seen = 0;   // highest response index k seen
  std::uint8_t opcode = 0;
  OpKind kind = OpKind::kOther;
  Position pos = Position::kNone;
  bool answered = false;          // acknowledged, answered or refused
  bool counted = false;           // counted as a completed message for the MSN
  bool span_provisional = false;  // READ span not yet known (path MTU unknown)
  bool read_gap = false;          // some READ response not seen
  bool dropped = false;           // last arrived out of sequence: the responder dropped it
};

struct Requests {
  bool started = false;
  bool seen = false;         // a request has arrived
  bool start_known = false;  // from CM
  std::uint32_t start_psn = 0;
  bool from_active = false;  // requests of the CM active side
  bool other_known = false;  // the other CM message's Starting PSN, to recognise a swap
  std::uint32_t other_start = 0;
  std::uint32_t epsn = 0;      // the responder's expected PSN
  std::uint32_t next = 0;      // the sender's: PSN after the highest request PSN seen
  std::uint32_t frontier = 0;  // every PSN before it is (implicitly) acknowledged
  std::deque<Entry> window;    // ordered by PSN
  bool trimmed = false;        // entries were dropped from the window's front
  // Out of sequence since the last accepted request: the first one is owed a NAK, the rest
  // are dropped silently until the request at epsn arrives (IBA 9.7.5.1.2, rxe sent_psn_nak).
  bool oos = false;
  bool oos_naked = false;  // the sequence-error NAK for this gap has been seen
  std::uint32_t oos_psn = 0;
  std::uint64_t oos_frame = 0;
  // Requests seen before this frame that the responder showed it never got (a NAK behind
  // the expected PSN): lost between the capture point and the responder.
  std::uint64_t resync_frame = 0;
  // A duplicate arrived after the last accepted request: its answer must not move the MSN.
  bool dup_pending = false;
  std::uint64_t dup_frame = 0;
  // Go-back-N after a sequence-error or RNR NAK: PSNs from nak_psn up to `next` are resends.
  bool goback = false;
  bool goback_started = false;  // a resend has been seen since the NAK
  std::uint32_t nak_psn = 0;
  std::uint64_t nak_frame = 0;
  std::uint8_t nak_syndrome = 0;
  // Counts for the channel summary.
  std::uint64_t requests = 0;
  std::uint64_t out_of_sequence = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t retransmissions = 0;
  std::uint64_t not_captured = 0;
};

struct Channel {
  std::uint32_t id = 0;
  AddressKey key;
  Service service = Service::kRc;
  std::uint32_t peer = 0;
  LinkSource link = LinkSource::kNone;
  std::uint32_t connection = 0;
  std::uint32_t pmtu = 0;
  PmtuSource pmtu_source = PmtuSource::kUnknown;
  std::optional<std::uint16_t> pkey;  // negotiated by CM
  Requests req;                       // requests arriving on this channel
  bool has_msn = false;               // MSN of responses arriving on this channel
  std::uint32_t msn = 0;
  std::uint64_t last_frame = 0;
};

struct Completion {
  std::uint32_t count = 0;      // requests newly acknowledged
  std::uint32_t completed = 0;  // messages newly completed (for the MSN)
  std::uint64_t first_frame = 0;
};

}  // namespace

struct RcTracker::Impl {
  Options options;
  std::uint32_t next_id = 1;
  std::unordered_map<std::uint32_t, Channel> channels;
  std::unordered_map<AddressKey, std::uint32_t, AddressKeyHash> by_key;
  // (src, dst, 0) -> channels from src to dst, for pairing without CM.
  std::unordered_map<AddressKey, std::vector<std::uint32_t>, AddressKeyHash> by_pair;
  // CM connection -> its channels, to free their windows when it closes.
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> by_connection;
  // Channels of closed connections, oldest first, with the connection they closed with: kept
  // for late duplicates, but only the newest kClosedKept, so that memory follows the
  // connections open at once rather than all there were.
  static constexpr std::size_t kClosedKept = 2048;
  std::deque<std::pair<std::uint32_t, std::uint32_t>> closed;

  // Per-frame context.
  std::uint64_t frame = 0;
  std::int64_t time = 0;
  Flags* flags = nullptr;
  std::vector<RcAnswer>* answers = nullptr;

  Channel& channel(const AddressKey& key, Service service);
  Channel* get(std::uint32_t id) {
    const auto it = channels.find(id);
    return it == channels.end() ? nullptr : &it->second;
  }
  void evict();
  void forget(std::uint32_t id);
  void unlink(Channel& ch);
  void reset(Channel& ch);
  void link(Channel& a, Channel& b, LinkSource source);
  void link_cm(Channel& ch, CmTracker& cm);
  void try_pair(Channel& responses, const Packet& p, const OpcodeInfo& op);
  void set_pmtu(Channel& ch, std::uint32_t pmtu, PmtuSource source);
  void check_mtu(const Channel& ch, const Packet& p, Position pos, std::uint32_t length);

  void request(Channel& ch, const Packet& p, const OpcodeInfo& op, RcFrameInfo& info);
  void accept(Requests& r, std::uint32_t epsn);
  void reconcile(Requests& r, std::uint32_t epsn, bool answered, RcFrameInfo& info);
  std::uint64_t first_after(Requests& r, std::uint32_t psn);
  void response(Channel& ch, const Packet& p, const OpcodeInfo& op, RcFrameInfo& info);
  Completion complete(Requests& r, std::uint32_t end);
  void answer(const Entry& e, FlagCode code, std::uint64_t a = 0) {
    answers->push_back(
        {e.last_frame, Flag{.code = code, .a = a, .frame = frame, .ns = time - e.last_time}});
  }

  static Entry* find(Requests& r, std::uint32_t psn);
  static Entry* find_read(Requests& r, std::uint32_t psn);
  static std::size_t upper(const Requests& r, std::uint32_t psn);
  void trim(Requests& r) const;
};

RcTracker::RcTracker() : RcTracker(Options{}) {}
RcTracker::RcTracker(Options options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  if (impl_->options.window < 16) impl_->options.window = 16;
  if (impl_->options.max_channels < 16) impl_->options.max_channels = 16;
}
RcTracker::~RcTracker() = default;
RcTracker::RcTracker(RcTracker&&) noexcept = default;
RcTracker& RcTracker::operator=(RcTracker&&) noexcept = default;

void RcTracker::release(std::uint32_t connection) {
  Impl& m = *impl_;
  const auto it = m.by_connection.find(connection);
  if (it == m.by_connection.end()) return;
  for (std::uint32_t id : it->second) {
    Channel* ch = m.get(id);
    // Late duplicates are still recognised as behind the expected PSN.
    if (ch != nullptr && ch->connection == connection) {
      std::deque<Entry>().swap(ch->req.window);
      ch->req.trimmed = true;
      m.closed.emplace_back(id, connection);
    }
  }
  while (m.closed.size() > Impl::kClosedKept) {
    const auto [id, closed_with] = m.closed.front();
    m.closed.pop_front();
    // Unless a new connection took the channel over since.
    if (const Channel* ch = m.get(id); ch != nullptr && ch->connection == closed_with) m.forget(id);
  }
  m.by_connection.erase(it);
  if (m.by_connection.size() > 2 * m.options.max_channels) {
    std::erase_if(m.by_connection, [&m](const auto& entry) {
      for (std::uint32_t id : entry.second)
        if (const Channel* ch = m.get(id); ch != nullptr && ch->connection == entry.first)
          return false;
      return true;
    });
  }
}

std::string_view psn_state_name(PsnState s) {
  switch (s) {
    case PsnState::kExpected:
      return "expected";
    case PsnState::kOutOfSequence:
      return "out-of-sequence";
    case PsnState::kDuplicate:
      return "duplicate";
    case PsnState::kUnknown:
      break;
  }
  return "unknown";
}

std::vector<RcChannelSummary> RcTracker::summaries() const {
  std::vector<RcChannelSummary> out;
  for (const auto& [id, ch] : impl_->channels) {
    if (ch.req.requests == 0) continue;
    RcChannelSummary c;
    c.channel = id;
    c.peer_channel = ch.peer;
    c.connection = ch.connection;
    c.source = ch.key.src.to_string();
    c.destination = ch.key.dst.to_string();
    c.qpn = ch.key.number;
    c.requests = ch.req.requests;
    c.out_of_sequence = ch.req.out_of_sequence;
    c.duplicates = ch.req.duplicates;
    c.retransmissions = ch.req.retransmissions;
    c.not_captured = ch.req.not_captured;
    out.push_back(std::move(c));
  }
  std::ranges::sort(out, {}, &RcChannelSummary::channel);
  return out;
}

RcStats RcTracker::stats() const {
  RcStats s;
  s.channels = impl_->channels.size();
  for (const auto& [id, ch] : impl_->channels) {
    if (ch.peer != 0) ++s.paired;
    s.window_entries += ch.req.window.size();
    for (const Entry& e : ch.req.window) s.unanswered += e.answered ? 0 : 1;
  }
  return s;
}

// Index of the first entry whose PSN is after `psn` (entries are ordered by PSN from the front).
std::size_t RcTracker::Impl::upper(const Requests& r, std::uint32_t psn) {
  if (r.window.empty()) return 0;
  const std::uint32_t base = r.window.front().psn;
  const std::int32_t off = psn::diff(psn, base);
  if (off < 0) return 0;
  const auto it = std::upper_bound(
      r.window.begin(), r.window.end(), off,
      [base](std::int32_t o, const Entry& e) { return o < psn::diff(e.psn, base); });
  return static_cast<std::size_t>(it - r.window.begin());
}

// The entry whose PSN range holds `psn`.
Entry* RcTracker::Impl::find(Requests& r, std::uint32_t psn) {
  const std::size_t i = upper(r, psn);
  if (i == 0) return nullptr;
  Entry& e = r.window[i - 1];
  const std::int32_t d = psn::diff(psn, e.psn);
  return d >= 0 && static_cast<std::uint32_t>(d) < e.span ? &e : nullptr;
}

// The READ-like request a READ response at `psn` answers: the entry holding it, or a READ
// whose span is not known yet and that nothing follows before `psn`.
Entry* RcTracker::Impl::find_read(Requests& r, std::uint32_t psn) {
  if (Entry* e = find(r, psn)) return read_like(e->kind) ? e : nullptr;
  const std::size_t i = upper(r, psn);
  if (i == 0) return nullptr;
  Entry& e = r.window[i - 1];
  const std::int32_t k = psn::diff(psn, e.psn);
  if (!e.span_provisional || k < 0 || static_cast<std::uint32_t>(k) >= kMaxSpan) return nullptr;
  return &e;
}

void RcTracker::Impl::trim(Requests& r) const {
  const std::size_t before = r.window.size();
  while (r.window.size() > options.window) r.window.pop_front();
  // Answered entries only serve to recognise retransmissions: keep fewer of them.
  while (r.window.size() > options.window / 4 && r.window.front().answered) r.window.pop_front();
  if (r.window.size() != before) r.trimmed = true;
}

Channel& RcTracker::Impl::channel(const AddressKey& key, Service service) {
  if (const auto it = by_key.find(key); it != by_key.end()) {
    Channel& ch = channels.at(it->second);
    ch.last_frame = frame;
    return ch;
  }
  const std::uint32_t id = next_id++;
  Channel& ch = channels[id];
  ch.id = id;
  ch.key = key;
  ch.service = service;
  ch.last_frame = frame;
  by_key[key] = id;
  by_pair[AddressKey{key.src, key.dst, 0}].push_back(id);
  if (channels.size() > options.max_channels) evict();
  return channels.at(id);
}

void RcTracker::Impl::evict() {
  // Forget the least recently used eighth; channels touched by the current frame stay.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> age;
  age.reserve(channels.size());
  for (const auto& [id, ch] : channels)
    if (ch.last_frame != frame) age.emplace_back(ch.last_frame, id);
  const std::size_t n = std::min(age.size(), options.max_channels / 8 + 1);
  std::nth_element(age.begin(), age.begin() + static_cast<std::ptrdiff_t>(n), age.end());
  for (std::size_t i = 0; i < n; ++i) forget(age[i].second);
}

void RcTracker::Impl::forget(std::uint32_t id) {
  Channel& ch = channels.at(id);
  unlink(ch);
  by_key.erase(ch.key);
  const AddressKey pair{ch.key.src, ch.key.dst, 0};
  auto& ids = by_pair[pair];
  std::erase(ids, ch.id);
  if (ids.empty()) by_pair.erase(pair);
  channels.erase(id);
}

void RcTracker::Impl::unlink(Channel& ch) {
  if (Channel* peer = get(ch.peer); peer != nullptr && peer->peer == ch.id) {
    peer->peer = 0;
    peer->link = LinkSource::kNone;
  }
  ch.peer = 0;
  ch.link = LinkSource::kNone;
}

void RcTracker::Impl::reset(Channel& ch) {
  unlink(ch);
  ch.connection = 0;
  ch.pmtu = 0;
  ch.pmtu_source = PmtuSource::kUnknown;
  ch.pkey.reset();
  ch.req = Requests{};
  ch.has_msn = false;
}

void RcTracker::Impl::link(Channel& a, Channel& b, LinkSource source) {
  if (a.peer != b.id) unlink(a);
  if (b.peer != a.id) unlink(b);
  a.peer = b.id;
  b.peer = a.id;
  a.link = b.link = source;
  // One path MTU per QP pair.
  if (a.pmtu == 0 && b.pmtu != 0) {
    a.pmtu = b.pmtu;
    a.pmtu_source = b.pmtu_source;
  } else if (b.pmtu == 0 && a.pmtu != 0) {
    b.pmtu = a.pmtu;
    b.pmtu_source = a.pmtu_source;
  }
}

void RcTracker::Impl::set_pmtu(Channel& ch, std::uint32_t pmtu, PmtuSource source) {
  ch.pmtu = pmtu;
  ch.pmtu_source = source;
  if (Channel* peer = get(ch.peer); peer != nullptr && peer->pmtu == 0) {
    peer->pmtu = pmtu;
    peer->pmtu_source = source;
  }
}

void RcTracker::Impl::link_cm(Channel& ch, CmTracker& cm) {
  const CmConnection* c = cm.find(ch.key.src, ch.key.dst, ch.key.number);
  if (c == nullptr) return;
  if (c->id != ch.connection) {
    // First packet of this connection on the channel (its QPNs may have served an older one).
    const bool to_passive =
        c->has_rep && c->passive == ch.key.dst && c->passive_qpn == ch.key.number;
    auto configure = [this, c](Channel& x, bool from_active) {
      x.connection = c->id;
      by_connection[c->id].push_back(x.id);
      if (!c->partial) {
        x.pkey = c->pkey;
        if (c->pmtu != 0) {
          x.pmtu = c->pmtu;
          x.pmtu_source = PmtuSource::kCm;
        }
      }
      // The active side's requests start at the REP's Starting PSN, the passive side's at
      // the REQ's.
      Requests& r = x.req;
      r.from_active = from_active;
      if (from_active ? c->has_rep : !c->partial) {
        r.started = r.start_known = true;
        r.start_psn = r.epsn = r.next = r.frontier =
            from_active ? c->rep_starting_psn : c->req_starting_psn;
      }
      r.other_known = from_active ? !c->partial : c->has_rep;
      r.other_start = from_active ? c->req_starting_psn : c->rep_starting_psn;
    };
    reset(ch);
    configure(ch, to_passive);
    // The peer channel carries the other side's requests (and these requests' responses).
    const bool peer_known = to_passive ? !c->partial : c->has_rep;
    if (peer_known) {
      const std::uint32_t peer_qpn = to_passive ? c->active_qpn : c->passive_qpn;
      Channel& peer = channel(AddressKey{ch.key.dst, ch.key.src, peer_qpn}, ch.service);
      if (peer.connection != c->id) {
        reset(peer);
        configure(peer, !to_passive);
      }
      link(ch, peer, LinkSource::kCm);
    }
  }
  if (cm.note_data(c->id, frame, time))
    flags->push_back({.code = FlagCode::kCmEstablishedByData, .a = c->id});
}

void RcTracker::Impl::try_pair(Channel& responses, const Packet& p, const OpcodeInfo& op) {
  const auto it = by_pair.find(AddressKey{responses.key.dst, responses.key.src, 0});
  if (it == by_pair.end()) return;
  const std::uint32_t psn = p.bth->psn;
  std::vector<Channel*> candidates;
  for (std::uint32_t id : it->second) {
    Channel* c = get(id);
    if (c != nullptr && c->id != responses.id && c->peer == 0 && c->service == Service::kRc &&
        !c->req.window.empty())
      candidates.push_back(c);
  }
  if (candidates.size() == 1) {
    link(responses, *candidates.front(), LinkSource::kUnique);
    return;
  }
  Channel* match = nullptr;
  for (Channel* c : candidates) {
    Entry* e = find(c->req, psn);
    bool fits;
    if (op.kind == OpKind::kReadResponse)
      fits = find_read(c->req, psn) != nullptr;
    else if (op.kind == OpKind::kAtomicAck)
      fits = e != nullptr && atomic(e->kind);
    else  // a sequence-error NAK may name the PSN right after the last request
      fits = e != nullptr || psn == c->req.next;
    if (!fits) continue;
    if (match != nullptr) return;  // ambiguous
    match = c;
  }
  if (match != nullptr) link(responses, *match, LinkSource::kPsn);
}

void RcTracker::Impl::check_mtu(const Channel& ch, const Packet& p, Position pos,
                                std::uint32_t length) {
  if (ch.pmtu == 0 || p.has(FindingCode::kTruncated)) return;
  const std::uint32_t source = ch.pmtu_source == PmtuSource::kCm ? 1 : 2;
  if (length > ch.pmtu) {
    flags->push_back({.code = FlagCode::kMtuExceeded, .a = length, .b = ch.pmtu, .c = source});
  } else if ((pos == Position::kFirst || pos == Position::kMiddle) && length < ch.pmtu) {
    flags->push_back(
        {.code = FlagCode::kMtuShortFirstMiddle, .a = length, .b = ch.pmtu, .c = source});
  }
}

// Marks requests before `end` acknowledged (an ACK of PSN n acknowledges everything up to n,
// a NAK everything before its PSN). READ and atomic requests wait for their own responses.
// PSNs never seen are reconcile()'s business.
Completion RcTracker::Impl::complete(Requests& r, std::uint32_t end) {
  Completion out;
  if (psn::diff(end, r.frontier) <= 0) return out;
  std::uint32_t running = r.frontier;
  // Start at the entry holding the frontier (a READ may straddle it).
  const std::size_t from = upper(r, r.frontier);
  for (std::size_t i = from == 0 ? 0 : from - 1;
       i < r.window.size() && psn::diff(r.window[i].psn, end) < 0; ++i) {
    Entry& e = r.window[i];
    const std::uint32_t e_end = psn::add(e.psn, e.span);
    if (psn::diff(e_end, running) <= 0) continue;  // before the frontier
    running = e_end;
    if (e.answered || !(is_data(e.kind) || e.kind == OpKind::kOther)) continue;
    e.answered = true;
    ++out.count;
    if (out.first_frame == 0) out.first_frame = e.last_frame;
    if (message_end(e.pos) && !e.counted) {
      e.counted = true;
      ++out.completed;
    }
    answer(e, FlagCode::kAckedBy);
  }
  r.frontier = end;
  return out;
}

// The request at the expected PSN arrived: the responder accepts it and the gap, if any, is
// closed. A gap that never drew its sequence-error NAK is the responder's fault.
void RcTracker::Impl::accept(Requests& r, std::uint32_t epsn) {
  if (r.oos && !r.oos_naked)
    flags->push_back(
        {.code = FlagCode::kNakMissing, .a = r.oos_psn, .b = r.epsn, .frame = r.oos_frame});
  r.oos = false;
  r.dup_pending = false;
  r.epsn = epsn;
}

// The first request after `psn` in the window (the one a sequence-error NAK answers), or 0.
std::uint64_t RcTracker::Impl::first_after(Requests& r, std::uint32_t psn) {
  const std::size_t i = upper(r, psn);
  return i < r.window.size() ? r.window[i].first_frame : 0;
}

// A response shows the responder's expected PSN is `epsn` (a sequence-error NAK), or at least
// `epsn` (an ACK or a READ/atomic response: `answered`). Where it got further than the requests
// on the wire explain, the PSNs it must have received but the capture never saw are capture
// loss (or, in a complete capture, an acknowledgement of PSNs never sent); where all were on the
// wire, it answered a request that arrived out of sequence.
void RcTracker::Impl::reconcile(Requests& r, std::uint32_t epsn, bool answered, RcFrameInfo& info) {
  const std::int32_t ahead = psn::diff(epsn, r.epsn);
  if (ahead <= 0) return;
  // PSNs of [r.epsn, epsn) covered by a request seen (since the last resync).
  std::uint32_t covered = 0;
  std::uint32_t first_unseen = r.epsn;
  bool gap_found = false;
  std::uint32_t running = r.epsn;
  const Entry* answered_oos = nullptr;
  if (r.trimmed && !r.window.empty() && psn::diff(r.window.front().psn, running) > 0) {
    // Requests before the window's first were trimmed from it, not missing: count them seen.
    std::uint32_t front = r.window.front().psn;
    if (psn::diff(front, epsn) > 0) front = epsn;
    covered += static_cast<std::uint32_t>(psn::diff(front, running));
    running = front;
  }
  const std::size_t from = upper(r, r.epsn);
  for (std::size_t i = from == 0 ? 0 : from - 1;
       i < r.window.size() && psn::diff(r.window[i].psn, epsn) < 0; ++i) {
    const Entry& e = r.window[i];
    if (e.last_frame <= r.resync_frame) continue;
    const std::uint32_t begin = psn::diff(e.psn, running) > 0 ? e.psn : running;
    std::uint32_t end = psn::add(e.psn, e.span);
    if (psn::diff(end, epsn) > 0) end = epsn;
    if (psn::diff(end, begin) <= 0) continue;
    if (!gap_found && psn::diff(begin, running) > 0) {
      gap_found = true;
      first_unseen = running;
    }
    if (answered_oos == nullptr && e.dropped) answered_oos = &e;
    covered += static_cast<std::uint32_t>(psn::diff(end, begin));
    running = end;
  }
  if (!gap_found && psn::diff(epsn, running) > 0) first_unseen = running;
  const auto unseen = static_cast<std::uint32_t>(ahead) - covered;
  if (unseen > 0) {
    if (options.capture_complete) {
      flags->push_back({.code = FlagCode::kAckOverGap, .a = first_unseen, .b = unseen});
    } else {
      flags->push_back({.code = FlagCode::kNotCaptured, .a = first_unseen, .b = unseen});
      info.not_captured += unseen;
      r.not_captured += unseen;
    }
  } else if (answered && answered_oos != nullptr) {
    flags->push_back({.code = FlagCode::kOosAnswered,
                      .a = answered_oos->psn,
                      .b = r.epsn,
                      .frame = answered_oos->last_frame});
  }
  r.oos = false;
  r.dup_pending = false;
  r.epsn = epsn;
  if (psn::diff(epsn, r.next) > 0) r.next = epsn;
}

void RcTracker::Impl::request(Channel& ch, const Packet& p, const OpcodeInfo& op,
                              RcFrameInfo& info) {
  Requests& r = ch.req;
  const std::uint32_t psn = p.bth->psn;
  const std::uint32_t length = static_cast<std::uint32_t>(p.payload.size());

  Entry fresh;
  fresh.psn = psn;
  fresh.first_frame = fresh.last_frame = frame;
  fresh.last_time = time;
  fresh.opcode = p.bth->opcode;
  fresh.kind = op.kind;
  fresh.pos = op.position;
  if (op.kind == OpKind::kReadRequest) {
    fresh.dmalen = p.reth ? p.reth->dmalen : 0;
    if (ch.pmtu != 0) {
      fresh.span = read_span(fresh.dmalen, ch.pmtu);
    } else {
      // Until responses (or the next request) show it; at most 256 bytes is one packet anyway.
      fresh.span_provisional = fresh.dmalen > kMtus[0];
    }
  }
  info.span = fresh.span;

  if (!r.started) {
    r.started = true;
    r.epsn = r.next = r.frontier = psn;
  }
  if (!r.seen && r.start_known && psn != r.start_psn && r.other_known && psn == r.other_start) {
    // The sender took its own CM message's Starting PSN: judge the rest from where it began.
    flags->push_back(
        {.code = FlagCode::kCmStartPsn, .a = psn, .b = r.start_psn, .c = r.from_active ? 1u : 0u});
    r.start_psn = r.epsn = r.next = r.frontier = psn;
  }
  r.seen = true;
  ++r.requests;
  info.expected_psn = r.epsn;
  info.sender_next = r.next;

  // Retransmission: the PSN was on the wire before, or it is resent after a NAK (go-back-N)
  // though its first copy never reached the capture. Either way, not a duplicate by itself.
  Entry* e = find(r, psn);
  // Requests already in flight when the NAK came are new PSNs, not resends; once the sender
  // has gone back, a new PSN ends its resends.
  const bool fresh_psn = psn::diff(psn, r.next) >= 0;
  if (fresh_psn && r.goback_started) r.goback = false;
  const bool resend = r.goback && !fresh_psn && psn::diff(psn, r.nak_psn) >= 0;
  if (resend) r.goback_started = true;
  if (e != nullptr || resend) {
    info.retransmission = true;
    info.retransmission_of = e != nullptr ? e->last_frame : 0;
    info.resend_after_nak = resend ? r.nak_frame : 0;
    ++r.retransmissions;
    flags->push_back({.code = FlagCode::kRetransmission,
                      .a = info.resend_after_nak,
                      .frame = info.retransmission_of});
  }

  const std::int32_t d = psn::diff(psn, r.epsn);
  bool duplicate = false;
  bool accepted = d == 0;
  if (d > 0) {
    // A READ before took more PSNs than assumed: its span is now known.
    Entry* last = r.window.empty() ? nullptr : &r.window.back();
    if (last != nullptr && last->span_provisional && r.epsn == r.next &&
        psn::diff(psn::add(last->psn, last->span), r.epsn) == 0) {
      const std::uint32_t span = last->span + static_cast<std::uint32_t>(d);
      std::size_t matches = 0;
      std::uint32_t unique_mtu = 0;
      for (std::uint32_t m : kMtus) {
        if (ceil_div(last->dmalen, m) == span) {
          ++matches;
          unique_mtu = m;
        }
      }
      if (matches > 0) {
        last->span = span;
        last->span_provisional = false;
        if (matches == 1 && ch.pmtu == 0) set_pmtu(ch, unique_mtu, PmtuSource::kInferred);
        info.expected_psn = r.epsn = r.next = psn;
        accepted = true;
      }
    }
  }
  if (accepted) {
    info.psn_state = PsnState::kExpected;
    if (is_data(op.kind)) info.delivered = length;
    accept(r, psn::add(psn, fresh.span));
  } else if (d > 0) {
    info.psn_state = PsnState::kOutOfSequence;
    ++r.out_of_sequence;
    flags->push_back({.code = FlagCode::kOutOfSequence, .a = psn, .b = r.epsn});
    if (!r.oos) {
      // The first since the last accepted request: the responder owes it one NAK.
      info.nak_due = true;
      r.oos = true;
      r.oos_naked = false;
      r.oos_psn = psn;
      r.oos_frame = frame;
    }
  } else {
    info.psn_state = PsnState::kDuplicate;
    duplicate = true;
    ++r.duplicates;
    r.dup_pending = true;
    r.dup_frame = frame;
    flags->push_back({.code = FlagCode::kDuplicate, .a = psn, .b = r.epsn});
  }
  if (psn::diff(psn::add(psn, fresh.span), r.next) > 0) r.next = psn::add(psn, fresh.span);

  fresh.dropped = info.psn_state == PsnState::kOutOfSequence;
  if (e != nullptr) {
    e->last_frame = frame;
    e->last_time = time;
    if (!duplicate) e->dropped = fresh.dropped;
  } else {
    // In PSN order, without overlapping what follows.
    const std::size_t at = upper(r, psn);
    if (at < r.window.size()) {
      const std::int32_t room = psn::diff(r.window[at].psn, psn);
      if (room > 0) fresh.span = std::min(fresh.span, static_cast<std::uint32_t>(room));
    }
    r.window.insert(r.window.begin() + static_cast<std::ptrdiff_t>(at), fresh);
  }

  // FIRST/MIDDLE/LAST order (IBA 9.8.3): judged against the request just before this PSN.
  if (!duplicate) {
    const Entry* prev_entry = find(r, psn::add(psn, -1));
    const bool known = prev_entry != nullptr || (r.start_known && psn == r.start_psn);
    if (known) {
      const bool in_progress =
          prev_entry != nullptr && is_data(prev_entry->kind) &&
          (prev_entry->pos == Position::kFirst || prev_entry->pos == Position::kMiddle);
      const bool continues = op.position == Position::kMiddle || op.position == Position::kLast;
      std::uint32_t problem = 0;
      if (continues && !in_progress)
        problem = 1;
      else if (!continues && in_progress)
        problem = 2;
      else if (continues && prev_entry->kind != op.kind)
        problem = 3;
      if (problem != 0) {
        flags->push_back({.code = FlagCode::kOpcodeSequence,
                          .a = p.bth->opcode,
                          .b = prev_entry != nullptr ? prev_entry->opcode : p.bth->opcode,
                          .c = problem,
                          .frame = prev_entry != nullptr ? prev_entry->last_frame : 0});
      }
    }
  }

  if (is_data(op.kind)) {
    if (ch.pmtu == 0 && (op.position == Position::kFirst || op.position == Position::kMiddle) &&
        mtu_enum(length) != 0 && !p.has(FindingCode::kTruncated))
      set_pmtu(ch, length, PmtuSource::kInferred);
    check_mtu(ch, p, op.position, length);
  }
  trim(r);
}

void RcTracker::Impl::response(Channel& ch, const Packet& p, const OpcodeInfo& op,
                               RcFrameInfo& info) {
  info.role = RcRole::kResponse;
  const std::uint32_t psn = p.bth->psn;
  const std::uint32_t length = static_cast<std::uint32_t>(p.payload.size());
  if (p.aeth) {
    info.syndrome = p.aeth->syndrome;
    info.msn = p.aeth->msn;
  }
  if (ch.peer == 0) try_pair(ch, p, op);
  Channel* peer = get(ch.peer);
  Requests* r = peer != nullptr && peer->req.started ? &peer->req : nullptr;
  Entry* e = r == nullptr                       ? nullptr
             : op.kind == OpKind::kReadResponse ? find_read(*r, psn)
                                                : find(*r, psn);
  if (e != nullptr) {
    info.request_frame = e->last_frame;
    info.response_time_ns = time - e->last_time;
  }
  auto unknown = [&] {
    if (r != nullptr)
      flags->push_back(
          {.code = FlagCode::kAckPsnUnknown, .a = psn, .b = r->next, .c = p.bth->opcode});
  };
  Completion done;

  if (op.kind == OpKind::kReadResponse) {
    if (e == nullptr) {
      unknown();
      check_mtu(ch, p, op.position, length);
    } else {
      const std::uint32_t k = static_cast<std::uint32_t>(psn::diff(psn, e->psn)) + 1;
      if (ch.pmtu == 0 && (op.position == Position::kFirst || op.position == Position::kMiddle) &&
          mtu_enum(length) != 0 && !p.has(FindingCode::kTruncated)) {
        set_pmtu(ch, length, PmtuSource::kInferred);
        if (e->span_provisional) {
          e->span = std::max(read_span(e->dmalen, length), e->span);
          e->span_provisional = false;
        }
      }
      if (e->span_provisional) {
        e->span = std::max(e->span, k);
        if (op.position == Position::kLast || op.position == Position::kOnly)
          e->span_provisional = false;
      }
      if (&r->window.back() == e) {
        const std::uint32_t end = psn::add(e->psn, e->span);
        if (psn::diff(end, r->next) > 0) r->next = end;
        // Accepted with a span assumed too short: the responder expects the PSN after it.
        if (psn::diff(r->epsn, e->psn) > 0 && psn::diff(end, r->epsn) > 0) r->epsn = end;
      }
      const std::uint32_t n = e->span_provisional ? 0 : e->span;
      info.read_index = k;
      info.read_count = n;
      flags->push_back({.code = FlagCode::kReadResponse, .a = k, .b = n});

      // Position: FIRST .. MIDDLE .. LAST, or ONLY, as many as ceil(dmalen / PMTU).
      const bool first = op.position == Position::kFirst || op.position == Position::kOnly;
      if (n != 0 && k > n) {
        flags->push_back(
            {.code = FlagCode::kReadResponseSplit, .a = k, .b = n, .c = 2, .frame = e->last_frame});
      } else if (n != 0) {
        const Position want = n == 1   ? Position::kOnly
                              : k == 1 ? Position::kFirst
                              : k == n ? Position::kLast
                                       : Position::kMiddle;
        if (op.position != want)
          flags->push_back({.code = FlagCode::kReadResponseSplit,
                            .a = k,
                            .b = n,
                            .c = 1,
                            .frame = e->last_frame});
      } else if (first != (k == 1)) {
        flags->push_back(
            {.code = FlagCode::kReadResponseSplit, .a = k, .b = 0, .c = 1, .frame = e->last_frame});
      }
      check_mtu(ch, p, op.position, length);

      if (k == e->read_seen + 1) {
        e->read_bytes += length;
        e->read_seen = k;
        info.delivered = length;
      } else if (k > e->read_seen + 1) {
        e->read_gap = true;
        e->read_seen = k;
      }
      const bool last = op.position == Position::kLast || op.position == Position::kOnly;
      if (last && e->kind == OpKind::kReadRequest && !e->read_gap && k == e->read_seen &&
          e->read_bytes != e->dmalen && !p.has(FindingCode::kTruncated)) {
        flags->push_back({.code = FlagCode::kReadResponseSplit,
                          .a = e->read_bytes,
                          .b = e->dmalen,
                          .c = 3,
                          .frame = e->last_frame});
      }
      if (first) {
        // The first response implicitly acknowledges the requests before the READ, and the
        // READ's own MSN increment already shows in it (C9-148).
        reconcile(*r, psn::add(e->psn, 1), true, info);
        done = complete(*r, e->psn);
        if (!e->counted) {
          e->counted = true;
          ++done.completed;
        }
        if (!e->answered) {
          e->answered = true;
          answer(*e, FlagCode::kAckedBy);
        }
      }
      if (last && psn::diff(psn::add(e->psn, e->span), r->frontier) > 0)
        r->frontier = psn::add(e->psn, e->span);
    }
  } else if (op.kind == OpKind::kAtomicAck) {
    if (e == nullptr || !atomic(e->kind)) {
      unknown();
    } else {
      reconcile(*r, psn::add(e->psn, 1), true, info);
      done = complete(*r, e->psn);
      if (!e->answered) {
        e->answered = true;
        ++done.count;
        if (done.first_frame == 0) done.first_frame = e->last_frame;
        answer(*e, FlagCode::kAckedBy);
      }
      if (!e->counted) {
        e->counted = true;
        ++done.completed;
      }
      if (psn::diff(psn::add(psn, 1), r->frontier) > 0) r->frontier = psn::add(psn, 1);
      flags->push_back({.code = FlagCode::kAcks,
                        .a = done.count,
                        .b = done.first_frame,
                        .frame = e->last_frame,
                        .ns = info.response_time_ns});
    }
  } else if (p.aeth) {  // ACKNOWLEDGE: ACK, RNR NAK or NAK
    const std::uint8_t syn = p.aeth->syndrome;
    switch (aeth_type(syn)) {
      case AethType::kAck:
        if (r == nullptr) break;
        if (psn::diff(psn, r->next) >= 0) {
          unknown();
          break;
        }
        reconcile(*r, psn::add(psn, 1), true, info);
        done = complete(*r, psn::add(psn, 1));
        if (done.count > 0) {
          flags->push_back({.code = FlagCode::kAcks,
                            .a = done.count,
                            .b = done.first_frame,
                            .frame = info.request_frame,
                            .ns = info.response_time_ns});
        }
        break;
      case AethType::kRnrNak:
        flags->push_back({.code = FlagCode::kNakRnr,
                          .a = aeth_value(syn),
                          .frame = e != nullptr ? e->last_frame : 0});
        if (r == nullptr) break;
        // The responder did not accept the request at psn: it expects it again.
        if (psn::diff(psn, r->epsn) > 0) reconcile(*r, psn, false, info);
        r->epsn = psn;
        r->oos = false;
        done = complete(*r, psn);
        if (e != nullptr) answer(*e, FlagCode::kNakReceived, syn);
        r->goback = true;
        r->goback_started = false;
        r->nak_psn = psn;
        r->nak_frame = frame;
        r->nak_syndrome = syn;
        break;
      case AethType::kNak: {
        if (syn == syndrome::kNakPsnSeqError) {
          // The NAK names the responder's expected PSN. Behind ours: requests seen on the wire
          // never reached the responder (lost after the capture point). Ahead: it received
          // PSNs the capture missed.
          std::uint64_t cause = 0;
          bool repeated = false;
          if (r != nullptr) {
            const std::int32_t d = psn::diff(psn, r->epsn);
            if (d > 0) {
              reconcile(*r, psn, false, info);
            } else if (d < 0) {
              r->epsn = psn;
              r->resync_frame = frame;
              r->oos = false;
              r->dup_pending = false;
            }
            repeated = r->oos && r->oos_naked && r->nak_syndrome == syn && r->nak_psn == psn;
            // The cause: the first out-of-sequence request after the expected PSN.
            cause = r->oos && psn::diff(r->oos_psn, psn) > 0 ? r->oos_frame : first_after(*r, psn);
            if (!r->oos) {
              r->oos = true;
              r->oos_psn = psn::add(psn, 1);
              r->oos_frame = cause;
            }
            r->oos_naked = true;
          }
          info.nak_cause_frame = cause;
          flags->push_back({.code = FlagCode::kNakSeqError, .a = psn, .frame = cause});
          if (r == nullptr) break;
          if (repeated) {
            flags->push_back({.code = FlagCode::kNakRepeated, .a = psn, .frame = r->nak_frame});
          } else {
            r->nak_frame = frame;
          }
          done = complete(*r, psn);
          r->goback = true;
          r->goback_started = false;
          r->nak_psn = psn;
          r->nak_syndrome = syn;
          break;
        }
        FlagCode code;
        switch (syn) {
          case syndrome::kNakInvalidRequest:
            code = FlagCode::kNakInvalidRequest;
            break;
          case syndrome::kNakRemoteAccess:
            code = FlagCode::kNakRemoteAccess;
            break;
          case syndrome::kNakRemoteOperational:
            code = FlagCode::kNakRemoteOp;
            break;
          case syndrome::kNakInvalidRdRequest:
            code = FlagCode::kNakInvalidRdRequest;
            break;
          default:
            return;  // reserved NAK code: the decoder reports it
        }
        info.nak_cause_frame = e != nullptr ? e->last_frame : 0;
        flags->push_back({.code = code, .a = psn, .frame = info.nak_cause_frame});
        if (r == nullptr) break;
        done = complete(*r, psn);
        if (e != nullptr && !e->answered) {
          e->answered = true;
          answer(*e, FlagCode::kNakReceived, syn);
        }
        break;
      }
      case AethType::kReserved:
        break;
    }
  }

  info.acked_count = done.count;
  info.first_acked_frame = done.first_frame;
  // MSN: one more per completed message; a response that completes messages and repeats the
  // previous MSN is stuck.
  if (p.aeth && r != nullptr) {
    const std::uint32_t msn = p.aeth->msn;
    if (ch.has_msn && done.completed > 0 && msn == ch.msn) {
      flags->push_back({.code = FlagCode::kMsnStuck, .a = msn, .b = done.completed});
    } else if (ch.has_msn && r->dup_pending && done.completed == 0 &&
               aeth_type(p.aeth->syndrome) == AethType::kAck && psn::diff(msn, ch.msn) > 0 &&
               psn::diff(psn, r->epsn) < 0) {
      // A duplicate is answered without being executed again (C9-105): the MSN stays.
      flags->push_back(
          {.code = FlagCode::kDuplicateExecuted, .a = ch.msn, .b = msn, .frame = r->dup_frame});
      r->dup_pending = false;
    }
    ch.has_msn = true;
    ch.msn = msn;
  }
  if (r != nullptr) info.capture_gaps = static_cast<std::uint32_t>(r->not_captured);
}

RcFrameInfo RcTracker::process(std::uint64_t frame, std::int64_t time_ns, const Packet& p,
                               CmTracker* cm, Flags& flags, std::vector<RcAnswer>& answers) {
  RcFrameInfo info;
  if (!p.bth) return info;
  const OpcodeInfo& op = opcode_info(p.bth->opcode);
  if (op.service != Service::kRc && op.service != Service::kUc) return info;
  Impl& m = *impl_;
  m.frame = frame;
  m.time = time_ns;
  m.flags = &flags;
  m.answers = &answers;
  info.psn = p.bth->psn;

  const AddressKey key{NetAddress::source(p), NetAddress::destination(p), p.bth->dqpn};
  Channel& ch = m.channel(key, op.service);
  if (cm != nullptr) m.link_cm(ch, *cm);
  if (ch.pkey && !pkey_match(p.bth->pkey, *ch.pkey)) {
    flags.push_back(
        {.code = FlagCode::kPkeyMismatch, .a = p.bth->pkey, .b = *ch.pkey, .c = ch.connection});
  }
  if (op.is_request)
    m.request(ch, p, op, info);
  else
    m.response(ch, p, op, info);

  info.channel = ch.id;
  info.peer_channel = ch.peer;
  if (const Channel* peer = m.get(ch.peer)) info.source_qpn = peer->key.number;
  info.link = ch.link;
  info.connection = ch.connection;
  info.pmtu = ch.pmtu;
  info.pmtu_source = ch.pmtu_source;
  return info;
}

}  // namespace roceconf::analysis
