// Segmentation helpers of the requester (spec-facts §3.2, §5): packet counts, per-packet opcodes
// for RC and UC, and slicing a scatter/gather list into a packet's share.
#include "suite/reference_nic/segmentation.h"

#include <gtest/gtest.h>

#include "dissector/opcode.h"

namespace roceconf::target {
namespace {

TEST(PacketCount, CeilingWithOnePacketForAnEmptyMessage) {
  EXPECT_EQ(packet_count(0, 256), 1u);
  EXPECT_EQ(packet_count(1, 256), 1u);
  EXPECT_EQ(packet_count(256, 256), 1u);
  EXPECT_EQ(packet_count(257, 256), 2u);
  EXPECT_EQ(packet_count(4096 * 3, 4096), 3u);
  EXPECT_EQ(packet_count(std::uint64_t{1} << 31, 256), 1u << 23);
}

TEST(SegmentOpcode, SendAndWriteAtEachPosition) {
  namespace op = roceconf::opcode;
  EXPECT_EQ(segment_opcode(WrOpcode::kSend, 0, 1, false), op::kRcSendOnly);
  EXPECT_EQ(segment_opcode(WrOpcode::kSendWithImm, 0, 1, false), op::kRcSendOnlyImm);
  EXPECT_EQ(segment_opcode(WrOpcode::kSendWithInv, 0, 1, false), op::kRcSendOnlyInv);
  EXPECT_EQ(segment_opcode(WrOpcode::kSendWithImm, 0, 3, false), op::kRcSendFirst);
  EXPECT_EQ(segment_opcode(WrOpcode::kSendWithImm, 1, 3, false), op::kRcSendMiddle);
  EXPECT_EQ(segment_opcode(WrOpcode::kSend, 2, 3, false), op::kRcSendLast);
  EXPECT_EQ(segment_opcode(WrOpcode::kSendWithImm, 2, 3, false), op::kRcSendLastImm);
  EXPECT_EQ(segment_opcode(WrOpcode::kSendWithInv, 1, 2, false), op::kRcSendLastInv);
  EXPECT_EQ(segment_opcode(WrOpcode::kRdmaWrite, 0, 1, false), op::kRcWriteOnly);
  EXPECT_EQ(segment_opcode(WrOpcode::kRdmaWriteWithImm, 0, 1, false), op::kRcWriteOnlyImm);
  EXPECT_EQ(segment_opcode(WrOpcode::kRdmaWriteWithImm, 0, 2, false), op::kRcWriteFirst);
  EXPECT_EQ(segment_opcode(WrOpcode::kRdmaWrite, 1, 3, false), op::kRcWriteMiddle);
  EXPECT_EQ(segment_opcode(WrOpcode::kRdmaWrite, 2, 3, false), op::kRcWriteLast);
  EXPECT_EQ(segment_opcode(WrOpcode::kRdmaWriteWithImm, 1, 2, false), op::kRcWriteLastImm);
  // UC: the same operations in the 0x20 block.
  EXPECT_EQ(segment_opcode(WrOpcode::kSend, 0, 1, true), 0x24);
  EXPECT_EQ(segment_opcode(WrOpcode::kRdmaWriteWithImm, 1, 2, true), 0x29);
  for (std::uint32_t i = 0; i < 3; ++i) {
    const OpcodeInfo& info = opcode_info(segment_opcode(WrOpcode::kRdmaWrite, i, 3, true));
    EXPECT_EQ(info.service, Service::kUc);
    EXPECT_EQ(info.kind, OpKind::kWrite);
  }
}

TEST(SgeSlice, CutsAcrossElements) {
  const std::vector<Sge> sgl = {{0x1000, 100, 1}, {0x2000, 50, 2}, {0x3000, 200, 3}};
  EXPECT_EQ(sge_slice(sgl, 0, 100), (std::vector<Sge>{{0x1000, 100, 1}}));
  EXPECT_EQ(sge_slice(sgl, 90, 70),
            (std::vector<Sge>{{0x1000 + 90, 10, 1}, {0x2000, 50, 2}, {0x3000, 10, 3}}));
  EXPECT_EQ(sge_slice(sgl, 150, 200), (std::vector<Sge>{{0x3000, 200, 3}}));
  EXPECT_EQ(sge_slice(sgl, 340, 100), (std::vector<Sge>{{0x3000 + 190, 10, 3}}))
      << "clipped at the end of the list";
  EXPECT_TRUE(sge_slice(sgl, 10, 0).empty());
}

}  // namespace
}  // namespace roceconf::target
