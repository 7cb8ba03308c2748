// UD service cases: a target UD QP made through control, datagrams to and from the tester's
// emulated QP. The script language makes RC QPs only, so these are C++.
#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cases/builtin.h"
#include "cases/cpp/case_def.h"
#include "cases/cpp/control_helpers.h"
#include "dissector/address_text.h"
#include "suite/engine/frame_builder.h"

namespace roceconf::cases {

namespace {

using namespace ctlcase;  // NOLINT: the helpers are this file's vocabulary

constexpr std::string_view kSource = "cases/cpp/ud_cases.cc";
constexpr std::uint32_t kTargetQkey = 0x11110000;  // the target QP's own Q_Key
constexpr std::uint32_t kGrhSpace = 40;            // a UD receive buffer starts with the GRH

void step(CaseContext& ctx, std::string_view what) {
  ctx.set_step(fmt::format("{}: {}", kSource, what));
}

std::string hex(std::uint64_t v) {
  return fmt::format("{:#x}", v);
}

struct UdQp {
  std::uint32_t cq = 0, pd = 0;
  ctl::RegMrReply buf;
};

// A target UD QP with Q_Key kTargetQkey in RTS, `recv` receives of 512 bytes posted; `c` names it
// and the tester's emulated QP.
UdQp open_ud(CaseContext& ctx, Connection& c, std::uint32_t recv) {
  Control t(ctx);
  UdQp u;
  u.pd = t.setup(ctl::AllocPd{}).pd;
  u.cq = t.setup(ctl::CreateCq{32}).cq;
  ctl::QpCap cap;
  cap.max_send_wr = 8;
  cap.max_recv_wr = 8;
  const auto qp = t.setup(ctl::CreateQp{"UD", u.pd, u.cq, u.cq, cap, std::nullopt});
  c.remote_qpn = qp.qp_num;
  c.target_cq = u.cq;
  c.target_pd = u.pd;
  c.via_control = true;
  c.state = engine::ConnState::kEstablished;
  ctl::QpAttr init = state_attr("INIT");
  init.pkey_index = 0;
  init.port_num = 1;
  init.qkey = kTargetQkey;
  t.setup(ctl::ModifyQp{c.remote_qpn, init});
  t.setup(ctl::ModifyQp{c.remote_qpn, state_attr("RTR")});
  ctl::QpAttr rts = state_attr("RTS");
  rts.sq_psn = c.remote_psn0;
  t.setup(ctl::ModifyQp{c.remote_qpn, rts});
  u.buf = reg_mr(ctx, u.pd, 16384, {"LOCAL_WRITE"});  // receives below 4096, sends above
  std::vector<ctl::RecvWr> wrs;
  for (std::uint32_t i = 0; i < recv; ++i)
    wrs.push_back({100 + i, {{u.buf.addr + 512ULL * i, 512, u.buf.lkey}}});
  if (!wrs.empty()) t.setup(ctl::PostRecv{c.remote_qpn, std::move(wrs)});
  return u;
}

// A UD SEND from the target's QP to the tester's emulated QP.
ctl::SendWr ud_send(CaseContext& ctx, const Connection& c, const UdQp& u, std::uint64_t wr_id,
                    std::uint32_t length, std::uint32_t qkey) {
  const engine::Endpoint tester = ctx.target().tester();
  ctl::SendWr wr = send_wr(wr_id, u.buf, 4096, length);
  ctl::SendWr::Ud ud;
  ud.ah.dgid = format_ipv4(tester.ip);
  ud.ah.dmac = format_mac(tester.mac);
  ud.ah.hop_limit = 64;
  ud.remote_qpn = c.local_qpn;
  ud.remote_qkey = qkey;
  wr.ud = std::move(ud);
  return wr;
}

// ---- controlled Q_Key ----------------------------------------------------------------------

void controlled_qkey(CaseContext& ctx) {
  Control t(ctx);
  Connection& c = ctx.new_connection("c");
  step(ctx, "a target UD QP with Q_Key 0x11110000");
  const UdQp u = open_ud(ctx, c, 0);
  write_mr(ctx, u.buf, 4096, engine::fill_pattern(0x5A, 64));

  step(ctx, "a UD SEND with WR Q_Key 0x80001234 (high bit set) carries the QP's own Q_Key");
  t.must(ctl::PostSend{c.remote_qpn, {ud_send(ctx, c, u, 1, 64, 0x80001234)}}, "post_send");
  ctx.expect(&c,
             {"UD_SEND_ONLY",
              {{"deth.qkey", hex(kTargetQkey)}, {"deth.srcqp", hex(c.remote_qpn)}, {"len", "64"}}},
             ctx.timing().expect_window());
  expect_wc(ctx, u.cq, {.wr_id = 1, .status = "SUCCESS", .opcode = "SEND"});

  step(ctx, "a UD SEND with WR Q_Key 0x00002222 carries that Q_Key");
  t.must(ctl::PostSend{c.remote_qpn, {ud_send(ctx, c, u, 2, 64, 0x2222)}}, "post_send");
  ctx.expect(&c, {"UD_SEND_ONLY", {{"deth.qkey", "0x2222"}, {"len", "64"}}},
             ctx.timing().expect_window());
  expect_wc(ctx, u.cq, {.wr_id = 2, .status = "SUCCESS", .opcode = "SEND"});
}

// ---- Q_Key violation -----------------------------------------------------------------------

void qkey_mismatch_dropped(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "a target UD QP with Q_Key 0x11110000 and two receives");
  const UdQp u = open_ud(ctx, c, 2);
  const std::string srcqp = hex(c.local_qpn);

