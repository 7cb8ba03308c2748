// The requester side of the reference NIC (IBA Vol 1 ch. 9.7.4-9.7.6, spec-facts §8): send
// WQEs segmented into packets at the PMTU, ACK/NAK/READ-response/atomic-ACK processing,
// go-back-N retransmission on a sequence NAK or local ACK timeout with retry and RNR-retry
// counts, outstanding READ/atomic limits, and completions.
//
// RC keeps every started WQE as a message with its PSN range until the responder acknowledges
// it (explicitly, by a coalesced ACK, a later READ response or a NAK's implicit ACK); UC
// completes a message once its last packet is sent, UD once its one packet is. Two defects are
// modelled here: stale-sq-on-rts and wqe-prefetch-overwrite (quirks.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "dissector/packet.h"
#include "suite/reference_nic/qp.h"
#include "suite/reference_nic/stale_send_queue.h"

namespace roceconf::target {

class Nic;

// The local ACK timeout of a QP's `timeout` attribute: 4.096 µs × 2^timeout (IBA 9.7.6.1.3,
// spec-facts §8); nullopt for 0, which disables the timer.
std::optional<std::uint64_t> local_ack_timeout_ns(std::uint8_t timeout);

class Requester {
 public:
  explicit Requester(Nic& nic);
  ~Requester();

  // New WQEs were posted or the QP's state changed: send what may be sent now.
  void kick(Qp& qp, std::uint64_t now_ns);
  // A response (ACK, NAK, READ response, atomic ACK) for `qp` that passed the NIC's checks.
  void on_response(Qp& qp, const Packet& packet, std::uint64_t now_ns);
  // The QP moved from `from` to its current state (RTS entry, SQD, ERR, RESET).
  void on_state_change(Qp& qp, QpState from, std::uint64_t now_ns);
  void forget(std::uint32_t qp_num);
  // The pad-overrun-wedges-qp and truncated-aeth-hangs-requester defects: the QP's send side
  // stops for good (no packet, completion, retry or timer) while it stays in RTS.
  void wedge(Qp& qp);

  void tick(std::uint64_t now_ns);
  std::optional<std::uint64_t> next_deadline() const;

 private:
  struct Message;
  struct Flow;

  // The send state of `qp`, created when the QP may send; none (and any old state dropped)
  // while it is in RESET, INIT, RTR or ERR.
  Flow* flow_of(Qp& qp);
  // Drops the state of a QP that ended in ERR or RESET (once nothing refers to it any more).
  void settle(Qp& qp);
  void pump(Qp& qp, Flow& f, std::uint64_t now);
  void pump_rc(Qp& qp, Flow& f, std::uint64_t now);
  void pump_unreliable(Qp& qp, Flow& f);
  const SendWr& wire_wr(const Qp& qp, const Flow& f, std::size_t index) const;
  Message start(Qp& qp, const SendWr& wr, std::uint64_t seq);
  bool send_rc_packet(Qp& qp, Flow& f, Message& m, std::uint64_t now);
  bool send_segment(Qp& qp, std::uint32_t psn, const Message& m, std::uint32_t index);
  void send_read_request(Qp& qp, Message& m);
  void send_atomic(Qp& qp, const Message& m);
  WcStatus send_ud(Qp& qp, Flow& f, const SendWr& wr);
  Packet header(Qp& qp, std::uint8_t opcode, std::uint32_t psn);

  // Response processing (RC).
  bool complete_before(Qp& qp, Flow& f, std::uint32_t psn, std::uint64_t now);
  void on_ack(Qp& qp, Flow& f, const Packet& packet, std::uint64_t now);
  void on_read_response(Qp& qp, Flow& f, const Packet& packet, std::uint64_t now);
  void on_atomic_ack(Qp& qp, Flow& f, const Packet& packet, std::uint64_t now);
  void on_rnr_nak(Qp& qp, Flow& f, std::uint32_t psn, std::uint8_t timer, std::uint64_t now);
  void implied_nak(Qp& qp, Flow& f, std::uint64_t now);
  void retry(Qp& qp, Flow& f, std::uint32_t from, std::uint64_t now);
  void progressed(Qp& qp, Flow& f, std::uint64_t now);
  void complete_front(Qp& qp, Flow& f, WcStatus status);
  // Runs the BIND_MW or LOCAL_INV WQE at `index` and completes it; false when it failed.
  bool run_local_op(Qp& qp, Flow& f, std::size_t index);
  void fail(Qp& qp, Flow& f, WcStatus status);
  void on_ack_timeout(Qp& qp, Flow& f, std::uint64_t now);
  // The QP's local ACK timeout (ack-timeout-ignored: a fixed 4 ms).
  std::optional<std::uint64_t> ack_timeout(const Qp& qp) const;
  void on_rnr_wait_over(Qp& qp, Flow& f, std::uint64_t now);

  Nic& nic_;
  std::map<std::uint32_t, std::unique_ptr<Flow>> flows_;
  std::set<std::uint32_t> wedged_;
  StaleSendQueue stale_;
};

}  // namespace roceconf::target
