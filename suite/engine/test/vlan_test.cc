// VLAN-tagged RoCE without root: the profile's vlan, pcp and dscp keys, tagged frames from the
// builder, the egress guard's VLAN rule, `@tester.*` in cases, and header/vlan-priority-kept
// against the in-process reference NIC behind an emulated VLAN port (as Linux's VLAN stack or a
// switch port would tag its answers), answering right and wrong.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "capture/port/memory_port.h"
#include "capture/port/raw_socket_port.h"
#include "cases/builtin.h"
#include "suite/engine/frame_builder.h"
#include "suite/engine/profile.h"
#include "suite/engine/raw_target.h"
#include "suite/engine/reference_target.h"
#include "suite/engine/runner.h"
#include "suite/engine/script.h"
#include "suite/engine/veth_lab.h"

namespace roceconf::engine {
namespace {

constexpr char kProfile[] = R"(interface = eth1
target_mac = 02:00:00:00:00:02
target_ip = 192.0.2.2
tester_ip = 192.0.2.1
)";

TEST(VlanProfile, ParsesVlanPcpAndDscp) {
  const auto p = parse_profile(std::string(kProfile) + "vlan = 100\npcp = 3\ndscp = 26\n", "f");
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->vlan, 100);
  EXPECT_EQ(p->pcp, 3);
  EXPECT_EQ(p->dscp, 26);
  EXPECT_TRUE(validate(*p));
  const auto plain = parse_profile(kProfile, "f");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->vlan);
  EXPECT_EQ(plain->dscp, 0);
}

TEST(VlanProfile, ErrorsNameFileAndLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"vlan = 0", "f:2: vlan '0' is not a VLAN ID (1 to 4094)"},
      {"vlan = 4095", "f:2: vlan '4095' is not a VLAN ID (1 to 4094)"},
      {"vlan = ten", "f:2: vlan 'ten' is not a VLAN ID (1 to 4094)"},
      {"pcp = 8", "f:2: pcp '8' is not a priority (0 to 7)"},
      {"dscp = 64", "f:2: dscp '64' is not a DSCP (0 to 63)"},
      {"dscp = -1", "f:2: dscp '-1' is not a DSCP (0 to 63)"},
      {"vlan =", "f:2: 'vlan' needs a value"},
  };
  for (const auto& [line, expected] : cases) {
    const auto p = parse_profile("udp_port = 4791\n" + line + "\n", "f");
    ASSERT_FALSE(p) << line;
    EXPECT_EQ(p.error(), expected) << line;
  }
  auto p = parse_profile(std::string(kProfile) + "pcp = 3\n", "f");
  ASSERT_TRUE(p);
  ASSERT_FALSE(validate(*p));
  EXPECT_EQ(validate(*p).error(),
            "f: pcp without vlan: the priority travels in the 802.1Q tag; add 'vlan = ID' or "
            "remove pcp");
}

Addresses tagged_addresses() {
  Addresses a{{{2, 0, 0, 0, 0, 1}, {192, 0, 2, 1}},
              {{2, 0, 0, 0, 0, 2}, {192, 0, 2, 2}},
              4791,
              Marking{100, 5, 26}};
  return a;
}

TEST(VlanFrames, RequestsAndMadsCarryTheTagAndDscp) {
  Connection c;
  c.name = "c";
  c.remote_qpn = 0x11;
  auto req = build_request(tagged_addresses(), c, 0x04, {{"len", "16"}});  // RC SEND_ONLY
  ASSERT_TRUE(req) << req.error();
  CmReq cm;
  auto mad = build_mad(tagged_addresses(), 0xFFFF, cm, 7, {});
  ASSERT_TRUE(mad) << mad.error();
  for (const auto* bytes : {&req->bytes, &mad->bytes}) {
    const Packet p = decode(*bytes);
    ASSERT_EQ(p.vlans.size(), 1u);
    EXPECT_EQ(p.vlans[0].tpid, 0x8100);
    EXPECT_EQ(p.vlans[0].vid, 100);
    EXPECT_EQ(p.vlans[0].pcp, 5);
    ASSERT_TRUE(p.ipv4);
    EXPECT_EQ(p.ipv4->dscp, 26);
    EXPECT_TRUE(p.icrc && p.icrc->ok());
    EXPECT_TRUE(p.findings.empty());
  }
  // ip.csum=bad breaks the IPv4 checksum behind the tag, and only it.
  auto bad = build_request(tagged_addresses(), c, 0x04, {{"ip.csum", "bad"}});
  ASSERT_TRUE(bad);
  const Packet b = decode(bad->bytes);
  ASSERT_TRUE(b.ipv4 && b.udp && b.bth);
  EXPECT_NE(ipv4_checksum(Bytes(bad->bytes.data() + 18, 20)), 0) << "checksum broken";
  EXPECT_EQ(b.ipv4->dst, (Ipv4Address{192, 0, 2, 2}));
  EXPECT_TRUE(b.icrc && b.icrc->ok());
  // A case's tos= still wins over the profile's DSCP.
  auto tos = build_request(tagged_addresses(), c, 0x04, {{"tos", "0x03"}});
  ASSERT_TRUE(tos);
  EXPECT_EQ(decode(tos->bytes).ipv4->dscp, 0);
}

