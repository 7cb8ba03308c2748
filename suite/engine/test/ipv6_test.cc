// RoCEv2 over IPv6 in the tester: the profile's IPv6 keys, the egress guard, frames built over
// the IPv6 GIDs, the reference target's IPv6 GID, the REQ's primary path over IPv6, the ipv6
// cases (pass on the reference, SKIP without IPv6 addresses) and ipv6/sent-framing's grading.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "capture/port/memory_port.h"
#include "cases/builtin.h"
#include "dissector/address_text.h"
#include "suite/engine/frame_builder.h"
#include "suite/engine/profile.h"
#include "suite/engine/raw_target.h"
#include "suite/engine/reference_target.h"
#include "suite/engine/runner.h"

namespace roceconf::engine {
namespace {

constexpr char kProfile[] = R"(interface = eth1
target_mac = 02:00:00:00:00:02
target_ip = 192.0.2.2
tester_ip = 192.0.2.1
)";

TEST(Ipv6Profile, KeysParseAndBadValuesNameFileAndLine) {
  const auto p =
      parse_profile(std::string(kProfile) + "target_ip6 = 2001:db8::2\n" + "tester_ip6 = fe80::1\n",
                    "dut.profile");
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->target_ip6, parse_ipv6("2001:db8::2"));
  EXPECT_EQ(p->tester_ip6, parse_ipv6("fe80::1"));
  EXPECT_TRUE(validate(*p));
  const auto v4 = parse_profile(std::string(kProfile) + "target_ip6 = 192.0.2.2\n", "dut.profile");
  ASSERT_FALSE(v4);
  EXPECT_EQ(v4.error(),
            "dut.profile:5: target_ip6 '192.0.2.2' is not an IPv6 address (write it as RFC 4291 "
            "text, e.g. 2001:db8::2; an IPv4 address goes to target_ip)");
  const auto mapped =
      parse_profile(std::string(kProfile) + "tester_ip6 = ::ffff:192.0.2.1\n", "dut.profile");
  ASSERT_FALSE(mapped);
  EXPECT_TRUE(mapped.error().starts_with("dut.profile:5: tester_ip6 '::ffff:192.0.2.1' is not"))
      << mapped.error();
}

TEST(Ipv6Profile, ValidateRefusesAnythingButUnicastAddressesOfTwoHosts) {
  const std::pair<std::string, std::string> cases[] = {
      {"target_ip6 = ff02::1", "f: target_ip6 ff02::1 is a multicast address"},
      {"target_ip6 = ::1", "f: target_ip6 ::1 is the loopback address"},
      {"tester_ip6 = ::", "f: tester_ip6 :: is not a host address"},
      {"target_ip6 = 2001:db8::1\ntester_ip6 = 2001:db8::1",
       "f: tester_ip6 and target_ip6 are both 2001:db8::1"},
  };
  for (const auto& [lines, expected] : cases) {
    const auto p = parse_profile(std::string(kProfile) + lines + "\n", "f");
    ASSERT_TRUE(p) << p.error();
    const auto v = validate(*p);
    ASSERT_FALSE(v) << lines;
    EXPECT_TRUE(v.error().starts_with(expected)) << lines << "\n  got: " << v.error();
  }
}

Addresses both_addresses() {
  Addresses a;
  a.tester = {{2, 0, 0, 0, 0, 1}, {192, 0, 2, 1}, parse_ipv6("2001:db8::1")};
  a.device = {{2, 0, 0, 0, 0, 2}, {192, 0, 2, 2}, parse_ipv6("2001:db8::2")};
  return a;
}

