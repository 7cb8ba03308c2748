// As root: the daemon target starts every case on a fresh NIC (the control API's `reset`), so
// its verdicts equal the in-process target's, also with a quirk whose damage would otherwise
// outlive the case that caused it (qpn-reuse: a connection left behind takes the QPN of later
// ones).
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <string>

#include "cases/builtin.h"
#include "suite/engine/daemon_target.h"
#include "suite/engine/reference_target.h"
#include "suite/engine/runner.h"

namespace roceconf::engine {
namespace {

std::map<std::string, report::Verdict> verdicts(const report::RunResult& r) {
  std::map<std::string, report::Verdict> out;
  for (const auto& c : r.cases) out[c.id] = c.verdict;
  return out;
}

TEST(DaemonReset, QpnReuseVerdictsEqualTheInProcessRun) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces and raw sockets)";
  ReferenceOptions ro;
  ro.quirks = {"qpn-reuse"};
  auto reference = ReferenceTarget::create(ro);
  ASSERT_TRUE(reference) << reference.error();
  report::RunResult in_process;
  run_cases(**reference, cases::builtin_catalogue().select(""), RunOptions{}, in_process);

  DaemonTargetOptions o;
  o.quirks = {"qpn-reuse"};
  o.roceconf_binary = ROCECONF_BINARY;
  auto daemon = DaemonTarget::start(o);
  ASSERT_TRUE(daemon) << daemon.error();
  report::RunResult over_veth;
  run_cases(**daemon, cases::builtin_catalogue().select(""), RunOptions{}, over_veth);

  const auto want = verdicts(in_process);
  const auto got = verdicts(over_veth);
  ASSERT_EQ(got.size(), want.size());
  for (const auto& c : over_veth.cases) {
    // The daemon runs no congestion management (microsecond pacing needs the in-process
    // target's virtual clock): its cc cases SKIP "not supported" where the in-process ones pass.
    if (c.area == "cc") {
      EXPECT_EQ(c.verdict, report::Verdict::kSkip) << c.id << ": " << c.reason;
      continue;
    }
    EXPECT_EQ(report::verdict_name(c.verdict), report::verdict_name(want.at(c.id)))
        << c.id << ": " << c.reason;
  }
}

TEST(DaemonReset, ResetFreesWhatACaseLeft) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces and raw sockets)";
  DaemonTargetOptions o;
  o.roceconf_binary = ROCECONF_BINARY;
  auto daemon = DaemonTarget::start(o);
  ASSERT_TRUE(daemon) << daemon.error();
  auto pd = (*daemon)->control({{"op", "alloc_pd"}});
  ASSERT_TRUE(pd && pd->value("ok", false));
  const auto handle = pd->at("pd");
  ASSERT_TRUE((*daemon)->reset());
  // The PD is gone with the NIC that held it; the new NIC hands out the same first handle.
  auto gone = (*daemon)->control({{"op", "dealloc_pd"}, {"pd", handle}});
  ASSERT_TRUE(gone);
  EXPECT_FALSE(gone->value("ok", true)) << gone->dump();
  auto again = (*daemon)->control({{"op", "alloc_pd"}});
  ASSERT_TRUE(again && again->value("ok", false));
  EXPECT_EQ(again->at("pd"), handle);
}

}  // namespace
}  // namespace roceconf::engine
