// Over 600 lines: decoders, encoders and checks of the twelve CM messages, kept side by side.
#include "dissector/mad/cm.h"

#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "dissector/layer.h"
#include "dissector/mad/cm_names.h"

namespace roceconf {

static_assert(kReqPrivateDataOffset + kReqPrivateDataSize == kCmDataSize);
static_assert(kMraPrivateDataOffset + kMraPrivateDataSize == kCmDataSize);
static_assert(kRejAriOffset + kRejAriSize == kRejPrivateDataOffset);
static_assert(kRejPrivateDataOffset + kRejPrivateDataSize == kCmDataSize);
static_assert(kRepPrivateDataOffset + kRepPrivateDataSize == kCmDataSize);
static_assert(kRtuPrivateDataOffset + kRtuPrivateDataSize == kCmDataSize);
static_assert(kDreqPrivateDataOffset + kDreqPrivateDataSize == kCmDataSize);
static_assert(kDrepPrivateDataOffset + kDrepPrivateDataSize == kCmDataSize);
static_assert(kLapPrivateDataOffset + kLapPrivateDataSize == kCmDataSize);
static_assert(kAprInfoOffset + kAprInfoSize == kAprPrivateDataOffset);
static_assert(kAprPrivateDataOffset + kAprPrivateDataSize == kCmDataSize);
static_assert(kSidrReqPrivateDataOffset + kSidrReqPrivateDataSize == kCmDataSize);
static_assert(kSidrRepInfoOffset + kSidrRepInfoSize == kSidrRepPrivateDataOffset);
static_assert(kSidrRepPrivateDataOffset + kSidrRepPrivateDataSize == kCmDataSize);

namespace {

constexpr std::uint8_t bits(std::uint8_t byte, unsigned shift, unsigned width) {
  return static_cast<std::uint8_t>((byte >> shift) & ((1u << width) - 1));
}

Bytes view(CmData data, std::size_t offset, std::size_t size) {
  return Bytes(data).subspan(offset, size);
}

CmGid load_gid(const std::uint8_t* p) {
  CmGid gid;
  std::copy_n(p, gid.size(), gid.begin());
  return gid;
}

// Writes into a zeroed data area; every value is masked to its field so a too-wide value never
// spills into a neighbour.
class Writer {
 public:
  explicit Writer(CmDataOut out) : p_(out.data()) {
    std::fill(out.begin(), out.end(), std::uint8_t{0});
  }
  void u8(std::size_t off, std::uint8_t v) { p_[off] = v; }
  void bits(std::size_t off, unsigned shift, unsigned width, unsigned v) {
    p_[off] |= static_cast<std::uint8_t>((v & ((1u << width) - 1)) << shift);
  }
  void u16(std::size_t off, std::uint16_t v) { be::store16(p_ + off, v); }
  void u24(std::size_t off, std::uint32_t v) { be::store24(p_ + off, v & 0xFFFFFF); }
  void u32(std::size_t off, std::uint32_t v) { be::store32(p_ + off, v); }
  void u64(std::size_t off, std::uint64_t v) { be::store64(p_ + off, v); }
  void gid(std::size_t off, const CmGid& g) { std::copy(g.begin(), g.end(), p_ + off); }
  // Copies at most `size` bytes; the rest stays zero.
  void bytes(std::size_t off, std::size_t size, Bytes src) {
    std::copy_n(src.begin(), std::min(size, src.size()), p_ + off);
  }
  std::uint8_t* data() { return p_; }