TEST(Ipv6Frames, RequestsOfAConnectionOverIpv6CarryAnIpv6Header) {
  Connection c;
  c.name = "c";
  c.remote_qpn = 0x11;
  c.ipv6 = true;
  const auto built = build_request(both_addresses(), c, 0x04,
                                   {{"len", "32"}, {"tos", "0x68"}, {"ipv6.hlim", "3"}});
  ASSERT_TRUE(built) << built.error();
  const Packet p = decode(built->bytes);
  ASSERT_TRUE(p.ipv6);
  EXPECT_FALSE(p.ipv4);
  EXPECT_EQ(p.ipv6->src, parse_ipv6("2001:db8::1"));
  EXPECT_EQ(p.ipv6->dst, parse_ipv6("2001:db8::2"));
  EXPECT_EQ(p.ipv6->traffic_class, 0x68);
  EXPECT_EQ(p.ipv6->hop_limit, 3);
  EXPECT_EQ(p.ipv6->payload_length, built->bytes.size() - Ethernet::kSize - Ipv6::kSize);
  ASSERT_TRUE(p.icrc);
  EXPECT_TRUE(p.icrc->ok());
  // IPv4-only keys are refused on it, and checked scripts accept IPv6 fields.
  const auto csum = build_request(both_addresses(), c, 0x04, {{"ip.csum", "bad"}});
  ASSERT_FALSE(csum);
  EXPECT_NE(csum.error().find("runs over IPv6"), std::string::npos) << csum.error();
  EXPECT_FALSE(build_request(both_addresses(), c, 0x04, {{"ip.len", "40"}}));
  EXPECT_TRUE(check_request(0x04, {{"ipv6.hlim", "1"}, {"ipv6.fl", "0x12345"}}));
  EXPECT_FALSE(check_request(0x04, {{"ipv6.nope", "1"}}));
  // Without an IPv6 address on a side no IPv6 frame is built.
  Addresses v4only = both_addresses();
  v4only.device.ip6.reset();
  EXPECT_FALSE(build_request(v4only, c, 0x04, {}));
}

TEST(Ipv6Frames, EgressGuardLetsIpv6OutToTheTargetsAddressOnly) {
  auto pair = make_memory_pair();
  MemoryPort* far = pair.b.get();
  EgressGuardPort guard(std::move(pair.a), {2, 0, 0, 0, 0, 2}, {192, 0, 2, 2}, std::nullopt,
                        parse_ipv6("2001:db8::2"));
  Connection c;
  c.remote_qpn = 0x11;
  c.ipv6 = true;
  Addresses a = both_addresses();
  EXPECT_TRUE(guard.send(build_request(a, c, 0x04, {}).value().bytes));
  a.device.ip6 = parse_ipv6("2001:db8::9");
  const auto other = guard.send(build_request(a, c, 0x04, {}).value().bytes);
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, PortErrorCode::kPermission);
  EXPECT_NE(other.error().message.find("IPv6 destination 2001:db8::9 is not the target's"),
            std::string::npos)
      << other.error().message;
  EXPECT_EQ(far->queued(), 1u);

  // A guard without an IPv6 address refuses every IPv6 frame.
  auto pair2 = make_memory_pair();
  EgressGuardPort v4only(std::move(pair2.a), {2, 0, 0, 0, 0, 2}, {192, 0, 2, 2});
  const auto refused = v4only.send(build_request(both_addresses(), c, 0x04, {}).value().bytes);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("is not IPv4"), std::string::npos)
      << refused.error().message;
}

// Searches a JSON value for an object with these two string members.
bool has_entry(const nlohmann::json& j, const std::string& gid, const std::string& type) {
  if (j.is_object()) {
    if (j.value("gid", "") == gid && j.value("type", "") == type) return true;
    for (const auto& [k, v] : j.items())
      if (has_entry(v, gid, type)) return true;
  } else if (j.is_array()) {
    for (const auto& v : j)
      if (has_entry(v, gid, type)) return true;
  }
  return false;
}

TEST(Ipv6Reference, BothSidesHaveAnIpv6GidAndTheTableListsItAsRoceV2) {
  auto target = ReferenceTarget::create({});
  ASSERT_TRUE(target) << target.error();
  ASSERT_TRUE((*target)->device().ip6);
  ASSERT_TRUE((*target)->tester().ip6);
  EXPECT_EQ(format_gid(*(*target)->device().ip6), "2001:db8::2");
  const auto hello = (*target)->control({{"op", "hello"}});
  ASSERT_TRUE(hello) << hello.error();
  EXPECT_TRUE(has_entry(*hello, "2001:db8::2", "RoCEv2")) << hello->dump();
  EXPECT_TRUE(has_entry(*hello, "::ffff:192.0.2.2", "RoCEv2")) << hello->dump();
}

// The reference target without IPv6 addresses: what a raw profile without target_ip6 gives.
class NoIpv6Target final : public Target {
 public:
  explicit NoIpv6Target(std::unique_ptr<ReferenceTarget> inner) : inner_(std::move(inner)) {}
  std::string_view kind() const override { return inner_->kind(); }
  std::string describe() const override { return inner_->describe(); }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  roceconf::Port& port() override { return inner_->port(); }
  Endpoint tester() const override { return without(inner_->tester()); }
  Endpoint device() const override { return without(inner_->device()); }
  std::uint16_t service_port() const override { return inner_->service_port(); }
  std::expected<nlohmann::json, std::string> control(const nlohmann::json& r) override {
    return inner_->control(r);
  }
  std::expected<void, std::string> reset() override { return inner_->reset(); }

