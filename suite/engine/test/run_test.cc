// Whole runs against the in-process reference target: every case passes (or skips with a
// reason) with no defect switched on, run after run; each defect is caught by its own area.
#include <gtest/gtest.h>

#include <map>

#include <fmt/format.h>

#include "cases/builtin.h"
#include "suite/engine/reference_target.h"
#include "suite/engine/runner.h"
#include "suite/reference_nic/quirks.h"

namespace roceconf::engine {
namespace {

report::RunResult run_all(const std::vector<std::string>& quirks, std::uint64_t seed) {
  ReferenceOptions o;
  o.quirks = quirks;
  auto target = ReferenceTarget::create(o);
  EXPECT_TRUE(target) << target.error();
  report::RunResult result;
  RunOptions options;
  options.seed = seed;
  run_cases(**target, cases::builtin_catalogue().select(""), options, result);
  return result;
}

std::string failures(const report::RunResult& r) {
  std::string out;
  for (const auto& c : r.cases)
    if (c.verdict != report::Verdict::kPass && c.verdict != report::Verdict::kSkip)
      out += fmt::format("\n  {} {}: {} [{}]", report::verdict_name(c.verdict), c.id, c.reason,
                         c.failed_step);
  return out;
}

#ifdef ROCECONF_SANITIZED
constexpr int kCleanRuns = 4;  // the sanitizers make each run ten times slower
#else
constexpr int kCleanRuns = 20;
#endif

TEST(MutationMatrix, NoQuirkEveryCasePassesRunAfterRun) {
  for (int seed = 1; seed <= kCleanRuns; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    const auto r = run_all({}, static_cast<std::uint64_t>(seed));
    const auto counts = r.counts();
    EXPECT_EQ(counts.fail + counts.error + counts.inconclusive, 0) << failures(r);
    for (const auto& c : r.cases) {
      if (c.verdict == report::Verdict::kSkip) {
        EXPECT_FALSE(c.reason.empty()) << c.id;
      }
    }
  }
}

TEST(MutationMatrix, EachQuirkFailsACaseOfItsArea) {
  std::string table = "| quirk | area | failing cases |\n|---|---|---|\n";
  for (const auto& q : target::all_quirks()) {
    SCOPED_TRACE(std::string(q.name));
    const auto r = run_all({std::string(q.name)}, 1);
    std::vector<std::string> in_area, elsewhere;
    for (const auto& c : r.cases) {
      EXPECT_NE(c.verdict, report::Verdict::kError) << c.id << ": " << c.reason;
      if (c.verdict != report::Verdict::kFail) continue;
      (c.area == q.area ? in_area : elsewhere).push_back(c.id);
    }
    EXPECT_FALSE(in_area.empty()) << q.name << " is caught by no " << q.area << " case";
    std::string list;
    for (const auto& id : in_area) list += (list.empty() ? "" : ", ") + id;
    if (!elsewhere.empty()) list += fmt::format(" (+{} in other areas)", elsewhere.size());
    table += fmt::format("| `{}` | {} | {} |\n", q.name, q.area, list);
  }
  std::printf("%s", table.c_str());
}

}  // namespace
}  // namespace roceconf::engine
