// Connection set-ups per second between two reference NICs in-process: N concurrent REQs from
// A to a listener on B, each answered with REP and completed with RTU, every QP in RTS.
#include <benchmark/benchmark.h>

#include <deque>
#include <vector>

#include "suite/reference_nic/cm_agent.h"
#include "suite/reference_nic/nic.h"

namespace roceconf::target {
namespace {

constexpr std::uint64_t kService = 0x1000000000000042;

struct Link {
  std::deque<std::vector<std::uint8_t>> to_a, to_b;
  Nic a{make({0x02, 0, 0, 0, 0, 0x0a}, {192, 0, 2, 1}),
        [this](std::span<const std::uint8_t> f) { to_b.emplace_back(f.begin(), f.end()); }};
  Nic b{make({0x02, 0, 0, 0, 0, 0x0b}, {192, 0, 2, 2}),
        [this](std::span<const std::uint8_t> f) { to_a.emplace_back(f.begin(), f.end()); }};
  std::uint32_t pd_a = *a.device().alloc_pd(), pd_b = *b.device().alloc_pd();
  std::uint32_t cq_a = (*a.device().create_cq(16))->handle();
  std::uint32_t cq_b = (*b.device().create_cq(16))->handle();
  std::uint64_t now = 1;

  static NicConfig make(MacAddress mac, Ipv4Address ip) {
    NicConfig c;
    c.device.port.mac = mac;
    c.device.attr.node_guid = 0x020000fffe000000ull | mac[5];
    c.ipv4 = ip;
    return c;
  }
  static std::uint32_t qp(Nic& n, std::uint32_t pd, std::uint32_t cq) {
    QpInit init;
    init.pd = pd;
    init.send_cq = init.recv_cq = cq;
    init.cap.max_send_wr = init.cap.max_recv_wr = 1;
    return (*n.device().create_qp(init))->qp_num();
  }
  void pump() {
    while (!to_a.empty() || !to_b.empty()) {
      now += 1000;
      for (; !to_b.empty(); to_b.pop_front()) b.receive(to_b.front(), now);
      for (; !to_a.empty(); to_a.pop_front()) a.receive(to_a.front(), now);
    }
  }
};

void BM_ConcurrentSetups(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    Link link;
    std::size_t established = 0;
    ListenerCallbacks listener;
    listener.create_qp = [&](const CmReq&) -> std::expected<std::uint32_t, std::uint16_t> {
      return Link::qp(link.b, link.pd_b, link.cq_b);
    };
    listener.private_data = [](std::uint32_t) { return std::vector<std::uint8_t>{}; };
    (void)link.b.cm().listen(kService, listener);
    std::vector<std::uint32_t> qps;
    for (std::size_t i = 0; i < count; ++i) qps.push_back(Link::qp(link.a, link.pd_a, link.cq_a));
    ConnectCallbacks callbacks;
    callbacks.established = [&](std::uint32_t, const CmRep&) { ++established; };
    state.ResumeTiming();
    for (const std::uint32_t q : qps) {
      ConnectParams p;
      p.service_id = kService;
      p.peer.dgid = gid_from_ipv4({192, 0, 2, 2});
      p.peer.dmac = {0x02, 0, 0, 0, 0, 0x0b};
      p.qp_num = q;
      (void)link.a.cm().connect(p, callbacks);
    }
    link.pump();
    state.PauseTiming();
    if (established != count) state.SkipWithError("not every connection was established");
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * count));
  state.counters["setups_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * count), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ConcurrentSetups)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace roceconf::target

BENCHMARK_MAIN();
