// Frame decoder: link layer → IP/UDP or GRH or LRH → BTH → extension headers → payload, pad,
// ICRC (and VCRC, MAD/CM). Every length is checked against the bytes actually present before a
// header is read; problems become findings and decoding goes on where it safely can.
#include <fmt/format.h>

#include "dissector/icrc.h"
#include "dissector/names.h"
#include "dissector/packet.h"

namespace roceconf {

namespace {

constexpr std::size_t kIcrcSize = 4;
constexpr std::size_t kVcrcSize = 2;
constexpr std::size_t kMaxVlanTags = 4;
constexpr std::uint32_t kMaxMtu = 4096;

class Decoder {
 public:
  Decoder(Packet& p, Bytes frame, const DecodeOptions& o) : p_(p), f_(frame), o_(o) {}

  void link(LinkType link) {
    switch (link) {
      case LinkType::kEthernet:
        ethernet(0);
        break;
      case LinkType::kRaw:
        raw_ip(0, f_.size());
        break;
      case LinkType::kLinuxSll:
        if (need(0, 16, Layer::kFrame, "Linux cooked header")) ethertype(16, be::load16(&f_[14]));
        break;
      case LinkType::kLinuxSll2:
        if (need(0, 20, Layer::kFrame, "Linux cooked v2 header")) ethertype(20, be::load16(&f_[0]));
        break;
      case LinkType::kErf:
        erf();
        break;
      case LinkType::kInfiniBand:
        infiniband(0, f_.size());
        break;
    }
  }

 private:
  template <typename... Args>
  void add(FindingCode code, Layer layer, std::size_t offset, fmt::format_string<Args...> fs,
           Args&&... args) {
    p_.findings.push_back(Finding{code, layer, static_cast<std::uint32_t>(offset),
                                  fmt::format(fs, std::forward<Args>(args)...)});
  }

  // True when [off, off+n) lies inside `end` (default: the frame); otherwise records truncation.
  bool need(std::size_t off, std::size_t n, Layer layer, std::string_view what,
            std::size_t end = SIZE_MAX) {
    end = std::min(end, f_.size());
    if (off <= end && n <= end - off) [[likely]]
      return true;
    truncated(off, n, layer, what, end);
    return false;
  }

  [[gnu::cold, gnu::noinline]] void truncated(std::size_t off, std::size_t n, Layer layer,
                                              std::string_view what, std::size_t end) {
    add(FindingCode::kTruncated, layer, std::min(off, f_.size()),
        "{} truncated: needs {} bytes at offset {}, only {} present", what, n, off,
        off <= end ? end - off : 0);
  }

  template <typename H>
  H read(std::size_t off) const {
    return H::decode(f_.subspan(off).template first<H::kSize>());
  }

  // Decodes straight into the packet's slot: a header built on the stack and then copied into
  // the optional costs store-forwarding stalls on every frame.
  template <typename H>
  const H& read_into(std::optional<H>& slot, std::size_t off) const {
    struct InPlace {
      Bytes b;
      operator H() const { return H::decode(b.first<H::kSize>()); }
    };
    return slot.emplace(InPlace{f_.subspan(off)});
  }

  void erf() {
    // ERF record: ts(8) type(1) flags(1) rlen(2) lctr(2) wlen(2), then extension headers.
    if (!need(0, 16, Layer::kErf, "ERF header")) return;
    const std::uint8_t type = f_[8] & 0x7F;
    bool more_ext = (f_[8] & 0x80) != 0;
    const std::size_t wlen = be::load16(&f_[14]);
    std::size_t off = 16;
    while (more_ext) {
      if (!need(off, 8, Layer::kErf, "ERF extension header")) return;
      more_ext = (f_[off] & 0x80) != 0;
      off += 8;
    }
    switch (type) {
      case 21:  // ERF_TYPE_INFINIBAND
      case 25:  // ERF_TYPE_INFINIBAND_LINK
        infiniband(off, std::min(f_.size(), off + wlen));
        break;
      case 2:  // ERF_TYPE_ETH: 2 bytes of offset/pad, then the frame (wlen includes the FCS)
        if (need(off, 2, Layer::kErf, "ERF Ethernet pad")) ethernet(off + 2);
        break;
      default:
        add(FindingCode::kLinkHeader, Layer::kErf, 8, "ERF record type {} is not decoded", type);
    }
  }

