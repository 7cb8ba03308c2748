// Over 600 lines: the memory-window cases, one function each around shared set-up helpers.
// Memory windows (IBA 10.6.7): binding rules graded through the control API (an immediate error
// or a completion in error, as the verbs report them), and access through a window's R_Key
// graded on the wire from the tester's QP (ACK, READ response, or NAK remote access error) with
// the memory read back through control.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cases/builtin.h"
#include "cases/cpp/case_def.h"
#include "cases/cpp/control_helpers.h"
#include "suite/engine/frame_builder.h"

namespace roceconf::cases {

namespace {

using namespace ctlcase;  // NOLINT: the helpers are this file's vocabulary

constexpr std::string_view kSource = "cases/cpp/mw_cases.cc";
constexpr std::uint32_t kRegionSize = 4096;
const std::vector<std::string> kFullRegion = {"LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ",
                                              "MW_BIND"};
const std::vector<std::string> kRemoteRw = {"REMOTE_WRITE", "REMOTE_READ"};

void step(CaseContext& ctx, std::string_view what) {
  ctx.set_step(fmt::format("{}: {}", kSource, what));
}

// A PD, a CQ, and an RC QP of that PD in RTS towards the tester's `c`.
struct Rig {
  std::uint32_t pd = 0, cq = 0;
};
void qp_up(CaseContext& ctx, Connection& c, std::uint32_t pd, std::uint32_t cq) {
  create_rc_qp(ctx, c, pd, cq, 4);
  bring_up(ctx, c, static_cast<std::uint32_t>(ctx.random()()) & 0xFFFFFF);
}
Rig rig(CaseContext& ctx, Connection& c) {
  Control t(ctx);
  Rig r;
  r.pd = t.setup(ctl::AllocPd{}).pd;
  r.cq = t.setup(ctl::CreateCq{32}).cq;
  qp_up(ctx, c, r.pd, r.cq);
  return r;
}

// A region filled with the pattern of `fill`.
ctl::RegMrReply region(CaseContext& ctx, std::uint32_t pd, std::vector<std::string> access,
                       std::uint32_t fill) {
  const auto mr = reg_mr(ctx, pd, kRegionSize, std::move(access));
  write_mr(ctx, mr, 0, engine::fill_pattern(fill, kRegionSize));
  return mr;
}

ctl::AllocMwReply alloc_mw(CaseContext& ctx, std::uint32_t pd, std::uint32_t type) {
  return Control(ctx).setup(ctl::AllocMw{pd, type});
}

// The next completion of `cq`, waiting for it up to an expect window (a bind runs on the device).
std::optional<ctl::WorkCompletion> next_wc(CaseContext& ctx, std::uint32_t cq) {
  constexpr int kTries = 20;
  for (int i = 0; i < kTries; ++i) {
    const auto r = Control(ctx).setup(ctl::PollCq{cq, 1});
    if (!r.wc.empty()) return r.wc[0];
    ctx.wait(ctx.timing().expect_window() / kTries);
  }
  return std::nullopt;
}

// The bind (or invalidation) WR `wr_id` must complete successfully.
void expect_done(CaseContext& ctx, std::uint32_t cq, std::uint64_t wr_id, std::string_view opcode,
                 std::string_view what) {
  const auto wc = next_wc(ctx, cq);
  if (!wc)
    ctx.fail(fmt::format("{}: no completion", what),
             {{std::string(what), fmt::format("{} SUCCESS", opcode), "no completion"}});
  if (wc->wr_id != wr_id || wc->status != "SUCCESS" || wc->opcode != opcode)
    ctx.fail(fmt::format("{}: the completion differs: {}", what, ctl::describe(*wc)),
             {{std::string(what), fmt::format("wr_id={} {} SUCCESS", wr_id, opcode),
               fmt::format("wr_id={} {} {}", wc->wr_id, wc->opcode, wc->status)}});
}

// A type 2 window bound by a signaled BIND_MW WR, with the next key byte; the new R_Key.
ctl::SendWr bind_wr(std::uint64_t wr_id, const ctl::AllocMwReply& mw, std::uint32_t rkey,
                    const ctl::RegMrReply& mr, std::uint64_t offset, std::uint64_t length,
                    std::vector<std::string> access, bool zero_based = false) {
  ctl::SendWr wr;
  wr.wr_id = wr_id;
  wr.opcode = "BIND_MW";
  wr.send_flags = {"SIGNALED"};
  wr.bind_mw = ctl::SendWr::BindMw{
      mw.mw, rkey, mr.handle, mr.addr + offset, length, std::move(access), zero_based};
  return wr;
}
std::uint32_t next_key(std::uint32_t rkey) {
  return (rkey & ~0xFFu) | ((rkey + 1) & 0xFFu);
}
std::uint32_t bind2(CaseContext& ctx, const Connection& c, std::uint32_t cq,
                    const ctl::AllocMwReply& mw, std::uint32_t current, const ctl::RegMrReply& mr,
                    std::uint64_t offset, std::uint64_t length, std::vector<std::string> access,
                    bool zero_based = false) {
  const std::uint32_t rkey = next_key(current);
  Control(ctx).setup(ctl::PostSend{
      c.remote_qpn, {bind_wr(50, mw, rkey, mr, offset, length, std::move(access), zero_based)}});
  expect_done(ctx, cq, 50, "BIND_MW", "BIND_MW of the type 2 window");
  return rkey;
}
// A type 1 window bound by the bind verb; the new R_Key.
std::uint32_t bind1(CaseContext& ctx, const Connection& c, std::uint32_t cq,
                    const ctl::AllocMwReply& mw, const ctl::RegMrReply& mr, std::uint64_t offset,
                    std::uint64_t length, std::vector<std::string> access, std::uint64_t wr_id) {
  const auto r = Control(ctx).must(ctl::BindMw{c.remote_qpn,
                                               mw.mw,
                                               mr.handle,
                                               mr.addr + offset,
                                               length,
                                               std::move(access),
                                               false,
                                               wr_id,
                                               {"SIGNALED"}},
                                   "bind_mw of the type 1 window");
  expect_done(ctx, cq, wr_id, "BIND_MW", "bind_mw of the type 1 window");
  return r.rkey;
}

// A bind that must fail: refused at once (`refusal` set), or its WR completes with MW_BIND_ERR.
void expect_bind_failed(CaseContext& ctx, std::uint32_t cq, bool refused, std::uint64_t wr_id,
                        std::string_view what) {
  if (refused) return;
  const auto wc = next_wc(ctx, cq);
  if (!wc)
    ctx.fail(fmt::format("{}: accepted, and no completion came", what),
             {{std::string(what), "immediate error or MW_BIND_ERR completion", "no completion"}});
  if (wc->wr_id != wr_id || wc->status != "MW_BIND_ERR")
    ctx.fail(
        fmt::format(
            "{}: {}", what,
            wc->status == "SUCCESS" ? "the bind succeeded" : "the completion is not MW_BIND_ERR"),
        {{std::string(what), fmt::format("wr_id={} MW_BIND_ERR (or an immediate error)", wr_id),
          fmt::format("wr_id={} {}", wc->wr_id, wc->status)}});
}
// A BIND_MW WR that must fail.
void expect_bind_wr_fails(CaseContext& ctx, const Connection& c, std::uint32_t cq,
                          const ctl::SendWr& wr, std::string_view what) {
  const bool refused = !ctx.call(ctl::PostSend{c.remote_qpn, {wr}});
  expect_bind_failed(ctx, cq, refused, wr.wr_id, what);
}
// A bind verb call that must fail.
void expect_bind_verb_fails(CaseContext& ctx, std::uint32_t cq, const ctl::BindMw& bind,
                            std::string_view what) {
  const bool refused = !ctx.call(bind);
  expect_bind_failed(ctx, cq, refused, bind.wr_id, what);
}

// ---- the wire ------------------------------------------------------------------------------

void write_through(CaseContext& ctx, Connection& c, std::uint32_t psn, std::uint64_t va,
                   std::uint32_t rkey, std::uint32_t fill, std::uint32_t len = 64) {
  ctx.send(c, "RDMA_WRITE_ONLY",
           {{"psn", std::to_string(psn)},
            {"ackreq", "1"},
            {"len", std::to_string(len)},
            {"fill", fmt::format("{:#x}", fill)},
            {"va", std::to_string(va)},
            {"rkey", std::to_string(rkey)}});
}
void expect_ack(CaseContext& ctx, Connection& c, std::uint32_t psn) {
  ctx.expect(&c, {"ACK", {{"psn", std::to_string(psn)}, {"syndrome", "ack"}}},
             ctx.timing().expect_window());
}
void expect_access_nak(CaseContext& ctx, Connection& c, std::uint32_t psn) {
  ctx.expect(&c, {"NAK", {{"psn", std::to_string(psn)}, {"syndrome", "rem_acc_err"}}},
             ctx.timing().expect_window());
}
// `len` bytes of the region at `offset` must hold the pattern of `fill`.
void expect_memory(CaseContext& ctx, const ctl::RegMrReply& mr, std::uint64_t offset,
                   std::uint32_t len, std::uint32_t fill, std::string_view why) {
  const std::string got = read_mr(ctx, mr, offset, len);
  const std::string want = pattern_hex(fill, len);
  if (got != want)
    ctx.fail(std::string(why), {{fmt::format("region[{}..{})", offset, offset + len), want, got}});
}

// The region's bytes at `offset` are still those region() wrote (fill_pattern counts up by byte).
void expect_untouched(CaseContext& ctx, const ctl::RegMrReply& mr, std::uint64_t offset,
                      std::string_view why) {
  expect_memory(ctx, mr, offset, 64, static_cast<std::uint32_t>(0x10 + offset), why);
}

// ---- rebinding and invalidation kill the old R_Key -----------------------------------------

void type1_rebind_kills_old_rkey(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "a type 1 window bound to 1 KiB of a region");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 1);
  const std::uint32_t first = bind1(ctx, c, r.cq, mw, mr, 0, 1024, kRemoteRw, 1);

