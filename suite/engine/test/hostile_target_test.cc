// A hostile target never makes the engine hang or crash, and never earns a PASS: it stays
// silent, answers garbage, floods, or answers with the wrong QPN and PSN. Every case ends FAIL
// or INCONCLUSIVE (SKIP where it needs the control API), with evidence.
#include <gtest/gtest.h>

#include <deque>
#include <random>

#include "capture/port/clock.h"
#include "cases/builtin.h"
#include "dissector/analysis/psn.h"
#include "suite/engine/frame_builder.h"
#include "suite/engine/runner.h"

namespace roceconf::engine {
namespace {

enum class Mode { kSilent, kGarbage, kFlood, kWrong };

constexpr Endpoint kTester{{2, 0, 0, 0, 0, 2}, {192, 0, 2, 1}};
constexpr Endpoint kDevice{{2, 0, 0, 0, 0, 1}, {192, 0, 2, 2}};

// Answers on a virtual clock: each frame it produces costs 1 ms of time, so a flood is
// endless but windows still end.
class HostilePort final : public Port {
 public:
  explicit HostilePort(Mode mode)
      : mode_(mode), clock_(1'700'000'000'000'000'000, VirtualClock::Mode::kManual) {}

  std::expected<void, PortError> send(Bytes frame) override {
    if (mode_ != Mode::kWrong) return {};
    const Packet p = decode(frame);
    if (!p.bth) return {};
    Connection c;
    c.remote_qpn = p.bth->dqpn ^ 0x5A5A;  // not the QPN that asked
    Addresses a{kDevice, kTester, 4791, {}};
    std::vector<std::uint8_t> out;
    if (p.mad && p.mad->cm) {
      // A REP for every REQ, with a made-up QPN and comm ID; junk for anything else.
      if (const auto* req = std::get_if<CmReq>(&*p.mad->cm)) {
        CmRep rep;
        rep.local_comm_id = 0xBAD;
        rep.remote_comm_id = req->local_comm_id;
        rep.local_qpn = 0x777;
        rep.starting_psn = 5;
        auto f = build_mad(a, 0xFFFF, rep, p.mad->header.tid, {});
        if (f) out = std::move(f->bytes);
      }
    } else {
      auto f = build_request(a, c, opcode::kRcAck,
                             {{"bth.psn", std::to_string(psn::add(p.bth->psn, 7))},
                              {"dqpn", std::to_string(p.bth->dqpn ^ 1)}});
      if (f) out = std::move(f->bytes);
    }
    if (!out.empty()) queue_.push_back(std::move(out));
    return {};
  }

  std::expected<std::optional<ReceivedFrame>, PortError> receive(TimeNs deadline) override {
    if (!queue_.empty()) return frame(std::move(queue_.front()), true);
    if (mode_ == Mode::kGarbage || mode_ == Mode::kFlood) {
      if (clock_.now_ns() + 1'000'000 >= deadline) {
        clock_.advance_to(std::max(clock_.now_ns(), deadline));
        return std::optional<ReceivedFrame>{};
      }
      clock_.advance(1'000'000);
      std::vector<std::uint8_t> bytes;
      if (mode_ == Mode::kGarbage) {
        bytes.resize(14 + random_() % 200);
        for (auto& b : bytes) b = static_cast<std::uint8_t>(random_());
        if (random_() % 2) {  // half of it looks like RoCE up to the UDP port
          bytes.resize(std::max<std::size_t>(bytes.size(), 60));
          bytes[12] = 0x08, bytes[13] = 0x00, bytes[14] = 0x45, bytes[23] = 17;
          bytes[36] = 0x12, bytes[37] = 0xB7;
        }
      } else {
        Connection c;
        c.remote_qpn = static_cast<std::uint32_t>(random_()) & 0xFFFFFF;
        Addresses a{kDevice, kTester, 4791, {}};
        auto f = build_request(a, c, opcode::kRcAck,
                               {{"bth.psn", std::to_string(random_() & 0xFFFFFF)}});
        bytes = std::move(f->bytes);
      }
      return frame(std::move(bytes), false);
    }
    clock_.advance_to(std::max(clock_.now_ns(), deadline));
    return std::optional<ReceivedFrame>{};
  }

  std::string_view name() const override { return "hostile"; }
  Clock& clock() override { return clock_; }

 private:
  std::optional<ReceivedFrame> frame(std::vector<std::uint8_t> bytes, bool queued) {
    if (queued) queue_.pop_front();
    ReceivedFrame f;
    f.data = std::move(bytes);
    f.time_ns = clock_.now_ns();
    f.unix_ns = f.time_ns;
    return f;
  }

  Mode mode_;
  VirtualClock clock_;
  std::deque<std::vector<std::uint8_t>> queue_;
  std::mt19937_64 random_{7};
};

class HostileTarget final : public Target {
 public:
  explicit HostileTarget(Mode mode) : port_(mode) {}
  std::string_view kind() const override { return "hostile"; }
  std::string describe() const override { return "hostile test target"; }
  Capabilities capabilities() const override { return {.responder = true, .control = false}; }
  Port& port() override { return port_; }
  Endpoint tester() const override { return kTester; }
  Endpoint device() const override { return kDevice; }
  std::uint16_t service_port() const override { return 7471; }
  std::expected<nlohmann::json, std::string> control(const nlohmann::json&) override {
    return std::unexpected("no control API");
  }
  std::expected<void, std::string> reset() override { return {}; }

 private:
  HostilePort port_;
};

class Hostile : public testing::TestWithParam<Mode> {};

TEST_P(Hostile, NoPassNoHangNoCrash) {
  HostileTarget target(GetParam());
  report::RunResult result;
  run_cases(target, cases::builtin_catalogue().select(""), RunOptions{}, result);
  ASSERT_EQ(result.cases.size(), cases::builtin_catalogue().cases().size());
  for (const auto& c : result.cases) {
    SCOPED_TRACE(c.id);
    EXPECT_TRUE(c.verdict == report::Verdict::kFail || c.verdict == report::Verdict::kSkip ||
                c.verdict == report::Verdict::kInconclusive)
        << report::verdict_name(c.verdict) << ": " << c.reason;
    EXPECT_FALSE(c.reason.empty());
    if (c.verdict == report::Verdict::kFail) {
      EXPECT_FALSE(c.failed_step.empty());
      EXPECT_FALSE(c.events.empty());
      EXPECT_LE(c.events.size(), 5100u);  // a flood is not recorded without bound
    }
  }
}

std::string mode_name(const testing::TestParamInfo<Mode>& info) {
  constexpr const char* kNames[] = {"Silent", "Garbage", "Flood", "Wrong"};
  return kNames[static_cast<int>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(Modes, Hostile,
                         testing::Values(Mode::kSilent, Mode::kGarbage, Mode::kFlood, Mode::kWrong),
                         mode_name);

}  // namespace
}  // namespace roceconf::engine
