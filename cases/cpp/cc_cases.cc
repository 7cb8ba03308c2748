// Congestion notification (RoCEv2 Annex A17.9.3): how often the target sends CNPs for a burst of
// CE-marked requests (its declared scope and interval), and how its send rate reacts to the CNPs
// the tester injects while it streams a long RDMA WRITE. Rates are read from the arrival times of
// the target's packets; the in-process reference runs on a virtual clock, so they are exact
// there. The single-packet CNP rules are scripts (cases/cc/*.rcase).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "cases/builtin.h"
#include "cases/cpp/case_def.h"
#include "cases/cpp/control_helpers.h"
#include "dissector/analysis/psn.h"

namespace roceconf::cases {
namespace {

using engine::CaseContext;
using engine::Connection;
using engine::Received;

using namespace ctlcase;

constexpr TimeNs kUs = 1000;
constexpr std::uint32_t kBurst = 16;  // CE-marked requests per burst

bool is_cnp(const Packet& p) {
  return p.bth && p.bth->opcode == opcode::kCnp;
}

constexpr std::string_view kSource = "cases/cpp/cc_cases.cc";

void step(CaseContext& ctx, std::string_view what) {
  ctx.set_step(fmt::format("{}: {}", kSource, what));
}

std::string hex(std::uint32_t v) {
  return fmt::format("{:#x}", v);
}

// The CNPs a burst may draw under the declared pacing: one per interval the burst spans, plus
// the first.
std::uint64_t allowed_cnps(TimeNs span, std::uint32_t interval_us) {
  if (interval_us == 0) return kBurst;
  return 1 + static_cast<std::uint64_t>(span) / (TimeNs{interval_us} * kUs);
}

// `n` CE-marked 32-byte WRITEs into the responder's region on `c`, AckReq on the last.
void ce_writes(CaseContext& ctx, Connection& c, std::uint32_t first_psn, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i) {
    ctx.send(c, "RDMA_WRITE_ONLY",
             {{"psn", std::to_string(first_psn + i)},
              {"len", "32"},
              {"ecn", "3"},
              {"ackreq", i + 1 == n ? "1" : "0"}});
  }
}

std::size_t count_cnps(const std::vector<Received>& got, const Connection& c) {
  return static_cast<std::size_t>(std::ranges::count_if(got, [&](const Received& r) {
    return is_cnp(r.packet) && r.packet.bth->dqpn == c.local_qpn;
  }));
}

// ---- notification point: pacing ---------------------------------------------------------------

void cnp_paced_burst(CaseContext& ctx) {
  const auto& cc = ctx.target().capabilities().congestion;
  Connection& c = ctx.new_connection("c");
  ctx.connect(c, {});
  step(ctx, fmt::format("a burst of {} CE-marked WRITEs on one QP", kBurst));
  const TimeNs start = ctx.now();
  ce_writes(ctx, c, 0, kBurst);
  const TimeNs span = ctx.now() - start;
  const auto got = ctx.collect(&c, ctx.timing().silence_window());
  const std::size_t cnps = count_cnps(got, c);
  const std::uint64_t allowed = allowed_cnps(span, cc.cnp_interval_us);
  if (cnps == 0) ctx.fail(fmt::format("{} CE-marked requests drew no CNP (CA17-44)", kBurst));
  if (cnps > allowed)
    ctx.fail(fmt::format("{} CE-marked requests sent within {} µs drew {} CNPs; the declared "
                         "pacing ({} µs per {}) allows {}",
                         kBurst, span / kUs, cnps, cc.cnp_interval_us,
                         engine::cnp_scope_name(cc.cnp_scope), allowed),
             {{"cnps", fmt::format("<= {}", allowed), std::to_string(cnps)}});
  step(ctx, "after the interval a new CE-marked request draws a CNP again");
  ctx.wait(TimeNs{cc.cnp_interval_us} * kUs + kUs);
  ce_writes(ctx, c, kBurst, 1);
  ctx.expect(&c, {"CNP", {{"becn", "1"}}}, ctx.timing().expect_window());
  ctx.expect(&c, std::vector<engine::Expectation>{{"ACK", {{"psn", std::to_string(kBurst)}}}},
             ctx.timing().expect_window(), engine::ExpectMode::kAfterEarlierAcks);
}

void cnp_paced_two_qps(CaseContext& ctx) {
  const auto& cc = ctx.target().capabilities().congestion;
  Connection& c = ctx.new_connection("c");
  ctx.connect(c, {});
  Connection& d = ctx.new_connection("d");
  ctx.connect(d, {});
  step(ctx, fmt::format("CE-marked WRITEs on two QPs, interleaved ({} each)", kBurst / 2));
  const TimeNs start = ctx.now();
  for (std::uint32_t i = 0; i < kBurst / 2; ++i) {
    ce_writes(ctx, c, i, 1);
    ce_writes(ctx, d, i, 1);
  }
  const TimeNs span = ctx.now() - start;
  const auto got = ctx.collect(nullptr, ctx.timing().silence_window());
  const std::size_t on_c = count_cnps(got, c), on_d = count_cnps(got, d);
  const std::uint64_t allowed = allowed_cnps(span, cc.cnp_interval_us);
  const std::string scope(engine::cnp_scope_name(cc.cnp_scope));
  if (cc.cnp_scope == engine::CnpScope::kQp) {
    // Per QP: each congested QP is told, whatever the other does.
    for (const auto& [name, n] : {std::pair{"c", on_c}, std::pair{"d", on_d}}) {
      if (n == 0)
        ctx.fail(fmt::format("QP {} drew no CNP for its CE-marked requests, though the target "
                             "declares CNP pacing per QP (c {}, d {})",
                             name, on_c, on_d),
                 {{fmt::format("cnps to {}", name), ">= 1", "0"}});
      if (n > allowed)
        ctx.fail(fmt::format("QP {} drew {} CNPs within {} µs; pacing per QP every {} µs allows {}",
                             name, n, span / kUs, cc.cnp_interval_us, allowed));
    }
  } else {
    // Per IP pair or per port: both QPs share one pacer here (same addresses, one port).
    if (on_c + on_d == 0) ctx.fail("no CNP for CE-marked requests on two QPs (CA17-44)");
    if (on_c + on_d > allowed)
      ctx.fail(fmt::format("two QPs drew {} CNPs within {} µs; pacing per {} every {} µs allows {}",
                           on_c + on_d, span / kUs, scope, cc.cnp_interval_us, allowed));
  }
}

// ---- reaction point ----------------------------------------------------------------------------

// The target streams one long RDMA WRITE on `c`; the tester takes its packets as they come,
// ACKing every 32, and records when each arrived.
class WriteStream {
 public:
  WriteStream(CaseContext& ctx, Connection& c) : ctx_(ctx), c_(c) {}