  step(ctx, "WRITE through the window's R_Key is ACKed and lands in the region");
  write_through(ctx, c, 0, mr.addr, first, 0x21);
  expect_ack(ctx, c, 0);
  expect_memory(ctx, mr, 0, 64, 0x21, "the WRITE through the window did not land");

  step(ctx, "rebind the window to the next KiB: a new R_Key");
  const std::uint32_t second = bind1(ctx, c, r.cq, mw, mr, 1024, 1024, kRemoteRw, 2);
  if (second == first)
    ctx.fail("the rebind kept the window's R_Key",
             {{"rkey", "a new R_Key", fmt::format("{:#x}", first)}});
  write_through(ctx, c, 1, mr.addr + 1024, second, 0x22);
  expect_ack(ctx, c, 1);
  expect_memory(ctx, mr, 1024, 64, 0x22, "the WRITE through the rebound window did not land");

  step(ctx, "WRITE through the old R_Key: NAK remote access error, memory unchanged");
  write_through(ctx, c, 2, mr.addr + 1024, first, 0x23);
  expect_access_nak(ctx, c, 2);
  expect_memory(ctx, mr, 1024, 64, 0x22, "a WRITE through the old R_Key changed the region");
}

void type2_invalidate_kills_rkey(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "a type 2 window bound by a BIND_MW WR");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 2);
  const std::uint32_t key = bind2(ctx, c, r.cq, mw, mw.rkey, mr, 0, 2048, kRemoteRw);
  write_through(ctx, c, 0, mr.addr, key, 0x31);
  expect_ack(ctx, c, 0);

  step(ctx, "LOCAL_INV of the window's R_Key completes");
  ctl::SendWr inv;
  inv.wr_id = 60;
  inv.opcode = "LOCAL_INV";
  inv.send_flags = {"SIGNALED"};
  inv.invalidate_rkey = key;
  Control(ctx).must(ctl::PostSend{c.remote_qpn, {inv}}, "post_send LOCAL_INV");
  expect_done(ctx, r.cq, 60, "LOCAL_INV", "LOCAL_INV of the bound type 2 window");

  step(ctx, "the window is free again: a new bind succeeds (o10-37.2.34)");
  const std::uint32_t again = bind2(ctx, c, r.cq, mw, key, mr, 2048, 1024, kRemoteRw);
  write_through(ctx, c, 1, mr.addr + 2048, again, 0x32);
  expect_ack(ctx, c, 1);

  step(ctx, "WRITE through the invalidated R_Key: NAK remote access error, memory unchanged");
  write_through(ctx, c, 2, mr.addr + 2176, key, 0x33);
  expect_access_nak(ctx, c, 2);
  expect_untouched(ctx, mr, 2176, "a WRITE through the invalidated R_Key changed the region");
}

