// Verbs rules graded through the control API: work posted in states that cannot take it, a CQ
// destroyed while in use, a region of another protection domain, the port's GID table, and the
// CM's active release (the target sends the DREQ).
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

constexpr std::string_view kSource = "cases/cpp/verbs_cases.cc";

void step(CaseContext& ctx, std::string_view what) {
  ctx.set_step(fmt::format("{}: {}", kSource, what));
}

// `request` must be refused; FAILs (with what was accepted) otherwise.
template <typename Request>
void must_refuse(CaseContext& ctx, const Request& request, std::string_view what) {
  if (auto reply = ctx.call(request); reply)
    ctx.fail(fmt::format("{}: accepted, expected an immediate error", what),
             {{std::string(what), "refused (EINVAL or another error)", "accepted"}});
}

ctl::RecvWr recv_wr(std::uint64_t wr_id, const ctl::RegMrReply& mr, std::uint32_t len) {
  return {wr_id, {{mr.addr, len, mr.lkey}}};
}

// An RC QP in RESET for `c`, on a CQ of its own, and a 4 KiB buffer in its PD.
struct QpInReset {
  std::uint32_t cq = 0;
  ctl::RegMrReply buf;
};
QpInReset qp_in_reset(CaseContext& ctx, Connection& c) {
  step(ctx, "create an RC QP (RESET) and a buffer");
  Control t(ctx);
  const std::uint32_t pd = t.setup(ctl::AllocPd{}).pd;
  const std::uint32_t cq = t.setup(ctl::CreateCq{16}).cq;
  create_rc_qp(ctx, c, pd, cq, 4);
  return {cq, reg_mr(ctx, pd, 4096, {"LOCAL_WRITE"})};
}

// ---- post in a state that cannot take it --------------------------------------------------

// Post Send in RESET, INIT and RTR is refused at once; nothing goes out; in RTS it works and in
// ERR it completes flushed.
void post_send_before_rts_refused(CaseContext& ctx) {
  Control t(ctx);
  Connection& c = ctx.new_connection("c");
  const auto [cq, buf] = qp_in_reset(ctx, c);
  write_mr(ctx, buf, 0, engine::fill_pattern(0x21, 32));

  step(ctx, "post_send in RESET");
  must_refuse(ctx, ctl::PostSend{c.remote_qpn, {send_wr(1, buf, 0, 32)}}, "post_send in RESET");
  step(ctx, "post_send in INIT");
  t.setup(ctl::ModifyQp{c.remote_qpn, init_attr()});
  must_refuse(ctx, ctl::PostSend{c.remote_qpn, {send_wr(2, buf, 0, 32)}}, "post_send in INIT");
  step(ctx, "post_send in RTR");
  t.setup(ctl::ModifyQp{c.remote_qpn, rtr_attr(ctx, c)});
  must_refuse(ctx, ctl::PostSend{c.remote_qpn, {send_wr(3, buf, 0, 32)}}, "post_send in RTR");

  step(ctx, "RTS: nothing of the refused WRs is sent");
  const std::uint32_t sq_psn = static_cast<std::uint32_t>(ctx.random()()) & 0xFFFFFF;
  t.setup(ctl::ModifyQp{c.remote_qpn, rts_attr(sq_psn)});
  c.remote_psn0 = sq_psn;
  ctx.expect_nothing(&c, ctx.timing().silence_window());
  expect_cq_empty(ctx, cq);

  step(ctx, "post_send in RTS is sent and completes");
  t.must(ctl::PostSend{c.remote_qpn, {send_wr(4, buf, 0, 32)}}, "post_send in RTS");
  ctx.expect(&c, {"SEND_ONLY", {{"psn", "0"}, {"data", pattern_hex(0x21, 32)}}},
             ctx.timing().expect_window());
  ack(ctx, c, 0, 1);
  ctx.wait(ctx.timing().silence_window());
  expect_wc(ctx, cq, {.wr_id = 4, .status = "SUCCESS", .opcode = "SEND"});

  step(ctx, "post_send in ERR completes flushed");
  t.setup(ctl::ModifyQp{c.remote_qpn, state_attr("ERR")});
  t.must(ctl::PostSend{c.remote_qpn, {send_wr(5, buf, 0, 32)}}, "post_send in ERR");
  expect_wc(ctx, cq, {.wr_id = 5, .status = "WR_FLUSH_ERR"});
  ctx.expect_nothing(&c, ctx.timing().silence_window());
}