TEST(VlanFrames, TesterValuesForCases) {
  const Marking m{100, 5, 26};
  EXPECT_EQ(marking_field(m, "vlan").value(), 100u);
  EXPECT_EQ(marking_field(m, "pcp").value(), 5u);
  EXPECT_EQ(marking_field(m, "dscp").value(), 26u);
  EXPECT_NE(marking_field(Marking{}, "vlan").error().find("untagged"), std::string::npos);
  EXPECT_NE(marking_field(m, "prio").error().find("@tester.vlan, @tester.pcp"), std::string::npos);
  // Checked when the case loads.
  const std::string head = "clause: 1\nlevel: MUST\nconnect c\n";
  EXPECT_TRUE(parse_script("t.rcase", head + "expect c ACK vlan.vlan=@tester.vlan\n"));
  const auto bad = parse_script("t.rcase", head + "expect c ACK vlan.vlan=@tester.vid\n");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("t.rcase:4:"), std::string::npos) << bad.error();
  EXPECT_NE(bad.error().find("no value 'vid'"), std::string::npos) << bad.error();
}

TEST(VlanFrames, EgressGuardKeepsTheTesterOnItsVlan) {
  auto pair = make_memory_pair();
  MemoryPort* far = pair.b.get();
  EgressGuardPort guard(std::move(pair.a), {2, 0, 0, 0, 0, 2}, {192, 0, 2, 2}, 100);
  Connection c;
  c.remote_qpn = 0x11;
  auto frame = [&](Marking m) {
    Addresses a = tagged_addresses();
    a.marking = m;
    return build_request(a, c, 0x04, {}).value().bytes;
  };
  EXPECT_TRUE(guard.send(frame({100, 5, 0})));
  const auto untagged = guard.send(frame({}));
  ASSERT_FALSE(untagged);
  EXPECT_EQ(untagged.error().code, PortErrorCode::kPermission);
  EXPECT_NE(untagged.error().message.find("untagged: the target is on VLAN 100"),
            std::string::npos);
  const auto other = guard.send(frame({101, 5, 0}));
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("VLAN 101 is not the target's VLAN 100"), std::string::npos);
  EXPECT_EQ(far->queued(), 1u);
}

TEST(VlanLab, NamespaceOwnerIsExactlyTheLabPattern) {
  EXPECT_EQ(lab_namespace_owner("rcnf1234-a"), 1234);
  EXPECT_EQ(lab_namespace_owner("rcnf1234-b"), 1234);
  EXPECT_EQ(lab_namespace_owner("rcnf1234ab-b"), 1234);  // a process's further labs
  for (const char* other : {"rcnf-a", "rcnf1234-c", "rcnf1234", "rcnf01234-a", "rcnf1234A-a",
                            "rcnf12x4-a", "xrcnf1234-a", "rcpt1234-a", "rcl1234-a", "roceconf-rxe",
                            "rcnf1234-a-b", "rcnf12345678901-a", "rcnf1234--a"})
    EXPECT_FALSE(lab_namespace_owner(other)) << other;
}