// ---- bind rules (verbs) --------------------------------------------------------------------

// C10-72: the window of PD B through a QP of PD A.
void bind_needs_qp_of_window_pd(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "a QP and a region in PD A, a type 2 window in PD B");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const std::uint32_t other = Control(ctx).setup(ctl::AllocPd{}).pd;
  const auto mw = alloc_mw(ctx, other, 2);
  step(ctx, "BIND_MW through the QP of PD A must fail");
  expect_bind_wr_fails(ctx, c, r.cq, bind_wr(70, mw, next_key(mw.rkey), mr, 0, 1024, kRemoteRw),
                       "BIND_MW of a window of another PD");
}

// C10-73: a region without the bind right.
void bind_needs_bind_right(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "a region without MW_BIND and a type 2 window");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, {"LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ"}, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 2);
  step(ctx, "BIND_MW to that region must fail");
  expect_bind_wr_fails(ctx, c, r.cq, bind_wr(71, mw, next_key(mw.rkey), mr, 0, 1024, kRemoteRw),
                       "BIND_MW to a region without MW_BIND");
}

// C10-74: a writable window on a region without LOCAL_WRITE.
void writable_window_needs_local_write(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "a region with REMOTE_READ and MW_BIND only, a type 2 window");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, {"REMOTE_READ", "MW_BIND"}, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 2);
  step(ctx, "BIND_MW of a remotely writable window must fail");
  expect_bind_wr_fails(ctx, c, r.cq,
                       bind_wr(72, mw, next_key(mw.rkey), mr, 0, 1024, {"REMOTE_WRITE"}),
                       "BIND_MW of a writable window to a region without LOCAL_WRITE");
}

