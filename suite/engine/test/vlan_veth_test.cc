// As root: VLAN-tagged RoCE on a veth pair, and the start-up sweep of dead runs' labs. In the
// tagged lab the daemon sits behind an 802.1Q access port (veth_lab.h: it takes the tag off what
// arrives and puts it on what leaves, at the lab's priority); the tester stays on the untagged
// wire and tags its own frames, its raw socket putting the received tags back. The
// catalogue over the tagged pair must give the untagged run's verdicts, and its evidence capture
// must show the tag on every frame.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "capture/pcap_reader.h"
#include "cases/builtin.h"
#include "dissector/packet.h"
#include "dissector/summary.h"
#include "suite/engine/daemon_target.h"
#include "suite/engine/evidence.h"
#include "suite/engine/raw_target.h"
#include "suite/engine/runner.h"
#include "suite/engine/test/shell.h"
#include "suite/engine/veth_lab.h"

namespace roceconf::engine {
namespace {

namespace fs = std::filesystem;

constexpr std::uint16_t kVlan = 100;
constexpr std::uint8_t kPcp = 3;
constexpr char kVlanCase[] = "header/vlan-priority-kept";

using test::netns_list;
using test::run;

class VlanVeth : public testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces and raw sockets)";
    if (run("command -v ip").empty()) GTEST_SKIP() << "needs iproute2's `ip` command";
  }
};

std::unique_ptr<DaemonTarget> daemon(std::optional<std::uint16_t> vlan, std::uint8_t pcp = kPcp) {
  DaemonTargetOptions o;
  o.roceconf_binary = ROCECONF_BINARY;
  o.lab_vlan = vlan;
  o.lab_pcp = pcp;
  auto d = DaemonTarget::start(o);
  EXPECT_TRUE(d) << d.error();
  return d ? std::move(*d) : nullptr;
}

report::RunResult run_all(Target& target, const std::string& select = "") {
  report::RunResult result;
  run_cases(target, cases::builtin_catalogue().select(select), RunOptions{}, result);
  return result;
}

std::string counts(const report::RunResult& r) {
  const auto c = r.counts();
  return fmt::format("{} pass, {} fail, {} skip, {} error, {} inconclusive", c.pass, c.fail, c.skip,
                     c.error, c.inconclusive);
}

// The daemon target on a tagged lab marks the tester's frames with the lab's VLAN: the whole
// catalogue, control cases included.
TEST_F(VlanVeth, TaggedCatalogueGivesTheUntaggedVerdictsAndTheCaptureShowsTheTags) {
  report::RunResult untagged, tagged;
  {
    auto plain = daemon(std::nullopt);
    ASSERT_TRUE(plain);
    untagged = run_all(*plain);
  }
  {
    auto d = daemon(kVlan);
    ASSERT_TRUE(d);
    EXPECT_NE(d->lab().describe().find("side b on VLAN 100 priority 3"), std::string::npos);
    tagged = run_all(*d);
  }
  std::printf("untagged: %s\ntagged:   %s\n", counts(untagged).c_str(), counts(tagged).c_str());
  ASSERT_EQ(untagged.cases.size(), tagged.cases.size());
  for (std::size_t i = 0; i < tagged.cases.size(); ++i) {
    const auto& u = untagged.cases[i];
    const auto& t = tagged.cases[i];
    SCOPED_TRACE(t.id);
    ASSERT_EQ(u.id, t.id);
    if (t.id == kVlanCase) {
      EXPECT_EQ(u.verdict, report::Verdict::kSkip) << u.reason;
      EXPECT_EQ(t.verdict, report::Verdict::kPass) << t.reason << " [" << t.failed_step << "]";
      continue;
    }
    EXPECT_EQ(t.verdict, u.verdict) << "tagged: " << t.reason << " [" << t.failed_step << "]"
                                    << " untagged: " << u.reason;
  }

  // The evidence: every frame, sent or received, carries VLAN 100 at priority 3.
  const fs::path dir = fs::temp_directory_path() / fmt::format("rcnf-vlan-{}", getpid());
  fs::create_directories(dir);
  const std::string path = (dir / "tagged.pcapng").string();
  ASSERT_TRUE(write_evidence_pcapng(tagged, path));
  auto reader = PcapReader::open(path);
  ASSERT_TRUE(reader) << reader.error();
  std::size_t frames = 0, wrong = 0;
  while (auto frame = reader->next()) {
    if (!*frame) break;
    const Packet p = decode((*frame)->data);
    ++frames;
    // Not every frame is RoCE to the decoder: header/wrong-udp-port-ignored sends to UDP 4792,
    // header/ip-version-dropped and ip-fragment-dropped IPv4 headers the decoder stops at.
    const bool broken_ip = p.has(FindingCode::kIpVersion) || p.has(FindingCode::kIpFragment);
    if (p.vlans.size() != 1 || p.vlans[0].vid != kVlan || p.vlans[0].pcp != kPcp ||
        (!p.udp && !broken_ip)) {
      ++wrong;
      ADD_FAILURE() << "frame " << frames << ": " << summarize(p);
    }
  }
  EXPECT_GT(frames, 1000u);
  EXPECT_EQ(wrong, 0u) << "of " << frames;
  if (run("command -v tshark").empty()) {
    std::printf("tshark not installed: `tshark -Y vlan` count not checked\n");
  } else {
    const std::string all = run("tshark -r '" + path + "' 2>/dev/null | wc -l");
    const std::string vlan = run("tshark -r '" + path + "' -Y vlan 2>/dev/null | wc -l");
    EXPECT_EQ(std::stoul(all), frames);
    EXPECT_EQ(std::stoul(vlan), frames) << "tshark -Y vlan";
    std::printf("evidence: %zu frames, tshark -Y vlan: %s", frames, vlan.c_str());
  }
  fs::remove_all(dir);
}

