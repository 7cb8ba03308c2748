// QP, CQ, NAK and data cases that the script language cannot say yet: the target as requester
// (its SENDs are received and ACKed by the tester), QPs brought up step by step, memory regions
// with chosen rights, addresses computed from the region's length, and async events. The target
// is driven with the control library's typed requests (control/messages.h) through the case's
// control steps.
#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cases/builtin.h"
#include "cases/cpp/case_def.h"
#include "cases/cpp/control_helpers.h"
#include "control/fields.h"
#include "control/messages.h"
#include "dissector/address_text.h"
#include "suite/engine/frame_builder.h"

namespace roceconf::cases {

namespace {

using engine::CaseContext;
using engine::Connection;
namespace ctl = control;

constexpr std::string_view kSource = "cases/cpp/qp_cases.cc";
using namespace ctlcase;  // NOLINT: the helpers are this file's vocabulary

void step(CaseContext& ctx, std::string_view what) {
  ctx.set_step(fmt::format("{}: {}", kSource, what));
}

// ---- qp ---------------------------------------------------------------------------------------

// RESET -> INIT -> RTR -> RTS each succeed with the attributes the transition requires; in RTR the
// QP already answers requests, in RTS it also sends.
void legal_transitions(CaseContext& ctx) {
  ctx.require("control");
  Control t(ctx);
  Connection& c = ctx.new_connection("c");
  step(ctx, "create an RC QP");
  const std::uint32_t pd = t.setup(ctl::AllocPd{}).pd;
  const std::uint32_t cq = t.setup(ctl::CreateCq{16}).cq;
  create_rc_qp(ctx, c, pd, cq, 4);
  expect_state(ctx, c, "RESET");

  step(ctx, "RESET -> INIT (pkey_index, port_num, qp_access_flags)");
  t.must(ctl::ModifyQp{c.remote_qpn, init_attr()}, "modify_qp RESET->INIT");
  expect_state(ctx, c, "INIT");
  const auto buf = reg_mr(ctx, pd, 4096, {"LOCAL_WRITE"});
  post_recvs(ctx, c, buf, 1, 256);  // receives may be posted from INIT on

  step(ctx, "INIT -> RTR (path, dest_qp_num, rq_psn, responder resources, min_rnr_timer)");
  t.must(ctl::ModifyQp{c.remote_qpn, rtr_attr(ctx, c)}, "modify_qp INIT->RTR");
  expect_state(ctx, c, "RTR");
  step(ctx, "in RTR the QP receives: SEND -> ACK");
  ctx.send(c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "32"}});
  ctx.expect(&c, {"ACK", {{"psn", "0"}, {"syndrome", "ack"}}}, ctx.timing().expect_window());

  step(ctx, "RTR -> RTS (sq_psn, timeout, retry_cnt, rnr_retry, max_rd_atomic)");
  const std::uint32_t sq_psn = static_cast<std::uint32_t>(ctx.random()()) & 0xFFFFFF;
  t.must(ctl::ModifyQp{c.remote_qpn, rts_attr(sq_psn)}, "modify_qp RTR->RTS");
  c.remote_psn0 = sq_psn;
  expect_state(ctx, c, "RTS");
  expect_wc(ctx, cq, {.status = "SUCCESS", .opcode = "RECV", .byte_len = 32});

  step(ctx, "in RTS the QP sends: its SEND starts at sq_psn");
  write_mr(ctx, buf, 1024, engine::fill_pattern(0x61, 24));
  t.must(ctl::PostSend{c.remote_qpn, {send_wr(1, buf, 1024, 24)}}, "post_send");
  ctx.expect(&c, {"SEND_ONLY", {{"psn", "0"}, {"data", pattern_hex(0x61, 24)}}},
             ctx.timing().expect_window());
  ack(ctx, c, 0, 1);
  ctx.wait(ctx.timing().silence_window());
  expect_wc(ctx, cq, {.wr_id = 1, .status = "SUCCESS", .opcode = "SEND"});
}

