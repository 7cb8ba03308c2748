// Port and device counters of the reference NIC: the IBA PortCounters the transport checks bump
// (bad P_Key, Q_Key violation — IBA Vol 1 16.1 PortCounters, spec-facts §4.1 and §7) and the
// transport statistics Linux exposes for RoCE devices (out-of-sequence, duplicate, RNR NAK, retry
// ...). The names are the control API's names; a case reads them before and after a step.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace roceconf::target {

struct Counters {
  // IBA PortCounters.PKeyViolations is 16 bits and saturates (ibv_port_attr.bad_pkey_cntr).
  std::uint16_t bad_pkey = 0;
  std::uint64_t qkey_violation = 0;     // UD/GSI DETH Q_Key mismatch, packet dropped
  std::uint64_t out_of_sequence = 0;    // RC request PSN in the invalid (ahead) region
  std::uint64_t duplicate_request = 0;  // RC request PSN in the duplicate region
  std::uint64_t seq_nak_sent = 0;       // NAK PSN sequence error sent (once per gap)
  std::uint64_t rnr_nak_sent = 0;
  std::uint64_t rnr_nak_received = 0;
  std::uint64_t icrc_error = 0;  // bad ICRC, packet silently dropped
  std::uint64_t unknown_qp = 0;  // DestQP names no QP
  std::uint64_t local_ack_timeout = 0;
  std::uint64_t retry_exceeded = 0;  // retry_cnt or rnr_retry exhausted
  std::uint64_t rx_packets = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t tx_packets = 0;
  std::uint64_t tx_bytes = 0;
  std::uint64_t cq_overflow = 0;  // completions lost to a full CQ

  void count_bad_pkey() {
    if (bad_pkey != 0xFFFF) ++bad_pkey;
  }

  // Calls f(name, value) for every counter, in a stable order (the control API's listing).
  template <typename F>
  void for_each(F&& f) const {
    f(std::string_view{"bad_pkey"}, std::uint64_t{bad_pkey});
    f(std::string_view{"qkey_violation"}, qkey_violation);
    f(std::string_view{"out_of_sequence"}, out_of_sequence);
    f(std::string_view{"duplicate_request"}, duplicate_request);
    f(std::string_view{"seq_nak_sent"}, seq_nak_sent);
    f(std::string_view{"rnr_nak_sent"}, rnr_nak_sent);
    f(std::string_view{"rnr_nak_received"}, rnr_nak_received);
    f(std::string_view{"icrc_error"}, icrc_error);
    f(std::string_view{"unknown_qp"}, unknown_qp);
    f(std::string_view{"local_ack_timeout"}, local_ack_timeout);
    f(std::string_view{"retry_exceeded"}, retry_exceeded);
    f(std::string_view{"rx_packets"}, rx_packets);
    f(std::string_view{"rx_bytes"}, rx_bytes);
    f(std::string_view{"tx_packets"}, tx_packets);
    f(std::string_view{"tx_bytes"}, tx_bytes);
    f(std::string_view{"cq_overflow"}, cq_overflow);
  }

  // The counter called `name`; nullopt for an unknown name.
  std::optional<std::uint64_t> get(std::string_view name) const {
    std::optional<std::uint64_t> out;
    for_each([&](std::string_view n, std::uint64_t v) {
      if (n == name) out = v;
    });
    return out;
  }

  void reset() { *this = Counters{}; }
};

}  // namespace roceconf::target
