#include "suite/reference_nic/memory_window.h"

#include <algorithm>

#include <fmt/format.h>

namespace roceconf::target {
namespace {

AccessError fault(AccessFault f, std::string message) {
  return AccessError{f, std::move(message)};
}

std::unexpected<std::string> refused(std::string message) {
  return std::unexpected(std::move(message));
}

}  // namespace

VerbsResult<Mw*> MwTable::alloc(std::uint32_t pd, MwType type) {
  if (type != MwType::kType1 && type != MwType::kType2)
    return verbs_error(VerbsStatus::kInval, "alloc_mw: type {} is not 1 or 2",
                       static_cast<int>(type));
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    if (kFirstIndex + slot > 0xFFFFFF)
      return verbs_error(VerbsStatus::kNoMem, "alloc_mw: no free window key index");
    slots_.emplace_back();
    variants_.push_back(0);
  }
  auto mw = std::make_unique<Mw>();
  mw->handle = next_handle_++;
  mw->pd = pd;
  mw->type = type;
  mw->rkey = (kFirstIndex + slot) << 8 | variants_[slot]++;
  by_handle_[mw->handle] = slot;
  slots_[slot] = std::move(mw);
  return slots_[slot].get();
}

VerbsResult<void> MwTable::dealloc(std::uint32_t handle) {
  const auto it = by_handle_.find(handle);
  if (it == by_handle_.end())
    return verbs_error(VerbsStatus::kNoEnt, "dealloc_mw: no memory window {}", handle);
  slots_[it->second].reset();
  free_slots_.push_back(it->second);
  by_handle_.erase(it);
  return {};
}

Mw* MwTable::find(std::uint32_t handle) {
  const auto it = by_handle_.find(handle);
  return it == by_handle_.end() ? nullptr : slots_[it->second].get();
}

Mw* MwTable::find_key(std::uint32_t key) {
  return const_cast<Mw*>(std::as_const(*this).find_key(key));
}

const Mw* MwTable::find_key(std::uint32_t key) const {
  if (!is_window_key(key)) return nullptr;
  const std::uint32_t slot = (key >> 8) - kFirstIndex;
  if (slot >= slots_.size() || !slots_[slot]) return nullptr;
  const Mw* mw = slots_[slot].get();
  // mw-rkey-survives-rebind: the key byte is never compared, so a retired key still matches.
  if (mw->rkey != key && !quirks_.has(Quirk::kMwRkeySurvivesRebind)) return nullptr;
  return mw;
}

std::size_t MwTable::bound_to_mr(std::uint32_t mr) const {
  std::size_t n = 0;
  for (const auto& [h, slot] : by_handle_)
    if (slots_[slot]->bound && slots_[slot]->mr == mr) ++n;
  return n;
}

std::size_t MwTable::in_pd(std::uint32_t pd) const {
  std::size_t n = 0;
  for (const auto& [h, slot] : by_handle_)
    if (slots_[slot]->pd == pd) ++n;
  return n;
}

std::vector<std::uint32_t> MwTable::handles() const {
  std::vector<std::uint32_t> out;
  for (const auto& [h, slot] : by_handle_) out.push_back(h);
  return out;
}

void MwTable::unbind(Mw& mw) {
  mw.bound = false;
  // mw-rkey-survives-rebind: the binding is left in place behind the freed window.
  if (quirks_.has(Quirk::kMwRkeySurvivesRebind)) return;
  mw.mr = 0;
  mw.addr = mw.length = 0;
  mw.access = 0;
  mw.zero_based = false;
  mw.qp_num = 0;
}

VerbsResult<void> MwTable::check_bind_verb(const MwBind& b) {
  const Mw* mw = find(b.mw);
  if (!mw) return verbs_error(VerbsStatus::kNoEnt, "bind_mw: no memory window {}", b.mw);
  // o10-37.2.32: a type 2 window is bound through a BIND_MW work request only.
  if (mw->type != MwType::kType1)
    return verbs_error(VerbsStatus::kInval,
                       "bind_mw: window {} is type 2: bind it with a BIND_MW work request", b.mw);
  // o10-36.2.2: a type 1 window is never zero-based.
  if (b.zero_based)
    return verbs_error(VerbsStatus::kInval, "bind_mw: a type 1 window cannot be zero-based");
  if (b.access & ~access::kRemote)
    return verbs_error(VerbsStatus::kInval, "bind_mw: window access {} is not remote access",
                       access_flags_names(b.access & ~access::kRemote));
  return {};
}

