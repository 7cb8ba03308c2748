// Communication Management (CM) messages: the 232-byte data area of a CM-class MAD
// (IBA Vol 1 ch. 12.6, Tables 106-120; ClassPortInfo is IBA 13.4.8.1).
// Offsets follow Linux include/rdma/ibta_vol1_c12.h; bit fields are MSB-first within a byte.
// Every field of the spec tables is a member, including reserved bits (`resvN`, N = data byte
// offset), so that decode followed by encode reproduces any input byte for byte.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>

#include "dissector/bytes.h"
#include "dissector/fields.h"
#include "dissector/finding.h"

namespace roceconf {

inline constexpr std::size_t kCmDataSize = 232;
using CmData = std::span<const std::uint8_t, kCmDataSize>;
using CmDataOut = std::span<std::uint8_t, kCmDataSize>;
using CmGid = std::array<std::uint8_t, 16>;

namespace cm_attr {
inline constexpr std::uint16_t kClassPortInfo = 0x0001;
inline constexpr std::uint16_t kReq = 0x0010;
inline constexpr std::uint16_t kMra = 0x0011;
inline constexpr std::uint16_t kRej = 0x0012;
inline constexpr std::uint16_t kRep = 0x0013;
inline constexpr std::uint16_t kRtu = 0x0014;
inline constexpr std::uint16_t kDreq = 0x0015;
inline constexpr std::uint16_t kDrep = 0x0016;
inline constexpr std::uint16_t kSidrReq = 0x0017;
inline constexpr std::uint16_t kSidrRep = 0x0018;
inline constexpr std::uint16_t kLap = 0x0019;
inline constexpr std::uint16_t kApr = 0x001A;
}  // namespace cm_attr

// Private-data sizes (Linux enum ib_cm_data_size) and their offsets in the data area.
inline constexpr std::size_t kReqPrivateDataSize = 92;
inline constexpr std::size_t kMraPrivateDataSize = 222;
inline constexpr std::size_t kRejPrivateDataSize = 148;
inline constexpr std::size_t kRepPrivateDataSize = 196;
inline constexpr std::size_t kRtuPrivateDataSize = 224;
inline constexpr std::size_t kDreqPrivateDataSize = 220;
inline constexpr std::size_t kDrepPrivateDataSize = 224;
inline constexpr std::size_t kLapPrivateDataSize = 168;
inline constexpr std::size_t kAprPrivateDataSize = 148;
inline constexpr std::size_t kSidrReqPrivateDataSize = 216;
inline constexpr std::size_t kSidrRepPrivateDataSize = 136;
inline constexpr std::size_t kRejAriSize = 72;
inline constexpr std::size_t kAprInfoSize = 72;
inline constexpr std::size_t kSidrRepInfoSize = 72;
inline constexpr std::size_t kClassPortInfoSize = 72;  // the rest of the data area is reserved

inline constexpr std::size_t kReqPrivateDataOffset = 140;
inline constexpr std::size_t kMraPrivateDataOffset = 10;
inline constexpr std::size_t kRejAriOffset = 12;
inline constexpr std::size_t kRejPrivateDataOffset = 84;
inline constexpr std::size_t kRepPrivateDataOffset = 36;
inline constexpr std::size_t kRtuPrivateDataOffset = 8;
inline constexpr std::size_t kDreqPrivateDataOffset = 12;
inline constexpr std::size_t kDrepPrivateDataOffset = 8;
inline constexpr std::size_t kLapPrivateDataOffset = 64;
inline constexpr std::size_t kAprInfoOffset = 12;
inline constexpr std::size_t kAprPrivateDataOffset = 84;
inline constexpr std::size_t kSidrReqPrivateDataOffset = 16;
inline constexpr std::size_t kSidrRepInfoOffset = 24;
inline constexpr std::size_t kSidrRepPrivateDataOffset = 96;

// REQ Transport Service Type (2 bits); 3 defers to the Extended Transport Type.
namespace cm_transport {
inline constexpr std::uint8_t kRc = 0;
inline constexpr std::uint8_t kUc = 1;
inline constexpr std::uint8_t kRd = 2;
inline constexpr std::uint8_t kExtended = 3;
inline constexpr std::uint8_t kExtendedXrc = 1;  // Extended Transport Type value for XRC
}  // namespace cm_transport

// MRA "Message MRAed" / REJ "Message Rejected" (2 bits); 3 is reserved.
namespace cm_msg_kind {
inline constexpr std::uint8_t kReq = 0;
inline constexpr std::uint8_t kRep = 1;
inline constexpr std::uint8_t kOther = 2;  // LAP for MRA
}  // namespace cm_msg_kind

// IPv4 address as a RoCE GID: ::ffff:a.b.c.d (what Linux puts in REQ/LAP GIDs on RoCEv2).
constexpr CmGid cm_ipv4_gid(std::uint32_t ipv4) {
  return {0,
          0,
          0,
          0,
          0,
          0,
          0,
          0,
          0,
          0,
          0xFF,
          0xFF,
          static_cast<std::uint8_t>(ipv4 >> 24),
          static_cast<std::uint8_t>(ipv4 >> 16),
          static_cast<std::uint8_t>(ipv4 >> 8),
          static_cast<std::uint8_t>(ipv4)};
}

// One path of a REQ (primary/alternate) or LAP (alternate). An absent alternate path is all
// zero; Linux tests "present" by a non-zero local LID.
struct CmPath {
  std::uint16_t local_lid = 0;
  std::uint16_t remote_lid = 0;
  CmGid local_gid{};
  CmGid remote_gid{};
  std::uint32_t flow_label = 0;  // 20 bits
  std::uint8_t resv_flow = 0;    // 4 reserved bits after the flow label
  std::uint8_t traffic_class = 0;
  std::uint8_t hop_limit = 0;
  std::uint8_t resv_rate = 0;    // 2 reserved bits before the packet rate
  std::uint8_t packet_rate = 0;  // 6 bits
  std::uint8_t sl = 0;           // 4 bits
  bool subnet_local = false;
  std::uint8_t resv_sl = 0;            // 3 bits
  std::uint8_t local_ack_timeout = 0;  // 5 bits
  std::uint8_t resv_ack = 0;           // 3 bits (REQ alternate: 2 bits, SAP Supported takes one)
};

// What Linux sends on routed RoCEv2 (cm_format_req): permissive LIDs, hop limit > 1, not
// subnet-local; ACK timeout = RoCE packet lifetime 18 + 1, as seen in rxe captures.
inline constexpr CmPath kRocePrimaryPath{
    .local_lid = 0xFFFF, .remote_lid = 0xFFFF, .hop_limit = 64, .local_ack_timeout = 19};

// REQ, IBA Table 106.
struct CmReq {
  std::uint32_t local_comm_id = 0;
  std::uint8_t resv4 = 0;
  std::uint32_t vendor_id = 0;  // 24 bits (ECE)
  std::uint64_t service_id = 0;
  std::uint64_t local_ca_guid = 0;
  std::uint32_t resv24 = 0;
  std::uint32_t local_qkey = 0;
  std::uint32_t local_qpn = 0;  // 24 bits
  std::uint8_t responder_resources = 1;
  std::uint32_t local_eecn = 0;  // 24 bits
  std::uint8_t initiator_depth = 1;
  std::uint32_t remote_eecn = 0;                 // 24 bits
  std::uint8_t remote_cm_response_timeout = 20;  // 5 bits: 4.096 us * 2^t
  std::uint8_t transport_type = cm_transport::kRc;
  bool end_to_end_flow_control = false;
  std::uint32_t starting_psn = 0;  // 24 bits
  std::uint8_t local_cm_response_timeout = 20;
  std::uint8_t retry_count = 7;
  std::uint16_t pkey = 0xFFFF;
  std::uint8_t path_mtu = 3;  // IBA MTU enum: 1 = 256 ... 3 = 1024 ... 5 = 4096
  bool rdc_exists = false;
  std::uint8_t rnr_retry_count = 7;
  std::uint8_t max_cm_retries = 15;
  bool srq = false;
  std::uint8_t extended_transport_type = 0;
  CmPath primary = kRocePrimaryPath;
  CmPath alternate{};
  bool sap_supported = false;
  Bytes private_data{};  // 92 bytes on the wire; rdma_cm puts its 36-byte header first
};

// MRA, IBA Table 107.
struct CmMra {
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint8_t message_mraed = cm_msg_kind::kReq;
  std::uint8_t resv8 = 0;             // 6 bits
  std::uint8_t service_timeout = 24;  // 5 bits; rdma_cm's default
  std::uint8_t resv9 = 0;             // 3 bits
  Bytes private_data{};
};

// REJ, IBA Table 108.
struct CmRej {
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint8_t message_rejected = cm_msg_kind::kReq;
  std::uint8_t resv8 = 0;               // 6 bits
  std::uint8_t reject_info_length = 0;  // 7 bits, bytes of ARI that are meaningful
  std::uint8_t resv9 = 0;               // 1 bit
  std::uint16_t reason = 28;            // consumer-defined: what rdma_reject() sends
  Bytes ari{};                          // Additional Rejection Information, 72 bytes
  Bytes private_data{};
};

// REP, IBA Table 110.
struct CmRep {
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint32_t local_qkey = 0;
  std::uint32_t local_qpn = 0;   // 24 bits
  std::uint32_t vendor_id = 0;   // 24 bits, split over bytes 15 (high), 19, 23 (low)
  std::uint32_t local_eecn = 0;  // 24 bits (XRC: SRQ number)
  std::uint32_t starting_psn = 0;
  std::uint8_t responder_resources = 1;
  std::uint8_t initiator_depth = 1;
  std::uint8_t target_ack_delay = 15;  // 5 bits
  std::uint8_t failover_accepted = 0;  // 2 bits
  bool end_to_end_flow_control = false;
  std::uint8_t rnr_retry_count = 7;
  bool srq = false;
  std::uint8_t resv27 = 0;  // 4 bits
  std::uint64_t local_ca_guid = 0;
  Bytes private_data{};
};

// RTU, IBA Table 111.
struct CmRtu {
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  Bytes private_data{};
};

// DREQ, IBA Table 112.
struct CmDreq {
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint32_t remote_qpn = 0;  // 24 bits: remote QPN or EECN
  std::uint8_t resv11 = 0;
  Bytes private_data{};
};

// DREP, IBA Table 113.
struct CmDrep {
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  Bytes private_data{};
};

// SIDR_REQ, IBA Table 119.
struct CmSidrReq {
  std::uint32_t request_id = 0;
  std::uint16_t pkey = 0xFFFF;
  std::uint16_t resv6 = 0;
  std::uint64_t service_id = 0;
  Bytes private_data{};
};

// SIDR_REP status (Linux enum ib_cm_sidr_status).
namespace sidr_status {
inline constexpr std::uint8_t kSuccess = 0;
inline constexpr std::uint8_t kUnsupported = 1;
inline constexpr std::uint8_t kReject = 2;
inline constexpr std::uint8_t kNoQp = 3;
inline constexpr std::uint8_t kRedirect = 4;
inline constexpr std::uint8_t kUnsupportedVersion = 5;
}  // namespace sidr_status

// SIDR_REP, IBA Table 120.
struct CmSidrRep {
  std::uint32_t request_id = 0;
  std::uint8_t sidr_status = sidr_status::kSuccess;
  std::uint8_t additional_info_length = 0;
  std::uint32_t vendor_id = 0;  // 24 bits: bytes 6-7 high, byte 11 low (ECE)
  std::uint32_t qpn = 0;        // 24 bits
  std::uint64_t service_id = 0;
  std::uint32_t qkey = 0;
  Bytes additional_info{};  // 72 bytes
  Bytes private_data{};
};

// LAP, IBA Table 115.
struct CmLap {
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint32_t resv8 = 0;
  std::uint32_t remote_qpn = 0;  // 24 bits: remote QPN or EECN
  std::uint8_t remote_cm_response_timeout = 20;
  std::uint8_t resv15 = 0;  // 3 bits
  std::uint32_t resv16 = 0;
  CmPath alternate = kRocePrimaryPath;
  Bytes private_data{};
};

// APR, IBA Table 116.
struct CmApr {
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint8_t additional_info_length = 0;
  std::uint8_t ap_status = 0;
  std::uint16_t resv10 = 0;
  Bytes additional_info{};  // 72 bytes
  Bytes private_data{};
};

// ClassPortInfo (attribute 0x0001), IBA 13.4.8.1; Linux struct ib_class_port_info.
struct ClassPortInfo {
  std::uint8_t base_version = 1;
  std::uint8_t class_version = 2;
  std::uint16_t capability_mask = 0;
  std::uint32_t capability_mask2 = 0;  // 27 bits
  std::uint8_t resp_time_value = 0;    // 5 bits
  CmGid redirect_gid{};
  std::uint8_t redirect_tc = 0;
  std::uint8_t redirect_sl = 0;           // 4 bits
  std::uint32_t redirect_flow_label = 0;  // 20 bits
  std::uint16_t redirect_lid = 0;
  std::uint16_t redirect_pkey = 0;
  std::uint8_t resv32 = 0;
  std::uint32_t redirect_qp = 0;  // 24 bits
  std::uint32_t redirect_qkey = 0;
  CmGid trap_gid{};
  std::uint8_t trap_tc = 0;
  std::uint8_t trap_sl = 0;
  std::uint32_t trap_flow_label = 0;
  std::uint16_t trap_lid = 0;
  std::uint16_t trap_pkey = 0;
  std::uint8_t trap_hop_limit = 0;
  std::uint32_t trap_qp = 0;  // 24 bits
  std::uint32_t trap_qkey = 0;
  Bytes reserved{};  // data bytes 72..231
};

using CmMessage = std::variant<CmReq, CmMra, CmRej, CmRep, CmRtu, CmDreq, CmDrep, CmSidrReq,
                               CmSidrRep, CmLap, CmApr, ClassPortInfo>;

// Decoders read every bit of the data area; Bytes members are views into `data`.
CmReq decode_cm_req(CmData data);
CmMra decode_cm_mra(CmData data);
CmRej decode_cm_rej(CmData data);
CmRep decode_cm_rep(CmData data);
CmRtu decode_cm_rtu(CmData data);
CmDreq decode_cm_dreq(CmData data);
CmDrep decode_cm_drep(CmData data);
CmSidrReq decode_cm_sidr_req(CmData data);
CmSidrRep decode_cm_sidr_rep(CmData data);
CmLap decode_cm_lap(CmData data);
CmApr decode_cm_apr(CmData data);
ClassPortInfo decode_class_port_info(CmData data);
// nullopt when `attr_id` is not a CM attribute.
std::optional<CmMessage> decode_cm(std::uint16_t attr_id, CmData data);

// Encoders overwrite all 232 bytes. Values wider than their field are masked; Bytes members
// are copied, zero-padded or truncated to their wire size.
void encode_cm(const CmReq& msg, CmDataOut out);
void encode_cm(const CmMra& msg, CmDataOut out);
void encode_cm(const CmRej& msg, CmDataOut out);
void encode_cm(const CmRep& msg, CmDataOut out);
void encode_cm(const CmRtu& msg, CmDataOut out);
void encode_cm(const CmDreq& msg, CmDataOut out);
void encode_cm(const CmDrep& msg, CmDataOut out);
void encode_cm(const CmSidrReq& msg, CmDataOut out);
void encode_cm(const CmSidrRep& msg, CmDataOut out);
void encode_cm(const CmLap& msg, CmDataOut out);
void encode_cm(const CmApr& msg, CmDataOut out);
void encode_cm(const ClassPortInfo& msg, CmDataOut out);
void encode_cm(const CmMessage& msg, CmDataOut out);

// Field-range checks (invalid MTU, reserved values and bits, unassigned codes). `data_base` is
// the absolute frame offset of data byte 0 (MAD offset + 24); findings use Layer::kCm.
void check_cm(const CmMessage& msg, std::uint32_t data_base, Findings& findings);

std::uint16_t cm_attr_id(const CmMessage& msg);
std::string_view cm_message_name(const CmMessage& msg);  // "REQ", ..., "ClassPortInfo"
std::string_view cm_attr_name(std::uint16_t attr_id);    // same names; "" when unknown

// Name tables; "" for unassigned values.
std::string_view rej_reason_name(std::uint16_t reason);
std::string_view apr_status_name(std::uint8_t status);
std::string_view sidr_status_name(std::uint8_t status);
std::string_view mra_message_name(std::uint8_t message);  // also REJ Message Rejected
std::string_view transport_type_name(std::uint8_t transport_type,
                                     std::uint8_t extended_transport_type = 0);

// Emits the "cm" layer: `msg` (the name) and the message's fields of cm_field_table()
// (cm_fields.h) in wire order (`primary_local_gid`, `reason`, `reason_name`, ...); for a REQ to
// an rdma_cm service ID also `rdma_cm.port_space`, `rdma_cm.port`, `rdma_cm.ip_version`,
// `rdma_cm.src_port`, `rdma_cm.src_ip`, `rdma_cm.dst_ip` (4 bytes for IPv4, 16 for IPv6). Bytes
// values are views into `msg`, valid while it lives.
void visit_cm_fields(const CmMessage& msg, FieldSink& sink);

}  // namespace roceconf
