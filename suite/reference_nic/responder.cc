// Over 600 lines: the receive path, one function per opcode class around one PSN check.
#include "suite/reference_nic/responder.h"

#include <algorithm>
#include <array>

#include "dissector/analysis/psn.h"
#include "dissector/names.h"
#include "suite/reference_nic/nic.h"
#include "suite/reference_nic/receive_placement.h"
#include "suite/reference_nic/requester.h"

namespace roceconf::target {

namespace {

constexpr std::uint8_t kAckUnlimited = 0x1F;  // ACK without end-to-end credits (spec-facts §3.3)
constexpr std::uint32_t kMsnMask = 0xFFFFFF;
constexpr std::uint32_t kMaxDmaLength = 0x80000000u;  // 2^31, the largest message (spec-facts §4.6)
// Verbs leaves the first 40 bytes of every UD receive buffer for the GRH.
constexpr std::size_t kGrhSpace = 40;

bool starts_message(Position p) {
  return p == Position::kFirst || p == Position::kOnly;
}
bool ends_message(Position p) {
  return p == Position::kLast || p == Position::kOnly;
}

bool is_read_or_atomic(OpKind kind) {
  return kind == OpKind::kReadRequest || kind == OpKind::kCompareSwap ||
         kind == OpKind::kFetchAdd || kind == OpKind::kAtomicWrite;
}

// Atomics work on a 64-bit word in the responder's memory, in the host order of the machines
// verbs runs on (little-endian); the AtomicETH and AtomicAckETH carry it big-endian.
std::uint64_t load_host64(std::span<const std::uint8_t> b) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i) v |= std::uint64_t{b[i]} << (8 * i);
  return v;
}
void store_host64(std::span<std::uint8_t> b, std::uint64_t v) {
  for (std::size_t i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

void complete_message(ResponderState& st) {
  st.msn = (st.msn + 1) & kMsnMask;
}

}  // namespace

Responder::Responder(Nic& nic) : nic_(nic) {}

Responder::~Responder() = default;

const ResponderState* Responder::state(std::uint32_t qp_num) const {
  const auto it = states_.find(qp_num);
  return it == states_.end() ? nullptr : &it->second;
}

ResponderState* Responder::mutable_state(std::uint32_t qp_num) {
  const auto it = states_.find(qp_num);
  return it == states_.end() ? nullptr : &it->second;
}

void Responder::forget(std::uint32_t qp_num) {
  states_.erase(qp_num);
}

void Responder::on_request(Qp& qp, const Packet& p, std::uint64_t now_ns) {
  now_ = now_ns;
  if (!p.bth) return;
  switch (qp.qp_type()) {
    case QpType::kRc:
    case QpType::kUc: {
      const auto [it, fresh] = states_.try_emplace(qp.qp_num());
      ResponderState& st = it->second;
      if (fresh) st.epsn = qp.attr().rq_psn & psn::kMask;
      st.resources.resize(qp.attr().max_dest_rd_atomic);
      if (qp.qp_type() == QpType::kRc)
        rc_request(qp, st, p);
      else
        uc_request(qp, st, p);
      // A class A/C error moved the QP to ERR: nothing is kept for it.
      if (!qp.can_receive()) states_.erase(qp.qp_num());
      break;
    }
    case QpType::kUd:
      ud_request(qp, p);
      break;
    case QpType::kGsi:
      break;  // QP1's MADs belong to the CM agent
  }
  // Told after the request is handled, so the CM may move the QP to RTS from the callback.
  if (comm_est_) {
    const std::uint32_t qp_num = *comm_est_;
    comm_est_.reset();
    if (on_first_request) on_first_request(qp_num);
  }
}

// ---- RC -------------------------------------------------------------------------------------

void Responder::rc_request(Qp& qp, ResponderState& st, const Packet& p) {
  const Bth& b = *p.bth;
  const Quirks& quirks = nic_.quirks();
  Counters& counters = nic_.device().counters();
  bool gap_accepted = false;
  switch (psn::classify(b.psn, st.epsn)) {
    case psn::Region::kExpected:
      st.nak_sent = false;
      break;
    case psn::Region::kDuplicate:
      counters.duplicate_request++;
      rc_duplicate(qp, st, p);
      return;
    case psn::Region::kInvalid:
      if (quirks.has(Quirk::kPsnGapAck)) {
        // The defect: the gap goes unnoticed, the packet is taken as the expected one and ACKed.
        st.epsn = b.psn;
        st.nak_sent = false;
        gap_accepted = true;
        break;
      }
      counters.out_of_sequence++;
      // Class B (spec-facts §4.2): one NAK sequence error per gap, carrying the expected PSN;
      // later packets of the gap are dropped silently until the expected PSN arrives.
      if (st.nak_sent && !quirks.has(Quirk::kPsnNakRepeat)) return;
      st.nak_sent = true;
      counters.seq_nak_sent++;
      send_ack(qp, st, syndrome::kNakPsnSeqError, st.epsn);
      return;
  }
  report_first_request(qp, st);
  rc_finish(qp, st, p, execute(qp, st, p, Advance::kYes), gap_accepted);
}

void Responder::rc_finish(Qp& qp, ResponderState& st, const Packet& p, const Outcome& outcome,
                          bool force_ack) {
  const Bth& b = *p.bth;
  switch (outcome.kind) {
    case OutcomeKind::kDone: {
      // READ and atomic responses acknowledge by themselves. SEND and WRITE packets are ACKed
      // when the requester asks (AckReq); otherwise the next ACK covers them (coalescing).
      const OpKind kind = opcode_info(b.opcode).kind;
      if ((kind == OpKind::kSend || kind == OpKind::kWrite) && (b.ackreq || force_ack))
        send_ack(qp, st, kAckUnlimited, b.psn);
      return;
    }
    case OutcomeKind::kRnr:
      // Class B (spec-facts §3.3): the packet is not consumed; the requester retries it after
      // the RNR timer.
      if (nic_.quirks().has(Quirk::kRnrAsNak)) {
        send_ack(qp, st, syndrome::kNakInvalidRequest, b.psn);
        return;
      }
      nic_.device().counters().rnr_nak_sent++;
      send_ack(qp, st,
               static_cast<std::uint8_t>(syndrome::kRnrBase | (qp.attr().min_rnr_timer & 0x1F)),
               b.psn);
      return;
    case OutcomeKind::kFailed:
      fail(qp, st, b.psn, outcome);
      return;
  }
}

void Responder::rc_duplicate(Qp& qp, ResponderState& st, const Packet& p) {
  const Bth& b = *p.bth;
  const OpcodeInfo& op = opcode_info(b.opcode);
  switch (op.kind) {
    case OpKind::kSend:
    case OpKind::kWrite: {
      const std::uint32_t last_acked = psn::add(st.epsn, -1);
      if (nic_.quirks().has(Quirk::kDupReexecute)) {
        // The defect: the duplicate is placed and completed again.
        const Outcome outcome = execute(qp, st, p, Advance::kNo);
        if (outcome.kind != OutcomeKind::kDone) {
          rc_finish(qp, st, p, outcome, false);
          return;
        }
      }
      // C9-105: never executed again; ACKed again with the last acknowledged PSN, AckReq or not.
      send_ack(qp, st, kAckUnlimited, last_acked);
      return;
    }
    case OpKind::kReadRequest: {
      // spec-facts §4.3: replay from the saved resource, for the same READ or a part of it.
      // Without a resource, or for more than was asked first, the request is dropped (class D).
      const ResponderResource* res = st.resources.find(b.psn);
      const Reth& r = *p.reth;
      if (!res || res->kind != ResponderResource::Kind::kRead || r.rkey != res->rkey ||
          r.va < res->va || r.va + r.dmalen > res->va + res->length)
        return;
      // Memory is read again, so the MR is checked again (it may be gone since).
      auto span = nic_.device().check_remote(qp, r.rkey, r.va, r.dmalen, access::kRemoteRead);
      if (!span) {
        fail(qp, st, b.psn,
             Outcome{OutcomeKind::kFailed, {Fault::kRemoteAccess, WcStatus::kRemAccessErr}, false});
        return;
      }
      send_read_responses(qp, st, b.psn, span->bytes);
      return;
    }
    case OpKind::kCompareSwap:
    case OpKind::kFetchAdd:
    case OpKind::kAtomicWrite: {
      // spec-facts §4.3: the saved result is sent again; the operation is never repeated.
      const bool write = op.kind == OpKind::kAtomicWrite;
      const ResponderResource* res = st.resources.find(b.psn);
      const auto want =
          write ? ResponderResource::Kind::kAtomicWrite : ResponderResource::Kind::kAtomic;
      if (!res || res->kind != want || res->first_psn != b.psn) return;
      if (write)
        send_atomic_write_ack(qp, st, b.psn);
      else
        send_atomic_ack(qp, st, b.psn, res->original);
      return;
    }
    default:
      return;
  }
}

// ---- execution (RC and UC) -------------------------------------------------------------------

Responder::Outcome Responder::execute(Qp& qp, ResponderState& st, const Packet& p,
                                      Advance advance) {
  const OpcodeInfo& op = *p.opcode();
  const Failure invalid{Fault::kInvalidRequest, WcStatus::kRemInvReqErr};
  const bool in_send = st.message && st.message->kind == InboundMessage::Kind::kSend;

  // Opcode sequence (spec-facts §4.5): MIDDLE and LAST continue the message in
  // progress and nothing else may come between its FIRST and LAST.
  if (st.message) {
    const OpKind continuing = in_send ? OpKind::kSend : OpKind::kWrite;
    if (op.kind != continuing || starts_message(op.position))
      return Outcome{OutcomeKind::kFailed, invalid, in_send};
  } else if (!starts_message(op.position)) {
    return Outcome{OutcomeKind::kFailed, invalid, false};
  }

  // The QP's remote access rights (spec-facts §4.5). FLUSH needs the persistence rights this
  // model's verbs lack: an unsupported operation, so an invalid request.
  AccessFlags needed = 0;
  switch (op.kind) {
    case OpKind::kSend:
      break;
    case OpKind::kWrite:
    case OpKind::kAtomicWrite:
      needed = access::kRemoteWrite;
      break;
    case OpKind::kReadRequest:
      needed = access::kRemoteRead;
      break;
    case OpKind::kCompareSwap:
    case OpKind::kFetchAdd:
      needed = access::kRemoteAtomic;
      break;
    default:
      return Outcome{OutcomeKind::kFailed, invalid, in_send};
  }
  if ((qp.attr().qp_access_flags & needed) != needed)
    return Outcome{OutcomeKind::kFailed, invalid, false};

  // Resources: READ and atomics need responder resources (none negotiated: invalid request); a
  // SEND's first packet and an RDMA WRITE with immediate need a receive WQE (none: RNR).
  if (is_read_or_atomic(op.kind) && qp.attr().max_dest_rd_atomic == 0)
    return Outcome{OutcomeKind::kFailed, invalid, false};
  // C10-87: an RDMA WRITE without immediate consumes no receive WQE (write-consumes-receive:
  // its first packet claims one).
  const bool write_claims = (op.headers & hdr::kImmDt) ||
                            (nic_.quirks().has(Quirk::kWriteConsumesReceive) &&
                             op.position != Position::kMiddle && op.position != Position::kLast);
  const bool takes_wqe = (op.kind == OpKind::kSend && starts_message(op.position)) ||
                         (op.kind == OpKind::kWrite && write_claims);
  if (takes_wqe && qp.recv_queue().empty()) return Outcome{OutcomeKind::kRnr, {}, false};
  const bool claimed = in_send || takes_wqe;

  if (auto failure = check_length(qp, p)) return Outcome{OutcomeKind::kFailed, *failure, claimed};
  // SEND with invalidate (o10-37.2.17): a peer may invalidate only a type 2 window bound to this
  // QP; regions here are ibv_reg_mr regions, which it may not. Anything else: invalid request.
  if ((op.headers & hdr::kIeth) && (!p.ieth || !nic_.device().mw_table().check_remote_invalidate(
                                                   MwAccessor{qp.pd(), qp.qp_num()}, p.ieth->rkey)))
    return Outcome{OutcomeKind::kFailed, invalid, claimed};

  switch (op.kind) {
    case OpKind::kSend:
      return execute_send(qp, st, p, advance);
    case OpKind::kWrite:
      return execute_write(qp, st, p, advance);
    case OpKind::kReadRequest:
      return execute_read(qp, st, p, advance);
    case OpKind::kCompareSwap:
    case OpKind::kFetchAdd:
      return execute_atomic(qp, st, p, advance);
    default:
      return execute_atomic_write(qp, st, p, advance);
  }
}

std::optional<Responder::Failure> Responder::check_length(const Qp& qp, const Packet& p) const {
  const OpcodeInfo& op = *p.opcode();
  const std::size_t len = p.payload.size();
  const Failure invalid{Fault::kInvalidRequest, WcStatus::kRemInvReqErr};
  // Payload and pad fill whole 4-byte words with the fewest pad bytes (spec-facts §2 PadCnt).
  if (p.has(FindingCode::kPadCount)) return invalid;
  // PMTU rules (spec-facts §5): FIRST/MIDDLE exactly PMTU, LAST 1..PMTU, ONLY 0..PMTU.
  const std::size_t pmtu = qp.path_mtu_bytes();
  const bool pmtu_checked = !nic_.quirks().has(Quirk::kMtuUnchecked);
  switch (op.payload) {
    case PayloadRule::kExactPmtu:
      if (pmtu_checked && len != pmtu) return invalid;
      break;
    case PayloadRule::kUpToPmtu1:
      if (len == 0 || (pmtu_checked && len > pmtu)) return invalid;
      break;
    case PayloadRule::kUpToPmtu0:
      if (pmtu_checked && len > pmtu) return invalid;
      break;
    case PayloadRule::kNoPayload:
      if (len != 0) return invalid;
      break;
    case PayloadRule::kExactly8:
      if (len != 8) return invalid;
      break;
    case PayloadRule::kUnknown:
      break;
  }
  // C9-94: a DMA length above 2^31 is a length error.
  if (p.reth && p.reth->dmalen > kMaxDmaLength && !nic_.quirks().has(Quirk::kDmaLengthUnchecked))
    return invalid;
  return std::nullopt;
}

Responder::Outcome Responder::execute_send(Qp& qp, ResponderState& st, const Packet& p,
                                           Advance advance) {
  const Bth& b = *p.bth;
  const OpcodeInfo& op = *p.opcode();
  // The message's receive WQE stays at the head of the queue until its LAST packet.
  if (qp.recv_queue().empty() ||
      (st.message && qp.recv_queue().front().seq != st.message->recv_seq))
    return Outcome{OutcomeKind::kFailed, {Fault::kRemoteOperational, WcStatus::kLocQpOpErr}, false};
  const RecvWqe& wqe = qp.recv_queue().front();
  if (starts_message(op.position))
    st.message = InboundMessage{.kind = InboundMessage::Kind::kSend, .recv_seq = wqe.seq};
  InboundMessage& m = *st.message;
  std::span<const std::uint8_t> data = p.payload;
  if (nic_.quirks().has(Quirk::kSendOverflowTruncated)) {
    // The defect: what does not fit the receive buffers is cut off without an error.
    const std::uint64_t capacity = sge_capacity(wqe.wr.sg_list);
    const std::uint64_t room = capacity > m.offset ? capacity - m.offset : 0;
    data = data.first(static_cast<std::size_t>(std::min<std::uint64_t>(data.size(), room)));
  }
  auto placed = place_at(nic_.device().mr_table(), qp.pd(), wqe.wr.sg_list, m.offset, data);
  if (!placed) {
    // Longer than the receive buffers: invalid request, the WQE ends in LOC_LEN_ERR. A bad
    // L_Key in the WQE is the responder's own fault: remote operational error.
    if (placed.error().fault == AccessFault::kLengthError)
      return Outcome{OutcomeKind::kFailed, {Fault::kInvalidRequest, WcStatus::kLocLenErr}, true};
    return Outcome{OutcomeKind::kFailed, {Fault::kRemoteOperational, WcStatus::kLocProtErr}, true};
  }
  m.offset += data.size();
  if (ends_message(op.position)) {
    Cqe cqe;
    cqe.opcode = WcOpcode::kRecv;
    cqe.byte_len = static_cast<std::uint32_t>(m.offset);
    if (p.immdt) {
      cqe.imm_data = p.immdt->imm;
      cqe.wc_flags |= wc_flag::kWithImm;
    }
    if (p.ieth) {
      // The window goes when the message completes; the completion names its key.
      nic_.device().mw_table().invalidate_remote(MwAccessor{qp.pd(), qp.qp_num()}, p.ieth->rkey);
      cqe.imm_data = p.ieth->rkey;
      cqe.wc_flags |= wc_flag::kWithInv;
    }
    st.message.reset();
    const RecvWqe done = *qp.take_recv();
    qp.complete_recv(done, cqe, b.solicited);
    complete_message(st);
  }
  if (advance == Advance::kYes) st.epsn = psn::add(b.psn, 1);
  return {};
}

Responder::Outcome Responder::execute_write(Qp& qp, ResponderState& st, const Packet& p,
                                            Advance advance) {
  const Bth& b = *p.bth;
  const OpcodeInfo& op = *p.opcode();
  const bool imm = p.immdt.has_value();
  // Whether the message holds a receive WQE: with immediate data, or by the defect.
  const bool claims = imm || nic_.quirks().has(Quirk::kWriteConsumesReceive);
  const Failure access_error{Fault::kRemoteAccess, WcStatus::kRemAccessErr};
  if (starts_message(op.position)) {
    // The whole range is checked at the first packet; a zero-length WRITE names no memory and
    // its R_Key is not checked (C9-88, spec-facts §4.6).
    const Reth& r = *p.reth;
    if (!nic_.device().check_remote(qp, r.rkey, r.va, r.dmalen, access::kRemoteWrite) ||
        !zero_length_key_ok(qp, r, access::kRemoteWrite))
      return Outcome{OutcomeKind::kFailed, access_error, claims};
    st.message = InboundMessage{
        .kind = InboundMessage::Kind::kWrite, .va = r.va, .rkey = r.rkey, .dma_length = r.dmalen};
  }
  InboundMessage& m = *st.message;
  // The packets carry exactly the RETH DMA length: never more, and LAST ends it (spec-facts §4.6).
  const std::uint64_t remaining = m.dma_length - m.offset;
  const std::size_t len = p.payload.size();
  if (len > remaining || (ends_message(op.position) && len != remaining))
    return Outcome{OutcomeKind::kFailed, {Fault::kInvalidRequest, WcStatus::kRemInvReqErr}, claims};
  if (len > 0) {
    // Checked again per packet: the MR may have been deregistered since the FIRST.
    auto span = nic_.device().check_remote(qp, m.rkey, m.va + m.offset, len, access::kRemoteWrite);
    if (!span) return Outcome{OutcomeKind::kFailed, access_error, claims};
    std::copy(p.payload.begin(), p.payload.end(), span->bytes.begin());
  }
  m.offset += len;
  if (ends_message(op.position)) {
    if (claims && !qp.recv_queue().empty()) {
      Cqe cqe;
      cqe.opcode = WcOpcode::kRecvRdmaWithImm;
      cqe.byte_len = m.dma_length;
      if (imm) {
        cqe.imm_data = p.immdt->imm;
        cqe.wc_flags = wc_flag::kWithImm;
      }
      const RecvWqe done = *qp.take_recv();
      qp.complete_recv(done, cqe, b.solicited);
    }
    st.message.reset();
    complete_message(st);
  }
  if (advance == Advance::kYes) st.epsn = psn::add(b.psn, 1);
  return {};
}

Responder::Outcome Responder::execute_read(Qp& qp, ResponderState& st, const Packet& p,
                                           Advance advance) {
  const Bth& b = *p.bth;
  const Reth& r = *p.reth;
  auto span = nic_.device().check_remote(qp, r.rkey, r.va, r.dmalen, access::kRemoteRead);
  if (!span || !zero_length_key_ok(qp, r, access::kRemoteRead))
    return Outcome{OutcomeKind::kFailed, {Fault::kRemoteAccess, WcStatus::kRemAccessErr}, false};
  // A READ takes one PSN per response packet, at least one (spec-facts §4.4).
  const std::uint64_t pmtu = qp.path_mtu_bytes();
  const auto packets =
      static_cast<std::uint32_t>(std::max<std::uint64_t>((r.dmalen + pmtu - 1) / pmtu, 1));
  // C9-148: the READ counts as a completed message once accepted.
  complete_message(st);
  st.resources.add({.kind = ResponderResource::Kind::kRead,
                    .first_psn = b.psn,
                    .last_psn = psn::add(b.psn, packets - 1),
                    .va = r.va,
                    .rkey = r.rkey,
                    .length = r.dmalen});
  if (advance == Advance::kYes) st.epsn = psn::add(b.psn, packets);
  send_read_responses(qp, st, b.psn, span->bytes);
  return {};
}

Responder::Outcome Responder::execute_atomic(Qp& qp, ResponderState& st, const Packet& p,
                                             Advance advance) {
  const Bth& b = *p.bth;
  const AtomicEth& a = *p.atomiceth;
  // Atomics work on naturally aligned 8-byte words (spec-facts §4.5).
  if (a.va & 7)
    return Outcome{OutcomeKind::kFailed, {Fault::kInvalidRequest, WcStatus::kRemInvReqErr}, false};
  auto span = nic_.device().check_remote(qp, a.rkey, a.va, 8, access::kRemoteAtomic);
  if (!span)
    return Outcome{OutcomeKind::kFailed, {Fault::kRemoteAccess, WcStatus::kRemAccessErr}, false};
  const std::uint64_t original = load_host64(span->bytes);
  std::uint64_t value = original + a.swap_add;
  if (b.opcode == opcode::kRcCompareSwap) value = original == a.compare ? a.swap_add : original;
  store_host64(span->bytes, value);
  complete_message(st);
  st.resources.add({.kind = ResponderResource::Kind::kAtomic,
                    .first_psn = b.psn,
                    .last_psn = b.psn,
                    .va = a.va,
                    .rkey = a.rkey,
                    .length = 8,
                    .original = original});
  if (advance == Advance::kYes) st.epsn = psn::add(b.psn, 1);
  send_atomic_ack(qp, st, b.psn, original);
  return {};
}

Responder::Outcome Responder::execute_atomic_write(Qp& qp, ResponderState& st, const Packet& p,
                                                   Advance advance) {
  const Bth& b = *p.bth;
  const Reth& r = *p.reth;
  // ATOMIC WRITE places one aligned 8-byte word, named by the RETH.
  if (r.dmalen != 8 || (r.va & 7))
    return Outcome{OutcomeKind::kFailed, {Fault::kInvalidRequest, WcStatus::kRemInvReqErr}, false};
  auto span = nic_.device().check_remote(qp, r.rkey, r.va, 8, access::kRemoteWrite);
  if (!span)
    return Outcome{OutcomeKind::kFailed, {Fault::kRemoteAccess, WcStatus::kRemAccessErr}, false};
  std::copy(p.payload.begin(), p.payload.end(), span->bytes.begin());
  complete_message(st);
  st.resources.add({.kind = ResponderResource::Kind::kAtomicWrite,
                    .first_psn = b.psn,
                    .last_psn = b.psn,
                    .va = r.va,
                    .rkey = r.rkey,
                    .length = 8});
  if (advance == Advance::kYes) st.epsn = psn::add(b.psn, 1);
  send_atomic_write_ack(qp, st, b.psn);
  return {};
}

bool Responder::zero_length_key_ok(const Qp& qp, const Reth& r, AccessFlags needed) {
  // The zero-length-rkey-checked defect validates the R_Key of a zero-length transfer as if it
  // named a byte; C9-88 says it is not checked.
  if (r.dmalen != 0 || !nic_.quirks().has(Quirk::kZeroLengthRkeyChecked)) return true;
  return nic_.device().check_remote(qp, r.rkey, r.va, 1, needed).has_value();
}

void Responder::report_first_request(Qp& qp, ResponderState& st) {
  if (st.comm_est || qp.state() != QpState::kRtr) return;
  // The first packet on a QP in RTR raises Communication Established (IBV_EVENT_COMM_EST), which
  // the CM takes in place of a lost RTU.
  st.comm_est = true;
  qp.raise(AsyncEventType::kCommEst);
  comm_est_ = qp.qp_num();
}

void Responder::fail(Qp& qp, ResponderState& st, std::uint32_t psn, const Outcome& outcome) {
  std::uint8_t nak = syndrome::kNakInvalidRequest;
  AsyncEventType event = AsyncEventType::kQpReqErr;
  switch (outcome.failure.fault) {
    case Fault::kInvalidRequest:
      break;
    case Fault::kRemoteAccess:
      nak = syndrome::kNakRemoteAccess;
      event = AsyncEventType::kQpAccessErr;
      break;
    case Fault::kRemoteOperational:
      nak = syndrome::kNakRemoteOperational;
      event = AsyncEventType::kQpFatal;
      break;
  }
  // Class A/C (spec-facts §4.5): the NAK goes first, carrying the request's PSN; then the receive
  // WQE the message held completes in error and the QP enters ERR, flushing the rest.
  send_ack(qp, st, nak, psn);
  if (outcome.wqe_claimed && !qp.recv_queue().empty()) {
    Cqe cqe;
    cqe.status = outcome.failure.wc_status;
    cqe.opcode = WcOpcode::kRecv;
    const RecvWqe wqe = *qp.take_recv();
    qp.complete_recv(wqe, cqe, true);
  }
  st.message.reset();
  const QpState from = qp.state();
  qp.enter_error(event);
  nic_.requester().on_state_change(qp, from, now_);
}

// ---- UC -------------------------------------------------------------------------------------

void Responder::uc_request(Qp& qp, ResponderState& st, const Packet& p) {
  const Bth& b = *p.bth;
  const bool start = starts_message(opcode_info(b.opcode).position);
  // spec-facts §4.2: UC never NAKs. A PSN other than the expected one means packets were lost:
  // the message in progress is abandoned and everything up to the next FIRST or ONLY dropped.
  if (b.psn != st.epsn || st.drop_to_first) {
    st.message.reset();
    if (!start) {
      st.drop_to_first = true;
      return;
    }
    st.drop_to_first = false;
  }
  // A new message while one is unfinished ends the unfinished one; its receive WQE, still at
  // the head of the queue, takes the new message.
  if (start) st.message.reset();
  report_first_request(qp, st);
  if (execute(qp, st, p, Advance::kYes).kind != OutcomeKind::kDone) {
    // Class D: the message is dropped silently and its receive WQE left for the next one.
    st.message.reset();
    st.drop_to_first = true;
  }
}

// ---- UD -------------------------------------------------------------------------------------

void Responder::ud_request(Qp& qp, const Packet& p) {
  const Bth& b = *p.bth;
  // UD checks no PSN and sends no ACK or RNR NAK: a datagram that finds no receive WQE, or is
  // malformed, is dropped silently (spec-facts §5).
  if (!p.deth || qp.recv_queue().empty() || p.has(FindingCode::kPadCount)) return;
  const std::size_t mtu = path_mtu_bytes(nic_.device().port().attr.active_mtu);
  if (!nic_.quirks().has(Quirk::kMtuUnchecked) && p.payload.size() > mtu) return;

  // The GRH space holds the IPv6 header, or the IPv4 header in its last 20 bytes (rdma-core's
  // RoCEv2 convention, ibv_wc_read_* / rxe).
  std::array<std::uint8_t, kGrhSpace> grh{};
  if (p.ipv4)
    p.ipv4->encode(
        std::span<std::uint8_t, Ipv4::kSize>(grh.data() + kGrhSpace - Ipv4::kSize, Ipv4::kSize));
  else if (p.ipv6)
    p.ipv6->encode(std::span<std::uint8_t, Ipv6::kSize>(grh.data(), Ipv6::kSize));

  const RecvWqe wqe = *qp.take_recv();
  Cqe cqe;
  cqe.opcode = WcOpcode::kRecv;
  cqe.byte_len = static_cast<std::uint32_t>(kGrhSpace + p.payload.size());
  cqe.src_qp = p.deth->srcqp;
  cqe.wc_flags = wc_flag::kGrh;
  cqe.pkey_index = qp.attr().pkey_index;
  if (p.immdt) {
    cqe.imm_data = p.immdt->imm;
    cqe.wc_flags |= wc_flag::kWithImm;
  }
  MrTable& mrs = nic_.device().mr_table();
  auto placed = place_at(mrs, qp.pd(), wqe.wr.sg_list, 0, grh);
  if (placed) placed = place_at(mrs, qp.pd(), wqe.wr.sg_list, kGrhSpace, p.payload);
  if (placed) {
    qp.complete_recv(wqe, cqe, b.solicited);
    return;
  }
  // The WQE completes in error (too small: LOC_LEN_ERR; bad L_Key: LOC_PROT_ERR) and, like any
  // work queue error, takes the QP to ERR.
  cqe.status = placed.error().fault == AccessFault::kLengthError ? WcStatus::kLocLenErr
                                                                 : WcStatus::kLocProtErr;
  qp.complete_recv(wqe, cqe, true);
  const QpState from = qp.state();
  qp.enter_error();
  nic_.requester().on_state_change(qp, from, now_);
}

// ---- responses ------------------------------------------------------------------------------

Packet Responder::response(const Qp& qp) const {
  // Toward the requester along the QP's path, with the QP's own P_Key (unlike rxe, which sends
  // 0xFFFF: spec-facts §10 #1).
  return nic_.wire().packet_to(qp.attr().ah_attr, qp.qp_num(), qp.attr().dest_qp_num,
                               qp.pkey().value_or(kDefaultPkey));
}

std::uint32_t Responder::wire_msn(const ResponderState& st) const {
  return nic_.quirks().has(Quirk::kMsnStuck) ? 0 : st.msn;
}

void Responder::send_ack(const Qp& qp, const ResponderState& st, std::uint8_t syn,
                         std::uint32_t psn) {
  const Quirks& quirks = nic_.quirks();
  if (quirks.has(Quirk::kNakCodeSwap)) {
    if (syn == syndrome::kNakInvalidRequest)
      syn = syndrome::kNakRemoteAccess;
    else if (syn == syndrome::kNakRemoteAccess)
      syn = syndrome::kNakInvalidRequest;
  }
  if (aeth_type(syn) == AethType::kAck && quirks.has(Quirk::kAckPsnOffByOne))
    psn = psn::add(psn, 1);
  Packet out = response(qp);
  out.bth->opcode = opcode::kRcAck;
  out.bth->psn = psn;
  out.aeth = Aeth{syn, wire_msn(st)};
  nic_.wire().send(out);
}

void Responder::send_read_responses(const Qp& qp, const ResponderState& st, std::uint32_t psn,
                                    std::span<const std::uint8_t> data) {
  std::size_t segment = qp.path_mtu_bytes();
  if (nic_.quirks().has(Quirk::kReadRespSplitWrong)) segment -= 4;  // the defect
  const std::size_t packets = std::max<std::size_t>((data.size() + segment - 1) / segment, 1);
  for (std::size_t i = 0; i < packets; ++i) {
    const bool first = i == 0;
    const bool last = i + 1 == packets;
    Packet out = response(qp);
    out.bth->opcode = first && last ? opcode::kRcReadResponseOnly
                      : first       ? opcode::kRcReadResponseFirst
                      : last        ? opcode::kRcReadResponseLast
                                    : opcode::kRcReadResponseMiddle;
    out.bth->psn = psn::add(psn, static_cast<std::int64_t>(i));
    // AETH on FIRST, LAST and ONLY; MIDDLE carries none (spec-facts §3.2).
    if (first || last) out.aeth = Aeth{kAckUnlimited, wire_msn(st)};
    const std::size_t at = i * segment;
    out.payload = data.subspan(at, std::min(segment, data.size() - at));
    nic_.wire().send(out);
  }
}

void Responder::send_atomic_ack(const Qp& qp, const ResponderState& st, std::uint32_t psn,
                                std::uint64_t original) {
  Packet out = response(qp);
  out.bth->opcode = opcode::kRcAtomicAck;
  out.bth->psn = psn;
  out.aeth = Aeth{kAckUnlimited, wire_msn(st)};
  out.atomicacketh = AtomicAckEth{original};
  nic_.wire().send(out);
}

void Responder::send_atomic_write_ack(const Qp& qp, const ResponderState& st, std::uint32_t psn) {
  // ATOMIC WRITE is answered by a zero-length READ RESPONSE ONLY (as FLUSH is).
  Packet out = response(qp);
  out.bth->opcode = opcode::kRcReadResponseOnly;
  out.bth->psn = psn;
  out.aeth = Aeth{kAckUnlimited, wire_msn(st)};
  nic_.wire().send(out);
}

}  // namespace roceconf::target
