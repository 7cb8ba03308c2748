#include "suite/reference_nic/port_tables.h"

#include <gtest/gtest.h>

#include "dissector/address_text.h"

namespace roceconf::target {
namespace {

TEST(PathMtu, EnumAndBytes) {
  EXPECT_EQ(path_mtu_bytes(PathMtu::k256), 256u);
  EXPECT_EQ(path_mtu_bytes(PathMtu::k4096), 4096u);
  EXPECT_EQ(path_mtu_from_bytes(1024), PathMtu::k1024);
  EXPECT_FALSE(path_mtu_from_bytes(1500));
  EXPECT_FALSE(path_mtu_valid(0));
  EXPECT_TRUE(path_mtu_valid(5));
  EXPECT_FALSE(path_mtu_valid(6));
}

TEST(Gids, Ipv4MappedRoundTrip) {
  const Gid g = gid_from_ipv4({192, 0, 2, 1});
  EXPECT_TRUE(gid_is_ipv4_mapped(g));
  EXPECT_EQ(gid_ipv4(g), (std::array<std::uint8_t, 4>{192, 0, 2, 1}));
  EXPECT_EQ(format_gid(g), "::ffff:192.0.2.1");
  EXPECT_EQ(parse_gid("192.0.2.1"), g);
  EXPECT_EQ(parse_gid("::ffff:192.0.2.1"), g);
}

TEST(Gids, Ipv6AndLinkLocal) {
  const auto g = parse_gid("2001:db8::7");
  ASSERT_TRUE(g);
  EXPECT_FALSE(gid_is_ipv4_mapped(*g));
  EXPECT_FALSE(gid_ipv4(*g));
  EXPECT_EQ(format_gid(*g), "2001:db8::7");
  EXPECT_FALSE(parse_gid("not-an-address"));
  // 02:00:00:00:00:01 -> fe80::ff:fe00:1 (the universal/local bit flips to 0).
  EXPECT_EQ(format_gid(gid_link_local({0x02, 0, 0, 0, 0, 0x01})), "fe80::ff:fe00:1");
}

TEST(GidTable, AddFindRemove) {
  GidTable t(4);
  const Gid a = gid_from_ipv4({192, 0, 2, 1});
  const Gid b = *parse_gid("2001:db8::1");
  EXPECT_EQ(t.add(a), 0u);
  EXPECT_EQ(t.add(b), 1u);
  EXPECT_EQ(t.add(a, GidType::kRoceV1), 2u);  // same address, other type: another entry
  EXPECT_EQ(t.add(a).error().status, VerbsStatus::kExist);
  EXPECT_EQ(t.find(b), 1u);
  EXPECT_EQ(t.find(a, GidType::kRoceV1), 2u);
  ASSERT_NE(t.at(0), nullptr);
  EXPECT_EQ(t.at(0)->gid, a);
  EXPECT_EQ(t.at(3), nullptr);
  EXPECT_EQ(t.at(99), nullptr);
  EXPECT_TRUE(t.remove(1));
  EXPECT_FALSE(t.find(b));
  EXPECT_EQ(t.remove(1).error().status, VerbsStatus::kNoEnt);
  EXPECT_EQ(t.set(4, GidEntry{}).error().status, VerbsStatus::kInval);
}

TEST(GidTable, FullTableIsEnomem) {
  GidTable t(1);
  EXPECT_TRUE(t.add(gid_from_ipv4({192, 0, 2, 1})));
  const auto r = t.add(gid_from_ipv4({192, 0, 2, 2}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().status, VerbsStatus::kNoMem);
}

// spec-facts §7: match iff same valid partition and at least one side full.
TEST(Pkeys, MembershipMatrix) {
  struct Case {
    std::uint16_t a, b;
    bool match;
    const char* why;
  };
  const Case cases[] = {
      {0xFFFF, 0xFFFF, true, "full/full default partition"},
      {0xFFFF, 0x7FFF, true, "full/limited"},
      {0x7FFF, 0xFFFF, true, "limited/full"},
      {0x7FFF, 0x7FFF, false, "limited/limited never match"},
      {0x8001, 0x8001, true, "full/full partition 1"},
      {0x8001, 0x0001, true, "full/limited partition 1"},
      {0x0001, 0x0001, false, "limited/limited partition 1"},
      {0x8001, 0x8002, false, "different partitions, both full"},
      {0x8001, 0x0002, false, "different partitions"},
      {0x0000, 0x0000, false, "0x0000 is invalid"},
      {0x8000, 0x8000, false, "0x8000 is invalid"},
      {0x8000, 0x0000, false, "0x8000/0x0000 invalid"},
      {0xFFFF, 0x8000, false, "valid against invalid"},
      {0x8000, 0xFFFF, false, "invalid against valid"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(pkey_match(c.a, c.b), c.match) << c.why << ": " << std::hex << c.a << " vs " << c.b;
  }
}

TEST(Pkeys, Membership) {
  EXPECT_EQ(pkey_membership(0xFFFF), PkeyMembership::kFull);
  EXPECT_EQ(pkey_membership(0x7FFF), PkeyMembership::kLimited);
  EXPECT_EQ(pkey_membership(0x8000), PkeyMembership::kInvalid);
  EXPECT_EQ(pkey_membership(0x0000), PkeyMembership::kInvalid);
  EXPECT_EQ(pkey_membership_name(PkeyMembership::kLimited), "limited");
  EXPECT_EQ(pkey_partition(0x8123), 0x0123);
}

TEST(PkeyTable, DefaultAndLookups) {
  PkeyTable t;  // 16 entries, [0] = 0xFFFF
  EXPECT_EQ(t.size(), 16u);
  EXPECT_EQ(t.at(0), 0xFFFF);
  EXPECT_EQ(t.at(1), 0x0000);
  EXPECT_FALSE(t.at(16));
  ASSERT_TRUE(t.set(1, 0x0005));  // limited member of partition 5
  ASSERT_TRUE(t.set(2, 0x8006));  // full member of partition 6
  EXPECT_EQ(t.find(0x0005), 1u);
  EXPECT_FALSE(t.find(0x8005));
  // What a GSI QP reports as pkey_index for a packet's P_Key.
  EXPECT_EQ(t.find_match(0x7FFF), 0u);  // limited default matches our full default
  EXPECT_EQ(t.find_match(0x8005), 1u);  // full sender, our limited entry
  EXPECT_FALSE(t.find_match(0x0005));   // limited/limited
  EXPECT_EQ(t.find_match(0x0006), 2u);
  EXPECT_FALSE(t.find_match(0x8000));
  EXPECT_FALSE(t.find_match(0x0000));  // empty slots (0x0000) match nothing
  EXPECT_EQ(t.set(16, 0xFFFF).error().status, VerbsStatus::kInval);
}

}  // namespace
}  // namespace roceconf::target
