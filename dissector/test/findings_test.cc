// Malformed input yields specific findings at the right layer and offset, never a crash.
#include <gtest/gtest.h>

#include <random>

#include "dissector/packet.h"

namespace roceconf {
namespace {

constexpr std::size_t kBthAt = 14 + 20 + 8;  // untagged Ethernet / IPv4 / UDP

Packet send_only(std::size_t len) {
  static std::vector<std::uint8_t> data(8192, 0x3C);
  Packet p;
  p.ipv4 = Ipv4{};
  p.udp = Udp{};
  Bth b;
  b.opcode = opcode::kRcSendOnly;
  b.dqpn = 0x12;
  b.psn = 100;
  p.bth = b;
  p.payload = Bytes(data).first(len);
  return p;
}

const Finding* find(const Packet& p, FindingCode code) {
  for (const auto& f : p.findings)
    if (f.code == code) return &f;
  return nullptr;
}

TEST(Findings, ValidPacketHasNone) {
  const Packet d = decode(encode(send_only(61)));
  EXPECT_TRUE(d.findings.empty());
}

TEST(Findings, EveryTruncationIsReportedNotCrashed) {
  const auto frame = encode(send_only(61));
  for (std::size_t n = 0; n < frame.size(); ++n) {
    const Packet d = decode(Bytes(frame).first(n));
    EXPECT_FALSE(d.findings.empty()) << "length " << n;
  }
}

TEST(Findings, IpAndUdpLengthsDisagree) {
  auto frame = encode(send_only(16));
  auto bad_ip = frame;
  be::store16(&bad_ip[14 + 2], static_cast<std::uint16_t>(be::load16(&bad_ip[16]) + 8));
  Packet d = decode(bad_ip);
  const Finding* f = find(d, FindingCode::kIpLength);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->layer, Layer::kIpv4);
  EXPECT_EQ(f->offset, 16u);
  EXPECT_TRUE(find(d, FindingCode::kIpChecksum));  // the checksum no longer verifies either

  auto bad_udp = frame;
  be::store16(&bad_udp[34 + 4], 200);
  d = decode(bad_udp);
  f = find(d, FindingCode::kUdpLength);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->offset, 38u);
}

TEST(Findings, GrhPayLenDisagrees) {
  Packet p = send_only(8);
  p.ipv4.reset();
  p.udp.reset();
  p.grh = Grh{};
  p.grh->pay_len = 500;
  const auto frame = encode(p, EncodeOptions{.fill_lengths = false});
  const Packet d = decode(frame);
  const Finding* f = find(d, FindingCode::kGrhLength);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->offset, 14u + 4u);
}

TEST(Findings, PadCountInconsistent) {
  Packet p = send_only(5);  // needs pad 3
  p.bth->padcount = 1;
  const Packet d = decode(encode(p, EncodeOptions{.fill_pad = false}));
  const Finding* f = find(d, FindingCode::kPadCount);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->layer, Layer::kBth);
  EXPECT_EQ(f->offset, kBthAt + 1);
}

TEST(Findings, TverReservedBitsAndOpcode) {
  Packet p = send_only(4);
  p.bth->version = 1;
  p.bth->resv7 = 0x01;
  Packet d = decode(encode(p));
  EXPECT_TRUE(find(d, FindingCode::kTver));
  ASSERT_TRUE(find(d, FindingCode::kReservedBits));
  EXPECT_EQ(find(d, FindingCode::kReservedBits)->offset, kBthAt + 8);
  EXPECT_FALSE(find(d, FindingCode::kBadIcrc));  // TVer and Resv7 are covered, not masked

  p = send_only(4);
  p.bth->opcode = 0x18;
  d = decode(encode(p));
  ASSERT_TRUE(find(d, FindingCode::kReservedOpcode));
  EXPECT_EQ(find(d, FindingCode::kReservedOpcode)->offset, kBthAt);
}