  void ethernet(std::size_t off) {
    if (!need(off, Ethernet::kSize, Layer::kEth, "Ethernet header")) return;
    read_into(p_.eth, off);
    ethertype(off + Ethernet::kSize, p_.eth->type);
  }

  void ethertype(std::size_t off, std::uint16_t type) {
    while (type == ethertype::kVlan || type == ethertype::kQinQ) {
      if (p_.vlans.size() == kMaxVlanTags || !need(off, Vlan::kSize, Layer::kVlan, "802.1Q tag"))
        return;
      p_.vlans.push_back(Vlan::decode(f_.subspan(off).first<Vlan::kSize>(), type));
      type = p_.vlans.back().type;
      off += Vlan::kSize;
    }
    switch (type) {
      case ethertype::kIpv4:
        ipv4(off);
        break;
      case ethertype::kIpv6:
        ipv6(off);
        break;
      case ethertype::kRoceV1:
        roce_v1(off);
        break;
      default:
        break;  // not RoCE: the frame is simply not ours
    }
  }

  void raw_ip(std::size_t off, std::size_t) {
    if (!need(off, 1, Layer::kIpv4, "IP header")) return;
    if ((f_[off] >> 4) == 6)
      ipv6(off);
    else
      ipv4(off);
  }

  void ipv4(std::size_t off) {
    if (!need(off, Ipv4::kSize, Layer::kIpv4, "IPv4 header")) return;
    const Ipv4& ip = read_into(p_.ipv4, off);
    if (ip.version != 4 || ip.ihl < 5) {
      add(FindingCode::kIpVersion, Layer::kIpv4, off, "IPv4 version {} / IHL {} invalid",
          ip.version, ip.ihl);
      return;
    }
    const std::size_t hl = ip.header_length();
    if (!need(off, hl, Layer::kIpv4, "IPv4 options")) return;
    p_.ipv4_options = f_.subspan(off + Ipv4::kSize, hl - Ipv4::kSize);
    if (ipv4_checksum(f_.subspan(off, hl)) != 0)
      add(FindingCode::kIpChecksum, Layer::kIpv4, off + 10,
          "IPv4 header checksum 0x{:04x} is wrong", ip.checksum);
    std::size_t end = off + ip.total_length;
    if (ip.total_length < hl) {
      add(FindingCode::kIpLength, Layer::kIpv4, off + 2,
          "IPv4 total length {} is shorter than its header ({})", ip.total_length, hl);
      return;
    }
    if (end > f_.size()) {
      add(FindingCode::kIpLength, Layer::kIpv4, off + 2,
          "IPv4 total length {} exceeds the {} bytes captured", ip.total_length, f_.size() - off);
      end = f_.size();
    }
    if (ip.mf || ip.frag_offset != 0) {
      add(FindingCode::kIpFragment, Layer::kIpv4, off + 6,
          "IPv4 fragment (offset {}, more fragments {}): RoCE is never fragmented",
          ip.frag_offset * 8, ip.mf);
      if (ip.frag_offset != 0) return;
    }
    if (ip.protocol == kIpProtoUdp) udp(off, off + hl, end);
  }

  void ipv6(std::size_t off) {
    if (!need(off, Ipv6::kSize, Layer::kIpv6, "IPv6 header")) return;
    const Ipv6& ip = read_into(p_.ipv6, off);
    if (ip.version != 6) {
      add(FindingCode::kIpVersion, Layer::kIpv6, off, "IPv6 version field is {}", ip.version);
      return;
    }
    std::size_t end = off + Ipv6::kSize + ip.payload_length;
    if (end > f_.size()) {
      add(FindingCode::kIpLength, Layer::kIpv6, off + 4,
          "IPv6 payload length {} exceeds the {} bytes captured", ip.payload_length,
          f_.size() - off - Ipv6::kSize);
      end = f_.size();
    }
    if (ip.next_header == kIpProtoUdp) udp(off, off + Ipv6::kSize, end);
  }

