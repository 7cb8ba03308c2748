// Memory regions (IBA Vol 1 10.6 "Memory management", ibv_reg_mr(3)): byte buffers registered in a
// PD with access rights, named on the wire by an R_Key (RETH, AtomicETH) and locally by an L_Key
// (scatter/gather elements). The R_Key check — key, PD, access right, bounds — is the one the
// responder runs before a READ, WRITE or atomic (spec-facts §4.6; NAK 0x62 when it fails).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "control/verbs_names.h"
#include "suite/reference_nic/errors.h"

namespace roceconf::target {

// Access flags; values are enum ibv_access_flags.
using AccessFlags = std::uint32_t;
namespace access {
inline constexpr AccessFlags kLocalWrite = 1u << 0;
inline constexpr AccessFlags kRemoteWrite = 1u << 1;
inline constexpr AccessFlags kRemoteRead = 1u << 2;
inline constexpr AccessFlags kRemoteAtomic = 1u << 3;
inline constexpr AccessFlags kRemote = kRemoteWrite | kRemoteRead | kRemoteAtomic;
inline constexpr AccessFlags kAll = kLocalWrite | kRemote;
// A region windows may be bound to (ibv_reg_mr IBV_ACCESS_MW_BIND); a window bind's zero-based
// addressing (IBV_ACCESS_ZERO_BASED).
inline constexpr AccessFlags kMwBind = 1u << 4;
inline constexpr AccessFlags kZeroBased = 1u << 5;
inline constexpr AccessFlags kRegion = kAll | kMwBind;  // what reg_mr accepts
}  // namespace access

// "LOCAL_WRITE|REMOTE_READ"; "0" for none.
std::string access_flags_names(AccessFlags flags);
// One flag from its name ("REMOTE_WRITE").
std::optional<AccessFlags> access_flag_from_name(std::string_view name);

// A scatter/gather element: `length` bytes at virtual address `addr` of the MR named by `lkey`.
struct Sge {
  std::uint64_t addr = 0;
  std::uint32_t length = 0;
  std::uint32_t lkey = 0;
  friend bool operator==(const Sge&, const Sge&) = default;
};

struct MrInit {
  std::uint32_t pd = 0;
  std::uint64_t length = 0;  // ignored when `buffer` is given
  AccessFlags access = 0;
  // The virtual address the region answers to (ibv_reg_mr_iova); the table picks one when empty.
  std::optional<std::uint64_t> iova;
  // Caller-owned memory to register; when empty the table allocates `length` zeroed bytes.
  std::span<std::uint8_t> buffer;
};

class Mr {
 public:
  std::uint32_t handle() const { return handle_; }
  std::uint32_t pd() const { return pd_; }
  std::uint32_t lkey() const { return key_; }
  std::uint32_t rkey() const { return key_; }  // one key for both, as mlx5 and rxe do
  std::uint64_t addr() const { return iova_; }
  std::uint64_t length() const { return memory_.size(); }
  AccessFlags access() const { return access_; }
  bool owns_memory() const { return !owned_.empty(); }

  // The whole region / the bytes of [va, va+len) (which must lie inside: see contains()).
  std::span<std::uint8_t> bytes() { return memory_; }
  std::span<const std::uint8_t> bytes() const { return memory_; }
  std::span<std::uint8_t> range(std::uint64_t va, std::uint64_t len) {
    return memory_.subspan(static_cast<std::size_t>(va - iova_), static_cast<std::size_t>(len));
  }
  bool contains(std::uint64_t va, std::uint64_t len) const;

 private:
  friend class MrTable;
  std::uint32_t handle_ = 0;
  std::uint32_t pd_ = 0;
  std::uint32_t key_ = 0;
  std::uint64_t iova_ = 0;
  AccessFlags access_ = 0;
  std::vector<std::uint8_t> owned_;
  std::span<std::uint8_t> memory_;
};

// Why a key check failed. The transport maps it: remote → NAK remote access (0x62), local →
// completion with LOC_PROT_ERR (or LOC_LEN_ERR for kLengthError).
enum class AccessFault : std::uint8_t {
  kNotFound,      // no live MR has this key (never registered, deregistered, stale variant)
  kWrongPd,       // the MR belongs to another PD than the QP
  kAccessDenied,  // the MR lacks the right (REMOTE_READ, REMOTE_WRITE, REMOTE_ATOMIC, LOCAL_WRITE)
  kOutOfBounds,   // [va, va+len) is not inside the MR
  kLengthError,   // more data than the scatter list can hold
};
std::string_view access_fault_name(AccessFault fault);  // "not_found", "wrong_pd", ...

struct AccessError {
  AccessFault fault = AccessFault::kNotFound;
  std::string message;  // "R_Key 0x00000305 is not registered"
};

// The checked bytes: `mr` is null (and `bytes` empty) for a zero-length access, which checks no
// key at all (spec-facts §4.6: a zero-length READ/WRITE may carry any R_Key and VA).
struct MrSpan {
  Mr* mr = nullptr;
  std::span<std::uint8_t> bytes;
};
using AccessResult = std::expected<MrSpan, AccessError>;

// All MRs of a device. Keys are random by default (seeded, so a run repeats): an off-path sender
// cannot guess one from another (ReDMArk, USENIX Security 2021), and a deregistered key is not
// handed out again for the next kRetiredKeys registrations. Bit 31 stays clear: window keys
// (memory_window.h) have it set.
class MrTable {
 public:
  struct Limits {
    std::uint32_t max_mr = 1u << 16;
    std::uint64_t max_mr_size = 1ull << 30;  // the target owns the bytes: keep them bounded
  };
  enum class KeyPolicy : std::uint8_t {
    kRandom,      // seeded random keys, none reused soon after its deregistration
    kSequential,  // `slot index << 8 | variant`, lowest free slot first (sequential-rkeys)
    kReuse,       // random, but a deregistered key goes to the next region (rkey-reuse)
  };
  static constexpr std::size_t kRetiredKeys = 4096;
  static constexpr std::uint64_t kFirstIova = 0x10000000;