  void start(std::uint32_t packets) {
    Control t(ctx_);
    packets_ = packets;
    const std::uint32_t bytes = packets * c_.pmtu;
    const auto buf = reg_mr(ctx_, c_.target_pd, bytes, {"LOCAL_WRITE"});
    ctl::SendWr wr;
    wr.wr_id = 1;
    wr.opcode = "RDMA_WRITE";
    wr.send_flags = {"SIGNALED"};
    wr.sg_list = {{buf.addr, bytes, buf.lkey}};
    // The tester's emulated QP takes any address and key.
    wr.rdma = ctl::SendWr::Rdma{0x10000000, 0x1234};
    t.must(ctl::PostSend{c_.remote_qpn, {wr}}, "post_send RDMA_WRITE");
  }

  // Reads what arrives within `window`; false once every packet is in.
  bool pump(TimeNs window) {
    for (const Received& r : ctx_.collect(&c_, window)) {
      if (!r.packet.bth || !opcode_info(r.packet.bth->opcode).is_request) continue;
      const auto rel = static_cast<std::uint32_t>(psn::diff(r.packet.bth->psn, c_.remote_psn0));
      if (rel < seen_) continue;  // a retransmission
      seen_ = rel + 1;
      times_.push_back(r.time);
      if (seen_ % 32 == 0 || seen_ == packets_) ack(ctx_, c_, rel, seen_ == packets_ ? 1 : 0);
    }
    return seen_ < packets_;
  }
  // Until `n` packets have arrived (or the stream ends or stalls).
  void until_count(std::size_t n) {
    int idle = 0;
    while (times_.size() < n && idle < 3) {
      const std::size_t before = times_.size();
      if (!pump(20 * kUs)) break;
      idle = times_.size() == before ? idle + 1 : 0;
    }
  }
  void until_time(TimeNs t) {
    while (ctx_.now() < t && pump(std::min<TimeNs>(20 * kUs, t - ctx_.now()))) {
    }
  }
  void finish() {
    int idle = 0;
    while (idle < 3) {
      const std::size_t before = times_.size();
      if (!pump(ctx_.timing().silence_window())) break;
      idle = times_.size() == before ? idle + 1 : 0;
    }
  }

