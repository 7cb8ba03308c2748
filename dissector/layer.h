// The protocol layers a frame can hold, named as in JSON output and Wireshark field prefixes.
#pragma once

#include <cstdint>
#include <string_view>

namespace roceconf {

enum class Layer : std::uint8_t {
  kFrame,
  kErf,
  kEth,
  kVlan,
  kIpv4,
  kIpv6,
  kUdp,
  kLrh,
  kGrh,
  kBth,
  kRdeth,
  kDeth,
  kXrceth,
  kReth,
  kAtomicEth,
  kAeth,
  kAtomicAckEth,
  kImmDt,
  kIeth,
  kFeth,
  kCnp,
  kPayload,
  kPad,
  kIcrc,
  kVcrc,
  kMad,
  kCm,
};

// Lower-case short name ("bth", "atomiceth", ...), stable: used as JSON keys and filter prefixes.
std::string_view layer_name(Layer layer);

}  // namespace roceconf
