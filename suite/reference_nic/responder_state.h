// What the responder keeps per RC or UC QP (spec-facts §4): the expected PSN
// and the message sequence number, the one-NAK-per-gap latch, the SEND or RDMA WRITE message
// being assembled, and the saved READ/atomic resources. Created when a QP first receives a
// request (RTR or later), dropped when it leaves the receiving states.
#pragma once

#include <cstdint>
#include <optional>

#include "suite/reference_nic/responder_resources.h"

namespace roceconf::target {

// A multi-packet SEND or RDMA WRITE between its FIRST and LAST packets (spec-facts §4.5).
struct InboundMessage {
  enum class Kind : std::uint8_t { kSend, kWrite };
  Kind kind = Kind::kSend;
  std::uint64_t offset = 0;  // bytes of the message placed so far
  // SEND: the receive WQE the message fills. It stays at the head of the receive queue until
  // the LAST packet completes it, so an abandoned UC message leaves it for the next one.
  std::uint64_t recv_seq = 0;
  // RDMA WRITE: the RETH of the FIRST packet.
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint32_t dma_length = 0;
};

struct ResponderState {
  std::uint32_t epsn = 0;  // expected PSN (starts at the QP's rq_psn)
  std::uint32_t msn = 0;   // messages completed (AETH MSN), 24 bits
  // RC: a NAK sequence error was sent for the current gap; cleared when ePSN arrives.
  bool nak_sent = false;
  // UC: a packet was lost or in error; drop until the next FIRST or ONLY.
  bool drop_to_first = false;
  // The first request arrived while the QP was in RTR (communication established).
  bool comm_est = false;
  std::optional<InboundMessage> message;
  ResponderResources resources;
};

}  // namespace roceconf::target