  // The median gap between packets that arrived in [from, to); nullopt with fewer than `min`.
  std::optional<TimeNs> median_gap(TimeNs from, TimeNs to, std::size_t min = 6) const {
    std::vector<TimeNs> gaps;
    for (std::size_t i = 1; i < times_.size(); ++i)
      if (times_[i - 1] >= from && times_[i] < to) gaps.push_back(times_[i] - times_[i - 1]);
    if (gaps.size() < min) return std::nullopt;
    std::ranges::nth_element(gaps, gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2));
    return gaps[gaps.size() / 2];
  }
  const std::vector<TimeNs>& times() const { return times_; }
  bool complete() const { return seen_ == packets_; }

 private:
  CaseContext& ctx_;
  Connection& c_;
  std::uint32_t packets_ = 0;
  std::uint32_t seen_ = 0;
  std::vector<TimeNs> times_;
};

// A CNP from the tester to the target's QP on `c` (dqpn overrides, icrc=bad corrupts it).
void inject_cnp(CaseContext& ctx, Connection& c, engine::Assignments extra = {}) {
  engine::Assignments a{{"becn", "1"}};
  for (const auto& item : extra.items()) a.set(item.key, item.value);
  ctx.send(c, "CNP", a);
}

// A QP opened for streaming: the largest PMTU the target allows, so a long message is few
// packets.
Connection& stream_qp(CaseContext& ctx, const std::string& name) {
  Connection& c = ctx.new_connection(name);
  const std::uint32_t pmtu = std::min<std::uint32_t>(4096, ctx.target().capabilities().max_pmtu);
  ctx.open(c, {{"pmtu", std::to_string(pmtu)}, {"recv", "0"}});
  return c;
}

constexpr std::uint32_t kStreamPackets = 400;
constexpr std::uint32_t kBaselinePackets = 32;
constexpr std::size_t kBurstSkip = 12;

// Baseline, one CNP, then the gaps after the monitor period: `slower` says whether they must
// have grown (the CNP named this QP) or stayed (it did not).
TimeNs baseline_gap(CaseContext& ctx, WriteStream& s) {
  s.until_count(kBaselinePackets);
  if (s.times().size() <= kBurstSkip)
    ctx.inconclusive(fmt::format("only {} packets of the WRITE arrived", s.times().size()));
  // Past the first packets: a device may send a short burst before its pacing holds.
  const auto gap = s.median_gap(s.times()[kBurstSkip], kForever);
  if (!gap || !s.pump(0))
    ctx.inconclusive(fmt::format("the WRITE of {} packets was over before a rate could be read",
                                 kStreamPackets));
  return *gap;
}

// The rate cases' start: the target streams its long WRITE; the packet gap before any CNP.
TimeNs start_stream(CaseContext& ctx, WriteStream& s) {
  step(ctx, fmt::format("the target streams an RDMA WRITE of {} packets", kStreamPackets));
  s.start(kStreamPackets);
  return baseline_gap(ctx, s);
}

void rate_cut_on_cnp(CaseContext& ctx) {
  const auto& cc = ctx.target().capabilities().congestion;
  Connection& c = stream_qp(ctx, "c");
  WriteStream s(ctx, c);
  const TimeNs before = start_stream(ctx, s);
  step(ctx, "a CNP to the streaming QP");
  const TimeNs t_cnp = ctx.now();
  inject_cnp(ctx, c);
  const TimeNs from = t_cnp + TimeNs{cc.monitor_us} * kUs;
  s.until_time(from);
  s.until_count(s.times().size() + 8);
  const auto after = s.median_gap(from, kForever, 4);
  if (!after) ctx.inconclusive("the WRITE ended before the monitor period after the CNP was over");
  // DCQCN's first cut halves the rate; a cut of a fifth is the least counted as a reaction.
  if (*after * 4 < before * 5)
    ctx.fail(
        fmt::format("the packet gap {} ns after the CNP (from {} µs on) is not longer than "
                    "{} ns before it: the send rate did not fall (CA17-45)",
                    *after, cc.monitor_us, before),
        {{"gap after CNP", fmt::format(">= {} ns", before * 5 / 4), fmt::format("{} ns", *after)}});
  s.finish();
  if (!s.complete()) ctx.fail("the WRITE's packets stopped coming after the CNP");
  expect_wc(ctx, c.target_cq, {.wr_id = 1, .status = "SUCCESS", .opcode = "RDMA_WRITE"});
}

