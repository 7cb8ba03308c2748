#include "suite/reference_nic/mr.h"

#include <algorithm>
#include <array>
#include <new>
#include <utility>

namespace roceconf::target {
namespace {

// The names are the control API's (control/verbs_names.h).
constexpr auto& kFlagNames = control::verbs::kAccessFlags;
static_assert(kFlagNames[0].value == access::kLocalWrite &&
              kFlagNames[3].value == access::kRemoteAtomic);

constexpr std::uint64_t kPage = 4096;

AccessError fault(AccessFault f, std::string message) {
  return AccessError{f, std::move(message)};
}

}  // namespace

std::string access_flags_names(AccessFlags flags) {
  std::string out;
  for (const auto& [bit, name] : kFlagNames) {
    if (!(flags & bit)) continue;
    if (!out.empty()) out += '|';
    out += name;
  }
  if (const AccessFlags unknown = flags & ~(access::kRegion | access::kZeroBased)) {
    if (!out.empty()) out += '|';
    out += fmt::format("{:#x}", unknown);
  }
  return out.empty() ? "0" : out;
}

std::optional<AccessFlags> access_flag_from_name(std::string_view name) {
  return control::verbs::value_of(kFlagNames, name);
}

std::string_view access_fault_name(AccessFault f) {
  switch (f) {
    case AccessFault::kNotFound:
      return "not_found";
    case AccessFault::kWrongPd:
      return "wrong_pd";
    case AccessFault::kAccessDenied:
      return "access_denied";
    case AccessFault::kOutOfBounds:
      return "out_of_bounds";
    case AccessFault::kLengthError:
      return "length_error";
  }
  return "?";
}

bool Mr::contains(std::uint64_t va, std::uint64_t len) const {
  // Written so that va + len cannot wrap: a VA near 2^64 must not pass as "inside".
  return va >= iova_ && va - iova_ <= length() && len <= length() - (va - iova_);
}

VerbsResult<Mr*> MrTable::reg(const MrInit& init) {
  if (init.access & ~access::kRegion) {
    return verbs_error(VerbsStatus::kInval, "reg_mr: unknown access flags {:#x}",
                       init.access & ~access::kRegion);
  }
  // As ib_check_mr_access: remote write and atomic rights need local write too.
  if ((init.access & (access::kRemoteWrite | access::kRemoteAtomic)) &&
      !(init.access & access::kLocalWrite)) {
    return verbs_error(
        VerbsStatus::kInval, "reg_mr: {} needs LOCAL_WRITE too",
        access_flags_names(init.access & (access::kRemoteWrite | access::kRemoteAtomic)));
  }
  const std::uint64_t length = init.buffer.empty() ? init.length : init.buffer.size();
  if (length == 0) return verbs_error(VerbsStatus::kInval, "reg_mr: length is 0");
  if (length > limits_.max_mr_size) {
    return verbs_error(VerbsStatus::kInval, "reg_mr: length {} is above max_mr_size {}", length,
                       limits_.max_mr_size);
  }
  if (init.iova && *init.iova > UINT64_MAX - (length - 1)) {
    return verbs_error(VerbsStatus::kInval, "reg_mr: iova {:#x} + length {} wraps around 2^64",
                       *init.iova, length);
  }
  if (by_handle_.size() >= limits_.max_mr) {
    return verbs_error(VerbsStatus::kNoMem, "reg_mr: {} MRs are registered (max_mr)",
                       limits_.max_mr);
  }

  auto mr = std::make_unique<Mr>();
  if (init.buffer.empty()) {
    try {
      mr->owned_.assign(static_cast<std::size_t>(length), 0);
    } catch (const std::bad_alloc&) {
      return verbs_error(VerbsStatus::kNoMem, "reg_mr: cannot allocate {} bytes", length);
    }
    mr->memory_ = mr->owned_;
  } else {
    mr->memory_ = init.buffer;
  }

  // Lowest free slot (storage; the key is chosen apart unless keys are sequential).
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = *free_slots_.begin();
    free_slots_.erase(free_slots_.begin());
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    if (slot > 0xFFFFFF) return verbs_error(VerbsStatus::kNoMem, "reg_mr: no free MR key index");
    slots_.emplace_back();
    variants_.push_back(0);
  }

  mr->handle_ = next_handle_++;
  mr->pd_ = init.pd;
  mr->key_ = new_key(slot);
  by_key_[mr->key_] = slot;
  mr->access_ = init.access;
  if (init.iova) {
    mr->iova_ = *init.iova;
  } else {
    // Page-aligned, with an unmapped page between regions, so an overrun of one MR is out of
    // bounds rather than inside its neighbour.
    mr->iova_ = next_iova_;
    next_iova_ += (length + kPage - 1) / kPage * kPage + kPage;
  }
  by_handle_[mr->handle_] = slot;
  slots_[slot] = std::move(mr);
  return slots_[slot].get();
}

VerbsResult<void> MrTable::dereg(std::uint32_t handle) {
  const auto it = by_handle_.find(handle);
  if (it == by_handle_.end()) return verbs_error(VerbsStatus::kNoEnt, "dereg_mr: no MR {}", handle);
  const std::uint32_t key = slots_[it->second]->key_;
  by_key_.erase(key);
  if (policy_ == KeyPolicy::kReuse) {
    reusable_.push_back(key);
  } else {
    retired_.push_back(key);
    retired_set_.insert(key);
    if (retired_.size() > kRetiredKeys) {
      retired_set_.erase(retired_.front());
      retired_.pop_front();
    }
  }
  slots_[it->second].reset();
  free_slots_.insert(it->second);
  by_handle_.erase(it);
  return {};
}