// The reference target behind a VLAN port: what the tester sends must carry VLAN `vid` (the
// port takes it off, as a switch or Linux's VLAN stack does), and what the NIC answers leaves
// tagged `answer` (nothing: untagged).
class VlanPort final : public Port {
 public:
  VlanPort(Target& inner, std::uint16_t vid, std::optional<Vlan> answer)
      : inner_(inner), vid_(vid), answer_(answer) {}
  std::expected<void, PortError> send(Bytes frame) override {
    const Packet p = decode(frame);
    if (p.vlans.size() != 1 || p.vlans[0].vid != vid_) return {};  // another network
    std::vector<std::uint8_t> inner(frame.begin(), frame.end());
    inner.erase(inner.begin() + 12, inner.begin() + 16);
    return inner_.port().send(inner);
  }
  std::expected<std::optional<ReceivedFrame>, PortError> receive(TimeNs deadline) override {
    auto got = inner_.port().receive(deadline);
    if (got && *got && answer_) {
      const Vlan& v = *answer_;
      restore_vlan_tag((*got)->data, v.tpid,
                       static_cast<std::uint16_t>(v.pcp << 13 | (v.dei ? 1 << 12 : 0) | v.vid));
    }
    return got;
  }
  std::string_view name() const override { return "vlan"; }
  Clock& clock() override { return inner_.port().clock(); }

 private:
  Target& inner_;
  std::uint16_t vid_;
  std::optional<Vlan> answer_;
};

class TaggedReference final : public Target {
 public:
  TaggedReference(std::unique_ptr<ReferenceTarget> inner, Marking m, std::optional<Vlan> answer)
      : inner_(std::move(inner)), marking_(m), port_(*inner_, *m.vlan, answer) {}
  std::string_view kind() const override { return "reference"; }
  std::string describe() const override { return "reference behind a VLAN port"; }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  Port& port() override { return port_; }
  Endpoint tester() const override { return inner_->tester(); }
  Endpoint device() const override { return inner_->device(); }
  std::uint16_t service_port() const override { return inner_->service_port(); }
  Marking marking() const override { return marking_; }
  std::expected<nlohmann::json, std::string> control(const nlohmann::json& r) override {
    return inner_->control(r);
  }
  std::expected<void, std::string> reset() override { return inner_->reset(); }

 private:
  std::unique_ptr<ReferenceTarget> inner_;
  Marking marking_;
  VlanPort port_;
};

report::CaseResult run_one(Target& target, const std::string& id) {
  report::RunResult result;
  run_cases(target, cases::builtin_catalogue().select(id), RunOptions{}, result);
  EXPECT_EQ(result.cases.size(), 1u);
  return result.cases.empty() ? report::CaseResult{} : result.cases[0];
}

std::unique_ptr<ReferenceTarget> reference() {
  auto t = ReferenceTarget::create({});
  EXPECT_TRUE(t) << t.error();
  return std::move(*t);
}

TEST(VlanCase, SkipsWithoutAVlan) {
  auto target = reference();
  const auto r = run_one(*target, "header/vlan-priority-kept");
  EXPECT_EQ(r.verdict, report::Verdict::kSkip);
  EXPECT_NE(r.reason.find("needs a VLAN"), std::string::npos) << r.reason;
}

TEST(VlanCase, PassesOnTheVlanAtThePriorityAndCatchesEveryOtherAnswer) {
  const Marking m{100, 3, 26};
  const auto tag = [](std::uint16_t vid, std::uint8_t pcp) {
    Vlan v;
    v.vid = vid;
    v.pcp = pcp;
    return v;
  };
  TaggedReference right(reference(), m, tag(100, 3));
  auto r = run_one(right, "header/vlan-priority-kept");
  EXPECT_EQ(r.verdict, report::Verdict::kPass) << r.reason << " [" << r.failed_step << "]";

  const std::pair<std::optional<Vlan>, std::string> wrong[] = {
      {tag(100, 0), "vlan.prio"}, {tag(200, 3), "vlan.vlan"}, {std::nullopt, "vlan"}};
  for (const auto& [answer, field] : wrong) {
    TaggedReference target(reference(), m, answer);
    r = run_one(target, "header/vlan-priority-kept");
    EXPECT_EQ(r.verdict, report::Verdict::kFail) << field;
    EXPECT_NE(r.failed_step.find("expect c ACK psn=0"), std::string::npos) << r.failed_step;
  }
  // The rest of the catalogue does not care about the tag.
  TaggedReference whole(reference(), m, tag(100, 3));
  report::RunResult all;
  run_cases(whole, cases::builtin_catalogue().select("header"), RunOptions{}, all);
  for (const auto& c : all.cases)
    EXPECT_EQ(c.verdict, report::Verdict::kPass) << c.id << ": " << c.reason;
}

}  // namespace
}  // namespace roceconf::engine