 private:
  std::uint8_t* p_;
};

// REQ paths put the packet rate before TC/hop limit; LAP puts it after.
enum class PathLayout { kReq, kLap };

struct PathOffsets {
  std::size_t rate, traffic_class, hop_limit;
};
constexpr PathOffsets path_offsets(PathLayout layout) {
  return layout == PathLayout::kReq ? PathOffsets{39, 40, 41} : PathOffsets{41, 39, 40};
}

CmPath decode_path(const std::uint8_t* p, PathLayout layout) {
  const PathOffsets o = path_offsets(layout);
  CmPath path;
  path.local_lid = be::load16(p);
  path.remote_lid = be::load16(p + 2);
  path.local_gid = load_gid(p + 4);
  path.remote_gid = load_gid(p + 20);
  path.flow_label = be::load24(p + 36) >> 4;
  path.resv_flow = bits(p[38], 0, 4);
  path.resv_rate = bits(p[o.rate], 6, 2);
  path.packet_rate = bits(p[o.rate], 0, 6);
  path.traffic_class = p[o.traffic_class];
  path.hop_limit = p[o.hop_limit];
  path.sl = bits(p[42], 4, 4);
  path.subnet_local = bits(p[42], 3, 1) != 0;
  path.resv_sl = bits(p[42], 0, 3);
  path.local_ack_timeout = bits(p[43], 3, 5);
  path.resv_ack = bits(p[43], 0, 3);
  return path;
}

void encode_path(Writer& w, std::size_t off, const CmPath& path, PathLayout layout) {
  const PathOffsets o = path_offsets(layout);
  w.u16(off, path.local_lid);
  w.u16(off + 2, path.remote_lid);
  w.gid(off + 4, path.local_gid);
  w.gid(off + 20, path.remote_gid);
  w.u24(off + 36, (path.flow_label & 0xFFFFF) << 4);
  w.bits(off + 38, 0, 4, path.resv_flow);
  w.bits(off + o.rate, 6, 2, path.resv_rate);
  w.bits(off + o.rate, 0, 6, path.packet_rate);
  w.u8(off + o.traffic_class, path.traffic_class);
  w.u8(off + o.hop_limit, path.hop_limit);
  w.bits(off + 42, 4, 4, path.sl);
  w.bits(off + 42, 3, 1, path.subnet_local);
  w.bits(off + 42, 0, 3, path.resv_sl);
  w.bits(off + 43, 3, 5, path.local_ack_timeout);
  w.bits(off + 43, 0, 3, path.resv_ack);
}

// --- findings -------------------------------------------------------------------------------

class Checker {
 public:
  Checker(std::uint32_t base, Findings& findings) : base_(base), findings_(findings) {}
  void add(FindingCode code, std::size_t off, std::string message) {
    findings_.push_back(
        Finding{code, Layer::kCm, base_ + static_cast<std::uint32_t>(off), std::move(message)});
  }
  void reserved(std::string_view msg, std::size_t off, std::uint64_t value) {
    if (value != 0) {
      add(FindingCode::kReservedBits, off,
          fmt::format("{}: reserved bits at data byte {} are 0x{:x}, must be 0", msg, off, value));
    }
  }
  void path(std::string_view msg, std::size_t off, const CmPath& p, PathLayout layout) {
    const PathOffsets o = path_offsets(layout);
    reserved(msg, off + 38, p.resv_flow);
    reserved(msg, off + o.rate, p.resv_rate);
    reserved(msg, off + 42, p.resv_sl);
    reserved(msg, off + 43, p.resv_ack);
  }
  void msg_kind(std::string_view msg, std::string_view field, std::uint8_t value) {
    if (value > cm_msg_kind::kOther) {
      add(FindingCode::kCmField, 8, fmt::format("{}: {} value {} is reserved", msg, field, value));
    }
  }
  void info_length(std::string_view msg, std::size_t off, unsigned length, std::size_t max) {
    if (length > max) {
      add(FindingCode::kCmField, off,
          fmt::format("{}: additional information length {} exceeds {} bytes", msg, length, max));
    }
  }

