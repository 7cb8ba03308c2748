// The engine's remote targets: the profile format and its safety rule, the control client
// against a scripted in-test server, and (as root) the veth lab, the reference daemon on it with
// an rdma_cm round trip, and the raw target's egress guard. Root tests leave nothing behind:
// they check `ip netns list` and the daemon's pid after each target is gone.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/port/raw_socket_port.h"
#include "control/auth.h"
#include "control/rcnf_private_data.h"
#include "dissector/address_text.h"
#include "dissector/packet.h"
#include "suite/engine/control_client.h"
#include "suite/engine/daemon_target.h"
#include "suite/engine/profile.h"
#include "suite/engine/raw_target.h"
#include "suite/engine/test/shell.h"
#include "suite/engine/veth_lab.h"
#include "suite/reference_nic/control_server.h"
#include "suite/reference_nic/test/peer_frames.h"

namespace roceconf::engine {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "rcnf-engine-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

// ---------------------------------------------------------------------------------------------
// Profile

constexpr char kGoodProfile[] = R"(# a ConnectX in the lab
interface    = eth1
target_mac   = 02:00:00:00:00:02   # the DUT
target_ip    = 192.0.2.2
tester_mac   = 02-00-00-00-00-01
tester_ip    = 192.0.2.1

service_port = 7472
udp_port     = 4792
netns        = lab
pmtu         = 4096
capabilities = responder
)";

TEST(Profile, ParsesEveryKey) {
  const auto p = parse_profile(kGoodProfile, "dut.profile");
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->source, "dut.profile");
  EXPECT_EQ(p->interface, "eth1");
  EXPECT_EQ(p->target_mac, parse_mac("02:00:00:00:00:02"));
  EXPECT_EQ(p->target_ip, parse_ipv4("192.0.2.2"));
  EXPECT_EQ(p->tester_mac, parse_mac("02:00:00:00:00:01"));
  EXPECT_EQ(p->tester_ip, parse_ipv4("192.0.2.1"));
  EXPECT_EQ(p->service_port, 7472);
  EXPECT_EQ(p->udp_port, 4792);
  EXPECT_EQ(p->netns, "lab");
  EXPECT_EQ(p->pmtu, 4096u);
  EXPECT_TRUE(p->capabilities.responder);
  EXPECT_FALSE(p->capabilities.control);
  EXPECT_TRUE(validate(*p)) << validate(*p).error();
}

// A mangled profile gives a one-line error naming the file, or a profile; never a crash.
TEST(Profile, MutatedProfilesNeverCrash) {
  std::mt19937_64 random(7);
  const std::string good = kGoodProfile;
  int errors = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = good;
    for (int e = 0; e < 1 + static_cast<int>(random() % 6); ++e) {
      const std::size_t at = random() % text.size();
      if (random() % 2)
        text[at] = static_cast<char>(random());
      else
        text.insert(at, 1, "=:#,.\n\r 0xff"[random() % 13]);
    }
    auto p = parse_profile(text, "m.profile");
    if (!p) {
      ++errors;
      EXPECT_EQ(p.error().find('\n'), std::string::npos) << p.error();
      EXPECT_EQ(p.error().rfind("m.profile", 0), 0u) << p.error();
    } else {
      (void)validate(*p);
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(Profile, Defaults) {
  const auto p = parse_profile("interface = eth0\r\n");
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->service_port, 7471);
  EXPECT_EQ(p->udp_port, 4791);
  EXPECT_EQ(p->pmtu, 1024u);
  EXPECT_TRUE(p->capabilities.responder);
  EXPECT_FALSE(p->tester_mac);
  EXPECT_TRUE(p->netns.empty());
  EXPECT_TRUE(p->agent.empty());
}

TEST(Profile, Capabilities) {
  EXPECT_FALSE(parse_profile("capabilities =")->capabilities.responder);
  EXPECT_FALSE(parse_profile("capabilities = none")->capabilities.responder);
  const auto both = parse_profile("capabilities = responder , control");
  ASSERT_TRUE(both) << both.error();
  EXPECT_TRUE(both->capabilities.responder);
  EXPECT_TRUE(both->capabilities.control);
  EXPECT_FALSE(both->capabilities.congestion_management);  // ECN must then be 00 (CA17-5)
  const auto cc = parse_profile("capabilities = responder, congestion-management");
  ASSERT_TRUE(cc) << cc.error();
  EXPECT_TRUE(cc->capabilities.congestion_management);
  // `cc` is its short name; the pacing and reaction keys go with it.
  const auto short_name = parse_profile(
      "capabilities = responder, cc\ncnp_scope = port\ncnp_interval_us = 4\n"
      "cc_monitor_us = 8\ncc_recovery_us = 3000\ncc_ecn = 2\n");
  ASSERT_TRUE(short_name) << short_name.error();
  EXPECT_TRUE(short_name->capabilities.congestion_management);
  EXPECT_EQ(short_name->congestion.cnp_scope, CnpScope::kPort);
  EXPECT_EQ(short_name->congestion.cnp_interval_us, 4u);
  EXPECT_EQ(short_name->congestion.monitor_us, 8u);
  EXPECT_EQ(short_name->congestion.recovery_us, 3000u);
  EXPECT_EQ(short_name->congestion.ecn, 2);
  EXPECT_FALSE(parse_profile("cnp_scope = switch\n"));
  EXPECT_FALSE(parse_profile("cc_monitor_us = 0\n"));
  EXPECT_FALSE(parse_profile("cc_ecn = 3\n"));
  EXPECT_EQ(cnp_scope_name(CnpScope::kIpPair), "ip-pair");
  EXPECT_EQ(parse_cnp_scope("qp"), CnpScope::kQp);
}

TEST(Profile, AgentMakesControlValid) {
  auto p = parse_profile(std::string(kGoodProfile) + "agent = [2001:db8::1]:7472\n", "f");
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->agent, "[2001:db8::1]:7472");
  p->capabilities.control = true;
  EXPECT_TRUE(validate(*p)) << validate(*p).error();
  Profile q = *p;
  q.agent.clear();
  ASSERT_FALSE(validate(q));
  EXPECT_NE(validate(q).error().find("add 'agent = HOST:PORT'"), std::string::npos);
  ProfileOverrides o;
  o.agent = "127.0.0.1:7700";
  ASSERT_TRUE(apply_overrides(q, o));
  EXPECT_EQ(q.agent, "127.0.0.1:7700");
  o.agent = "nope";
  EXPECT_EQ(apply_overrides(q, o).error().rfind("--agent: agent 'nope' is not HOST:PORT", 0), 0u);
}

