#include "cases/cpp/control_helpers.h"

#include "control/fields.h"
#include "dissector/address_text.h"
#include "suite/engine/frame_builder.h"

namespace roceconf::cases::ctlcase {

std::string pattern_hex(std::uint32_t seed, std::size_t len) {
  return ctl::to_hex(engine::fill_pattern(seed, len));
}

// The QP's state from query_qp must be `want`.
void expect_state(CaseContext& ctx, const Connection& c, std::string_view want) {
  const auto r = Control(ctx).setup(ctl::QueryQp{c.remote_qpn});
  const std::string got = r.attr.qp_state.value_or("?");
  if (got != want)
    ctx.fail(fmt::format("query_qp: the QP is in {}, expected {}", got, want),
             {{"qp.qp_state", std::string(want), got}});
}

namespace {

std::string shown(const WcWant& w) {
  std::string out;
  auto add = [&](std::string_view key, const auto& value) {
    if (value) out += fmt::format("{}{}={}", out.empty() ? "" : " ", key, *value);
  };
  add("wr_id", w.wr_id);
  add("status", w.status);
  add("opcode", w.opcode);
  add("byte_len", w.byte_len);
  add("qp_num", w.qp_num);
  return out;
}

}  // namespace

// The next completion of `cq` must have these fields.
ctl::WorkCompletion expect_wc(CaseContext& ctx, std::uint32_t cq, const WcWant& want) {
  const auto r = Control(ctx).setup(ctl::PollCq{cq, 1});
  if (r.wc.empty())
    ctx.fail(fmt::format("poll_cq: expected a completion {}, the CQ is empty", shown(want)),
             {{"cq", shown(want), "empty"}});
  const ctl::WorkCompletion& wc = r.wc[0];
  std::vector<report::FieldDiff> diffs;
  auto compare = [&](std::string_view key, const auto& expected, const auto& got) {
    if (expected && *expected != got)
      diffs.push_back(
          {fmt::format("wc.{}", key), fmt::format("{}", *expected), fmt::format("{}", got)});
  };
  compare("wr_id", want.wr_id, wc.wr_id);
  compare("status", want.status, wc.status);
  compare("opcode", want.opcode, wc.opcode);
  compare("byte_len", want.byte_len, wc.byte_len);
  compare("qp_num", want.qp_num, wc.qp_num);
  if (!diffs.empty()) ctx.fail("poll_cq: the completion differs: " + ctl::describe(wc), diffs);
  return wc;
}

void expect_cq_empty(CaseContext& ctx, std::uint32_t cq) {
  const auto r = Control(ctx).setup(ctl::PollCq{cq, 1});
  if (!r.wc.empty())
    ctx.fail("poll_cq: expected no more completions, got " + ctl::describe(r.wc[0]),
             {{"cq", "empty", ctl::describe(r.wc[0])}});
}

// A memory region registered through control: buffers for the target's own work requests, or a
// region with chosen rights.
ctl::RegMrReply reg_mr(CaseContext& ctx, std::uint32_t pd, std::uint32_t length,
                       std::vector<std::string> access) {
  return Control(ctx).setup(ctl::RegMr{pd, length, std::move(access), std::nullopt});
}

void write_mr(CaseContext& ctx, const ctl::RegMrReply& mr, std::uint64_t offset,
              std::span<const std::uint8_t> data) {
  Control(ctx).setup(ctl::WriteMr{mr.handle, offset, {data.begin(), data.end()}});
}

std::string read_mr(CaseContext& ctx, const ctl::RegMrReply& mr, std::uint64_t offset,
                    std::uint64_t len) {
  return ctl::to_hex(Control(ctx).setup(ctl::ReadMr{mr.handle, offset, len}).data);
}

ctl::SendWr send_wr(std::uint64_t wr_id, const ctl::RegMrReply& mr, std::uint64_t offset,
                    std::uint32_t length) {
  ctl::SendWr wr;
  wr.wr_id = wr_id;
  wr.opcode = "SEND";
  wr.send_flags = {"SIGNALED"};
  wr.sg_list = {{mr.addr + offset, length, mr.lkey}};
  return wr;
}

void expect_write_refused(CaseContext& ctx, Connection& c, const ctl::RegMrReply& mr,
                          std::uint32_t psn, std::uint32_t fill, std::string_view changed) {
  const std::string p = std::to_string(psn);
  ctx.send(c, "RDMA_WRITE_ONLY",
           {{"psn", p},
            {"ackreq", "1"},
            {"len", "64"},
            {"fill", "0x99"},
            {"va", std::to_string(mr.addr)},
            {"rkey", std::to_string(mr.rkey)}});
  ctx.expect(&c, {"NAK", {{"psn", p}, {"syndrome", "rem_acc_err"}}}, ctx.timing().expect_window());
  const std::string got = read_mr(ctx, mr, 0, 64);
  if (got != pattern_hex(fill, 64))
    ctx.fail(std::string(changed), {{"memory", pattern_hex(fill, 64), got}});
}

// The attributes of the three transitions RESET->INIT->RTR->RTS towards the tester's QP `c`.
ctl::QpAttr state_attr(std::string state) {
  ctl::QpAttr a;
  a.qp_state = std::move(state);
  return a;
}
ctl::QpAttr init_attr() {
  ctl::QpAttr a = state_attr("INIT");
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = std::vector<std::string>{"REMOTE_WRITE", "REMOTE_READ"};
  return a;
}
ctl::QpAttr rtr_attr(CaseContext& ctx, const Connection& c) {
  const engine::Endpoint tester = ctx.target().tester();
  ctl::QpAttr a = state_attr("RTR");
  a.path_mtu = c.pmtu;
  a.dest_qp_num = c.local_qpn;
  a.rq_psn = c.next_psn;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 1;
  ctl::AddressVector av;
  av.dgid = format_ipv4(tester.ip);
  av.dmac = format_mac(tester.mac);
  av.hop_limit = 64;
  a.ah_attr = std::move(av);
  return a;
}
ctl::QpAttr rts_attr(std::uint32_t sq_psn) {
  ctl::QpAttr a = state_attr("RTS");
  a.sq_psn = sq_psn;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 1;
  return a;
}

// An RC QP on the given CQ, in RESET, recorded in `c` (so close_all destroys it).
void create_rc_qp(CaseContext& ctx, Connection& c, std::uint32_t pd, std::uint32_t cq,
                  std::uint32_t max_recv) {
  ctl::QpCap cap;
  cap.max_send_wr = 16;
  cap.max_recv_wr = max_recv;
  const auto qp = Control(ctx).setup(ctl::CreateQp{"RC", pd, cq, cq, cap, std::nullopt});
  c.remote_qpn = qp.qp_num;
  c.target_cq = cq;
  c.target_pd = pd;
  c.via_control = true;
  c.state = engine::ConnState::kEstablished;
}

// RESET -> RTS as set-up (a refusal makes the case INCONCLUSIVE).
void bring_up(CaseContext& ctx, Connection& c, std::uint32_t sq_psn) {
  Control t(ctx);
  t.setup(ctl::ModifyQp{c.remote_qpn, init_attr()});
  t.setup(ctl::ModifyQp{c.remote_qpn, rtr_attr(ctx, c)});
  t.setup(ctl::ModifyQp{c.remote_qpn, rts_attr(sq_psn)});
  c.remote_psn0 = sq_psn;
}

void bring_up_from_init(CaseContext& ctx, Connection& c) {
  const std::uint32_t sq_psn = static_cast<std::uint32_t>(ctx.random()()) & 0xFFFFFF;
  Control t(ctx);
  t.setup(ctl::ModifyQp{c.remote_qpn, rtr_attr(ctx, c)});
  t.setup(ctl::ModifyQp{c.remote_qpn, rts_attr(sq_psn)});
  c.remote_psn0 = sq_psn;
}

void post_recvs(CaseContext& ctx, const Connection& c, const ctl::RegMrReply& mr,
                std::uint32_t count, std::uint32_t len) {
  std::vector<ctl::RecvWr> wrs;
  for (std::uint32_t i = 0; i < count; ++i)
    wrs.push_back({100 + i, {{mr.addr + std::uint64_t{i} * len, len, mr.lkey}}});
  Control(ctx).setup(ctl::PostRecv{c.remote_qpn, std::move(wrs)});
}

// The tester's ACK of the target's request with PSN `psn` (relative to the target's start).
void ack(CaseContext& ctx, Connection& c, std::uint32_t psn, std::uint32_t msn) {
  ctx.send(c, "ACKNOWLEDGE",
           {{"psn", std::to_string(psn)}, {"syndrome", "0x1f"}, {"msn", std::to_string(msn)}});
}

}  // namespace roceconf::cases::ctlcase