 private:
  static Endpoint without(Endpoint e) {
    e.ip6.reset();
    return e;
  }
  std::unique_ptr<ReferenceTarget> inner_;
};

std::vector<const CaseDef*> ipv6_cases() {
  std::vector<const CaseDef*> out;
  for (const auto& c : cases::builtin_catalogue().cases())
    if (c.area == "ipv6") out.push_back(&c);
  return out;
}

report::RunResult run_ipv6(Target& target) {
  report::RunResult result;
  run_cases(target, ipv6_cases(), RunOptions{}, result);
  return result;
}

TEST(Ipv6Cases, PassOnTheReferenceOverIpv6Frames) {
  ReferenceOptions o;
  auto target = ReferenceTarget::create(o);
  ASSERT_TRUE(target) << target.error();
  const auto r = run_ipv6(**target);
  ASSERT_GE(r.cases.size(), 6u);
  for (const auto& c : r.cases) {
    EXPECT_EQ(c.verdict, report::Verdict::kPass) << c.id << ": " << c.reason;
    // Every RoCE frame of the case, both ways, is IPv6.
    for (const auto& e : c.events) {
      if (e.frame.empty()) continue;
      EXPECT_TRUE(decode(e.frame).ipv6) << c.id << ": " << e.text;
    }
  }
  // The REQ names the IPv6 GIDs as its primary path.
  const auto connect =
      std::ranges::find(r.cases, std::string("ipv6/connect-send"), &report::CaseResult::id);
  ASSERT_NE(connect, r.cases.end());
  const auto req = std::ranges::find_if(connect->events, [](const report::Event& e) {
    return e.kind == report::EventKind::kSent && !e.frame.empty();
  });
  ASSERT_NE(req, connect->events.end());
  const Packet p = decode(req->frame);
  ASSERT_TRUE(p.mad && p.mad->cm);
  const auto* r0 = std::get_if<CmReq>(&*p.mad->cm);
  ASSERT_NE(r0, nullptr);
  EXPECT_EQ(format_gid(r0->primary.local_gid), "2001:db8::1");
  EXPECT_EQ(format_gid(r0->primary.remote_gid), "2001:db8::2");
  EXPECT_EQ(r.cases.back().id, "ipv6/sent-framing");
  EXPECT_NE(r.cases.back().reason.find("packets the target sent over IPv6"), std::string::npos)
      << r.cases.back().reason;
}

TEST(Ipv6Cases, SkipWithAReasonWithoutIpv6Addresses) {
  auto inner = ReferenceTarget::create({});
  ASSERT_TRUE(inner) << inner.error();
  NoIpv6Target target(std::move(*inner));
  const auto r = run_ipv6(target);
  ASSERT_GE(r.cases.size(), 6u);
  for (const auto& c : r.cases) {
    EXPECT_EQ(c.verdict, report::Verdict::kSkip) << c.id << ": " << c.reason;
    EXPECT_NE(c.reason.find("needs IPv6: the target has no IPv6 address"), std::string::npos)
        << c.id << ": " << c.reason;
  }
}

TEST(Ipv6Cases, FramingDefectsFailIpv6SentFramingCitingTheIpv6Statements) {
  const std::pair<std::string, std::string> defects[] = {
      {"ipv6-hop-limit-fixed", "ipv6.hlim 64, expected 17 (the AV's hop limit) (CA17-17)"},
      {"ipv6-traffic-class-zero", "(CA17-13)"},
      {"ipv6-plen-without-icrc", "(CA17-15)"},
  };
  for (const auto& [quirk, expected] : defects) {
    ReferenceOptions o;
    o.quirks = {quirk};
    auto target = ReferenceTarget::create(o);
    ASSERT_TRUE(target) << target.error();
    const auto r = run_ipv6(**target);
    const auto& grade = r.cases.back();
    ASSERT_EQ(grade.id, "ipv6/sent-framing");
    EXPECT_EQ(grade.verdict, report::Verdict::kFail) << quirk;
    EXPECT_NE(grade.reason.find(expected), std::string::npos) << quirk << ": " << grade.reason;
  }
}

}  // namespace
}  // namespace roceconf::engine
