// RoCEv2 congestion management of the reference NIC (Annex A17.9.3, CA17-44 … CA17-46).
//
// Notification point (when enabled): a request that passed every receive check and arrived with IP
// ECN = CE makes the NIC send a CNP to the QP the connection names as its peer (opcode 0x81, BECN,
// the QP's P_Key, PSN 0, 16 reserved zero bytes). A CNP takes no PSN and leaves the responder's
// ePSN and MSN alone. At most one CNP per QP per `cnp_interval_ns`.
//
// Reaction point: a simple DCQCN-like limiter per QP. RC requests leave at most at the line
// rate; each CNP for a QP halves that QP's rate (down to line >> max_cuts); every quiet
// `recovery_period_ns` without a CNP doubles it again until the line rate is back. The
// requester asks admit() before each request packet; when the answer is no, the NIC wakes the
// QP's requester at the time the packet may go.
//
// Defects modelled here (quirks.h, area "cc"): cnp-missing, cnp-wrong-qpn, cnp-consumes-psn,
// cnp-unpaced, cnp-paced-per-port, cnp-ignored, cnp-slows-all.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "dissector/packet.h"
#include "suite/reference_nic/qp.h"

namespace roceconf::target {

class Nic;

struct CongestionConfig {
  // Whether the NIC runs congestion management at all (and says so: capability cc). Off, it
  // sends no CNP and ignores those it gets, as CA17-44 allows a device without it.
  bool enabled = false;
  // The link's rate in Mb/s, the limiter's ceiling; 0: requests are not paced and CNPs slow
  // nothing (the NIC's unit tests that count frames right after a post).
  std::uint32_t line_rate_mbps = 0;
  // Notification point: at most one CNP per QP per interval.
  std::uint64_t cnp_interval_ns = 50'000;
  // Reaction point: halvings at most (the floor is line >> max_cuts), and the quiet time after
  // which the rate doubles, step by step.
  std::uint32_t max_cuts = 6;
  std::uint64_t recovery_period_ns = 100'000;
  // Packets a QP may send back to back before the pacing holds it (a limiter's burst size,
  // counted in line-rate slots): short messages leave at once, long streams at the QP's rate.
  std::uint32_t burst_packets = 1;
};

class Congestion {
 public:
  Congestion(Nic& nic, CongestionConfig config);

  const CongestionConfig& config() const { return config_; }

  // Notification point: a request for `qp` (RC or UC) that passed the NIC's checks; called after
  // the responder took it.
  void on_request(Qp& qp, const Packet& packet, std::uint64_t now_ns);
  // Reaction point: a CNP that passed the ICRC check, for whatever QP its DestQP names.
  void on_cnp(const Packet& packet, std::uint64_t now_ns);

  // The requester's hook: whether the next request packet of `qp` may leave at `now_ns`. Yes
  // books its slot on the wire; no schedules a kick of the QP's requester for when it may.
  bool admit(const Qp& qp, std::uint64_t now_ns);

  void tick(std::uint64_t now_ns);
  std::optional<std::uint64_t> next_deadline() const;
  void forget(std::uint32_t qp_num);

  // The QP's rate at `now_ns` in Mb/s; the line rate when unlimited (for tests and counters).
  std::uint32_t rate_mbps(std::uint32_t qp_num, std::uint64_t now_ns) const;
  std::uint64_t cnps_sent() const { return cnps_sent_; }
  std::uint64_t cnps_handled() const { return cnps_handled_; }

 private:
  struct Limiter {
    std::uint32_t cuts = 0;             // halvings in force at `last_cnp`
    std::uint64_t last_cnp = 0;         // when the last CNP cut the rate
    std::uint64_t next_send = 0;        // the earliest time of the next packet
    std::optional<std::uint64_t> wake;  // a kick is due then
  };

  std::uint32_t cuts_at(const Limiter& l, std::uint64_t now_ns) const;
  void cut(Limiter& l, std::uint64_t now_ns);
  // The notification point's pacing key of a CE packet for `qp`.
  std::uint64_t pacing_key(const Qp& qp, const Packet& packet) const;

  Nic& nic_;
  CongestionConfig config_;
  std::map<std::uint32_t, Limiter> limiters_;
  // Pacing key -> when its last CNP went out.
  std::map<std::uint64_t, std::uint64_t> last_cnp_sent_;
  std::uint64_t cnps_sent_ = 0;
  std::uint64_t cnps_handled_ = 0;
};

}  // namespace roceconf::target