// The profile path: a raw target with `vlan` and `pcp` on the parent of the tagged lab.
TEST_F(VlanVeth, RawProfileWithVlanPassesTheWireCasesAndCatchesAWrongPriority) {
  auto d = daemon(kVlan);
  ASSERT_TRUE(d);
  Profile p;
  p.interface = d->lab().tester().interface;
  p.netns = d->lab().tester().netns;
  p.target_mac = d->lab().target().mac;
  p.target_ip = d->lab().target().ip;
  p.tester_ip = d->lab().tester().ip;
  p.pmtu = 4096;
  p.vlan = kVlan;
  p.pcp = kPcp;
  p.dscp = 26;
  {
    auto raw = RawTarget::open(p);
    ASSERT_TRUE(raw) << raw.error();
    EXPECT_NE((*raw)->describe().find("VLAN 100 priority 3 DSCP 26"), std::string::npos);
    const auto r = run_all(**raw, "header");
    std::printf("raw, vlan 100 pcp 3, header cases: %s\n", counts(r).c_str());
    for (const auto& c : r.cases)
      EXPECT_EQ(c.verdict, report::Verdict::kPass) << c.id << ": " << c.reason;
  }
  // The lab answers at priority 3; a profile that expects 5 sees the difference.
  p.pcp = 5;
  auto raw = RawTarget::open(p);
  ASSERT_TRUE(raw) << raw.error();
  const auto r = run_all(**raw, kVlanCase);
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].verdict, report::Verdict::kFail) << r.cases[0].reason;
}

pid_t dead_pid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

TEST_F(VlanVeth, SweepRemovesOnlyTheLabsOfDeadRuns) {
  const pid_t dead = dead_pid();
  const pid_t in_use_owner = dead_pid();
  ASSERT_NE(kill(dead, 0), 0);
  const std::string stale = fmt::format("rcnf{}-a", dead);
  const std::string stale_second = fmt::format("rcnf{}c-b", dead);
  const std::string live = fmt::format("rcnf{}zz-a", getpid());
  const std::string in_use = fmt::format("rcnf{}-b", in_use_owner);
  const std::string foreign = fmt::format("rcsw{}-a", dead);  // not a name the lab makes
  for (const auto& name : {stale, stale_second, live, in_use, foreign}) run("ip netns add " + name);
  // A process inside: a daemon that outlived its run, or a PID of another PID namespace.
  FILE* inside = popen(("exec ip netns exec " + in_use + " sleep 30").c_str(), "r");
  for (int i = 0; i < 200 && run("ip netns pids " + in_use).empty(); ++i) usleep(10'000);

  auto swept = sweep_stale_labs();
  ASSERT_TRUE(swept) << swept.error();
  const std::set<std::string> deleted(swept->begin(), swept->end());
  // A daemon lab of a test running beside this one sweeps too and may have taken the stale
  // ones first; this sweep must never delete the others.
  for (const auto& kept : {live, in_use, foreign}) EXPECT_FALSE(deleted.contains(kept)) << kept;
  auto names = netns_list();
  EXPECT_FALSE(names.contains(stale));
  EXPECT_FALSE(names.contains(stale_second));
  EXPECT_TRUE(names.contains(live)) << "its run is alive";
  EXPECT_TRUE(names.contains(in_use)) << "a process is inside";
  EXPECT_TRUE(names.contains(foreign)) << "not a lab's name";

  run("ip netns pids " + in_use + " | xargs -r kill");
  if (inside) pclose(inside);
  // A new lab sweeps before it starts.
  run("ip netns add " + stale);
  {
    auto lab = VethLab::create({});
    ASSERT_TRUE(lab) << lab.error();
    names = netns_list();
    EXPECT_FALSE(names.contains(stale));
    EXPECT_FALSE(names.contains(in_use)) << "nobody inside any more";
  }
  for (const auto& name : {live, foreign, in_use}) run("ip netns delete " + name + " 2>/dev/null");
  names = netns_list();
  for (const auto& name : {stale, stale_second, live, in_use, foreign})
    EXPECT_FALSE(names.contains(name)) << name << " left behind";
}

}  // namespace
}  // namespace roceconf::engine