std::expected<void, std::string> MwTable::bind(MrTable& mrs, const MwAccessor& by,
                                               const MwBind& b) {
  Mw* mw = find(b.mw);
  if (!mw) return refused(fmt::format("no memory window {}", b.mw));
  const bool type1 = mw->type == MwType::kType1;
  if (type1 && !b.by_verb)
    return refused(
        fmt::format("window {} is type 1: only the bind verb binds it (o10-37.2.40)", b.mw));
  if (!type1 && b.by_verb)
    return refused(
        fmt::format("window {} is type 2: only a BIND_MW WR binds it (o10-37.2.32)", b.mw));
  if (type1 && b.zero_based) return refused("a type 1 window cannot be zero-based (o10-36.2.2)");
  if (!type1 && mw->bound)
    return refused(
        fmt::format("type 2 window {} is bound: invalidate it first (o10-37.2.26)", b.mw));
  if (!type1 && b.length == 0)
    return refused("a type 2 window is bound to a non-empty region range (o10-37.2.30)");
  // C10-72: the window is bound through a QP of its own PD.
  if (mw->pd != by.pd)
    return refused(
        fmt::format("window {} is in PD {}, the QP in PD {} (C10-72)", b.mw, mw->pd, by.pd));
  const std::uint32_t rkey = b.rkey.value_or(next_rkey(*mw));
  if ((rkey >> 8) != (mw->rkey >> 8))
    return refused(
        fmt::format("R_Key {:#010x} does not name window {} ({:#010x})", rkey, b.mw, mw->rkey));
  if (b.access & ~access::kRemote)
    return refused(fmt::format("window access {} is not remote access",
                               access_flags_names(b.access & ~access::kRemote)));

  if (type1 && b.length == 0) {
    // A zero-length bind of a type 1 window unbinds it; the key still changes.
    unbind(*mw);
    mw->rkey = rkey;
    return {};
  }
  const Mr* mr = mrs.find(b.mr);
  if (!mr) return refused(fmt::format("no memory region {}", b.mr));
  if (mr->pd() != mw->pd)
    return refused(
        fmt::format("region {} is in PD {}, the window in PD {} (C10-72)", b.mr, mr->pd(), mw->pd));
  // C10-73: the region must allow binding.
  if (!(mr->access() & access::kMwBind) && !quirks_.has(Quirk::kMwBindRightUnchecked))
    return refused(fmt::format("region {} lacks MW_BIND (has {}) (C10-73)", b.mr,
                               access_flags_names(mr->access())));
  // C10-74: a window writable from the wire needs a locally writable region.
  if ((b.access & (access::kRemoteWrite | access::kRemoteAtomic)) &&
      !(mr->access() & access::kLocalWrite))
    return refused(fmt::format("a window with {} needs LOCAL_WRITE on region {} (C10-74)",
                               access_flags_names(b.access), b.mr));
  // C10-75 (and every window): the window lies inside its region.
  if (!mr->contains(b.addr, b.length))
    return refused(fmt::format("{} bytes at {:#x} are outside region {} [{:#x}, {:#x}) (C10-75)",
                               b.length, b.addr, b.mr, mr->addr(), mr->addr() + mr->length()));
  mw->rkey = rkey;
  mw->bound = true;
  mw->mr = b.mr;
  mw->addr = b.addr;
  mw->length = b.length;
  mw->access = b.access;
  mw->zero_based = b.zero_based;
  mw->qp_num = type1 ? 0 : by.qp_num;
  return {};
}

std::expected<void, std::string> MwTable::invalidate_local(const MwAccessor& by,
                                                           std::uint32_t rkey) {
  Mw* mw = find_key(rkey);
  if (!mw) return refused(fmt::format("R_Key {:#010x} names no memory window", rkey));
  if (mw->type == MwType::kType1)
    return refused(fmt::format("window {} is type 1: it is unbound by the bind verb", mw->handle));
  if (mw->pd != by.pd)
    return refused(
        fmt::format("window {} is in PD {}, the QP in PD {}", mw->handle, mw->pd, by.pd));
  if (!mw->bound) return refused(fmt::format("window {} is not bound", mw->handle));
  unbind(*mw);
  return {};
}