// A QP flushed (ERR) and reset must start again with an empty send queue: nothing it held before
// may be sent once it is back in RTS.
void no_stale_send_queue(CaseContext& ctx) {
  ctx.require("control");
  Control t(ctx);
  Connection& c = ctx.new_connection("c");
  step(ctx, "open c recv=0");
  ctx.open(c, {{"recv", "0"}});
  const auto buf = reg_mr(ctx, c.target_pd, 4096, {"LOCAL_WRITE"});
  write_mr(ctx, buf, 0, engine::fill_pattern(0xA1, 40));
  write_mr(ctx, buf, 64, engine::fill_pattern(0xB2, 48));

  step(ctx, "post a SEND; the tester receives it and does not ACK");
  t.must(ctl::PostSend{c.remote_qpn, {send_wr(1, buf, 0, 40)}}, "post_send");
  ctx.expect(&c, {"SEND_ONLY", {{"psn", "0"}, {"data", pattern_hex(0xA1, 40)}}},
             ctx.timing().expect_window());

  step(ctx, "modify_qp ERR: the SEND is flushed");
  t.must(ctl::ModifyQp{c.remote_qpn, state_attr("ERR")}, "modify_qp RTS->ERR");
  expect_wc(ctx, c.target_cq, {.wr_id = 1, .status = "WR_FLUSH_ERR"});
  (void)ctx.collect(&c, ctx.timing().silence_window());  // retransmissions before ERR, if any

  step(ctx, "RESET, INIT, RTR, RTS with a new sq_psn");
  t.must(ctl::ModifyQp{c.remote_qpn, state_attr("RESET")}, "modify_qp ERR->RESET");
  bring_up(ctx, c, (c.remote_psn0 + 0x1000) & 0xFFFFFF);

  step(ctx, "back in RTS with an empty send queue: nothing may be sent");
  ctx.expect_nothing(&c, ctx.timing().silence_window(8));

  step(ctx, "a new SEND is the first and only request");
  t.must(ctl::PostSend{c.remote_qpn, {send_wr(2, buf, 64, 48)}}, "post_send");
  ctx.expect(&c, {"SEND_ONLY", {{"psn", "0"}, {"data", pattern_hex(0xB2, 48)}}},
             ctx.timing().expect_window());
  ack(ctx, c, 0, 1);
  ctx.expect_nothing(&c, ctx.timing().silence_window());
  expect_wc(ctx, c.target_cq, {.wr_id = 2, .status = "SUCCESS", .opcode = "SEND"});
  expect_cq_empty(ctx, c.target_cq);
}

// Two SEND WRs posted in one call (one doorbell) go out as two messages, each with its own
// payload, in order.
void doorbell_two_wqes(CaseContext& ctx) {
  ctx.require("control");
  Control t(ctx);
  Connection& c = ctx.new_connection("c");
  step(ctx, "open c recv=0");
  ctx.open(c, {{"recv", "0"}});
  const auto buf = reg_mr(ctx, c.target_pd, 4096, {"LOCAL_WRITE"});
  write_mr(ctx, buf, 0, engine::fill_pattern(0x11, 40));
  write_mr(ctx, buf, 512, engine::fill_pattern(0x77, 56));

  step(ctx, "post_send with two SEND WRs (40 and 56 bytes) in one request");
  t.must(ctl::PostSend{c.remote_qpn, {send_wr(1, buf, 0, 40), send_wr(2, buf, 512, 56)}},
         "post_send");
  step(ctx, "the first SEND carries the first WR's payload");
  ctx.expect(&c, {"SEND_ONLY", {{"psn", "0"}, {"len", "40"}, {"data", pattern_hex(0x11, 40)}}},
             ctx.timing().expect_window());
  step(ctx, "the second SEND carries the second WR's payload");
  ctx.expect(&c, {"SEND_ONLY", {{"psn", "1"}, {"len", "56"}, {"data", pattern_hex(0x77, 56)}}},
             ctx.timing().expect_window());
  ack(ctx, c, 0, 1);
  ack(ctx, c, 1, 2);
  ctx.expect_nothing(&c, ctx.timing().silence_window());
  step(ctx, "both WRs complete successfully, in order");
  expect_wc(ctx, c.target_cq, {.wr_id = 1, .status = "SUCCESS", .opcode = "SEND"});
  expect_wc(ctx, c.target_cq, {.wr_id = 2, .status = "SUCCESS", .opcode = "SEND"});
}

// ---- data -------------------------------------------------------------------------------------

