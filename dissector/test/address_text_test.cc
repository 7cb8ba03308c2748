// Address text (dissector/names.h): the one notation of MACs, IPv4 addresses and GIDs.
#include <gtest/gtest.h>

#include <vector>

#include "dissector/names.h"

namespace roceconf {
namespace {

TEST(AddressText, MacAndIpv4) {
  EXPECT_EQ(format_mac({0x52, 0x54, 0x00, 0x0a, 0xaa, 0xba}), "52:54:00:0a:aa:ba");
  EXPECT_EQ(format_ipv4({10, 0, 0, 255}), "10.0.0.255");
}

TEST(AddressText, GidsInRfc5952FormAndIpv4Mapped) {
  Ipv6Address mapped{};
  mapped[10] = mapped[11] = 0xFF;
  mapped[12] = 192, mapped[13] = 0, mapped[14] = 2, mapped[15] = 1;
  EXPECT_EQ(format_gid(mapped), "::ffff:192.0.2.1");
  Ipv6Address link_local{0xfe, 0x80};
  link_local[15] = 1;
  EXPECT_EQ(format_gid(link_local), "fe80::1");
  // The longest zero run is shortened, the first of equal ones, a single zero group never.
  const Ipv6Address doc{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(format_gid(doc), "2001:db8:0:1::1");
  const Ipv6Address tie{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(format_gid(tie), "2001:db8::1:0:0:1");
  EXPECT_EQ(format_gid({}), "::");
}

TEST(AddressText, ByLength) {
  const std::vector<std::uint8_t> mac{2, 0, 0, 0, 0, 1}, ip{192, 0, 2, 1}, odd{0xbe, 0xef};
  EXPECT_EQ(format_address(mac), "02:00:00:00:00:01");
  EXPECT_EQ(format_address(ip), "192.0.2.1");
  EXPECT_EQ(format_address(odd), "beef");
  EXPECT_EQ(format_address({}), "");
}

}  // namespace
}  // namespace roceconf
