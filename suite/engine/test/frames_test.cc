// Frames a case sends, and matching what comes back.
#include <gtest/gtest.h>

#include "dissector/analysis/psn.h"
#include "dissector/names.h"
#include "suite/engine/frame_builder.h"
#include "suite/engine/matcher.h"

namespace roceconf::engine {
namespace {

Addresses addresses() {
  return {{{2, 0, 0, 0, 0, 2}, {192, 0, 2, 1}}, {{2, 0, 0, 0, 0, 1}, {192, 0, 2, 2}}, 4791, {}};
}

Connection connection() {
  Connection c;
  c.name = "c";
  c.local_qpn = 0x100;
  c.remote_qpn = 0x11;
  c.local_psn0 = 0xFFFFFE;
  c.next_psn = c.local_psn0;
  c.remote_psn0 = 0x1000;
  c.pmtu = 1024;
  c.region = RemoteRegion{0x10000000, 0x100, 65536, 16, 4096, 0};
  return c;
}

Packet built(const Connection& c, std::string_view op, const Assignments& a,
             std::vector<std::uint8_t>& storage) {
  auto code = request_opcode(op);
  EXPECT_TRUE(code) << code.error();
  auto f = build_request(addresses(), c, *code, a);
  EXPECT_TRUE(f) << f.error();
  storage = f->bytes;
  return decode(storage);
}

TEST(FrameBuilder, RelativePsnWrapsAndDefaultsComeFromTheConnection) {
  std::vector<std::uint8_t> b;
  const Packet p = built(connection(), "SEND_ONLY", {{"psn", "3"}, {"len", "10"}}, b);
  ASSERT_TRUE(p.bth);
  EXPECT_EQ(p.bth->psn, 1u);  // 0xFFFFFE + 3 wraps to 1
  EXPECT_EQ(p.bth->dqpn, 0x11u);
  EXPECT_EQ(p.bth->padcount, 2);
  EXPECT_EQ(p.payload.size(), 10u);
  EXPECT_TRUE(p.icrc && p.icrc->ok());
  EXPECT_TRUE(p.findings.empty());
}

TEST(FrameBuilder, DeliberatelyWrongFieldsStayWrong) {
  std::vector<std::uint8_t> b;
  Packet p = built(connection(), "SEND_ONLY", {{"icrc", "bad"}, {"len", "8"}}, b);
  EXPECT_FALSE(p.icrc->ok());
  p = built(connection(), "SEND_ONLY", {{"padcount", "3"}, {"len", "8"}, {"tver", "1"}}, b);
  EXPECT_EQ(p.bth->padcount, 3);
  EXPECT_EQ(p.bth->version, 1);
  EXPECT_FALSE(p.findings.empty());
}

// ip.ihl adds real options with every length, the checksum and the ICRC agreeing; ip.len and
// udp.len change only their field, with the checksum and ICRC computed over the value given.
TEST(FrameBuilder, IpHeaderFieldsKeepTheRestOfTheFrameConsistent) {
  std::vector<std::uint8_t> b;
  Packet p = built(connection(), "SEND_ONLY", {{"ip.ihl", "6"}, {"len", "32"}}, b);
  ASSERT_TRUE(p.ipv4);
  EXPECT_EQ(p.ipv4->ihl, 6);
  ASSERT_EQ(p.ipv4_options.size(), 4u);
  EXPECT_EQ(p.ipv4_options[0], 0x94);  // Router Alert
  EXPECT_EQ(p.ipv4->total_length, 80);
  EXPECT_EQ(p.udp->length, 56);
  EXPECT_TRUE(p.icrc && p.icrc->ok());
  EXPECT_TRUE(p.findings.empty());
  p = built(connection(), "SEND_ONLY", {{"ip.ihl", "15"}, {"len", "32"}}, b);
  EXPECT_EQ(p.ipv4_options.size(), 40u);
  EXPECT_EQ(p.ipv4_options.back(), 0x00);  // End of Option List
  EXPECT_TRUE(p.icrc && p.icrc->ok());
  EXPECT_TRUE(p.findings.empty());

  p = built(connection(), "SEND_ONLY", {{"ip.len", "77"}, {"len", "32"}}, b);
  EXPECT_EQ(p.ipv4->total_length, 77);
  EXPECT_EQ(p.udp->length, 56);  // still computed
  EXPECT_FALSE(p.has(FindingCode::kIpChecksum));
  EXPECT_TRUE(p.has(FindingCode::kIpLength));
  EXPECT_TRUE(p.icrc && p.icrc->ok());  // over the total length as sent
  p = built(connection(), "SEND_ONLY", {{"udp.len", "57"}, {"len", "32"}}, b);
  EXPECT_EQ(p.ipv4->total_length, 76);
  EXPECT_EQ(p.udp->length, 57);
  EXPECT_FALSE(p.has(FindingCode::kIpChecksum));
  EXPECT_TRUE(p.has(FindingCode::kUdpLength));

  p = built(connection(), "SEND_ONLY", {{"ip.mf", "1"}, {"ip.df", "0"}, {"len", "8"}}, b);
  EXPECT_TRUE(p.ipv4->mf);
  EXPECT_FALSE(p.ipv4->df);
  EXPECT_TRUE(p.has(FindingCode::kIpFragment));
  EXPECT_TRUE(p.icrc && p.icrc->ok());

  // The version nibble is written as given; the decoder then stops at the IPv4 header.
  p = built(connection(), "SEND_ONLY", {{"ip.version", "6"}, {"len", "8"}}, b);
  EXPECT_TRUE(p.has(FindingCode::kIpVersion));
  EXPECT_EQ(b[14] >> 4, 6);

  auto code = request_opcode("SEND_ONLY");
  ASSERT_TRUE(code);
  EXPECT_FALSE(check_request(*code, {{"ip.ihl", "4"}}));
  EXPECT_FALSE(check_request(*code, {{"ip.ihl", "16"}}));
  EXPECT_FALSE(check_request(*code, {{"ip.len", "65536"}}));
}

TEST(FrameBuilder, RethFromTheRegionAndReadSpan) {
  Connection c = connection();
  auto f =
      build_request(addresses(), c, opcode::kRcReadRequest, {{"offset", "64"}, {"len", "2500"}});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->psn_span, 3u);  // ceil(2500 / 1024)
  const Packet p = decode(f->bytes);
  EXPECT_EQ(p.reth->va, 0x10000040u);
  EXPECT_EQ(p.reth->rkey, 0x100u);
  EXPECT_EQ(p.reth->dmalen, 2500u);
}

TEST(FrameBuilder, UnknownFieldsAndOpcodesAreErrors) {
  const Connection c = connection();
  EXPECT_FALSE(build_request(addresses(), c, opcode::kRcSendOnly, {{"pqsn", "1"}}));
  EXPECT_FALSE(build_request(addresses(), c, opcode::kRcSendOnly, {{"rkey", "1"}}));  // no RETH
  EXPECT_FALSE(request_opcode("SEND_SOMETIMES"));
  EXPECT_EQ(*request_opcode("READ"), opcode::kRcReadRequest);
  EXPECT_EQ(*request_opcode("WRITE_ONLY"), opcode::kRcWriteOnly);
  EXPECT_EQ(*request_opcode("UC_SEND_ONLY"), 0x24);
}

// A response from the target, as the tester receives it.
Packet ack(std::uint32_t psn, std::uint8_t syndrome, std::uint32_t msn,
           std::vector<std::uint8_t>& storage) {
  Connection c = connection();
  std::swap(c.local_qpn, c.remote_qpn);
  c.remote_psn0 = 0;
  auto f = build_request(addresses(), c, opcode::kRcAck,
                         {{"bth.psn", std::to_string(psn)},
                          {"syndrome", std::to_string(syndrome)},
                          {"msn", std::to_string(msn)}});
  EXPECT_TRUE(f) << f.error();
  storage = f->bytes;
  return decode(storage);
}

TEST(Matcher, MatchesKindAndRelativeFields) {
  std::vector<std::uint8_t> b;
  const Connection c = connection();
  const Packet p = ack(psn::add(c.local_psn0, 1), 0x1F, 5, b);
  auto m = match(p, &c, {"ACK", {{"psn", "1"}, {"syndrome", "ack"}, {"msn", "5"}}});
  ASSERT_TRUE(m) << m.error();
  EXPECT_TRUE(m->empty());
  Connection with_msn = c;
  with_msn.last_msn = 4;
  EXPECT_TRUE(match(p, &with_msn, {"ACK", {{"msn", "+1"}}})->empty());
  EXPECT_TRUE(match(p, &c, {"any", {}})->empty());
}

TEST(Matcher, DiffsInThePacketdrillStyle) {
  std::vector<std::uint8_t> b;
  const Connection c = connection();
  const Packet p = ack(psn::add(c.local_psn0, 3), 0x1F, 2, b);
  auto m = match(p, &c, {"NAK", {{"psn", "1"}}});
  ASSERT_TRUE(m);
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].field, "aeth.syndrome");
  EXPECT_EQ((*m)[0].actual, "0x1f (ACK)");
  m = match(p, &c, {"ACK", {{"psn", "1"}}});
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].field, "bth.psn");
  EXPECT_EQ((*m)[0].expected, "0xffffff (+1)");
  EXPECT_EQ(describe_received(p, &c), "ACK psn=3 syndrome=0x1f msn=2");
}

TEST(Matcher, BadExpectationsAreTheCasesFault) {
  std::vector<std::uint8_t> b;
  const Connection c = connection();
  const Packet p = ack(c.local_psn0, 0x1F, 1, b);
  EXPECT_FALSE(match(p, &c, {"ACKK", {}}));
  EXPECT_FALSE(match(p, &c, {"ACK", {{"bogus", "1"}}}));
  EXPECT_FALSE(match(p, &c, {"ACK", {{"syndrome", "sometimes"}}}));
  // Dotted decoder names are fields: absent ones are a diff, not an error.
  auto m = match(p, &c, {"ACK", {{"reth.va", "0"}}});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->size(), 1u);
}

}  // namespace
}  // namespace roceconf::engine
