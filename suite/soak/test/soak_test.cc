// The soak against the in-process reference target: clean, it finds nothing; with a data-path
// defect, it ends in a short case script that fails alone.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "suite/engine/reference_target.h"
#include "suite/engine/runner.h"
#include "suite/engine/script.h"
#include "suite/soak/render.h"
#include "suite/soak/soak.h"

namespace roceconf::soak {
namespace {

std::unique_ptr<engine::ReferenceTarget> reference(std::vector<std::string> quirks = {}) {
  engine::ReferenceOptions o;
  o.quirks = std::move(quirks);
  auto t = engine::ReferenceTarget::create(o);
  EXPECT_TRUE(t.has_value());
  return std::move(*t);
}

TEST(SoakRender, EverySubsequenceIsAValidScript) {
  Layout layout;
  layout.control = true;
  layout.pmtus = {256, 1024, 4096};
  std::mt19937_64 r(7);
  const auto ops = generate(layout, {}, 40, r);
  ASSERT_GT(ops.size(), 40u);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<Op> sub;
    for (const auto& op : ops)
      if (r() % 3 != 0) sub.push_back(op);
    const Rendered rendered = render(layout, sub, {"t", {}});
    auto script = engine::parse_script("cases/soak/t.rcase", rendered.text);
    ASSERT_TRUE(script.has_value()) << script.error();
    EXPECT_EQ(rendered.line_op.size(), static_cast<std::size_t>(std::count(
                                           rendered.text.begin(), rendered.text.end(), '\n')));
  }
}

TEST(SoakRender, FailingStepMapsToItsOperation) {
  Layout layout;
  layout.control = true;
  layout.pmtus = {1024};
  std::vector<Op> ops{{.batch = 0, .conn = 0, .kind = OpKind::kSend, .len = 100},
                      {.batch = 1, .conn = 0, .kind = OpKind::kRead, .len = 64}};
  const Rendered rendered = render(layout, ops, {"t", {}});
  // The READ's expectation is the last step but one? Find the line that expects a READ response.
  std::size_t line = 0, n = 0;
  for (std::size_t at = 0; at < rendered.text.size(); ++n) {
    const auto end = rendered.text.find('\n', at);
    if (rendered.text.compare(at, 25, "expect c0 READ_RESPONSE_O") == 0) line = n + 1;
    at = end + 1;
  }
  ASSERT_GT(line, 0u);
  EXPECT_EQ(op_of_step(rendered, "cases/soak/t.rcase:" + std::to_string(line) + " expect"), 1);
  EXPECT_EQ(op_of_step(rendered, "nonsense"), -1);
}

TEST(Soak, CleanReferenceFindsNothingAndSnapshotsAreJsonLines) {
  auto target = reference();
  SoakOptions o;
  o.ops = 3000;
  o.snapshot_every_s = 0;  // a snapshot at every operation boundary it can
  std::vector<std::string> lines;
  const SoakResult r = run_soak(*target, o, [&](const std::string& l) { lines.push_back(l); }, {});
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_FALSE(r.divergence.has_value()) << r.divergence->reason << "\n" << r.divergence->step;
  EXPECT_GE(r.ops, 3000u);
  EXPECT_GT(r.payload, 0u);
  ASSERT_GE(lines.size(), 3u);
  bool saw_counters = false, saw_state = false;
  for (const auto& l : lines) {
    const auto j = nlohmann::json::parse(l);  // throws on a line that is not JSON
    EXPECT_TRUE(j.contains("ops"));
    EXPECT_TRUE(j.contains("rss_kib"));
    saw_counters = saw_counters || j.contains("counters");
    if (j.contains("connections"))
      for (const auto& c : j["connections"])
        saw_state = saw_state || c.value("qp_state", "") == "RTS";
  }
  EXPECT_TRUE(saw_counters);
  EXPECT_TRUE(saw_state);
  EXPECT_TRUE(nlohmann::json::parse(lines.back()).value("final", false));
}

// The reference target seen as a device without the control API: only its responder, reached
// through rdma_cm, as a raw profile without an agent has it.
class ResponderOnly final : public engine::Target {
 public:
  explicit ResponderOnly(engine::Target& inner) : inner_(inner) {}
  std::string_view kind() const override { return "raw"; }
  std::string describe() const override { return "responder only: " + inner_.describe(); }
  engine::Capabilities capabilities() const override {
    auto caps = inner_.capabilities();
    caps.control = false;
    return caps;
  }
  roceconf::Port& port() override { return inner_.port(); }
  engine::Endpoint tester() const override { return inner_.tester(); }
  engine::Endpoint device() const override { return inner_.device(); }
  std::uint16_t service_port() const override { return inner_.service_port(); }
  std::expected<nlohmann::json, std::string> control(const nlohmann::json&) override {
    return std::unexpected("no control API");
  }
  std::expected<void, std::string> reset() override { return inner_.reset(); }

 private:
  engine::Target& inner_;
};

TEST(Soak, ResponderOnlyTargetsAreSoakedOverConnections) {
  auto inner = reference();
  ResponderOnly target(*inner);
  SoakOptions o;
  o.ops = 1500;
  const SoakResult r = run_soak(target, o, {}, {});
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_FALSE(r.divergence.has_value()) << r.divergence->reason << "\n" << r.divergence->step;
  EXPECT_GE(r.ops, 1500u);

  auto defective = reference({"dup-reexecute"});
  ResponderOnly target2(*defective);
  o.ops = 20000;
  const SoakResult d = run_soak(target2, o, {}, {});
  ASSERT_TRUE(d.divergence.has_value());
  EXPECT_TRUE(d.divergence->reproduces) << d.divergence->script;
  EXPECT_NE(d.divergence->script.find("connect c0"), std::string::npos) << d.divergence->script;
}

class SoakQuirk : public ::testing::TestWithParam<const char*> {};

TEST_P(SoakQuirk, EndsInAShortReproducerThatFailsAlone) {
  auto target = reference({GetParam()});
  SoakOptions o;
  o.ops = 20000;
  const SoakResult r = run_soak(*target, o, {}, {});
  EXPECT_TRUE(r.error.empty()) << r.error;
  ASSERT_TRUE(r.divergence.has_value()) << "no divergence in " << r.ops << " operations";
  const Divergence& d = *r.divergence;
  EXPECT_TRUE(d.reproduces) << d.script;
  EXPECT_LE(d.script_steps, 10u) << d.script;
  EXPECT_LE(d.ops_after, 3u) << d.script;
  EXPECT_LE(d.ops_after, d.ops_before);
  // The script as written runs the way `roceconf run --cases` loads it: FAIL with the defect,
  // PASS without it.
  const engine::CaseDef def = engine::load_script("cases/scripts/repro.rcase", d.script);
  const auto failing = engine::run_case(*target, def, {}, 1);
  EXPECT_EQ(failing.verdict, report::Verdict::kFail) << failing.reason;
  auto clean = reference();
  const auto passing = engine::run_case(*clean, def, {}, 1);
  EXPECT_EQ(passing.verdict, report::Verdict::kPass) << passing.reason << "\n" << d.script;
}

INSTANTIATE_TEST_SUITE_P(DataPathDefects, SoakQuirk,
                         ::testing::Values("dup-reexecute", "msn-stuck", "read-resp-split-wrong",
                                           "write-consumes-receive", "ack-psn-off-by-one",
                                           "psn-gap-ack"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace roceconf::soak