  step(ctx, "a datagram with Q_Key 0x11110001 is dropped: no receive completes");
  ctx.send(c, "UD_SEND_ONLY",
           {{"psn", "0"}, {"qkey", "0x11110001"}, {"srcqp", srcqp}, {"len", "32"}, {"fill", "1"}});
  ctx.wait(ctx.timing().silence_window());
  expect_cq_empty(ctx, u.cq);

  step(ctx, "the same datagram with the QP's Q_Key lands in the first receive, after the GRH");
  ctx.send(
      c, "UD_SEND_ONLY",
      {{"psn", "1"}, {"qkey", hex(kTargetQkey)}, {"srcqp", srcqp}, {"len", "32"}, {"fill", "2"}});
  ctx.wait(ctx.timing().silence_window());
  expect_wc(ctx, u.cq,
            {.wr_id = 100, .status = "SUCCESS", .opcode = "RECV", .byte_len = 32 + kGrhSpace});
  const std::string got = read_mr(ctx, u.buf, kGrhSpace, 32);
  if (got != pattern_hex(2, 32))
    ctx.fail("the datagram's payload is not in the receive buffer after the GRH",
             {{"memory", pattern_hex(2, 32), got}});
  // RoCEv2 over IPv4 puts the IPv4 header in the second half of the 40 bytes (A17.4.5.2).
  const std::string ip = read_mr(ctx, u.buf, kGrhSpace - 20, 20);
  if (ip.substr(0, 2) != "45" || ip.substr(18, 2) != "11")
    ctx.fail("the IPv4 header of the datagram is not at offset 20 of the receive buffer",
             {{"memory[20..40]", "45.. (IPv4, IHL 5) with protocol 0x11", ip}});
  expect_cq_empty(ctx, u.cq);
}

// ---- UD message larger than the MTU --------------------------------------------------------

void oversize_send_silent(CaseContext& ctx) {
  Control t(ctx);
  Connection& c = ctx.new_connection("c");
  step(ctx, "a target UD QP; the port's active MTU from hello");
  const auto hello = t.setup(ctl::Hello{});
  if (!hello.port || hello.port->active_mtu == 0)
    ctx.inconclusive("the target's hello gives no active MTU");
  const std::uint32_t mtu = hello.port->active_mtu;
  const UdQp u = open_ud(ctx, c, 0);

  step(ctx, fmt::format("a UD SEND of MTU + 1 = {} bytes: no packet, and no error", mtu + 1));
  t.must(ctl::PostSend{c.remote_qpn, {ud_send(ctx, c, u, 1, mtu + 1, kTargetQkey)}}, "post_send");
  ctx.expect_nothing(&c, ctx.timing().silence_window());
  expect_wc(ctx, u.cq, {.wr_id = 1, .status = "SUCCESS"});

  step(ctx, "the QP still sends: a UD SEND of the MTU goes out");
  t.must(ctl::PostSend{c.remote_qpn, {ud_send(ctx, c, u, 2, mtu, kTargetQkey)}}, "post_send");
  ctx.expect(&c, {"UD_SEND_ONLY", {{"len", std::to_string(mtu)}}}, ctx.timing().expect_window());
  expect_wc(ctx, u.cq, {.wr_id = 2, .status = "SUCCESS", .opcode = "SEND"});
}

void add(engine::Catalogue& catalogue, std::string id, std::string title, std::string description,
         Cite cite, std::string level, std::function<void(CaseContext&)> run) {
  add_case(catalogue, kSource, std::move(id), std::move(title), std::move(description),
           std::move(cite), std::move(level), {"control"}, std::move(run));
}

}  // namespace

