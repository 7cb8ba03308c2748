// The sent-framing check on crafted frames: a good frame gives no finding, and each rule
// reports its own violation alone, naming its statement.
#include "dissector/analysis/sent_framing.h"

#include <gtest/gtest.h>

#include <functional>

#include "dissector/address_text.h"
#include "dissector/analysis/test/frames.h"
#include "dissector/icrc.h"

namespace roceconf::analysis::test {
namespace {

constexpr std::size_t kIp = 14;  // untagged Ethernet

// The device is B (192.0.2.2), the tester A (192.0.2.1); the AV asks for hop limit 17 and
// traffic class 0x68 (DSCP 26).
SentFramingExpect expect() {
  SentFramingExpect e;
  e.hop_limit = 17;
  e.traffic_class = 0x68;
  e.source_gid = gid_from_ipv4({192, 0, 2, 2});
  e.destination_gid = gid_from_ipv4({192, 0, 2, 1});
  return e;
}

// A good ACK from the device, as the AV asks.
Packet good_ack() {
  Packet p = ack(5, 1);
  p.ipv4->ttl = 17;
  p.ipv4->dscp = 0x68 >> 2;
  return p;
}

std::vector<std::uint8_t> bytes_of(const Packet& p, const EncodeOptions& o = {}) {
  return encode(p, o);
}

// IPv4 header checksum and ICRC recomputed after an edit, so only the edit is wrong.
void refresh(std::vector<std::uint8_t>& f) {
  const std::size_t hl = static_cast<std::size_t>(f[kIp] & 0x0F) * 4;
  f[kIp + 10] = f[kIp + 11] = 0;
  const std::uint16_t sum = ipv4_checksum(Bytes(f.data() + kIp, hl));
  f[kIp + 10] = static_cast<std::uint8_t>(sum >> 8);
  f[kIp + 11] = static_cast<std::uint8_t>(sum);
  if (hl == 20 && f.size() >= kIp + 20 + 8 + 12 + 4) {
    const std::size_t end = f.size() - 4;
    store_icrc(&f[end],
               compute_icrc(Bytes(f.data() + kIp, end - kIp), IcrcFraming::kRoceV2Ipv4, hl + 8));
  }
}

std::vector<FramingFinding> check(const std::vector<std::uint8_t>& f,
                                  const SentFramingExpect& e = expect(),
                                  const DecodeOptions& o = {}) {
  return check_sent_framing(decode(f, LinkType::kEthernet, o), e);
}

std::string text(const std::vector<FramingFinding>& fs) {
  std::string out;
  for (const auto& f : fs) out += "\n  " + f.text();
  return out;
}

// Exactly one finding, of this statement and field.
void expect_only(const std::vector<FramingFinding>& fs, std::string_view statement,
                 std::string_view field) {
  ASSERT_EQ(fs.size(), 1u) << text(fs);
  EXPECT_EQ(fs[0].statement, statement) << text(fs);
  EXPECT_EQ(fs[0].field, field) << text(fs);
}

// A good ACK edited by `edit`, then its checksum and ICRC refreshed.
std::vector<FramingFinding> edited(const std::function<void(std::vector<std::uint8_t>&)>& edit) {
  auto f = bytes_of(good_ack());
  edit(f);
  refresh(f);
  return check(f);
}

TEST(SentFraming, GoodFramesGiveNoFinding) {
  EXPECT_TRUE(check(bytes_of(good_ack())).empty()) << text(check(bytes_of(good_ack())));
  Packet send = request(opcode::kRcSendOnly, 3, 100, false);
  send.ipv4->ttl = 17;
  send.ipv4->dscp = 26;
  EXPECT_TRUE(check(bytes_of(send)).empty()) << text(check(bytes_of(send)));
  // A MAD's AV is the device's GSI choice: TTL and DSCP are not the connection's.
  CmRep rep;
  rep.local_comm_id = 7;
  auto mad = cm(false, rep, 0x10);
  mad.ipv4->ttl = 255;
  EXPECT_TRUE(check(bytes_of(mad)).empty()) << text(check(bytes_of(mad)));
  // Without expectations only the fixed rules apply.
  EXPECT_TRUE(check(bytes_of(ack(1, 1)), SentFramingExpect{}).empty());
}

TEST(SentFraming, FramePaddedToTheEthernetMinimumIsFine) {
  Packet p = request(opcode::kRcSendOnly, 3, 0, false);  // 58 bytes
  p.ipv4->ttl = 17;
  p.ipv4->dscp = 26;
  auto f = bytes_of(p);
  ASSERT_EQ(f.size(), 58u);
  f.resize(60, 0);
  EXPECT_TRUE(check(f).empty()) << text(check(f));
  // Padding on a longer frame is not the Ethernet minimum: the length is short of the frame.
  auto g = bytes_of(good_ack());
  g.resize(g.size() + 2, 0);
  const auto fs = check(g);
  ASSERT_EQ(fs.size(), 2u) << text(fs);
  EXPECT_EQ(fs[0].statement, "CA17-6");
  EXPECT_EQ(fs[1].statement, "CA17-21");
}

TEST(SentFraming, WrongIcrcIsAMalformedFrame) {
  auto f = bytes_of(good_ack());
  f[f.size() - 1] ^= 0x01;
  expect_only(check(f), "CA17-2", "icrc");
}

TEST(SentFraming, Ipv4VersionAndHeaderLength) {
  expect_only(edited([](auto& f) { f[kIp] = 0x55; }), "CA17-3", "ipv4.version");
  // IHL 6: four option bytes inserted, the lengths grown with them.
  auto f = bytes_of(good_ack());
  f.insert(f.begin() + kIp + 20, {1, 1, 1, 0});
  f[kIp] = 0x46;
  f[kIp + 3] = static_cast<std::uint8_t>(f[kIp + 3] + 4);
  refresh(f);
  expect_only(check(f), "CA17-3", "ipv4.ihl");
}

TEST(SentFraming, Fragmentation) {
  expect_only(edited([](auto& f) { f[kIp + 6] &= ~0x40; }), "CA17-7", "ipv4.df");
  expect_only(edited([](auto& f) { f[kIp + 6] |= 0x20; }), "CA17-8", "ipv4.mf");
  expect_only(edited([](auto& f) { f[kIp + 7] = 1; }), "CA17-8", "ipv4.frag");
}

TEST(SentFraming, ProtocolTtlDscpEcn) {
  expect_only(edited([](auto& f) { f[kIp + 9] = 6; }), "CA17-10", "ipv4.proto");
  expect_only(edited([](auto& f) { f[kIp + 8] = 64; }), "CA17-9", "ipv4.ttl");
  expect_only(edited([](auto& f) { f[kIp + 1] = 0; }), "CA17-4", "ipv4.dscp");
  expect_only(edited([](auto& f) { f[kIp + 1] |= 2; }), "CA17-5", "ipv4.ecn");
  // With congestion management declared, ECT and CE are the device's to set.
  Packet p = good_ack();
  p.ipv4->ecn = 3;
  SentFramingExpect cc = expect();
  cc.congestion_management = true;
  EXPECT_TRUE(check(bytes_of(p), cc).empty());
  // Unless the device declares the codepoint its packets carry.
  cc.declared_ecn = 0;
  const auto found = check(bytes_of(p), cc);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].statement, "CA17-5");
  cc.declared_ecn = 3;
  EXPECT_TRUE(check(bytes_of(p), cc).empty());
}

