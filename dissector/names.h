// Name and value tables for transport fields: AETH syndromes (IBA 9.7.5.1, Tables 44-45),
// RNR timer codes (Table 45), credit counts (Table 44), NAK codes (Table 46), path MTU enums.
// The text of addresses has its own home, dissector/address_text.h, included here for the
// callers that print both.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dissector/address_text.h"

namespace roceconf {

enum class AethType : std::uint8_t { kAck = 0, kRnrNak = 1, kReserved = 2, kNak = 3 };

constexpr AethType aeth_type(std::uint8_t syndrome) {
  return static_cast<AethType>((syndrome >> 5) & 3);
}
constexpr std::uint8_t aeth_value(std::uint8_t syndrome) {
  return syndrome & 0x1F;
}

namespace syndrome {
inline constexpr std::uint8_t kAckUnlimited = 0x1F;
inline constexpr std::uint8_t kRnrBase = 0x20;
inline constexpr std::uint8_t kNakPsnSeqError = 0x60;
inline constexpr std::uint8_t kNakInvalidRequest = 0x61;
inline constexpr std::uint8_t kNakRemoteAccess = 0x62;
inline constexpr std::uint8_t kNakRemoteOperational = 0x63;
inline constexpr std::uint8_t kNakInvalidRdRequest = 0x64;
}  // namespace syndrome

// "ACK", "RNR_NAK", "NAK_PSN_SEQ_ERROR", ...; "RESERVED" for reserved syndromes.
std::string_view syndrome_name(std::uint8_t syndrome);
// Short script name: "ack", "rnr", "psn_seq_err", "inv_req", "rem_access", "rem_op", "inv_rd_req".
std::string_view syndrome_short_name(std::uint8_t syndrome);
// True when bit 7 is set, the type is 0b10, or a NAK code is above 0x64.
bool syndrome_reserved(std::uint8_t syndrome);

// Credit count for an ACK credit code 0..30; nullopt for 31 (invalid / unlimited).
std::optional<std::uint32_t> ack_credits(std::uint8_t code);
// Minimum RNR NAK timer in microseconds for a 5-bit code.
std::uint32_t rnr_timer_usec(std::uint8_t code);

// Path MTU enum (IBA Table 208 / ibv_mtu): 1=256 ... 5=4096; 0 for invalid enums.
std::uint32_t mtu_bytes(std::uint8_t mtu_enum);
// Inverse of mtu_bytes: 0 when `bytes` is not a valid path MTU.
std::uint8_t mtu_enum(std::uint32_t bytes);

}  // namespace roceconf
