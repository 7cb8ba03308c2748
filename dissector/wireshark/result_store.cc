#include "dissector/wireshark/result_store.h"

namespace roceconf::wireshark {

using analysis::FlagCode;

void ResultStore::put(const analysis::FrameAnalysis& r) {
  if (r.frame == 0) return;
  if (!r.rc) {
    if (r.cm || !r.flags.empty()) other_.insert_or_assign(r.frame, r);
    return;
  }
  Slot slot;
  slot.time_ns = r.time_ns;
  slot.flags_begin = static_cast<std::uint32_t>(flags_.size());
  slot.flags_count = static_cast<std::uint32_t>(r.flags.size());
  slot.rc = *r.rc;
  flags_.insert(flags_.end(), r.flags.begin(), r.flags.end());
  slots_.push_back(slot);
  if (slot_of_.size() < r.frame) slot_of_.resize(r.frame, 0);
  slot_of_[r.frame - 1] = static_cast<std::uint32_t>(slots_.size());
}

void ResultStore::answer(const analysis::RcAnswer& a) {
  const std::uint64_t f = a.request_frame;
  if (f != 0 && f <= slot_of_.size() && slot_of_[f - 1] != 0) {
    analysis::RcFrameInfo& rc = slots_[slot_of_[f - 1] - 1].rc;
    if (a.flag.code == FlagCode::kAckedBy) {
      // Shown through the acked_by field; the first answer is the one that counts.
      if (rc.acked_by == 0) {
        rc.acked_by = a.flag.frame;
        rc.ack_delay_ns = a.flag.ns;
      }
      return;
    }
    late_[f].push_back(a.flag);
    return;
  }
  if (const auto it = other_.find(f); it != other_.end()) it->second.flags.push_back(a.flag);
}

bool ResultStore::get(std::uint64_t frame, analysis::FrameAnalysis& out) const {
  out.flags.clear();
  out.cm.reset();
  out.rc.reset();
  out.frame = frame;
  if (frame != 0 && frame <= slot_of_.size() && slot_of_[frame - 1] != 0) {
    const Slot& s = slots_[slot_of_[frame - 1] - 1];
    out.time_ns = s.time_ns;
    out.rc = s.rc;
    out.flags.assign(flags_.begin() + s.flags_begin,
                     flags_.begin() + s.flags_begin + s.flags_count);
    if (const auto it = late_.find(frame); it != late_.end())
      out.flags.insert(out.flags.end(), it->second.begin(), it->second.end());
    return true;
  }
  if (const auto it = other_.find(frame); it != other_.end()) {
    out = it->second;
    return true;
  }
  return false;
}

void ResultStore::clear() {
  slot_of_.clear();
  slots_.clear();
  flags_.clear();
  flags_.shrink_to_fit();
  other_.clear();
  late_.clear();
}

}  // namespace roceconf::wireshark
