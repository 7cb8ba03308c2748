// As root: `--target raw` (wire only) against the reference daemon on a veth pair passes every
// wire-only case, and catches every quirk that a wire-only case catches in process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include <fmt/format.h>

#include "cases/builtin.h"
#include "suite/engine/daemon_target.h"
#include "suite/engine/raw_target.h"
#include "suite/engine/reference_target.h"
#include "suite/engine/runner.h"
#include "suite/reference_nic/quirks.h"

namespace roceconf::engine {
namespace {

bool wire_only(const report::CaseResult& c) {
  for (const auto& n : c.needs)
    if (n != "responder" && n != "listener" && n != "ipv6") return false;
  return true;
}

// The daemon with `quirks`, graded through a raw target on the tester's side of its veth.
// The catalogue's cases of `area` (all of them for "") over the wire to a daemon with `quirks`.
report::RunResult raw_run(const std::vector<std::string>& quirks, const std::string& area = "") {
  DaemonTargetOptions o;
  o.quirks = quirks;
  o.roceconf_binary = ROCECONF_BINARY;
  auto daemon = DaemonTarget::start(o);
  EXPECT_TRUE(daemon) << daemon.error();
  if (!daemon) return {};
  Profile p;
  p.interface = (*daemon)->lab().tester().interface;
  p.netns = (*daemon)->lab().tester().netns;
  p.target_mac = (*daemon)->lab().target().mac;
  p.target_ip = (*daemon)->lab().target().ip;
  p.tester_ip = (*daemon)->lab().tester().ip;
  p.target_ip6 = (*daemon)->lab().target().ip6;
  p.tester_ip6 = (*daemon)->lab().tester().ip6;
  p.pmtu = 4096;
  auto raw = RawTarget::open(p);
  EXPECT_TRUE(raw) << raw.error();
  if (!raw) return {};
  report::RunResult result;
  run_cases(**raw, cases::builtin_catalogue().select(area), RunOptions{}, result);
  return result;
}

class RawVsDaemon : public testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces and raw sockets)";
  }
};

TEST_F(RawVsDaemon, EveryWireOnlyCasePassesAndControlCasesSkip) {
  const auto r = raw_run({});
  ASSERT_FALSE(r.cases.empty());
  int passed = 0;
  for (const auto& c : r.cases) {
    SCOPED_TRACE(c.id);
    if (std::find(c.needs.begin(), c.needs.end(), "vlan") != c.needs.end()) {
      EXPECT_EQ(c.verdict, report::Verdict::kSkip) << "untagged (vlan_veth_test.cc: tagged)";
      continue;
    }
    if (std::find(c.needs.begin(), c.needs.end(), "destructive") != c.needs.end()) {
      // A plain run against raw never sends the robust area's attacks.
      EXPECT_EQ(c.verdict, report::Verdict::kSkip) << c.reason;
      EXPECT_TRUE(c.reason.starts_with("destructive")) << c.reason;
      continue;
    }
    if (std::find(c.needs.begin(), c.needs.end(), "cc") != c.needs.end()) {
      // The profile declares no congestion management (nor does the daemon run it); a case that
      // also needs the control API may stop at that first.
      EXPECT_EQ(c.verdict, report::Verdict::kSkip) << c.reason;
      EXPECT_TRUE(c.reason.find("not supported") != std::string::npos ||
                  c.reason.find("control") != std::string::npos)
          << c.reason;
      continue;
    }
    if (wire_only(c)) {
      EXPECT_EQ(c.verdict, report::Verdict::kPass) << c.reason << " [" << c.failed_step << "]";
      ++passed;
    } else {
      EXPECT_EQ(c.verdict, report::Verdict::kSkip) << c.reason;
      EXPECT_NE(c.reason.find("control"), std::string::npos) << c.reason;
    }
  }
  EXPECT_GE(passed, 40);
}

TEST_F(RawVsDaemon, CatchesTheWireVisibleQuirks) {
  // Which wire-only cases of each quirk's area catch it in process?
  struct Quirk {
    std::string name, area, caught_by;  // caught_by: empty when no wire-only case catches it
    int failed = 0;
  };
  std::vector<Quirk> quirks;
  for (const auto& q : target::all_quirks()) {
    const std::string name(q.name);
    if (q.area == "fuzz") continue;  // no case catches those, by design (run_test.cc)
#ifdef ROCECONF_SANITIZED
    // Ten times slower under the sanitizers: one quirk per wire-visible area.
    if (name != "psn-gap-ack" && name != "rej-wrong-reason" && name != "icrc-unchecked" &&
        name != "mtu-unchecked" && name != "pkey-unchecked" && name != "nak-code-swap")
      continue;
#endif
    ReferenceOptions ro;
    ro.quirks = {name};
    auto reference = ReferenceTarget::create(ro);
    ASSERT_TRUE(reference);
    report::RunResult in_process;
    run_cases(**reference, cases::builtin_catalogue().select(std::string(q.area)), RunOptions{},
              in_process);
    Quirk entry{name, std::string(q.area), ""};
    for (const auto& c : in_process.cases)
      if (c.verdict == report::Verdict::kFail && wire_only(c)) {
        entry.caught_by = c.id;
        break;
      }
    quirks.push_back(std::move(entry));
  }
  // Over the wire only the quirk's area is graded. A run mostly waits on the daemon's real
  // timers, so several daemons, each on its own veth pair, run at once.
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next++; i < quirks.size(); i = next++) {
      Quirk& q = quirks[i];
      if (q.caught_by.empty()) continue;
      const auto r = raw_run({q.name}, q.area);
      for (const auto& c : r.cases)
        if (c.area == q.area && c.verdict == report::Verdict::kFail) ++q.failed;
    }
  };
  std::vector<std::thread> workers;
  for (int k = 0; k < 8; ++k) workers.emplace_back(worker);
  for (auto& w : workers) w.join();
  std::string table;
  for (const auto& q : quirks) {
    if (q.caught_by.empty()) {
      table += fmt::format("{}: needs the control API\n", q.name);
      continue;
    }
    EXPECT_GT(q.failed, 0) << q.name << " is not caught over the wire (in process: " << q.caught_by
                           << ")";
    table += fmt::format("{}: {} failing {} cases over the wire\n", q.name, q.failed, q.area);
  }
  std::printf("%s", table.c_str());
}

}  // namespace
}  // namespace roceconf::engine
