// The JSON field sink: value notation, nesting of dotted names, repeated layers, findings.
#include "cli/json_fields.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace roceconf::cli {
namespace {

TEST(JsonFields, ValueNotation) {
  const std::array<std::uint8_t, 6> mac = {0x02, 0, 0, 0, 0, 0x01};
  const std::array<std::uint8_t, 4> ip4 = {192, 0, 2, 1};
  const std::array<std::uint8_t, 16> ip6 = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
                                            0,    0,    0,    0,    0, 0, 0, 1};
  const std::array<std::uint8_t, 3> raw = {0xAB, 0x00, 0x7F};
  EXPECT_EQ(field_value_json(FieldValue{std::uint64_t{0xFFFFFFFFFFFFFFFF}}), 0xFFFFFFFFFFFFFFFFu);
  EXPECT_EQ(field_value_json(FieldValue{true}), true);
  EXPECT_EQ(field_value_json(FieldValue{std::string_view("RC_SEND_ONLY")}), "RC_SEND_ONLY");
  EXPECT_EQ(field_value_json(FieldValue{Bytes(raw)}), "ab007f");
  EXPECT_EQ(field_value_json(FieldValue{Address{mac}}), "02:00:00:00:00:01");
  EXPECT_EQ(field_value_json(FieldValue{Address{ip4}}), "192.0.2.1");
  EXPECT_EQ(field_value_json(FieldValue{Address{ip6}}), "2001:db8::1");
}

TEST(JsonFields, DottedNamesNest) {
  Json out = Json::object();
  JsonFieldSink sink(out);
  sink.field("cm", "msg", std::string_view("REQ"));
  sink.field("cm", "rdma_cm.port", std::uint64_t{7471});
  sink.field("cm", "rdma_cm.ip_version", std::uint64_t{4});
  EXPECT_EQ(out.dump(), R"({"cm":{"msg":"REQ","rdma_cm":{"port":7471,"ip_version":4}}})");
}

TEST(JsonFields, RepeatedLayerBecomesAList) {
  Packet p;
  p.ipv4 = Ipv4{};
  p.udp = Udp{};
  p.bth = Bth{};
  p.vlans = {Vlan{ethertype::kQinQ, 1, false, 100, ethertype::kVlan},
             Vlan{ethertype::kVlan, 3, false, 200, ethertype::kIpv4}};
  const auto frame = encode(p);
  Json out = Json::object();
  add_packet_json(out, decode(frame));
  ASSERT_TRUE(out["vlan"].is_array()) << out.dump();
  ASSERT_EQ(out["vlan"].size(), 2u);
  EXPECT_EQ(out["vlan"][0]["vlan"], 100);
  EXPECT_EQ(out["vlan"][1]["vlan"], 200);
  EXPECT_EQ(out["vlan"][1]["prio"], 3);
  EXPECT_TRUE(out["bth"].is_object());

  p.vlans.resize(1);
  Json single = Json::object();
  add_packet_json(single, decode(encode(p)));
  EXPECT_TRUE(single["vlan"].is_object()) << single.dump();
}

TEST(JsonFields, NeverOverwritesFrameKeys) {
  Json out = Json::object();
  out["frame"] = 1;
  JsonFieldSink sink(out);
  sink.field("frame", "len", std::uint64_t{60});
  EXPECT_EQ(out["frame"], 1);
  EXPECT_EQ(out["frame_layer"]["len"], 60);
}

TEST(JsonFields, Findings) {
  const Findings findings = {
      Finding{FindingCode::kBadIcrc, Layer::kIcrc, 58, "ICRC 0x1 is wrong, expected 0x2"},
      Finding{FindingCode::kReservedBits, Layer::kBth, 46, "BTH reserved bits"}};
  const Json j = findings_json(findings);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0].dump(), R"({"code":"bad-icrc","layer":"icrc","offset":58,"severity":"error",)"
                         R"("message":"ICRC 0x1 is wrong, expected 0x2"})");
  EXPECT_EQ(j[1]["code"], "reserved-bits");
  EXPECT_EQ(j[1]["severity"], "warning");
}

}  // namespace
}  // namespace roceconf::cli
