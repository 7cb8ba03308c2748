// The reference target: a software RoCEv2 NIC written to the IBTA specification. It joins the
// verbs resources (Device) to the wire: received frames go through the receive pipeline (header,
// QP, P_Key, Q_Key and ICRC checks) to the responder, the requester or the CM agent; frames
// leave through the Wire. Time is given by the caller (nanoseconds), so the same NIC runs in a
// deterministic test on a virtual clock and in the daemon on the real one.
//
// Single-threaded: one event loop calls receive(), tick() and the verbs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "dissector/packet.h"
#include "suite/reference_nic/congestion.h"
#include "suite/reference_nic/device.h"
#include "suite/reference_nic/quirks.h"
#include "suite/reference_nic/wire.h"

namespace roceconf::target {

class Responder;
class Requester;
class CmAgent;

struct NicConfig {
  DeviceConfig device;
  Ipv4Address ipv4{192, 0, 2, 2};
  // A routable IPv6 address, listed in the GID table as a RoCEv2 GID beside the IPv4-mapped one;
  // unset: only the link-local GID 0 is IPv6.
  std::optional<Ipv6Address> ipv6;
  std::uint16_t udp_port = Udp::kRocePort;
  Quirks quirks;
  // CNPs and the rate limiter (congestion.h); no line rate: requests unpaced.
  CongestionConfig congestion;
};

class Nic {
 public:
  Nic(NicConfig config, Wire::Sink sink);
  ~Nic();
  Nic(const Nic&) = delete;
  Nic& operator=(const Nic&) = delete;

  Device& device() { return device_; }
  Wire& wire() { return wire_; }
  const Quirks& quirks() const { return config_.quirks; }
  const NicConfig& config() const { return config_; }
  Responder& responder() { return *responder_; }
  Requester& requester() { return *requester_; }
  CmAgent& cm() { return *cm_; }
  Congestion& congestion() { return *congestion_; }

  // One frame from the port. Anything not for us, malformed or failing a check is dropped
  // (and counted where the spec or real NICs count it).
  void receive(Bytes frame, std::uint64_t now_ns);
  // Runs timers (retransmission, RNR waits, CM timeouts) that are due at `now_ns`.
  void tick(std::uint64_t now_ns);
  // The earliest pending timer, if any.
  std::optional<std::uint64_t> next_deadline() const;
  std::uint64_t now() const { return now_; }

  // Verbs that move the wire go through the NIC so the transport sees them.
  VerbsResult<void> modify_qp(std::uint32_t qp_num, const QpAttr& attr, QpAttrMask mask);
  PostResult post_send(std::uint32_t qp_num, std::span<const SendWr> wrs);
  // The bind verb (Device::bind_mw), run at once when the send queue is idle.
  VerbsResult<std::uint32_t> bind_mw(std::uint32_t qp_num, const MwBind& bind, std::uint64_t wr_id,
                                     std::uint32_t send_flags);
  PostResult post_recv(std::uint32_t qp_num, std::span<const RecvWr> wrs);
  VerbsResult<void> destroy_qp(std::uint32_t qp_num);

 private:
  void dispatch(const Packet& p, Bytes frame);
  // The fuzz-area defects that act before the dispatch (quirks.h); true when the frame is gone.
  bool kills_nic(const Packet& p);
  void hang_requester_on_cut_aeth(const Packet& p);
  bool pkey_accepts(std::uint16_t packet_pkey, std::uint16_t qp_pkey) const;
  Qp* newest_qp_of(const Packet& p);

  NicConfig config_;
  Device device_;
  Wire wire_;
  std::unique_ptr<Responder> responder_;
  std::unique_ptr<Requester> requester_;
  std::unique_ptr<CmAgent> cm_;
  std::unique_ptr<Congestion> congestion_;
  Packet rx_;
  std::vector<std::uint8_t> assumed_;  // the frame as a quirk misreads it (rx_ points into it)
  std::uint64_t now_ = 0;
  // QPs the pad-overrun-wedges-qp defect wedged: nothing sent to them is handled again.
  std::set<std::uint32_t> wedged_;
};

}  // namespace roceconf::target