  void operator()(const CmReq& m) {
    reserved("REQ", 4, m.resv4);
    reserved("REQ", 24, m.resv24);
    if (m.transport_type == cm_transport::kExtended &&
        m.extended_transport_type != cm_transport::kExtendedXrc) {
      add(FindingCode::kCmField, 51,
          fmt::format("REQ: extended transport type {} is reserved", m.extended_transport_type));
    } else if (m.transport_type != cm_transport::kExtended && m.extended_transport_type != 0) {
      add(FindingCode::kCmField, 51,
          fmt::format("REQ: extended transport type {} set with transport service type {}",
                      m.extended_transport_type, m.transport_type));
    }
    if (m.path_mtu < 1 || m.path_mtu > 5) {
      add(FindingCode::kInvalidMtu, 50,
          fmt::format("REQ: path MTU enum {} is outside 1..5 (256..4096 bytes)", m.path_mtu));
    }
    path("REQ primary path", 52, m.primary, PathLayout::kReq);
    path("REQ alternate path", 96, m.alternate, PathLayout::kReq);
  }
  void operator()(const CmMra& m) {
    msg_kind("MRA", "Message MRAed", m.message_mraed);
    reserved("MRA", 8, m.resv8);
    reserved("MRA", 9, m.resv9);
  }
  void operator()(const CmRej& m) {
    msg_kind("REJ", "Message Rejected", m.message_rejected);
    reserved("REJ", 8, m.resv8);
    reserved("REJ", 9, m.resv9);
    info_length("REJ", 9, m.reject_info_length, kRejAriSize);
    if (rej_reason_name(m.reason).empty()) {
      add(FindingCode::kCmField, 10, fmt::format("REJ: reason {} is not assigned", m.reason));
    }
  }
  void operator()(const CmRep& m) { reserved("REP", 27, m.resv27); }
  void operator()(const CmRtu&) {}
  void operator()(const CmDreq& m) { reserved("DREQ", 11, m.resv11); }
  void operator()(const CmDrep&) {}
  void operator()(const CmSidrReq& m) { reserved("SIDR_REQ", 6, m.resv6); }
  void operator()(const CmSidrRep& m) {
    if (sidr_status_name(m.sidr_status).empty()) {
      add(FindingCode::kCmField, 4,
          fmt::format("SIDR_REP: status {} is not assigned", m.sidr_status));
    }
    info_length("SIDR_REP", 5, m.additional_info_length, kSidrRepInfoSize);
  }
  void operator()(const CmLap& m) {
    reserved("LAP", 8, m.resv8);
    reserved("LAP", 15, m.resv15);
    reserved("LAP", 16, m.resv16);
    path("LAP alternate path", 20, m.alternate, PathLayout::kLap);
  }
  void operator()(const CmApr& m) {
    info_length("APR", 8, m.additional_info_length, kAprInfoSize);
    if (apr_status_name(m.ap_status).empty()) {
      add(FindingCode::kCmField, 9, fmt::format("APR: AP status {} is not assigned", m.ap_status));
    }
    reserved("APR", 10, m.resv10);
  }
  void operator()(const ClassPortInfo&) {}