// Each error names the file and line, says what is wrong and what to write instead.
TEST(Profile, ErrorsNameFileAndLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"interface eth0", "f:2: expected 'key = value', got 'interface eth0'"},
      {"interfce = eth0", "f:2: unknown key 'interfce' (known: interface, target_mac"},
      {"target_mac = zz", "f:2: target_mac 'zz' is not a MAC address (write it as aa:bb"},
      {"tester_mac = 02:00:00:00:00", "f:2: tester_mac '02:00:00:00:00' is not a MAC address"},
      {"target_ip = 192.0.2.256", "f:2: target_ip '192.0.2.256' is not an IPv4 address"},
      {"tester_ip = host", "f:2: tester_ip 'host' is not an IPv4 address"},
      {"service_port = 0", "f:2: service_port '0' is not a port number (1 to 65535)"},
      {"service_port = 70000", "f:2: service_port '70000' is not a port number"},
      {"service_port = 12ab", "f:2: service_port '12ab' is not a port number"},
      {"pmtu = 1500", "f:2: pmtu '1500' is not a path MTU (256, 512, 1024, 2048 or 4096)"},
      {"capabilities = responder, wings", "f:2: unknown capability 'wings' (known: responder"},
      {"agent = dut", "f:2: agent 'dut' is not HOST:PORT"},
      {"agent = dut:0", "f:2: agent 'dut:0' is not HOST:PORT"},
      {"interface = a-name-far-too-long", "f:2: interface 'a-name-far-too-long' is not an"},
      {"interface =", "f:2: 'interface' needs a value"},
      {"= eth0", "f:2: unknown key ''"},
      {"udp_port = 4792", "f:2: 'udp_port' is set twice (first on line 1): keep one"},
  };
  for (const auto& [line, expected] : cases) {
    const auto p = parse_profile("udp_port = 4791\n" + line + "\n", "f");
    ASSERT_FALSE(p) << line;
    EXPECT_EQ(p.error().rfind(expected, 0), 0u) << line << "\n  got: " << p.error();
    EXPECT_EQ(p.error().find('\n'), std::string::npos) << p.error();
  }
}

TEST(Profile, LoadsAFileAndSaysWhenItIsMissing) {
  TempDir dir;
  const std::string path = dir.file("dut.profile");
  std::ofstream(path) << kGoodProfile;
  const auto p = load_profile(path);
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->source, path);
  std::ofstream(path, std::ios::app) << "agent = nope\n";
  const auto bad = load_profile(path);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().rfind(path + ":13: agent 'nope' is not HOST:PORT", 0), 0u) << bad.error();
  const auto missing = load_profile(dir.file("nope"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("cannot read profile"), std::string::npos) << missing.error();
}

TEST(Profile, OverridesTakePrecedence) {
  auto p = parse_profile(kGoodProfile, "f");
  ASSERT_TRUE(p);
  ProfileOverrides o;
  o.interface = "eth2";
  o.target_mac = "02:00:00:00:00:22";
  o.target_ip = "192.0.2.22";
  o.tester_mac = "02:00:00:00:00:11";
  o.tester_ip = "192.0.2.11";
  o.service_port = 9999;
  ASSERT_TRUE(apply_overrides(*p, o));
  EXPECT_EQ(p->interface, "eth2");
  EXPECT_EQ(p->target_mac, parse_mac("02:00:00:00:00:22"));
  EXPECT_EQ(p->target_ip, parse_ipv4("192.0.2.22"));
  EXPECT_EQ(p->tester_mac, parse_mac("02:00:00:00:00:11"));
  EXPECT_EQ(p->tester_ip, parse_ipv4("192.0.2.11"));
  EXPECT_EQ(p->service_port, 9999);
  EXPECT_EQ(p->udp_port, 4792) << "untouched";

  // A profile from flags alone.
  Profile flags_only;
  ProfileOverrides all;
  all.interface = "eth0";
  all.target_mac = "02:00:00:00:00:02";
  all.target_ip = "192.0.2.2";
  all.tester_ip = "192.0.2.1";
  ASSERT_TRUE(apply_overrides(flags_only, all));
  EXPECT_TRUE(validate(flags_only)) << validate(flags_only).error();

  ProfileOverrides bad;
  bad.target_mac = "nope";
  const auto r = apply_overrides(*p, bad);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().rfind("--target-mac: target_mac 'nope' is not a MAC address", 0), 0u)
      << r.error();
  ProfileOverrides empty;
  empty.tester_ip = "";
  EXPECT_EQ(apply_overrides(*p, empty).error(), "--tester-ip needs a value");
  ProfileOverrides zero;
  zero.service_port = 0;
  EXPECT_FALSE(apply_overrides(*p, zero));
}

// validate() on kGoodProfile with one line changed: the first problem, one line.
std::string invalid(const std::string& extra_or_removed, bool remove = false) {
  std::string text = kGoodProfile;
  if (remove) {
    const auto at = text.find(extra_or_removed);
    text.erase(at, text.find('\n', at) - at);
  } else {
    text += extra_or_removed + "\n";
  }
  // A later line overrides: strip the earlier one of the same key.
  if (!remove) {
    const std::string key = extra_or_removed.substr(0, extra_or_removed.find(' '));
    const auto at = text.find(key);
    if (at != text.rfind(key)) text.erase(at, text.find('\n', at) - at);
  }
  const auto p = parse_profile(text, "f");
  if (!p) return "parse: " + p.error();
  const auto v = validate(*p);
  return v ? "valid" : v.error();
}

TEST(Profile, ValidateNamesWhatIsMissing) {
  EXPECT_EQ(invalid("interface", true).rfind("f: no interface: add 'interface = NAME'", 0), 0u);
  EXPECT_EQ(invalid("target_mac", true).rfind("f: no target_mac: add 'target_mac = ", 0), 0u);
  EXPECT_EQ(invalid("target_ip", true).rfind("f: no target_ip: add", 0), 0u);
  EXPECT_EQ(invalid("tester_ip", true).rfind("f: no tester_ip: add", 0), 0u);
  EXPECT_EQ(invalid("tester_mac", true), "valid") << "tester_mac defaults to the interface's";
}

TEST(Profile, ValidateRefusesAnythingButOneUnicastTarget) {
  const std::pair<std::string, std::string> cases[] = {
      {"target_mac = ff:ff:ff:ff:ff:ff", "f: target_mac ff:ff:ff:ff:ff:ff is the broadcast"},
      {"target_mac = 01:00:5e:00:00:01", "f: target_mac 01:00:5e:00:00:01 is a multicast"},
      {"target_mac = 33:33:00:00:00:01", "f: target_mac 33:33:00:00:00:01 is a multicast"},
      {"target_mac = 00:00:00:00:00:00", "f: target_mac 00:00:00:00:00:00 is not a device's"},
      {"target_ip = 255.255.255.255", "f: target_ip 255.255.255.255 is the broadcast address"},
      {"target_ip = 224.0.0.1", "f: target_ip 224.0.0.1 is a multicast address"},
      {"target_ip = 239.255.255.250", "f: target_ip 239.255.255.250 is a multicast address"},
      {"target_ip = 0.0.0.0", "f: target_ip 0.0.0.0 is not a host address"},
      {"target_ip = 127.0.0.1", "f: target_ip 127.0.0.1 is a loopback address"},
      {"target_ip = 240.0.0.1", "f: target_ip 240.0.0.1 is a reserved address"},
      {"tester_mac = 01:00:00:00:00:01", "f: tester_mac 01:00:00:00:00:01 cannot be a source"},
      {"tester_ip = 224.0.0.5", "f: tester_ip 224.0.0.5 is a multicast address"},
      {"tester_ip = 192.0.2.2", "f: tester_ip and target_ip are both 192.0.2.2"},
      {"tester_mac = 02:00:00:00:00:02", "f: tester_mac and target_mac are both"},
      {"capabilities = responder, control", "f: capability 'control' needs the DUT agent"},
  };
  for (const auto& [line, expected] : cases) {
    const std::string got = invalid(line);
    EXPECT_EQ(got.rfind(expected, 0), 0u) << line << "\n  got: " << got;
    EXPECT_EQ(got.find('\n'), std::string::npos) << got;
  }
}

