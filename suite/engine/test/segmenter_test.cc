// The segmentation of a `send` step's message (segmenter.h): opcodes by position, packet sizes,
// and which keys go to which packet.
#include "suite/engine/segmenter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace roceconf::engine {
namespace {

std::string value(const Segment& s, std::string_view key) {
  const std::string* v = s.fields.find(key);
  return v ? *v : "(absent)";
}

std::vector<Segment> all(const MessageSegmenter& m) {
  std::vector<Segment> out;
  for (std::uint64_t i = 0; i < m.packets(); ++i) out.push_back(m.segment(i));
  return out;
}

TEST(Segmenter, NamesTheMessageOperations) {
  EXPECT_EQ(message_op("SEND"), MessageOp::kSend);
  EXPECT_EQ(message_op("SEND_WITH_IMM"), MessageOp::kSendWithImm);
  EXPECT_EQ(message_op("RDMA_WRITE"), MessageOp::kWrite);
  EXPECT_EQ(message_op("WRITE"), MessageOp::kWrite);
  EXPECT_EQ(message_op("RDMA_WRITE_WITH_IMM"), MessageOp::kWriteWithImm);
  // Single packets are opcodes, not messages.
  EXPECT_FALSE(message_op("SEND_ONLY"));
  EXPECT_FALSE(message_op("RDMA_WRITE_FIRST"));
  EXPECT_FALSE(message_op("READ"));
}

TEST(Segmenter, OpcodesAreTheRcOnesOfEachPosition) {
  struct Want {
    MessageOp op;
    Position position;
    std::string_view name;
  };
  const Want table[] = {
      {MessageOp::kSend, Position::kFirst, "RC_SEND_FIRST"},
      {MessageOp::kSend, Position::kMiddle, "RC_SEND_MIDDLE"},
      {MessageOp::kSend, Position::kLast, "RC_SEND_LAST"},
      {MessageOp::kSend, Position::kOnly, "RC_SEND_ONLY"},
      {MessageOp::kSendWithImm, Position::kFirst, "RC_SEND_FIRST"},
      {MessageOp::kSendWithImm, Position::kLast, "RC_SEND_LAST_WITH_IMMEDIATE"},
      {MessageOp::kSendWithImm, Position::kOnly, "RC_SEND_ONLY_WITH_IMMEDIATE"},
      {MessageOp::kWrite, Position::kFirst, "RC_RDMA_WRITE_FIRST"},
      {MessageOp::kWrite, Position::kMiddle, "RC_RDMA_WRITE_MIDDLE"},
      {MessageOp::kWrite, Position::kLast, "RC_RDMA_WRITE_LAST"},
      {MessageOp::kWrite, Position::kOnly, "RC_RDMA_WRITE_ONLY"},
      {MessageOp::kWriteWithImm, Position::kMiddle, "RC_RDMA_WRITE_MIDDLE"},
      {MessageOp::kWriteWithImm, Position::kLast, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE"},
      {MessageOp::kWriteWithImm, Position::kOnly, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"},
  };
  for (const Want& w : table) {
    const OpcodeInfo& info = opcode_info(segment_opcode(w.op, w.position));
    EXPECT_EQ(info.name, w.name);
    EXPECT_EQ(info.position, w.position) << w.name;
  }
}

TEST(Segmenter, CutsAtThePathMtuWithAckReqOnTheLast) {
  auto m = MessageSegmenter::make(MessageOp::kSend, {{"len", "2500"}}, 1024, 0x10);
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m->length(), 2500u);
  const auto s = all(*m);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].opcode, opcode::kRcSendFirst);
  EXPECT_EQ(s[1].opcode, opcode::kRcSendMiddle);
  EXPECT_EQ(s[2].opcode, opcode::kRcSendLast);
  EXPECT_EQ(value(s[0], "len"), "1024");
  EXPECT_EQ(value(s[1], "len"), "1024");
  EXPECT_EQ(value(s[2], "len"), "452");
  EXPECT_EQ(value(s[0], "ackreq"), "(absent)");
  EXPECT_EQ(value(s[1], "ackreq"), "(absent)");
  EXPECT_EQ(value(s[2], "ackreq"), "1");
  // The pattern runs on across packets: byte i of the message is (seed + i) mod 256.
  EXPECT_EQ(value(s[0], "fill"), "16");
  EXPECT_EQ(value(s[1], "fill"), std::to_string(0x10 + 1024));
  EXPECT_EQ(value(s[2], "fill"), std::to_string(0x10 + 2048));
  EXPECT_EQ(value(s[0], "dmalen"), "(absent)");  // a SEND has no RETH
}

