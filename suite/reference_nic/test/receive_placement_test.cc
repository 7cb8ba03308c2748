#include "suite/reference_nic/receive_placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace roceconf::target {
namespace {

class ReceivePlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mr_ = *mrs_.reg(MrInit{1, 256, access::kLocalWrite, std::nullopt, {}});
    // Three pieces of 10, 5 and 20 bytes, out of address order.
    sges_ = {Sge{mr_->addr() + 100, 10, mr_->lkey()}, Sge{mr_->addr(), 5, mr_->lkey()},
             Sge{mr_->addr() + 50, 20, mr_->lkey()}};
  }
  std::vector<std::uint8_t> at(std::uint64_t offset, std::size_t len) {
    const auto b = mr_->range(mr_->addr() + offset, len);
    return {b.begin(), b.end()};
  }

  MrTable mrs_;
  Mr* mr_ = nullptr;
  std::vector<Sge> sges_;
};

TEST_F(ReceivePlacementTest, CapacityIsTheSumOfTheSges) {
  EXPECT_EQ(sge_capacity(sges_), 35u);
}

TEST_F(ReceivePlacementTest, PacketsLandAtTheirMessageOffsetAcrossSges) {
  std::vector<std::uint8_t> message(35);
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<std::uint8_t>(i + 1);
  const std::span<const std::uint8_t> m = message;
  // Packet boundaries that straddle the SGE boundaries.
  ASSERT_TRUE(place_at(mrs_, 1, sges_, 0, m.first(12)));
  ASSERT_TRUE(place_at(mrs_, 1, sges_, 12, m.subspan(12, 13)));
  ASSERT_TRUE(place_at(mrs_, 1, sges_, 25, m.subspan(25)));
  EXPECT_TRUE(std::ranges::equal(at(100, 10), m.first(10)));
  EXPECT_TRUE(std::ranges::equal(at(0, 5), m.subspan(10, 5)));
  EXPECT_TRUE(std::ranges::equal(at(50, 20), m.subspan(15)));
}

TEST_F(ReceivePlacementTest, TooLongIsALengthErrorAndWritesNothing) {
  const std::vector<std::uint8_t> data(6, 0xAA);
  auto r = place_at(mrs_, 1, sges_, 30, data);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().fault, AccessFault::kLengthError);
  EXPECT_EQ(at(50, 20), std::vector<std::uint8_t>(20, 0));
  EXPECT_TRUE(place_at(mrs_, 1, sges_, 30, std::span(data).first(5)));
  EXPECT_TRUE(place_at(mrs_, 1, sges_, 35, {}));
}

TEST_F(ReceivePlacementTest, EachPieceIsLkeyChecked) {
  Mr* ro = *mrs_.reg(MrInit{1, 64, 0, std::nullopt, {}});  // no LOCAL_WRITE
  const std::vector<Sge> sges{Sge{mr_->addr(), 4, mr_->lkey()}, Sge{ro->addr(), 4, ro->lkey()}};
  const std::vector<std::uint8_t> data(8, 1);
  EXPECT_TRUE(place_at(mrs_, 1, sges, 0, std::span(data).first(4)));
  auto r = place_at(mrs_, 1, sges, 0, data);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().fault, AccessFault::kAccessDenied);
  EXPECT_FALSE(place_at(mrs_, 2, sges, 0, std::span(data).first(4)));  // another PD
}

}  // namespace
}  // namespace roceconf::target
