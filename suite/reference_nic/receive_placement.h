// Placing an incoming message into a receive WQE: a SEND's payload fills the receive buffers in
// scatter-list order (ibv_post_recv(3)). A multi-packet SEND arrives a packet
// at a time, so each payload goes to the running byte offset of the message: the part of the
// scatter list at that offset is found, every piece written is L_Key-checked for LOCAL_WRITE,
// and a message longer than the list is a length error (the responder's NAK invalid request,
// the receive WQE's LOC_LEN_ERR).
#pragma once

#include <cstdint>
#include <expected>
#include <span>

#include "suite/reference_nic/mr.h"

namespace roceconf::target {

// Bytes the scatter list can hold.
std::uint64_t sge_capacity(std::span<const Sge> sg_list);

// Writes `data` at byte `offset` of the message held by `sg_list` (all in PD `pd`). Nothing is
// written when the data does not fit (kLengthError); an L_Key fault may leave the pieces before
// it written, as a DMA engine would.
std::expected<void, AccessError> place_at(MrTable& mrs, std::uint32_t pd,
                                          std::span<const Sge> sg_list, std::uint64_t offset,
                                          std::span<const std::uint8_t> data);

}  // namespace roceconf::target