// C10-75: a zero-based window outside its region.
void zero_based_bind_inside_region(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "a 4 KiB region and a type 2 window");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 2);
  step(ctx, "BIND_MW of a zero-based window of 2 KiB from offset 3 KiB must fail");
  expect_bind_wr_fails(ctx, c, r.cq,
                       bind_wr(73, mw, next_key(mw.rkey), mr, 3072, 2048, kRemoteRw, true),
                       "BIND_MW of a zero-based window reaching past its region");
}

// C10-75: access through a zero-based window stays inside the window.
void zero_based_access_bounds(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "a zero-based type 2 window of 256 bytes at offset 1 KiB of a region");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 2);
  const std::uint32_t key = bind2(ctx, c, r.cq, mw, mw.rkey, mr, 1024, 256, kRemoteRw, true);

  step(ctx, "WRITE at window VA 0 lands at region offset 1 KiB");
  write_through(ctx, c, 0, 0, key, 0x41);
  expect_ack(ctx, c, 0);
  expect_memory(ctx, mr, 1024, 64, 0x41, "a WRITE at zero-based VA 0 did not land at the window");
  step(ctx, "WRITE of 64 bytes at window VA 224 crosses the window's end: NAK, memory unchanged");
  write_through(ctx, c, 1, 224, key, 0x42);
  expect_access_nak(ctx, c, 1);
  expect_untouched(ctx, mr, 1024 + 224, "a WRITE past the zero-based window's end changed it");
}

// ---- access through a window (wire) -------------------------------------------------------

// C10-76.2.1: a type 1 window reached through a QP of another PD.
void type1_pd_checked(CaseContext& ctx) {
  Connection& a = ctx.new_connection("a");
  Connection& b = ctx.new_connection("b");
  step(ctx, "QP a in PD A with a type 1 window, QP b in PD B");
  const Rig r = rig(ctx, a);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 1);
  const std::uint32_t key = bind1(ctx, a, r.cq, mw, mr, 0, 2048, kRemoteRw, 1);
  const std::uint32_t other = Control(ctx).setup(ctl::AllocPd{}).pd;
  qp_up(ctx, b, other, r.cq);

  step(ctx, "WRITE through the window on QP a (its PD) is ACKed");
  write_through(ctx, a, 0, mr.addr, key, 0x51);
  expect_ack(ctx, a, 0);
  step(ctx, "WRITE through the window on QP b (another PD): NAK, memory unchanged");
  write_through(ctx, b, 0, mr.addr + 512, key, 0x52);
  expect_access_nak(ctx, b, 0);
  expect_untouched(ctx, mr, 512, "a WRITE through a window of another PD changed it");
}

// o10-37.2.43: a type 2 window reached through another QP of its PD.
void type2_bound_qp_only(CaseContext& ctx) {
  Connection& a = ctx.new_connection("a");
  Connection& b = ctx.new_connection("b");
  step(ctx, "QPs a and b in one PD; a type 2 window bound through QP a");
  const Rig r = rig(ctx, a);
  qp_up(ctx, b, r.pd, r.cq);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 2);
  const std::uint32_t key = bind2(ctx, a, r.cq, mw, mw.rkey, mr, 0, 2048, kRemoteRw);

  step(ctx, "WRITE through the window on QP a is ACKed");
  write_through(ctx, a, 0, mr.addr, key, 0x61);
  expect_ack(ctx, a, 0);
  step(ctx, "WRITE through the window on QP b: NAK remote access error, memory unchanged");
  write_through(ctx, b, 0, mr.addr + 512, key, 0x62);
  expect_access_nak(ctx, b, 0);
  expect_untouched(ctx, mr, 512, "a WRITE through another QP's window changed the region");
}

// C10-77: the window's rights, not the region's.
void window_access_rights(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "a region open to remote write and read; a read-only type 2 window on it");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 2);
  const std::uint32_t key = bind2(ctx, c, r.cq, mw, mw.rkey, mr, 0, 2048, {"REMOTE_READ"});

  step(ctx, "READ through the window returns the region's bytes");
  ctx.send(c, "RDMA_READ_REQUEST",
           {{"psn", "0"},
            {"len", "64"},
            {"va", std::to_string(mr.addr)},
            {"rkey", std::to_string(key)}});
  ctx.expect(&c, {"READ_RESPONSE_ONLY", {{"psn", "0"}, {"len", "64"}, {"fill", "0x10"}}},
             ctx.timing().expect_window());
  step(ctx, "WRITE through the read-only window: NAK remote access error, memory unchanged");
  write_through(ctx, c, 1, mr.addr, key, 0x71);
  expect_access_nak(ctx, c, 1);
  expect_untouched(ctx, mr, 0, "a WRITE through a read-only window changed the region");
}