TEST(Profile, IdentityKeysAreReadInTheReportsForms) {
  const auto p = parse_profile(std::string(kGoodProfile) + R"(agent = 192.0.2.2:7700
agent_secret_file = /etc/roceconf/agent.secret
device_name    = mlx5_0
vendor_id      = 0x2C9
vendor_part_id = 4125
firmware       = 22.36.1010
node_guid      = 0C42:A103:0002:0003
driver         = mlx5_core
kernel         = 6.1.0-18-amd64
rdma_core      = 44.0
)",
                               "f");
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->agent_secret_file, "/etc/roceconf/agent.secret");
  EXPECT_EQ(p->identity.name, "mlx5_0");
  EXPECT_EQ(p->identity.vendor_id, "0x02c9");
  EXPECT_EQ(p->identity.vendor_part_id, "4125");
  EXPECT_EQ(p->identity.fw_ver, "22.36.1010");
  EXPECT_EQ(p->identity.node_guid, "0c42:a103:0002:0003");
  EXPECT_EQ(p->identity.driver, "mlx5_core");
  EXPECT_EQ(p->identity.kernel, "6.1.0-18-amd64");
  EXPECT_EQ(p->identity.rdma_core, "44.0");
  EXPECT_TRUE(validate(*p));

  EXPECT_EQ(normalize_node_guid("0x0c42a10300020003"), "0c42:a103:0002:0003");
  EXPECT_EQ(normalize_node_guid("0c42a10300020003"), "0c42:a103:0002:0003");
  EXPECT_EQ(normalize_node_guid("0x1"), "0000:0000:0000:0001");
  EXPECT_FALSE(normalize_node_guid("0c42-a103-0002-0003"));
  EXPECT_FALSE(normalize_node_guid("0x0c42a1030002000300"));
  EXPECT_FALSE(normalize_node_guid("zz"));
  EXPECT_FALSE(normalize_node_guid(""));

  for (const auto& [line, expected] : std::vector<std::pair<std::string, std::string>>{
           {"vendor_id = mellanox", "f:2: vendor_id 'mellanox' is not a number"},
           {"vendor_part_id = 0x", "f:2: vendor_part_id '0x' is not a number"},
           {"node_guid = 1:2:3:4", "f:2: node_guid '1:2:3:4' is not a GUID"},
           {"firmware =", "f:2: 'firmware' needs a value"}}) {
    const auto bad = parse_profile("interface = eth1\n" + line + "\n", "f");
    ASSERT_FALSE(bad) << line;
    EXPECT_EQ(bad.error().rfind(expected, 0), 0u) << bad.error();
  }
  Profile no_agent = *p;
  no_agent.agent.clear();
  EXPECT_NE(validate(no_agent).error().find("agent_secret_file without agent"), std::string::npos);
}

json agent_hello() {
  return {{"ok", true},
          {"protocol", 1},
          {"device",
           {{"name", "rxe0"},
            {"vendor_id", 0xFFFFFF},
            {"vendor_part_id", 0},
            {"fw_ver", ""},
            {"node_guid", "0x505400fffe770011"},
            {"driver", "rdma_rxe"},
            {"kernel", "6.1.0-41-amd64"},
            {"rdma_core", "44.0"}}}};
}

TEST(RawTargetIdentity, FromTheAgentsHelloWithTheProfileFillingGaps) {
  Profile p;
  const json hello = agent_hello();
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(device_identity(p, &hello), (Pairs{{"name", "rxe0"},
                                               {"vendor_id", "0xffffff"},
                                               {"vendor_part_id", "0"},
                                               {"node_guid", "5054:00ff:fe77:0011"},
                                               {"driver", "rdma_rxe"},
                                               {"kernel", "6.1.0-41-amd64"},
                                               {"rdma_core", "44.0"},
                                               {"source", "agent hello"}}));
  p.identity.fw_ver = "rxe (no firmware)";
  p.identity.kernel = "6.1.0-41-amd64";
  const Pairs filled = device_identity(p, &hello);
  EXPECT_EQ(filled[3], (std::pair<std::string, std::string>{"fw_ver", "rxe (no firmware)"}));
  EXPECT_EQ(filled.back().second, "agent hello, profile");
  EXPECT_TRUE(check_identity(p, hello)) << "the kernel matches; an empty fw_ver is no claim";

  // Without an agent: the profile's keys alone, or nothing at all.
  EXPECT_EQ(device_identity(Profile{}, nullptr), Pairs{});
  Profile described;
  described.identity.name = "mlx5_0";
  described.identity.fw_ver = "22.36.1010";
  EXPECT_EQ(device_identity(described, nullptr),
            (Pairs{{"name", "mlx5_0"}, {"fw_ver", "22.36.1010"}, {"source", "profile"}}));
}