TEST(Findings, PayloadRules) {
  Packet p = send_only(100);
  p.bth->opcode = opcode::kRcSendFirst;  // FIRST must carry a whole PMTU
  EXPECT_TRUE(find(decode(encode(p)), FindingCode::kPayloadLength));
  p = send_only(1024);
  p.bth->opcode = opcode::kRcSendMiddle;
  EXPECT_FALSE(find(decode(encode(p)), FindingCode::kPayloadLength));
  p = send_only(0);
  p.bth->opcode = opcode::kRcSendLast;  // LAST carries 1..PMTU
  EXPECT_TRUE(find(decode(encode(p)), FindingCode::kPayloadLength));
  p = send_only(4100);
  EXPECT_TRUE(find(decode(encode(p)), FindingCode::kPayloadLength));
  p = send_only(8);
  p.bth->opcode = opcode::kRcAck;  // an ACK with data
  EXPECT_TRUE(find(decode(encode(p)), FindingCode::kPayloadLength));
  p = send_only(4);
  p.bth->opcode = opcode::kRcAtomicWrite;
  EXPECT_TRUE(find(decode(encode(p)), FindingCode::kPayloadLength));
}

TEST(Findings, BadIcrcOnlyWhenIcrcIsWrong) {
  Packet p = send_only(32);
  p.icrc = Icrc{0x12345678, 0};
  const auto frame = encode(p, EncodeOptions{.fill_icrc = false});
  const Packet d = decode(frame);
  ASSERT_TRUE(find(d, FindingCode::kBadIcrc));
  EXPECT_EQ(d.icrc->value, 0x12345678u);
  EXPECT_EQ(find(d, FindingCode::kBadIcrc)->offset, frame.size() - 4);
  EXPECT_FALSE(
      decode(frame, LinkType::kEthernet, {.check_icrc = false}).has(FindingCode::kBadIcrc));
}

TEST(Findings, SyndromeAlignmentAndDmaLength) {
  Packet p = send_only(0);
  p.bth->opcode = opcode::kRcAck;
  p.aeth = Aeth{0x45, 1};  // type 0b10 is reserved
  EXPECT_TRUE(decode(encode(p)).has(FindingCode::kReservedSyndrome));
  p.bth->opcode = opcode::kRcFetchAdd;
  p.atomiceth = AtomicEth{0x1004, 1, 1, 0};
  EXPECT_TRUE(decode(encode(p)).has(FindingCode::kAtomicAlignment));
  p.bth->opcode = opcode::kRcReadRequest;
  p.reth = Reth{0, 1, 0x80000001};
  EXPECT_TRUE(decode(encode(p)).has(FindingCode::kDmaLength));
}

TEST(Findings, WrongQkeyOnQp1) {
  Packet p = send_only(0);
  p.bth->opcode = opcode::kUdSendOnly;
  p.bth->dqpn = 1;
  p.deth = Deth{0x12345678, 0, 1};
  const Packet d = decode(encode(p));
  const Finding* f = find(d, FindingCode::kQp1Qkey);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->layer, Layer::kDeth);
  EXPECT_EQ(f->offset, kBthAt + 12);
}

TEST(Findings, NonRoceUdpIsNotRoce) {
  Packet p = send_only(4);
  p.udp->dport = 5000;
  const Packet d = decode(encode(p));
  EXPECT_EQ(d.framing, Framing::kNone);
  EXPECT_FALSE(d.bth);
  const Packet on_port = decode(encode(p), LinkType::kEthernet, {.udp_port = 5000});
  EXPECT_EQ(on_port.framing, Framing::kRoceV2);
  EXPECT_TRUE(on_port.bth);
}

TEST(Findings, RandomBytesNeverCrash) {
  std::mt19937_64 rng(42);
  std::vector<std::uint8_t> buf;
  const auto base = encode(send_only(40));
  for (int i = 0; i < 20000; ++i) {
    // Half random garbage, half a valid frame with a few random bytes flipped.
    if (i % 2) {
      buf.resize(rng() % 200);
      for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
    } else {
      buf = base;
      for (int k = 0; k < 3; ++k) buf[rng() % buf.size()] ^= static_cast<std::uint8_t>(rng());
      buf.resize(rng() % (buf.size() + 1));
    }
    for (LinkType link : {LinkType::kEthernet, LinkType::kRaw, LinkType::kLinuxSll,
                          LinkType::kLinuxSll2, LinkType::kErf, LinkType::kInfiniBand}) {
      const Packet d = decode(buf, link);
      for (const Finding& f : d.findings) EXPECT_LE(f.offset, buf.size());
    }
  }
}

}  // namespace
}  // namespace roceconf
