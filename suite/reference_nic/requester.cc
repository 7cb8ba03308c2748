// Over 600 lines: the send queue, retransmission, timers and completion rules share the
// requester's state.
#include "suite/reference_nic/requester.h"

#include <algorithm>
#include <array>
#include <deque>
#include <vector>

#include "dissector/analysis/psn.h"
#include "dissector/names.h"
#include "suite/reference_nic/nic.h"
#include "suite/reference_nic/segmentation.h"

namespace roceconf::target {

namespace {

enum class Kind : std::uint8_t { kSend, kWrite, kRead, kAtomic };

Kind kind_of(WrOpcode op) {
  switch (op) {
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm:
      return Kind::kWrite;
    case WrOpcode::kRdmaRead:
      return Kind::kRead;
    case WrOpcode::kAtomicCmpAndSwp:
    case WrOpcode::kAtomicFetchAndAdd:
      return Kind::kAtomic;
    default:
      return Kind::kSend;
  }
}

bool is_rd_atomic(Kind k) {
  return k == Kind::kRead || k == Kind::kAtomic;
}

// IBA 9.4: a message carries at most 2^31 bytes.
constexpr std::uint64_t kMaxMessage = std::uint64_t{1} << 31;
// PSNs outstanding at once: with more, a response PSN could no longer be told from a stale one
// (the 2^23 halves of spec-facts §4.2).
constexpr std::uint64_t kMaxOutstanding = psn::kHalf;
constexpr std::uint8_t kRnrRetryInfinite = 7;
// A WR Q_Key with the high bit set asks for the QP's own Q_Key (IBA controlled Q_Keys; mlx4
// builds UD headers the same way).
constexpr std::uint32_t kControlledQkey = 0x80000000;

bool psn_before(std::uint32_t a, std::uint32_t b) {
  return psn::diff(a, b) < 0;
}

// The completion status of a NAK that ends the WQE (spec-facts §3.3, §8). 0x64 has its own status;
// reserved codes are a malformed response.
WcStatus nak_status(std::uint8_t syn) {
  switch (syn) {
    case syndrome::kNakInvalidRequest:
      return WcStatus::kRemInvReqErr;
    case syndrome::kNakRemoteAccess:
      return WcStatus::kRemAccessErr;
    case syndrome::kNakRemoteOperational:
      return WcStatus::kRemOpErr;
    case syndrome::kNakInvalidRdRequest:
      return WcStatus::kRemInvRdReqErr;
    default:
      return WcStatus::kBadRespErr;
  }
}

bool stopped(const Qp& qp) {
  return qp.state() == QpState::kErr || qp.state() == QpState::kReset;
}

}  // namespace

std::optional<std::uint64_t> local_ack_timeout_ns(std::uint8_t timeout) {
  if (timeout == 0) return std::nullopt;
  return std::uint64_t{4096} << std::min<std::uint8_t>(timeout, 31);
}

// A started WQE of an RC QP (or a UC one while it is being sent).
struct Requester::Message {
  std::uint64_t seq = 0;  // the WQE's
  SendWr wr;              // what goes on the wire (wqe-prefetch-overwrite: another WQE's)
  Kind kind = Kind::kSend;
  std::uint64_t length = 0;
  std::uint32_t first_psn = 0;
  std::uint32_t packets = 0;  // PSNs taken: request packets, or READ response packets
  std::uint32_t sent = 0;     // packets sent in this pass; go-back-N moves it back
  // Failed before or while sending; completes in order once everything before it has.
  std::optional<WcStatus> local_error;
  // READ: response indexes where a request started (the first and each retry's): a response
  // sequence may begin there with FIRST or ONLY, as the responder answers a retried READ as a new
  // request for the rest (spec-facts §4.3).
  std::vector<std::uint32_t> read_starts;

  std::uint32_t last_psn() const { return psn::add(first_psn, packets == 0 ? 0 : packets - 1); }
};

// The send state of one QP.
struct Requester::Flow {
  std::uint32_t next_psn = 0;  // the PSN the next new packet gets
  // RC: the oldest PSN not yet acknowledged; messages[i] is send_queue()[i].
  std::uint32_t comp_psn = 0;
  std::deque<Message> messages;
  std::uint32_t rd_atomic = 0;  // READ/atomic messages outstanding
  std::uint8_t retries_left = 0;
  std::uint8_t rnr_left = 0;
  bool implied_nak_sent = false;  // one retry per gap in READ/atomic responses
  std::optional<std::uint64_t> ack_deadline;
  std::optional<std::uint64_t> rnr_deadline;
  std::uint32_t rnr_psn = 0;
  std::optional<std::uint64_t> last_doorbell;  // of the last WQE started

