// 24-bit packet sequence number arithmetic (IBA Vol 1 ch. 9.7.1, 9.7.5.1.2). The PSN space is
// split in halves around the expected PSN: the 2^23 PSNs before it are the duplicate region,
// the 2^23 - 1 after it the invalid (out-of-sequence) region.
#pragma once

#include <cstdint>

namespace roceconf::psn {

inline constexpr std::uint32_t kMask = 0xFFFFFF;
inline constexpr std::uint32_t kHalf = 1u << 23;

constexpr std::uint32_t add(std::uint32_t psn, std::int64_t n) {
  return static_cast<std::uint32_t>((static_cast<std::int64_t>(psn) + n) & kMask);
}

// Signed distance a - b in (-2^23, 2^23]: positive when a is ahead of b. Exactly 2^23 apart
// counts as behind (-2^23), i.e. in the duplicate half.
constexpr std::int32_t diff(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t d = (a - b) & kMask;
  return d >= kHalf ? static_cast<std::int32_t>(d) - (1 << 24) : static_cast<std::int32_t>(d);
}

enum class Region : std::uint8_t { kExpected, kDuplicate, kInvalid };

constexpr Region classify(std::uint32_t psn, std::uint32_t expected) {
  const std::int32_t d = diff(psn, expected);
  if (d == 0) return Region::kExpected;
  return d < 0 ? Region::kDuplicate : Region::kInvalid;
}

static_assert(classify(5, 5) == Region::kExpected);
static_assert(classify(4, 5) == Region::kDuplicate);
static_assert(classify(6, 5) == Region::kInvalid);
static_assert(classify(add(5, kHalf - 1), 5) == Region::kInvalid);
static_assert(classify(add(5, kHalf), 5) == Region::kDuplicate);
static_assert(classify(0, kMask) == Region::kInvalid);  // wrap: 0 follows 0xFFFFFF
static_assert(classify(kMask, 0) == Region::kDuplicate);

}  // namespace roceconf::psn
