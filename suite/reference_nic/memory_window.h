// Memory windows (IBA Vol 1 10.6.7, ibv_alloc_mw(3), ibv_bind_mw(3)): a window is allocated in
// a PD and bound to a part of a memory region, with its own access rights and R_Key. Type 1
// windows are bound by the bind verb and reached through any QP of their PD; type 2 (2B) windows
// are bound by a BIND_MW send WR, only when free, and reached only through the QP that bound
// them; a LOCAL_INV WR or a peer's SEND with invalidate frees them. A rebind or an invalidation
// changes or retires the R_Key, so the old one fails (C10-68).
//
// Window keys share the R_Key space with the MRs' (`index << 8 | key byte`) from index kFirstIndex
// up, far above any MR index, so a key names either a region or a window.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "suite/reference_nic/errors.h"
#include "suite/reference_nic/mr.h"
#include "suite/reference_nic/quirks.h"

namespace roceconf::target {

enum class MwType : std::uint8_t { kType1 = 1, kType2 = 2 };

// What a bind asks for (ibv_mw_bind_info, and the WR's new R_Key for type 2).
struct MwBind {
  std::uint32_t mw = 0;  // window handle
  // The new R_Key: the window's index with a key byte the consumer picks. Unset: the next key
  // byte (ibv_inc_rkey).
  std::optional<std::uint32_t> rkey;
  std::uint32_t mr = 0;  // region handle; 0 with length 0 unbinds a type 1 window
  std::uint64_t addr = 0;
  std::uint64_t length = 0;
  AccessFlags access = 0;  // REMOTE_READ, REMOTE_WRITE, REMOTE_ATOMIC
  bool zero_based = false;
  bool by_verb = false;  // posted by the bind verb (type 1), not by a BIND_MW send WR
};

struct Mw {
  std::uint32_t handle = 0;
  std::uint32_t pd = 0;
  MwType type = MwType::kType1;
  std::uint32_t rkey = 0;
  bool bound = false;  // type 2: valid (bound) or free
  std::uint32_t mr = 0;
  std::uint64_t addr = 0;  // the region's VA the window starts at
  std::uint64_t length = 0;
  AccessFlags access = 0;
  bool zero_based = false;
  std::uint32_t qp_num = 0;  // type 2: the QP that bound it
};

// Who reaches a window: the QP the request arrived on.
struct MwAccessor {
  std::uint32_t pd = 0;
  std::uint32_t qp_num = 0;
};

class MwTable {
 public:
  static constexpr std::uint32_t kFirstIndex = 0x800000;
  static bool is_window_key(std::uint32_t key) { return (key >> 8) >= kFirstIndex; }

  void set_quirks(const Quirks& quirks) { quirks_ = quirks; }

  VerbsResult<Mw*> alloc(std::uint32_t pd, MwType type);
  // A bound window may be deallocated; its R_Key dies with it.
  VerbsResult<void> dealloc(std::uint32_t handle);
  Mw* find(std::uint32_t handle);
  std::size_t size() const { return by_handle_.size(); }
  std::size_t bound_to_mr(std::uint32_t mr) const;  // windows bound to region `mr`
  std::size_t in_pd(std::uint32_t pd) const;
  std::vector<std::uint32_t> handles() const;

  // The new R_Key a bind of `mw` gets when the consumer picks none.
  static std::uint32_t next_rkey(const Mw& mw) {
    return (mw.rkey & ~0xFFu) | ((mw.rkey + 1) & 0xFFu);
  }
  // The verb's checks before it posts a type 1 bind (immediate errors, EINVAL).
  VerbsResult<void> check_bind_verb(const MwBind& bind);
  // Executes a bind for the QP `by` (C10-72..75, o10-36.2.2, o10-37.2.26/.30/.32/.40). An error
  // says why; the bind WR then completes with MW_BIND_ERR and the window is unchanged.
  std::expected<void, std::string> bind(MrTable& mrs, const MwAccessor& by, const MwBind& bind);
  // LOCAL_INV of a window key by the QP `by` (o10-37.2.34): only a bound type 2 window of the
  // QP's PD. Region keys are the caller's (reg_mr regions may not be invalidated).
  std::expected<void, std::string> invalidate_local(const MwAccessor& by, std::uint32_t rkey);
  // A peer's SEND with invalidate (o10-37.2.17): only a bound type 2 window of this QP.
  std::expected<void, std::string> check_remote_invalidate(const MwAccessor& by,
                                                           std::uint32_t rkey) const;
  void invalidate_remote(const MwAccessor& by, std::uint32_t rkey);
  // Destroying a QP frees the type 2 windows it bound (o10-2.2.5: the destroy succeeds).
  void qp_destroyed(std::uint32_t qp_num);

  // The responder's R_Key check through a window (C10-76.2.1, C10-77, o10-37.2.43): key, PD
  // (type 1) or QP (type 2), the window's rights, its bounds; then the region's bytes.
  AccessResult check_remote(MrTable& mrs, const MwAccessor& by, std::uint32_t rkey,
                            std::uint64_t va, std::uint64_t len, AccessFlags needed);

 private:
  Mw* find_key(std::uint32_t key);
  const Mw* find_key(std::uint32_t key) const;
  void unbind(Mw& mw);

  Quirks quirks_;
  std::vector<std::unique_ptr<Mw>> slots_;
  std::vector<std::uint8_t> variants_;
  std::map<std::uint32_t, std::uint32_t> by_handle_;  // handle -> slot
  std::vector<std::uint32_t> free_slots_;
  std::uint32_t next_handle_ = 1;
};

}  // namespace roceconf::target
