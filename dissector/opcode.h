// The BTH opcode table (IBA Vol 1 Table 38 and ch. 9.3, Annex A17 CNP, FLUSH / ATOMIC_WRITE
// from the 2021 memory-placement extensions): for each of the 256 opcodes, its service, name,
// which extension headers follow the BTH, and what payload is allowed.
#pragma once

#include <cstdint>
#include <string_view>

namespace roceconf {

enum class Service : std::uint8_t { kRc, kUc, kRd, kUd, kCnp, kXrc, kManufacturer, kReserved };

std::string_view service_name(Service service);

// Extension headers, as bits; their wire order is the order of the bits (low first).
namespace hdr {
inline constexpr std::uint16_t kRdeth = 1 << 0;
inline constexpr std::uint16_t kDeth = 1 << 1;
inline constexpr std::uint16_t kXrceth = 1 << 2;
inline constexpr std::uint16_t kFeth = 1 << 3;
inline constexpr std::uint16_t kReth = 1 << 4;
inline constexpr std::uint16_t kAtomicEth = 1 << 5;
inline constexpr std::uint16_t kAeth = 1 << 6;
inline constexpr std::uint16_t kAtomicAckEth = 1 << 7;
inline constexpr std::uint16_t kImmDt = 1 << 8;
inline constexpr std::uint16_t kIeth = 1 << 9;
inline constexpr std::uint16_t kCnpBody = 1 << 10;
}  // namespace hdr

// Where a packet sits in its message (IBA 9.8.3 segmentation).
enum class Position : std::uint8_t { kNone, kFirst, kMiddle, kLast, kOnly };

// Payload rule for the opcode (IBA 9.8.3, spec-facts §5).
enum class PayloadRule : std::uint8_t {
  kNoPayload,  // no payload allowed
  kExactPmtu,  // FIRST / MIDDLE: exactly the path MTU
  kUpToPmtu1,  // LAST: 1 .. PMTU
  kUpToPmtu0,  // ONLY: 0 .. PMTU
  kExactly8,   // ATOMIC_WRITE
  kUnknown,    // manufacturer-specific / reserved: not checked
};

enum class OpKind : std::uint8_t {
  kSend,
  kWrite,
  kReadRequest,
  kReadResponse,
  kAck,
  kAtomicAck,
  kCompareSwap,
  kFetchAdd,
  kResync,
  kFlush,
  kAtomicWrite,
  kCnp,
  kOther,
};

struct OpcodeInfo {
  std::string_view name;     // e.g. "RC_SEND_ONLY", "UD_SEND_ONLY_WITH_IMMEDIATE", "CNP"
  std::string_view op_name;  // the operation alone: "SEND_ONLY", "ACKNOWLEDGE"
  Service service;
  OpKind kind;
  Position position;
  PayloadRule payload;
  std::uint16_t headers;  // hdr:: bits
  bool valid;             // defined by the spec (or manufacturer range)
  bool is_request;        // sent by a requester (false for responses and CNP)
};

const OpcodeInfo& opcode_info(std::uint8_t opcode);

namespace opcode {
inline constexpr std::uint8_t kRcSendFirst = 0x00;
inline constexpr std::uint8_t kRcSendMiddle = 0x01;
inline constexpr std::uint8_t kRcSendLast = 0x02;
inline constexpr std::uint8_t kRcSendLastImm = 0x03;
inline constexpr std::uint8_t kRcSendOnly = 0x04;
inline constexpr std::uint8_t kRcSendOnlyImm = 0x05;
inline constexpr std::uint8_t kRcWriteFirst = 0x06;
inline constexpr std::uint8_t kRcWriteMiddle = 0x07;
inline constexpr std::uint8_t kRcWriteLast = 0x08;
inline constexpr std::uint8_t kRcWriteLastImm = 0x09;
inline constexpr std::uint8_t kRcWriteOnly = 0x0A;
inline constexpr std::uint8_t kRcWriteOnlyImm = 0x0B;
inline constexpr std::uint8_t kRcReadRequest = 0x0C;
inline constexpr std::uint8_t kRcReadResponseFirst = 0x0D;
inline constexpr std::uint8_t kRcReadResponseMiddle = 0x0E;
inline constexpr std::uint8_t kRcReadResponseLast = 0x0F;
inline constexpr std::uint8_t kRcReadResponseOnly = 0x10;
inline constexpr std::uint8_t kRcAck = 0x11;
inline constexpr std::uint8_t kRcAtomicAck = 0x12;
inline constexpr std::uint8_t kRcCompareSwap = 0x13;
inline constexpr std::uint8_t kRcFetchAdd = 0x14;
inline constexpr std::uint8_t kRcSendLastInv = 0x16;
inline constexpr std::uint8_t kRcSendOnlyInv = 0x17;
inline constexpr std::uint8_t kRcFlush = 0x1C;
inline constexpr std::uint8_t kRcAtomicWrite = 0x1D;
inline constexpr std::uint8_t kUcBase = 0x20;
inline constexpr std::uint8_t kRdBase = 0x40;
inline constexpr std::uint8_t kUdSendOnly = 0x64;
inline constexpr std::uint8_t kUdSendOnlyImm = 0x65;
inline constexpr std::uint8_t kCnp = 0x81;    // RoCEv2 (Annex A17)
inline constexpr std::uint8_t kIbCnp = 0x80;  // native InfiniBand (Annex A10)
inline constexpr std::uint8_t kXrcBase = 0xA0;
}  // namespace opcode

}  // namespace roceconf