TEST(Segmenter, AMessageThatFitsIsOnePacketEvenEmpty) {
  auto exact = MessageSegmenter::make(MessageOp::kWrite, {{"len", "1024"}}, 1024, 0);
  ASSERT_TRUE(exact);
  ASSERT_EQ(exact->packets(), 1u);
  EXPECT_EQ(exact->segment(0).opcode, opcode::kRcWriteOnly);
  EXPECT_EQ(value(exact->segment(0), "len"), "1024");
  EXPECT_EQ(value(exact->segment(0), "dmalen"), "1024");

  auto empty = MessageSegmenter::make(MessageOp::kSendWithImm, {{"imm", "7"}}, 256, 0);
  ASSERT_TRUE(empty);
  ASSERT_EQ(empty->packets(), 1u);
  EXPECT_EQ(empty->segment(0).opcode, opcode::kRcSendOnlyImm);
  EXPECT_EQ(value(empty->segment(0), "len"), "0");
  EXPECT_EQ(value(empty->segment(0), "imm"), "7");
  EXPECT_EQ(value(empty->segment(0), "ackreq"), "1");
}

TEST(Segmenter, RethKeysAndPsnGoFirstTheImmediateLast) {
  const Assignments a = {{"len", "600"}, {"va", "0x1000"}, {"rkey", "5"}, {"imm", "9"},
                         {"psn", "3"},   {"fill", "0x20"}, {"se", "1"}};
  auto m = MessageSegmenter::make(MessageOp::kWriteWithImm, a, 256, 0xAB);
  ASSERT_TRUE(m);
  const auto s = all(*m);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[2].opcode, opcode::kRcWriteLastImm);
  EXPECT_EQ(value(s[0], "va"), "0x1000");
  EXPECT_EQ(value(s[0], "rkey"), "5");
  EXPECT_EQ(value(s[0], "psn"), "3");
  EXPECT_EQ(value(s[0], "dmalen"), "600");
  EXPECT_EQ(value(s[0], "imm"), "(absent)");
  for (const Segment& later : {s[1], s[2]}) {
    EXPECT_EQ(value(later, "va"), "(absent)");
    EXPECT_EQ(value(later, "rkey"), "(absent)");
    EXPECT_EQ(value(later, "psn"), "(absent)");  // later packets follow on
    EXPECT_EQ(value(later, "dmalen"), "(absent)");
  }
  EXPECT_EQ(value(s[1], "imm"), "(absent)");
  EXPECT_EQ(value(s[2], "imm"), "9");
  for (const Segment& any : s) EXPECT_EQ(value(any, "se"), "1");  // other keys go to all
  EXPECT_EQ(value(s[0], "fill"), "32");  // fill= wins over the connection's default
  EXPECT_EQ(value(s[2], "len"), "88");
}

TEST(Segmenter, AnAckReqGivenOverridesTheLastPacketsOwn) {
  auto m = MessageSegmenter::make(MessageOp::kSend, {{"len", "300"}, {"ackreq", "0"}}, 256, 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(value(m->segment(0), "ackreq"), "0");
  EXPECT_EQ(value(m->segment(1), "ackreq"), "0");
}

TEST(Segmenter, RefusesValuesThatDoNotParse) {
  auto len = MessageSegmenter::make(MessageOp::kSend, {{"len", "many"}}, 1024, 0);
  ASSERT_FALSE(len);
  EXPECT_TRUE(len.error().starts_with("len: ")) << len.error();
  auto fill = MessageSegmenter::make(MessageOp::kSend, {{"fill", "x"}}, 1024, 0);
  ASSERT_FALSE(fill);
  EXPECT_TRUE(fill.error().starts_with("fill: ")) << fill.error();
  EXPECT_FALSE(MessageSegmenter::make(MessageOp::kSend, {}, 0, 0));
}

TEST(Segmenter, ALongMessageIsCountedNotHeld) {
  // 4 GiB at 256 bytes: 16M packets, made one at a time.
  auto m = MessageSegmenter::make(MessageOp::kWrite, {{"len", "0x100000000"}}, 256, 0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->packets(), 0x1000000u);
  const Segment last = m->segment(m->packets() - 1);
  EXPECT_EQ(last.opcode, opcode::kRcWriteLast);
  EXPECT_EQ(value(last, "len"), "256");
}

}  // namespace
}  // namespace roceconf::engine