// ---- type rules ----------------------------------------------------------------------------

// o10-36.2.2: a zero-based type 1 window.
void type1_not_zero_based(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 1);
  step(ctx, "bind_mw of the type 1 window as zero-based must fail");
  expect_bind_verb_fails(
      ctx, r.cq,
      ctl::BindMw{c.remote_qpn, mw.mw, mr.handle, mr.addr, 1024, kRemoteRw, true, 80, {"SIGNALED"}},
      "a zero-based bind of a type 1 window");
}

// o10-37.2.40: a type 1 window through a BIND_MW WR.
void type1_not_bound_by_wr(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 1);
  step(ctx, "a BIND_MW WR naming the type 1 window must fail");
  expect_bind_wr_fails(ctx, c, r.cq, bind_wr(81, mw, next_key(mw.rkey), mr, 0, 1024, kRemoteRw),
                       "BIND_MW WR of a type 1 window");
}

// o10-37.2.32: a type 2 window through the bind verb.
void type2_not_bound_by_verb(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 2);
  step(ctx, "bind_mw (the verb) of the type 2 window must fail");
  expect_bind_verb_fails(
      ctx, r.cq,
      ctl::BindMw{
          c.remote_qpn, mw.mw, mr.handle, mr.addr, 1024, kRemoteRw, false, 82, {"SIGNALED"}},
      "bind_mw of a type 2 window");
}

// o10-37.2.26: a bound type 2 window is not bound again.
void type2_bind_needs_free_window(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "a type 2 window bound once");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 2);
  const std::uint32_t key = bind2(ctx, c, r.cq, mw, mw.rkey, mr, 0, 1024, kRemoteRw);
  step(ctx, "a second BIND_MW without invalidation must fail");
  expect_bind_wr_fails(ctx, c, r.cq, bind_wr(83, mw, next_key(key), mr, 1024, 1024, kRemoteRw),
                       "BIND_MW of a bound type 2 window");
}

// o10-37.2.30: a type 2 bind of nothing.
void type2_bind_needs_nonempty_region(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 2);
  step(ctx, "BIND_MW of a type 2 window with length 0 must fail");
  expect_bind_wr_fails(ctx, c, r.cq, bind_wr(84, mw, next_key(mw.rkey), mr, 0, 0, kRemoteRw),
                       "BIND_MW of a type 2 window to an empty range");
}

// ---- invalidation --------------------------------------------------------------------------

// o10-37.2.13: a region registered by reg_mr is not invalidated by LOCAL_INV.
void local_inv_region_refused(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  step(ctx, "LOCAL_INV of a reg_mr region's R_Key must fail");
  ctl::SendWr inv;
  inv.wr_id = 90;
  inv.opcode = "LOCAL_INV";
  inv.send_flags = {"SIGNALED"};
  inv.invalidate_rkey = mr.rkey;
  if (!ctx.call(ctl::PostSend{c.remote_qpn, {inv}})) return;  // refused at once
  const auto wc = next_wc(ctx, r.cq);
  if (!wc)
    ctx.fail("LOCAL_INV of a region's R_Key: accepted, and no completion came",
             {{"LOCAL_INV", "an error completion", "no completion"}});
  if (wc->status == "SUCCESS" || wc->status == "WR_FLUSH_ERR")
    ctx.fail("LOCAL_INV of a reg_mr region's R_Key completed " + wc->status,
             {{"wc.status", "an error (LOC_QP_OP_ERR)", wc->status}});
}

// o10-37.2.17 (and C10-68, o10-37.2.35): a peer invalidates the type 2 window of its QP.
void remote_invalidate_type2(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "a type 2 window bound through the QP, and a receive buffer");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 2);
  const std::uint32_t key = bind2(ctx, c, r.cq, mw, mw.rkey, mr, 0, 1024, kRemoteRw);
  Control(ctx).setup(
      ctl::PostRecv{c.remote_qpn, {ctl::RecvWr{91, {{mr.addr + 2048, 256, mr.lkey}}}}});

  step(ctx, "SEND with invalidate naming the window's R_Key is ACKed");
  ctx.send(c, "SEND_ONLY_WITH_INVALIDATE",
           {{"psn", "0"}, {"ackreq", "1"}, {"len", "32"}, {"inv_rkey", std::to_string(key)}});
  expect_ack(ctx, c, 0);
  const auto wc = next_wc(ctx, r.cq);
  if (!wc) ctx.fail("no receive completion for the SEND with invalidate");
  const bool with_inv =
      std::find(wc->wc_flags.begin(), wc->wc_flags.end(), "WITH_INV") != wc->wc_flags.end();
  if (wc->status != "SUCCESS" || wc->opcode != "RECV" || !with_inv || wc->imm_data != key)
    ctx.fail("the receive of a SEND with invalidate does not report the invalidated R_Key",
             {{"wc", fmt::format("RECV SUCCESS WITH_INV invalidated rkey {:#x}", key),
               ctl::describe(*wc)}});

  step(ctx, "WRITE through the invalidated R_Key: NAK remote access error, memory unchanged");
  write_through(ctx, c, 1, mr.addr, key, 0x92);
  expect_access_nak(ctx, c, 1);
  expect_untouched(ctx, mr, 0, "a WRITE through a remotely invalidated R_Key changed it");
}