// A SEND is placed byte for byte in the receive buffer; the completion names the QP and the
// message length.
void send_byte_exact(CaseContext& ctx) {
  ctx.require("control");
  Connection& c = ctx.new_connection("c");
  step(ctx, "open c recv=0, then one 256-byte receive");
  ctx.open(c, {{"recv", "0"}});
  const auto buf = reg_mr(ctx, c.target_pd, 256, {"LOCAL_WRITE"});
  write_mr(ctx, buf, 0, std::vector<std::uint8_t>(256, 0xEE));
  post_recvs(ctx, c, buf, 1, 256);

  step(ctx, "send c SEND len=100 fill=7");
  ctx.send(c, "SEND", {{"psn", "0"}, {"len", "100"}, {"fill", "7"}});
  ctx.expect(&c, {"ACK", {{"psn", "0"}, {"syndrome", "ack"}}}, ctx.timing().expect_window());
  step(ctx, "the receive completes: RECV, 100 bytes, on c's QP");
  expect_wc(ctx, c.target_cq,
            {.wr_id = 100,
             .status = "SUCCESS",
             .opcode = "RECV",
             .byte_len = 100,
             .qp_num = c.remote_qpn});
  step(ctx, "the receive buffer holds the payload");
  const std::string got = read_mr(ctx, buf, 0, 100);
  const std::string want = pattern_hex(7, 100);
  if (got != want)
    ctx.fail("the receive buffer differs from the SEND's payload", {{"recv_buffer", want, got}});
}

// ---- nak --------------------------------------------------------------------------------------

// The R_Key's range ends at the region's last byte: a WRITE ending there is accepted, one that
// goes a single byte further gets a NAK remote access error.
void rkey_out_of_bounds(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "connect c");
  ctx.connect(c, {});
  if (!c.region || c.region->length < 64)
    ctx.skip("the responder announced no region of 64 bytes or more");
  const std::uint32_t end = c.region->length;
  step(ctx,
       fmt::format("WRITE of 16 bytes ending at the region's last byte (offset {})", end - 16));
  ctx.send(c, "RDMA_WRITE_ONLY",
           {{"psn", "0"}, {"ackreq", "1"}, {"len", "16"}, {"offset", std::to_string(end - 16)}});
  ctx.expect(&c, {"ACK", {{"psn", "0"}, {"syndrome", "ack"}}}, ctx.timing().expect_window());
  step(ctx, fmt::format("WRITE of 16 bytes one byte past the end (offset {})", end - 15));
  ctx.send(c, "RDMA_WRITE_ONLY",
           {{"psn", "1"}, {"ackreq", "1"}, {"len", "16"}, {"offset", std::to_string(end - 15)}});
  ctx.expect(&c, {"NAK", {{"psn", "1"}, {"syndrome", "rem_acc_err"}}},
             ctx.timing().expect_window());
}

// An R_Key of a region registered without REMOTE_WRITE: a READ through it works, a WRITE gets a
// NAK remote access error and leaves the memory as it was.
void mr_write_denied(CaseContext& ctx) {
  ctx.require("control");
  Connection& c = ctx.new_connection("c");
  step(ctx, "open c; a second region with LOCAL_WRITE, REMOTE_READ only");
  ctx.open(c, {});
  const auto ro = reg_mr(ctx, c.target_pd, 4096, {"LOCAL_WRITE", "REMOTE_READ"});
  write_mr(ctx, ro, 0, engine::fill_pattern(0x30, 64));
  const std::string va = std::to_string(ro.addr), rkey = std::to_string(ro.rkey);

  step(ctx, "READ through the read-only R_Key");
  ctx.send(c, "RDMA_READ_REQUEST", {{"psn", "0"}, {"len", "64"}, {"va", va}, {"rkey", rkey}});
  ctx.expect(&c, {"READ_RESPONSE_ONLY", {{"psn", "0"}, {"len", "64"}, {"fill", "0x30"}}},
             ctx.timing().expect_window());
  step(ctx, "WRITE through the read-only R_Key; the region is unchanged");
  expect_write_refused(ctx, c, ro, 1, 0x30, "a refused WRITE changed the region");
}

// ---- cq ---------------------------------------------------------------------------------------

bool has_event(const std::vector<ctl::AsyncEvent>& events, std::string_view type,
               std::uint32_t element) {
  for (const auto& e : events)
    if (e.event_type == type && e.element == element) return true;
  return false;
}

