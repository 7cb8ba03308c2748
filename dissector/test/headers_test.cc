// Every wire header: non-default values in every field survive encode → decode, the bytes sit
// at the spec's offsets, and whole frames round-trip byte for byte.
#include <gtest/gtest.h>

#include "dissector/packet.h"
#include "dissector/summary.h"
#include "dissector/test/hex.h"

namespace roceconf {
namespace {

using test::from_hex;

template <typename H>
std::vector<std::uint8_t> bytes_of(const H& h) {
  std::vector<std::uint8_t> b(H::kSize);
  h.encode(std::span<std::uint8_t>(b).first<H::kSize>());
  return b;
}
template <typename H>
H parse(const std::vector<std::uint8_t>& b) {
  return H::decode(std::span<const std::uint8_t>(b).first<H::kSize>());
}

TEST(Headers, BthEveryFieldAtItsOffset) {
  Bth b{0x0A, true, true, 3, 0x5, 0x8001, true, true, 0x2A, 0xABCDEF, true, 0x55, 0x123456};
  const auto w = bytes_of(b);
  // opcode | SE M Pad(2) TVer(4) | P_Key | F B resv6 | DestQP | A resv7 | PSN
  EXPECT_EQ(w, from_hex("0a f5 8001 ea abcdef d5 123456"));
  const Bth d = parse<Bth>(w);
  EXPECT_EQ(d.opcode, 0x0A);
  EXPECT_TRUE(d.solicited && d.migreq && d.fecn && d.becn && d.ackreq);
  EXPECT_EQ(d.padcount, 3);
  EXPECT_EQ(d.version, 5);
  EXPECT_EQ(d.pkey, 0x8001);
  EXPECT_EQ(d.resv6, 0x2A);
  EXPECT_EQ(d.dqpn, 0xABCDEFu);
  EXPECT_EQ(d.resv7, 0x55);
  EXPECT_EQ(d.psn, 0x123456u);
}

TEST(Headers, ExtensionHeadersAtTheirOffsets) {
  EXPECT_EQ(bytes_of(Rdeth{0x01, 0x020304}), from_hex("01020304"));
  EXPECT_EQ(bytes_of(Deth{0x80010000, 0x00, 0x000001}), from_hex("80010000 00 000001"));
  EXPECT_EQ(bytes_of(XrcEth{0, 0x00ABCD}), from_hex("0000abcd"));
  EXPECT_EQ(bytes_of(Reth{0x0102030405060708, 0x0A0B0C0D, 0x1000}),
            from_hex("0102030405060708 0a0b0c0d 00001000"));
  EXPECT_EQ(bytes_of(AtomicEth{0x1000, 0x77, 0x1111222233334444, 0x5555666677778888}),
            from_hex("0000000000001000 00000077 1111222233334444 5555666677778888"));
  EXPECT_EQ(bytes_of(Aeth{0x60, 0x000102}), from_hex("60000102"));
  EXPECT_EQ(bytes_of(AtomicAckEth{0xDEADBEEF00000001}), from_hex("deadbeef00000001"));
  EXPECT_EQ(bytes_of(ImmDt{0xCAFEF00D}), from_hex("cafef00d"));
  EXPECT_EQ(bytes_of(Ieth{0x12345678}), from_hex("12345678"));
  EXPECT_EQ(bytes_of(Feth{0, 2, 1}), from_hex("00000021"));
  const Feth f = parse<Feth>(from_hex("00000021"));
  EXPECT_EQ(f.sel, 2);
  EXPECT_EQ(f.plt, 1);
  const AtomicEth a = parse<AtomicEth>(bytes_of(AtomicEth{8, 9, 10, 11}));
  EXPECT_EQ(a.va, 8u);
  EXPECT_EQ(a.rkey, 9u);
  EXPECT_EQ(a.swap_add, 10u);
  EXPECT_EQ(a.compare, 11u);
}

TEST(Headers, LrhAndGrh) {
  Lrh l;
  l.vl = 0xF;
  l.lver = 0;
  l.sl = 3;
  l.lnh = Lrh::kIbaGlobal;
  l.dlid = 0xFFFF;
  l.pkt_len = 0x48;
  l.slid = 0x1234;
  EXPECT_EQ(bytes_of(l), from_hex("f0 33 ffff 0048 1234"));
  const Lrh d = parse<Lrh>(bytes_of(l));
  EXPECT_EQ(d.sl, 3);
  EXPECT_EQ(d.lnh, Lrh::kIbaGlobal);
  EXPECT_EQ(d.pkt_len, 0x48);
  Grh g;
  g.traffic_class = 0xAB;
  g.flow_label = 0xCDEF1;
  g.pay_len = 40;
  g.hop_limit = 7;
  const auto w = bytes_of(g);
  EXPECT_EQ(std::vector<std::uint8_t>(w.begin(), w.begin() + 8), from_hex("6abcdef1 0028 1b 07"));
  const Grh gd = parse<Grh>(w);
  EXPECT_EQ(gd.traffic_class, 0xAB);
  EXPECT_EQ(gd.flow_label, 0xCDEF1u);
  EXPECT_EQ(gd.sgid, g.sgid);
  EXPECT_EQ(gd.dgid, g.dgid);
}

TEST(Headers, EthernetVlanIpUdp) {
  Packet p;
  p.vlans = {Vlan{ethertype::kQinQ, 1, false, 100, 0}, Vlan{ethertype::kVlan, 5, true, 4000, 0}};
  Ipv4 ip;
  ip.dscp = 26;
  ip.ecn = 2;
  ip.id = 0xBEEF;
  ip.ttl = 9;
  p.ipv4 = ip;
  p.udp = Udp{0xC123, 4791, 0, 0};
  p.bth = Bth{};
  p.bth->dqpn = 0x11;
  const auto frame = encode(p);
  EXPECT_EQ(be::load16(&frame[12]), ethertype::kQinQ);
  EXPECT_EQ(be::load16(&frame[16]), ethertype::kVlan);
  EXPECT_EQ(be::load16(&frame[20]), ethertype::kIpv4);
  const Packet d = decode(frame);
  ASSERT_EQ(d.vlans.size(), 2u);
  EXPECT_EQ(d.vlans[0].vid, 100);
  EXPECT_EQ(d.vlans[1].vid, 4000);
  EXPECT_EQ(d.vlans[1].pcp, 5);
  EXPECT_TRUE(d.vlans[1].dei);
  ASSERT_TRUE(d.ipv4 && d.udp && d.bth);
  EXPECT_EQ(d.ipv4->dscp, 26);
  EXPECT_EQ(d.ipv4->ecn, 2);
  EXPECT_EQ(d.ipv4->id, 0xBEEF);
  EXPECT_EQ(d.udp->sport, 0xC123);
  EXPECT_EQ(d.udp->length, 8 + 12 + 4);
  EXPECT_EQ(d.ipv4->total_length, 20 + 8 + 12 + 4);
  EXPECT_TRUE(d.findings.empty()) << d.findings.front().message;
  EXPECT_EQ(encode(d), frame);
}

// One packet per defined opcode with every header it needs filled with non-default values.
Packet full_packet(std::uint8_t op, const std::vector<std::uint8_t>& payload) {
  Packet p;
  p.ipv4 = Ipv4{};
  p.udp = Udp{};
  Bth b;
  b.opcode = op;
  b.pkey = 0x8123;
  b.dqpn = 0x000ABC;
  b.psn = 0xFFFFFE;
  b.ackreq = true;
  b.solicited = true;
  p.bth = b;
  p.rdeth = Rdeth{0, 0x00EEC0};
  p.deth = Deth{0x11223344, 0, 0x000777};
  p.xrceth = XrcEth{0, 0x00D00D};
  p.feth = Feth{0, 1, 2};
  p.reth = Reth{0x00007F0000001000, 0x00C0FFEE, static_cast<std::uint32_t>(payload.size())};
  p.atomiceth = AtomicEth{0x2000, 0x42, 7, 9};
  p.aeth = Aeth{0x1F, 0x00BEEF};
  p.atomicacketh = AtomicAckEth{0xFEEDFACE};
  p.immdt = ImmDt{0x01020304};
  p.ieth = Ieth{0x0F0E0D0C};
  p.payload = payload;
  return p;
}

std::vector<std::uint8_t> payload_for(const OpcodeInfo& op) {
  switch (op.payload) {
    case PayloadRule::kExactPmtu:
      return std::vector<std::uint8_t>(256, 0xA5);
    case PayloadRule::kUpToPmtu1:
    case PayloadRule::kUpToPmtu0:
      return std::vector<std::uint8_t>(37, 0x5A);
    case PayloadRule::kExactly8:
      return std::vector<std::uint8_t>(8, 0x11);
    default:
      return {};
  }
}

TEST(Frames, EveryOpcodeRoundTrips) {
  int checked = 0;
  for (int op = 0; op < 256; ++op) {
    const OpcodeInfo& info = opcode_info(static_cast<std::uint8_t>(op));
    if (!info.valid || info.service == Service::kManufacturer) continue;
    SCOPED_TRACE(info.name);
    const auto payload = payload_for(info);
    const Packet p = full_packet(static_cast<std::uint8_t>(op), payload);
    const auto frame = encode(p);
    const Packet d = decode(frame);
    ASSERT_TRUE(d.bth);
    EXPECT_EQ(d.bth->opcode, op);
    EXPECT_EQ(d.bth->psn, 0xFFFFFEu);
    EXPECT_EQ(d.payload.size(), payload.size());
    EXPECT_TRUE(std::equal(payload.begin(), payload.end(), d.payload.begin()));
    const std::uint16_t h = info.headers;
    EXPECT_EQ(d.rdeth.has_value(), (h & hdr::kRdeth) != 0);
    EXPECT_EQ(d.deth.has_value(), (h & hdr::kDeth) != 0);
    EXPECT_EQ(d.xrceth.has_value(), (h & hdr::kXrceth) != 0);
    EXPECT_EQ(d.feth.has_value(), (h & hdr::kFeth) != 0);
    EXPECT_EQ(d.reth.has_value(), (h & hdr::kReth) != 0);
    EXPECT_EQ(d.atomiceth.has_value(), (h & hdr::kAtomicEth) != 0);
    EXPECT_EQ(d.aeth.has_value(), (h & hdr::kAeth) != 0);
    EXPECT_EQ(d.atomicacketh.has_value(), (h & hdr::kAtomicAckEth) != 0);
    EXPECT_EQ(d.immdt.has_value(), (h & hdr::kImmDt) != 0);
    EXPECT_EQ(d.ieth.has_value(), (h & hdr::kIeth) != 0);
    if (d.reth) {
      EXPECT_EQ(d.reth->rkey, 0x00C0FFEEu);
    }
    if (d.deth) {
      EXPECT_EQ(d.deth->srcqp, 0x777u);
    }
    if (d.atomiceth) {
      EXPECT_EQ(d.atomiceth->compare, 9u);
    }
    if (d.immdt) {
      EXPECT_EQ(d.immdt->imm, 0x01020304u);
    }
    ASSERT_TRUE(d.icrc);
    EXPECT_TRUE(d.icrc->ok());
    for (const Finding& f : d.findings)
      EXPECT_EQ(f.code, FindingCode::kUnsupportedOpcode) << f.message;  // RD only
    EXPECT_EQ(encode(d), frame);
    ++checked;
  }
  EXPECT_EQ(checked, 90);  // RC 25, UC 12, RD 24, UD 2, CNP 2 (IB and RoCEv2), XRC 25
}

TEST(Frames, RoceV2OverIpv6AndRoceV1AndNativeIbRoundTrip) {
  const std::vector<std::uint8_t> data(100, 7);
  Packet v6 = full_packet(opcode::kRcWriteOnly, data);
  v6.ipv4.reset();
  v6.ipv6 = Ipv6{};
  Packet v1 = full_packet(opcode::kRcSendOnly, data);
  v1.ipv4.reset();
  v1.udp.reset();
  v1.grh = Grh{};
  Packet ib = full_packet(opcode::kRcReadResponseOnly, data);
  ib.ipv4.reset();
  ib.udp.reset();
  ib.lrh = Lrh{};
  Packet ibg = ib;
  ibg.grh = Grh{};
  for (auto [p, link, framing] : {std::tuple{v6, LinkType::kEthernet, Framing::kRoceV2},
                                  std::tuple{v1, LinkType::kEthernet, Framing::kRoceV1},
                                  std::tuple{ib, LinkType::kInfiniBand, Framing::kInfiniBand},
                                  std::tuple{ibg, LinkType::kInfiniBand, Framing::kInfiniBand}}) {
    const auto frame = encode(p);
    const Packet d = decode(frame, link);
    EXPECT_EQ(d.framing, framing);
    EXPECT_TRUE(d.findings.empty()) << d.findings.front().message;
    EXPECT_TRUE(d.icrc && d.icrc->ok());
    EXPECT_EQ(encode(d), frame);
  }
}

TEST(Frames, NativeIbCnpIsNamedAndHasNoBody) {
  // Annex A10's CNP on an InfiniBand link: LRH, BTH (opcode 0x80, BECN) and the ICRC, nothing
  // between (six words in the LRH length), unlike RoCEv2's 0x81 with 16 reserved bytes.
  Packet p;
  p.lrh = Lrh{};
  Bth b;
  b.opcode = opcode::kIbCnp;
  b.becn = true;
  b.dqpn = 0x1234;
  p.bth = b;
  const auto frame = encode(p);
  const Packet d = decode(frame, LinkType::kInfiniBand);
  ASSERT_TRUE(d.bth && d.lrh);
  EXPECT_EQ(d.framing, Framing::kInfiniBand);
  EXPECT_EQ(opcode_info(d.bth->opcode).name, "IB_CNP");
  EXPECT_EQ(opcode_info(d.bth->opcode).service, Service::kCnp);
  EXPECT_TRUE(opcode_info(d.bth->opcode).valid);
  EXPECT_TRUE(d.bth->becn);
  EXPECT_EQ(d.bth->dqpn, 0x1234u);
  EXPECT_TRUE(d.payload.empty());
  EXPECT_TRUE(d.findings.empty()) << d.findings.front().message;
  EXPECT_TRUE(d.icrc && d.icrc->ok());
  EXPECT_NE(summarize(d).find("IB_CNP"), std::string::npos) << summarize(d);
  EXPECT_EQ(encode(d), frame);
}

TEST(Frames, RawIpLinkType) {
  Packet p = full_packet(opcode::kRcAck, {});
  const auto frame = encode(p, EncodeOptions{.link = LinkType::kRaw});
  const Packet d = decode(frame, LinkType::kRaw);
  ASSERT_TRUE(d.aeth);
  EXPECT_FALSE(d.eth);
  EXPECT_TRUE(d.icrc->ok());
}

TEST(Opcodes, TableMatchesTheSpec) {
  EXPECT_EQ(opcode_info(0x04).name, "RC_SEND_ONLY");
  EXPECT_EQ(opcode_info(0x2A).name, "UC_RDMA_WRITE_ONLY");
  EXPECT_EQ(opcode_info(0x64).name, "UD_SEND_ONLY");
  EXPECT_EQ(opcode_info(0x81).name, "CNP");
  EXPECT_EQ(opcode_info(0x80).name, "IB_CNP");
  EXPECT_EQ(opcode_info(0x80).headers, 0);
  EXPECT_FALSE(opcode_info(0x82).valid);
  EXPECT_EQ(opcode_info(0x1C).name, "RC_FLUSH");
  EXPECT_EQ(opcode_info(0x1D).name, "RC_ATOMIC_WRITE");
  EXPECT_EQ(opcode_info(0xAC).name, "XRC_RDMA_READ_REQUEST");
  EXPECT_EQ(opcode_info(0x55).name, "RD_RESYNC");
  EXPECT_FALSE(opcode_info(0x15).valid);  // RESYNC is RD only
  EXPECT_FALSE(opcode_info(0x2C).valid);  // no READ on UC
  EXPECT_FALSE(opcode_info(0x60).valid);  // UD carries SEND ONLY only
  EXPECT_FALSE(opcode_info(0x18).valid);
  EXPECT_TRUE(opcode_info(0xE5).valid);  // manufacturer specific
  EXPECT_EQ(opcode_info(0x12).headers, hdr::kAeth | hdr::kAtomicAckEth);
  EXPECT_EQ(opcode_info(0x1C).headers, hdr::kFeth | hdr::kReth);
  EXPECT_EQ(opcode_info(0x0E).headers, 0);  // READ RESPONSE MIDDLE has no AETH
  EXPECT_EQ(opcode_info(0x65).headers, hdr::kDeth | hdr::kImmDt);
  EXPECT_EQ(opcode_info(0x40).headers, hdr::kRdeth | hdr::kDeth);
  EXPECT_EQ(opcode_info(0x51).headers, hdr::kRdeth | hdr::kAeth);
  EXPECT_EQ(opcode_info(0xA4).headers, hdr::kXrceth);
  EXPECT_EQ(opcode_info(0xB1).headers, hdr::kAeth);
  int rc = 0, uc = 0;
  for (int op = 0; op < 0x20; ++op) rc += opcode_info(static_cast<std::uint8_t>(op)).valid;
  for (int op = 0x20; op < 0x40; ++op) uc += opcode_info(static_cast<std::uint8_t>(op)).valid;
  EXPECT_EQ(rc, 25);  // 0x00-0x14, 0x16, 0x17, 0x1C, 0x1D
  EXPECT_EQ(uc, 12);
}

}  // namespace
}  // namespace roceconf
