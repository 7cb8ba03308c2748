#include "dissector/layer.h"

#include <array>

namespace roceconf {

namespace {
constexpr std::array<std::string_view, 27> kLayerNames = {
    "frame", "erf",   "eth",  "vlan",    "ipv4", "ipv6",      "udp",  "lrh",          "grh",
    "bth",   "rdeth", "deth", "xrceth",  "reth", "atomiceth", "aeth", "atomicacketh", "immdt",
    "ieth",  "feth",  "cnp",  "payload", "pad",  "icrc",      "vcrc", "mad",          "cm"};
static_assert(kLayerNames.size() == static_cast<std::size_t>(Layer::kCm) + 1);
}  // namespace

std::string_view layer_name(Layer layer) {
  return kLayerNames[static_cast<std::size_t>(layer)];
}

}  // namespace roceconf