// Post Receive in RESET is refused; from INIT on a receive is taken and used.
void post_recv_in_reset_refused(CaseContext& ctx) {
  Control t(ctx);
  Connection& c = ctx.new_connection("c");
  const auto [cq, buf] = qp_in_reset(ctx, c);

  step(ctx, "post_recv in RESET");
  must_refuse(ctx, ctl::PostRecv{c.remote_qpn, {recv_wr(1, buf, 256)}}, "post_recv in RESET");

  step(ctx, "post_recv in INIT, then RTR and RTS");
  t.setup(ctl::ModifyQp{c.remote_qpn, init_attr()});
  t.must(ctl::PostRecv{c.remote_qpn, {recv_wr(2, buf, 256)}}, "post_recv in INIT");
  bring_up_from_init(ctx, c);

  step(ctx, "a SEND takes the receive posted in INIT, not one posted in RESET");
  ctx.send(c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "48"}});
  ctx.expect(&c, {"ACK", {{"psn", "0"}, {"syndrome", "ack"}}}, ctx.timing().expect_window());
  expect_wc(ctx, cq, {.wr_id = 2, .status = "SUCCESS", .opcode = "RECV", .byte_len = 48});
  step(ctx, "a second SEND finds no receive: RNR NAK");
  ctx.send(c, "SEND_ONLY", {{"psn", "1"}, {"ackreq", "1"}, {"len", "48"}});
  ctx.expect(&c, {"RNR", {{"psn", "1"}}}, ctx.timing().expect_window());
  expect_cq_empty(ctx, cq);
}

// ---- CQ destroyed in use ------------------------------------------------------------------

void destroy_cq_in_use_refused(CaseContext& ctx) {
  Control t(ctx);
  Connection& c = ctx.new_connection("c");
  step(ctx, "create a CQ and an RC QP on it");
  const std::uint32_t pd = t.setup(ctl::AllocPd{}).pd;
  const std::uint32_t cq = t.setup(ctl::CreateCq{16}).cq;
  create_rc_qp(ctx, c, pd, cq, 4);

  step(ctx, "destroy_cq while the QP uses it");
  must_refuse(ctx, ctl::DestroyCq{cq}, "destroy_cq of a CQ in use");

  step(ctx, "the CQ still works: the QP completes a receive on it");
  const auto buf = reg_mr(ctx, pd, 4096, {"LOCAL_WRITE"});
  t.setup(ctl::ModifyQp{c.remote_qpn, init_attr()});
  t.setup(ctl::PostRecv{c.remote_qpn, {recv_wr(7, buf, 256)}});
  bring_up_from_init(ctx, c);
  ctx.send(c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "16"}});
  ctx.expect(&c, {"ACK", {{"psn", "0"}, {"syndrome", "ack"}}}, ctx.timing().expect_window());
  expect_wc(ctx, cq, {.wr_id = 7, .status = "SUCCESS", .opcode = "RECV", .byte_len = 16});

  step(ctx, "destroy_qp, then destroy_cq succeeds");
  t.must(ctl::DestroyQp{c.remote_qpn}, "destroy_qp");
  c.via_control = false;  // destroyed: close_all has nothing to undo
  c.state = engine::ConnState::kClosed;
  t.must(ctl::DestroyCq{cq}, "destroy_cq after its QP is gone");
}

// ---- a region of another protection domain -------------------------------------------------

void mr_other_pd_denied(CaseContext& ctx) {
  Control t(ctx);
  Connection& c = ctx.new_connection("c");
  step(ctx, "open c; a second PD with a region open to remote writes and reads");
  ctx.open(c, {});
  const std::uint32_t other_pd = t.setup(ctl::AllocPd{}).pd;
  const auto foreign = reg_mr(ctx, other_pd, 4096, {"LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ"});
  write_mr(ctx, foreign, 0, engine::fill_pattern(0x44, 64));

  step(ctx, "a SEND on the connection's own PD is ACKed");
  ctx.send(c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "16"}});
  ctx.expect(&c, {"ACK", {{"psn", "0"}, {"syndrome", "ack"}}}, ctx.timing().expect_window());
  step(ctx, "WRITE through the other PD's R_Key; its region is unchanged");
  expect_write_refused(ctx, c, foreign, 1, 0x44,
                       "a WRITE through a region of another PD changed it");
}

// ---- the port's GID table ------------------------------------------------------------------

bool known_gid_type(std::string_view type) {
  return type == "IB" || type == "RoCEv1" || type == "RoCEv2";
}