void MrTable::set_key_policy(KeyPolicy policy, std::uint64_t seed) {
  policy_ = policy;
  rng_ = seed;
  reusable_.clear();
}

std::uint32_t MrTable::new_key(std::uint32_t slot) {
  if (policy_ == KeyPolicy::kSequential) return slot << 8 | variants_[slot]++;
  if (policy_ == KeyPolicy::kReuse && !reusable_.empty()) {
    const std::uint32_t key = reusable_.back();
    reusable_.pop_back();
    return key;
  }
  // Below 2^31 (window keys have bit 31), index part nonzero, not live, not retired lately; at
  // most max_mr + kRetiredKeys of the 2^31 are taken, so a draw almost never repeats.
  for (;;) {
    rng_ += 0x9E3779B97F4A7C15ULL;  // splitmix64
    std::uint64_t z = rng_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    const auto key = static_cast<std::uint32_t>(z) & 0x7FFFFFFFu;
    if ((key >> 8) != 0 && !by_key_.contains(key) && !retired_set_.contains(key) &&
        std::ranges::find(reusable_, key) == reusable_.end())
      return key;
  }
}

Mr* MrTable::find(std::uint32_t handle) {
  const auto it = by_handle_.find(handle);
  return it == by_handle_.end() ? nullptr : slots_[it->second].get();
}

const Mr* MrTable::find(std::uint32_t handle) const {
  const auto it = by_handle_.find(handle);
  return it == by_handle_.end() ? nullptr : slots_[it->second].get();
}

Mr* MrTable::find_key(std::uint32_t key) {
  const auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : slots_[it->second].get();
}

std::vector<std::uint32_t> MrTable::handles() const {
  std::vector<std::uint32_t> out;
  out.reserve(by_handle_.size());
  for (const auto& [h, slot] : by_handle_) out.push_back(h);
  return out;
}

AccessResult MrTable::check(std::string_view key_name, std::uint32_t pd, std::uint32_t key,
                            std::uint64_t va, std::uint64_t len, AccessFlags needed) {
  if (len == 0) return MrSpan{};
  Mr* mr = find_key(key);
  if (!mr) {
    return std::unexpected(
        fault(AccessFault::kNotFound, fmt::format("{} {:#010x} is not registered", key_name, key)));
  }
  if (mr->pd() != pd && check_pd_) {
    return std::unexpected(fault(
        AccessFault::kWrongPd,
        fmt::format("{} {:#010x} belongs to PD {}, the QP to PD {}", key_name, key, mr->pd(), pd)));
  }
  if ((mr->access() & needed) != needed) {
    return std::unexpected(fault(
        AccessFault::kAccessDenied,
        fmt::format("{} {:#010x} lacks {} (has {})", key_name, key,
                    access_flags_names(needed & ~mr->access()), access_flags_names(mr->access()))));
  }
  if (!mr->contains(va, len)) {
    // reth-va-wraps: `va >= start && va + len <= end` with the sum wrapping (CVE-2016-8636).
    if (va_wrap_unchecked_ && va >= mr->addr() && va + len <= mr->addr() + mr->length() &&
        len <= kStrayLimit) {
      if (stray_.size() < len) stray_.resize(static_cast<std::size_t>(len));
      return MrSpan{mr, std::span(stray_).first(static_cast<std::size_t>(len))};
    }
    return std::unexpected(
        fault(AccessFault::kOutOfBounds,
              fmt::format("{} bytes at {:#x} are outside {} {:#010x} [{:#x}, {:#x})", len, va,
                          key_name, key, mr->addr(), mr->addr() + mr->length())));
  }
  return MrSpan{mr, mr->range(va, len)};
}

AccessResult MrTable::check_remote(std::uint32_t pd, std::uint32_t rkey, std::uint64_t va,
                                   std::uint64_t len, AccessFlags needed) {
  return check("R_Key", pd, rkey, va, len, needed);
}

AccessResult MrTable::check_local(std::uint32_t pd, const Sge& sge, bool write) {
  return check("L_Key", pd, sge.lkey, sge.addr, sge.length, write ? access::kLocalWrite : 0);
}

std::expected<std::vector<std::uint8_t>, AccessError> MrTable::gather(
    std::uint32_t pd, std::span<const Sge> sg_list) {
  std::vector<std::uint8_t> out;
  for (const Sge& sge : sg_list) {
    auto span = check_local(pd, sge, false);
    if (!span) return std::unexpected(std::move(span.error()));
    out.insert(out.end(), span->bytes.begin(), span->bytes.end());
  }
  return out;
}

std::expected<void, AccessError> MrTable::scatter(std::uint32_t pd, std::span<const Sge> sg_list,
                                                  std::span<const std::uint8_t> data) {
  std::uint64_t capacity = 0;
  for (const Sge& sge : sg_list) capacity += sge.length;
  if (data.size() > capacity) {
    return std::unexpected(fault(AccessFault::kLengthError,
                                 fmt::format("{} bytes do not fit the {} bytes of the scatter list",
                                             data.size(), capacity)));
  }
  std::size_t done = 0;
  for (const Sge& sge : sg_list) {
    if (done == data.size()) break;
    const std::size_t n = std::min<std::size_t>(sge.length, data.size() - done);
    auto span = check_local(pd, Sge{sge.addr, static_cast<std::uint32_t>(n), sge.lkey}, true);
    if (!span) return std::unexpected(std::move(span.error()));
    std::copy_n(data.begin() + static_cast<std::ptrdiff_t>(done), n, span->bytes.begin());
    done += n;
  }
  return {};
}

}  // namespace roceconf::target
