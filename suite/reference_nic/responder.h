// The responder side of the reference NIC (IBA Vol 1 ch. 9.7.5, spec-facts §4-5): RC request
// validation (PSN regions, one NAK per gap, duplicates re-ACKed without re-execution, READ and
// atomic replay from saved resources, ACK coalescing and MSN, RNR NAK, NAK codes 0x60-0x63,
// PMTU and pad checks, R_Key and bounds checks), UC (silent drop to the next FIRST/ONLY) and UD
// receive.
//
// Quirks modelled here: psn-gap-ack, psn-nak-repeat, ack-psn-off-by-one, dup-reexecute,
// msn-stuck, nak-code-swap, rnr-as-nak, mtu-unchecked, read-resp-split-wrong.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>

#include "dissector/packet.h"
#include "suite/reference_nic/qp.h"
#include "suite/reference_nic/responder_state.h"

namespace roceconf::target {

class Nic;

class Responder {
 public:
  explicit Responder(Nic& nic);
  ~Responder();

  // A request (opcode_info(op).is_request) for `qp` that passed the NIC's header, P_Key, Q_Key
  // and ICRC checks.
  void on_request(Qp& qp, const Packet& packet, std::uint64_t now_ns);
  // The QP left the states where it receives (RESET, ERR) or was destroyed: drop its state.
  void forget(std::uint32_t qp_num);

  // Called for the first valid request on a QP still in RTR (the CM's COMM_EST).
  std::function<void(std::uint32_t qp_num)> on_first_request;

  // The per-QP state of an RC or UC QP that has received a request; nullptr before that (and
  // for UD, which keeps none). For the control API and tests.
  const ResponderState* state(std::uint32_t qp_num) const;
  // The same, writable: for the defects of other parts of the NIC that disturb it.
  ResponderState* mutable_state(std::uint32_t qp_num);

 private:
  // Why a request failed, and what it costs the QP (the responder error
  // classes of spec-facts §4.5: class C fails the QP).
  enum class Fault : std::uint8_t {
    kInvalidRequest,     // class C: NAK 0x61, QP_REQ_ERR
    kRemoteAccess,       // class C: NAK 0x62, QP_ACCESS_ERR
    kRemoteOperational,  // class A/C: NAK 0x63, QP_FATAL
  };
  struct Failure {
    Fault fault = Fault::kInvalidRequest;
    WcStatus wc_status = WcStatus::kRemInvReqErr;  // of the receive WQE the message held
  };
  // What became of a request handed to execute().
  struct Outcome {
    enum class Kind : std::uint8_t { kDone, kRnr, kFailed };
    Kind kind = Kind::kDone;
    Failure failure;
    bool wqe_claimed = false;  // the failure ends a receive WQE (completed in error)
  };
  using OutcomeKind = Outcome::Kind;
  // Whether the PSN moves: a duplicate re-executed by the dup-reexecute defect leaves it.
  enum class Advance : std::uint8_t { kYes, kNo };

  void rc_request(Qp& qp, ResponderState& st, const Packet& p);
  void uc_request(Qp& qp, ResponderState& st, const Packet& p);
  void ud_request(Qp& qp, const Packet& p);
  void rc_duplicate(Qp& qp, ResponderState& st, const Packet& p);
  void rc_finish(Qp& qp, ResponderState& st, const Packet& p, const Outcome& outcome,
                 bool force_ack);

  // Checks and executes one in-sequence request (RC or UC); RC READ/atomic responses go out here.
  Outcome execute(Qp& qp, ResponderState& st, const Packet& p, Advance advance);
  std::optional<Failure> check_length(const Qp& qp, const Packet& p) const;
  Outcome execute_send(Qp& qp, ResponderState& st, const Packet& p, Advance advance);
  Outcome execute_write(Qp& qp, ResponderState& st, const Packet& p, Advance advance);
  Outcome execute_read(Qp& qp, ResponderState& st, const Packet& p, Advance advance);
  Outcome execute_atomic(Qp& qp, ResponderState& st, const Packet& p, Advance advance);
  Outcome execute_atomic_write(Qp& qp, ResponderState& st, const Packet& p, Advance advance);

  bool zero_length_key_ok(const Qp& qp, const Reth& r, AccessFlags needed);
  void report_first_request(Qp& qp, ResponderState& st);
  // The NAK of a class A/C error, then the receive WQE in error and the QP to ERR.
  void fail(Qp& qp, ResponderState& st, std::uint32_t psn, const Outcome& outcome);

  // ---- responses ----
  Packet response(const Qp& qp) const;
  std::uint32_t wire_msn(const ResponderState& st) const;
  void send_ack(const Qp& qp, const ResponderState& st, std::uint8_t syndrome, std::uint32_t psn);
  void send_read_responses(const Qp& qp, const ResponderState& st, std::uint32_t psn,
                           std::span<const std::uint8_t> data);
  void send_atomic_ack(const Qp& qp, const ResponderState& st, std::uint32_t psn,
                       std::uint64_t original);
  void send_atomic_write_ack(const Qp& qp, const ResponderState& st, std::uint32_t psn);

  Nic& nic_;
  std::map<std::uint32_t, ResponderState> states_;
  std::uint64_t now_ = 0;
  std::optional<std::uint32_t> comm_est_;  // QP whose first request in RTR awaits the callback
};

}  // namespace roceconf::target
