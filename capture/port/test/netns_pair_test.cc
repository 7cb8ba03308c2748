// Raw socket ports on a veth pair between two network namespaces that this test creates with
// scripts/netns-pair.sh and always removes. Frames go only over that pair, 192.0.2.0/24
// (TEST-NET-1). Needs root; skipped with the reason otherwise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "capture/port/raw_socket_port.h"
#include "capture/port/test/port_test_util.h"

namespace roceconf {
namespace {

using test::psn_of;
using test::roce_frame;
using test::roce_v1_frame;

constexpr TimeNs kSecond = 1'000'000'000;

struct Side {
  std::string netns;
  std::string interface;
  MacAddress mac{};
};

std::optional<MacAddress> parse_mac(const std::string& text) {
  MacAddress mac{};
  unsigned v[6];
  if (std::sscanf(text.c_str(), "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
    return std::nullopt;
  for (int i = 0; i < 6; ++i) mac[i] = static_cast<std::uint8_t>(v[i]);
  return mac;
}

// Brings a namespace pair up on construction and down on destruction, whatever the test did.
class NetnsPair {
 public:
  explicit NetnsPair(std::string prefix) : prefix_(std::move(prefix)) {
    script(" down");  // a stale pair from a killed run with this PID
    const auto up = script(" up");
    output_ = up.output;
    if (up.status != 0) return;
    std::istringstream lines(up.output);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream fields(line);
      std::string which, field;
      fields >> which;
      Side side;
      while (fields >> field) {
        const auto eq = field.find('=');
        const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
        if (key == "netns") side.netns = value;
        if (key == "if") side.interface = value;
        if (key == "mac") side.mac = parse_mac(value).value_or(MacAddress{});
      }
      (which == "a" ? a : b) = side;
    }
    ok_ = !a.interface.empty() && !b.interface.empty();
  }
  ~NetnsPair() { script(" down"); }
  NetnsPair(const NetnsPair&) = delete;
  NetnsPair& operator=(const NetnsPair&) = delete;

  bool ok() const { return ok_; }
  const std::string& output() const { return output_; }

  Side a, b;

 private:
  test::CommandResult script(const char* action) const {
    return test::run(std::string("'") + ROCECONF_NETNS_SCRIPT + "'" + action + " " + prefix_ +
                     " 2>&1");
  }

  std::string prefix_;
  std::string output_;
  bool ok_ = false;
};

std::unique_ptr<RawSocketPort> must_open(const Side& side, std::uint16_t udp_port = 4791) {
  auto port =
      RawSocketPort::open({.interface = side.interface, .udp_port = udp_port, .netns = side.netns});
  EXPECT_TRUE(port) << port.error().message;
  return port ? std::move(*port) : nullptr;
}

class NetnsPairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0)
      GTEST_SKIP() << "needs root to create network namespaces (run port_tests with sudo)";
    if (!test::have_program("ip")) GTEST_SKIP() << "iproute2 (`ip`) is not installed";
    // Unique per process, so parallel test runs never share a pair; fits PREFIX's 12 characters.
    pair_ = std::make_unique<NetnsPair>("rcpt" + std::to_string(getpid() % 100'000'000));
    if (!pair_->ok()) GTEST_SKIP() << "cannot create a namespace pair: " << pair_->output();
  }

  std::unique_ptr<NetnsPair> pair_;
};

