// One name per field: walks the declared field table and proves, for every field, that a case
// can set it in `send`, match it in `expect` (with a real diff when it differs) and read it in
// `roceconf decode --json` under the same name. Python and the Wireshark plugin have their own
// walks (bindings/tests, dissector/wireshark/test).
#include <gtest/gtest.h>

#include <set>

#include <fmt/format.h>

#include "cli/json_fields.h"
#include "dissector/field_table.h"
#include "dissector/packet.h"
#include "suite/engine/frame_builder.h"
#include "suite/engine/matcher.h"

namespace roceconf::engine {
namespace {

// Fields that steer decoding: a changed value makes the frame decode as something else (or not
// at all), so they are set to their own value and only the expectation's diff is checked.
const std::set<std::string> kSteering = {
    "eth.type", "ipv4.version", "ipv4.ihl", "ipv4.proto", "ipv4.mf",      "ipv4.frag",
    "ipv4.len", "udp.dport",    "udp.len",  "bth.opcode", "bth.padcount",
};

// The layers a RoCEv2 request or response built by the tester can carry.
bool builder_can_carry(std::string_view layer) {
  return layer != "vlan" && layer != "ipv6" && layer != "lrh" && layer != "grh" && layer != "mad" &&
         layer != "cm" && layer != "vcrc";
}

struct Sample {
  std::uint8_t opcode = 0;
  Packet packet;
  std::vector<std::uint8_t> bytes;
};

Connection connection() {
  Connection c;
  c.name = "c";
  c.remote_qpn = 0x12;
  c.local_qpn = 0x11;
  c.region = RemoteRegion{0x1000, 0x77, 4096, 4, 4096, 0};
  return c;
}

// The first opcode whose packet, built with no keys, carries the field.
std::optional<std::uint8_t> opcode_carrying(const FieldDef& f) {
  const Connection c = connection();
  for (int op = 0; op < 256; ++op) {
    if (!opcode_info(static_cast<std::uint8_t>(op)).valid) continue;
    auto built = build_request({}, c, static_cast<std::uint8_t>(op), Assignments{{"len", "8"}});
    if (!built) continue;
    const Packet p = decode(built->bytes);
    if (f.get(p, 0)) return static_cast<std::uint8_t>(op);
  }
  return std::nullopt;
}

std::string text_of(const FieldDef& f, const FieldValue& v) {
  if (const auto* u = std::get_if<std::uint64_t>(&v)) return fmt::format("{:#x}", *u);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "0x1" : "0x0";
  if (std::holds_alternative<Address>(v)) return cli::field_value_json(v).get<std::string>();
  (void)f;
  return {};
}

TEST(FieldVocabulary, EveryFieldCanBeSentExpectedAndDecodedUnderOneName) {
  const Connection c = connection();
  int walked = 0;
  std::vector<std::string> skipped;
  for (const FieldDef& f : field_table()) {
    const std::string key = f.key();
    if (!f.settable()) {
      skipped.push_back(key + " (derived, read-only)");
      continue;
    }
    if (!builder_can_carry(f.layer)) {
      skipped.push_back(key + " (no request the tester builds carries this layer)");
      continue;
    }
    SCOPED_TRACE(key);
    const auto op = opcode_carrying(f);
    ASSERT_TRUE(op) << "no opcode carries " << key;
    // A value other than the default, unless the field steers decoding.
    auto plain = build_request({}, c, *op, Assignments{{"len", "8"}});
    ASSERT_TRUE(plain);
    const Packet plain_packet = decode(plain->bytes);  // addresses view into it
    const FieldValue before = *f.get(plain_packet, 0);
    std::string value = text_of(f, before);
    if (!kSteering.contains(key)) {
      if (const auto* u = std::get_if<std::uint64_t>(&before))
        value = fmt::format("{:#x}", (*u ^ 1) & f.max());
      else if (const auto* b = std::get_if<bool>(&before))
        value = *b ? "0x0" : "0x1";
      else if (f.type == FieldType::kMac)
        value = "02:00:00:00:00:99";
      else if (f.type == FieldType::kIpv4)
        value = "192.0.2.99";
    }
    // send
    auto built = build_request({}, c, *op, Assignments{{"len", "8"}, {key, value}});
    ASSERT_TRUE(built) << built.error();
    // A steering field sent as its own value still disables its computation (udp.len keeps every
    // length as given), so the frame may not decode: its expectation is checked on the plain one.
    const Packet p = decode(kSteering.contains(key) ? plain->bytes : built->bytes);
    const auto got = f.get(p, 0);
    ASSERT_TRUE(got) << "sent " << value << " with opcode " << int(*op);
    if (f.type == FieldType::kUnsigned || f.type == FieldType::kBool) {
      EXPECT_EQ(text_of(f, *got), text_of(f, FieldValue{*parse_uint(value)})) << "sent " << value;
    }
    if (f.type == FieldType::kMac || f.type == FieldType::kIpv4) {
      EXPECT_EQ(text_of(f, *got), value);
    }
    // expect: the same value matches, another one is a diff naming the field
    const std::string kind = "any";
    Expectation same{kind, Assignments{{key, value}}};
    ASSERT_TRUE(check_expectation(same)) << check_expectation(same).error();
    auto m = match(p, &c, same);
    ASSERT_TRUE(m) << m.error();
    EXPECT_TRUE(m->empty()) << (*m)[0].field << " expected " << (*m)[0].expected << " vs "
                            << (*m)[0].actual;
    if (f.type == FieldType::kUnsigned || f.type == FieldType::kBool) {
      const std::uint64_t other = (*parse_uint(value) ^ 1) & f.max();
      auto diff = match(p, &c, Expectation{kind, Assignments{{key, std::to_string(other)}}});
      ASSERT_TRUE(diff);
      ASSERT_EQ(diff->size(), 1u);
      EXPECT_EQ((*diff)[0].field, key);
    }
    // decode --json: the same layer and name
    cli::Json json = cli::Json::object();
    cli::add_packet_json(json, p);
    EXPECT_TRUE(json.contains(std::string(f.layer)) &&
                json[std::string(f.layer)].contains(std::string(f.name)))
        << json.dump();
    ++walked;
  }
  // The walk covers the headers of every request and response the tester builds.
  EXPECT_GE(walked, 50) << fmt::format("skipped: {}", fmt::join(skipped, ", "));
}

TEST(FieldVocabulary, ShortKeysAreAliasesOfTheDecodedNames) {
  for (const auto& [alias, key] :
       std::vector<std::pair<std::string, std::string>>{{"se", "bth.solicited"},
                                                        {"tver", "bth.version"},
                                                        {"inv_rkey", "ieth.rkey"},
                                                        {"ip.csum", "ipv4.chksum"},
                                                        {"ip.version", "ipv4.version"},
                                                        {"ip.ihl", "ipv4.ihl"},
                                                        {"ip.df", "ipv4.df"},
                                                        {"ip.mf", "ipv4.mf"},
                                                        {"ip.frag", "ipv4.frag"},
                                                        {"swap", "atomiceth.swap_add"},
                                                        {"add", "atomiceth.swap_add"}}) {
    const FieldDef* f = find_field(alias);
    ASSERT_NE(f, nullptr) << alias;
    EXPECT_EQ(f->key(), key);
  }
}

// A user's first Python case: `expect c ACK psn=0 se=0 tver=0` on a clean ACK passes, and a
// differing solicited bit is a real diff.
TEST(FieldVocabulary, SolicitedAndVersionCanBeExpected) {
  Connection c = connection();
  auto built = build_request({}, c, opcode::kRcAck, Assignments{{"psn", "0"}});
  ASSERT_TRUE(built);
  const Packet ack = decode(built->bytes);
  const Expectation e{"ACK", Assignments{{"psn", "0"}, {"se", "0"}, {"tver", "0"}}};
  ASSERT_TRUE(check_expectation(e));
  auto m = match(ack, &c, e);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->empty());
  auto diff = match(ack, &c, Expectation{"ACK", Assignments{{"se", "1"}}});
  ASSERT_TRUE(diff);
  ASSERT_EQ(diff->size(), 1u);
  EXPECT_EQ((*diff)[0].field, "bth.solicited");
  EXPECT_EQ((*diff)[0].expected, "1");
  EXPECT_EQ((*diff)[0].actual, "0");
}

TEST(FieldVocabulary, ChecksRejectUnknownFieldsAndBadValues) {
  EXPECT_FALSE(check_expectation({"ACK", Assignments{{"bth.nosuch", "1"}}}));
  EXPECT_FALSE(check_expectation({"ACK", Assignments{{"se", "maybe"}}}));
  EXPECT_FALSE(check_expectation({"NOSUCHKIND", {}}));
  EXPECT_TRUE(check_expectation({"NAK", Assignments{{"syndrome", "NAK_PSN_SEQUENCE_ERROR"}}}));
  EXPECT_FALSE(check_request(opcode::kRcSendOnly, Assignments{{"imm", "1"}}));
  EXPECT_FALSE(check_request(opcode::kRcSendOnly, Assignments{{"pkey", "0x10000"}}));
  EXPECT_FALSE(check_request(opcode::kRcSendOnly, Assignments{{"bth.opcode_name", "x"}}));
  EXPECT_TRUE(check_request(opcode::kRcSendOnly, Assignments{{"bth.solicited", "1"}}));
}

}  // namespace
}  // namespace roceconf::engine
