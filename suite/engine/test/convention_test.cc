// A target whose responder follows no RCNF convention (a stock `rping -s`, emulated by the
// reference's stock responder): every case that needs the convention SKIPs with the reason,
// none FAILs for want of it, the summary says so once, and cases that need only a listener are
// still graded.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "cases/builtin.h"
#include "suite/engine/reference_target.h"
#include "suite/engine/runner.h"

namespace roceconf::engine {
namespace {

bool needs(const report::CaseResult& c, std::string_view capability) {
  return std::ranges::find(c.needs, capability) != c.needs.end();
}

report::RunResult run_stock(const std::vector<std::string>& quirks = {}) {
  ReferenceOptions o;
  o.stock_responder = true;
  o.quirks = quirks;
  auto target = ReferenceTarget::create(o);
  EXPECT_TRUE(target) << target.error();
  report::RunResult result;
  if (target) run_cases(**target, cases::builtin_catalogue().select(""), RunOptions{}, result);
  return result;
}

TEST(Convention, StockResponderSkipsWhatNeedsItAndFailsNothing) {
  const auto r = run_stock();
  ASSERT_FALSE(r.cases.empty());
  int convention = 0, listener = 0;
  for (const auto& c : r.cases) {
    SCOPED_TRACE(c.id);
    EXPECT_TRUE(c.verdict == report::Verdict::kPass || c.verdict == report::Verdict::kSkip)
        << report::verdict_name(c.verdict) << ": " << c.reason << " [" << c.failed_step << "]";
    if (needs(c, "responder")) {
      ++convention;
      EXPECT_EQ(c.verdict, report::Verdict::kSkip);
      EXPECT_TRUE(c.reason.starts_with(kNoConventionSkip)) << c.reason;
    } else if (needs(c, "listener")) {
      ++listener;
      EXPECT_EQ(c.verdict, report::Verdict::kPass) << c.reason;
    }
  }
  EXPECT_GT(convention, 0);
  EXPECT_GT(listener, 0);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find(fmt::format("{} cases that need it were skipped", convention)),
            std::string::npos)
      << r.notes[0];
}

TEST(Convention, ListenerCasesStillCatchTheirQuirks) {
  // Defects that a listener-only case catches are caught against a stock responder too.
  for (const char* quirk : {"nak-code-swap", "rej-wrong-reason", "tid-mismatch"}) {
    SCOPED_TRACE(quirk);
    const auto r = run_stock({quirk});
    int failed = 0;
    for (const auto& c : r.cases)
      if (c.verdict == report::Verdict::kFail) {
        EXPECT_FALSE(needs(c, "responder")) << c.id;
        ++failed;
      }
    EXPECT_GT(failed, 0);
  }
}

// The reference target, but the suite is told its responder listens on another port: every
// REQ to "the responder" meets REJ Invalid Service ID, as when a stock listener is restarting.
class NobodyListens final : public Target {
 public:
  explicit NobodyListens(std::unique_ptr<ReferenceTarget> t) : t_(std::move(t)) {}
  std::string_view kind() const override { return t_->kind(); }
  std::string describe() const override { return t_->describe(); }
  Capabilities capabilities() const override { return t_->capabilities(); }
  roceconf::Port& port() override { return t_->port(); }
  Endpoint tester() const override { return t_->tester(); }
  Endpoint device() const override { return t_->device(); }
  std::uint16_t service_port() const override { return t_->service_port() + 1; }
  std::expected<nlohmann::json, std::string> control(const nlohmann::json& r) override {
    return t_->control(r);
  }
  std::expected<void, std::string> reset() override { return t_->reset(); }

 private:
  std::unique_ptr<ReferenceTarget> t_;
};

TEST(Convention, NoListenerIsInconclusiveNotAFailure) {
  auto reference = ReferenceTarget::create({});
  ASSERT_TRUE(reference);
  NobodyListens target(std::move(*reference));
  report::RunResult r;
  run_cases(target, cases::builtin_catalogue().select("cm/tid-echoed"), RunOptions{}, r);
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].verdict, report::Verdict::kInconclusive) << r.cases[0].reason;
  EXPECT_NE(r.cases[0].reason.find("Invalid Service ID"), std::string::npos) << r.cases[0].reason;
}

TEST(Convention, WithTheConventionNothingIsSaid) {
  auto target = ReferenceTarget::create({});
  ASSERT_TRUE(target);
  report::RunResult r;
  run_cases(**target, cases::builtin_catalogue().select("cm"), RunOptions{}, r);
  EXPECT_TRUE(r.notes.empty());
  EXPECT_TRUE((*target)->no_convention().empty());
}

}  // namespace
}  // namespace roceconf::engine