  // Go-back-N: every packet from `from` on is sent again.
  void rewind(std::uint32_t from) {
    for (Message& m : messages) {
      if (m.local_error) break;
      const std::int32_t d = psn::diff(from, m.first_psn);
      if (d > 0 && static_cast<std::uint32_t>(d) >= m.packets) continue;
      m.sent = d > 0 ? static_cast<std::uint32_t>(d) : 0;
    }
  }
  bool outstanding() const { return comp_psn != next_psn; }
};

Requester::Requester(Nic& nic) : nic_(nic) {}

std::optional<std::uint64_t> Requester::ack_timeout(const Qp& qp) const {
  if (nic_.quirks().has(Quirk::kAckTimeoutIgnored)) return 4'000'000;
  return local_ack_timeout_ns(qp.attr().timeout);
}
Requester::~Requester() = default;

// ---- state -------------------------------------------------------------------------------------

Requester::Flow* Requester::flow_of(Qp& qp) {
  const std::uint32_t qpn = qp.qp_num();
  if (stopped(qp)) {
    // Flushed or reset (by a verb, a completion error or the responder): timers stop.
    flows_.erase(qpn);
    if (nic_.quirks().has(Quirk::kStaleSqOnRts)) stale_.flushed(qpn);
    return nullptr;
  }
  const QpState s = qp.state();
  if (s != QpState::kRts && s != QpState::kSqd && s != QpState::kSqe) return nullptr;
  std::unique_ptr<Flow>& slot = flows_[qpn];
  if (!slot) {
    slot = std::make_unique<Flow>();
    const QpAttr& a = qp.attr();
    slot->next_psn = slot->comp_psn = a.sq_psn;
    slot->retries_left = a.retry_cnt;
    slot->rnr_left = a.rnr_retry;
  }
  return slot.get();
}

void Requester::settle(Qp& qp) {
  if (stopped(qp)) flows_.erase(qp.qp_num());
}

void Requester::kick(Qp& qp, std::uint64_t now_ns) {
  if (wedged_.contains(qp.qp_num())) return;
  if (nic_.quirks().has(Quirk::kStaleSqOnRts)) stale_.observe(qp);
  if (Flow* f = flow_of(qp)) pump(qp, *f, now_ns);
  settle(qp);
}

void Requester::on_state_change(Qp& qp, QpState from, std::uint64_t now_ns) {
  const bool resumed = from == QpState::kRts || from == QpState::kSqd || from == QpState::kSqe;
  if (qp.state() == QpState::kRts && !resumed) {
    // A fresh start: PSNs from sq_psn, counters from the attributes.
    flows_.erase(qp.qp_num());
    if (nic_.quirks().has(Quirk::kStaleSqOnRts)) {
      // The defect: the old ring entries are fetched again ahead of anything new.
      std::vector<SendWqe> stale = stale_.take(qp.qp_num());
      auto& sq = qp.send_queue();
      sq.insert(sq.begin(), std::make_move_iterator(stale.begin()),
                std::make_move_iterator(stale.end()));
    }
  }
  kick(qp, now_ns);
}

void Requester::forget(std::uint32_t qp_num) {
  flows_.erase(qp_num);
  wedged_.erase(qp_num);
  stale_.forget(qp_num);
}

// ---- sending -----------------------------------------------------------------------------------

void Requester::pump(Qp& qp, Flow& f, std::uint64_t now) {
  if (qp.qp_type() == QpType::kRc) {
    pump_rc(qp, f, now);
  } else {
    pump_unreliable(qp, f);
  }
}

const SendWr& Requester::wire_wr(const Qp& qp, const Flow& f, std::size_t index) const {
  const auto& sq = qp.send_queue();
  const SendWqe& w = sq[index];
  // wqe-prefetch-overwrite: fetching a doorbell's WQEs together, the defective NIC lands the
  // second in the first one's slot, so the first message goes out with the second's content.
  if (nic_.quirks().has(Quirk::kWqePrefetchOverwrite) && index + 1 < sq.size() &&
      sq[index + 1].doorbell == w.doorbell && f.last_doorbell != w.doorbell) {
    return sq[index + 1].wr;
  }
  return w.wr;
}

Requester::Message Requester::start(Qp& qp, const SendWr& wr, std::uint64_t seq) {
  Message m;
  m.seq = seq;
  m.wr = wr;
  m.kind = kind_of(wr.opcode);
  m.length = wr.length();
  m.packets = m.kind == Kind::kAtomic ? 1 : packet_count(m.length, qp.path_mtu_bytes());
  if (m.length > kMaxMessage) {
    m.local_error = WcStatus::kLocLenErr;
  } else if (!(wr.send_flags & send_flag::kInline)) {
    // L_Key checks before the first packet; READ data and an atomic's result are written here,
    // so those SGEs need LOCAL_WRITE.
    MrTable& mrs = nic_.device().mr_table();
    const bool write = is_rd_atomic(m.kind);
    for (const Sge& sge : wr.sg_list) {
      if (!mrs.check_local(qp.pd(), sge, write)) {
        m.local_error = WcStatus::kLocProtErr;
        break;
      }
    }
  }
  if (m.local_error) m.packets = 0;
  return m;
}

void Requester::pump_rc(Qp& qp, Flow& f, std::uint64_t now) {
  if (!f.messages.empty() && f.messages.front().local_error) {
    fail(qp, f, *f.messages.front().local_error);
    return;
  }
  if (f.rnr_deadline) return;  // waiting out an RNR NAK: nothing goes out
  // What go-back-N rewound goes first.
  for (Message& m : f.messages) {
    if (m.local_error) return;  // nothing after it was started
    while (m.sent < m.packets) {
      if (!nic_.congestion().admit(qp, now)) return;  // rate limited: woken when it may go
      if (!send_rc_packet(qp, f, m, now)) return pump_rc(qp, f, now);
    }
  }
  auto& sq = qp.send_queue();
  while (qp.can_send() && f.messages.size() < sq.size()) {
    const std::size_t i = f.messages.size();
    const SendWr& wr = wire_wr(qp, f, i);
    if (is_local_op(wr.opcode)) {
      // A bind or invalidation runs once the work before it has completed, so it never
      // changes a key under a request still in flight.
      if (!f.messages.empty()) return;
      if (!run_local_op(qp, f, i)) return;
      continue;
    }
    Message m = start(qp, wr, sq[i].seq);
    if (!m.local_error) {
      // spec-facts §8: at most max_rd_atomic READ/atomics outstanding, the next one waits; a
      // fenced WQE waits for all of them (ibv_post_send IBV_SEND_FENCE).
      if (is_rd_atomic(m.kind) && f.rd_atomic >= qp.attr().max_rd_atomic &&
          !nic_.quirks().has(Quirk::kExceedsMaxRdAtomic))
        return;
      if ((wr.send_flags & send_flag::kFence) && f.rd_atomic > 0) return;
      const std::uint64_t outstanding = (f.next_psn - f.comp_psn) & psn::kMask;
      if (outstanding + m.packets > kMaxOutstanding) return;
      m.first_psn = f.next_psn;
      f.next_psn = psn::add(f.next_psn, m.packets);
      if (is_rd_atomic(m.kind)) ++f.rd_atomic;
    }
    f.last_doorbell = sq[i].doorbell;
    sq[i].started = true;
    f.messages.push_back(std::move(m));
    Message& started = f.messages.back();
    if (started.local_error) return pump_rc(qp, f, now);  // fails it once it is the oldest
    while (started.sent < started.packets) {
      if (!nic_.congestion().admit(qp, now)) return;
      if (!send_rc_packet(qp, f, started, now)) return pump_rc(qp, f, now);
    }
  }
}

bool Requester::send_rc_packet(Qp& qp, Flow& f, Message& m, std::uint64_t now) {
  switch (m.kind) {
    case Kind::kRead:
      send_read_request(qp, m);
      break;
    case Kind::kAtomic:
      send_atomic(qp, m);
      m.sent = m.packets;
      break;
    case Kind::kSend:
    case Kind::kWrite:
      if (!send_segment(qp, psn::add(m.first_psn, m.sent), m, m.sent)) {
        // The MR went away under a message being sent.
        m.local_error = WcStatus::kLocProtErr;
        return false;
      }
      ++m.sent;
      break;
  }
  // The transport timer runs while a request waits for its response (spec-facts §8).
  if (!f.ack_deadline) {
    if (auto t = ack_timeout(qp)) f.ack_deadline = now + *t;
  }
  return true;
}

Packet Requester::header(Qp& qp, std::uint8_t opcode, std::uint32_t psn) {
  const QpAttr& a = qp.attr();
  Packet p = nic_.wire().packet_to(a.ah_attr, qp.qp_num(), a.dest_qp_num,
                                   qp.pkey().value_or(kDefaultPkey));
  p.bth->opcode = opcode;
  p.bth->psn = psn;
  // MigReq reports the path migration state: set while migrated, as IB HCAs send it (qib/hfi1).
  p.bth->migreq = a.path_mig_state == MigState::kMigrated;
  return p;
}

bool Requester::send_segment(Qp& qp, std::uint32_t psn, const Message& m, std::uint32_t index) {
  // FIRST and MIDDLE carry exactly the PMTU, LAST and ONLY the rest (spec-facts §5).
  const std::uint32_t pmtu = qp.path_mtu_bytes();
  const std::uint64_t offset = std::uint64_t{index} * pmtu;
  const std::uint64_t n = std::min<std::uint64_t>(pmtu, m.length - offset);
  std::vector<std::uint8_t> data;
  Bytes payload;
  if (m.wr.send_flags & send_flag::kInline) {
    payload = Bytes(m.wr.inline_data).subspan(offset, n);
  } else {
    auto gathered = nic_.device().mr_table().gather(qp.pd(), sge_slice(m.wr.sg_list, offset, n));
    if (!gathered) return false;
    data = std::move(*gathered);
    payload = data;
  }
  const bool uc = qp.qp_type() == QpType::kUc;
  const std::uint8_t op = segment_opcode(m.wr.opcode, index, m.packets, uc);
  const std::uint16_t headers = opcode_info(op).headers;
  const bool last = index + 1 == m.packets;
  Packet p = header(qp, op, psn);
  // The RETH of a WRITE's first packet carries the whole message's length (spec-facts §4.6).
  if (headers & hdr::kReth) {
    p.reth = Reth{m.wr.rdma.remote_addr, m.wr.rdma.rkey, static_cast<std::uint32_t>(m.length)};
  }
  if (headers & hdr::kImmDt) p.immdt = ImmDt{m.wr.imm_data};
  if (headers & hdr::kIeth) p.ieth = Ieth{m.wr.invalidate_rkey};
  // A solicited event is asked for on the last packet of a SEND or a WRITE with immediate.
  const bool solicitable = m.kind == Kind::kSend || m.wr.opcode == WrOpcode::kRdmaWriteWithImm;
  p.bth->solicited = last && solicitable && (m.wr.send_flags & send_flag::kSolicited);
  // RC asks for an acknowledgement at the end of each message; UC has none.
  p.bth->ackreq = last && !uc;
  p.payload = payload;
  nic_.wire().send(p);
  return true;
}

void Requester::send_read_request(Qp& qp, Message& m) {
  // A retry from the middle of a READ asks for the rest only: its PSN, address and length
  // start at the first response not received (spec-facts §4.3: a subset of the original).
  const std::uint64_t offset =
      std::min<std::uint64_t>(std::uint64_t{m.sent} * qp.path_mtu_bytes(), m.length);
  Packet p = header(qp, opcode::kRcReadRequest, psn::add(m.first_psn, m.sent));
  p.reth = Reth{m.wr.rdma.remote_addr + offset, m.wr.rdma.rkey,
                static_cast<std::uint32_t>(m.length - offset)};
  p.bth->ackreq = true;
  if (std::find(m.read_starts.begin(), m.read_starts.end(), m.sent) == m.read_starts.end()) {
    m.read_starts.push_back(m.sent);
  }
  m.sent = m.packets;
  nic_.wire().send(p);
}

void Requester::send_atomic(Qp& qp, const Message& m) {
  const bool cas = m.wr.opcode == WrOpcode::kAtomicCmpAndSwp;
  Packet p = header(qp, cas ? opcode::kRcCompareSwap : opcode::kRcFetchAdd, m.first_psn);
  const SendWr::Atomic& a = m.wr.atomic;
  // CMP_SWAP: swap value and compare value; FETCH_ADD: the addend, compare unused.
  p.atomiceth =
      AtomicEth{a.remote_addr, a.rkey, cas ? a.swap : a.compare_add, cas ? a.compare_add : 0};
  p.bth->ackreq = true;
  nic_.wire().send(p);
}

void Requester::pump_unreliable(Qp& qp, Flow& f) {
  auto& sq = qp.send_queue();
  const bool stale_quirk = nic_.quirks().has(Quirk::kStaleSqOnRts);
  while (qp.can_send() && !sq.empty()) {
    const SendWr wr = wire_wr(qp, f, 0);  // a copy: completing pops the WQE
    f.last_doorbell = sq.front().doorbell;
    sq.front().started = true;
    const std::uint64_t seq = sq.front().seq;
    WcStatus status = WcStatus::kSuccess;
    if (is_local_op(wr.opcode)) {
      status = nic_.device().execute_local_op(qp, wr);
    } else if (qp.qp_type() == QpType::kUc) {
      // UC: segmented like RC, no acknowledgement; done once the last packet is out.
      Message m = start(qp, wr, seq);
      if (m.local_error) {
        status = *m.local_error;
      } else {
        m.first_psn = f.next_psn;
        f.next_psn = psn::add(f.next_psn, m.packets);
        for (std::uint32_t k = 0; k < m.packets && status == WcStatus::kSuccess; ++k) {
          if (!send_segment(qp, psn::add(m.first_psn, k), m, k)) status = WcStatus::kLocProtErr;
        }
      }
    } else {
      status = send_ud(qp, f, wr);
    }
    if (stale_quirk) stale_.completed(qp.qp_num(), seq);
    qp.complete_send(status,
                     status == WcStatus::kSuccess ? static_cast<std::uint32_t>(wr.length()) : 0);
    if (status != WcStatus::kSuccess) {
      // A UC/UD send error stops the send queue only (SQE).
      qp.enter_sqe();
      if (stale_quirk) stale_.flushed(qp.qp_num());
      return;
    }
  }
}

WcStatus Requester::send_ud(Qp& qp, Flow& f, const SendWr& wr) {
  // One packet per message. A UD payload above the port's MTU is not sent and is no error
  // (C10-93.1.1); the ud-oversize-error defect makes it a local length error.
  if (wr.length() > path_mtu_bytes(nic_.device().port().attr.active_mtu)) {
    if (nic_.quirks().has(Quirk::kUdOversizeError)) return WcStatus::kLocLenErr;
    f.next_psn = psn::add(f.next_psn, 1);
    return WcStatus::kSuccess;
  }
  std::vector<std::uint8_t> data;
  if (wr.send_flags & send_flag::kInline) {
    data = wr.inline_data;
  } else {
    auto gathered = nic_.device().mr_table().gather(qp.pd(), wr.sg_list);
    if (!gathered) return WcStatus::kLocProtErr;
    data = std::move(*gathered);
  }
  const std::uint32_t qpn = qp.qp_num();
  Packet p =
      nic_.wire().packet_to(wr.ud.ah, qpn, wr.ud.remote_qpn, qp.pkey().value_or(kDefaultPkey));
  const bool imm = wr.opcode == WrOpcode::kSendWithImm;
  p.bth->opcode = imm ? opcode::kUdSendOnlyImm : opcode::kUdSendOnly;
  p.bth->solicited = (wr.send_flags & send_flag::kSolicited) != 0;
  p.bth->psn = f.next_psn;
  f.next_psn = psn::add(f.next_psn, 1);
  const bool controlled =
      (wr.ud.remote_qkey & kControlledQkey) && !nic_.quirks().has(Quirk::kControlledQkeyIgnored);
  const std::uint32_t qkey = controlled ? qp.attr().qkey : wr.ud.remote_qkey;
  p.deth = Deth{qkey, 0, qpn};
  if (imm) p.immdt = ImmDt{wr.imm_data};
  p.payload = data;
  nic_.wire().send(p);
  return WcStatus::kSuccess;
}

// ---- responses (RC) ----------------------------------------------------------------------------

void Requester::wedge(Qp& qp) {
  if (Flow* f = flow_of(qp)) {
    f->ack_deadline.reset();
    f->rnr_deadline.reset();
  }
  wedged_.insert(qp.qp_num());
}

void Requester::on_response(Qp& qp, const Packet& packet, std::uint64_t now_ns) {
  if (qp.qp_type() != QpType::kRc || !packet.bth || wedged_.contains(qp.qp_num())) return;
  Flow* f = flow_of(qp);
  if (!f) return;
  const std::uint32_t psn = packet.bth->psn;
  // Behind the oldest unacknowledged PSN: a duplicate or stale response; at or past the next
  // PSN: it answers nothing we sent. Both are ignored (spec-facts §8).
  if (psn::diff(psn, f->comp_psn) < 0) return;
  if (psn::diff(psn, f->next_psn) >= 0) {
    if (!nic_.quirks().has(Quirk::kGhostAckCompletes) ||
        opcode_info(packet.bth->opcode).kind != OpKind::kAck || f->messages.empty())
      return;
    while (!f->messages.empty()) complete_front(qp, *f, WcStatus::kSuccess);
    progressed(qp, *f, now_ns);
    settle(qp);
    return;
  }
  if (complete_before(qp, *f, psn, now_ns)) {
    switch (opcode_info(packet.bth->opcode).kind) {
      case OpKind::kAck:
        on_ack(qp, *f, packet, now_ns);
        break;
      case OpKind::kReadResponse:
        on_read_response(qp, *f, packet, now_ns);
        break;
      case OpKind::kAtomicAck:
        on_atomic_ack(qp, *f, packet, now_ns);
        break;
      default:
        break;
    }
  }
  // Completions free READ/atomic slots; a retry has its packets to send.
  pump(qp, *f, now_ns);
  settle(qp);
}

bool Requester::complete_before(Qp& qp, Flow& f, std::uint32_t psn, std::uint64_t now) {
  // Any response acknowledges every SEND/WRITE packet before its PSN: coalesced ACKs, READ
  // responses and NAKs alike (spec-facts §4.4, §8).
  bool progress = false;
  while (!f.messages.empty()) {
    Message& m = f.messages.front();
    if (m.local_error) {
      fail(qp, f, *m.local_error);
      return false;
    }
    if (!psn_before(m.last_psn(), psn)) break;
    if (is_rd_atomic(m.kind)) {
      // Responses come in PSN order, so one past an unanswered READ or atomic means its
      // responses were lost: an implied NAK.
      if (progress) progressed(qp, f, now);
      implied_nak(qp, f, now);
      return false;
    }
    complete_front(qp, f, WcStatus::kSuccess);
    progress = true;
    if (nic_.quirks().has(Quirk::kCoalescedAckCompletesOne)) {
      progressed(qp, f, now);
      return false;  // the rest of this response is not looked at
    }
  }
  if (f.messages.empty()) {
    if (progress) progressed(qp, f, now);
    return false;
  }
  if (!is_rd_atomic(f.messages.front().kind) && psn::diff(psn, f.comp_psn) > 0) {
    f.comp_psn = psn;
    progress = true;
  }
  if (progress) progressed(qp, f, now);
  return true;
}

void Requester::on_ack(Qp& qp, Flow& f, const Packet& packet, std::uint64_t now) {
  if (!packet.aeth) return;
  const std::uint8_t syn = packet.aeth->syndrome;
  const std::uint32_t psn = packet.bth->psn;
  // A reserved syndrome (bit 7, type 10, NAK code above 0x64) is a malformed response.
  if (syndrome_reserved(syn)) return fail(qp, f, WcStatus::kBadRespErr);
  switch (aeth_type(syn)) {
    case AethType::kAck: {
      const Message& m = f.messages.front();
      // An ACK covering READ/atomic PSNs whose responses never came: they were lost.
      if (is_rd_atomic(m.kind)) return implied_nak(qp, f, now);
      if (psn == m.last_psn()) {
        complete_front(qp, f, WcStatus::kSuccess);
      } else {
        f.comp_psn = psn::add(psn, 1);
      }
      progressed(qp, f, now);
      return;
    }
    case AethType::kRnrNak:
      return on_rnr_nak(qp, f, psn, aeth_value(syn), now);
    case AethType::kNak:
      // Sequence error: go back to the PSN the responder expects; the others end the WQE.
      if (syn == syndrome::kNakPsnSeqError) {
        const std::uint32_t from =
            nic_.quirks().has(Quirk::kGoBackNFromStart) ? f.messages.front().first_psn : psn;
        if (nic_.quirks().has(Quirk::kRetransmitTwicePerNak)) {
          f.rewind(from);
          pump_rc(qp, f, now);
        }
        return retry(qp, f, from, now);
      }
      return fail(qp, f, nak_status(syn));
    case AethType::kReserved:
      return fail(qp, f, WcStatus::kBadRespErr);
  }
}

void Requester::on_read_response(Qp& qp, Flow& f, const Packet& packet, std::uint64_t now) {
  Message& m = f.messages.front();
  const std::uint32_t psn = packet.bth->psn;
  if (m.kind != Kind::kRead) return fail(qp, f, WcStatus::kBadRespErr);
  if (psn != f.comp_psn) return implied_nak(qp, f, now);  // a gap: responses were lost
  const auto k = static_cast<std::uint32_t>(psn::diff(psn, m.first_psn));
  const bool last = k + 1 == m.packets;
  const bool restart =
      std::find(m.read_starts.begin(), m.read_starts.end(), k) != m.read_starts.end();
  const std::uint8_t op = packet.bth->opcode;
  // FIRST/ONLY open a response sequence where a request started, MIDDLE/LAST continue one;
  // FIRST, LAST and ONLY carry an AETH of type ACK (spec-facts §4.4, §8).
  bool order_ok = false;
  switch (op) {
    case opcode::kRcReadResponseFirst:
      order_ok = restart && !last;
      break;
    case opcode::kRcReadResponseMiddle:
      order_ok = k > 0 && !last;
      break;
    case opcode::kRcReadResponseLast:
      order_ok = k > 0 && last;
      break;
    case opcode::kRcReadResponseOnly:
      order_ok = restart && last;
      break;
    default:
      break;
  }
  const bool aeth_ok = op == opcode::kRcReadResponseMiddle ||
                       (packet.aeth && aeth_type(packet.aeth->syndrome) == AethType::kAck &&
                        !syndrome_reserved(packet.aeth->syndrome));
  // Responses are cut at the PMTU like requests: FIRST/MIDDLE exactly, LAST/ONLY the rest.
  const std::uint32_t pmtu = qp.path_mtu_bytes();
  const std::uint64_t offset = std::uint64_t{k} * pmtu;
  const std::uint64_t want = last ? m.length - offset : pmtu;
  if (!order_ok || !aeth_ok || packet.payload.size() != want) {
    return fail(qp, f, WcStatus::kBadRespErr);
  }
  if (want > 0) {
    auto placed = nic_.device().mr_table().scatter(qp.pd(), sge_slice(m.wr.sg_list, offset, want),
                                                   packet.payload);
    if (!placed) {
      return fail(qp, f,
                  placed.error().fault == AccessFault::kLengthError ? WcStatus::kLocLenErr
                                                                    : WcStatus::kLocProtErr);
    }
  }
  f.comp_psn = psn::add(psn, 1);
  if (last) complete_front(qp, f, WcStatus::kSuccess);
  progressed(qp, f, now);
}

void Requester::on_atomic_ack(Qp& qp, Flow& f, const Packet& packet, std::uint64_t now) {
  const Message& m = f.messages.front();
  const bool ok = m.kind == Kind::kAtomic && packet.aeth && packet.atomicacketh &&
                  aeth_type(packet.aeth->syndrome) == AethType::kAck &&
                  !syndrome_reserved(packet.aeth->syndrome);
  if (!ok) return fail(qp, f, WcStatus::kBadRespErr);
  // The original remote value lands in the local 8-byte buffer as a host integer; this NIC
  // models a little-endian host, as the responder reads and writes target memory.
  std::array<std::uint8_t, 8> orig{};
  for (std::size_t i = 0; i < orig.size(); ++i) {
    orig[i] = static_cast<std::uint8_t>(packet.atomicacketh->orig >> (8 * i));
  }
  if (auto placed = nic_.device().mr_table().scatter(qp.pd(), m.wr.sg_list, orig); !placed) {
    return fail(qp, f, WcStatus::kLocProtErr);
  }
  complete_front(qp, f, WcStatus::kSuccess);
  progressed(qp, f, now);
}

void Requester::on_rnr_nak(Qp& qp, Flow& f, std::uint32_t psn, std::uint8_t timer,
                           std::uint64_t now) {
  nic_.device().counters().rnr_nak_received++;
  // rnr_retry 7 retries for ever (spec-facts §8).
  if (qp.attr().rnr_retry != kRnrRetryInfinite) {
    if (f.rnr_left == 0) return fail(qp, f, WcStatus::kRnrRetryExcErr);
    --f.rnr_left;
  }
  // Nothing goes out until the responder's RNR timer has passed; then from the NAKed PSN.
  f.ack_deadline.reset();
  f.rnr_psn = psn;
  f.rnr_deadline = nic_.quirks().has(Quirk::kRnrTimerIgnored)
                       ? now
                       : now + std::uint64_t{rnr_timer_usec(timer)} * 1000;
}

void Requester::implied_nak(Qp& qp, Flow& f, std::uint64_t now) {
  // Later responses of the same lost burst must not retry again.
  if (f.implied_nak_sent) return;
  f.implied_nak_sent = true;
  const bool whole = nic_.quirks().has(Quirk::kReadRerequestFromStart) && !f.messages.empty() &&
                     f.messages.front().kind == Kind::kRead;
  retry(qp, f, whole ? f.messages.front().first_psn : f.comp_psn, now);
}

void Requester::retry(Qp& qp, Flow& f, std::uint32_t from, std::uint64_t now) {
  // Each retransmission without progress uses one of retry_cnt; retry_cnt + 1 transmissions in
  // all, then the WQE fails (spec-facts §8).
  if (f.retries_left == 0) return fail(qp, f, WcStatus::kRetryExcErr);
  if (!nic_.quirks().has(Quirk::kRetryCountIgnored)) --f.retries_left;
  f.rewind(from);
  f.ack_deadline.reset();  // restarted by the first packet sent again
  pump_rc(qp, f, now);
}

void Requester::progressed(Qp& qp, Flow& f, std::uint64_t now) {
  const QpAttr& a = qp.attr();
  f.retries_left = a.retry_cnt;
  f.rnr_left = a.rnr_retry;
  f.implied_nak_sent = false;
  f.ack_deadline.reset();
  if (f.outstanding() && !f.rnr_deadline) {
    if (auto t = ack_timeout(qp)) f.ack_deadline = now + *t;
  }
}

bool Requester::run_local_op(Qp& qp, Flow& f, std::size_t index) {
  auto& sq = qp.send_queue();
  const SendWr wr = sq[index].wr;  // a copy: completing pops the WQE
  f.last_doorbell = sq[index].doorbell;
  sq[index].started = true;
  const WcStatus status = nic_.device().execute_local_op(qp, wr);
  if (nic_.quirks().has(Quirk::kStaleSqOnRts)) stale_.completed(qp.qp_num(), sq[index].seq);
  qp.complete_send(status, 0);
  if (status == WcStatus::kSuccess) return true;
  // A failed bind or invalidation is a completion error: the QP goes to ERR (spec-facts §8).
  qp.enter_error();
  if (nic_.quirks().has(Quirk::kStaleSqOnRts)) stale_.flushed(qp.qp_num());
  return false;
}

void Requester::complete_front(Qp& qp, Flow& f, WcStatus status) {
  Message m = std::move(f.messages.front());
  f.messages.pop_front();
  if (!m.local_error && is_rd_atomic(m.kind)) --f.rd_atomic;
  if (status == WcStatus::kSuccess) f.comp_psn = psn::add(m.last_psn(), 1);
  if (nic_.quirks().has(Quirk::kStaleSqOnRts)) stale_.completed(qp.qp_num(), m.seq);
  qp.complete_send(status, status == WcStatus::kSuccess ? static_cast<std::uint32_t>(m.length) : 0);
}

void Requester::fail(Qp& qp, Flow& f, WcStatus status) {
  if (status == WcStatus::kRetryExcErr || status == WcStatus::kRnrRetryExcErr) {
    nic_.device().counters().retry_exceeded++;
  }
  if (!f.messages.empty()) complete_front(qp, f, status);
  f.messages.clear();
  f.rd_atomic = 0;
  f.ack_deadline.reset();
  f.rnr_deadline.reset();
  // An error completion breaks an RC connection: the QP goes to ERR and the rest of its work
  // is flushed (spec-facts §8). The flow itself goes once the caller is done with it.
  qp.enter_error();
  if (nic_.quirks().has(Quirk::kStaleSqOnRts)) stale_.flushed(qp.qp_num());
}

// ---- timers ------------------------------------------------------------------------------------

void Requester::on_ack_timeout(Qp& qp, Flow& f, std::uint64_t now) {
  f.ack_deadline.reset();
  if (!f.outstanding()) return;
  nic_.device().counters().local_ack_timeout++;
  f.implied_nak_sent = false;
  // Everything from the oldest unacknowledged PSN goes again.
  retry(qp, f, f.comp_psn, now);
}

void Requester::on_rnr_wait_over(Qp& qp, Flow& f, std::uint64_t now) {
  f.rnr_deadline.reset();
  f.rewind(f.rnr_psn);
  pump_rc(qp, f, now);
}

void Requester::tick(std::uint64_t now_ns) {
  std::vector<std::uint32_t> due;
  for (const auto& [qpn, f] : flows_) {
    if ((f->rnr_deadline && *f->rnr_deadline <= now_ns) ||
        (f->ack_deadline && *f->ack_deadline <= now_ns)) {
      due.push_back(qpn);
    }
  }
  for (const std::uint32_t qpn : due) {
    Qp* qp = nic_.device().qp(qpn);
    if (!qp) {
      flows_.erase(qpn);
      continue;
    }
    Flow* f = flow_of(*qp);
    if (!f) continue;
    if (f->rnr_deadline && *f->rnr_deadline <= now_ns) {
      on_rnr_wait_over(*qp, *f, now_ns);
    } else if (f->ack_deadline && *f->ack_deadline <= now_ns) {
      on_ack_timeout(*qp, *f, now_ns);
    }
    settle(*qp);
  }
}

std::optional<std::uint64_t> Requester::next_deadline() const {
  std::optional<std::uint64_t> next;
  for (const auto& [qpn, f] : flows_) {
    for (const auto& d : {f->ack_deadline, f->rnr_deadline}) {
      if (d && (!next || *d < *next)) next = d;
    }
  }
  return next;
}

}  // namespace roceconf::target