void rate_recovers(CaseContext& ctx) {
  const auto& cc = ctx.target().capabilities().congestion;
  Connection& c = stream_qp(ctx, "c");
  WriteStream s(ctx, c);
  const TimeNs before = start_stream(ctx, s);
  step(ctx, "three CNPs to the streaming QP, 5 µs apart, then none");
  for (int i = 0; i < 3; ++i) {
    inject_cnp(ctx, c);
    s.until_time(ctx.now() + 5 * kUs);
  }
  const TimeNs last = ctx.now();
  const TimeNs back = last + TimeNs{cc.recovery_us} * kUs;
  s.until_time(back);
  s.until_count(s.times().size() + 8);
  const auto after = s.median_gap(back, kForever, 4);
  if (!after)
    ctx.inconclusive(
        fmt::format("the WRITE ended before the declared recovery time ({} µs) had "
                    "passed",
                    cc.recovery_us));
  if (*after * 10 > before * 11)
    ctx.fail(fmt::format("{} µs after the last CNP the packet gap is {} ns, against {} ns before "
                         "the CNPs: the rate did not recover (CA17-46)",
                         cc.recovery_us, *after, before),
             {{"gap", fmt::format("<= {} ns", before * 11 / 10), fmt::format("{} ns", *after)}});
  s.finish();
  expect_wc(ctx, c.target_cq, {.wr_id = 1, .status = "SUCCESS", .opcode = "RDMA_WRITE"});
}

void invalid_cnps_change_nothing(CaseContext& ctx) {
  const auto& cc = ctx.target().capabilities().congestion;
  Connection& c = stream_qp(ctx, "c");
  WriteStream s(ctx, c);
  const TimeNs before = start_stream(ctx, s);
  step(ctx, "a CNP to another QP number, and one to this QP with a bad ICRC");
  const TimeNs t_cnp = ctx.now();
  inject_cnp(ctx, c, {{"dqpn", hex((c.remote_qpn + 0x101) & 0xFFFFFF)}});
  inject_cnp(ctx, c, {{"icrc", "bad"}});
  const TimeNs from = t_cnp + TimeNs{cc.monitor_us} * kUs;
  s.until_time(from);
  s.until_count(s.times().size() + 8);
  const auto after = s.median_gap(from, kForever, 4);
  if (!after) ctx.inconclusive("the WRITE ended before the monitor period was over");
  if (*after * 10 > before * 11)
    ctx.fail(fmt::format("after a CNP for another QP and a CNP with a bad ICRC the packet gap "
                         "grew from {} ns to {} ns: an invalid CNP slowed the QP",
                         before, *after),
             {{"gap", fmt::format("<= {} ns", before * 11 / 10), fmt::format("{} ns", *after)}});
  s.finish();
  expect_wc(ctx, c.target_cq, {.wr_id = 1, .status = "SUCCESS", .opcode = "RDMA_WRITE"});
}

void cnp_slows_only_its_qp(CaseContext& ctx) {
  const auto& cc = ctx.target().capabilities().congestion;
  Connection& c = stream_qp(ctx, "c");
  Connection& d = stream_qp(ctx, "d");
  WriteStream sc(ctx, c), sd(ctx, d);
  step(ctx, "both QPs stream an RDMA WRITE");
  sc.start(kStreamPackets);
  sd.start(kStreamPackets);
  // Each stream's collect keeps the other's frames for it, so reading them in turn loses none.
  while (sc.times().size() < kBaselinePackets || sd.times().size() < kBaselinePackets) {
    const std::size_t before = sc.times().size() + sd.times().size();
    sc.pump(10 * kUs);
    sd.pump(0);
    if (sc.times().size() + sd.times().size() == before)
      ctx.inconclusive("the WRITEs stalled before a rate could be read");
  }
  const auto base_d = sd.median_gap(sd.times()[kBurstSkip], kForever);
  if (!base_d) ctx.inconclusive("too few packets of d to read its rate");
  step(ctx, "a CNP to c only");
  const TimeNs t_cnp = ctx.now();
  inject_cnp(ctx, c);
  const TimeNs from = t_cnp + TimeNs{cc.monitor_us} * kUs;
  while (ctx.now() < from + 40 * kUs) {
    const bool more_c = sc.pump(10 * kUs);
    const bool more_d = sd.pump(0);
    if (!more_c && !more_d) break;
  }
  const auto after_d = sd.median_gap(from, kForever, 4);
  if (!after_d) ctx.inconclusive("d's WRITE ended before the monitor period was over");
  if (*after_d * 10 > *base_d * 11)
    ctx.fail(
        fmt::format("a CNP for QP c slowed QP d: its packet gap grew from {} ns to {} ns "
                    "(CA17-45: the rate of the QP the CNP names)",
                    *base_d, *after_d),
        {{"d's gap", fmt::format("<= {} ns", *base_d * 11 / 10), fmt::format("{} ns", *after_d)}});
  while (sc.pump(ctx.timing().silence_window()) | sd.pump(0)) {
  }
}

}  // namespace