  MrTable() : MrTable(Limits{}) {}
  explicit MrTable(Limits limits) : limits_(limits) {}
  // The pd-unchecked defect: keys of another PD's regions work.
  void set_check_pd(bool on) { check_pd_ = on; }
  // The reth-va-wraps defect: the range check computes va + len modulo 2^64, so an access that
  // wraps past 2^64 passes. Its bytes go to `stray_`, memory outside every region.
  void set_va_wrap_unchecked(bool on) { va_wrap_unchecked_ = on; }
  // How keys are chosen, for regions registered afterwards; `seed` restarts the random keys.
  void set_key_policy(KeyPolicy policy, std::uint64_t seed);

  // EINVAL for unknown access bits, REMOTE_WRITE/REMOTE_ATOMIC without LOCAL_WRITE (as
  // ib_check_mr_access), a zero or oversized length; ENOMEM when max_mr are live. The PD is not
  // checked here (the Device does).
  VerbsResult<Mr*> reg(const MrInit& init);
  VerbsResult<void> dereg(std::uint32_t handle);

  Mr* find(std::uint32_t handle);
  const Mr* find(std::uint32_t handle) const;
  Mr* find_key(std::uint32_t key);
  std::size_t size() const { return by_handle_.size(); }
  std::vector<std::uint32_t> handles() const;

  // The responder's R_Key check for an access of `len` bytes at `va` needing `needed` rights.
  AccessResult check_remote(std::uint32_t pd, std::uint32_t rkey, std::uint64_t va,
                            std::uint64_t len, AccessFlags needed);
  // The L_Key check of one SGE; `write` needs LOCAL_WRITE (receive buffers, READ responses).
  AccessResult check_local(std::uint32_t pd, const Sge& sge, bool write);
  // Reads the bytes a scatter/gather list names (a send's payload).
  std::expected<std::vector<std::uint8_t>, AccessError> gather(std::uint32_t pd,
                                                               std::span<const Sge> sg_list);
  // Writes `data` across the list in order (a receive); kLengthError when it does not fit.
  std::expected<void, AccessError> scatter(std::uint32_t pd, std::span<const Sge> sg_list,
                                           std::span<const std::uint8_t> data);

  // The most stray bytes a wrapped access may touch in the model (a longer one is refused).
  static constexpr std::uint64_t kStrayLimit = 1u << 20;

 private:
  bool check_pd_ = true;
  bool va_wrap_unchecked_ = false;
  std::vector<std::uint8_t> stray_;
  AccessResult check(std::string_view key_name, std::uint32_t pd, std::uint32_t key,
                     std::uint64_t va, std::uint64_t len, AccessFlags needed);

  std::uint32_t new_key(std::uint32_t slot);

  Limits limits_;
  std::vector<std::unique_ptr<Mr>> slots_{1};         // slot 0 is never used
  std::vector<std::uint8_t> variants_{0};             // next variant byte per slot (sequential)
  std::set<std::uint32_t> free_slots_;                // released slots, reused lowest first
  std::map<std::uint32_t, std::uint32_t> by_handle_;  // handle -> slot
  std::map<std::uint32_t, std::uint32_t> by_key_;     // live key -> slot
  KeyPolicy policy_ = KeyPolicy::kRandom;
  std::uint64_t rng_ = 0x5EC0DE5EEDULL;
  std::deque<std::uint32_t> retired_;    // keys deregistered lately, oldest first
  std::set<std::uint32_t> retired_set_;  // the same, for lookup
  std::vector<std::uint32_t> reusable_;  // rkey-reuse: keys waiting for the next region
  std::uint32_t next_handle_ = 1;
  std::uint64_t next_iova_ = kFirstIova;
};

}  // namespace roceconf::target
