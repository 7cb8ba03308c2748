// Verbs rules graded through the control API: work posted in states that cannot take it, a CQ
// destroyed while in use, a region of another protection domain, the port's GID table, and the
// CM's active release (the target sends the DREQ).
#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
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

// ---- the port's attributes on RoCE --------------------------------------------------------

// A RoCE port reports no LID, LMC or subnet manager (it has none) and no client reregistration
// (there is no SM to reregister with).
void port_attributes(CaseContext& ctx) {
  step(ctx, "hello: the port's attributes");
  const auto h = Control(ctx).setup(ctl::Hello{});
  if (!h.port || !h.port->lid || !h.port->port_cap_flags)
    ctx.inconclusive("the target's hello gives no port attributes (lid, port_cap_flags)");
  const ctl::PortInfo& p = *h.port;
  std::vector<report::FieldDiff> diffs;
  const auto zero = [&](std::string_view field, const std::optional<std::uint32_t>& v) {
    if (v && *v != 0) diffs.push_back({std::string(field), "0 (none on RoCE)", std::to_string(*v)});
  };
  zero("port.lid", p.lid);
  zero("port.sm_lid", p.sm_lid);
  zero("port.lmc", p.lmc);
  if (!p.link_layer.empty() && p.link_layer != "Ethernet")
    diffs.push_back({"port.link_layer", "Ethernet", p.link_layer});
  const auto& caps = *p.port_cap_flags;
  const auto has = [&](std::string_view flag) {
    return std::find(caps.begin(), caps.end(), flag) != caps.end();
  };
  if (has("SM")) diffs.push_back({"port.port_cap_flags", "no SM", "SM"});
  if (!diffs.empty())
    ctx.fail("the RoCE port reports InfiniBand subnet attributes (LID, LMC, SM)", diffs);
  if (has("CLIENT_REG_SUP"))
    ctx.fail("the RoCE port advertises client reregistration",
             {{"port.port_cap_flags", "no CLIENT_REG_SUP", "CLIENT_REG_SUP"}});
}

// ---- completion events ----------------------------------------------------------------------

// SKIPs unless the target's control API can count completion events.
void need_cq_events(CaseContext& ctx) {
  const auto h = Control(ctx).setup(ctl::Hello{});
  if (std::find(h.ops.begin(), h.ops.end(), "cq_events") == h.ops.end())
    ctx.skip("not supported: the target's control API has no cq_events (completion channel)");
}

// A SEND from the tester at `psn` (SE set or not) is ACKed and completes a receive on `cq`;
// then the completion channel must hold `events` events, all for `cq`.
void send_and_count(CaseContext& ctx, Connection& c, std::uint32_t psn, bool se, std::size_t events,
                    std::string_view when) {
  step(ctx, when);
  ctx.send(c, "SEND_ONLY",
           {{"psn", std::to_string(psn)}, {"ackreq", "1"}, {"len", "16"}, {"se", se ? "1" : "0"}});
  ctx.expect(&c, {"ACK", {{"psn", std::to_string(psn)}, {"syndrome", "ack"}}},
             ctx.timing().expect_window());
  expect_wc(ctx, c.target_cq, {.status = "SUCCESS", .opcode = "RECV"});
  // With none pending the target waits this long for a first event.
  const auto wait_ms = static_cast<std::uint32_t>(
      std::clamp<TimeNs>(ctx.timing().silence_window() / 1'000'000, 10, 1000));
  const auto got = Control(ctx).must(ctl::CqEvents{wait_ms}, "cq_events").events;
  const auto ours = static_cast<std::size_t>(std::count(got.begin(), got.end(), c.target_cq));
  if (got.size() != events || ours != events)
    ctx.fail(fmt::format("{}: {} completion event(s), expected {}", when, got.size(), events),
             {{"cq_events", fmt::format("{} for CQ {}", events, c.target_cq),
               got.empty() ? std::string("none") : fmt::format("{}", fmt::join(got, ", "))}});
}

void arm(CaseContext& ctx, const Connection& c, bool solicited_only) {
  Control(ctx).must(ctl::ReqNotifyCq{c.target_cq, solicited_only}, "req_notify_cq");
}