TEST(RawTargetIdentity, AProfileThatDescribesAnotherDeviceIsRefused) {
  Profile p;
  p.source = "dut.profile";
  p.agent = "192.0.2.2:7700";
  p.identity.node_guid = "5054:00ff:fe77:0011";
  p.identity.vendor_id = "0xffffff";
  EXPECT_TRUE(check_identity(p, agent_hello()));
  p.identity.node_guid = "0c42:a103:0002:0003";
  const auto wrong = check_identity(p, agent_hello());
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error(),
            "dut.profile: node_guid '0c42:a103:0002:0003' is not the device's: the agent at "
            "192.0.2.2:7700 reports node_guid '5054:00ff:fe77:0011' (is it the device the "
            "profile describes? correct the profile or --device of roceconf-agent)");
  p.identity.node_guid.clear();
  p.identity.rdma_core = "50.0";
  EXPECT_NE(check_identity(p, agent_hello()).error().find("rdma_core '50.0'"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// ControlClient against a scripted server: one connection, one handler per request line.

class ScriptedServer {
 public:
  // `answer(request)` gives the lines to write back (none: stay silent); nullopt closes.
  using Answer = std::function<std::optional<std::vector<std::string>>(const json& request)>;

  ScriptedServer(std::string path, Answer answer) : path_(std::move(path)), answer_(answer) {
    listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
    bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    listen(listen_fd_, 4);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedServer() {
    shutdown(listen_fd_, SHUT_RDWR);
    if (const int fd = conn_fd_.exchange(-1); fd >= 0) shutdown(fd, SHUT_RDWR);
    thread_.join();
    close(listen_fd_);
    unlink(path_.c_str());
  }

 private:
  void serve() {
    const int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    conn_fd_ = fd;
    std::string buffer;
    for (;;) {
      const auto end = buffer.find('\n');
      if (end == std::string::npos) {
        char chunk[4096];
        const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) break;
        buffer.append(chunk, static_cast<std::size_t>(n));
        continue;
      }
      const json request = json::parse(buffer.substr(0, end));
      buffer.erase(0, end + 1);
      const auto lines = answer_(request);
      if (!lines) break;
      for (const std::string& l : *lines) {
        const std::string out = l + "\n";
        if (send(fd, out.data(), out.size(), MSG_NOSIGNAL) < 0) break;
      }
    }
    if (conn_fd_.exchange(-1) >= 0) close(fd);
  }

  std::string path_;
  Answer answer_;
  int listen_fd_ = -1;
  std::atomic<int> conn_fd_{-1};
  std::thread thread_;
};

std::vector<std::string> echo(const json& request) {
  return {json{{"id", request["id"]}, {"ok", true}, {"op", request["op"]}}.dump()};
}

TEST(ControlClient, NumbersRequestsAndReturnsTheirResponses) {
  TempDir dir;
  std::vector<json> seen;
  ScriptedServer server(dir.file("s"), [&](const json& r) {
    seen.push_back(r);
    return echo(r);
  });
  auto client = ControlClient::connect(dir.file("s"), 1s);
  ASSERT_TRUE(client) << client.error();
  const auto first = (*client)->request({{"op", "hello"}, {"id", "mine"}});
  ASSERT_TRUE(first) << first.error();
  EXPECT_EQ((*first)["id"], 1);
  EXPECT_EQ((*first)["op"], "hello");
  const auto second = (*client)->request({{"op", "alloc_pd"}});
  ASSERT_TRUE(second) << second.error();
  EXPECT_EQ((*second)["id"], 2);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0]["id"], 1) << "the client's id replaces the caller's";
  const auto array = (*client)->request(json::array({1, 2}));
  ASSERT_FALSE(array);
  EXPECT_NE(array.error().find("must be a JSON object"), std::string::npos);
  EXPECT_TRUE((*client)->request({{"op", "hello"}})) << "a refused request does no harm";
}

TEST(ControlClient, ConnectWaitsForTheSocketUntilItsTimeout) {
  TempDir dir;
  const auto missing = ControlClient::connect(dir.file("none"), 50ms);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().rfind("cannot connect to control socket " + dir.file("none"), 0), 0u)
      << missing.error();
  std::unique_ptr<ScriptedServer> server;
  std::thread later([&] {
    std::this_thread::sleep_for(100ms);
    server = std::make_unique<ScriptedServer>(dir.file("s"), echo);
  });
  auto client = ControlClient::connect(dir.file("s"), 5s);
  later.join();
  ASSERT_TRUE(client) << client.error();
  EXPECT_TRUE((*client)->request({{"op", "hello"}}));
  const auto long_path = ControlClient::connect(std::string(200, 'x'), 10ms);
  ASSERT_FALSE(long_path);
  EXPECT_NE(long_path.error().find("must be 1 to 107 bytes"), std::string::npos);
}

// The agent's transport: TCP on loopback, one line out, the numbered answer back.
TEST(ControlClient, TcpConnectsAndNumbersRequests) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t len = sizeof addr;
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string where = fmt::format("127.0.0.1:{}", ntohs(addr.sin_port));
  std::thread server([&] {
    const int c = accept(listener, nullptr, nullptr);
    std::string buffer;
    char chunk[4096];
    for (ssize_t n; (n = recv(c, chunk, sizeof chunk, 0)) > 0;) {
      buffer.append(chunk, static_cast<std::size_t>(n));
      for (std::size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
        json r = json::parse(buffer.substr(0, nl));
        buffer.erase(0, nl + 1);
        const std::string out = json{{"id", r["id"]}, {"ok", true}, {"op", r["op"]}}.dump() + "\n";
        send(c, out.data(), out.size(), MSG_NOSIGNAL);
      }
    }
    close(c);
  });
  auto client = ControlClient::connect_tcp(where, 2s);
  ASSERT_TRUE(client) << client.error();
  const auto r = (*client)->request({{"op", "hello"}});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ((*r)["id"], 1);
  EXPECT_EQ((*r)["op"], "hello");
  client->reset();
  server.join();
  close(listener);
  const auto refused = ControlClient::connect_tcp(where, 50ms);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("is roceconf-agent --control running"), std::string::npos)
      << refused.error();
  EXPECT_NE(ControlClient::connect_tcp("nohostport", 10ms).error().find("is not HOST:PORT"),
            std::string::npos);
}

// The reference daemon's socket server with a secret, and the client's one handshake.
class SecretServer {
 public:
  SecretServer(const std::string& path, std::string secret) {
    auto opened = target::ControlServer::open(
        path,
        [this](std::string_view line) {
          ++handled_;
          const json r = json::parse(line);
          return json{{"id", r["id"]}, {"ok", true}, {"protocol", 1}, {"op", r["op"]}}.dump();
        },
        std::move(secret));
    EXPECT_TRUE(opened) << opened.error();
    server_ = std::move(*opened);
    thread_ = std::thread([this] {
      std::vector<pollfd> fds;
      while (!stop_) {
        fds.clear();
        server_->add_poll_fds(fds);
        if (poll(fds.data(), fds.size(), 10) > 0) server_->dispatch(fds);
      }
    });
  }
  ~SecretServer() {
    stop_ = true;
    thread_.join();
  }
  int handled() const { return handled_; }

 private:
  std::unique_ptr<target::ControlServer> server_;
  std::atomic<bool> stop_{false};
  std::atomic<int> handled_{0};
  std::thread thread_;
};

TEST(ControlClient, HandshakeAuthenticatesWhenTheServerAsks) {
  TempDir dir;
  const std::string secret = "the lab's secret, 32 bytes long.";
  SecretServer server(dir.file("s"), secret);

  auto right = ControlClient::connect(dir.file("s"), 2s);
  ASSERT_TRUE(right) << right.error();
  const auto hello = (*right)->handshake(secret);
  ASSERT_TRUE(hello) << hello.error();
  EXPECT_EQ((*hello)["op"], "hello") << "the server's own hello, after auth";
  EXPECT_EQ(server.handled(), 1);
  EXPECT_TRUE((*right)->request({{"op", "alloc_pd"}}));
  EXPECT_EQ(server.handled(), 2);

  auto none = ControlClient::connect(dir.file("s"), 2s);
  ASSERT_TRUE(none);
  const auto refused = (*none)->handshake(std::nullopt);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("requires a secret and none is given: set agent_secret_file"),
            std::string::npos)
      << refused.error();
  const auto still = (*none)->request({{"op", "alloc_pd"}});
  ASSERT_TRUE(still);
  EXPECT_EQ((*still)["errno"], "EACCES") << "no op without auth";

  auto wrong = ControlClient::connect(dir.file("s"), 2s);
  ASSERT_TRUE(wrong);
  const auto bad = (*wrong)->handshake(std::string("not the lab's secret, but as long"));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("the server refused the secret (EACCES: auth: wrong MAC"),
            std::string::npos)
      << bad.error();
  EXPECT_EQ(bad.error().find('\n'), std::string::npos);
  const auto after = (*wrong)->request({{"op", "alloc_pd"}});
  ASSERT_FALSE(after) << "the server closed the connection";
  EXPECT_NE(after.error().find("closed by the target"), std::string::npos) << after.error();
  EXPECT_EQ(server.handled(), 2) << "nothing unauthenticated reached the handler";
}

