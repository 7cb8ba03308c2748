// Findings: what a decoder reports instead of failing. Each has a stable code (used in JSON,
// tests and the Wireshark plugin), the layer and absolute frame offset at fault, and a message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dissector/layer.h"

namespace roceconf {

enum class Severity : std::uint8_t { kNote, kWarning, kError };

enum class FindingCode : std::uint8_t {
  kTruncated,          // a header does not fit in the bytes captured
  kIpVersion,          // IPv4 version/IHL or IPv6 version field wrong
  kIpChecksum,         // IPv4 header checksum does not verify
  kIpLength,           // IP total/payload length disagrees with the frame
  kIpFragment,         // fragmented IP: RoCE is never fragmented
  kUdpLength,          // UDP length disagrees with the IP payload
  kGrhLength,          // GRH PayLen disagrees with the frame
  kGrhVersion,         // GRH IPVer is not 6
  kGrhNextHeader,      // GRH NxtHdr is not 0x1B
  kLrhLength,          // LRH PktLen disagrees with the frame
  kLrhVersion,         // LRH LVer is not 0
  kLrhNextHeader,      // LRH LNH is not an IBA transport
  kTver,               // BTH TVer is not 0
  kReservedOpcode,     // opcode reserved by the spec
  kUnsupportedOpcode,  // known opcode of a service RoCE does not carry (RD, MSP)
  kReservedBits,       // reserved bits set that must be sent as 0
  kPadCount,           // pad count inconsistent with the payload
  kPayloadLength,      // payload length not allowed for the opcode
  kInvalidMtu,         // MTU enum outside 1..5
  kReservedSyndrome,   // AETH syndrome type or NAK code reserved
  kMadLength,          // MAD shorter (or longer) than 256 bytes
  kMadVersion,         // MAD base or class version not the one defined
  kMadAttribute,       // unknown CM attribute, or method not valid for it
  kCmField,            // a CM field out of its defined range
  kBadIcrc,            // ICRC does not match
  kBadVcrc,            // VCRC does not match
  kQp1Qkey,            // datagram to QP1 with a Q_Key other than 0x80010000
  kQp0OnRoce,          // QP0 (SMI) traffic: unsupported on RoCE
  kAtomicAlignment,    // atomic VA not 8-byte aligned
  kDmaLength,          // RETH DMA length beyond 2^31
  kLinkHeader,         // capture link header (ERF, SLL) malformed or of an unknown type
};

struct FindingInfo {
  std::string_view code;  // stable kebab-case identifier
  Severity severity;
};

const FindingInfo& finding_info(FindingCode code);

struct Finding {
  FindingCode code;
  Layer layer;
  std::uint32_t offset;  // absolute byte offset in the frame
  std::string message;

  std::string_view code_name() const { return finding_info(code).code; }
  Severity severity() const { return finding_info(code).severity; }
};

using Findings = std::vector<Finding>;

}  // namespace roceconf
