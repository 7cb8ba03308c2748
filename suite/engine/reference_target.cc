#include "suite/engine/reference_target.h"

#include <chrono>

#include <fmt/format.h>

#include "capture/port/memory_port.h"
#include "suite/reference_nic/control_api.h"
#include "suite/reference_nic/nic_loop.h"

namespace roceconf::engine {

namespace {

// TEST-NET-1 and the IPv6 documentation prefix (RFC 3849), as the veth lab uses them.
const Endpoint kTester{{0x02, 0x00, 0x00, 0x00, 0x00, 0x02},
                       {192, 0, 2, 1},
                       Ipv6Address{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};
const Endpoint kDevice{{0x02, 0x00, 0x00, 0x00, 0x00, 0x01},
                       {192, 0, 2, 2},
                       Ipv6Address{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}};

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// The reference P_Key table: the default partition, and partition 0x1234 as a full (0x9234)
// and a limited (0x1234) member, so P_Key membership cases have both kinds to use.
// The reference NIC's congestion management: CNPs paced per QP, RC requests paced at a 10 Gb/s
// line rate (bursts of 8 packets) that each CNP halves (at most six times) and every quiet
// 100 µs doubles again.
constexpr target::CongestionConfig kReferenceCongestion{.enabled = true,
                                                        .line_rate_mbps = 10'000,
                                                        .cnp_interval_ns = 50'000,
                                                        .max_cuts = 6,
                                                        .recovery_period_ns = 100'000,
                                                        .burst_packets = 8};

target::NicConfig reference_nic_config(const target::Quirks& quirks, bool virtual_time) {
  target::NicConfig config;
  config.congestion = kReferenceCongestion;
  // On the real clock (engine benchmarks) microsecond pacing would only busy the loop.
  if (!virtual_time) config.congestion.line_rate_mbps = 0;
  config.device.port.mac = kDevice.mac;
  config.device.port.pkey_table =
      target::PkeyTable(target::PkeyTable::kDefaultSize, {target::kDefaultPkey, 0x9234, 0x1234});
  config.ipv4 = kDevice.ip;
  config.ipv6 = kDevice.ip6;
  config.quirks = quirks;
  return config;
}

// The tester's side of the in-memory pair. receive() runs the NIC in this thread until the
// NIC has answered or the deadline has passed, so the engine needs no second thread.
class PumpedPort final : public roceconf::Port {
 public:
  explicit PumpedPort(ReferenceTarget::State& state) : state_(state) {}
  std::expected<void, PortError> send(Bytes frame) override;
  std::expected<std::optional<ReceivedFrame>, PortError> receive(TimeNs deadline) override;
  std::string_view name() const override { return "reference"; }
  Clock& clock() override;

 private:
  ReferenceTarget::State& state_;
};

struct ReferenceTarget::State {
  std::shared_ptr<Clock> clock;
  MemoryPair pair;
  target::Quirks quirks;
  std::uint16_t service_port = 0;
  bool stock_responder = false;
  bool virtual_time = true;
  std::unique_ptr<target::NicLoop> loop;
  std::unique_ptr<target::ControlApi> api;
  std::unique_ptr<target::ResponderApp> app;
  PumpedPort port{*this};

  std::expected<void, std::string> rebuild() {
    app.reset();
    api.reset();
    loop.reset();
    while (pair.a->queued() > 0) (void)pair.a->receive(0);
    while (pair.b->queued() > 0) (void)pair.b->receive(0);
    loop = std::make_unique<target::NicLoop>(*pair.b, reference_nic_config(quirks, virtual_time));
    // kernel_log's now_unix_ns on the port's clock: the tester's own, so no offset.
    api = std::make_unique<target::ControlApi>(loop->nic(),
                                               [c = clock] { return c->unix_ns(c->now_ns()); });
    target::ResponderAppConfig config;
    config.port = service_port;
    if (stock_responder) config = target::ResponderAppConfig::stock(service_port);
    auto started = target::ResponderApp::start(loop->nic(), config);
    if (!started) return std::unexpected(started.error());
    app = std::move(*started);
    return {};
  }

  // Lets the NIC take every frame already queued for it, without moving time.
  std::expected<void, PortError> drain() {
    while (pair.b->queued() > 0) {
      if (auto r = loop->step(clock->now_ns()); !r) return r;
      app->service();
    }
    auto r = loop->flush();
    app->service();
    return r;
  }
};

std::expected<void, PortError> PumpedPort::send(Bytes frame) {
  return state_.pair.a->send(frame);
}

Clock& PumpedPort::clock() {
  return *state_.clock;
}

std::expected<std::optional<ReceivedFrame>, PortError> PumpedPort::receive(TimeNs deadline) {
  for (;;) {
    if (auto flushed = state_.loop->flush(); !flushed) return std::unexpected(flushed.error());
    auto frame = state_.pair.a->receive(state_.clock->now_ns());
    if (!frame || *frame) return frame;
    if (state_.clock->now_ns() >= deadline) return std::optional<ReceivedFrame>{};
    if (auto stepped = state_.loop->step(deadline); !stepped)
      return std::unexpected(stepped.error());
    state_.app->service();
  }
}

ReferenceTarget::ReferenceTarget(ReferenceOptions options)
    : options_(std::move(options)), state_(std::make_unique<State>()) {}

ReferenceTarget::~ReferenceTarget() = default;

std::expected<std::unique_ptr<ReferenceTarget>, std::string> ReferenceTarget::create(
    const ReferenceOptions& options) {
  std::unique_ptr<ReferenceTarget> t(new ReferenceTarget(options));
  State& s = *t->state_;
  for (const auto& name : options.quirks)
    if (auto ok = s.quirks.enable(name); !ok) return std::unexpected(ok.error());
  if (options.virtual_time)
    s.clock = std::make_shared<VirtualClock>(unix_now_ns(), VirtualClock::Mode::kWhenIdle, 1);
  else
    s.clock = std::make_shared<SteadyClock>();
  MemoryPairOptions pair;
  pair.name_a = "tester";
  pair.name_b = "reference";
  pair.clock = s.clock;
  s.pair = make_memory_pair(std::move(pair));
  s.service_port = options.service_port;
  s.stock_responder = options.stock_responder;
  s.virtual_time = options.virtual_time;
  if (auto built = s.rebuild(); !built) return std::unexpected(built.error());
  return t;
}

CongestionProfile reference_congestion() {
  CongestionProfile p;
  p.cnp_scope = CnpScope::kQp;
  p.cnp_interval_us = static_cast<std::uint32_t>(kReferenceCongestion.cnp_interval_ns / 1000);
  // The rate falls at the next packet after a CNP; six cuts are undone 600 µs after the last.
  p.monitor_us = 20;
  p.recovery_us = 1000;
  p.ecn = 0;  // its own packets are Not-ECT: no switch between it and the tester marks them
  return p;
}

std::string ReferenceTarget::describe() const {
  return fmt::format("reference NIC in process (in-memory port, {} time), quirks {}{}",
                     options_.virtual_time ? "virtual" : "real", state_->quirks.names(),
                     options_.stock_responder ? ", stock responder (no RCNF convention)" : "");
}

std::vector<std::pair<std::string, std::string>> ReferenceTarget::identity() const {
#ifndef ROCECONF_VERSION
#define ROCECONF_VERSION ""
#endif
  std::vector<std::pair<std::string, std::string>> out = {{"name", "roceconf reference NIC"}};
  if (*ROCECONF_VERSION) out.emplace_back("fw_ver", ROCECONF_VERSION);
  out.emplace_back("node_guid",
                   fmt::format("{:#018x}", state_->loop->nic().device().attr().node_guid));
  out.emplace_back("quirks", state_->quirks.names());
  out.emplace_back("source", "built-in");
  return out;
}

roceconf::Port& ReferenceTarget::port() {
  return state_->port;
}
Endpoint ReferenceTarget::tester() const {
  return kTester;
}
Endpoint ReferenceTarget::device() const {
  return kDevice;
}

std::expected<nlohmann::json, std::string> ReferenceTarget::control(const nlohmann::json& request) {
  if (auto r = state_->drain(); !r) return std::unexpected(r.error().message);
  // Verbs that post work start timers from the NIC's clock: bring it to now first (nothing else
  // moves it while a case only makes control calls).
  state_->loop->nic().tick(state_->loop->now());
  nlohmann::json response = state_->api->handle(request);
  if (state_->api->take_reset_request()) {
    if (auto r = state_->rebuild(); !r) return std::unexpected(r.error());
    return response;
  }
  if (auto r = state_->drain(); !r) return std::unexpected(r.error().message);
  return response;
}

std::expected<void, std::string> ReferenceTarget::reset() {
  return state_->rebuild();
}

}  // namespace roceconf::engine