  void udp(std::size_t ip_off, std::size_t off, std::size_t end) {
    if (!need(off, Udp::kSize, Layer::kUdp, "UDP header", end)) return;
    const Udp& u = read_into(p_.udp, off);
    if (u.dport != o_.udp_port) return;  // UDP, but not RoCEv2
    p_.framing = Framing::kRoceV2;
    if (u.length < Udp::kSize) {
      add(FindingCode::kUdpLength, Layer::kUdp, off + 4, "UDP length {} is below 8", u.length);
      return;
    }
    if (u.length != end - off) {
      add(FindingCode::kUdpLength, Layer::kUdp, off + 4,
          "UDP length {} disagrees with the {} bytes of IP payload", u.length, end - off);
      end = std::min(end, off + u.length);
    }
    const auto framing = p_.ipv4 ? IcrcFraming::kRoceV2Ipv4 : IcrcFraming::kRoceV2Ipv6;
    transport(off + Udp::kSize, end, ip_off, framing);
  }

  void roce_v1(std::size_t off) {
    p_.framing = Framing::kRoceV1;
    if (!grh(off, f_.size(), false)) return;
    const std::size_t end = std::min(f_.size(), off + Grh::kSize + p_.grh->pay_len);
    transport(off + Grh::kSize, end, off, IcrcFraming::kRoceV1);
  }

  // Reads a GRH at `off`; `exact` demands PayLen to fill [off+40, end) exactly (native IB).
  bool grh(std::size_t off, std::size_t end, bool exact) {
    if (!need(off, Grh::kSize, Layer::kGrh, "GRH", end)) return false;
    const Grh& g = read_into(p_.grh, off);
    if (g.ip_version != 6)
      add(FindingCode::kGrhVersion, Layer::kGrh, off, "GRH IPVer is {}, not 6", g.ip_version);
    if (g.next_header != Grh::kNextHeaderBth) {
      add(FindingCode::kGrhNextHeader, Layer::kGrh, off + 6,
          "GRH next header 0x{:02x} is not 0x1B (IBA transport)", g.next_header);
      return false;
    }
    const std::size_t avail = end - off - Grh::kSize;
    if (g.pay_len > avail || (exact && g.pay_len != avail))
      add(FindingCode::kGrhLength, Layer::kGrh, off + 4,
          "GRH payload length {} disagrees with the {} bytes that follow", g.pay_len, avail);
    return true;
  }

  void infiniband(std::size_t off, std::size_t end) {
    p_.framing = Framing::kInfiniBand;
    if (!need(off, Lrh::kSize, Layer::kLrh, "LRH", end)) return;
    const Lrh& l = read_into(p_.lrh, off);
    if (l.lver != 0)
      add(FindingCode::kLrhVersion, Layer::kLrh, off, "LRH link version {} is not 0", l.lver);
    const std::size_t covered = std::size_t{l.pkt_len} * 4;  // LRH through ICRC
    const std::size_t avail = end - off;
    bool has_vcrc = false;
    if (covered + kVcrcSize == avail) {
      has_vcrc = true;
    } else if (covered != avail) {
      add(FindingCode::kLrhLength, Layer::kLrh, off + 4,
          "LRH packet length {} words ({} bytes) disagrees with the {} bytes captured", l.pkt_len,
          covered, avail);
      // A PktLen below the LRH itself does not say where the VCRC is: don't read one.
      if (covered < avail) has_vcrc = covered >= Lrh::kSize && covered + kVcrcSize <= avail;
    }
    if (covered >= Lrh::kSize && covered <= avail) end = off + covered;
    if (has_vcrc) {
      const std::uint16_t wire = static_cast<std::uint16_t>(f_[end] | f_[end + 1] << 8);
      const std::uint16_t expected = compute_vcrc(f_.subspan(off, end - off));
      p_.vcrc = Vcrc{wire, expected};
      if (wire != expected)
        add(FindingCode::kBadVcrc, Layer::kVcrc, end, "VCRC 0x{:04x} is wrong, expected 0x{:04x}",
            wire, expected);
    }
    switch (l.lnh) {
      case Lrh::kIbaLocal:
        transport(off + Lrh::kSize, end, off, IcrcFraming::kIbLocal);
        break;
      case Lrh::kIbaGlobal:
        if (grh(off + Lrh::kSize, end, true))
          transport(off + Lrh::kSize + Grh::kSize, end, off, IcrcFraming::kIbGlobal);
        break;
      default:
        add(FindingCode::kLrhNextHeader, Layer::kLrh, off + 1,
            "LRH next header {} is raw or non-IBA: no transport to decode", l.lnh);
    }
  }

