#include "suite/reference_nic/responder_resources.h"

#include "dissector/analysis/psn.h"

namespace roceconf::target {

void ResponderResources::resize(std::size_t capacity) {
  if (capacity == ring_.size()) return;
  // Oldest to newest, then keep the tail that fits.
  std::vector<ResponderResource> kept;
  for (std::size_t i = 0; i < ring_.size(); ++i) {
    const auto& slot = ring_[(next_ + i) % ring_.size()];
    if (slot) kept.push_back(*slot);
  }
  ring_.assign(capacity, std::nullopt);
  next_ = 0;
  const std::size_t skip = kept.size() > capacity ? kept.size() - capacity : 0;
  for (std::size_t i = skip; i < kept.size(); ++i) add(kept[i]);
}

std::size_t ResponderResources::size() const {
  std::size_t n = 0;
  for (const auto& slot : ring_) n += slot.has_value();
  return n;
}

void ResponderResources::add(const ResponderResource& resource) {
  if (ring_.empty()) return;
  ring_[next_] = resource;
  next_ = (next_ + 1) % ring_.size();
}

const ResponderResource* ResponderResources::find(std::uint32_t psn) const {
  // Newest first: after a PSN wrap an old entry could cover the same numbers.
  for (std::size_t i = 1; i <= ring_.size(); ++i) {
    const auto& slot = ring_[(next_ + ring_.size() - i) % ring_.size()];
    if (slot && psn::diff(psn, slot->first_psn) >= 0 && psn::diff(psn, slot->last_psn) <= 0)
      return &*slot;
  }
  return nullptr;
}

void ResponderResources::clear() {
  for (auto& slot : ring_) slot.reset();
  next_ = 0;
}

}  // namespace roceconf::target