std::expected<void, std::string> MwTable::check_remote_invalidate(const MwAccessor& by,
                                                                  std::uint32_t rkey) const {
  const Mw* mw = find_key(rkey);
  if (!mw) return refused(fmt::format("R_Key {:#010x} names no memory window", rkey));
  if (mw->type == MwType::kType1)
    return refused(fmt::format("window {} is type 1: a peer may not invalidate it", mw->handle));
  if (!mw->bound) return refused(fmt::format("window {} is not bound", mw->handle));
  if (mw->pd != by.pd || mw->qp_num != by.qp_num)
    return refused(fmt::format("window {} is bound to QP {:#x}, not this one ({:#x})", mw->handle,
                               mw->qp_num, by.qp_num));
  return {};
}

void MwTable::invalidate_remote(const MwAccessor& by, std::uint32_t rkey) {
  if (!check_remote_invalidate(by, rkey)) return;
  unbind(*find_key(rkey));
}

void MwTable::qp_destroyed(std::uint32_t qp_num) {
  for (const auto& [h, slot] : by_handle_) {
    Mw& mw = *slots_[slot];
    if (mw.type == MwType::kType2 && mw.bound && mw.qp_num == qp_num) unbind(mw);
  }
}

AccessResult MwTable::check_remote(MrTable& mrs, const MwAccessor& by, std::uint32_t rkey,
                                   std::uint64_t va, std::uint64_t len, AccessFlags needed) {
  if (len == 0) return MrSpan{};
  const bool stale_binding = quirks_.has(Quirk::kMwRkeySurvivesRebind);
  Mw* mw = find_key(rkey);
  if (!mw || (!mw->bound && !(stale_binding && mw->mr != 0)))
    return std::unexpected(
        fault(AccessFault::kNotFound, fmt::format("R_Key {:#010x} names no bound window", rkey)));
  if (mw->type == MwType::kType1 && mw->pd != by.pd && !quirks_.has(Quirk::kMwPdUnchecked))
    return std::unexpected(fault(
        AccessFault::kWrongPd,
        fmt::format("window R_Key {:#010x} is in PD {}, the QP in PD {}", rkey, mw->pd, by.pd)));
  if (mw->type == MwType::kType2 && mw->qp_num != by.qp_num && !quirks_.has(Quirk::kMwQpUnchecked))
    return std::unexpected(fault(
        AccessFault::kWrongPd, fmt::format("window R_Key {:#010x} is bound to QP {:#x}, not {:#x}",
                                           rkey, mw->qp_num, by.qp_num)));
  Mr* mr = mrs.find(mw->mr);
  if (!mr)
    return std::unexpected(
        fault(AccessFault::kNotFound, fmt::format("window R_Key {:#010x} has no region", rkey)));
  // mw-access-unchecked: the region's rights stand in for the window's.
  const AccessFlags rights = quirks_.has(Quirk::kMwAccessUnchecked) ? mr->access() : mw->access;
  if ((rights & needed) != needed)
    return std::unexpected(
        fault(AccessFault::kAccessDenied,
              fmt::format("window R_Key {:#010x} lacks {} (has {})", rkey,
                          access_flags_names(needed & ~rights), access_flags_names(rights))));
  // A zero-based window answers VAs from 0; any other the region's VAs it covers.
  const std::uint64_t base = mw->zero_based ? 0 : mw->addr;
  std::uint64_t limit = mw->length;
  // mw-zero-based-unbounded: a zero-based window reaches to the end of its region.
  if (mw->zero_based && quirks_.has(Quirk::kMwZeroBasedUnbounded))
    limit = mr->addr() + mr->length() - mw->addr;
  if (va < base || va - base > limit || len > limit - (va - base))
    return std::unexpected(
        fault(AccessFault::kOutOfBounds,
              fmt::format("{} bytes at {:#x} are outside window R_Key {:#010x} [{:#x}, {:#x})", len,
                          va, rkey, base, base + mw->length)));
  const std::uint64_t region_va = mw->addr + (va - base);
  if (!mr->contains(region_va, len))
    return std::unexpected(
        fault(AccessFault::kOutOfBounds,
              fmt::format("{} bytes at {:#x} are outside the window's region", len, region_va)));
  return MrSpan{mr, mr->range(region_va, len)};
}

}  // namespace roceconf::target
