// Requester segmentation of a message into packets (IBA Vol 1 9.8.3, spec-facts §3.2 and §5):
// FIRST and MIDDLE packets carry exactly the path MTU, LAST the remainder (1..PMTU), ONLY a
// message that fits one packet (0..PMTU); the opcode of each packet follows from the work
// request's operation and the packet's place in the message.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "suite/reference_nic/mr.h"
#include "suite/reference_nic/qp.h"

namespace roceconf::target {

// Packets a message of `length` bytes takes at `pmtu`: ceil(length / pmtu), and one for an empty
// message. An RDMA READ consumes as many PSNs for its responses (spec-facts §4.4).
std::uint32_t packet_count(std::uint64_t length, std::uint32_t pmtu);

// The BTH opcode of packet `index` of `count` for a SEND or RDMA WRITE work request on an RC
// (`uc` false) or UC QP: RC opcodes 0x00-0x0B, 0x16, 0x17, UC the same plus 0x20.
std::uint8_t segment_opcode(WrOpcode opcode, std::uint32_t index, std::uint32_t count, bool uc);

// The part [offset, offset + length) of the bytes a scatter/gather list names, as a list of its
// own (a packet's share of a message, for MrTable::gather and MrTable::scatter).
std::vector<Sge> sge_slice(std::span<const Sge> sg_list, std::uint64_t offset,
                           std::uint64_t length);

}  // namespace roceconf::target