void gid_table(CaseContext& ctx) {
  Control t(ctx);
  step(ctx, "hello: the port's GID table");
  const auto first = t.setup(ctl::Hello{});
  if (!first.port || first.port->gids.empty())
    ctx.inconclusive("the target's hello gives no GID table");
  const auto& gids = first.port->gids;
  std::vector<report::FieldDiff> diffs;
  const ctl::GidEntry* zero = nullptr;
  bool v2_mapped = false;
  for (const auto& e : gids) {
    if (e.index == 0) zero = &e;
    if (!known_gid_type(e.type))
      diffs.push_back({fmt::format("gid[{}].type", e.index), "IB, RoCEv1 or RoCEv2",
                       e.type.empty() ? "(none)" : e.type});
    if (e.type == "RoCEv2" && first.port->ipv4.size() && e.gid.ends_with(first.port->ipv4))
      v2_mapped = true;
  }
  if (!diffs.empty())
    ctx.fail("a GID table entry has no GID type (each is IB, RoCE v1 or RoCEv2)", diffs);
  if (!zero) ctx.fail("GID index 0 is empty", {{"gid[0]", "the port's invariant GID", "(none)"}});
  const auto gid0 = parse_ipv6(zero->gid);
  if (!gid0 || (*gid0)[0] != 0xFE || ((*gid0)[1] & 0xC0) != 0x80)
    ctx.fail("GID index 0 is not the port's link-local default GID (fe80::/64)",
             {{"gid[0]", "fe80::/64 and the port's interface ID", zero->gid}});
  if (!first.port->ipv4.empty() && !v2_mapped)
    ctx.fail(fmt::format("no RoCEv2 GID carries the port's IPv4 address {}", first.port->ipv4),
             {{"gids", "a RoCEv2 entry ::ffff:" + first.port->ipv4, "none"}});

  step(ctx, "GID 0 does not change while QPs come and go");
  Connection& c = ctx.new_connection("c");
  ctx.open(c, {});
  ctx.send(c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "16"}});
  ctx.expect(&c, {"ACK", {{"psn", "0"}, {"syndrome", "ack"}}}, ctx.timing().expect_window());
  const auto second = t.setup(ctl::Hello{});
  std::string again = "(none)";
  if (second.port)
    for (const auto& e : second.port->gids)
      if (e.index == 0) again = e.gid + " " + e.type;
  if (again != zero->gid + " " + zero->type)
    ctx.fail("GID index 0 changed", {{"gid[0]", zero->gid + " " + zero->type, again}});
}

// ---- the target releases the connection ---------------------------------------------------

void target_initiates_dreq(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "accept c: the target connects to the tester");
  ctx.accept(c, {});
  step(ctx, "cm_disconnect: the target sends a DREQ with the connection's IDs");
  Control(ctx).must(ctl::CmDisconnect{c.remote_qpn}, "cm_disconnect");
  const auto dreq = ctx.expect(&c,
                               {"DREQ",
                                {{"cm.local_comm_id", fmt::format("{:#x}", c.remote_comm_id)},
                                 {"cm.remote_comm_id", fmt::format("{:#x}", c.local_comm_id)},
                                 {"cm.remote_qpn", fmt::format("{:#x}", c.local_qpn)}}},
                               ctx.timing().expect_window());
  step(ctx, "DREP: the target's cm_status becomes disconnected");
  const std::uint64_t tid = dreq.packet.mad ? dreq.packet.mad->header.tid : 0;
  ctx.cm_send(c, "DREP", {{"tid", fmt::format("{:#x}", tid)}});
  c.state = engine::ConnState::kClosed;
  ctx.expect_status(c, {{"state", "disconnected"}}, ctx.timing().expect_window());
}

constexpr CaseFile kFile{kSource};

}  // namespace