std::string event_list(const std::vector<ctl::AsyncEvent>& events) {
  std::string list;
  for (const auto& e : events) list += (list.empty() ? "" : ", ") + ctl::describe(e);
  return list.empty() ? "none" : list;
}

// The target's async events (drained) over `window`, polled every 20 ms: an event may be reported
// a little after the packet that caused it. Returns early once `type` on `element` is seen.
std::vector<ctl::AsyncEvent> events_within(CaseContext& ctx, TimeNs window,
                                           std::string_view type = {}, std::uint32_t element = 0) {
  std::vector<ctl::AsyncEvent> all;
  Control t(ctx);
  const TimeNs deadline = ctx.now() + window;
  for (;;) {
    for (auto& e : t.setup(ctl::AsyncEvents{}).events) all.push_back(std::move(e));
    if (ctx.now() >= deadline || (!type.empty() && has_event(all, type, element))) return all;
    ctx.wait(std::min<TimeNs>(20 * engine::kMillisecond, deadline - ctx.now()));
  }
}

// A CQ holds exactly as many completions as its depth: completion depth+1 overruns it and raises
// the CQ error (IBV_EVENT_CQ_ERR) for that CQ, and only that CQ.
void cq_overflow_at_depth(CaseContext& ctx) {
  ctx.require("control");
  Control t(ctx);
  step(ctx, "drain the target's async events");
  (void)t.setup(ctl::AsyncEvents{});
  const auto small = t.setup(ctl::CreateCq{4});
  const std::uint32_t small_cq = small.cq, depth = small.depth;  // the depth granted
  const std::uint32_t other_cq = t.setup(ctl::CreateCq{64}).cq;
  const std::uint32_t pd = t.setup(ctl::AllocPd{}).pd;
  const auto buf = reg_mr(ctx, pd, 64 * (depth + 4), {"LOCAL_WRITE"});

  step(ctx, fmt::format("c on the small CQ (depth {}), d on another CQ", depth));
  Connection& c = ctx.new_connection("c");
  create_rc_qp(ctx, c, pd, small_cq, depth + 4);
  bring_up(ctx, c, 0);
  post_recvs(ctx, c, buf, depth + 2, 64);
  Connection& d = ctx.new_connection("d");
  create_rc_qp(ctx, d, pd, other_cq, 4);
  bring_up(ctx, d, 0);
  const auto dbuf = reg_mr(ctx, pd, 64, {"LOCAL_WRITE"});
  post_recvs(ctx, d, dbuf, 1, 64);

  for (std::uint32_t i = 0; i < depth; ++i) {
    step(ctx, fmt::format("SEND {} of {}: the CQ fills up", i + 1, depth));
    ctx.send(c, "SEND_ONLY", {{"psn", std::to_string(i)}, {"ackreq", "1"}, {"len", "16"}});
    ctx.expect(&c, {"ACK", {{"psn", std::to_string(i)}, {"syndrome", "ack"}}},
               ctx.timing().expect_window());
  }
  step(ctx, fmt::format("{} completions fit a CQ of depth {}: no CQ error yet", depth, depth));
  std::vector<ctl::AsyncEvent> seen = events_within(ctx, ctx.timing().silence_window());
  if (has_event(seen, "CQ_ERR", small_cq))
    ctx.fail(
        fmt::format("CQ_ERR raised with only {} completions in a CQ of depth {}", depth, depth),
        {{"async_event", "none", "CQ_ERR"}});

  step(ctx, fmt::format("SEND {}: completion {} overruns the CQ", depth + 1, depth + 1));
  ctx.send(c, "SEND_ONLY", {{"psn", std::to_string(depth)}, {"ackreq", "1"}, {"len", "16"}});
  seen = events_within(ctx, ctx.timing().expect_window(), "CQ_ERR", small_cq);
  if (!has_event(seen, "CQ_ERR", small_cq))
    ctx.fail(fmt::format("no CQ_ERR for CQ {} after completion {} (events: {})", small_cq,
                         depth + 1, event_list(seen)),
             {{"async_event", fmt::format("CQ_ERR element={}", small_cq), event_list(seen)}});
  if (has_event(seen, "CQ_ERR", other_cq))
    ctx.fail("the overrun of one CQ raised CQ_ERR on another",
             {{"async_event", "none", "CQ_ERR other"}});
  (void)ctx.collect(&c, ctx.timing().silence_window());  // whatever c answered to the overrun

  step(ctx, "the other CQ still works: d's SEND completes there");
  ctx.send(d, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "16"}});
  ctx.expect(&d, {"ACK", {{"psn", "0"}, {"syndrome", "ack"}}}, ctx.timing().expect_window());
  expect_wc(ctx, other_cq,
            {.status = "SUCCESS", .opcode = "RECV", .byte_len = 16, .qp_num = d.remote_qpn});
  seen = events_within(ctx, 0);
  if (has_event(seen, "CQ_ERR", other_cq))
    ctx.fail("the overrun of one CQ raised CQ_ERR on another",
             {{"async_event", "none", "CQ_ERR other"}});
}

