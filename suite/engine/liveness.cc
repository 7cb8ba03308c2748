#include "suite/engine/liveness.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "control/messages.h"
#include "dissector/names.h"
#include "dissector/packet.h"
#include "suite/engine/case_context.h"
#include "suite/engine/script.h"

namespace roceconf::engine {

namespace {

// Runs one case-language line on `ctx`; a FAIL comes back as its reason.
std::optional<std::string> try_line(CaseContext& ctx, const std::string& line) {
  auto st = parse_step("alive", line, [&](const std::string& n) { return ctx.has_connection(n); });
  if (!st) ctx.error(fmt::format("alive: '{}': {}", line, st.error()));
  try {
    run_step(ctx, *st);
  } catch (const CaseStop& stop) {
    if (stop.verdict != report::Verdict::kFail) throw;
    return std::string(stop.what());
  }
  return std::nullopt;
}

// The target QP's state through the control API, or empty without it.
std::string qp_state(CaseContext& ctx, const Connection& c) {
  if (!ctx.target().capabilities().control || !c.via_control) return {};
  auto q = ctx.call(control::QueryQp{.qp_num = c.remote_qpn});
  if (!q || !q->attr.qp_state) return {};
  return *q->attr.qp_state;
}

constexpr std::uint32_t kPsnsBack = 8;  // PSNs before the next one a probe tries

bool quiet_by_right(const std::string& state) {
  return state == "ERR" || state == "RESET" || state == "SQE";
}

}  // namespace

void learn_expected_psn(Connection& c, const Packet& p) {
  if (!p.bth || !p.aeth || p.bth->dqpn != c.local_qpn) return;
  const AethType type = aeth_type(p.aeth->syndrome);
  if (type == AethType::kAck)
    c.flow_psn = (p.bth->psn + 1) & 0xFFFFFF;
  else if (type == AethType::kNak || type == AethType::kRnrNak)
    c.flow_psn = p.bth->psn;
}

Liveness probe_connection(CaseContext& ctx, Connection& c) {
  const std::string conn = c.name;
  // Whatever is queued for c is an answer to what came before the probe, not to it.
  for (const auto& r : ctx.collect(&c, ctx.timing().silence_window(1)))
    learn_expected_psn(c, r.packet);
  // The responder: any answer at all to a SEND (an ACK, a PSN sequence NAK, an RNR NAK when it
  // has no receive) says it still reads its wire. The SEND goes at the tester's next PSN, then,
  // if that gets nothing, at each PSN before it: after one NAK a responder stays silent until
  // its expected PSN comes (C9-97), and a PSN it has done is a duplicate it must answer.
  const std::uint32_t next = c.next_psn, flow = c.flow_psn;
  std::vector<std::uint32_t> psns = {next};
  for (std::uint32_t back = 0; back <= kPsnsBack; ++back) {
    const std::uint32_t p = (flow - back) & 0xFFFFFF;
    if (std::find(psns.begin(), psns.end(), p) == psns.end()) psns.push_back(p);
  }
  bool answered = false;
  for (std::size_t i = 0; i < psns.size() && !answered; ++i) {
    const std::string line =
        i == 0 ? fmt::format("send {} SEND_ONLY ackreq=1 len=8", conn)
               : fmt::format("send {} SEND_ONLY ackreq=1 len=8 bth.psn={:#x}", conn, psns[i]);
    if (auto failed = try_line(ctx, line))
      return {false, fmt::format("a SEND to {} could not be sent: {}", conn, *failed)};
    answered = !try_line(ctx, fmt::format("expect {} any eventually", conn));
  }
  c.next_psn = c.flow_psn = (next + 1) & 0xFFFFFF;  // the first probe took `next`
  if (!answered) {
    const std::string state = qp_state(ctx, c);
    if (quiet_by_right(state))
      return {true, fmt::format("{}'s QP is {}: quiet by right", conn, state)};
    if (state.empty())
      return {false, fmt::format("{} answered no SEND at PSN {:#08x}, {:#08x} or the {} before it",
                                 conn, next, flow, kPsnsBack)};
    return {false, fmt::format("{}'s QP is {} and answered no SEND at PSN {:#08x}, {:#08x} or the "
                               "{} before it: wedged",
                               conn, state, next, flow, kPsnsBack)};
  }
  // The requester (control): a posted SEND must put a packet for c on the wire.
  if (ctx.target().capabilities().control && c.via_control) {
    if (auto failed = try_line(ctx, fmt::format("post send {} len=8 signaled=0 wr_id=77", conn)))
      return {false, fmt::format("{}'s QP took no WR: {}", conn, *failed)};
    if (try_line(ctx, fmt::format("expect {} any eventually", conn))) {
      const std::string after = qp_state(ctx, c);
      if (quiet_by_right(after))
        return {true, fmt::format("{}'s QP is {}: its requester is quiet by right", conn, after)};
      return {false, fmt::format("{}'s QP is {}, a WR was posted and its requester sent nothing: "
                                 "wedged",
                                 conn, after.empty() ? "unknown" : after)};
    }
  }
  return {true, fmt::format("{} answers", conn)};
}

Liveness probe_cm(CaseContext& ctx) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::string name = fmt::format("alive-cm-{}", attempt);
    if (!ctx.has_connection(name)) ctx.new_connection(name);
    if (auto failed = try_line(ctx, fmt::format("send {} ClassPortInfo", name)))
      return {false, fmt::format("a ClassPortInfo Get could not be sent: {}", *failed)};
    if (!try_line(ctx, fmt::format("expect {} ClassPortInfo eventually", name)))
      return {true, "the CM answers"};
  }
  return {false, "the CM answered none of three ClassPortInfo Gets"};
}

}  // namespace roceconf::engine