// o10-37.2.17: a peer may not invalidate a type 1 window.
void remote_invalidate_type1_refused(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "a type 1 window and a receive buffer");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 1);
  const std::uint32_t key = bind1(ctx, c, r.cq, mw, mr, 0, 1024, kRemoteRw, 1);
  Control(ctx).setup(
      ctl::PostRecv{c.remote_qpn, {ctl::RecvWr{93, {{mr.addr + 2048, 256, mr.lkey}}}}});
  step(ctx, "SEND with invalidate naming the type 1 window: NAK invalid request");
  ctx.send(c, "SEND_ONLY_WITH_INVALIDATE",
           {{"psn", "0"}, {"ackreq", "1"}, {"len", "32"}, {"inv_rkey", std::to_string(key)}});
  ctx.expect(&c, {"NAK", {{"psn", "0"}, {"syndrome", "inv_req"}}}, ctx.timing().expect_window());
}

// o10-2.2.5: destroying a QP with a bound type 2 window.
void destroy_qp_with_bound_type2(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "a type 2 window bound through the QP");
  const Rig r = rig(ctx, c);
  const auto mr = region(ctx, r.pd, kFullRegion, 0x10);
  const auto mw = alloc_mw(ctx, r.pd, 2);
  bind2(ctx, c, r.cq, mw, mw.rkey, mr, 0, 1024, kRemoteRw);
  step(ctx, "destroy_qp succeeds; then the window is deallocated");
  Control t(ctx);
  t.must(ctl::DestroyQp{c.remote_qpn}, "destroy_qp with a bound type 2 window");
  c.via_control = false;  // destroyed: close_all has nothing to undo
  c.state = engine::ConnState::kClosed;
  t.must(ctl::DeallocMw{mw.mw}, "dealloc_mw after its QP is gone");
}

constexpr CaseFile kFile{kSource};

}  // namespace