TEST(SentFraming, CnpDscpIsTheDevicesChoice) {
  // A CNP goes out with the device's congestion priority (mlx5 cnp_dscp), not the AV's DSCP.
  Packet p = good_ack();
  p.bth->opcode = opcode::kCnp;
  p.bth->becn = true;
  p.aeth.reset();
  p.ipv4->dscp = 48;
  SentFramingExpect cc = expect();
  cc.congestion_management = true;
  EXPECT_TRUE(check(bytes_of(p), cc).empty());
}

TEST(SentFraming, LengthsIncludeTheIcrc) {
  // Total length without the ICRC (a common slip): the ICRC lies outside the datagram.
  expect_only(edited([](auto& f) { f[kIp + 3] = static_cast<std::uint8_t>(f[kIp + 3] - 4); }),
              "CA17-6", "ipv4.len");
  expect_only(edited([](auto& f) { f[kIp + 3] = static_cast<std::uint8_t>(f[kIp + 3] + 1); }),
              "CA17-6", "ipv4.len");
  expect_only(edited([](auto& f) { f[kIp + 25] = static_cast<std::uint8_t>(f[kIp + 25] - 4); }),
              "CA17-21", "udp.len");
}

TEST(SentFraming, UdpPortAndAddresses) {
  Packet p = good_ack();
  p.udp->dport = 4792;
  expect_only(check(bytes_of(p), expect(), {.udp_port = 4792}), "CA17-20", "udp.dport");
  p = good_ack();
  p.ipv4->src = {192, 0, 2, 9};
  expect_only(check(bytes_of(p)), "CA17-11", "ipv4.src");
  p = good_ack();
  p.ipv4->dst = {192, 0, 2, 9};
  expect_only(check(bytes_of(p)), "CA17-12", "ipv4.dst");
}

