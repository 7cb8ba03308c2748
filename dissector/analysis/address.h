// Network addresses of a frame's endpoints as the stream analysis keys them: IPv4 or IPv6 for
// RoCEv2, the GRH GIDs for RoCEv1 and routed native IB, the LRH LIDs for local native IB.
// Every frame of one connection uses the same kind, so equality within a kind is enough.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "dissector/packet.h"

namespace roceconf::analysis {

struct NetAddress {
  enum class Kind : std::uint8_t { kNone, kIpv4, kIpv6, kGid, kLid };
  Kind kind = Kind::kNone;
  std::array<std::uint8_t, 16> bytes{};  // IPv4: first 4 bytes; LID: first 2 (big-endian)

  static NetAddress ipv4(const Ipv4Address& a);
  static NetAddress ipv6(const Ipv6Address& a);
  static NetAddress gid(const Gid& g);
  static NetAddress lid(std::uint16_t lid);
  // The frame's source / destination: IP first, then GRH, then LRH; kNone when absent.
  static NetAddress source(const Packet& p);
  static NetAddress destination(const Packet& p);

  std::string to_string() const;  // "192.0.2.1", "2001:db8::1", "gid fe80::1", "lid 0x0004"

  friend bool operator==(const NetAddress&, const NetAddress&) = default;
};

namespace detail {
constexpr std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  // splitmix64 finaliser over the running hash.
  std::uint64_t x = h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
inline std::uint64_t hash_address(std::uint64_t h, const NetAddress& a) {
  std::uint64_t lo = 0, hi = 0;
  std::memcpy(&lo, a.bytes.data(), 8);
  std::memcpy(&hi, a.bytes.data() + 8, 8);
  return mix(mix(mix(h, static_cast<std::uint64_t>(a.kind)), lo), hi);
}
}  // namespace detail

// A directed (source, destination, number) triple: a channel into a QP, or a CM key.
struct AddressKey {
  NetAddress src;
  NetAddress dst;
  std::uint32_t number = 0;  // a QPN or a communication ID
  friend bool operator==(const AddressKey&, const AddressKey&) = default;
};

struct AddressKeyHash {
  std::size_t operator()(const AddressKey& k) const {
    return static_cast<std::size_t>(
        detail::mix(detail::hash_address(detail::hash_address(0, k.src), k.dst), k.number));
  }
};

}  // namespace roceconf::analysis