void add_verbs_cpp_cases(engine::Catalogue& catalogue) {
  kFile.add(
      catalogue, "qp/post-send-before-rts-refused",
      "Post Send in RESET, INIT and RTR is refused at once; in ERR the WR completes flushed",
      "An RC QP made through control is given a SEND WR in RESET, in INIT and in RTR; each "
      "post_send should be refused with an immediate error and nothing may reach the wire, not "
      "even once the QP is in RTS. A SEND posted in RTS goes out and completes; one posted in ERR "
      "completes with WR_FLUSH_ERR. Many drivers queue WRs posted in INIT or RTR instead, so this "
      "is graded as SHOULD.",
      {"10.8 C10-96; 11.4.1.1",
       "Post Send on a QP in Reset, Init or RTR returns an immediate error; on a QP in SQE or "
       "Error the WR completes flushed in error",
       "C10-96: opa-hfi1 rdmavt qp.c, rdma-unit-test qp_test.cc (notes that most drivers "
       "deviate); unchecked: 10.8, 11.4.1.1"},
      "SHOULD", {"control"}, post_send_before_rts_refused);
  kFile.add(
      catalogue, "qp/post-recv-in-reset-refused",
      "Post Receive in RESET is refused; a receive posted in INIT is the one a SEND takes",
      "An RC QP in RESET is given a receive WR: post_recv must be refused at once. In INIT a "
      "receive is accepted; once the QP is in RTR/RTS a SEND completes that receive, and a second "
      "SEND finds no receive (RNR NAK): the refused WR was not queued after all.",
      {"C10-97.2.1; 11.4.1.2",
       "Post Receive on a QP in Reset returns an immediate error; from Init on receives are "
       "queued",
       "C10-97.2.1: rdma-core providers/rxe rxe.c, linux-rdma 2023-04; unchecked: 11.4.1.2"},
      "MUST", {"control"}, post_recv_in_reset_refused);
  kFile.add(
      catalogue, "cq/destroy-in-use-refused",
      "Destroying a CQ that a QP still uses fails, and the CQ keeps working",
      "A CQ is the send and receive CQ of an RC QP. destroy_cq must be refused while the QP "
      "exists; the CQ must still take the QP's completions (a SEND's receive completes on it), "
      "and once the QP is destroyed destroy_cq succeeds.",
      {"C11-17; 11.2.8.3", "Destroy CQ fails while a work queue is still associated with the CQ",
       "C11-17: linux-rdma 2022-03; unchecked: 11.2.8.3"},
      "MUST", {"control"}, destroy_cq_in_use_refused);
  kFile.add(
      catalogue, "nak/mr-other-pd-denied",
      "A WRITE through the R_Key of a region of another protection domain gets NAK remote access "
      "error",
      "A second PD is allocated and a region with remote write and read rights registered in "
      "it. A WRITE on the connection's QP (of the first PD) through that region's R_Key must get "
      "NAK remote access error carrying its PSN, and the region must be unchanged.",
      {"10.6 C10-56; 9.9.3 C9-222.1.1; 9.7.5.2",
       "A remote access through a memory region whose PD is not the QP's PD fails: NAK remote "
       "access error, memory unchanged",
       "C10-56: linux-rdma 2020-09; NAK 0x62 for R_Key violations: Linux rxe; C9-222.1.1: "
       "linux-rdma 2026-02; unchecked: 10.6, 9.7.5.2"},
      "MUST", {"control"}, mr_other_pd_denied);
  kFile.add(
      catalogue, "qp/gid-table-typed",
      "GID index 0 is the port's invariant link-local GID, every entry has a GID type, and a "
      "RoCEv2 entry carries the port's IPv4 address",
      "The port's GID table from hello: index 0 must hold a link-local GID (fe80::/64), every "
      "entry must name its type (IB, RoCE v1 or RoCEv2), and one RoCEv2 entry must be the "
      "IPv4-mapped GID of the port's address. GID 0 must read the same after a QP has been made "
      "and used.",
      {"10.2.1 C10-2; CA17-26; A17.4.5",
       "GID index 0 holds the port's read-only invariant GID; on RoCEv2 every GID table entry "
       "carries a GID type",
       "C10-2: linux-rdma (Oracle) post; CA17-26: Annex A17 text; unchecked: 10.2.1, A17.4.5"},
      "MUST", {"control"}, gid_table);
  kFile.add(
      catalogue, "cm/target-initiates-dreq",
      "The target releases a connection with a DREQ carrying its IDs, and a DREP completes it",
      "The target connects to the tester (as cm/active-side-connects), then is told to "
      "disconnect. It must send a DREQ whose Local Communication ID is its own, Remote "
      "Communication ID the tester's and Remote QPN the tester's QP; after the tester's DREP its "
      "cm_status must say disconnected.",
      {"Table 112 o12-5; Table 113 o12-6; 12.9.7",
       "Either side may release a connection: the DREQ carries both communication IDs and the "
       "remote QPN, the DREP ends it",
       "Tables 106-113: Linux ibta_vol1_c12.h; o12-5, o12-6: p4ws mgmt.p4 (weak); unchecked: "
       "12.9.7"},
      "MUST", {"control"}, target_initiates_dreq);
}

}  // namespace roceconf::cases
