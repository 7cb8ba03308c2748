// A whole message a `send` step names (SEND, RDMA_WRITE, SEND_WITH_IMM, RDMA_WRITE_WITH_IMM),
// cut into the RC request packets that carry it (IBA 9.8.3): FIRST, MIDDLE..., LAST, or ONLY,
// each at most the path MTU, AckReq on the last, the immediate on the last, the RETH (va,
// offset, rkey, dmalen = the whole length) on the first, and the fill pattern running on from
// packet to packet. The opcodes are the numbers of dissector/opcode.h.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "dissector/opcode.h"
#include "suite/engine/assignments.h"

namespace roceconf::engine {

enum class MessageOp : std::uint8_t { kSend, kSendWithImm, kWrite, kWriteWithImm };

// "SEND", "SEND_WITH_IMM", "RDMA_WRITE" (or "WRITE"), "RDMA_WRITE_WITH_IMM"; nullopt for any
// other name (a single packet's opcode).
std::optional<MessageOp> message_op(std::string_view name);

// The RC opcode of the packet of `op` at `position` (kFirst, kMiddle, kLast, kOnly); the
// immediate goes with LAST and ONLY.
std::uint8_t segment_opcode(MessageOp op, Position position);

// One packet of the message: its opcode and the keys build_request takes for it.
struct Segment {
  std::uint8_t opcode = 0;
  Assignments fields;
};

class MessageSegmenter {
 public:
  // Keys of `a`: len (the message length, default 0), fill (the first byte's pattern seed,
  // default `default_fill`), and any build_request key, passed on to the packets it applies
  // to: psn, va, offset and rkey to the first only, imm to the last only, the rest to all.
  static std::expected<MessageSegmenter, std::string> make(MessageOp op, const Assignments& a,
                                                           std::uint32_t pmtu,
                                                           std::uint32_t default_fill);

  std::uint64_t packets() const { return packets_; }
  std::uint64_t length() const { return length_; }
  // Packet `i` (0 .. packets() - 1), made when asked: a long message is never held whole.
  Segment segment(std::uint64_t i) const;

 private:
  MessageOp op_ = MessageOp::kSend;
  Assignments given_;
  std::uint32_t pmtu_ = 0;
  std::uint64_t length_ = 0;
  std::uint32_t seed_ = 0;
  std::uint64_t packets_ = 1;
};

}  // namespace roceconf::engine