TEST(ControlClient, HandshakeWithoutAServerSecretIsOneHello) {
  TempDir dir;
  SecretServer server(dir.file("s"), "");
  auto client = ControlClient::connect(dir.file("s"), 2s);
  ASSERT_TRUE(client);
  for (const std::optional<std::string>& secret :
       {std::optional<std::string>(), std::optional<std::string>("a secret the server lacks")}) {
    const auto hello = (*client)->handshake(secret);
    ASSERT_TRUE(hello) << hello.error();
    EXPECT_EQ((*hello)["op"], "hello");
  }
  EXPECT_EQ(server.handled(), 2);
}

TEST(ControlClient, TimeoutIsOneLineAndALateAnswerIsSkipped) {
  TempDir dir;
  std::atomic<int> count{0};
  ScriptedServer server(dir.file("s"),
                        [&](const json& r) -> std::optional<std::vector<std::string>> {
                          if (++count == 1) {
                            std::this_thread::sleep_for(300ms);  // past the client's timeout
                          }
                          return echo(r);
                        });
  auto client = ControlClient::connect(dir.file("s"), 1s);
  ASSERT_TRUE(client);
  const auto start = std::chrono::steady_clock::now();
  const auto late = (*client)->request({{"op", "poll_cq"}}, 100ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 250ms);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error(),
            "control socket " + dir.file("s") + ": no response to 'poll_cq' within 100 ms");
  const auto next = (*client)->request({{"op", "hello"}}, 2s);
  ASSERT_TRUE(next) << next.error();
  EXPECT_EQ((*next)["id"], 2);
  EXPECT_EQ((*next)["op"], "hello");
}

TEST(ControlClient, ClosedSocketIsOneLineAndStaysClosed) {
  TempDir dir;
  ScriptedServer server(dir.file("s"), [](const json&) { return std::nullopt; });
  auto client = ControlClient::connect(dir.file("s"), 1s);
  ASSERT_TRUE(client);
  const auto r = (*client)->request({{"op", "hello"}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "control socket " + dir.file("s") + ": closed by the target");
  const auto again = (*client)->request({{"op", "hello"}});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error(), r.error());
}

TEST(ControlClient, ResponseToAnotherIdIsRefused) {
  TempDir dir;
  ScriptedServer server(
      dir.file("s"), [](const json& r) -> std::optional<std::vector<std::string>> {
        return std::vector<std::string>{json{{"id", r["id"].get<int>() + 5}, {"ok", true}}.dump()};
      });
  auto client = ControlClient::connect(dir.file("s"), 1s);
  ASSERT_TRUE(client);
  const auto r = (*client)->request({{"op", "create_cq"}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "control socket " + dir.file("s") +
                           ": response id 6 does not match request id 1 ('create_cq')");
  EXPECT_FALSE((*client)->request({{"op", "hello"}})) << "the stream is out of step";
}

TEST(ControlClient, NullIdAndGarbageAreRefused) {
  TempDir dir;
  ScriptedServer server(dir.file("s"), [](const json&) -> std::optional<std::vector<std::string>> {
    return std::vector<std::string>{R"({"id":null,"ok":false,"error":"malformed JSON"})"};
  });
  auto client = ControlClient::connect(dir.file("s"), 1s);
  ASSERT_TRUE(client);
  const auto r = (*client)->request({{"op", "hello"}});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("response id null does not match request id 1 ('hello'): malformed"),
            std::string::npos)
      << r.error();

  TempDir dir2;
  ScriptedServer garbage(dir2.file("s"),
                         [](const json&) -> std::optional<std::vector<std::string>> {
                           return std::vector<std::string>{"not json"};
                         });
  auto client2 = ControlClient::connect(dir2.file("s"), 1s);
  ASSERT_TRUE(client2);
  const auto g = (*client2)->request({{"op", "hello"}});
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().find("response to 'hello' is not a JSON object: not json"), std::string::npos)
      << g.error();
}

// ---------------------------------------------------------------------------------------------
// As root: the lab, the daemon, the raw target.

using test::netns_list;
using test::run;

bool has_prefix(const std::set<std::string>& names, const std::string& prefix) {
  return names.contains(prefix + "-a") || names.contains(prefix + "-b");
}

std::string root_skip_reason() {
  if (geteuid() != 0)
    return "needs root: network namespaces (CAP_SYS_ADMIN, CAP_NET_ADMIN) and raw sockets "
           "(CAP_NET_RAW)";
  if (run("command -v ip").empty()) return "needs iproute2's `ip` command";
  return {};
}

#define SKIP_UNLESS_ROOT() \
  if (const std::string why = root_skip_reason(); !why.empty()) GTEST_SKIP() << why

TEST(VethLab, UpAndDownLeavesNothingBehind) {
  SKIP_UNLESS_ROOT();
  std::string prefix;
  {
    auto lab = VethLab::create({});
    ASSERT_TRUE(lab) << lab.error();
    prefix = (*lab)->prefix();
    EXPECT_EQ(prefix, fmt::format("rcnf{}", getpid()));
    const auto names = netns_list();
    EXPECT_TRUE(names.contains(prefix + "-a"));
    EXPECT_TRUE(names.contains(prefix + "-b"));
    const VethSide& a = (*lab)->tester();
    const VethSide& b = (*lab)->target();
    EXPECT_EQ(a.interface, prefix + "-va");
    EXPECT_EQ(b.interface, prefix + "-vb");
    EXPECT_NE(a.mac, MacAddress{});
    EXPECT_NE(a.mac, b.mac);
    EXPECT_EQ(a.ip, (Ipv4Address{192, 0, 2, 1}));
    EXPECT_EQ(b.ip, (Ipv4Address{192, 0, 2, 2}));
    const std::string link = run(fmt::format("ip -n {} link show dev {}", b.netns, b.interface));
    EXPECT_NE(link.find("mtu 9000"), std::string::npos) << link;
    EXPECT_NE(link.find(format_mac(b.mac)), std::string::npos) << link;
    EXPECT_NE(link.find("state UP"), std::string::npos) << link;
    EXPECT_NE(
        run(fmt::format("ip -n {} -4 addr show dev {}", a.netns, a.interface)).find("192.0.2.1/24"),
        std::string::npos);
    // The lab's one IPv6 address is set without DAD, and no link-local address is made, so the
    // interface sends no DAD probes or router solicitations into the capture.
    const std::string v6 = run(fmt::format("ip -n {} -6 addr show dev {}", a.netns, a.interface));
    EXPECT_NE(v6.find("2001:db8::1/64"), std::string::npos) << v6;
    EXPECT_NE(v6.find("nodad"), std::string::npos) << v6;
    EXPECT_EQ(v6.find("fe80:"), std::string::npos) << v6;
    EXPECT_NE((*lab)->describe().find(prefix + "-va"), std::string::npos);

    auto second = VethLab::create({});
    ASSERT_TRUE(second) << second.error();
    EXPECT_EQ((*second)->prefix(), prefix + "a") << "a second lab of the process";
    ASSERT_TRUE((*second)->teardown());
    ASSERT_TRUE((*second)->teardown()) << "idempotent";
    EXPECT_FALSE(has_prefix(netns_list(), prefix + "a"));
  }
  EXPECT_FALSE(has_prefix(netns_list(), prefix)) << "left behind: " << run("ip netns list");
}