TEST_F(NetnsPairTest, RoceFramesCrossAndOthersAreFiltered) {
  auto a = must_open(pair_->a);
  auto b = must_open(pair_->b);
  // A tap without the filter proves the non-RoCE frame really crossed the wire.
  auto tap = RawSocketPort::open(
      {.interface = pair_->b.interface, .netns = pair_->b.netns, .no_filter = true});
  ASSERT_TRUE(a && b && tap);
  EXPECT_EQ(a->mac(), pair_->a.mac);
  EXPECT_EQ(b->name(), pair_->b.interface + "@" + pair_->b.netns);

  const auto v2 = roce_frame(0x123456, 4791, a->mac(), b->mac());
  const auto not_roce = roce_frame(0x111111, 9999, a->mac(), b->mac());
  const auto v1 = roce_v1_frame(0x654321, a->mac(), b->mac());
  ASSERT_TRUE(a->send(not_roce));
  ASSERT_TRUE(a->send(v2));
  ASSERT_TRUE(a->send(v1));

  auto got = b->receive_for(2 * kSecond);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(*got) << "RoCEv2 frame did not arrive";
  EXPECT_EQ((*got)->data, v2);  // the UDP 9999 frame before it was filtered out
  const Packet decoded = decode((*got)->data);
  ASSERT_TRUE(decoded.bth);
  EXPECT_EQ(decoded.bth->psn, 0x123456u);
  EXPECT_TRUE(decoded.icrc && decoded.icrc->ok());
  // Kernel timestamp: recent, and on the port's clock.
  EXPECT_LE((*got)->time_ns, b->clock().now_ns());
  EXPECT_GT((*got)->time_ns, b->clock().now_ns() - 2 * kSecond);
  EXPECT_EQ((*got)->unix_ns, b->clock().unix_ns((*got)->time_ns));

  got = b->receive_for(2 * kSecond);
  ASSERT_TRUE(got && *got) << "RoCEv1 frame did not arrive";
  EXPECT_EQ((*got)->data, v1);
  got = (*tap)->receive_for(2 * kSecond);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->data, not_roce);

  got = b->receive_for(200'000'000);
  ASSERT_TRUE(got);
  EXPECT_FALSE(*got) << "unexpected frame of " << (*got)->data.size() << " bytes";
  // The sender does not hear its own frames, nor b's ICMP/ARP replies.
  got = a->receive_for(100'000'000);
  ASSERT_TRUE(got);
  EXPECT_FALSE(*got);

  // And back the other way.
  const auto reply = roce_frame(7, 4791, b->mac(), a->mac());
  ASSERT_TRUE(b->send(reply));
  got = a->receive_for(2 * kSecond);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->data, reply);
}

// Linux takes the 802.1Q/802.1ad tag off before the socket sees the frame; the port puts it back
// from PACKET_AUXDATA, so the receiver gets the bytes the sender put on the wire.
TEST_F(NetnsPairTest, VlanTagsArriveAsSent) {
  auto a = must_open(pair_->a);
  auto b = must_open(pair_->b);
  ASSERT_TRUE(a && b);
  for (const std::uint16_t tpid : {std::uint16_t{0x8100}, std::uint16_t{0x88A8}}) {
    SCOPED_TRACE(tpid);
    // The packet views the frame's bytes: the frame must outlive it.
    const auto frame = roce_frame(0x42, 4791, a->mac(), b->mac());
    Packet p = decode(frame);
    Vlan tag;
    tag.tpid = tpid;
    tag.vid = 100;
    tag.pcp = 5;
    tag.dei = true;
    p.vlans.push_back(tag);
    const auto tagged = encode(p);
    ASSERT_TRUE(a->send(tagged));
    auto got = b->receive_for(2 * kSecond);
    ASSERT_TRUE(got && *got) << "tagged frame did not arrive";
    EXPECT_EQ((*got)->data, tagged);
    const Packet d = decode((*got)->data);
    ASSERT_EQ(d.vlans.size(), 1u);
    EXPECT_EQ(d.vlans[0].vid, 100);
    EXPECT_EQ(d.vlans[0].pcp, 5);
    EXPECT_TRUE(d.icrc && d.icrc->ok());
  }
  // Untagged frames stay untagged.
  const auto plain = roce_frame(0x43, 4791, a->mac(), b->mac());
  ASSERT_TRUE(a->send(plain));
  auto got = b->receive_for(2 * kSecond);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->data, plain);
}

TEST_F(NetnsPairTest, FilterFollowsANonStandardPort) {
  auto a = must_open(pair_->a);
  auto b = must_open(pair_->b, 9999);
  ASSERT_TRUE(a && b);
  const auto on_9999 = roce_frame(2, 9999, a->mac(), b->mac());
  ASSERT_TRUE(a->send(roce_frame(1, 4791, a->mac(), b->mac())));
  ASSERT_TRUE(a->send(on_9999));
  auto got = b->receive_for(2 * kSecond);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->data, on_9999);  // the frame to 4791 before it was filtered out
  const Packet decoded = decode((*got)->data, LinkType::kEthernet, {.udp_port = 9999});
  ASSERT_TRUE(decoded.bth);
  EXPECT_EQ(decoded.bth->psn, 2u);
}

