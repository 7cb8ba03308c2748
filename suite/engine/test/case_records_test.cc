// The records beside packets and control exchanges on a case's timeline: the counters that
// changed across the case, and the device host's kernel log lines of the case's window, shifted
// from the host's clock onto the tester's. Against the in-process reference target, and a
// wrapper of it that answers kernel_log as an agent on a host whose clock runs 5 s ahead.
#include <gtest/gtest.h>

#include <algorithm>

#include "cases/builtin.h"
#include "suite/engine/case_records.h"
#include "suite/engine/reference_target.h"
#include "suite/engine/runner.h"

namespace roceconf::engine {
namespace {

constexpr std::int64_t kHostAhead = 5'000'000'000;

// The reference target with its control API wrapped: `kernel_log` as a host 5 s ahead of the
// tester, whose kernel logs a line at each counters read (that is, at each case's start and
// end); `counters` refused when `refuse_counters`.
class WrappedTarget final : public Target {
 public:
  explicit WrappedTarget(std::unique_ptr<ReferenceTarget> inner) : inner_(std::move(inner)) {}

  std::string_view kind() const override { return inner_->kind(); }
  std::string describe() const override { return inner_->describe(); }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  roceconf::Port& port() override { return inner_->port(); }
  Endpoint tester() const override { return inner_->tester(); }
  Endpoint device() const override { return inner_->device(); }
  std::uint16_t service_port() const override { return inner_->service_port(); }
  std::expected<void, std::string> reset() override { return inner_->reset(); }

  std::expected<nlohmann::json, std::string> control(const nlohmann::json& request) override {
    const std::string op = request.value("op", "");
    const std::int64_t host_now =
        inner_->port().clock().unix_ns(inner_->port().clock().now_ns()) + kHostAhead;
    if (lines_.empty()) lines_.push_back({host_now - 3600 * kHostAhead, "an old line"});
    if (op == "counters") {
      lines_.push_back({host_now, "rxe0: counters read " + std::to_string(lines_.size())});
      if (refuse_counters)
        return nlohmann::json{{"ok", false}, {"errno", "EIO"}, {"error", "EIO: sysfs gone"}};
    }
    if (op != "kernel_log") return inner_->control(request);
    ++kernel_log_calls;
    nlohmann::json lines = nlohmann::json::array();
    const std::int64_t since = request.value("since_unix_ns", std::int64_t{0});
    const std::int64_t until = request.value("until_unix_ns", INT64_MAX);
    if (request.value("max_lines", 200) > 0)
      for (const auto& [t, text] : lines_)
        if (t >= since && t <= until)
          lines.push_back({{"unix_ns", t}, {"text", text}, {"priority", 4}});
    return nlohmann::json{{"ok", true},
                          {"lines", lines},
                          {"dropped", 0},
                          {"now_unix_ns", host_now},
                          {"source", "/dev/kmsg"},
                          {"stamp_clock", "sched_debug"}};
  }

  bool refuse_counters = false;
  int kernel_log_calls = 0;