  // BTH at `off`; the ICRC is the last 4 bytes before `end`; `net` is where ICRC coverage begins.
  void transport(std::size_t off, std::size_t end, std::size_t net, IcrcFraming framing) {
    if (!need(off, Bth::kSize + kIcrcSize, Layer::kBth, "BTH and ICRC", end)) {
      if (need(off, Bth::kSize, Layer::kBth, "BTH", end)) {
        read_into(p_.bth, off);
        p_.bth_offset = static_cast<std::uint32_t>(off);
      }
      return;
    }
    const Bth& b = read_into(p_.bth, off);
    p_.bth_offset = static_cast<std::uint32_t>(off);
    const std::size_t icrc_off = end - kIcrcSize;

    // ICRC first: it is meaningful whatever the rest holds.
    if (o_.check_icrc) {
      const std::uint32_t wire = load_icrc(&f_[icrc_off]);
      const std::uint32_t expected =
          compute_icrc(f_.subspan(net, icrc_off - net), framing, off - net);
      p_.icrc = Icrc{wire, expected};
      if (wire != expected)
        add(FindingCode::kBadIcrc, Layer::kIcrc, icrc_off,
            "ICRC 0x{:08x} is wrong, expected 0x{:08x}", wire, expected);
    } else {
      p_.icrc = Icrc{load_icrc(&f_[icrc_off]), load_icrc(&f_[icrc_off])};
    }

    if (b.version != 0)
      add(FindingCode::kTver, Layer::kBth, off + 1, "BTH transport version {} is not 0", b.version);
    if (b.resv6 != 0)
      add(FindingCode::kReservedBits, Layer::kBth, off + 4,
          "BTH reserved bits (byte 4) are 0x{:02x}", b.resv6);
    if (b.resv7 != 0)
      add(FindingCode::kReservedBits, Layer::kBth, off + 8,
          "BTH reserved bits (byte 8) are 0x{:02x}", b.resv7);
    const OpcodeInfo& op = opcode_info(b.opcode);
    if (!op.valid) {
      add(FindingCode::kReservedOpcode, Layer::kBth, off, "opcode 0x{:02x} is reserved", b.opcode);
    } else if (op.service == Service::kRd || op.service == Service::kManufacturer) {
      add(FindingCode::kUnsupportedOpcode, Layer::kBth, off,
          "opcode 0x{:02x} ({}) belongs to a service no RoCE adapter carries", b.opcode, op.name);
    }
    if (p_.framing != Framing::kInfiniBand && b.dqpn == 0)
      add(FindingCode::kQp0OnRoce, Layer::kBth, off + 5,
          "QP0 (subnet management) is not used on RoCE");

    std::size_t pos = off + Bth::kSize;
    if (!extension_headers(op, pos, icrc_off)) return;

    // Payload and pad.
    const std::size_t body = icrc_off - pos;
    if (b.padcount > body) {
      add(FindingCode::kPadCount, Layer::kBth, off + 1,
          "pad count {} exceeds the {} payload bytes present", b.padcount, body);
      p_.payload = f_.subspan(pos, body);
      p_.payload_offset = static_cast<std::uint32_t>(pos);
      return;
    }
    const std::size_t len = body - b.padcount;
    p_.payload = f_.subspan(pos, len);
    p_.payload_offset = static_cast<std::uint32_t>(pos);
    if (op.valid && op.payload != PayloadRule::kUnknown) check_payload(op, b, off, pos, len, body);
    if (op.service == Service::kUd && p_.deth) datagram(b, pos, len);
  }