// Armed for the next completion, a CQ raises one event for it and is disarmed by it.
void notify_next(CaseContext& ctx) {
  need_cq_events(ctx);
  Connection& c = ctx.new_connection("c");
  step(ctx, "open c: its receives complete on one CQ");
  ctx.open(c, {});
  send_and_count(ctx, c, 0, false, 0, "not armed: a SEND completes and raises no event");
  arm(ctx, c, false);
  send_and_count(ctx, c, 1, false, 1, "armed for the next completion: one event");
  send_and_count(ctx, c, 2, false, 0, "the event disarmed the CQ: no event");
  arm(ctx, c, false);
  arm(ctx, c, false);
  send_and_count(ctx, c, 3, false, 1, "armed twice before a completion: still one event");
  send_and_count(ctx, c, 4, true, 0, "disarmed again: no event, even for a solicited SEND");
}

// Armed for solicited completions, a CQ raises its event only for a message with SE set.
void notify_solicited(CaseContext& ctx) {
  need_cq_events(ctx);
  Connection& c = ctx.new_connection("c");
  step(ctx, "open c: its receives complete on one CQ");
  ctx.open(c, {});
  arm(ctx, c, true);
  send_and_count(ctx, c, 0, false, 0, "armed for solicited: a SEND without SE raises no event");
  send_and_count(ctx, c, 1, true, 1, "still armed: a SEND with SE raises one event");
  send_and_count(ctx, c, 2, true, 0, "the event disarmed the CQ: no event for the next SE");
  arm(ctx, c, true);
  arm(ctx, c, false);
  send_and_count(ctx, c, 3, false, 1, "armed for solicited, then for next: any completion fires");
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
      catalogue, "qp/port-attributes-roce",
      "The port reports no LID, LMC or subnet manager and no client reregistration",
      "The port's attributes from hello (ibv_query_port): a RoCEv2 port has no LID, no LMC and "
      "no subnet manager, so lid, sm_lid and lmc must read 0, the link layer is Ethernet, and the "
      "capability bits must claim neither SM nor client reregistration (CLIENT_REG_SUP). The "
      "number of data VLs is shown, not graded: verbs report at least one.",
      {"A17.5 CA17-30 CA17-31",
       "Query HCA on a RoCEv2 port: LID, LMC and SM address do not apply; client reregistration "
       "is not supported",
       "CA17-30, CA17-31: Annex A17 text; unchecked: A17.5"},
      "MUST", {"control"}, port_attributes);
  kFile.add(
      catalogue, "cq/notify-next-one-event",
      "A CQ armed for the next completion raises one event for it, and the event disarms it",
      "Receives of a control-made QP complete on one CQ. Not armed, a SEND's completion raises no "
      "event on the completion channel; armed with req_notify_cq, the next completion raises "
      "exactly one event for that CQ; the completion after it raises none; arming twice before "
      "a completion still gives one event.",
      {"11.4.2.2 C11-31",
       "Request Completion Notification for the next completion: the next completion on the CQ "
       "raises one event, and the request is then consumed",
       "C11-31: opa-hfi1 rdmavt cq.c; unchecked: 11.4.2.2"},
      "MUST", {"control"}, notify_next);
  kFile.add(
      catalogue, "cq/notify-solicited-only",
      "A CQ armed for solicited completions raises its event only for a message with SE set",
      "Armed with req_notify_cq(solicited_only), a SEND without the Solicited Event bit completes "
      "without an event; a SEND with SE raises exactly one; the next SE message, with the CQ not "
      "armed again, raises none. Arming for the next completion over a solicited arming widens "
      "it: any completion then fires.",
      {"11.4.2.2 C11-32; 9.2.3",
       "Request Completion Notification for solicited completions: only a completion of a "
       "message with the SE bit (or an error) raises the event",
       "C11-32: opa-hfi1 rdmavt cq.c; unchecked: 11.4.2.2, 9.2.3"},
      "MUST", {"control"}, notify_solicited);
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
