// dissector/summary.h: address notation (RFC 5952 for IPv6) and one-line summaries of the
// framings the CLI tests do not build (RoCEv1, native IB) and of broken frames.
#include "dissector/summary.h"

#include <gtest/gtest.h>

#include <array>
#include <string>

namespace roceconf {
namespace {

std::string v6(std::array<std::uint16_t, 8> groups) {
  std::array<std::uint8_t, 16> b{};
  for (std::size_t i = 0; i < 8; ++i) be::store16(&b[2 * i], groups[i]);
  return format_address(b);
}

TEST(Summary, Ipv6FollowsRfc5952) {
  EXPECT_EQ(v6({0, 0, 0, 0, 0, 0, 0, 0}), "::");
  EXPECT_EQ(v6({0, 0, 0, 0, 0, 0, 0, 1}), "::1");
  EXPECT_EQ(v6({1, 0, 0, 0, 0, 0, 0, 0}), "1::");
  EXPECT_EQ(v6({0x2001, 0xdb8, 0, 0, 0, 0, 0, 1}), "2001:db8::1");
  EXPECT_EQ(v6({0x2001, 0xdb8, 0, 1, 1, 1, 1, 1}), "2001:db8:0:1:1:1:1:1");  // one zero stays
  EXPECT_EQ(v6({0x2001, 0, 0, 1, 0, 0, 0, 1}), "2001:0:0:1::1");             // longest run
  EXPECT_EQ(v6({0x2001, 0xdb8, 0, 0, 1, 0, 0, 1}), "2001:db8::1:0:0:1");     // first on a tie
  EXPECT_EQ(v6({0xfe80, 0, 0, 0, 2, 0xc902, 0x24, 0xf636}), "fe80::2:c902:24:f636");
  EXPECT_EQ(v6({0, 0, 0, 0, 0, 0xffff, 0xc0a8, 0x4105}), "::ffff:192.168.65.5");
}

TEST(Summary, OtherAddressSizes) {
  const std::array<std::uint8_t, 6> mac = {0x52, 0x54, 0, 0x0a, 0xaa, 0xba};
  const std::array<std::uint8_t, 4> ip = {10, 0, 0, 255};
  const std::array<std::uint8_t, 2> odd = {0xbe, 0xef};
  EXPECT_EQ(format_address(mac), "52:54:00:0a:aa:ba");
  EXPECT_EQ(format_address(ip), "10.0.0.255");
  EXPECT_EQ(format_address(odd), "beef");
}

TEST(Summary, RoceV1ShowsGids) {
  Packet p;
  p.eth = Ethernet{};
  p.grh = Grh{};
  Bth b;
  b.opcode = opcode::kRcSendOnly;
  b.dqpn = 0x10;
  b.psn = 5;
  b.fecn = true;
  p.bth = b;
  EXPECT_EQ(summarize(decode(encode(p))),
            "fe80::1 → fe80::2 RoCEv1 RC_SEND_ONLY QP=0x000010 PSN=5 FECN ICRC ok");
}

TEST(Summary, NativeIbShowsLidsAndVcrc) {
  Packet p;
  Lrh lrh;
  lrh.slid = 1;
  lrh.dlid = 4;
  p.lrh = lrh;
  Bth b;
  b.opcode = opcode::kRcAck;
  b.dqpn = 0x870408;
  b.psn = 13896277;
  p.bth = b;
  p.aeth = Aeth{0x1F, 1};
  EXPECT_EQ(summarize(decode(encode(p), LinkType::kInfiniBand)),
            "LID 1 → LID 4 IB RC_ACKNOWLEDGE QP=0x870408 PSN=13896277 ACK msn=1 ICRC ok VCRC ok");
}

TEST(Summary, ReservedOpcodeAndFindings) {
  Packet p;
  p.ipv4 = Ipv4{};
  p.udp = Udp{};
  Bth b;
  b.opcode = 0x1E;  // reserved in the RC range
  b.dqpn = 0x10;
  b.resv6 = 1;
  b.resv7 = 1;  // two reserved-bits findings: named once
  p.bth = b;
  const std::string line = summarize(decode(encode(p)));
  EXPECT_NE(line.find("RoCEv2 opcode=0x1e QP="), std::string::npos) << line;
  EXPECT_NE(line.find("ICRC ok [reserved-bits, reserved-opcode]"), std::string::npos) << line;
}

TEST(Summary, TruncatedAndUncheckedIcrc) {
  Packet p;
  p.ipv4 = Ipv4{};
  p.udp = Udp{};
  p.bth = Bth{};
  auto frame = encode(p);
  EXPECT_NE(summarize(decode(frame), false).find("ICRC unchecked"), std::string::npos);
  frame.resize(14 + 20 + 8 + 6);  // half a BTH
  const std::string line = summarize(decode(frame));
  EXPECT_NE(line.find("192.0.2.1 → 192.0.2.2 RoCEv2 (no BTH) ["), std::string::npos) << line;
  EXPECT_NE(line.find("truncated"), std::string::npos) << line;
}

}  // namespace
}  // namespace roceconf