  bool extension_headers(const OpcodeInfo& op, std::size_t& pos, std::size_t icrc_off) {
    const std::uint16_t h = op.headers;
    auto take = [&](auto& slot, Layer layer, std::string_view what) -> bool {
      using H = typename std::remove_reference_t<decltype(slot)>::value_type;
      if (!need(pos, H::kSize, layer, what, icrc_off)) return false;
      read_into(slot, pos);
      pos += H::kSize;
      return true;
    };
    if ((h & hdr::kRdeth) && !take(p_.rdeth, Layer::kRdeth, "RDETH")) return false;
    if ((h & hdr::kDeth) && !take(p_.deth, Layer::kDeth, "DETH")) return false;
    if ((h & hdr::kXrceth) && !take(p_.xrceth, Layer::kXrceth, "XRCETH")) return false;
    if ((h & hdr::kFeth) && !take(p_.feth, Layer::kFeth, "FETH")) return false;
    if ((h & hdr::kReth) && !take(p_.reth, Layer::kReth, "RETH")) return false;
    if ((h & hdr::kAtomicEth) && !take(p_.atomiceth, Layer::kAtomicEth, "AtomicETH")) return false;
    if ((h & hdr::kAeth) && !take(p_.aeth, Layer::kAeth, "AETH")) return false;
    if ((h & hdr::kAtomicAckEth) && !take(p_.atomicacketh, Layer::kAtomicAckEth, "AtomicAckETH"))
      return false;
    if ((h & hdr::kImmDt) && !take(p_.immdt, Layer::kImmDt, "ImmDt")) return false;
    if ((h & hdr::kIeth) && !take(p_.ieth, Layer::kIeth, "IETH")) return false;
    if (h & hdr::kCnpBody) {
      if (!need(pos, kCnpBodySize, Layer::kCnp, "CNP reserved body", icrc_off)) return false;
      for (std::size_t i = 0; i < kCnpBodySize; ++i)
        if (f_[pos + i] != 0) {
          add(FindingCode::kReservedBits, Layer::kCnp, pos + i, "CNP reserved byte {} is 0x{:02x}",
              i, f_[pos + i]);
          break;
        }
      pos += kCnpBodySize;
    }
    header_checks();
    return true;
  }

  void header_checks() {
    const std::size_t base = p_.bth_offset + Bth::kSize;
    auto at = [&](Layer l) -> std::size_t {
      // Offsets of each present header, in wire order.
      std::size_t o = base;
      if (p_.rdeth) {
        if (l == Layer::kRdeth) return o;
        o += Rdeth::kSize;
      }
      if (p_.deth) {
        if (l == Layer::kDeth) return o;
        o += Deth::kSize;
      }
      if (p_.xrceth) {
        if (l == Layer::kXrceth) return o;
        o += XrcEth::kSize;
      }
      if (p_.feth) {
        if (l == Layer::kFeth) return o;
        o += Feth::kSize;
      }
      if (p_.reth) {
        if (l == Layer::kReth) return o;
        o += Reth::kSize;
      }
      if (p_.atomiceth) {
        if (l == Layer::kAtomicEth) return o;
        o += AtomicEth::kSize;
      }
      return o;
    };
    if (p_.rdeth && p_.rdeth->resv)
      add(FindingCode::kReservedBits, Layer::kRdeth, at(Layer::kRdeth), "RDETH reserved byte set");
    if (p_.deth && p_.deth->resv)
      add(FindingCode::kReservedBits, Layer::kDeth, at(Layer::kDeth) + 4, "DETH reserved byte set");
    if (p_.xrceth && p_.xrceth->resv)
      add(FindingCode::kReservedBits, Layer::kXrceth, at(Layer::kXrceth),
          "XRCETH reserved byte set");
    if (p_.feth && p_.feth->resv)
      add(FindingCode::kReservedBits, Layer::kFeth, at(Layer::kFeth), "FETH reserved bits set");
    if (p_.reth && p_.reth->dmalen > 0x80000000u)
      add(FindingCode::kDmaLength, Layer::kReth, at(Layer::kReth) + 12,
          "RETH DMA length {} exceeds 2^31", p_.reth->dmalen);
    if (p_.atomiceth && (p_.atomiceth->va & 7) != 0)
      add(FindingCode::kAtomicAlignment, Layer::kAtomicEth, at(Layer::kAtomicEth),
          "atomic VA 0x{:x} is not 8-byte aligned", p_.atomiceth->va);
    if (p_.aeth && syndrome_reserved(p_.aeth->syndrome))
      add(FindingCode::kReservedSyndrome, Layer::kAeth, at(Layer::kAeth),
          "AETH syndrome 0x{:02x} is reserved", p_.aeth->syndrome);
  }

