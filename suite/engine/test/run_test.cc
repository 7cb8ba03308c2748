// Whole runs against the in-process reference target: every case passes (or skips with a
// reason) with no defect switched on, run after run; each defect is caught by its own area.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
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

// Area "fuzz" names the defects no case may catch (quirks.cc): the next test proves that.
constexpr std::string_view kFuzzArea = "fuzz";

TEST(MutationMatrix, EachQuirkFailsACaseOfItsArea) {
  std::string table = "| quirk | area | failing cases |\n|---|---|---|\n";
  for (const auto& q : target::all_quirks()) {
    if (q.area == kFuzzArea) continue;
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

TEST(MutationMatrix, PlainCatalogueIsBlindToEachFuzzQuirk) {
  // Every case ends as it does on the clean reference, pass for pass and skip for skip: no
  // case sends the input a "fuzz" defect needs, so only the fuzzer can find it.
  const auto clean = run_all({}, 1);
  std::map<std::string, report::Verdict> expected;
  for (const auto& c : clean.cases) expected[c.id] = c.verdict;
  int fuzz_quirks = 0;
  for (const auto& q : target::all_quirks()) {
    if (q.area != kFuzzArea) continue;
    ++fuzz_quirks;
    SCOPED_TRACE(std::string(q.name));
    const auto start = std::chrono::steady_clock::now();
    const auto r = run_all({std::string(q.name)}, 1);
    ASSERT_EQ(r.cases.size(), clean.cases.size());
    int differ = 0;
    for (const auto& c : r.cases) {
      EXPECT_EQ(report::verdict_name(c.verdict), report::verdict_name(expected[c.id]))
          << c.id << ": " << c.reason << " [" << c.failed_step << "]";
      differ += c.verdict != expected[c.id];
    }
    std::printf("%s: %zu cases as on the clean reference, %d differ (%.1f s)\n",
                std::string(q.name).c_str(), r.cases.size() - differ, differ,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  EXPECT_GE(fuzz_quirks, 5);
}

}  // namespace
}  // namespace roceconf::engine