 private:
  std::unique_ptr<ReferenceTarget> inner_;
  std::vector<std::pair<std::int64_t, std::string>> lines_;
};

std::unique_ptr<WrappedTarget> wrapped() {
  auto inner = ReferenceTarget::create(ReferenceOptions{});
  EXPECT_TRUE(inner) << inner.error();
  return std::make_unique<WrappedTarget>(std::move(*inner));
}

std::vector<const report::Event*> of_kind(const report::CaseResult& c, report::EventKind kind) {
  std::vector<const report::Event*> out;
  for (const auto& e : c.events)
    if (e.kind == kind) out.push_back(&e);
  return out;
}

TEST(CaseRecords, CountersThatChangedAreOnTheTimelineAndVerdictsStay) {
  auto target = ReferenceTarget::create(ReferenceOptions{});
  ASSERT_TRUE(target) << target.error();
  const auto cases = cases::builtin_catalogue().select("psn/*");
  ASSERT_FALSE(cases.empty());
  report::RunResult run;
  run_cases(**target, cases, RunOptions{}, run);
  ASSERT_EQ(run.cases.size(), cases.size());
  int with_counters = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = run.cases[i];
    // The same case without the records: the same verdict.
    auto alone = ReferenceTarget::create(ReferenceOptions{});
    ASSERT_TRUE(alone);
    EXPECT_EQ(run_case(**alone, *cases[i], Timing{}, 1).verdict, c.verdict) << c.id;
    const auto counters = of_kind(c, report::EventKind::kCounter);
    if (c.verdict == report::Verdict::kPass && !counters.empty()) ++with_counters;
    for (const auto* e : counters) {
      EXPECT_NE(e->text.find(" → "), std::string::npos) << e->text;
      EXPECT_GE(e->unix_ns, c.start_unix_ns);
    }
    EXPECT_TRUE(of_kind(c, report::EventKind::kKernelLog).empty())
        << "the reference NIC keeps no kernel log: no line is made up";
  }
  EXPECT_EQ(with_counters,
            std::ranges::count_if(
                run.cases, [](const auto& c) { return c.verdict == report::Verdict::kPass; }))
      << "every passing psn case moves packets, so its counters change";
  const auto& first = run.cases.front();
  EXPECT_TRUE(std::ranges::any_of(of_kind(first, report::EventKind::kCounter), [](const auto* e) {
    return e->text.starts_with("rx_packets +");
  }));
  EXPECT_EQ(run.host_clock.source, "none");
  EXPECT_TRUE(std::ranges::none_of(run.notes, [](const std::string& n) {
    return n.find("host clock") != std::string::npos;
  })) << "no second clock to speak of";
}

TEST(CaseRecords, KernelLinesAreShiftedOntoTheTestersClock) {
  auto target = wrapped();
  const auto cases = cases::builtin_catalogue().select("psn/*");
  report::RunResult run;
  run_cases(*target, {cases.begin(), cases.begin() + 2}, RunOptions{}, run);
  ASSERT_EQ(run.cases.size(), 2u);
  // The probes, then one fetch per case.
  EXPECT_EQ(target->kernel_log_calls, 3 + 2);
  EXPECT_EQ(run.host_clock.offset_ns, kHostAhead);
  EXPECT_EQ(run.host_clock.uncertainty_ns, 0) << "virtual time stands still in an exchange";
  EXPECT_EQ(run.host_clock.source, "/dev/kmsg");
  for (const auto& c : run.cases) {
    const auto lines = of_kind(c, report::EventKind::kKernelLog);
    // The lines logged at this case's two counters reads (on virtual time a case may take no
    // time: the previous case's end is then within this one's window too), never an old one.
    ASSERT_GE(lines.size(), 2u) << c.id;
    if (&c == &run.cases.front()) {
      EXPECT_EQ(lines.size(), 2u);
    }
    for (const auto* e : lines) {
      EXPECT_NE(e->text, "an old line");
      EXPECT_EQ(e->host_unix_ns - e->unix_ns, kHostAhead);
      EXPECT_GE(e->unix_ns, c.start_unix_ns);
      EXPECT_LE(e->unix_ns, c.start_unix_ns + c.duration_ns);
      EXPECT_EQ(e->analysis, std::vector<std::string>{"warn"});
    }
    EXPECT_FALSE(of_kind(c, report::EventKind::kCounter).empty());
  }
  const auto note = std::ranges::find_if(run.notes, [](const std::string& n) {
    return n.find("device host clock = tester clock +5000.000 ms ± 0.000 ms") !=
               std::string::npos &&
           n.find("(/dev/kmsg, stamps placed by sched_debug)") != std::string::npos;
  });
  EXPECT_NE(note, run.notes.end()) << ::testing::PrintToString(run.notes);
}

TEST(CaseRecords, AFailingCountersReadIsANoteNeverAnError) {
  auto target = wrapped();
  target->refuse_counters = true;
  const auto cases = cases::builtin_catalogue().select("psn/*");
  report::RunResult run;
  run_cases(*target, {cases.begin(), cases.begin() + 1}, RunOptions{}, run);
  ASSERT_EQ(run.cases.size(), 1u);
  const auto& c = run.cases[0];
  EXPECT_EQ(c.verdict, report::Verdict::kPass) << c.reason;
  const auto notes = of_kind(c, report::EventKind::kNote);
  EXPECT_TRUE(std::ranges::any_of(notes, [](const auto* e) {
    return e->text == "counters not read as the case started: EIO: sysfs gone";
  }));
  EXPECT_TRUE(of_kind(c, report::EventKind::kCounter).empty());
}

TEST(CaseRecords, TheNarrowestExchangeGivesTheOffset) {
  report::HostClock c;
  c = CaseRecords::narrowest(c, 1000, 3000, 12'000);  // midpoint 2000: +10000 ± 1000
  EXPECT_EQ(c.offset_ns, 10'000);
  EXPECT_EQ(c.uncertainty_ns, 1000);
  c = CaseRecords::narrowest(c, 5000, 5200, 15'150);  // +10050 ± 100: narrower, taken
  EXPECT_EQ(c.offset_ns, 10'050);
  EXPECT_EQ(c.uncertainty_ns, 100);
  c = CaseRecords::narrowest(c, 9000, 19000, 40'000);  // wide: kept out
  EXPECT_EQ(c.offset_ns, 10'050);
  EXPECT_EQ(c.exchanges, 3);
}

}  // namespace
}  // namespace roceconf::engine