 private:
  std::uint32_t base_;
  Findings& findings_;
};

}  // namespace

// --- decoders -------------------------------------------------------------------------------

CmReq decode_cm_req(CmData data) {
  const std::uint8_t* p = data.data();
  CmReq m;
  m.local_comm_id = be::load32(p);
  m.resv4 = p[4];
  m.vendor_id = be::load24(p + 5);
  m.service_id = be::load64(p + 8);
  m.local_ca_guid = be::load64(p + 16);
  m.resv24 = be::load32(p + 24);
  m.local_qkey = be::load32(p + 28);
  m.local_qpn = be::load24(p + 32);
  m.responder_resources = p[35];
  m.local_eecn = be::load24(p + 36);
  m.initiator_depth = p[39];
  m.remote_eecn = be::load24(p + 40);
  m.remote_cm_response_timeout = bits(p[43], 3, 5);
  m.transport_type = bits(p[43], 1, 2);
  m.end_to_end_flow_control = bits(p[43], 0, 1) != 0;
  m.starting_psn = be::load24(p + 44);
  m.local_cm_response_timeout = bits(p[47], 3, 5);
  m.retry_count = bits(p[47], 0, 3);
  m.pkey = be::load16(p + 48);
  m.path_mtu = bits(p[50], 4, 4);
  m.rdc_exists = bits(p[50], 3, 1) != 0;
  m.rnr_retry_count = bits(p[50], 0, 3);
  m.max_cm_retries = bits(p[51], 4, 4);
  m.srq = bits(p[51], 3, 1) != 0;
  m.extended_transport_type = bits(p[51], 0, 3);
  m.primary = decode_path(p + 52, PathLayout::kReq);
  m.alternate = decode_path(p + 96, PathLayout::kReq);
  // Byte 139 bit 5 is SAP Supported; only the last two bits of the alternate path are reserved.
  m.sap_supported = bits(p[139], 2, 1) != 0;
  m.alternate.resv_ack = bits(p[139], 0, 2);
  m.private_data = view(data, kReqPrivateDataOffset, kReqPrivateDataSize);
  return m;
}

CmMra decode_cm_mra(CmData data) {
  const std::uint8_t* p = data.data();
  CmMra m;
  m.local_comm_id = be::load32(p);
  m.remote_comm_id = be::load32(p + 4);
  m.message_mraed = bits(p[8], 6, 2);
  m.resv8 = bits(p[8], 0, 6);
  m.service_timeout = bits(p[9], 3, 5);
  m.resv9 = bits(p[9], 0, 3);
  m.private_data = view(data, kMraPrivateDataOffset, kMraPrivateDataSize);
  return m;
}

CmRej decode_cm_rej(CmData data) {
  const std::uint8_t* p = data.data();
  CmRej m;
  m.local_comm_id = be::load32(p);
  m.remote_comm_id = be::load32(p + 4);
  m.message_rejected = bits(p[8], 6, 2);
  m.resv8 = bits(p[8], 0, 6);
  m.reject_info_length = bits(p[9], 1, 7);
  m.resv9 = bits(p[9], 0, 1);
  m.reason = be::load16(p + 10);
  m.ari = view(data, kRejAriOffset, kRejAriSize);
  m.private_data = view(data, kRejPrivateDataOffset, kRejPrivateDataSize);
  return m;
}

CmRep decode_cm_rep(CmData data) {
  const std::uint8_t* p = data.data();
  CmRep m;
  m.local_comm_id = be::load32(p);
  m.remote_comm_id = be::load32(p + 4);
  m.local_qkey = be::load32(p + 8);
  m.local_qpn = be::load24(p + 12);
  m.vendor_id = (std::uint32_t{p[15]} << 16) | (std::uint32_t{p[19]} << 8) | p[23];
  m.local_eecn = be::load24(p + 16);
  m.starting_psn = be::load24(p + 20);
  m.responder_resources = p[24];
  m.initiator_depth = p[25];
  m.target_ack_delay = bits(p[26], 3, 5);
  m.failover_accepted = bits(p[26], 1, 2);
  m.end_to_end_flow_control = bits(p[26], 0, 1) != 0;
  m.rnr_retry_count = bits(p[27], 5, 3);
  m.srq = bits(p[27], 4, 1) != 0;
  m.resv27 = bits(p[27], 0, 4);
  m.local_ca_guid = be::load64(p + 28);
  m.private_data = view(data, kRepPrivateDataOffset, kRepPrivateDataSize);
  return m;
}

CmRtu decode_cm_rtu(CmData data) {
  const std::uint8_t* p = data.data();
  CmRtu m;
  m.local_comm_id = be::load32(p);
  m.remote_comm_id = be::load32(p + 4);
  m.private_data = view(data, kRtuPrivateDataOffset, kRtuPrivateDataSize);
  return m;
}

CmDreq decode_cm_dreq(CmData data) {
  const std::uint8_t* p = data.data();
  CmDreq m;
  m.local_comm_id = be::load32(p);
  m.remote_comm_id = be::load32(p + 4);
  m.remote_qpn = be::load24(p + 8);
  m.resv11 = p[11];
  m.private_data = view(data, kDreqPrivateDataOffset, kDreqPrivateDataSize);
  return m;
}

CmDrep decode_cm_drep(CmData data) {
  const std::uint8_t* p = data.data();
  CmDrep m;
  m.local_comm_id = be::load32(p);
  m.remote_comm_id = be::load32(p + 4);
  m.private_data = view(data, kDrepPrivateDataOffset, kDrepPrivateDataSize);
  return m;
}

CmSidrReq decode_cm_sidr_req(CmData data) {
  const std::uint8_t* p = data.data();
  CmSidrReq m;
  m.request_id = be::load32(p);
  m.pkey = be::load16(p + 4);
  m.resv6 = be::load16(p + 6);
  m.service_id = be::load64(p + 8);
  m.private_data = view(data, kSidrReqPrivateDataOffset, kSidrReqPrivateDataSize);
  return m;
}

CmSidrRep decode_cm_sidr_rep(CmData data) {
  const std::uint8_t* p = data.data();
  CmSidrRep m;
  m.request_id = be::load32(p);
  m.sidr_status = p[4];
  m.additional_info_length = p[5];
  m.vendor_id = (std::uint32_t{be::load16(p + 6)} << 8) | p[11];
  m.qpn = be::load24(p + 8);
  m.service_id = be::load64(p + 12);
  m.qkey = be::load32(p + 20);
  m.additional_info = view(data, kSidrRepInfoOffset, kSidrRepInfoSize);
  m.private_data = view(data, kSidrRepPrivateDataOffset, kSidrRepPrivateDataSize);
  return m;
}

CmLap decode_cm_lap(CmData data) {
  const std::uint8_t* p = data.data();
  CmLap m;
  m.local_comm_id = be::load32(p);
  m.remote_comm_id = be::load32(p + 4);
  m.resv8 = be::load32(p + 8);
  m.remote_qpn = be::load24(p + 12);
  m.remote_cm_response_timeout = bits(p[15], 3, 5);
  m.resv15 = bits(p[15], 0, 3);
  m.resv16 = be::load32(p + 16);
  m.alternate = decode_path(p + 20, PathLayout::kLap);
  m.private_data = view(data, kLapPrivateDataOffset, kLapPrivateDataSize);
  return m;
}

CmApr decode_cm_apr(CmData data) {
  const std::uint8_t* p = data.data();
  CmApr m;
  m.local_comm_id = be::load32(p);
  m.remote_comm_id = be::load32(p + 4);
  m.additional_info_length = p[8];
  m.ap_status = p[9];
  m.resv10 = be::load16(p + 10);
  m.additional_info = view(data, kAprInfoOffset, kAprInfoSize);
  m.private_data = view(data, kAprPrivateDataOffset, kAprPrivateDataSize);
  return m;
}

ClassPortInfo decode_class_port_info(CmData data) {
  const std::uint8_t* p = data.data();
  ClassPortInfo m;
  m.base_version = p[0];
  m.class_version = p[1];
  m.capability_mask = be::load16(p + 2);
  m.capability_mask2 = be::load32(p + 4) >> 5;
  m.resp_time_value = bits(p[7], 0, 5);
  m.redirect_gid = load_gid(p + 8);
  m.redirect_tc = p[24];
  m.redirect_sl = bits(p[25], 4, 4);
  m.redirect_flow_label = be::load24(p + 25) & 0xFFFFF;
  m.redirect_lid = be::load16(p + 28);
  m.redirect_pkey = be::load16(p + 30);
  m.resv32 = p[32];
  m.redirect_qp = be::load24(p + 33);
  m.redirect_qkey = be::load32(p + 36);
  m.trap_gid = load_gid(p + 40);
  m.trap_tc = p[56];
  m.trap_sl = bits(p[57], 4, 4);
  m.trap_flow_label = be::load24(p + 57) & 0xFFFFF;
  m.trap_lid = be::load16(p + 60);
  m.trap_pkey = be::load16(p + 62);
  m.trap_hop_limit = p[64];
  m.trap_qp = be::load24(p + 65);
  m.trap_qkey = be::load32(p + 68);
  m.reserved = view(data, kClassPortInfoSize, kCmDataSize - kClassPortInfoSize);
  return m;
}

std::optional<CmMessage> decode_cm(std::uint16_t attr_id, CmData data) {
  switch (attr_id) {
    case cm_attr::kClassPortInfo:
      return decode_class_port_info(data);
    case cm_attr::kReq:
      return decode_cm_req(data);
    case cm_attr::kMra:
      return decode_cm_mra(data);
    case cm_attr::kRej:
      return decode_cm_rej(data);
    case cm_attr::kRep:
      return decode_cm_rep(data);
    case cm_attr::kRtu:
      return decode_cm_rtu(data);
    case cm_attr::kDreq:
      return decode_cm_dreq(data);
    case cm_attr::kDrep:
      return decode_cm_drep(data);
    case cm_attr::kSidrReq:
      return decode_cm_sidr_req(data);
    case cm_attr::kSidrRep:
      return decode_cm_sidr_rep(data);
    case cm_attr::kLap:
      return decode_cm_lap(data);
    case cm_attr::kApr:
      return decode_cm_apr(data);
    default:
      return std::nullopt;
  }
}

// --- encoders -------------------------------------------------------------------------------

void encode_cm(const CmReq& m, CmDataOut out) {
  Writer w(out);
  w.u32(0, m.local_comm_id);
  w.u8(4, m.resv4);
  w.u24(5, m.vendor_id);
  w.u64(8, m.service_id);
  w.u64(16, m.local_ca_guid);
  w.u32(24, m.resv24);
  w.u32(28, m.local_qkey);
  w.u24(32, m.local_qpn);
  w.u8(35, m.responder_resources);
  w.u24(36, m.local_eecn);
  w.u8(39, m.initiator_depth);
  w.u24(40, m.remote_eecn);
  w.bits(43, 3, 5, m.remote_cm_response_timeout);
  w.bits(43, 1, 2, m.transport_type);
  w.bits(43, 0, 1, m.end_to_end_flow_control);
  w.u24(44, m.starting_psn);
  w.bits(47, 3, 5, m.local_cm_response_timeout);
  w.bits(47, 0, 3, m.retry_count);
  w.u16(48, m.pkey);
  w.bits(50, 4, 4, m.path_mtu);
  w.bits(50, 3, 1, m.rdc_exists);
  w.bits(50, 0, 3, m.rnr_retry_count);
  w.bits(51, 4, 4, m.max_cm_retries);
  w.bits(51, 3, 1, m.srq);
  w.bits(51, 0, 3, m.extended_transport_type);
  encode_path(w, 52, m.primary, PathLayout::kReq);
  CmPath alternate = m.alternate;
  alternate.resv_ack &= 0x03;  // the third bit is SAP Supported
  encode_path(w, 96, alternate, PathLayout::kReq);
  w.bits(139, 2, 1, m.sap_supported);
  w.bytes(kReqPrivateDataOffset, kReqPrivateDataSize, m.private_data);
}

void encode_cm(const CmMra& m, CmDataOut out) {
  Writer w(out);
  w.u32(0, m.local_comm_id);
  w.u32(4, m.remote_comm_id);
  w.bits(8, 6, 2, m.message_mraed);
  w.bits(8, 0, 6, m.resv8);
  w.bits(9, 3, 5, m.service_timeout);
  w.bits(9, 0, 3, m.resv9);
  w.bytes(kMraPrivateDataOffset, kMraPrivateDataSize, m.private_data);
}

void encode_cm(const CmRej& m, CmDataOut out) {
  Writer w(out);
  w.u32(0, m.local_comm_id);
  w.u32(4, m.remote_comm_id);
  w.bits(8, 6, 2, m.message_rejected);
  w.bits(8, 0, 6, m.resv8);
  w.bits(9, 1, 7, m.reject_info_length);
  w.bits(9, 0, 1, m.resv9);
  w.u16(10, m.reason);
  w.bytes(kRejAriOffset, kRejAriSize, m.ari);
  w.bytes(kRejPrivateDataOffset, kRejPrivateDataSize, m.private_data);
}

void encode_cm(const CmRep& m, CmDataOut out) {
  Writer w(out);
  w.u32(0, m.local_comm_id);
  w.u32(4, m.remote_comm_id);
  w.u32(8, m.local_qkey);
  w.u24(12, m.local_qpn);
  w.u8(15, static_cast<std::uint8_t>(m.vendor_id >> 16));
  w.u24(16, m.local_eecn);
  w.u8(19, static_cast<std::uint8_t>(m.vendor_id >> 8));
  w.u24(20, m.starting_psn);
  w.u8(23, static_cast<std::uint8_t>(m.vendor_id));
  w.u8(24, m.responder_resources);
  w.u8(25, m.initiator_depth);
  w.bits(26, 3, 5, m.target_ack_delay);
  w.bits(26, 1, 2, m.failover_accepted);
  w.bits(26, 0, 1, m.end_to_end_flow_control);
  w.bits(27, 5, 3, m.rnr_retry_count);
  w.bits(27, 4, 1, m.srq);
  w.bits(27, 0, 4, m.resv27);
  w.u64(28, m.local_ca_guid);
  w.bytes(kRepPrivateDataOffset, kRepPrivateDataSize, m.private_data);
}

void encode_cm(const CmRtu& m, CmDataOut out) {
  Writer w(out);
  w.u32(0, m.local_comm_id);
  w.u32(4, m.remote_comm_id);
  w.bytes(kRtuPrivateDataOffset, kRtuPrivateDataSize, m.private_data);
}

void encode_cm(const CmDreq& m, CmDataOut out) {
  Writer w(out);
  w.u32(0, m.local_comm_id);
  w.u32(4, m.remote_comm_id);
  w.u24(8, m.remote_qpn);
  w.u8(11, m.resv11);
  w.bytes(kDreqPrivateDataOffset, kDreqPrivateDataSize, m.private_data);
}

void encode_cm(const CmDrep& m, CmDataOut out) {
  Writer w(out);
  w.u32(0, m.local_comm_id);
  w.u32(4, m.remote_comm_id);
  w.bytes(kDrepPrivateDataOffset, kDrepPrivateDataSize, m.private_data);
}

void encode_cm(const CmSidrReq& m, CmDataOut out) {
  Writer w(out);
  w.u32(0, m.request_id);
  w.u16(4, m.pkey);
  w.u16(6, m.resv6);
  w.u64(8, m.service_id);
  w.bytes(kSidrReqPrivateDataOffset, kSidrReqPrivateDataSize, m.private_data);
}

void encode_cm(const CmSidrRep& m, CmDataOut out) {
  Writer w(out);
  w.u32(0, m.request_id);
  w.u8(4, m.sidr_status);
  w.u8(5, m.additional_info_length);
  w.u16(6, static_cast<std::uint16_t>(m.vendor_id >> 8));
  w.u24(8, m.qpn);
  w.u8(11, static_cast<std::uint8_t>(m.vendor_id));
  w.u64(12, m.service_id);
  w.u32(20, m.qkey);
  w.bytes(kSidrRepInfoOffset, kSidrRepInfoSize, m.additional_info);
  w.bytes(kSidrRepPrivateDataOffset, kSidrRepPrivateDataSize, m.private_data);
}

void encode_cm(const CmLap& m, CmDataOut out) {
  Writer w(out);
  w.u32(0, m.local_comm_id);
  w.u32(4, m.remote_comm_id);
  w.u32(8, m.resv8);
  w.u24(12, m.remote_qpn);
  w.bits(15, 3, 5, m.remote_cm_response_timeout);
  w.bits(15, 0, 3, m.resv15);
  w.u32(16, m.resv16);
  encode_path(w, 20, m.alternate, PathLayout::kLap);
  w.bytes(kLapPrivateDataOffset, kLapPrivateDataSize, m.private_data);
}

void encode_cm(const CmApr& m, CmDataOut out) {
  Writer w(out);
  w.u32(0, m.local_comm_id);
  w.u32(4, m.remote_comm_id);
  w.u8(8, m.additional_info_length);
  w.u8(9, m.ap_status);
  w.u16(10, m.resv10);
  w.bytes(kAprInfoOffset, kAprInfoSize, m.additional_info);
  w.bytes(kAprPrivateDataOffset, kAprPrivateDataSize, m.private_data);
}

void encode_cm(const ClassPortInfo& m, CmDataOut out) {
  Writer w(out);
  w.u8(0, m.base_version);
  w.u8(1, m.class_version);
  w.u16(2, m.capability_mask);
  w.u32(4, static_cast<std::uint32_t>(m.capability_mask2 << 5) | (m.resp_time_value & 0x1Fu));
  w.gid(8, m.redirect_gid);
  w.u8(24, m.redirect_tc);
  w.u24(25, m.redirect_flow_label & 0xFFFFF);
  w.bits(25, 4, 4, m.redirect_sl);
  w.u16(28, m.redirect_lid);
  w.u16(30, m.redirect_pkey);
  w.u8(32, m.resv32);
  w.u24(33, m.redirect_qp);
  w.u32(36, m.redirect_qkey);
  w.gid(40, m.trap_gid);
  w.u8(56, m.trap_tc);
  w.u24(57, m.trap_flow_label & 0xFFFFF);
  w.bits(57, 4, 4, m.trap_sl);
  w.u16(60, m.trap_lid);
  w.u16(62, m.trap_pkey);
  w.u8(64, m.trap_hop_limit);
  w.u24(65, m.trap_qp);
  w.u32(68, m.trap_qkey);
  w.bytes(kClassPortInfoSize, kCmDataSize - kClassPortInfoSize, m.reserved);
}

void encode_cm(const CmMessage& msg, CmDataOut out) {
  std::visit([out](const auto& m) { encode_cm(m, out); }, msg);
}

// --- checks and names ------------------------------------------------------------------

void check_cm(const CmMessage& msg, std::uint32_t data_base, Findings& findings) {
  std::visit(Checker(data_base, findings), msg);
}

std::uint16_t cm_attr_id(const CmMessage& msg) {
  static constexpr std::array<std::uint16_t, std::variant_size_v<CmMessage>> kIds = {
      cm_attr::kReq,     cm_attr::kMra,  cm_attr::kRej,  cm_attr::kRep,
      cm_attr::kRtu,     cm_attr::kDreq, cm_attr::kDrep, cm_attr::kSidrReq,
      cm_attr::kSidrRep, cm_attr::kLap,  cm_attr::kApr,  cm_attr::kClassPortInfo};
  return kIds[msg.index()];
}

std::string_view cm_attr_name(std::uint16_t attr_id) {
  static constexpr std::array<std::string_view, 11> kNames = {
      "REQ", "MRA", "REJ", "REP", "RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP", "LAP", "APR"};
  if (attr_id == cm_attr::kClassPortInfo) return "ClassPortInfo";
  if (attr_id >= cm_attr::kReq && attr_id <= cm_attr::kApr) return kNames[attr_id - cm_attr::kReq];
  return "";
}

std::string_view cm_message_name(const CmMessage& msg) {
  return cm_attr_name(cm_attr_id(msg));
}

std::string_view rej_reason_name(std::uint16_t reason) {
  return name_of_value(kRejReasonNames, reason);
}
std::string_view apr_status_name(std::uint8_t status) {
  return name_of_value(kAprStatusNames, status);
}
std::string_view sidr_status_name(std::uint8_t status) {
  return name_of_value(kSidrStatusNames, status);
}
std::string_view mra_message_name(std::uint8_t message) {
  return name_of_value(kCmMessageKindNames, message);
}

std::string_view transport_type_name(std::uint8_t transport_type,
                                     std::uint8_t extended_transport_type) {
  if (transport_type == cm_transport::kExtended)
    return name_of_value(kExtendedTransportTypeNames, extended_transport_type);
  return name_of_value(kTransportTypeNames, transport_type);
}

}  // namespace roceconf
