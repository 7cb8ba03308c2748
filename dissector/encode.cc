// Frame encoder: the mirror of decode.cc. Lengths, pad, checksum and ICRC/VCRC are computed
// unless EncodeOptions says to keep the values given, which is how deliberately malformed
// packets are built.
#include <cstring>

#include "dissector/icrc.h"
#include "dissector/packet.h"

namespace roceconf {

namespace {

constexpr std::size_t kIcrcSize = 4;

template <typename H>
void put(std::vector<std::uint8_t>& out, const H& h) {
  const std::size_t at = out.size();
  out.resize(at + H::kSize);
  h.encode(std::span<std::uint8_t>(out).subspan(at).template first<H::kSize>());
}

template <typename H>
void put_opt(std::vector<std::uint8_t>& out, const std::optional<H>& h) {
  put(out, h ? *h : H{});
}

}  // namespace

void encode_into(std::vector<std::uint8_t>& out, const Packet& p, const EncodeOptions& o) {
  out.clear();
  const bool ib = p.lrh.has_value();
  const bool v1 = !ib && p.grh && !p.ipv4 && !p.ipv6;
  const bool v2_ipv6 = !ib && !v1 && p.ipv6 && !p.ipv4;

  // Transport part sizes first: everything below depends on them.
  Bth bth = p.bth.value_or(Bth{});
  const OpcodeInfo& op = opcode_info(bth.opcode);
  std::array<std::uint8_t, kMadSize> mad_bytes;
  Bytes payload = p.payload;
  if (p.mad) {
    encode_mad(*p.mad, mad_bytes);
    payload = mad_bytes;
  }
  if (o.fill_pad) bth.padcount = static_cast<std::uint8_t>((4 - payload.size() % 4) % 4);

  // Link and network headers.
  if (!ib && o.link != LinkType::kRaw) {
    Ethernet eth = p.eth.value_or(Ethernet{});
    const std::uint16_t inner =
        v1 ? ethertype::kRoceV1 : (v2_ipv6 ? ethertype::kIpv6 : ethertype::kIpv4);
    // Types follow the framing unless the caller gave them and asked to keep them.
    const bool fill_types = (o.fill_lengths && o.fill_types) || !p.eth;
    if (fill_types) eth.type = p.vlans.empty() ? inner : p.vlans.front().tpid;
    put(out, eth);
    for (std::size_t i = 0; i < p.vlans.size(); ++i) {
      Vlan v = p.vlans[i];
      if (fill_types) v.type = i + 1 < p.vlans.size() ? p.vlans[i + 1].tpid : inner;
      put(out, v);
    }
  }
  const std::size_t net = out.size();

  std::size_t ext = 0;
  const std::uint16_t h = op.headers;
  if (h & hdr::kRdeth) ext += Rdeth::kSize;
  if (h & hdr::kDeth) ext += Deth::kSize;
  if (h & hdr::kXrceth) ext += XrcEth::kSize;
  if (h & hdr::kFeth) ext += Feth::kSize;
  if (h & hdr::kReth) ext += Reth::kSize;
  if (h & hdr::kAtomicEth) ext += AtomicEth::kSize;
  if (h & hdr::kAeth) ext += Aeth::kSize;
  if (h & hdr::kAtomicAckEth) ext += AtomicAckEth::kSize;
  if (h & hdr::kImmDt) ext += ImmDt::kSize;
  if (h & hdr::kIeth) ext += Ieth::kSize;
  if (h & hdr::kCnpBody) ext += kCnpBodySize;
  const std::size_t transport = Bth::kSize + ext + payload.size() + bth.padcount + kIcrcSize;

  IcrcFraming framing;
  if (ib) {
    Lrh lrh = *p.lrh;
    const bool global = p.grh.has_value();
    if (o.fill_lengths) {
      lrh.lnh = global ? Lrh::kIbaGlobal : Lrh::kIbaLocal;
      lrh.pkt_len =
          static_cast<std::uint16_t>((Lrh::kSize + (global ? Grh::kSize : 0) + transport) / 4);
    }
    put(out, lrh);
    framing = global ? IcrcFraming::kIbGlobal : IcrcFraming::kIbLocal;
    if (global) {
      Grh g = *p.grh;
      if (o.fill_lengths) g.pay_len = static_cast<std::uint16_t>(transport);
      put(out, g);
    }
  } else if (v1) {
    Grh g = *p.grh;
    if (o.fill_lengths) g.pay_len = static_cast<std::uint16_t>(transport);
    put(out, g);
    framing = IcrcFraming::kRoceV1;
  } else {
    Udp udp = p.udp.value_or(Udp{});
    if (o.fill_lengths) udp.length = static_cast<std::uint16_t>(Udp::kSize + transport);
    if (v2_ipv6) {
      Ipv6 ip = *p.ipv6;
      if (o.fill_lengths) ip.payload_length = static_cast<std::uint16_t>(Udp::kSize + transport);
      put(out, ip);
      framing = IcrcFraming::kRoceV2Ipv6;
    } else {
      Ipv4 ip = p.ipv4.value_or(Ipv4{});
      const std::size_t opts = p.ipv4_options.size() & ~std::size_t{3};
      if (o.fill_lengths) {
        ip.ihl = static_cast<std::uint8_t>(5 + opts / 4);
        ip.total_length = static_cast<std::uint16_t>(Ipv4::kSize + opts + Udp::kSize + transport);
      }
      const std::size_t at = out.size();
      if (o.fill_checksum) ip.checksum = 0;
      put(out, ip);
      out.insert(out.end(), p.ipv4_options.begin(), p.ipv4_options.begin() + opts);
      if (o.fill_checksum) {
        const std::uint16_t sum = ipv4_checksum(Bytes(out).subspan(at, Ipv4::kSize + opts));
        be::store16(&out[at + 10], sum);
      }
      framing = IcrcFraming::kRoceV2Ipv4;
    }
    put(out, udp);
  }

  const std::size_t bth_at = out.size();
  put(out, bth);
  if (h & hdr::kRdeth) put_opt(out, p.rdeth);
  if (h & hdr::kDeth) put_opt(out, p.deth);
  if (h & hdr::kXrceth) put_opt(out, p.xrceth);
  if (h & hdr::kFeth) put_opt(out, p.feth);
  if (h & hdr::kReth) {
    Reth r = p.reth.value_or(Reth{});
    if (o.fill_dmalen && op.position == Position::kOnly && op.kind == OpKind::kWrite)
      r.dmalen = static_cast<std::uint32_t>(payload.size());
    put(out, r);
  }
  if (h & hdr::kAtomicEth) put_opt(out, p.atomiceth);
  if (h & hdr::kAeth) put_opt(out, p.aeth);
  if (h & hdr::kAtomicAckEth) put_opt(out, p.atomicacketh);
  if (h & hdr::kImmDt) put_opt(out, p.immdt);
  if (h & hdr::kIeth) put_opt(out, p.ieth);
  if (h & hdr::kCnpBody) out.resize(out.size() + kCnpBodySize, 0);
  out.insert(out.end(), payload.begin(), payload.end());
  out.resize(out.size() + bth.padcount, 0);

  const std::size_t icrc_at = out.size();
  std::uint32_t icrc = p.icrc ? p.icrc->value : 0;
  if (o.fill_icrc || !p.icrc)
    icrc = compute_icrc(Bytes(out).subspan(net, icrc_at - net), framing, bth_at - net);
  out.resize(icrc_at + kIcrcSize);
  store_icrc(&out[icrc_at], icrc);

  if (ib) {
    std::uint16_t vcrc = p.vcrc ? p.vcrc->value : 0;
    if (o.fill_icrc || !p.vcrc) vcrc = compute_vcrc(Bytes(out).subspan(net));
    out.push_back(static_cast<std::uint8_t>(vcrc));
    out.push_back(static_cast<std::uint8_t>(vcrc >> 8));
  }
}

std::vector<std::uint8_t> encode(const Packet& packet, const EncodeOptions& options) {
  std::vector<std::uint8_t> out;
  out.reserve(128 + packet.payload.size());
  encode_into(out, packet, options);
  return out;
}

}  // namespace roceconf
