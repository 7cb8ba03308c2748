// Security measurements (area sec), after ReDMArk (Rothenberger et al., USENIX Security 2021): how
// predictable the numbers an off-path sender must guess are (QPNs, starting PSNs, R_Keys), whether
// a deregistered R_Key comes back, and what one forged packet does to a connection. The IBA has
// no rule for key randomness, so the predictability cases are SHOULD: a finding, never blocking.
// Every figure goes into the case's measurements (the reports' "Security measurements" section).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cases/builtin.h"
#include "cases/cpp/case_def.h"
#include "cases/cpp/control_helpers.h"
#include "suite/engine/matcher.h"

namespace roceconf::cases {

namespace {

using namespace ctlcase;  // NOLINT: the helpers are this file's vocabulary

constexpr std::string_view kSource = "cases/cpp/sec_cases.cc";
// Samples per predictability case: enough for a clear step and entropy estimate, few enough that
// the catalogue stays fast and a small target is not exhausted.
constexpr int kSamples = 32;
// Thresholds. ReDMArk found sequential QPNs and R_Keys (a constant step) on every NIC it tested.
// A sequence is predictable when one step makes at least half of its differences, when a value
// repeats, or when the per-bit entropy estimate is below half of the value's bits (a random
// 24-bit value over 32 samples estimates at about 23.5 bits, a counter at about 5).
constexpr double kStepShare = 0.5;
constexpr double kEntropyShare = 0.5;
const std::string kStepThreshold = "a finding when one step makes half of the differences or more";
const std::string kRepeatThreshold = "a finding above 0";

void step(CaseContext& ctx, std::string_view what) {
  ctx.set_step(fmt::format("{}: {}", kSource, what));
}

double binary_entropy(double p) {
  if (p <= 0 || p >= 1) return 0;
  return -p * std::log2(p) - (1 - p) * std::log2(1 - p);
}

// What a sequence of `bits`-bit values shows an attacker who has seen it.
struct Predictability {
  std::int64_t step = 0;  // the most common difference (signed, modulo 2^bits)
  int step_count = 0;     // how many of the n - 1 differences it is
  int differences = 0;
  int repeats = 0;              // values equal to an earlier one
  double bit_entropy = 0;       // sum over the bits of the binary entropy of that bit's ones
  double diff_entropy = 0;      // plug-in Shannon entropy of the differences
  double diff_min_entropy = 0;  // -log2 of the most common difference's share
  int bits = 0;

