#include "suite/reference_nic/wire.h"

#include "dissector/icrc.h"

namespace roceconf::target {

namespace {

bool link_local(const Gid& gid) {
  return gid[0] == 0xFE && (gid[1] & 0xC0) == 0x80;  // fe80::/10
}

}  // namespace

Gid source_gid(const Port& port, const AddressVector& av) {
  const GidEntry* e = port.gid_table.at(av.sgid_index);
  const bool want_v4 = gid_is_ipv4_mapped(av.dgid);
  const bool want_local = !want_v4 && link_local(av.dgid);
  const auto fits = [&](const Gid& g) {
    return gid_is_ipv4_mapped(g) == want_v4 && (want_v4 || link_local(g) == want_local);
  };
  if (e && fits(e->gid)) return e->gid;
  for (std::uint32_t i = 0; i < port.gid_table.size(); ++i) {
    const GidEntry* g = port.gid_table.at(i);
    if (g && fits(g->gid)) return g->gid;
  }
  return e ? e->gid : Gid{};
}

namespace {

// The ICRC without the pad bytes: what a stack with the icrc-pad-excluded defect computes.
std::uint32_t icrc_without_pad(Bytes frame, const Packet& p) {
  const std::size_t net = Ethernet::kSize + Vlan::kSize * p.vlans.size();
  const std::size_t icrc_at = frame.size() - 4;
  const std::size_t pad = p.bth ? p.bth->padcount : 0;
  const auto framing = p.ipv4 ? IcrcFraming::kRoceV2Ipv4 : IcrcFraming::kRoceV2Ipv6;
  return compute_icrc(frame.subspan(net, icrc_at - pad - net), framing, p.bth_offset - net);
}

}  // namespace

// The IP fields the framing defects change; the reference models no congestion management, so
// its ECN is 00 (CA17-5) whatever the AV's traffic class carries in its low bits.
void Wire::frame_ip(Ipv4& ip, std::uint8_t hop_limit) const {
  ip.ttl = quirks_.has(Quirk::kTtlFixed64) ? 64 : hop_limit;
  ip.ecn = quirks_.has(Quirk::kEcnEctWithoutCc) ? 2 : 0;
  ip.df = !quirks_.has(Quirk::kDfClear);
}

void Wire::frame_ip(Ipv6& ip, std::uint8_t hop_limit) const {
  const bool fixed = quirks_.has(Quirk::kTtlFixed64) || quirks_.has(Quirk::kIpv6HopLimitFixed);
  ip.hop_limit = fixed ? 64 : hop_limit;
  const std::uint8_t dscp_bits = quirks_.has(Quirk::kIpv6TrafficClassZero)
                                     ? 0
                                     : static_cast<std::uint8_t>(ip.traffic_class & ~3);
  ip.traffic_class =
      static_cast<std::uint8_t>(dscp_bits | (quirks_.has(Quirk::kEcnEctWithoutCc) ? 2 : 0));
}

Wire::Wire(const Port& port, const Quirks& quirks, Counters& counters, Sink sink,
           std::uint16_t udp_port)
    : port_(port),
      quirks_(quirks),
      counters_(counters),
      sink_(std::move(sink)),
      udp_port_(udp_port) {}

Packet Wire::packet_to(const AddressVector& av, std::uint32_t src_qpn, std::uint32_t dest_qpn,
                       std::uint16_t pkey) const {
  Packet p;
  p.eth = Ethernet{av.dmac, port_.mac, ethertype::kIpv4};
  const Gid sgid = source_gid(port_, av);
  if (auto dst = gid_ipv4(av.dgid)) {
    Ipv4 ip;
    ip.src = gid_ipv4(sgid).value_or(Ipv4Address{});
    ip.dst = *dst;
    ip.dscp = av.traffic_class >> 2;
    frame_ip(ip, av.hop_limit);
    ip.id = ip_id_++;
    p.ipv4 = ip;
  } else {
    Ipv6 ip;
    ip.src = sgid;
    ip.dst = av.dgid;
    ip.traffic_class = av.traffic_class;
    frame_ip(ip, av.hop_limit);
    ip.flow_label = av.flow_label;
    p.ipv6 = ip;
  }
  std::uint16_t sport = av.udp_sport;
  if (sport == 0) {
    const std::uint32_t fl =
        av.flow_label ? av.flow_label : rdma_calc_flow_label(src_qpn, dest_qpn);
    sport = rdma_flow_label_to_udp_sport(fl);
  }
  p.udp = Udp{sport, udp_port_, 0, 0};
  Bth b;
  b.pkey = pkey;
  b.dqpn = dest_qpn;
  p.bth = b;
  return p;
}

Packet Wire::reply_to(const Packet& rx, std::uint32_t dest_qpn, std::uint16_t pkey) const {
  Packet p;
  if (rx.eth) p.eth = Ethernet{rx.eth->src, port_.mac, rx.eth->type};
  if (rx.ipv4) {
    Ipv4 ip;
    ip.src = rx.ipv4->dst;
    ip.dst = rx.ipv4->src;
    frame_ip(ip, ip.ttl);
    ip.id = ip_id_++;
    p.ipv4 = ip;
  } else if (rx.ipv6) {
    Ipv6 ip;
    ip.src = rx.ipv6->dst;
    ip.dst = rx.ipv6->src;
    frame_ip(ip, ip.hop_limit);
    p.ipv6 = ip;
  }
  p.udp = Udp{rx.udp ? rx.udp->sport : std::uint16_t{0xC000}, udp_port_, 0, 0};
  Bth b;
  b.pkey = pkey;
  b.dqpn = dest_qpn;
  p.bth = b;
  return p;
}

void Wire::send(const Packet& packet) {
  if (halted_) return;
  encode_into(buffer_, packet);
  if (quirks_.has(Quirk::kIpv6PlenWithoutIcrc) && packet.ipv6 && packet.bth) {
    // The payload length as a stack that forgets the trailer computes it, and the ICRC over the
    // header it sends (the payload length is not masked).
    const std::size_t ip_at = Ethernet::kSize + Vlan::kSize * packet.vlans.size();
    const std::uint16_t plen = be::load16(&buffer_[ip_at + 4]);
    be::store16(&buffer_[ip_at + 4], static_cast<std::uint16_t>(plen - 4));
    const std::size_t bth_at = ip_at + Ipv6::kSize + Udp::kSize;
    store_icrc(&buffer_[buffer_.size() - 4],
               compute_icrc(Bytes(buffer_).subspan(ip_at, buffer_.size() - 4 - ip_at),
                            IcrcFraming::kRoceV2Ipv6, bth_at - ip_at));
  }
  if (quirks_.has(Quirk::kIcrcPadExcluded)) {
    const Packet d =
        decode(buffer_, LinkType::kEthernet, {.udp_port = udp_port_, .check_icrc = false});
    if (d.bth && d.bth->padcount != 0)
      store_icrc(&buffer_[buffer_.size() - 4], icrc_without_pad(buffer_, d));
  }
  counters_.tx_packets++;
  counters_.tx_bytes += buffer_.size();
  sink_(buffer_);
}

bool Wire::icrc_accepts(const Packet& p, Bytes frame) const {
  if (!p.icrc) return false;
  if (quirks_.has(Quirk::kIcrcUnchecked)) return true;
  if (quirks_.has(Quirk::kIpv6IcrcUnchecked) && p.ipv6) return true;
  if (quirks_.has(Quirk::kMadIcrcUnchecked) && p.bth && p.bth->dqpn == 1) return true;
  if (quirks_.has(Quirk::kSmallBadIcrcAccepted) && frame.size() < 65) return true;
  if (quirks_.has(Quirk::kIcrcPadExcluded)) return p.icrc->value == icrc_without_pad(frame, p);
  return p.icrc->ok();
}

}  // namespace roceconf::target