// Requester class F (C9-218): the send completion that overruns the CQ puts the QP in Error and
// raises the affiliated asynchronous error; the CQ reports its own error.
void send_overflow_qp_error(CaseContext& ctx) {
  Control t(ctx);
  step(ctx, "drain the target's async events");
  (void)t.setup(ctl::AsyncEvents{});
  const auto small = t.setup(ctl::CreateCq{4});
  const std::uint32_t cq = small.cq, depth = small.depth;  // the depth granted
  const std::uint32_t pd = t.setup(ctl::AllocPd{}).pd;
  const auto buf = reg_mr(ctx, pd, 4096, {"LOCAL_WRITE"});
  Connection& c = ctx.new_connection("c");
  create_rc_qp(ctx, c, pd, cq, 4);
  bring_up(ctx, c, 0);

  step(ctx, fmt::format("{} signaled SENDs on a CQ of depth {}, ACKed together", depth + 1, depth));
  std::vector<ctl::SendWr> wrs;
  for (std::uint32_t i = 0; i <= depth; ++i) wrs.push_back(send_wr(i + 1, buf, 0, 16));
  t.must(ctl::PostSend{c.remote_qpn, std::move(wrs)}, "post_send");
  for (std::uint32_t i = 0; i <= depth; ++i)
    ctx.expect(&c, {"SEND_ONLY", {{"psn", std::to_string(i)}}}, ctx.timing().expect_window(), true);
  ack(ctx, c, depth, depth + 1);

  step(ctx, "completion depth+1 overruns the CQ: CQ_ERR, the QP in Error, a QP error event");
  auto seen = events_within(ctx, ctx.timing().expect_window(), "CQ_ERR", cq);
  if (!has_event(seen, "CQ_ERR", cq))
    ctx.fail(fmt::format("no CQ_ERR for CQ {} after send completion {} (events: {})", cq, depth + 1,
                         event_list(seen)),
             {{"async_event", fmt::format("CQ_ERR element={}", cq), event_list(seen)}});
  const auto more = events_within(ctx, ctx.timing().silence_window());
  seen.insert(seen.end(), more.begin(), more.end());
  expect_state(ctx, c, "ERR");
  if (!has_event(seen, "QP_FATAL", c.remote_qpn) && !has_event(seen, "QP_REQ_ERR", c.remote_qpn))
    ctx.fail("the CQ overrun raised no affiliated asynchronous error on the QP",
             {{"async_event", fmt::format("QP_FATAL (or QP_REQ_ERR) element={}", c.remote_qpn),
               event_list(seen)}});
}

// C9-222.1.1: an R_Key violation on an RDMA WRITE without immediate relates to the QP but to
// no receive WQE, so besides the NAK the responder's client learns of it through an affiliated
// asynchronous error on the QP. Which event the spec leaves open (10.10.2.3): any QP error event
// naming the QP is accepted; the QP's state afterwards is not graded.
void access_error_async_event(CaseContext& ctx) {
  ctx.require("control");
  Connection& c = ctx.new_connection("c");
  step(ctx, "open c recv=1; the events so far drained");
  ctx.open(c, {{"recv", "1"}});
  (void)events_within(ctx, 0);
  step(ctx, "RDMA_WRITE_ONLY psn=0 ackreq=1 len=16 rkey=0x5a5a5a5a (no such R_Key)");
  ctx.send(c, "RDMA_WRITE_ONLY",
           {{"psn", "0"}, {"ackreq", "1"}, {"len", "16"}, {"offset", "0"}, {"rkey", "0x5a5a5a5a"}});
  ctx.expect(&c, {"NAK", {{"psn", "0"}, {"syndrome", "rem_acc_err"}}},
             ctx.timing().expect_window());
  step(ctx, "an affiliated asynchronous error on c's QP");
  const std::vector<ctl::AsyncEvent> seen =
      events_within(ctx, ctx.timing().expect_window(), "QP_ACCESS_ERR", c.remote_qpn);
  for (std::string_view type : {"QP_ACCESS_ERR", "QP_REQ_ERR", "QP_FATAL"})
    if (has_event(seen, type, c.remote_qpn)) {
      ctx.note(fmt::format("async event {} on QP {:#x}", type, c.remote_qpn));
      return;
    }
  ctx.fail(
      "the R_Key violation of a WRITE without immediate raised no affiliated asynchronous "
      "error on the QP",
      {{"async_event", "QP_ACCESS_ERR (or QP_REQ_ERR, QP_FATAL) on the QP", event_list(seen)}});
}

