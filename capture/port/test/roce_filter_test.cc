// The RoCE BPF filter, run in user space over frames built with the codec: RoCEv2 over IPv4 and
// IPv6 and RoCEv1 pass, untagged or behind 802.1Q/802.1ad tags; other UDP ports and other
// protocols do not.
#include "capture/port/roce_filter.h"

#include <gtest/gtest.h>

#include "capture/port/test/port_test_util.h"

namespace roceconf {
namespace {

using test::roce_frame;
using test::roce_v1_frame;

std::vector<BpfInstruction> must_compile(std::uint16_t port = Udp::kRocePort) {
  auto program = compile_filter(roce_filter_expression(port));
  EXPECT_TRUE(program) << (program ? "" : program.error().message);
  return program ? *program : std::vector<BpfInstruction>{};
}

std::vector<std::uint8_t> roce_v2_ipv6_frame() {
  Packet p;
  p.ipv6 = Ipv6{};
  p.udp = Udp{};
  Bth bth;
  bth.opcode = opcode::kRcSendOnly;
  p.bth = bth;
  return encode(p);
}

// `frame` behind tags with these TPIDs, outermost first.
std::vector<std::uint8_t> tagged(const std::vector<std::uint8_t>& frame,
                                 std::vector<std::uint16_t> tpids) {
  Packet p = decode(frame);
  for (const std::uint16_t tpid : tpids) {
    Vlan v;
    v.tpid = tpid;
    v.vid = 100;
    v.pcp = 3;
    p.vlans.push_back(v);
  }
  return encode(p);
}

TEST(RoceFilterTest, ExpressionNamesBothRoceVersions) {
  EXPECT_EQ(roce_filter_expression(),
            "udp dst port 4791 or ether proto 0x8915 or (vlan and (udp dst port 4791 or ether "
            "proto 0x8915))");
  EXPECT_NE(roce_filter_expression(4792).find("(udp dst port 4792 or"), std::string::npos);
}

TEST(RoceFilterTest, PassesTaggedRoceOnly) {
  // A tag still in the frame the filter sees: the kernel keeps an inner QinQ tag.
  const auto program = must_compile();
  for (const std::uint16_t tpid : {std::uint16_t{0x8100}, std::uint16_t{0x88A8}}) {
    SCOPED_TRACE(tpid);
    EXPECT_TRUE(filter_accepts(program, tagged(roce_frame(1), {tpid})));
    EXPECT_TRUE(filter_accepts(program, tagged(roce_v1_frame(1), {tpid})));
    EXPECT_FALSE(filter_accepts(program, tagged(roce_frame(1, 9999), {tpid})));
  }
  std::vector<std::uint8_t> arp(46, 0);  // tagged ARP
  arp[12] = 0x81;
  arp[16] = 0x08;
  arp[17] = 0x06;
  EXPECT_FALSE(filter_accepts(program, arp));
}

TEST(RoceFilterTest, PassesRoceOnly) {
  const auto program = must_compile();
  ASSERT_FALSE(program.empty());
  EXPECT_TRUE(filter_accepts(program, roce_frame(1)));
  EXPECT_TRUE(filter_accepts(program, roce_v2_ipv6_frame()));
  EXPECT_TRUE(filter_accepts(program, roce_v1_frame(1)));
  EXPECT_FALSE(filter_accepts(program, roce_frame(1, 9999)));

  // An ARP request: neither IP nor RoCEv1.
  std::vector<std::uint8_t> arp(42, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_FALSE(filter_accepts(program, arp));
  // UDP *from* 4791 to elsewhere is not RoCE traffic for us.
  Packet p = decode(roce_frame(1, 9999));
  p.udp->sport = Udp::kRocePort;
  p.payload = {};
  EXPECT_FALSE(filter_accepts(program, encode(p)));
}

TEST(RoceFilterTest, FollowsANonStandardPort) {
  const auto program = must_compile(4792);
  EXPECT_TRUE(filter_accepts(program, roce_frame(1, 4792)));
  EXPECT_FALSE(filter_accepts(program, roce_frame(1, 4791)));
  EXPECT_TRUE(filter_accepts(program, roce_v1_frame(1)));
}

TEST(RoceFilterTest, ABadExpressionIsAClearError) {
  auto program = compile_filter("udp dst port banana");
  ASSERT_FALSE(program);
  EXPECT_NE(program.error().message.find("cannot compile BPF filter 'udp dst port banana'"),
            std::string::npos)
      << program.error().message;
}

}  // namespace
}  // namespace roceconf