  void check_payload(const OpcodeInfo& op, const Bth& b, std::size_t bth_off, std::size_t pos,
                     std::size_t len, std::size_t body) {
    if (body % 4 != 0)
      add(FindingCode::kPadCount, Layer::kBth, bth_off + 1,
          "payload {} + pad {} = {} bytes is not a multiple of 4", len, b.padcount, body);
    else if (len > 0 && b.padcount != ((4 - len % 4) % 4))
      add(FindingCode::kPadCount, Layer::kBth, bth_off + 1,
          "pad count {} inconsistent with payload", b.padcount);
    switch (op.payload) {
      case PayloadRule::kNoPayload:
        if (body != 0)
          add(FindingCode::kPayloadLength, Layer::kPayload, pos,
              "{} carries {} payload bytes, none allowed", op.name, body);
        break;
      case PayloadRule::kExactPmtu:
        if (mtu_enum(static_cast<std::uint32_t>(len)) == 0)
          add(FindingCode::kPayloadLength, Layer::kPayload, pos,
              "{} payload of {} bytes is not a path MTU (FIRST/MIDDLE carry exactly PMTU)", op.name,
              len);
        break;
      case PayloadRule::kUpToPmtu1:
        if (len == 0 || len > kMaxMtu)
          add(FindingCode::kPayloadLength, Layer::kPayload, pos,
              "{} payload of {} bytes is outside 1..4096", op.name, len);
        break;
      case PayloadRule::kUpToPmtu0:
        if (len > kMaxMtu)
          add(FindingCode::kPayloadLength, Layer::kPayload, pos,
              "{} payload of {} bytes exceeds 4096", op.name, len);
        break;
      case PayloadRule::kExactly8:
        if (len != 8)
          add(FindingCode::kPayloadLength, Layer::kPayload, pos, "{} carries {} bytes, not 8",
              op.name, len);
        break;
      case PayloadRule::kUnknown:
        break;
    }
  }

  void datagram(const Bth& b, std::size_t pos, std::size_t len) {
    const bool mgmt = b.dqpn <= 1 || p_.deth->srcqp <= 1;
    if (b.dqpn == 1 && p_.deth->qkey != kGsiQkey)
      add(FindingCode::kQp1Qkey, Layer::kDeth, p_.bth_offset + Bth::kSize,
          "Q_Key 0x{:08x} to QP1 is not the GSI Q_Key 0x80010000", p_.deth->qkey);
    if (mgmt && o_.decode_mad)
      p_.mad = decode_mad(f_.subspan(pos, len), static_cast<std::uint32_t>(pos), p_.findings);
  }

  Packet& p_;
  Bytes f_;
  const DecodeOptions& o_;
};

}  // namespace

std::uint16_t ipv4_checksum(Bytes header) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < header.size(); i += 2) sum += be::load16(&header[i]);
  if (header.size() % 2) sum += std::uint32_t{header.back()} << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

void refresh_ipv4_checksum(std::span<std::uint8_t> header) {
  if (header.size() < Ipv4::kSize) return;
  be::store16(&header[10], 0);
  be::store16(&header[10], ipv4_checksum(Bytes(header)));
}

void decode_into(Packet& p, Bytes frame, LinkType link, const DecodeOptions& options) {
  p.framing = Framing::kNone;
  p.eth.reset();
  p.vlans.clear();
  p.ipv4.reset();
  p.ipv4_options = {};
  p.ipv6.reset();
  p.udp.reset();
  p.lrh.reset();
  p.grh.reset();
  p.bth.reset();
  p.rdeth.reset();
  p.deth.reset();
  p.xrceth.reset();
  p.feth.reset();
  p.reth.reset();
  p.atomiceth.reset();
  p.aeth.reset();
  p.atomicacketh.reset();
  p.immdt.reset();
  p.ieth.reset();
  p.payload = {};
  p.mad.reset();
  p.icrc.reset();
  p.vcrc.reset();
  p.bth_offset = p.payload_offset = 0;
  p.frame_length = static_cast<std::uint32_t>(frame.size());
  p.findings.clear();
  Decoder(p, frame, options).link(link);
}

Packet decode(Bytes frame, LinkType link, const DecodeOptions& options) {
  Packet p;
  decode_into(p, frame, link, options);
  return p;
}

}  // namespace roceconf
