#include "dissector/names.h"

#include <array>

namespace roceconf {

std::string_view syndrome_name(std::uint8_t s) {
  if (s & 0x80) return "RESERVED";
  switch (aeth_type(s)) {
    case AethType::kAck:
      return "ACK";
    case AethType::kRnrNak:
      return "RNR_NAK";
    case AethType::kReserved:
      return "RESERVED";
    case AethType::kNak:
      switch (s) {
        case syndrome::kNakPsnSeqError:
          return "NAK_PSN_SEQUENCE_ERROR";
        case syndrome::kNakInvalidRequest:
          return "NAK_INVALID_REQUEST";
        case syndrome::kNakRemoteAccess:
          return "NAK_REMOTE_ACCESS_ERROR";
        case syndrome::kNakRemoteOperational:
          return "NAK_REMOTE_OPERATIONAL_ERROR";
        case syndrome::kNakInvalidRdRequest:
          return "NAK_INVALID_RD_REQUEST";
        default:
          return "RESERVED";
      }
  }
  return "RESERVED";
}

std::string_view syndrome_short_name(std::uint8_t s) {
  if (syndrome_reserved(s)) return "reserved";
  switch (aeth_type(s)) {
    case AethType::kAck:
      return "ack";
    case AethType::kRnrNak:
      return "rnr";
    default:
      break;
  }
  switch (s) {
    case syndrome::kNakPsnSeqError:
      return "psn_seq_err";
    case syndrome::kNakInvalidRequest:
      return "inv_req";
    case syndrome::kNakRemoteAccess:
      return "rem_access";
    case syndrome::kNakRemoteOperational:
      return "rem_op";
    default:
      return "inv_rd_req";
  }
}

bool syndrome_reserved(std::uint8_t s) {
  return (s & 0x80) != 0 || aeth_type(s) == AethType::kReserved ||
         (aeth_type(s) == AethType::kNak && s > syndrome::kNakInvalidRdRequest);
}

std::optional<std::uint32_t> ack_credits(std::uint8_t code) {
  static constexpr std::array<std::uint32_t, 31> kCredits = {
      0,   1,   2,   3,   4,    6,    8,    12,   16,   24,   32,   48,    64,    96,    128,  192,
      256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768};
  if (code >= kCredits.size()) return std::nullopt;
  return kCredits[code];
}

std::uint32_t rnr_timer_usec(std::uint8_t code) {
  // Code 25 is 61.44 ms (one software stack once had 61410).
  static constexpr std::array<std::uint32_t, 32> kUsec = {
      655360, 10,    20,    30,    40,    60,     80,     120,    160,    240,   320,
      480,    640,   960,   1280,  1920,  2560,   3840,   5120,   7680,   10240, 15360,
      20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};
  return kUsec[code & 0x1F];
}

std::uint32_t mtu_bytes(std::uint8_t e) {
  return (e >= 1 && e <= 5) ? 128u << e : 0;
}

std::uint8_t mtu_enum(std::uint32_t bytes) {
  for (std::uint8_t e = 1; e <= 5; ++e)
    if (mtu_bytes(e) == bytes) return e;
  return 0;
}

}  // namespace roceconf
