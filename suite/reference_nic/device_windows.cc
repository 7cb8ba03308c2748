// The Device's memory-window verbs and the send-queue work that binds and invalidates them
// (memory_window.h holds the rules).
#include <fmt/format.h>

#include "suite/reference_nic/device.h"

namespace roceconf::target {

VerbsResult<Mw*> Device::alloc_mw(std::uint32_t pd, MwType type) {
  if (!pds_.contains(pd)) return verbs_error(VerbsStatus::kNoEnt, "alloc_mw: no PD {}", pd);
  return mws_.alloc(pd, type);
}

VerbsResult<void> Device::dealloc_mw(std::uint32_t handle) {
  return mws_.dealloc(handle);
}

VerbsResult<std::uint32_t> Device::bind_mw(std::uint32_t qp_num, MwBind bind, std::uint64_t wr_id,
                                           std::uint32_t send_flags) {
  Qp* q = qp(qp_num);
  if (!q) return verbs_error(VerbsStatus::kNoEnt, "bind_mw: no QP {:#x}", qp_num);
  if (auto ok = mws_.check_bind_verb(bind); !ok) return std::unexpected(ok.error());
  const Mw& mw = *mws_.find(bind.mw);
  // The verb picks the next key byte, as ibv_bind_mw does with ibv_inc_rkey.
  const std::uint32_t rkey = MwTable::next_rkey(mw);
  bind.rkey = rkey;
  bind.by_verb = true;
  SendWr wr;
  wr.wr_id = wr_id;
  wr.opcode = WrOpcode::kBindMw;
  wr.send_flags = send_flags;
  wr.bind_mw = bind;
  if (auto posted = q->post_send(std::span<const SendWr>(&wr, 1)); !posted)
    return std::unexpected(posted.error().error);
  return rkey;
}

WcStatus Device::execute_local_op(Qp& qp, const SendWr& wr) {
  const MwAccessor by{qp.pd(), qp.qp_num()};
  if (wr.opcode == WrOpcode::kBindMw)
    return mws_.bind(mrs_, by, wr.bind_mw) ? WcStatus::kSuccess : WcStatus::kMwBindErr;
  // LOCAL_INV: a window's key, or a region's. Regions here are ibv_reg_mr regions, which no
  // invalidation may take away (o10-37.2.13): only fast-registered ones could be.
  if (!MwTable::is_window_key(wr.invalidate_rkey)) return WcStatus::kLocQpOpErr;
  return mws_.invalidate_local(by, wr.invalidate_rkey) ? WcStatus::kSuccess : WcStatus::kLocQpOpErr;
}

AccessResult Device::check_remote(const Qp& qp, std::uint32_t rkey, std::uint64_t va,
                                  std::uint64_t len, AccessFlags needed) {
  if (MwTable::is_window_key(rkey))
    return mws_.check_remote(mrs_, MwAccessor{qp.pd(), qp.qp_num()}, rkey, va, len, needed);
  return mrs_.check_remote(qp.pd(), rkey, va, len, needed);
}

}  // namespace roceconf::target
