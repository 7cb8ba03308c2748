// The host checks, each fault injected on a veth pair in a namespace made here (as root; skipped
// otherwise), and the parsing of tools' output on a fake host.
#include "suite/preflight/host_checks.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace roceconf::preflight {
namespace {

const Check& find(const std::vector<Check>& checks, const std::string& name) {
  for (const auto& c : checks)
    if (c.name == name) return c;
  static Check none{"<missing>", Level::error, "no such check", {}};
  return none;
}

engine::Profile profile_for(const std::string& ifname) {
  auto p =
      engine::parse_profile(fmt::format("interface = {}\n"
                                        "target_mac = 02:00:00:00:aa:02\n"
                                        "target_ip = 10.77.0.2\n"
                                        "tester_ip = 10.77.0.1\n"
                                        "pmtu = 1024\n",
                                        ifname));
  EXPECT_TRUE(p.has_value()) << p.error();
  return *p;
}

int sh(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str());
}

// Two namespaces, a veth pair between them: dt0 (the tester's side) and dt1 (the DUT's), clean.
class VethLab : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for namespaces and veth pairs";
    tester_ = fmt::format("rcdoc_t{}", ::getpid());
    dut_ = fmt::format("rcdoc_d{}", ::getpid());
    ASSERT_EQ(sh(fmt::format("ip netns add {} && ip netns add {}", tester_, dut_)), 0);
    ASSERT_EQ(sh(fmt::format("ip -n {} link add dt0 type veth peer name dt1 netns {} && "
                             "ip -n {} link set dt0 up && ip -n {} link set dt1 address "
                             "02:00:00:00:aa:02 && ip -n {} link set dt1 up && "
                             "ip netns exec {} ethtool -K dt0 gro off lro off rxvlan off",
                             tester_, dut_, tester_, dut_, dut_, tester_)),
              0);
  }
  void TearDown() override {
    if (!tester_.empty()) sh(fmt::format("ip netns del {}; ip netns del {}", tester_, dut_));
  }
  std::vector<Check> checks() { return check_host(profile_for("dt0"), system_view(tester_)); }
  std::string tester_, dut_;
};

TEST_F(VethLab, CleanLabIsAllOk) {
  auto c = checks();
  for (const auto& check : c) EXPECT_EQ(check.level, Level::ok) << format_line(check);
  EXPECT_EQ(exit_status(c), 0);
}

TEST_F(VethLab, TesterIpOnTheInterfaceWarns) {
  ASSERT_EQ(sh(fmt::format("ip -n {} addr add 10.77.0.1/24 dev dt0", tester_)), 0);
  auto c = checks();
  EXPECT_EQ(find(c, "tester-ip").level, Level::warning) << format_line(find(c, "tester-ip"));
  EXPECT_NE(find(c, "tester-ip").fix.find("ip addr del 10.77.0.1/"), std::string::npos);
  EXPECT_EQ(exit_status(c), 1);
}

TEST_F(VethLab, WrongTargetMacIsAnError) {
  ASSERT_EQ(
      sh(fmt::format("ip -n {} neigh add 10.77.0.2 lladdr 02:00:00:00:bb:02 dev dt0", tester_)), 0);
  auto c = checks();
  EXPECT_EQ(find(c, "neighbour").level, Level::error);
  EXPECT_EQ(find(c, "neighbour").fix,
            "set `target_mac = 02:00:00:00:bb:02` in the profile (or "
            "check the DUT's port)");
  EXPECT_EQ(exit_status(c), 2);
}

TEST_F(VethLab, SmallMtuIsAnError) {
  ASSERT_EQ(sh(fmt::format("ip -n {} link set dt0 mtu 1000", tester_)), 0);
  auto c = checks();
  EXPECT_EQ(find(c, "mtu").level, Level::error);
  EXPECT_EQ(find(c, "mtu").fix, "ip link set dev dt0 mtu 1088");
  EXPECT_EQ(exit_status(c), 2);
}

TEST_F(VethLab, OffloadsOnWarn) {
  ASSERT_EQ(sh(fmt::format("ip netns exec {} ethtool -K dt0 gro on", tester_)), 0);
  auto c = checks();
  EXPECT_EQ(find(c, "offloads").level, Level::warning);
  EXPECT_NE(find(c, "offloads").fix.find("ethtool -K dt0 gro off"), std::string::npos);
}

TEST_F(VethLab, MissingInterfaceIsAnError) {
  auto c = check_host(profile_for("nosuch0"), system_view(tester_));
  EXPECT_EQ(find(c, "interface").level, Level::error);
  EXPECT_EQ(exit_status(c), 2);
}

TEST_F(VethLab, RxeLinkOnTheInterfaceIsAnError) {
  if (sh("modprobe rdma_rxe") != 0) GTEST_SKIP() << "the kernel has no rdma_rxe module";
  std::string name = fmt::format("rcdoc{}", ::getpid() % 10000);
  if (sh(fmt::format("ip netns exec {} rdma link add {} type rxe netdev dt0", tester_, name)) != 0)
    GTEST_SKIP() << "`rdma link add ... type rxe` failed here";
  auto c = checks();
  sh(fmt::format("ip netns exec {} rdma link delete {}", tester_, name));
  EXPECT_EQ(find(c, "rdma-link").level, Level::error);
  EXPECT_EQ(find(c, "rdma-link").fix, "rdma link delete " + name);
}

// Tools' output on a host that is not this one.
TEST(FakeHost, RdmaDeviceOfMlx5GivesTheDevlinkFix) {
  HostView host;
  host.net_raw = true;
  host.read = [](const std::string& path) -> std::optional<std::string> {
    if (path == "/sys/class/net/enp1s0f0/mtu") return "9000\n";
    return std::nullopt;
  };
  host.run = [](const std::string& cmd) -> std::optional<std::string> {
    if (cmd.rfind("ls ", 0) == 0) return "mlx5_0\n";
    if (cmd == "rdma link show")
      return "link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev enp1s0f0\n";
    if (cmd.rfind("ethtool -k", 0) == 0)
      return "generic-receive-offload: off\nlarge-receive-offload: off [fixed]\n"
             "rx-vlan-offload: on [fixed]\n";
    return "";
  };
  auto c = check_host(profile_for("enp1s0f0"), host);
  EXPECT_EQ(find(c, "rdma-device").level, Level::error);
  EXPECT_NE(find(c, "rdma-device").fix.find("enable_roce value false"), std::string::npos);
  EXPECT_EQ(find(c, "rdma-link").level, Level::error);
  // A fixed offload cannot be turned off: not reported.
  EXPECT_EQ(find(c, "offloads").level, Level::ok);
  EXPECT_EQ(find(c, "mtu").level, Level::ok);
  EXPECT_EQ(to_json(c)["status"], 2);
}

TEST(FakeHost, NoNetRawIsAnError) {
  HostView host;
  host.read = [](const std::string&) { return std::optional<std::string>("1500\n"); };
  host.run = [](const std::string&) { return std::optional<std::string>(""); };
  auto c = check_host(profile_for("eth0"), host);
  EXPECT_EQ(find(c, "privilege").level, Level::error);
}

}  // namespace
}  // namespace roceconf::preflight
