// Management Datagram (MAD) common header and the CM class carried in it (IBA ch. 13.4, 12.6).
// On RoCE, MADs ride in UD SEND ONLY packets to QP1; the MAD is exactly 256 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "dissector/bytes.h"
#include "dissector/fields.h"
#include "dissector/finding.h"
#include "dissector/mad/cm.h"

namespace roceconf {

inline constexpr std::size_t kMadSize = 256;
inline constexpr std::size_t kMadHeaderSize = 24;
inline constexpr std::uint8_t kMgmtClassCm = 0x07;
inline constexpr std::uint8_t kCmClassVersion = 2;

namespace mad_method {
inline constexpr std::uint8_t kGet = 0x01;
inline constexpr std::uint8_t kSet = 0x02;
inline constexpr std::uint8_t kSend = 0x03;
inline constexpr std::uint8_t kGetResp = 0x81;
}  // namespace mad_method

struct MadHeader {
  std::uint8_t base_version = 1;
  std::uint8_t mgmt_class = kMgmtClassCm;
  std::uint8_t class_version = kCmClassVersion;
  std::uint8_t method = mad_method::kSend;  // includes the R (response) bit 0x80
  std::uint16_t status = 0;
  std::uint16_t class_specific = 0;
  std::uint64_t tid = 0;
  std::uint16_t attr_id = 0;
  std::uint16_t resv = 0;
  std::uint32_t attr_mod = 0;
};

struct Mad {
  MadHeader header;
  // The decoded CM message when the MAD is of the CM class and its attribute is known.
  std::optional<CmMessage> cm;
  // The 232 data bytes after the header (a view; on encode, used when `cm` is empty).
  Bytes data;
};

// Decodes a MAD from `bytes` (the UD payload), which sits at absolute frame offset `base`.
// Appends findings (short MAD, bad versions, unknown attribute, CM field ranges). Returns nullopt
// only when not even the 24-byte common header fits.
std::optional<Mad> decode_mad(Bytes bytes, std::uint32_t base, Findings& findings);

// Writes the 256-byte MAD. When `mad.cm` is set, the header's attr_id is taken from the message.
void encode_mad(const Mad& mad, std::span<std::uint8_t, kMadSize> out);

// Emits the "mad.*" fields of mad_field_table() (mad_fields.h) and, for CM, the "cm.*" fields
// (cm.h).
void visit_mad_fields(const Mad& mad, FieldSink& sink);

}  // namespace roceconf