TEST(VethLab, RemovesLeftoversAndChecksItsOptions) {
  SKIP_UNLESS_ROOT();
  const std::string prefix = fmt::format("rcl{}", getpid());
  run(fmt::format("ip netns add {}-a", prefix));  // as a crashed run would leave it
  {
    VethLabOptions options;
    options.prefix = prefix;
    options.mtu = 1500;
    auto lab = VethLab::create(options);
    ASSERT_TRUE(lab) << lab.error();
    EXPECT_EQ((*lab)->mtu(), 1500);
  }
  EXPECT_FALSE(has_prefix(netns_list(), prefix));

  VethLabOptions bad;
  bad.prefix = "far-too-long-prefix";
  EXPECT_NE(VethLab::create(bad).error().find("must be 1 to 12"), std::string::npos);
  bad.prefix = prefix;
  bad.mtu = 70000;
  EXPECT_NE(VethLab::create(bad).error().find("MTU 70000"), std::string::npos);
  EXPECT_FALSE(has_prefix(netns_list(), prefix));
}

// Without root the lab and the daemon target say so in the line the CLI shows.
TEST(VethLab, WithoutRootSaysSo) {
  SKIP_UNLESS_ROOT();  // to become someone else
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) _exit(3);
    VethLabOptions options;
    options.prefix = fmt::format("rcu{}", getpid());
    const auto lab = VethLab::create(options);
    if (lab || lab.error() != kDaemonNeedsRoot) _exit(1);
    DaemonTargetOptions daemon;
    daemon.roceconf_binary = ROCECONF_BINARY;
    daemon.lab_prefix = options.prefix;
    const auto started = DaemonTarget::start(daemon);
    // The binary may not be readable by nobody; then that is the message.
    if (started || (started.error() != kDaemonNeedsRoot &&
                    started.error().find("not executable") == std::string::npos))
      _exit(2);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: VethLab, 2: DaemonTarget gave another message";
}

// The rdma_cm REQ for the responder, from the tester's side of `target`.
std::vector<std::uint8_t> req_frame(const Endpoint& tester, const Endpoint& device,
                                    std::uint16_t service_port,
                                    std::array<std::uint8_t, kReqPrivateDataSize>& private_data) {
  const CmReq req =
      target::test::rdma_cm_req(device.ip, service_port, 0x4242, 0x77, 0x100, private_data);
  Packet p = target::test::peer_mad(device.mac, device.ip, req, 0x5151);
  p.eth->src = tester.mac;
  p.ipv4->src = tester.ip;
  return encode(p);
}

// Waits up to 3 s for the REP to the REQ above; its RCNF block.
std::expected<control::RcnfPrivateData, std::string> await_rep(Port& port) {
  const TimeNs give_up = port.clock().now_ns() + 3'000'000'000;
  for (;;) {
    auto frame = port.receive(give_up);
    if (!frame) return std::unexpected(frame.error().message);
    if (!*frame) return std::unexpected("no REP within 3 s");
    const Packet p = decode((*frame)->data);
    if (!p.mad || !p.mad->cm) continue;
    const auto* rep = std::get_if<CmRep>(&*p.mad->cm);
    if (!rep) continue;
    if (rep->remote_comm_id != 0x4242) return std::unexpected("REP for another REQ");
    return control::RcnfPrivateData::decode(rep->private_data);
  }
}

bool process_gone(pid_t pid) {
  return kill(pid, 0) != 0 && errno == ESRCH;
}

TEST(DaemonTarget, StartsAnswersHelloRoundTripsAReqAndLeavesNothingBehind) {
  SKIP_UNLESS_ROOT();
  DaemonTargetOptions options;
  options.roceconf_binary = ROCECONF_BINARY;
  options.quirks = {"msn-stuck", "dup-reexecute"};
  std::string prefix;
  pid_t pid = -1;
  std::string log;
  {
    auto started = DaemonTarget::start(options);
    ASSERT_TRUE(started) << started.error();
    DaemonTarget& t = **started;
    prefix = t.lab().prefix();
    pid = t.pid();
    log = t.log_path();
    EXPECT_TRUE(fs::exists(log));
    EXPECT_EQ(t.kind(), "daemon");
    EXPECT_TRUE(t.capabilities().responder);
    EXPECT_TRUE(t.capabilities().control);
    EXPECT_EQ(t.service_port(), 7471);
    EXPECT_EQ(t.tester().ip, (Ipv4Address{192, 0, 2, 1}));
    EXPECT_EQ(t.device().ip, (Ipv4Address{192, 0, 2, 2}));
    EXPECT_EQ(t.tester().mac, t.lab().tester().mac);
    EXPECT_EQ(t.device().mac, t.lab().target().mac);
    EXPECT_NE(t.describe().find("quirks msn-stuck,dup-reexecute"), std::string::npos)
        << t.describe();

    // hello: protocol 1, the quirks asked for, the lab's addresses.
    const auto hello = t.control({{"op", "hello"}});
    ASSERT_TRUE(hello) << hello.error();
    EXPECT_EQ((*hello)["ok"], true);
    EXPECT_EQ((*hello)["protocol"], 1);
    const auto quirks = (*hello)["quirks"].get<std::set<std::string>>();
    EXPECT_EQ(quirks, (std::set<std::string>{"msn-stuck", "dup-reexecute"}));
    EXPECT_EQ((*hello)["port"]["mac"], format_mac(t.device().mac));
    EXPECT_EQ((*hello)["port"]["ipv4"], "192.0.2.2");
    EXPECT_EQ(t.hello()["protocol"], 1);
    const auto pd = t.control({{"op", "alloc_pd"}});
    ASSERT_TRUE(pd) << pd.error();
    EXPECT_EQ((*pd)["ok"], true) << *pd;

    // The wire: rdma_cm REQ to the responder, REP with the RCNF block back on the tester port.
    std::array<std::uint8_t, kReqPrivateDataSize> private_data{};
    ASSERT_TRUE(t.port().send(req_frame(t.tester(), t.device(), t.service_port(), private_data)));
    const auto rep = await_rep(t.port());
    ASSERT_TRUE(rep) << rep.error();
    EXPECT_GT(rep->region_length, 0u);

    // Whatever else was in flight (nothing, or an RTU timeout's retransmission) goes.
    ASSERT_TRUE(t.reset());
    EXPECT_TRUE(has_prefix(netns_list(), prefix));
  }
  EXPECT_TRUE(process_gone(pid)) << "daemon " << pid << " still exists";
  EXPECT_FALSE(has_prefix(netns_list(), prefix)) << "left behind: " << run("ip netns list");
  EXPECT_FALSE(fs::exists(fs::path(log).parent_path())) << "temporary directory left behind";
}