constexpr CaseFile kFile{kSource};

}  // namespace

void add_qp_cpp_cases(engine::Catalogue& catalogue) {
  kFile.add(
      catalogue, "qp/legal-transitions",
      "RESET->INIT->RTR->RTS succeed with their required attributes; RTR receives, RTS sends",
      "A QP made through control is queried in RESET, then moved to INIT, RTR and RTS, each "
      "transition with exactly the attributes it requires; each must succeed and query must show "
      "the new state. In RTR a SEND from the tester is ACKed; in RTS a posted SEND goes out with "
      "the sq_psn given and completes once ACKed.",
      {"10.3 C10-20; 11.2.4.2",
       "A new QP is in Reset; RESET->INIT->RTR->RTS each succeed with the attributes Modify QP "
       "requires for them; in RTR the QP receives, in RTS it also sends",
       "C10-20: linux-rdma 2021-07; 11.2.4.2: Annex A17 text, SIF sif_qp.c; unchecked: 10.3"},
      "MUST", {"control"}, legal_transitions);
  kFile.add(
      catalogue, "qp/no-stale-send-queue",
      "A QP flushed and reset sends nothing of its old send queue when it is back in RTS",
      "A SEND is posted and received (not ACKed); the QP is moved to ERR (the WR completes with "
      "WR_FLUSH_ERR), reset and brought back to RTS. Nothing may be sent then; a new SEND must be "
      "the first request, with its own payload.",
      {"10.3; 11.2.4.2",
       "Error flushes the work queues and a QP in Reset holds no work requests: back in RTS it "
       "sends nothing of its old send queue",
       "11.2.4.2: Annex A17 text, SIF sif_qp.c; unchecked: 10.3"},
      "MUST", {"control"}, no_stale_send_queue);
  kFile.add(
      catalogue, "qp/doorbell-two-wqes",
      "Two SEND WRs posted in one call go out as two messages with their own payloads, in order",
      "One post_send request carries two SEND WRs (40 bytes of pattern 0x11, 56 bytes of pattern "
      "0x77), so they share one doorbell. The tester must receive two SEND_ONLY packets, PSN 0 and "
      "1, with exactly those payloads; after the ACKs both WRs complete successfully, in order.",
      {"11.4.1.1; 9.5",
       "A list of WRs posted in one Post Send is executed in order, each WR its own message with "
       "its own data",
       "unchecked"},
      "MUST", {"control"}, doorbell_two_wqes);
  kFile.add(
      catalogue, "data/send-byte-exact",
      "A SEND lands byte for byte in the receive buffer, with the right byte_len and qp_num",
      "One 256-byte receive is posted; a 100-byte SEND of pattern 7 is ACKed, its receive "
      "completes as RECV with byte_len 100 and the QP's number, and the first 100 bytes of the "
      "buffer hold the payload.",
      {"9.4.1; 11.4.2",
       "A SEND's payload is placed in the buffers of the receive WQE; its completion gives the "
       "byte length and the QP",
       "unchecked"},
      "MUST", {"control"}, send_byte_exact);
  kFile.add(
      catalogue, "nak/rkey-out-of-bounds",
      "A WRITE one byte past the R_Key's region gets NAK remote access error; up to the end it is "
      "ACKed",
      "Using the region length from the REP, a 16-byte WRITE ending exactly at the last byte is "
      "ACKed, and a 16-byte WRITE starting one byte later (so its last byte is outside) gets a NAK "
      "remote access error carrying its PSN.",
      {"10.6; 9.9.3 C9-222.1.1; 9.7.5.2",
       "The whole range of a remote access must lie within the region of its R_Key; one byte "
       "past it is an R_Key violation: NAK remote access error",
       "NAK 0x62 for R_Key violations: Linux rxe; C9-222.1.1 (9.9.3.1.3): linux-rdma 2026-02; "
       "unchecked: 10.6, 9.7.5.2"},
      "MUST", {"responder"}, rkey_out_of_bounds);
  kFile.add(
      catalogue, "nak/mr-write-denied",
      "A WRITE through the R_Key of a region without REMOTE_WRITE gets NAK remote access error",
      "A second region is registered with LOCAL_WRITE and REMOTE_READ. A READ through its R_Key "
      "returns its content; a WRITE through it gets a NAK remote access error (not invalid "
      "request: the QP allows writes, the region does not) and leaves the memory unchanged.",
      {"10.6 C10-57; 9.9.3 C9-222.1.1; 9.7.5.2",
       "A remote access needs the memory region's access right: a WRITE through a region without "
       "REMOTE_WRITE gets NAK remote access error and changes nothing",
       "C10-57: linux-rdma 2020-09; NAK 0x62: Linux rxe; C9-222.1.1 (9.9.3.1.3): linux-rdma "
       "2026-02; unchecked: 9.7.5.2"},
      "MUST", {"control"}, mr_write_denied);
  kFile.add(
      catalogue, "nak/access-error-async-event",
      "An R_Key violation on a WRITE without immediate is NAKed and reported as an affiliated "
      "asynchronous error",
      "An RDMA WRITE without immediate through an R_Key that does not exist consumes no receive "
      "WQE, so the error can be tied to the QP but to no WQE. The requester must get NAK remote "
      "access error carrying the WRITE's PSN, and the target's client an affiliated asynchronous "
      "error on the QP (QP_ACCESS_ERR, or another QP error event). nak/error-state-after-access-"
      "error grades the same violation on a WRITE with immediate, which puts the QP in Error.",
      {"9.9.3 C9-222.1.1; 10.10.2.3",
       "For a class C responder error the NAK is always sent; one that relates to the QP but to "
       "no receive WQE (an RDMA WRITE without immediate) is reported to the responder's client "
       "as an affiliated asynchronous error",
       "C9-222.1.1 (9.9.3.1.3) text: linux-rdma 2026-02; unchecked: 10.10.2.3"},
      "MUST", {"control"}, access_error_async_event);
  kFile.add(
      catalogue, "cq/overflow-at-depth",
      "A CQ overruns at exactly depth+1 completions, raising CQ_ERR on that CQ only",
      "QP c completes receives on a CQ created with depth 4 (the depth the target grants is used). "
      "depth SENDs must raise no CQ error; the next one overruns the CQ and must raise the "
      "affiliated asynchronous error CQ_ERR naming that CQ (not a QP error, not one completion "
      "later). Another QP on another CQ keeps working.",
      {"11.4.2 C11-37; 11.6.3",
       "A CQ overrun is a CQ error, reported as an affiliated asynchronous error on that CQ",
       "C11-37: linux-rdma 2019-06; unchecked: 11.6.3"},
      "MUST", {"control"}, cq_overflow_at_depth);
  kFile.add(
      catalogue, "cq/send-overflow-qp-error",
      "A send completion that overruns its CQ puts the requester QP in Error with an affiliated "
      "asynchronous error",
      "An RC QP sends depth+1 signaled SENDs on a CQ of depth 4 (the depth granted); one ACK "
      "completes them all. The last completion overruns the CQ: the CQ must report CQ_ERR, and "
      "as a requester class F error the QP must be in Error and an affiliated asynchronous error "
      "(QP_FATAL, or QP_REQ_ERR) must name it.",
      {"9.9.2 C9-218; 11.4.2 C11-37; 11.6.3",
       "A completion queue overrun on the requester is a class F error: the QP goes to the Error "
       "state, an affiliated asynchronous error is raised, and the CQ reports its error",
       "C9-218, C11-37: linux-rdma 2019-06; unchecked: 9.9.2, 11.6.3"},
      "MUST", {"control"}, send_overflow_qp_error);
}

}  // namespace roceconf::cases