TEST_F(NetnsPairTest, ManyFramesArriveInOrder) {
  auto a = must_open(pair_->a);
  auto b = must_open(pair_->b);
  ASSERT_TRUE(a && b);
  for (std::uint32_t psn = 0; psn < 500; ++psn)
    ASSERT_TRUE(a->send(roce_frame(psn, 4791, a->mac(), b->mac())));
  for (std::uint32_t psn = 0; psn < 500; ++psn) {
    auto got = b->receive_for(2 * kSecond);
    ASSERT_TRUE(got && *got) << "frame " << psn;
    ASSERT_EQ(psn_of((*got)->data), psn);
  }
}

TEST_F(NetnsPairTest, ErrorsInsideANamespaceNameIt) {
  auto port = RawSocketPort::open({.interface = "eth-missing", .netns = pair_->a.netns});
  ASSERT_FALSE(port);
  EXPECT_EQ(port.error().code, PortErrorCode::kNotFound);
  EXPECT_EQ(port.error().message, "interface 'eth-missing' not found in network namespace '" +
                                      pair_->a.netns + "' (see `ip -n " + pair_->a.netns +
                                      " link`)");
  // The host's view is untouched: the veth ends exist only inside the namespaces.
  EXPECT_FALSE(RawSocketPort::open({.interface = pair_->a.interface}));
}

TEST_F(NetnsPairTest, ScriptIsIdempotent) {
  const std::string script = ROCECONF_NETNS_SCRIPT;
  const std::string prefix = pair_->a.netns.substr(0, pair_->a.netns.size() - 2);
  const auto again = test::run("'" + script + "' up " + prefix + " 2>&1");
  EXPECT_EQ(again.status, 0) << again.output;
  EXPECT_NE(again.output.find("ip=192.0.2.1/24"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("ip=192.0.2.2/24"), std::string::npos) << again.output;
  const auto addresses =
      test::run("ip -n " + pair_->a.netns + " -o -4 addr show dev " + pair_->a.interface + " 2>&1");
  EXPECT_EQ(std::count(addresses.output.begin(), addresses.output.end(), '\n'), 1)
      << addresses.output;
  const auto other = "rcpu" + std::to_string(getpid() % 100'000'000);
  EXPECT_EQ(test::run("'" + script + "' down " + other + " 2>&1").status, 0);  // nothing there
}

// `netns-pair.sh sweep` deletes what a crashed daemon lab left (rcnf<PID>-a/-b of a PID that is
// gone) and nothing else.
TEST(NetnsPairScript, SweepRemovesOnlyTheLabsOfDeadRuns) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create network namespaces";
  if (!test::have_program("ip")) GTEST_SKIP() << "iproute2 (`ip`) is not installed";
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string stale = "rcnf" + std::to_string(dead) + "-b";
  const std::string live = "rcnf" + std::to_string(getpid()) + "y-a";
  const std::string other = "rcsx" + std::to_string(dead) + "-a";
  for (const auto& ns : {stale, live, other}) test::run("ip netns add " + ns);
  const auto swept = test::run(std::string("'") + ROCECONF_NETNS_SCRIPT + "' sweep 2>&1");
  EXPECT_EQ(swept.status, 0) << swept.output;
  // Every daemon lab sweeps as it starts, so a test running beside this one may have removed
  // the stale namespace first; what this sweep must never do is name a live or foreign one.
  EXPECT_EQ(swept.output.find("removed " + live), std::string::npos) << swept.output;
  EXPECT_EQ(swept.output.find("removed " + other), std::string::npos) << swept.output;
  const std::string list = test::run("ip netns list").output;
  std::set<std::string> names;
  std::istringstream lines(list);
  for (std::string line; std::getline(lines, line);) names.insert(line.substr(0, line.find(' ')));
  const auto listed = [&](const std::string& ns) { return names.contains(ns); };
  EXPECT_FALSE(listed(stale)) << list;
  EXPECT_TRUE(listed(live)) << list;
  EXPECT_TRUE(listed(other)) << list;
  for (const auto& ns : {stale, live, other}) test::run("ip netns delete " + ns + " 2>/dev/null");
}

}  // namespace
}  // namespace roceconf