void add_cc_cpp_cases(engine::Catalogue& catalogue) {
  static constexpr CaseFile kFile(kSource);
  kFile.add(
      catalogue, "cc/cnp-paced-burst",
      "A burst of CE-marked requests on one QP draws at least one CNP and no more than the "
      "declared pacing allows",
      "Sixteen CE-marked WRITEs go to one QP back to back. At least one CNP must come back, and no "
      "more than one per declared interval the burst spans (plus the first). After the interval "
      "a new CE-marked WRITE draws a CNP again.",
      {"CA17-44",
       "Each CE-marked valid packet is a reason for a CNP; a device paces them per its declared "
       "scope and interval, so a burst draws at least one and at most one per interval",
       "CA17-44: Annex A17 text; pacing (min_time_between_cnps, per QP): Linux mlx5 "
       "documentation; Lumina (SIGCOMM 2023)"},
      "MUST", {"responder", "cc"}, cnp_paced_burst);
  kFile.add(
      catalogue, "cc/cnp-paced-two-qps",
      "CE-marked requests on two QPs each draw their own CNP when pacing is per QP",
      "Sixteen CE-marked WRITEs alternate between two connections. With CNP pacing declared per "
      "QP each QP must get at least one CNP, and none more than its interval allows; declared per "
      "IP pair or per port, both share one pacer.",
      {"CA17-44",
       "Every congested QP is notified: under per-QP pacing one QP's CNP does not use up the "
       "other's",
       "CA17-44: Annex A17 text; per-QP versus per-port pacing: Lumina (SIGCOMM 2023)"},
      "MUST", {"responder", "cc"}, cnp_paced_two_qps);
  kFile.add(
      catalogue, "cc/rate-cut-on-cnp",
      "A CNP for a streaming QP lowers its packet rate within the monitor period",
      "The target streams an RDMA WRITE of 400 packets (control post_send, PMTU up to 4096); the "
      "tester ACKs every 32 and reads the packet gap from the arrival times. After one CNP to "
      "the QP, the gap of the packets arriving once the declared monitor period has passed must "
      "be at least 1.25 times the gap before it.",
      {"CA17-45", "A CNP received for a QP makes the device lower that QP's injection rate",
       "CA17-45: Annex A17 text; DCQCN rate cut: Zhu et al. (SIGCOMM 2015)"},
      "MUST", {"control", "cc"}, rate_cut_on_cnp);
  kFile.add(
      catalogue, "cc/rate-recovers",
      "Once the CNPs stop, the QP's packet rate comes back within the declared recovery time",
      "While the target streams an RDMA WRITE, three CNPs 5 µs apart cut its rate; the declared "
      "recovery time after the last one, the packet gap must be within 10 % of what it was "
      "before the CNPs.",
      {"CA17-46", "A device should raise a QP's rate again after a time without CNPs",
       "CA17-46: Annex A17 text; DCQCN recovery: Zhu et al. (SIGCOMM 2015)"},
      "SHOULD", {"control", "cc"}, rate_recovers);
  kFile.add(
      catalogue, "cc/invalid-cnp-changes-nothing",
      "A CNP for another QP number or with a bad ICRC leaves the streaming QP's rate alone",
      "While the target streams an RDMA WRITE, the tester sends a CNP whose DestQP names no QP of "
      "this connection and a CNP to the QP with a corrupted ICRC. The packet gap after the "
      "monitor period must stay within 10 % of the gap before.",
      {"CA17-45; CA17-22; CA17-24",
       "Only a valid CNP for a QP lowers that QP's rate: a packet with a bad ICRC is dropped, a "
       "CNP for another QP is not this QP's",
       "CA17-45, CA17-22, CA17-24: Annex A17 text"},
      "MUST", {"control", "cc"}, invalid_cnps_change_nothing);
  kFile.add(
      catalogue, "cc/cnp-slows-only-its-qp",
      "A CNP for one of two streaming QPs does not slow the other",
      "Two QPs of the target stream an RDMA WRITE each. After a CNP to the first, the second's "
      "packet gap, past the monitor period, must stay within 10 % of its gap before.",
      {"CA17-45", "The rate a CNP lowers is that of the QP it names, not the port's",
       "CA17-45: Annex A17 text"},
      "MUST", {"control", "cc"}, cnp_slows_only_its_qp);
}

}  // namespace roceconf::cases