void add_mw_cpp_cases(engine::Catalogue& catalogue) {
  const std::vector<std::string> t1 = {"control", "mw-type1"};
  const std::vector<std::string> t2 = {"control", "mw-type2"};
  const std::string unchecked = "unchecked: 10.6.7";
  kFile.add(catalogue, "mw/type1-rebind-kills-old-rkey",
            "After a type 1 memory window is rebound, its old R_Key fails and the new one works",
            "A type 1 window is bound with the bind verb to 1 KiB of a region and a WRITE through "
            "its R_Key lands. The window is rebound to the next KiB: the bind gives a new R_Key, a "
            "WRITE through it lands, and a WRITE through the old R_Key must get NAK remote access "
            "error and change nothing.",
            {"10.6.7 C10-68",
             "Once a memory window is rebound or invalidated, no access through its old binding "
             "may succeed",
             "C10-68: linux-rdma post on rxe memory windows; " + unchecked},
            "MUST", t1, type1_rebind_kills_old_rkey);
  kFile.add(
      catalogue, "mw/type2-invalidate-kills-rkey",
      "LOCAL_INV frees a bound type 2 memory window and its R_Key fails afterwards",
      "A type 2 window bound by a BIND_MW WR is reached by a WRITE. A LOCAL_INV WR naming its "
      "R_Key must complete successfully; the window is then free and a new bind succeeds, "
      "and a WRITE through the invalidated R_Key must get NAK remote access error.",
      {"10.6.7 C10-68; o10-37.2.34; o10-37.2.35",
       "Invalidating a bound type 2 window frees it, and its R_Key no longer grants access",
       "o10-37.2.34, o10-37.2.35: linux-rdma 2020-08 (rxe MW); " + unchecked},
      "MUST", t2, type2_invalidate_kills_rkey);
  kFile.add(catalogue, "mw/bind-needs-qp-of-window-pd",
            "A memory window is bound only through a QP of its own protection domain",
            "A type 2 window is allocated in a second PD; a BIND_MW WR through a QP of the first "
            "PD, to a region of the first PD, must fail: refused at once or completed with "
            "MW_BIND_ERR.",
            {"10.6.7 C10-72", "The QP that binds a memory window must be in the window's PD",
             "C10-72: linux-rdma 2021-04 (rxe rxe_check_bind_mw); " + unchecked},
            "MUST", t2, bind_needs_qp_of_window_pd);
  kFile.add(catalogue, "mw/bind-needs-bind-right",
            "A memory window binds only to a region registered with the MW_BIND right",
            "A region is registered with local write, remote write and read but without MW_BIND; "
            "a BIND_MW WR of a type 2 window to it must fail (immediate error or MW_BIND_ERR).",
            {"10.6.7 C10-73", "A window may be bound only to a region that allows binding",
             "C10-73: linux-rdma 2021-04 (rxe rxe_check_bind_mw); " + unchecked},
            "MUST", t2, bind_needs_bind_right);
  kFile.add(catalogue, "mw/writable-window-needs-local-write",
            "A remotely writable memory window needs a locally writable region",
            "A region has REMOTE_READ and MW_BIND but no LOCAL_WRITE; a BIND_MW WR of a type 2 "
            "window with REMOTE_WRITE to it must fail (immediate error or MW_BIND_ERR).",
            {"10.6.7 C10-74",
             "A window with remote write or atomic access requires local write on its region",
             "C10-74: linux-rdma 2021-04 (rxe rxe_check_bind_mw); " + unchecked},
            "MUST", t2, writable_window_needs_local_write);
  kFile.add(catalogue, "mw/zero-based-bind-inside-region",
            "A zero-based memory window must lie inside its region",
            "A type 2 window is bound zero-based to 2 KiB starting 3 KiB into a 4 KiB region: the "
            "bind must fail (immediate error or MW_BIND_ERR).",
            {"10.6.7 C10-75", "A zero-based window's range lies within its region",
             "C10-75: linux-rdma 2021-04 (rxe rxe_check_bind_mw); " + unchecked},
            "MUST", t2, zero_based_bind_inside_region);
  kFile.add(catalogue, "mw/zero-based-access-bounds",
            "Access through a zero-based memory window is addressed from 0 and ends at the "
            "window's length",
            "A type 2 window is bound zero-based to 256 bytes at offset 1 KiB of a region. A WRITE "
            "at VA 0 must land at region offset 1 KiB; a 64-byte WRITE at VA 224 crosses the "
            "window's end and must get NAK remote access error, leaving the region unchanged.",
            {"10.6.7 C10-75",
             "A zero-based window's VAs start at 0 and stay within the window and its region",
             "C10-75: linux-rdma 2021-04; " + unchecked},
            "MUST", t2, zero_based_access_bounds);
  kFile.add(catalogue, "mw/type1-pd-checked",
            "A type 1 memory window is reached only through a QP of its protection domain",
            "A type 1 window is bound through QP a (PD A). A WRITE through its R_Key on QP a is "
            "ACKed; the same on QP b of another PD must get NAK remote access error and change "
            "nothing.",
            {"10.6.7 C10-76.2.1",
             "Access through a type 1 window requires the QP's PD to be the window's",
             "C10-76.2.1: linux-rdma 2020-09 (rxe rxe_lookup_mw); " + unchecked},
            "MUST", t1, type1_pd_checked);
  kFile.add(catalogue, "mw/type2-bound-qp-only",
            "A type 2 memory window is reached only through the QP it is bound to",
            "Two QPs of one PD; a type 2 window is bound through QP a. A WRITE through its R_Key "
            "on QP a is ACKed; the same on QP b must get NAK remote access error and change "
            "nothing.",
            {"10.6.7 o10-37.2.43", "A type 2 window is usable only through the QP it is bound to",
             "o10-37.2.43: linux-rdma 2020-09 (rxe rxe_lookup_mw); " + unchecked},
            "MUST", t2, type2_bound_qp_only);
  kFile.add(catalogue, "mw/window-access-rights",
            "A memory window grants its own access rights, not its region's",
            "A region open to remote write and read carries a type 2 window bound with "
            "REMOTE_READ only. A READ through the window returns the region's bytes; a WRITE "
            "through it must get NAK remote access error and change nothing.",
            {"10.6.7 C10-77",
             "Remote access through a window is checked against the "
             "window's access rights",
             "C10-77: linux-rdma 2020-09 (rxe rxe_lookup_mw); " + unchecked},
            "MUST", t2, window_access_rights);
  kFile.add(catalogue, "mw/type1-not-zero-based",
            "A type 1 memory window cannot be bound zero-based",
            "The bind verb is asked to bind a type 1 window zero-based: it must fail, at once or "
            "with an MW_BIND_ERR completion.",
            {"10.6.7 o10-36.2.2", "Type 1 windows are never zero-based",
             "o10-36.2.2: linux-rdma 2021-04 (rxe rxe_check_bind_mw); " + unchecked},
            "MUST", t1, type1_not_zero_based);
  kFile.add(catalogue, "mw/type1-not-bound-by-wr",
            "A type 1 memory window is bound only through the bind verb, not a BIND_MW WR",
            "A BIND_MW send WR names a type 1 window: it must fail, refused at once or completed "
            "with MW_BIND_ERR.",
            {"10.6.7 o10-37.2.40", "Type 1 windows are bound by the Bind Memory Window verb only",
             "o10-37.2.40: linux-rdma 2021-04; " + unchecked},
            "MUST", t1, type1_not_bound_by_wr);
  kFile.add(catalogue, "mw/type2-not-bound-by-verb",
            "A type 2 memory window is bound only through a BIND_MW WR, not the bind verb",
            "The bind verb is given a type 2 window: it must fail, refused at once or completed "
            "with MW_BIND_ERR.",
            {"10.6.7 o10-37.2.32", "Type 2 windows are bound by a Bind Memory Window WR only",
             "o10-37.2.32: linux-rdma 2020-08 (rxe MW); " + unchecked},
            "MUST", t2, type2_not_bound_by_verb);
  kFile.add(
      catalogue, "mw/type2-bind-needs-free-window",
      "A bound type 2 memory window cannot be bound again before it is invalidated",
      "A type 2 window is bound by a BIND_MW WR; a second BIND_MW of the same window, without "
      "an invalidation between, must fail (immediate error or MW_BIND_ERR).",
      {"10.6.7 o10-37.2.26", "A type 2 bind requires the window to be free",
       "o10-37.2.26: linux-rdma 2020-08 (rxe MW); " + unchecked},
      "MUST", t2, type2_bind_needs_free_window);
  kFile.add(catalogue, "mw/type2-bind-needs-nonempty-region",
            "A type 2 memory window is not bound to an empty range",
            "A BIND_MW WR binds a type 2 window with length 0: it must fail (immediate error or "
            "MW_BIND_ERR).",
            {"10.6.7 o10-37.2.30", "A type 2 bind requires a region range of nonzero length",
             "o10-37.2.30: linux-rdma 2021-04 (rxe rxe_check_bind_mw); " + unchecked},
            "MUST", t2, type2_bind_needs_nonempty_region);
  kFile.add(catalogue, "mw/local-inv-region-refused",
            "LOCAL_INV does not invalidate a region registered with reg_mr",
            "A LOCAL_INV WR names the R_Key of a region registered with reg_mr (not a "
            "fast-registered one): it must fail, refused at once or completed in error.",
            {"10.6.7 o10-37.2.13",
             "Local invalidation applies to windows and fast-registered "
             "regions only",
             "o10-37.2.13: linux-rdma 2020-10 (rxe rxe_invalidate_mr); " + unchecked},
            "MUST", t2, local_inv_region_refused);
  kFile.add(catalogue, "mw/remote-invalidate-type2",
            "A SEND with invalidate frees the type 2 window of its QP and kills its R_Key",
            "A type 2 window is bound through the QP. The tester's SEND with invalidate naming its "
            "R_Key must be ACKed and its receive completion must carry WITH_INV and the R_Key; a "
            "WRITE through that R_Key afterwards must get NAK remote access error.",
            {"10.6.7 o10-37.2.17; C10-68; o10-37.2.35",
             "A peer may invalidate a type 2 window bound to the QP it sends to; the R_Key then "
             "fails",
             "o10-37.2.17: linux-rdma 2020-10 (rxe responder invalidate); " + unchecked},
            "MUST", t2, remote_invalidate_type2);
  kFile.add(catalogue, "mw/remote-invalidate-type1-refused",
            "A SEND with invalidate naming a type 1 window gets NAK invalid request",
            "A type 1 window is bound with the bind verb. The tester's SEND with invalidate naming "
            "its R_Key must get NAK invalid request: a peer may not invalidate a type 1 window.",
            {"10.6.7 o10-37.2.17",
             "Only type 2 windows (and fast-registered regions) may be invalidated remotely",
             "o10-37.2.17: linux-rdma 2020-10; " + unchecked},
            "MUST", t1, remote_invalidate_type1_refused);
  kFile.add(catalogue, "mw/destroy-qp-with-bound-type2",
            "Destroying a QP with a bound type 2 memory window succeeds",
            "A type 2 window is bound through a QP; destroy_qp must succeed, and the window can "
            "then be deallocated.",
            {"o10-2.2.5", "Destroy QP succeeds while a type 2B window is bound to the QP",
             "o10-2.2.5: rdma-unit-test mw_test.cc"},
            "MUST", t2, destroy_qp_with_bound_type2);
}

}  // namespace roceconf::cases