TEST(DaemonTarget, StartupFailureSaysWhyAndLeavesNothingBehind) {
  SKIP_UNLESS_ROOT();
  DaemonTargetOptions options;
  options.roceconf_binary = ROCECONF_BINARY;
  options.quirks = {"no-such-quirk"};
  options.lab_prefix = fmt::format("rcq{}", getpid());
  const auto started = DaemonTarget::start(options);
  ASSERT_FALSE(started);
  EXPECT_NE(started.error().find("the reference daemon exited (exit status 2): roceconf: error: "
                                 "--quirk: unknown quirk 'no-such-quirk'"),
            std::string::npos)
      << started.error();
  EXPECT_FALSE(has_prefix(netns_list(), options.lab_prefix));

  options.quirks.clear();
  options.roceconf_binary = "/nonexistent/roceconf";
  const auto missing = DaemonTarget::start(options);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("missing or not executable"), std::string::npos);
}

// A zombie has exited too: whoever inherited it may not reap it at once.
bool process_gone_or_zombie(pid_t pid) {
  if (process_gone(pid)) return true;
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  return paren != std::string::npos && text.size() > paren + 2 && text[paren + 2] == 'Z';
}

// A run that dies without its destructors: the daemon follows it, and the next lab with the
// same prefix removes the namespaces left behind.
TEST(DaemonTarget, CrashedRunLeavesNoDaemonAndItsLeftoversGoNextTime) {
  SKIP_UNLESS_ROOT();
  const std::string prefix = fmt::format("rcx{}", getpid());
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    DaemonTargetOptions options;
    options.roceconf_binary = ROCECONF_BINARY;
    options.lab_prefix = prefix;
    auto started = DaemonTarget::start(options);
    struct {
      pid_t pid = -1;
      char dir[256] = {};
    } report;
    if (started) {
      report.pid = (*started)->pid();
      const std::string dir = fs::path((*started)->log_path()).parent_path().string();
      std::snprintf(report.dir, sizeof report.dir, "%s", dir.c_str());
    }
    [[maybe_unused]] const ssize_t n = write(fds[1], &report, sizeof report);
    _exit(0);  // no destructors: as if killed
  }
  close(fds[1]);
  struct {
    pid_t pid = -1;
    char dir[256] = {};
  } report;
  ASSERT_EQ(read(fds[0], &report, sizeof report), static_cast<ssize_t>(sizeof report));
  close(fds[0]);
  const pid_t daemon = report.pid;
  if (report.dir[0] != 0) fs::remove_all(report.dir);  // the crash left it too
  waitpid(child, nullptr, 0);
  ASSERT_GT(daemon, 0) << "the daemon did not start in the child";
  const auto give_up = std::chrono::steady_clock::now() + 3s;
  while (!process_gone_or_zombie(daemon) && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(process_gone_or_zombie(daemon)) << "daemon " << daemon << " outlived its parent";
  EXPECT_TRUE(has_prefix(netns_list(), prefix)) << "the crash left the namespaces";
  {
    VethLabOptions options;
    options.prefix = prefix;
    auto lab = VethLab::create(options);
    ASSERT_TRUE(lab) << lab.error();
  }
  EXPECT_FALSE(has_prefix(netns_list(), prefix)) << "left behind: " << run("ip netns list");
}

TEST(DaemonTarget, ControlFailsWithTheReasonWhenTheDaemonDies) {
  SKIP_UNLESS_ROOT();
  DaemonTargetOptions options;
  options.roceconf_binary = ROCECONF_BINARY;
  auto started = DaemonTarget::start(options);
  ASSERT_TRUE(started) << started.error();
  kill((*started)->pid(), SIGKILL);
  const auto r = (*started)->control({{"op", "hello"}});
  ASSERT_FALSE(r);
  EXPECT_NE(
      r.error().find("closed by the target; the reference daemon exited (killed by signal 9)"),
      std::string::npos)
      << r.error();
  const auto reset = (*started)->reset();
  ASSERT_FALSE(reset);
  EXPECT_NE(reset.error().find("killed by signal 9"), std::string::npos);
}

// The raw target on the tester's side of a lab, the daemon's end as its device.
Profile lab_profile(const VethLab& lab) {
  Profile p;
  p.source = "lab";
  p.interface = lab.tester().interface;
  p.netns = lab.tester().netns;
  p.target_mac = lab.target().mac;
  p.target_ip = lab.target().ip;
  p.tester_ip = lab.tester().ip;
  return p;
}

TEST(RawTarget, SendsOnlyToTheTargetAndReachesTheDaemon) {
  SKIP_UNLESS_ROOT();
  DaemonTargetOptions options;
  options.roceconf_binary = ROCECONF_BINARY;
  auto daemon = DaemonTarget::start(options);
  ASSERT_TRUE(daemon) << daemon.error();
  auto opened = RawTarget::open(lab_profile((*daemon)->lab()));
  ASSERT_TRUE(opened) << opened.error();
  RawTarget& raw = **opened;
  EXPECT_EQ(raw.kind(), "raw");
  EXPECT_TRUE(raw.capabilities().responder);
  EXPECT_FALSE(raw.capabilities().control);
  EXPECT_EQ(raw.tester().mac, (*daemon)->lab().tester().mac) << "the interface's by default";
  EXPECT_EQ(raw.interface_mtu(), 9000);
  EXPECT_EQ(raw.control({{"op", "hello"}}).error(),
            "the raw target has no control API (needs the DUT agent)");
  EXPECT_NE(raw.describe().find("raw target"), std::string::npos);

  // A listener on the target's side sees what really leaves the tester.
  RawSocketOptions listen;
  listen.interface = (*daemon)->lab().target().interface;
  listen.netns = (*daemon)->lab().target().netns;
  auto listener = RawSocketPort::open(listen);
  ASSERT_TRUE(listener) << listener.error().message;

  std::array<std::uint8_t, kReqPrivateDataSize> private_data{};
  const std::vector<std::uint8_t> good =
      req_frame(raw.tester(), raw.device(), raw.service_port(), private_data);
  auto refused = [&](std::vector<std::uint8_t> frame, const std::string& why) {
    const auto sent = raw.port().send(frame);
    ASSERT_FALSE(sent) << why;
    EXPECT_EQ(sent.error().code, PortErrorCode::kPermission);
    EXPECT_NE(sent.error().message.find(why), std::string::npos) << sent.error().message;
  };
  std::vector<std::uint8_t> other_mac = good;
  other_mac[5] ^= 0x01;
  refused(other_mac, "Ethernet destination");
  std::vector<std::uint8_t> broadcast = good;
  std::fill(broadcast.begin(), broadcast.begin() + 6, 0xFF);
  refused(broadcast, "Ethernet destination ff:ff:ff:ff:ff:ff is not the target's");
  std::vector<std::uint8_t> other_ip = good;
  other_ip[14 + 19] = 99;  // 192.0.2.99
  refused(other_ip, "IPv4 destination 192.0.2.99 is not the target's 192.0.2.2");
  std::vector<std::uint8_t> ipv6 = good;
  ipv6[12] = 0x86;
  ipv6[13] = 0xDD;
  refused(ipv6, "ethertype 0x86dd is not IPv4");
  refused({good.begin(), good.begin() + 20}, "cut short");
  refused({good.begin(), good.begin() + 6}, "no Ethernet frame");
  // Behind a VLAN tag the IPv4 destination is still checked.
  std::vector<std::uint8_t> tagged = other_ip;
  tagged.insert(tagged.begin() + 12, {0x81, 0x00, 0x00, 0x05});
  refused(tagged, "IPv4 destination 192.0.2.99");

  // None of them reached the wire: the first frame the listener sees is the good one.
  ASSERT_TRUE(raw.port().send(good));
  const auto first = (*listener)->receive_for(2'000'000'000);
  ASSERT_TRUE(first && *first);
  EXPECT_EQ((*first)->data, good);
  const auto rep = await_rep(raw.port());
  ASSERT_TRUE(rep) << rep.error();
  ASSERT_TRUE(raw.reset());
}

TEST(RawTarget, OpenRefusesAnInvalidProfileOrTooSmallAnMtu) {
  SKIP_UNLESS_ROOT();
  VethLabOptions options;
  options.mtu = 1500;
  auto lab = VethLab::create(options);
  ASSERT_TRUE(lab) << lab.error();
  Profile p = lab_profile(**lab);
  p.pmtu = 4096;
  const auto big = RawTarget::open(p);
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().find("pmtu 4096 needs an MTU of at least 4160"), std::string::npos)
      << big.error();
  p.pmtu = 1024;
  EXPECT_TRUE(RawTarget::open(p));
  p.target_mac = MacAddress{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  const auto broadcast = RawTarget::open(p);
  ASSERT_FALSE(broadcast);
  EXPECT_NE(broadcast.error().find("broadcast"), std::string::npos);
  p = lab_profile(**lab);
  p.interface = "rcnf-nosuch0";
  const auto missing = RawTarget::open(p);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("not found"), std::string::npos) << missing.error();
}

