// The reference NIC's transmit path: builds RoCEv2 frames addressed along a QP's address vector
// (our MAC and IP from the port's GID table, IPv4 identification counter, UDP source port) and
// hands the encoded bytes to the port. The ICRC is computed here, defects included.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "dissector/packet.h"
#include "suite/reference_nic/counters.h"
#include "suite/reference_nic/port_tables.h"
#include "suite/reference_nic/qp.h"
#include "suite/reference_nic/quirks.h"

namespace roceconf::target {

// Our source GID toward `av`: its sgid_index, or the first GID of the peer's kind when the
// indexed one is not (a link-local GID 0 cannot source a routable IPv4 or IPv6 packet).
Gid source_gid(const Port& port, const AddressVector& av);

class Wire {
 public:
  using Sink = std::function<void(std::span<const std::uint8_t>)>;

  Wire(const Port& port, const Quirks& quirks, Counters& counters, Sink sink,
       std::uint16_t udp_port = Udp::kRocePort);

  // Ethernet / IPv4 (or IPv6) / UDP / BTH headers toward `av` and `dest_qpn`; the caller sets
  // the opcode, PSN and the rest. `src_qpn` seeds the UDP source port when the AV has none.
  Packet packet_to(const AddressVector& av, std::uint32_t src_qpn, std::uint32_t dest_qpn,
                   std::uint16_t pkey) const;
  // Replies to a received packet: addresses swapped, UDP source port kept per QP.
  Packet reply_to(const Packet& received, std::uint32_t dest_qpn, std::uint16_t pkey) const;

  void send(const Packet& packet);

  // ICRC check of a received frame as this NIC does it (quirks included): true when accepted.
  bool icrc_accepts(const Packet& decoded, Bytes frame) const;

  std::uint16_t udp_port() const { return udp_port_; }

  // The unknown-opcode-kills-nic defect: the NIC is dead, nothing leaves it until it is rebuilt.
  void halt() { halted_ = true; }
  bool halted() const { return halted_; }

 private:
  // TTL / hop limit, ECN and DF as the AV and the framing defects make them.
  void frame_ip(Ipv4& ip, std::uint8_t hop_limit) const;
  void frame_ip(Ipv6& ip, std::uint8_t hop_limit) const;
  const Port& port_;
  const Quirks& quirks_;
  Counters& counters_;
  Sink sink_;
  std::uint16_t udp_port_;
  mutable std::uint16_t ip_id_ = 1;
  std::vector<std::uint8_t> buffer_;
  bool halted_ = false;
};

}  // namespace roceconf::target
