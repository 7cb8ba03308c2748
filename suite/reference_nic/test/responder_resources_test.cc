#include "suite/reference_nic/responder_resources.h"

#include <gtest/gtest.h>

namespace roceconf::target {
namespace {

ResponderResource read_at(std::uint32_t first, std::uint32_t last, std::uint64_t va = 0) {
  return {.kind = ResponderResource::Kind::kRead, .first_psn = first, .last_psn = last, .va = va};
}

TEST(ResponderResourcesTest, FindsTheResourceHoldingAPsn) {
  ResponderResources r(4);
  r.add(read_at(10, 12));
  r.add({.kind = ResponderResource::Kind::kAtomic, .first_psn = 13, .last_psn = 13, .original = 9});
  EXPECT_EQ(r.find(9), nullptr);
  EXPECT_EQ(r.find(10)->first_psn, 10u);
  EXPECT_EQ(r.find(12)->first_psn, 10u);
  EXPECT_EQ(r.find(13)->original, 9u);
  EXPECT_EQ(r.find(14), nullptr);
  EXPECT_EQ(r.size(), 2u);
}

TEST(ResponderResourcesTest, RangesWrapAt24Bits) {
  ResponderResources r(1);
  r.add(read_at(0xFFFFFE, 1));
  EXPECT_NE(r.find(0xFFFFFF), nullptr);
  EXPECT_NE(r.find(0), nullptr);
  EXPECT_NE(r.find(1), nullptr);
  EXPECT_EQ(r.find(2), nullptr);
  EXPECT_EQ(r.find(0xFFFFFD), nullptr);
}

TEST(ResponderResourcesTest, OldestIsReusedFirst) {
  ResponderResources r(2);
  r.add(read_at(1, 1));
  r.add(read_at(2, 2));
  r.add(read_at(3, 3));
  EXPECT_EQ(r.find(1), nullptr);
  EXPECT_NE(r.find(2), nullptr);
  EXPECT_NE(r.find(3), nullptr);
  EXPECT_EQ(r.size(), 2u);
}

TEST(ResponderResourcesTest, NewestWinsWhenRangesOverlap) {
  ResponderResources r(2);
  r.add(read_at(5, 5, 0x100));
  r.add(read_at(5, 5, 0x200));
  EXPECT_EQ(r.find(5)->va, 0x200u);
}

TEST(ResponderResourcesTest, ResizeKeepsTheNewest) {
  ResponderResources r(3);
  for (std::uint32_t psn = 1; psn <= 4; ++psn) r.add(read_at(psn, psn));  // 2, 3, 4 kept
  r.resize(2);
  EXPECT_EQ(r.capacity(), 2u);
  EXPECT_EQ(r.find(2), nullptr);
  EXPECT_NE(r.find(3), nullptr);
  EXPECT_NE(r.find(4), nullptr);
  r.add(read_at(5, 5));  // replaces the oldest, 3
  EXPECT_EQ(r.find(3), nullptr);
  r.resize(4);
  EXPECT_NE(r.find(4), nullptr);
  EXPECT_NE(r.find(5), nullptr);
  r.resize(0);
  r.add(read_at(6, 6));
  EXPECT_EQ(r.find(6), nullptr);
  EXPECT_EQ(r.size(), 0u);
}

TEST(ResponderResourcesTest, ClearForgetsEverything) {
  ResponderResources r(2);
  r.add(read_at(1, 1));
  r.clear();
  EXPECT_EQ(r.find(1), nullptr);
  EXPECT_EQ(r.capacity(), 2u);
}

}  // namespace
}  // namespace roceconf::target
