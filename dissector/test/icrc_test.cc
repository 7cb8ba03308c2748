// ICRC and VCRC against independent vectors: Scapy's RoCE test vectors (two built by Scapy, one
// captured on a ConnectX-4 Lx, two RoCEv1 captures) and a native-IB DAG capture.
#include "dissector/icrc.h"

#include <gtest/gtest.h>

#include "dissector/packet.h"
#include "dissector/test/hex.h"

namespace roceconf {
namespace {

using test::from_hex;

const std::vector<std::uint8_t> kUcPayload = from_hex("4630818be28935d90e9a955054 01be885e50");

Packet uc_send_only() {
  Packet p;
  p.eth = Ethernet{{0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22}, {0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22}};
  Bth b;
  b.opcode = 0x24;  // UC SEND_ONLY
  b.migreq = true;
  b.pkey = 0xFFFF;
  b.dqpn = 211;
  b.psn = 13571856;
  p.bth = b;
  p.udp = Udp{49152, 4791, 0, 0};
  p.payload = kUcPayload;
  return p;
}

TEST(Icrc, RoceV2Ipv4ScapyBuilt) {
  // Scapy: IP(tos=1, id=1144, DF, ttl=64, 192.168.0.7 -> 192.168.0.7) / UDP(49152 -> 4791) /
  // BTH(UC_SEND_ONLY, migreq, padcount 2, dqpn 211, psn 13571856) / 18 bytes + 2 pad.
  Packet p = uc_send_only();
  Ipv4 ip;
  ip.ecn = 1;
  ip.id = 1144;
  ip.src = ip.dst = {192, 168, 0, 7};
  p.ipv4 = ip;
  p.udp->checksum = 0xaca2;  // Scapy's UDP checksum; masked out of the ICRC anyway
  const auto frame = encode(p);
  ASSERT_EQ(frame.size(), 14u + 64u);
  EXPECT_EQ(be::load16(&frame[14 + 10]), 0xb4d5);  // Scapy's IPv4 checksum
  EXPECT_EQ(frame[14 + 20 + 8 + 1] & 0x30, 0x20);  // pad count 2
  const std::vector<std::uint8_t> icrc(frame.end() - 4, frame.end());
  EXPECT_EQ(icrc, from_hex("78 F3 53 F3"));
  const Packet d = decode(frame);
  ASSERT_TRUE(d.icrc);
  EXPECT_TRUE(d.icrc->ok());
  EXPECT_TRUE(d.findings.empty()) << d.findings.front().message;
}

TEST(Icrc, RoceV2Ipv6ScapyBuilt) {
  Packet p = uc_send_only();
  Ipv6 ip;
  ip.traffic_class = 226;
  ip.flow_label = 0x1face;
  ip.hop_limit = 255;
  ip.src = {0x20, 0x22, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x23};
  ip.dst = {0x20, 0x23, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x24};
  p.ipv6 = ip;
  p.udp->checksum = 0xe7c5;
  const auto frame = encode(p);
  EXPECT_EQ(std::vector<std::uint8_t>(frame.end() - 4, frame.end()), from_hex("3E 5B 74 3B"));
  EXPECT_TRUE(decode(frame).icrc->ok());
}

TEST(Icrc, CnpCapturedOnConnectX4Lx) {
  // 10.0.17.1 -> 10.0.18.1, TOS 0xC2, UDP sport 0 and checksum 0, CNP to QP 0x000118, BECN.
  const auto frame = from_hex(
      "e41d2dab2bc27cfe90643b32080045c2003c718c400040119161 0a001101 0a001201"
      "000012b700280000 8100ffff40000118"
      "0000000000000000000000000000000000000000"
      "82fd002a");
  const Packet p = decode(frame);
  ASSERT_TRUE(p.bth);
  EXPECT_EQ(p.bth->opcode, opcode::kCnp);
  EXPECT_TRUE(p.bth->becn);
  EXPECT_EQ(p.bth->dqpn, 0x118u);
  ASSERT_TRUE(p.icrc);
  EXPECT_EQ(p.icrc->expected, load_icrc(from_hex("82fd002a").data()));
  EXPECT_TRUE(p.findings.empty()) << p.findings.front().message;
  EXPECT_EQ(encode(p), frame);  // round trip
}

TEST(Icrc, RoceV1RdmaWriteOnly) {
  const auto frame = from_hex(
      "7cfe90753cd87cfe90753cd88915 6020000000281b40 00000000000000000000ffff0f000002"
      "00000000000000000000ffff0f000002 0a70ffff0000010a80a788bc 000055d4c072600000004 7b3"
      "00000005 0000000001000000 e3d856bb");
  const Packet p = decode(frame);
  ASSERT_EQ(p.framing, Framing::kRoceV1);
  ASSERT_TRUE(p.grh && p.bth && p.reth);
  EXPECT_EQ(p.grh->pay_len, 40);
  EXPECT_EQ(p.grh->traffic_class, 2);
  EXPECT_EQ(p.bth->opcode, 0x0a);
  EXPECT_EQ(p.bth->padcount, 3);
  EXPECT_EQ(p.bth->dqpn, 0x10au);
  EXPECT_TRUE(p.bth->ackreq);
  EXPECT_EQ(p.payload.size(), 5u);
  EXPECT_TRUE(p.icrc->ok());
  EXPECT_EQ(p.icrc->value, load_icrc(from_hex("e3d856bb").data()));
  EXPECT_EQ(encode(p), frame);
}

TEST(Icrc, RoceV1Acknowledge) {
  const auto frame = from_hex(
      "7cfe90753cd87cfe90753cd88915 6020000000141b40 00000000000000000000ffff0f000002"
      "00000000000000000000ffff0f000002 1140ffff00000109 00a788c0 00000005 25f0c038");
  const Packet p = decode(frame);
  ASSERT_TRUE(p.aeth);
  EXPECT_EQ(p.aeth->syndrome, 0);
  EXPECT_EQ(p.aeth->msn, 5u);
  EXPECT_TRUE(p.icrc->ok());
  EXPECT_TRUE(p.findings.empty()) << p.findings.front().message;
  EXPECT_EQ(encode(p), frame);
}

TEST(Icrc, CorruptionIsFoundAndLocated) {
  auto frame = from_hex(
      "7cfe90753cd87cfe90753cd88915 6020000000141b40 00000000000000000000ffff0f000002"
      "00000000000000000000ffff0f000002 1140ffff00000109 00a788c0 00000005 25f0c038");
  frame[frame.size() - 6] ^= 0x01;  // flip a bit of the MSN
  const Packet p = decode(frame);
  ASSERT_EQ(p.findings.size(), 1u);
  EXPECT_EQ(p.findings[0].code, FindingCode::kBadIcrc);
  EXPECT_EQ(p.findings[0].offset, frame.size() - 4);
  EXPECT_EQ(p.findings[0].code_name(), "bad-icrc");
}

TEST(Icrc, MaskedFieldsDoNotChangeIt) {
  Packet p = uc_send_only();
  p.ipv4 = Ipv4{};
  const auto base = encode(p);
  p.ipv4->ttl = 3;
  p.ipv4->dscp = 46;
  p.ipv4->ecn = 3;
  p.udp->checksum = 0x1234;
  p.bth->fecn = p.bth->becn = true;
  const auto changed = encode(p);
  EXPECT_EQ(std::vector<std::uint8_t>(base.end() - 4, base.end()),
            std::vector<std::uint8_t>(changed.end() - 4, changed.end()));
  p.ipv4->id = 2;  // not masked
  const auto id_changed = encode(p);
  EXPECT_NE(std::vector<std::uint8_t>(base.end() - 4, base.end()),
            std::vector<std::uint8_t>(id_changed.end() - 4, id_changed.end()));
}

TEST(Vcrc, EncodedNativeIbAckChecksOut) {
  // The shape of the DAG capture's RC ACKNOWLEDGE, LID 1 -> LID 4, QP 0x870408 (no GRH); the
  // capture itself is checked frame by frame in capture_fixture_test.cc.
  Packet p;
  p.lrh = Lrh{};
  p.lrh->vl = 0;
  p.lrh->dlid = 4;
  p.lrh->slid = 1;
  Bth b;
  b.opcode = opcode::kRcAck;
  b.dqpn = 0x870408;
  p.bth = b;
  const auto frame = encode(p);
  const Packet d = decode(frame, LinkType::kInfiniBand);
  ASSERT_TRUE(d.vcrc && d.icrc);
  EXPECT_TRUE(d.vcrc->ok());
  EXPECT_TRUE(d.icrc->ok());
  EXPECT_EQ(d.lrh->pkt_len, 7);  // 28 bytes: LRH 8 + BTH 12 + AETH 4 + ICRC 4
  EXPECT_EQ(frame.size(), 30u);
}

}  // namespace
}  // namespace roceconf