  bool sequential() const { return differences > 0 && step_count >= kStepShare * differences; }
  bool low_entropy() const { return bit_entropy < kEntropyShare * bits; }
  bool predictable() const { return sequential() || repeats > 0 || low_entropy(); }
};

Predictability measure_sequence(const std::vector<std::uint32_t>& values, int bits) {
  Predictability p;
  p.bits = bits;
  const std::uint64_t modulus = std::uint64_t{1} << bits;
  std::map<std::int64_t, int> diffs;
  for (std::size_t i = 1; i < values.size(); ++i) {
    auto d = static_cast<std::int64_t>((values[i] + modulus - values[i - 1]) % modulus);
    if (d > static_cast<std::int64_t>(modulus / 2)) d -= static_cast<std::int64_t>(modulus);
    ++diffs[d];
  }
  p.differences = values.empty() ? 0 : static_cast<int>(values.size() - 1);
  for (const auto& [d, n] : diffs) {
    if (n > p.step_count) p.step = d, p.step_count = n;
    const double share = static_cast<double>(n) / p.differences;
    p.diff_entropy -= share * std::log2(share);
  }
  if (p.step_count > 0)
    p.diff_min_entropy = -std::log2(static_cast<double>(p.step_count) / p.differences);
  std::set<std::uint32_t> seen;
  for (const std::uint32_t v : values) p.repeats += !seen.insert(v).second;
  for (int b = 0; b < bits; ++b) {
    int ones = 0;
    for (const std::uint32_t v : values) ones += (v >> b) & 1;
    p.bit_entropy += binary_entropy(static_cast<double>(ones) / static_cast<double>(values.size()));
  }
  return p;
}

std::string signed_hex(std::int64_t v) {
  return v < 0 ? fmt::format("-{:#x}", -v) : fmt::format("+{:#x}", v);
}

// Records the figures of `p` for the values named `what` and FAILs (the case's level decides
// whether that blocks) when the sequence is predictable.
void grade_sequence(CaseContext& ctx, std::string_view what,
                    const std::vector<std::uint32_t>& values, int bits) {
  const Predictability p = measure_sequence(values, bits);
  std::string sample;
  for (std::size_t i = 0; i < values.size() && i < 6; ++i)
    sample += fmt::format("{}{:#x}", i ? ", " : "", values[i]);
  ctx.measure({fmt::format("{}: samples", what),
               fmt::format("{} ({}{})", values.size(), sample, values.size() > 6 ? ", ..." : ""),
               "", false});
  ctx.measure(
      {fmt::format("{}: most common step", what),
       fmt::format("{} ({} of {} differences)", signed_hex(p.step), p.step_count, p.differences),
       kStepThreshold, p.sequential()});
  ctx.measure({fmt::format("{}: repeats", what), std::to_string(p.repeats), kRepeatThreshold,
               p.repeats > 0});
  ctx.measure({fmt::format("{}: entropy, per-bit estimate", what),
               fmt::format("{:.1f} of {} bits", p.bit_entropy, bits),
               fmt::format("a finding below {:.0f} bits", kEntropyShare * bits), p.low_entropy()});
  ctx.measure({fmt::format("{}: entropy of the differences", what),
               fmt::format("{:.2f} bits (min-entropy {:.2f}; at most {:.2f} from {} differences)",
                           p.diff_entropy, p.diff_min_entropy,
                           std::log2(std::max(p.differences, 1)), p.differences),
               "", false});
  if (!p.predictable()) return;
  std::vector<std::string> why;
  if (p.sequential())
    why.push_back(fmt::format("step {} in {} of {} differences", signed_hex(p.step), p.step_count,
                              p.differences));
  if (p.repeats > 0) why.push_back(fmt::format("{} repeated", p.repeats));
  if (p.low_entropy()) why.push_back(fmt::format("{:.1f} bits of entropy", p.bit_entropy));
  std::string reason;
  for (const auto& w : why) reason += (reason.empty() ? "" : ", ") + w;
  ctx.fail(fmt::format("{} are predictable: {}", what, reason),
           {{std::string(what), "no common step, no repeat, entropy near the bits",
             fmt::format("step {} x{}/{}, {} repeats, {:.1f} bits", signed_hex(p.step),
                         p.step_count, p.differences, p.repeats, p.bit_entropy)}});
}

// The packets for `c` within an expect window: the first is the answer, if any.
std::optional<engine::Received> answer(CaseContext& ctx, Connection& c) {
  auto got = ctx.collect(&c, ctx.timing().expect_window());
  if (got.empty()) return std::nullopt;
  return std::move(got.front());
}
std::string shown(const std::optional<engine::Received>& r, const Connection& c) {
  return r ? engine::describe_received(r->packet, &c) : "nothing";
}
// An AETH with this syndrome (0x62: NAK remote access error), or any ACK when `code` is unset.
bool acked(const std::optional<engine::Received>& r, std::optional<std::uint8_t> code = {}) {
  if (!r || !r->packet.aeth) return false;
  const std::uint8_t syndrome = r->packet.aeth->syndrome;
  return code ? syndrome == *code : (syndrome & 0x60) == 0;
}
constexpr std::uint8_t kNakRemoteAccess = 0x62;

// kSamples connections to the responder, one after the other and all kept open (close_all
// releases them), as an attacker opening its own connections would see them.
std::vector<Connection*> connections(CaseContext& ctx) {
  std::vector<Connection*> out;
  for (int i = 0; i < kSamples; ++i) {
    Connection& c = ctx.new_connection(fmt::format("c{}", i));
    ctx.connect(c, {});
    out.push_back(&c);
  }
  return out;
}

// ---- predictability --------------------------------------------------------------------------

void qpn_predictability(CaseContext& ctx) {
  ctx.require("listener");
  step(ctx, fmt::format("{} connections: the QPNs of the REPs", kSamples));
  std::vector<std::uint32_t> qpns;
  for (const Connection* c : connections(ctx)) qpns.push_back(c->remote_qpn);
  step(ctx, "the QPNs' step, repeats and entropy");
  grade_sequence(ctx, "QPNs", qpns, 24);
}

void psn_predictability(CaseContext& ctx) {
  ctx.require("listener");
  step(ctx, fmt::format("{} connections: the Starting PSNs of the REPs", kSamples));
  std::vector<std::uint32_t> psns;
  // The REP's Starting PSN is where the tester's requests start (IBA 12.7.23, 12.7.36).
  for (const Connection* c : connections(ctx)) psns.push_back(c->local_psn0);
  step(ctx, "the starting PSNs' step, repeats and entropy");
  grade_sequence(ctx, "starting PSNs", psns, 24);
}

void rkey_predictability(CaseContext& ctx) {
  ctx.require("control");
  Control t(ctx);
  const std::uint32_t pd = t.setup(ctl::AllocPd{}).pd;
  step(ctx, fmt::format("{} reg_mr of 4 KiB, all kept: their R_Keys", kSamples));
  std::vector<std::uint32_t> rkeys;
  std::vector<std::uint32_t> handles;
  for (int i = 0; i < kSamples; ++i) {
    const auto mr = reg_mr(ctx, pd, 4096, {"LOCAL_WRITE", "REMOTE_WRITE"});
    rkeys.push_back(mr.rkey);
    handles.push_back(mr.handle);
  }
  for (const std::uint32_t h : handles) t.setup(ctl::DeregMr{h});
  step(ctx, "the R_Keys' step, repeats and entropy");
  grade_sequence(ctx, "R_Keys", rkeys, 32);
}

// ---- R_Key reuse -----------------------------------------------------------------------------

// A QP in RTS towards the tester with its own CQ, for WRITEs through the regions under test.
std::uint32_t qp_of(CaseContext& ctx, Connection& c, std::uint32_t pd) {
  const std::uint32_t cq = Control(ctx).setup(ctl::CreateCq{16}).cq;
  create_rc_qp(ctx, c, pd, cq, 4);
  bring_up(ctx, c, static_cast<std::uint32_t>(ctx.random()()) & 0xFFFFFF);
  return cq;
}

// The R_Key of a deregistered region must no longer reach memory: a WRITE through it is NAKed
// remote access error (the old bytes are gone, so nothing is read back).
void rkey_invalid_after_dereg(CaseContext& ctx) {
  ctx.require("control");
  Control t(ctx);
  Connection& c = ctx.new_connection("c");
  const std::uint32_t pd = t.setup(ctl::AllocPd{}).pd;
  qp_of(ctx, c, pd);
  step(ctx, "reg_mr with REMOTE_WRITE: a WRITE through its R_Key is ACKed");
  const auto mr = reg_mr(ctx, pd, 4096, {"LOCAL_WRITE", "REMOTE_WRITE"});
  const std::string va = std::to_string(mr.addr), rkey = std::to_string(mr.rkey);
  ctx.send(c, "RDMA_WRITE_ONLY",
           {{"psn", "0"}, {"ackreq", "1"}, {"len", "64"}, {"va", va}, {"rkey", rkey}});
  ctx.expect(&c, {"ACK", {{"psn", "0"}, {"syndrome", "ack"}}}, ctx.timing().expect_window());
  step(ctx, "dereg_mr; a WRITE through the old R_Key gets NAK remote access error");
  t.must(ctl::DeregMr{mr.handle}, "dereg_mr");
  ctx.send(c, "RDMA_WRITE_ONLY",
           {{"psn", "1"}, {"ackreq", "1"}, {"len", "64"}, {"va", va}, {"rkey", rkey}});
  const auto got = answer(ctx, c);
  const bool refused = acked(got, kNakRemoteAccess);
  ctx.measure({"WRITE through a deregistered R_Key", shown(got, c),
               "a finding unless it is NAKed remote access error", !refused});
  if (!refused)
    ctx.fail("a WRITE through the R_Key of a deregistered region was not refused",
             {{"response", "NAK psn=1 syndrome=rem_acc_err", shown(got, c)}});
}

// Regions registered right after a dereg_mr must get keys never seen: the same R_Key again lets
// a peer that kept the old one reach the new region (ReDMArk). When the new key differs, the old
// one must be refused on the wire.
void rkey_reuse(CaseContext& ctx) {
  ctx.require("control");
  constexpr int kRounds = 8;
  Control t(ctx);
  Connection& c = ctx.new_connection("c");
  const std::uint32_t pd = t.setup(ctl::AllocPd{}).pd;
  qp_of(ctx, c, pd);
  step(ctx, fmt::format("{} rounds of reg_mr, dereg_mr, reg_mr of the same size", kRounds));
  std::set<std::uint32_t> retired;
  int same = 0, earlier = 0;
  std::uint32_t first_old = 0, first_new = 0, last_old = 0;
  auto mr = reg_mr(ctx, pd, 4096, {"LOCAL_WRITE", "REMOTE_WRITE"});
  for (int i = 0; i < kRounds; ++i) {
    const std::uint32_t old = mr.rkey;
    t.must(ctl::DeregMr{mr.handle}, "dereg_mr");
    retired.insert(old);
    last_old = old;
    mr = reg_mr(ctx, pd, 4096, {"LOCAL_WRITE", "REMOTE_WRITE"});
    if (i == 0) first_old = old, first_new = mr.rkey;
    same += mr.rkey == old;
    earlier += mr.rkey != old && retired.contains(mr.rkey);
  }
  ctx.measure({"R_Key of the region registered right after a dereg_mr",
               fmt::format("the deregistered one in {} of {} rounds (first: {:#x} then {:#x})",
                           same, kRounds, first_old, first_new),
               kRepeatThreshold, same > 0});
  ctx.measure({"R_Key of an earlier deregistered region handed out again",
               fmt::format("{} of {} rounds", earlier, kRounds), kRepeatThreshold, earlier > 0});

  step(ctx, "a WRITE through the last deregistered R_Key");
  // The live region's key when it is a deregistered one (it reaches the new region), else the
  // key deregistered last.
  const std::uint32_t probe = retired.contains(mr.rkey) ? mr.rkey : last_old;
  ctx.send(c, "RDMA_WRITE_ONLY",
           {{"psn", "0"},
            {"ackreq", "1"},
            {"len", "64"},
            {"va", std::to_string(mr.addr)},
            {"rkey", std::to_string(probe)}});
  const auto got = answer(ctx, c);
  const bool refused = got && got->packet.aeth && !acked(got);
  ctx.measure({"WRITE through a deregistered R_Key, after new registrations", shown(got, c),
               "a finding when it is ACKed (it reached the new region)", !refused});
  if (same + earlier > 0 || !refused)
    ctx.fail(fmt::format("a deregistered R_Key came back: {} of {} regions registered right after "
                         "a dereg_mr took the old key, {} an earlier one; the old key {}",
                         same, kRounds, earlier, refused ? "is refused" : "reaches the new region"),
             {{"rkey", "a key never handed out before", fmt::format("{:#x}", probe)}});
}

// ---- one forged packet -----------------------------------------------------------------------

// Whether `c` still takes a legitimate SEND at its next PSN (ACKed within an expect window).
bool alive(CaseContext& ctx, Connection& c, std::uint32_t psn) {
  ctx.send(c, "SEND_ONLY", {{"psn", std::to_string(psn)}, {"ackreq", "1"}, {"len", "32"}});
  return acked(answer(ctx, c));
}

// An off-path sender knows its own connection's QPN and guesses the victim's as the next one
// (ReDMArk's sequential QPNs); with the right QPN, a packet at an in-window PSN that the
// responder treats as a class C error (an opcode out of sequence: MIDDLE with no FIRST) puts the
// QP in Error as IBA 9.9.3 specifies, so one forged packet kills the connection. Measured, not
// graded: the exposure is the protocol's.
void forged_packet(CaseContext& ctx) {
  ctx.require("responder");
  step(ctx, "the attacker's own connection, then the victim's");
  Connection& a = ctx.new_connection("attacker");
  ctx.connect(a, {});
  Connection& v = ctx.new_connection("victim");
  ctx.connect(v, {});
  const std::uint32_t guess = (a.remote_qpn + 1) & 0xFFFFFF;
  const bool hit = guess == v.remote_qpn;
  ctx.measure(
      {"victim's QPN guessed from the attacker's own (+1)",
       fmt::format("{} (guess {:#x}, victim {:#x})", hit ? "hit" : "missed", guess, v.remote_qpn),
       "a finding when the guess hits", hit});
  step(ctx, "the victim's connection works");
  if (!alive(ctx, v, 0)) ctx.inconclusive("the victim's connection does not ACK a SEND");

  step(ctx, "a forged SEND_MIDDLE (no FIRST) 5 PSNs ahead of the expected one");
  ctx.send(v, "SEND_MIDDLE", {{"psn", "6"}, {"len", std::to_string(v.pmtu)}});
  ctx.collect(&v, ctx.timing().silence_window());
  const bool ahead_alive = alive(ctx, v, 1);
  ctx.measure({"connection after one forged packet at a PSN ahead (in the window)",
               ahead_alive ? "alive" : "dead", "a finding when it dies", !ahead_alive});
  if (!ahead_alive) return;

  step(ctx, "a forged SEND_MIDDLE (no FIRST) at the expected PSN");
  ctx.send(v, "SEND_MIDDLE", {{"psn", "2"}, {"len", std::to_string(v.pmtu)}});
  ctx.measure(
      {"answer to a forged packet at the expected PSN", shown(answer(ctx, v), v), "", false});
  step(ctx, "the victim sends its next SEND at the expected PSN");
  const bool exact_alive = alive(ctx, v, 2);
  ctx.measure({"connection after one forged packet at the expected PSN",
               exact_alive ? "alive" : "dead (QP in Error, as IBA 9.9.3 specifies)",
               "a finding when it dies", !exact_alive});
}

// The target as requester with an outstanding SEND: an ACK nobody authenticates, with the right
// QPN and a PSN in range, completes the work (IBA 9.7.5.1: an ACK acknowledges every request up
// to its PSN). Measured: the spec requires it, the exposure is that nothing tells a forged ACK
// from the responder's.
void forged_ack(CaseContext& ctx) {
  ctx.require("control");
  Control t(ctx);
  Connection& c = ctx.new_connection("c");
  step(ctx, "open c recv=0; the target posts a SEND the responder never gets");
  ctx.open(c, {{"recv", "0"}});
  const auto buf = reg_mr(ctx, c.target_pd, 4096, {"LOCAL_WRITE"});
  t.must(ctl::PostSend{c.remote_qpn, {send_wr(1, buf, 0, 64)}}, "post_send");
  ctx.expect(&c, {"SEND_ONLY", {{"psn", "0"}}}, ctx.timing().expect_window());
  step(ctx, "one forged ACK with the QP's number and the SEND's PSN");
  ack(ctx, c, 0, 1);
  ctx.collect(&c, ctx.timing().silence_window());
  const auto r = t.setup(ctl::PollCq{c.target_cq, 1});
  const bool completed = !r.wc.empty() && r.wc[0].status == "SUCCESS";
  ctx.measure({"outstanding SEND after one forged ACK",
               r.wc.empty() ? "not completed"
                            : fmt::format("completed: wr_id {} {} {}", r.wc[0].wr_id,
                                          r.wc[0].opcode, r.wc[0].status),
               "a finding when it completes", completed});
}

constexpr CaseFile kFile{kSource};

const std::string kRedmark = "ReDMArk, USENIX Security 2021";

}  // namespace

void add_sec_cpp_cases(engine::Catalogue& catalogue) {
  kFile.add(
      catalogue, "sec/qpn-predictability",
      "The QPNs a target hands out are not predictable from one another",
      fmt::format(
          "{} connections are made to the responder one after the other and kept open; their "
          "QPNs (from the REPs) are measured: the most common difference and how often it occurs, "
          "repeats, a per-bit entropy estimate and the entropy of the differences. Predictable "
          "(one step in half of the differences or more, a repeat, or under 12 of 24 bits) is a "
          "finding: an off-path sender that knows its own QPN guesses the next one ({}).",
          kSamples, kRedmark),
      {"9.2; 12.7.23",
       "The destination QP number is the only thing that names a connection's QP to a sender; a "
       "QPN guessed from another is what an off-path attacker needs, so QPNs should not follow "
       "one another",
       "thresholds: " + kRedmark +
           " (sequential QPNs on every NIC tested); unchecked: 9.2, 12.7.23"},
      "SHOULD", {"listener"}, qpn_predictability);
  kFile.add(
      catalogue, "sec/start-psn-predictability",
      "The Starting PSNs of a target's REPs are not predictable from one another",
      fmt::format("{} connections are made to the responder; the Starting PSNs of their REPs are "
                  "measured as the QPNs are (step, repeats, entropy). Predictable starting PSNs "
                  "let an off-path sender place a packet in the window ({}).",
                  kSamples, kRedmark),
      {"12.7.23; 12.7.36; 9.7.1",
       "Each side announces the Starting PSN the other sends from; a PSN guessed from other "
       "connections puts a forged packet in the window, so starting PSNs should be random",
       "12.7.23 and 12.7.36 (each side sends from the Starting PSN the other announced): Linux "
       "cm.c; thresholds: " +
           kRedmark + "; unchecked: 9.7.1"},
      "SHOULD", {"listener"}, psn_predictability);
  kFile.add(
      catalogue, "sec/rkey-predictability",
      "The R_Keys of successive memory regions are not predictable from one another",
      fmt::format("{} regions are registered through control and kept until all are made; their "
                  "R_Keys are measured (step, repeats, per-bit entropy of 32 bits). ReDMArk "
                  "found R_Keys that differ by a constant step: one key seen gives the next.",
                  kSamples),
      {"10.6",
       "An R_Key is the only credential of a remote access to a region; one guessed from another "
       "reaches memory never shared, so R_Keys should not follow one another",
       "thresholds: " + kRedmark + " (sequential R_Keys); unchecked: 10.6"},
      "SHOULD", {"control"}, rkey_predictability);
  kFile.add(
      catalogue, "sec/rkey-invalid-after-dereg",
      "A deregistered region's R_Key is refused on the wire",
      "A region with REMOTE_WRITE is registered and a WRITE through its R_Key is ACKed; after "
      "dereg_mr a WRITE through the same R_Key must get NAK remote access error.",
      {"10.6; 9.9.3 C9-222.1.1; 9.7.5.2",
       "Once a region is deregistered its R_Key names no memory: a remote access through it is an "
       "R_Key violation, NAK remote access error",
       "NAK 0x62 for R_Key violations: Linux rxe; C9-222.1.1 (9.9.3.1.3): linux-rdma 2026-02; " +
           kRedmark + "; unchecked: 10.6, 9.7.5.2"},
      "MUST", {"control"}, rkey_invalid_after_dereg);
  kFile.add(
      catalogue, "sec/rkey-reuse",
      "A region registered after a dereg_mr does not get a deregistered region's R_Key",
      "Eight rounds of reg_mr, dereg_mr and reg_mr of the same size: the new region must not get "
      "the R_Key just deregistered nor an earlier one, and a WRITE through a deregistered R_Key "
      "must still be refused. A key handed out again lets a peer that kept it reach the new "
      "region (ReDMArk).",
      {"10.6",
       "A deregistered region's R_Key should not name the next region registered: a peer that "
       "kept it would reach memory never shared with it",
       "thresholds: " + kRedmark + " (R_Key reuse); unchecked: 10.6"},
      "SHOULD", {"control"}, rkey_reuse);
  kFile.add(
      catalogue, "sec/forged-packet",
      "What one forged packet does: a QPN guessed from the sender's own, and a class C error "
      "at the expected PSN",
      "Measured, not graded: the attacker's connection and the victim's are made one after the "
      "other; whether the victim's QPN is the attacker's + 1, whether one forged SEND_MIDDLE (no "
      "FIRST) a few PSNs ahead leaves the victim's connection alive, and whether one at the "
      "expected PSN kills it (a class C error puts the QP in Error, as IBA specifies).",
      {"9.9.3; 9.7.5.2",
       "An out-of-sequence opcode at the expected PSN is a class C responder error: NAK invalid "
       "request and the QP to Error; one ahead of it is a PSN sequence error (class B); nothing "
       "authenticates the sender, so this is measured as exposure",
       "class C errors (9.9.3.1.3): linux-rdma 2026-02; " + kRedmark + "; unchecked: 9.7.5.2"},
      "MAY", {"responder"}, forged_packet);
  kFile.add(
      catalogue, "sec/forged-ack",
      "Whether one forged ACK completes a SEND its responder never received",
      "Measured, not graded: the target (as requester) posts a SEND, which the tester receives "
      "and treats as lost; one ACK with the QP's number and the SEND's PSN follows, as an "
      "off-path sender would forge it, and the completion is read.",
      {"9.7.5.1",
       "An ACK acknowledges every outstanding request up to its PSN; nothing authenticates it, "
       "so a forged one with the right QPN and PSN completes work: measured as exposure",
       kRedmark + "; unchecked: 9.7.5.1"},
      "MAY", {"control"}, forged_ack);
}

}  // namespace roceconf::cases
