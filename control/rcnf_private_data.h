// The REP private data of a roceconf responder (suite/reference_nic/RESPONDER_CONVENTION.md): what a
// passive side running the convention tells the active side about the memory region and the
// receive queue it exposes on the new connection. 32 bytes, big-endian, at the start of the REP
// private data (the rest of the 196 bytes is zero).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <string>

#include "dissector/bytes.h"

namespace roceconf::control {

struct RcnfPrivateData {
  static constexpr std::size_t kSize = 32;
  static constexpr std::array<std::uint8_t, 4> kMagic = {'R', 'C', 'N', 'F'};
  static constexpr std::uint8_t kVersion = 1;
  // Byte offsets of the fields.
  static constexpr std::size_t kMagicOffset = 0;
  static constexpr std::size_t kVersionOffset = 4;
  static constexpr std::size_t kReservedOffset = 5;  // 3 bytes, zero
  static constexpr std::size_t kRegionVaOffset = 8;
  static constexpr std::size_t kRkeyOffset = 16;
  static constexpr std::size_t kRegionLengthOffset = 20;
  static constexpr std::size_t kRecvDepthOffset = 24;
  static constexpr std::size_t kRecvBufferSizeOffset = 28;

  std::uint8_t version = kVersion;
  std::uint64_t region_va = 0;         // virtual address of the region's first byte
  std::uint32_t rkey = 0;              // R_Key with remote read, write and atomic rights
  std::uint32_t region_length = 0;     // bytes
  std::uint32_t recv_depth = 0;        // receive WQEs kept posted on the responder's QP
  std::uint32_t recv_buffer_size = 0;  // bytes per receive WQE: the largest SEND accepted

  std::array<std::uint8_t, kSize> encode() const;
  // Reads the first 32 bytes of `private_data`; the error says which check failed (too short,
  // wrong magic, unknown version). Reserved bytes and what follows are ignored.
  static std::expected<RcnfPrivateData, std::string> decode(Bytes private_data);

  friend bool operator==(const RcnfPrivateData&, const RcnfPrivateData&) = default;
};

}  // namespace roceconf::control