TEST(SentFraming, BthReservedBitsAndVersion) {
  const auto with = [](auto set) {
    Packet p = good_ack();
    set(*p.bth);
    return check(bytes_of(p));
  };
  expect_only(with([](Bth& b) { b.resv6 = 1; }), "C9-6", "bth.resv6");
  expect_only(with([](Bth& b) { b.resv7 = 0x40; }), "C9-6", "bth.resv7");
  expect_only(with([](Bth& b) { b.fecn = true; }), "C9-6", "bth.fecn");
  expect_only(with([](Bth& b) { b.becn = true; }), "C9-6", "bth.becn");
  expect_only(with([](Bth& b) { b.version = 1; }), "9.2", "bth.version");
  Packet p = good_ack();
  p.bth->becn = true;
  SentFramingExpect cc = expect();
  cc.congestion_management = true;
  EXPECT_TRUE(check(bytes_of(p), cc).empty());
}

TEST(SentFraming, CmMads) {
  const auto mad_with = [](auto set) {
    CmRep rep;
    rep.local_comm_id = 7;
    Packet p = cm(false, rep, 0x10);
    set(p.mad->header);
    return check(bytes_of(p));
  };
  expect_only(mad_with([](MadHeader& h) { h.base_version = 2; }), "C13-4.2-1.1",
              "mad.base_version");
  expect_only(mad_with([](MadHeader& h) { h.class_version = 1; }), "C13-5", "mad.class_version");
  expect_only(mad_with([](MadHeader& h) { h.mgmt_class = 0x04; }), "C13-5", "mad.mgmt_class");

  // A MAD four bytes short of 256.
  std::array<std::uint8_t, kMadSize> whole{};
  Mad m;
  m.cm = CmRtu{1, 2, {}};
  encode_mad(m, whole);
  Packet p = cm(false, CmRtu{1, 2, {}}, 0x10);
  p.mad.reset();
  p.payload = Bytes(whole.data(), kMadSize - 4);
  expect_only(check(bytes_of(p)), "C13-3", "mad.length");

  for (std::uint16_t reason : {13, 19, 28}) {
    CmRej rej;
    rej.reason = reason;
    const auto fs = check(bytes_of(cm(false, rej, 0x11)));
    if (reason == 28) {
      EXPECT_TRUE(fs.empty()) << text(fs);
    } else {
      expect_only(fs, "CA17-35", "cm.reason");
    }
  }
}

TEST(SentFraming, Ipv6) {
  Packet p = good_ack();
  p.ipv4.reset();
  p.eth->type = ethertype::kIpv6;
  Ipv6 ip;
  ip.src = Gid{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  ip.dst = Gid{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  ip.hop_limit = 17;
  ip.traffic_class = 0x68;
  p.ipv6 = ip;
  SentFramingExpect e = expect();
  e.source_gid = ip.src;
  e.destination_gid = ip.dst;
  EXPECT_TRUE(check(bytes_of(p), e).empty()) << text(check(bytes_of(p), e));
  const auto with = [&](auto set) {
    Packet q = p;
    set(*q.ipv6);
    return check(bytes_of(q), e);
  };
  expect_only(with([](Ipv6& h) { h.hop_limit = 64; }), "CA17-17", "ipv6.hlim");
  expect_only(with([](Ipv6& h) { h.traffic_class = 0; }), "CA17-13", "ipv6.tc");
  expect_only(with([](Ipv6& h) { h.traffic_class = 0x69; }), "CA17-14", "ipv6.tc");
  expect_only(with([](Ipv6& h) { h.src[15] = 9; }), "CA17-18", "ipv6.src");
  expect_only(with([](Ipv6& h) { h.dst[15] = 9; }), "CA17-19", "ipv6.dst");
  Packet q = p;
  q.ipv6->payload_length = 1;
  EncodeOptions keep;
  keep.fill_lengths = false;
  q.udp->length = static_cast<std::uint16_t>(bytes_of(p).size() - kIp - Ipv6::kSize);
  q.ipv6->payload_length = static_cast<std::uint16_t>(q.udp->length + 4);
  expect_only(check(bytes_of(q, keep), e), "CA17-15", "ipv6.plen");
}

TEST(SentFraming, FindingTextReadsBack) {
  const FramingFinding f{"CA17-9", "ipv4.ttl", "63", "64 (the AV's hop limit)"};
  EXPECT_EQ(f.text(), "framing: ipv4.ttl 63, expected 64 (the AV's hop limit) (CA17-9)");
  const auto back = parse_framing_finding(f.text());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->statement, "CA17-9");
  EXPECT_EQ(back->field, "ipv4.ttl");
  EXPECT_EQ(back->actual, "63");
  EXPECT_EQ(back->expected, "64 (the AV's hop limit)");
  EXPECT_FALSE(parse_framing_finding("nak"));
  EXPECT_FALSE(parse_framing_finding("framing: nonsense"));
}

}  // namespace
}  // namespace roceconf::analysis::test
