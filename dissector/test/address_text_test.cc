// Address text (dissector/address_text.h): the one notation of MACs, IPv4 addresses and GIDs,
// written and read.
#include "dissector/address_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace roceconf {
namespace {

using namespace std::string_literals;

Ipv6Address mapped(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  Ipv6Address g{};
  g[10] = g[11] = 0xFF;
  g[12] = a, g[13] = b, g[14] = c, g[15] = d;
  return g;
}

TEST(AddressText, MacAndIpv4) {
  EXPECT_EQ(format_mac({0x52, 0x54, 0x00, 0x0a, 0xaa, 0xba}), "52:54:00:0a:aa:ba");
  EXPECT_EQ(format_ipv4({10, 0, 0, 255}), "10.0.0.255");
}

TEST(AddressText, MacRoundTripsAndItsAcceptedForms) {
  const MacAddress mac{0x02, 0x00, 0x00, 0xab, 0xCD, 0x01};
  EXPECT_EQ(parse_mac(format_mac(mac)), mac);
  EXPECT_EQ(parse_mac("02:00:00:AB:cd:01"), mac);  // either case
  EXPECT_EQ(parse_mac("02-00-00-ab-cd-01"), mac);  // '-' as Windows writes it
  EXPECT_EQ(parse_mac("2:0:0:ab:cd:1"), mac);      // one digit, as ether_aton and Scapy take it
  EXPECT_EQ(parse_mac("ff:ff:ff:ff:ff:ff"), (MacAddress{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
}

TEST(AddressText, MacRejects) {
  for (const std::string& bad :
       {"02:00:00:00:00"s, "02:00:00:00:00:01:02"s, "02:00:00:00:00:01:"s, ":02:00:00:00:00:01"s,
        "02:00-00:00:00:01"s, "02::00:00:00:01"s, "002:00:00:00:00:01"s, "02:00:00:00:00:0g"s,
        "02.00.00.00.00.01"s, " 02:00:00:00:00:01"s, "02:00:00:00:00:01 "s, ""s,
        "02:00:00:00:00:01\0"s})
    EXPECT_FALSE(parse_mac(bad)) << bad;
}

TEST(AddressText, Ipv4RoundTripsStrictly) {
  for (const Ipv4Address ip : {Ipv4Address{192, 0, 2, 1}, Ipv4Address{0, 0, 0, 0},
                               Ipv4Address{255, 255, 255, 255}, Ipv4Address{10, 0, 100, 9}})
    EXPECT_EQ(parse_ipv4(format_ipv4(ip)), ip) << format_ipv4(ip);
  for (const std::string& bad :
       {"1.2.3"s, "256.0.0.1"s, "01.2.3.4"s, "1.2.3.04"s, "1.2.3.4.5"s, "1.2.3.4."s, ".1.2.3.4"s,
        "1..2.3"s, "1.2.3.1000"s, "0x1.2.3.4"s, "1.2.3.-4"s, " 1.2.3.4"s, "1.2.3.4 "s, ""s,
        "1.2.3.4\0"s, "::ffff:1.2.3.4"s})
    EXPECT_FALSE(parse_ipv4(bad)) << bad;
}

TEST(AddressText, GidsInRfc5952FormAndIpv4Mapped) {
  EXPECT_EQ(format_gid(mapped(192, 0, 2, 1)), "::ffff:192.0.2.1");
  Ipv6Address link_local{0xfe, 0x80};
  link_local[15] = 1;
  EXPECT_EQ(format_gid(link_local), "fe80::1");
  // The longest zero run is shortened, the first of equal ones, a single zero group never.
  const Ipv6Address doc{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(format_gid(doc), "2001:db8:0:1::1");
  const Ipv6Address tie{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(format_gid(tie), "2001:db8::1:0:0:1");
  const Ipv6Address one_zero{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
  EXPECT_EQ(format_gid(one_zero), "2001:db8:0:1:1:1:1:1");
  EXPECT_EQ(format_gid({}), "::");
  Ipv6Address trailing{0xfe, 0x80};
  EXPECT_EQ(format_gid(trailing), "fe80::");
}

TEST(AddressText, GidTextForms) {
  // Every IPv6 text form reads; the written one is canonical and reads back the same.
  const Ipv6Address doc{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
  for (const std::string& text : {"2001:db8::7"s, "2001:DB8::7"s, "2001:0db8:0:0:0:0:0:7"s,
                                  "2001:db8:0000:0000:0000:0000:0000:0007"s})
    EXPECT_EQ(parse_gid(text), doc) << text;
  EXPECT_EQ(format_gid(doc), "2001:db8::7");
  for (const Ipv6Address g : {doc, mapped(192, 0, 2, 1), Ipv6Address{}, Ipv6Address{0xfe, 0x80}})
    EXPECT_EQ(parse_gid(format_gid(g)), g) << format_gid(g);
  for (const std::string& bad :
       {"2001:db8::7::1"s, "2001:db8:0:0:0:0:0:0:7"s, "12345::1"s, "fe80::1%eth0"s, "fe80::g"s,
        "not-an-address"s, ""s, "2001:db8::7\0"s, "::ffff:256.0.0.1"s})
    EXPECT_FALSE(parse_gid(bad)) << bad;
}

TEST(AddressText, Ipv4TextIsItsMappedGid) {
  const Ipv6Address g = mapped(192, 0, 2, 1);
  EXPECT_EQ(parse_gid("192.0.2.1"), g);
  EXPECT_EQ(parse_gid("::ffff:192.0.2.1"), g);
  EXPECT_EQ(parse_gid("::FFFF:c000:201"), g);
  EXPECT_EQ(format_gid(*parse_gid("192.0.2.1")), "::ffff:192.0.2.1");
  // The strict IPv4 rules hold inside a GID too.
  EXPECT_FALSE(parse_gid("01.2.3.4"));
  EXPECT_FALSE(parse_gid("1.2.3"));
  // An IPv6 address is not a GID written as IPv4: parse_ipv6 takes IPv6 text only.
  EXPECT_FALSE(parse_ipv6("192.0.2.1"));
  EXPECT_EQ(parse_ipv6("::ffff:192.0.2.1"), g);
}

TEST(AddressText, ByLength) {
  const std::vector<std::uint8_t> mac{2, 0, 0, 0, 0, 1}, ip{192, 0, 2, 1}, odd{0xbe, 0xef};
  EXPECT_EQ(format_address(mac), "02:00:00:00:00:01");
  EXPECT_EQ(format_address(ip), "192.0.2.1");
  const Ipv6Address g = mapped(192, 0, 2, 1);
  EXPECT_EQ(format_address(g), "::ffff:192.0.2.1");
  EXPECT_EQ(format_address(odd), "beef");
  EXPECT_EQ(format_address({}), "");
}

}  // namespace
}  // namespace roceconf