// A stand-in for roceconf-agent on loopback: the same gate (control_auth.h) in front of a hello
// that names a device, one connection at a time, as the raw target opens them.
class GatedAgent {
 public:
  explicit GatedAgent(std::string secret) : secret_(std::move(secret)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    listen(listen_fd_, 4);
    socklen_t len = sizeof addr;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    address_ = fmt::format("127.0.0.1:{}", ntohs(addr.sin_port));
    thread_ = std::thread([this] { serve(); });
  }
  ~GatedAgent() {
    shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    close(listen_fd_);
  }
  const std::string& address() const { return address_; }
  int passed() const { return passed_; }  // requests that got past the gate

 private:
  void serve() {
    for (int c; (c = accept(listen_fd_, nullptr, nullptr)) >= 0;) {
      control::ControlGate gate(secret_, "roceconf-agent");
      std::string buffer;
      char chunk[4096];
      bool open = true;
      for (ssize_t n; open && (n = recv(c, chunk, sizeof chunk, 0)) > 0;) {
        buffer.append(chunk, static_cast<std::size_t>(n));
        for (std::size_t nl; open && (nl = buffer.find('\n')) != std::string::npos;) {
          const std::string line = buffer.substr(0, nl);
          buffer.erase(0, nl + 1);
          std::string out;
          if (auto gated = gate.screen(line)) {
            out = gated->line;
            open = !gated->close;
          } else {
            ++passed_;
            const json r = json::parse(line);
            out = json{{"id", r["id"]},
                       {"ok", true},
                       {"protocol", 1},
                       {"target", "roceconf-agent on rxe0"},
                       {"device",
                        {{"name", "rxe0"},
                         {"vendor_id", 0xFFFFFF},
                         {"fw_ver", ""},
                         {"node_guid", "0x505400fffe770011"},
                         {"driver", "rdma_rxe"}}}}
                      .dump();
          }
          out += "\n";
          send(c, out.data(), out.size(), MSG_NOSIGNAL);
        }
      }
      close(c);
    }
  }

  std::string secret_;
  int listen_fd_ = -1;
  std::string address_;
  std::atomic<int> passed_{0};
  std::thread thread_;
};

TEST(RawTarget, AuthenticatesToTheAgentAndNamesItsDevice) {
  SKIP_UNLESS_ROOT();
  TempDir dir;
  const std::string secret = "the DUT's secret, 32 bytes long.";
  const std::string secret_file = dir.file("agent.secret");
  std::ofstream(secret_file) << secret << "\n";
  fs::permissions(secret_file, fs::perms::owner_read | fs::perms::owner_write);
  GatedAgent agent(secret);
  auto lab = VethLab::create({});
  ASSERT_TRUE(lab) << lab.error();
  Profile p = lab_profile(**lab);
  p.agent = agent.address();
  p.capabilities.control = true;
  unsetenv(control::kSecretEnv);

  const auto without = RawTarget::open(p);
  ASSERT_FALSE(without);
  EXPECT_NE(without.error().find("requires a secret and none is given: set agent_secret_file"),
            std::string::npos)
      << without.error();
  p.agent_secret_file = dir.file("other.secret");
  std::ofstream(p.agent_secret_file) << "another secret, long enough\n";
  fs::permissions(p.agent_secret_file, fs::perms::owner_read | fs::perms::owner_write);
  const auto wrong = RawTarget::open(p);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().find("refused the secret (EACCES: auth: wrong MAC"), std::string::npos)
      << wrong.error();
  EXPECT_EQ(agent.passed(), 0) << "no request got past the gate";

  p.agent_secret_file = secret_file;
  p.identity.fw_ver = "rxe (no firmware)";
  {  // the agent serves one connection at a time: this one ends with the block
    auto opened = RawTarget::open(p);
    ASSERT_TRUE(opened) << opened.error();
    RawTarget& raw = **opened;
    EXPECT_TRUE(raw.capabilities().control);
    EXPECT_NE(raw.describe().find("agent " + agent.address() + " (roceconf-agent on rxe0)"),
              std::string::npos)
        << raw.describe();
    using Pairs = std::vector<std::pair<std::string, std::string>>;
    EXPECT_EQ(raw.identity(), (Pairs{{"name", "rxe0"},
                                     {"vendor_id", "0xffffff"},
                                     {"fw_ver", "rxe (no firmware)"},
                                     {"node_guid", "5054:00ff:fe77:0011"},
                                     {"driver", "rdma_rxe"},
                                     {"source", "agent hello, profile"}}));
    ASSERT_TRUE(raw.reset()) << "a new session, authenticated again";
    EXPECT_TRUE(raw.control({{"op", "alloc_pd"}}));
  }
  // The same secret from the environment.
  p.agent_secret_file.clear();
  setenv(control::kSecretEnv, secret.c_str(), 1);
  EXPECT_TRUE(RawTarget::open(p));
  unsetenv(control::kSecretEnv);
  // A profile that names another device stops the run.
  p.agent_secret_file = secret_file;
  p.identity.node_guid = "0c42:a103:0002:0003";
  const auto other = RawTarget::open(p);
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().find("node_guid '0c42:a103:0002:0003' is not the device's"),
            std::string::npos)
      << other.error();
}

}  // namespace
}  // namespace roceconf::engine