void add_ud_cpp_cases(engine::Catalogue& catalogue) {
  add(catalogue, "ud/controlled-qkey",
      "A UD send whose WR Q_Key has the high bit set carries the QP's own Q_Key",
      "The target's UD QP has Q_Key 0x11110000. A UD SEND posted with Q_Key 0x80001234 must "
      "carry 0x11110000 in its DETH (a controlled Q_Key, which a consumer cannot forge), and one "
      "posted with 0x00002222 must carry 0x2222; the DETH's source QP is the target's QP.",
      {"10.2.4 C10-15; 9.8.2",
       "A Q_Key with the high-order bit set in a UD work request is replaced by the QP's own "
       "Q_Key; other Q_Keys are sent as given",
       "C10-15: WinOFED al_mad.c; controlled Q_Key: mlx4 and rxe; unchecked: 10.2.4, 9.8.2"},
      "MUST", controlled_qkey);
  add(catalogue, "ud/qkey-mismatch-dropped",
      "A datagram whose Q_Key is not the UD QP's is dropped; the right Q_Key is received",
      "A UD SEND to the target's UD QP with a Q_Key one off its own must consume no receive; the "
      "same datagram with the QP's Q_Key completes the first receive with the payload placed "
      "after the 40 bytes the GRH takes, the IPv4 header in the second half of them.",
      {"10.2.4; 9.6; 11.4.2; A17.4.5.2",
       "A UD QP accepts only datagrams carrying its Q_Key (a Q_Key violation is dropped "
       "silently); a received datagram is placed after the 40-byte GRH space, whose second half "
       "holds the IPv4 header",
       "Q_Key check: Linux rxe check_keys; GRH space: Linux rxe, ibv_post_recv(3); A17.4.5.2: "
       "Annex A17 text; unchecked: 10.2.4, 9.6, 11.4.2"},
      "MUST", qkey_mismatch_dropped);
  add(catalogue, "ud/oversize-send-silent",
      "A UD send larger than the port MTU emits no packet and completes without error",
      "A UD SEND of one byte more than the port's active MTU must not reach the wire and must not "
      "complete in error; a UD SEND of exactly the MTU then goes out.",
      {"C10-93.1.1; 9.8.2",
       "If a UD message is longer than the port's MTU the CI emits no packet for it and "
       "generates no error",
       "C10-93.1.1: Linux rxe rxe_req.c, linux-rdma 2023-07; unchecked: 9.8.2"},
      "MUST", oversize_send_silent);
}

}  // namespace roceconf::cases
