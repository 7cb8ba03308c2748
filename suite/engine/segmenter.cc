#include "suite/engine/segmenter.h"

#include <algorithm>

namespace roceconf::engine {

std::optional<MessageOp> message_op(std::string_view name) {
  if (name == "SEND") return MessageOp::kSend;
  if (name == "SEND_WITH_IMM") return MessageOp::kSendWithImm;
  if (name == "RDMA_WRITE" || name == "WRITE") return MessageOp::kWrite;
  if (name == "RDMA_WRITE_WITH_IMM") return MessageOp::kWriteWithImm;
  return std::nullopt;
}

std::uint8_t segment_opcode(MessageOp op, Position position) {
  const bool write = op == MessageOp::kWrite || op == MessageOp::kWriteWithImm;
  const bool imm = op == MessageOp::kSendWithImm || op == MessageOp::kWriteWithImm;
  namespace o = opcode;
  switch (position) {
    case Position::kFirst:
      return write ? o::kRcWriteFirst : o::kRcSendFirst;
    case Position::kMiddle:
      return write ? o::kRcWriteMiddle : o::kRcSendMiddle;
    case Position::kLast:
      if (write) return imm ? o::kRcWriteLastImm : o::kRcWriteLast;
      return imm ? o::kRcSendLastImm : o::kRcSendLast;
    case Position::kOnly:
    case Position::kNone:
      break;
  }
  if (write) return imm ? o::kRcWriteOnlyImm : o::kRcWriteOnly;
  return imm ? o::kRcSendOnlyImm : o::kRcSendOnly;
}

std::expected<MessageSegmenter, std::string> MessageSegmenter::make(MessageOp op,
                                                                    const Assignments& a,
                                                                    std::uint32_t pmtu,
                                                                    std::uint32_t default_fill) {
  if (pmtu == 0) return std::unexpected(std::string("path MTU is 0: nothing can be sent"));
  MessageSegmenter s;
  s.op_ = op;
  s.given_ = a;
  s.pmtu_ = pmtu;
  s.seed_ = default_fill;
  if (const auto* l = a.find("len")) {
    auto n = parse_uint(*l);
    if (!n) return std::unexpected("len: " + n.error());
    s.length_ = *n;
  }
  if (const auto* f = a.find("fill")) {
    auto n = parse_uint(*f);
    if (!n) return std::unexpected("fill: " + n.error());
    s.seed_ = static_cast<std::uint32_t>(*n);
  }
  s.packets_ = std::max<std::uint64_t>(1, s.length_ / pmtu + (s.length_ % pmtu != 0));
  return s;
}

Segment MessageSegmenter::segment(std::uint64_t i) const {
  const bool first = i == 0, last = i + 1 == packets_;
  const Position position = packets_ == 1 ? Position::kOnly
                            : first       ? Position::kFirst
                            : last        ? Position::kLast
                                          : Position::kMiddle;
  const bool write = op_ == MessageOp::kWrite || op_ == MessageOp::kWriteWithImm;
  Segment s;
  s.opcode = segment_opcode(op_, position);
  Assignments& pa = s.fields;
  const std::uint64_t size = last ? length_ - i * pmtu_ : pmtu_;
  pa.set("len", std::to_string(size));
  pa.set("fill", std::to_string((seed_ + i * pmtu_) & 0xFFFFFFFF));
  if (last) pa.set("ackreq", "1");
  for (const auto& item : given_.items()) {
    if (item.key == "len" || item.key == "fill") continue;
    const bool reth_key = item.key == "offset" || item.key == "va" || item.key == "rkey";
    if (reth_key && !first) continue;
    if (item.key == "imm" && !last) continue;
    if (item.key == "psn" && !first) continue;
    pa.set(item.key, item.value);
  }
  if (write && first) pa.set("dmalen", std::to_string(length_));
  return s;
}

}  // namespace roceconf::engine
