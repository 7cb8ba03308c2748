// Over 600 lines: one declaration per CM field (about 110) and the field list of each message.
// The CM field table. A field is declared by a lens, CM(member.path), that reads the member of
// whichever message type has it: local_qpn is REQ's and REP's without naming either. Each
// message's emission order (wire order, as the decoder has always emitted it) is a list of
// these fields; one table order cannot serve all messages (REQ puts vendor_id before
// local_qkey, REP after).
#include "dissector/mad/cm_fields.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <type_traits>
#include <utility>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dissector/mad/cm_names.h"
#include "dissector/mad/rdma_cm.h"
#include "dissector/packet.h"

namespace roceconf {

namespace {

using MsgGet = std::optional<FieldValue> (*)(const CmMessage&);
using MsgSet = bool (*)(CmMessage&, std::uint64_t);
using MsgSetBytes = bool (*)(CmMessage&, Bytes);

// A field's table entry and its accessors on a bare message (the table's own get/set take a
// Packet and forward to these).
struct CmField {
  FieldDef def;
  MsgGet get = nullptr;
  MsgSet set = nullptr;
  MsgSetBytes set_bytes = nullptr;
};

// The member `path` of a message, for the message types that have it (SFINAE on the return).
#define CM(path) [](auto& m) -> decltype((m.path)) { return m.path; }

template <class Lens, class M>
constexpr bool kHas = std::is_invocable_v<Lens, M&>;

template <class M>
constexpr std::size_t private_data_size() {
  if constexpr (std::is_same_v<M, CmReq>) return kReqPrivateDataSize;
  if constexpr (std::is_same_v<M, CmMra>) return kMraPrivateDataSize;
  if constexpr (std::is_same_v<M, CmRej>) return kRejPrivateDataSize;
  if constexpr (std::is_same_v<M, CmRep>) return kRepPrivateDataSize;
  if constexpr (std::is_same_v<M, CmRtu>) return kRtuPrivateDataSize;
  if constexpr (std::is_same_v<M, CmDreq>) return kDreqPrivateDataSize;
  if constexpr (std::is_same_v<M, CmDrep>) return kDrepPrivateDataSize;
  if constexpr (std::is_same_v<M, CmSidrReq>) return kSidrReqPrivateDataSize;
  if constexpr (std::is_same_v<M, CmSidrRep>) return kSidrRepPrivateDataSize;
  if constexpr (std::is_same_v<M, CmLap>) return kLapPrivateDataSize;
  if constexpr (std::is_same_v<M, CmApr>) return kAprPrivateDataSize;
  return 0;
}

template <class T>
FieldValue value_of(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return FieldValue{v};
  } else if constexpr (std::is_integral_v<T>) {
    return FieldValue{static_cast<std::uint64_t>(v)};
  } else if constexpr (std::is_same_v<T, Bytes>) {
    return FieldValue{v};
  } else {
    static_assert(std::is_same_v<T, CmGid>);
    return FieldValue{Address{Bytes(v)}};  // a view into the message
  }
}

template <class Lens>
std::optional<FieldValue> lens_get(const CmMessage& msg) {
  return std::visit(
      [](const auto& m) -> std::optional<FieldValue> {
        if constexpr (kHas<Lens, decltype(m)>) {
          return value_of(Lens{}(m));
        } else {
          return std::nullopt;
        }
      },
      msg);
}

template <class Lens>
bool lens_set(CmMessage& msg, std::uint64_t v) {
  return std::visit(
      [v](auto& m) {
        if constexpr (kHas<Lens, decltype(m)>) {
          auto& ref = Lens{}(m);
          using T = std::remove_cvref_t<decltype(ref)>;
          if constexpr (std::is_same_v<T, bool>)
            ref = v != 0;
          else
            ref = static_cast<T>(v);
          return true;
        } else {
          return false;
        }
      },
      msg);
}

// Byte strings keep a view and may be shorter than on the wire (`size`, 0 for the message's
// private-data size); GIDs are copied whole.
template <class Lens, std::size_t Size>
bool lens_set_bytes(CmMessage& msg, Bytes b) {
  return std::visit(
      [b](auto& m) {
        using M = std::remove_cvref_t<decltype(m)>;
        if constexpr (kHas<Lens, M>) {
          auto& ref = Lens{}(m);
          using T = std::remove_cvref_t<decltype(ref)>;
          if constexpr (std::is_same_v<T, CmGid>) {
            if (b.size() != ref.size()) return false;
            std::copy(b.begin(), b.end(), ref.begin());
          } else {
            if (b.size() > (Size != 0 ? Size : private_data_size<M>())) return false;
            ref = b;
          }
          return true;
        } else {
          return false;
        }
      },
      msg);
}

// --- the table's Packet-level accessors ---------------------------------------------------

template <MsgGet G>
std::optional<FieldValue> packet_get(const Packet& p, std::size_t) {
  if (!p.mad || !p.mad->cm) return std::nullopt;
  return G(*p.mad->cm);
}
template <MsgSet S>
bool packet_set(Packet& p, std::uint64_t v) {
  return p.mad && p.mad->cm && S(*p.mad->cm, v);
}
template <MsgSetBytes S>
bool packet_set_bytes(Packet& p, Bytes b) {
  return p.mad && p.mad->cm && S(*p.mad->cm, b);
}

// --- declaring fields ----------------------------------------------------------------------

constexpr bool kHex = true;
constexpr std::span<const ValueName> kNoNames{};

constexpr FieldDef def(std::string_view name, std::string_view label, FieldType type,
                       std::uint8_t bits, bool hex, std::span<const ValueName> values = {},
                       std::string_view aliases = {}) {
  FieldDef f;
  f.layer = "cm";
  f.name = name;
  f.label = label;
  f.type = type;
  f.bits = bits;
  f.hex = hex;
  f.aliases = aliases;
  f.values = values;
  return f;
}

template <class Lens>
constexpr CmField settable(FieldDef d) {
  d.get = &packet_get<&lens_get<Lens>>;
  d.set = &packet_set<&lens_set<Lens>>;
  return CmField{d, &lens_get<Lens>, &lens_set<Lens>, nullptr};
}

template <class Lens>
constexpr CmField num(Lens, std::string_view name, std::string_view label, std::uint8_t bits,
                      bool hex = false, std::span<const ValueName> values = {},
                      std::string_view aliases = {}) {
  return settable<Lens>(def(name, label, FieldType::kUnsigned, bits, hex, values, aliases));
}

template <class Lens>
constexpr CmField flag(Lens, std::string_view name, std::string_view label) {
  return settable<Lens>(def(name, label, FieldType::kBool, 1, false));
}

template <std::size_t Size = 0, class Lens>
constexpr CmField bytes_field(Lens, std::string_view name, std::string_view label,
                              FieldType type = FieldType::kBytes) {
  FieldDef d = def(name, label, type, 0, type != FieldType::kBytes);
  d.get = &packet_get<&lens_get<Lens>>;
  d.set_bytes = &packet_set_bytes<&lens_set_bytes<Lens, Size>>;
  return CmField{d, &lens_get<Lens>, nullptr, &lens_set_bytes<Lens, Size>};
}

template <class Lens>
constexpr CmField gid(Lens lens, std::string_view name, std::string_view label) {
  return bytes_field(lens, name, label, FieldType::kIpv6);
}

// Read-only: names derived from a code, and the rdma_cm header inside REQ private data.
template <MsgGet G>
constexpr CmField derived(std::string_view name, std::string_view label, FieldType type,
                          std::uint8_t bits = 0, bool hex = false,
                          std::span<const ValueName> values = {}) {
  FieldDef d = def(name, label, type, bits, hex, values);
  d.get = &packet_get<G>;
  return CmField{d, G, nullptr, nullptr};
}

// --- derived values ------------------------------------------------------------------------

std::optional<FieldValue> message_name(const CmMessage& msg) {
  return FieldValue{cm_message_name(msg)};
}

template <class M, auto Member, auto Name>
std::optional<FieldValue> name_of(const CmMessage& msg) {
  const M* m = std::get_if<M>(&msg);
  if (m == nullptr) return std::nullopt;
  return FieldValue{Name(m->*Member)};
}

std::optional<FieldValue> transport_name(const CmMessage& msg) {
  const auto* m = std::get_if<CmReq>(&msg);
  if (m == nullptr) return std::nullopt;
  return FieldValue{transport_type_name(m->transport_type, m->extended_transport_type)};
}

const CmReq* rdma_cm_req(const CmMessage& msg) {
  const auto* m = std::get_if<CmReq>(&msg);
  return m != nullptr && is_rdma_cm_service_id(m->service_id) ? m : nullptr;
}
std::optional<FieldValue> rdma_port_space(const CmMessage& msg) {
  const CmReq* m = rdma_cm_req(msg);
  if (m == nullptr) return std::nullopt;
  return FieldValue{std::uint64_t{rdma_cm_port_space(m->service_id)}};
}
std::optional<FieldValue> rdma_port_space_name(const CmMessage& msg) {
  const CmReq* m = rdma_cm_req(msg);
  if (m == nullptr) return std::nullopt;
  return FieldValue{rdma_cm_port_space_name(rdma_cm_port_space(m->service_id))};
}
std::optional<FieldValue> rdma_port(const CmMessage& msg) {
  const CmReq* m = rdma_cm_req(msg);
  if (m == nullptr) return std::nullopt;
  return FieldValue{std::uint64_t{rdma_cm_port(m->service_id)}};
}

// The header fields need the header to fit; addresses are views into the private data (not
// into a decoded copy) so they outlive the call.
template <class F>
std::optional<FieldValue> with_header(const CmMessage& msg, F f) {
  const CmReq* m = rdma_cm_req(msg);
  if (m == nullptr) return std::nullopt;
  const auto header = decode_rdma_cm_header(m->private_data);
  if (!header) return std::nullopt;
  return f(*m, *header);
}
std::optional<FieldValue> rdma_ip_version(const CmMessage& msg) {
  return with_header(msg, [](const CmReq&, const RdmaCmHeader& h) {
    return FieldValue{std::uint64_t{h.ip_version}};
  });
}
std::optional<FieldValue> rdma_src_port(const CmMessage& msg) {
  return with_header(msg, [](const CmReq&, const RdmaCmHeader& h) {
    return FieldValue{std::uint64_t{h.src_port}};
  });
}
template <std::size_t Offset>
std::optional<FieldValue> rdma_ip(const CmMessage& msg) {
  return with_header(msg, [](const CmReq& m, const RdmaCmHeader& h) {
    const std::size_t skip = h.ip_version == 4 ? 12 : 0;
    return FieldValue{Address{m.private_data.subspan(Offset + skip, 16 - skip)}};
  });
}

constexpr std::array<ValueName, 4> kPortSpaceNames = {{
    {rdma_cm_ps::kIpoib, "IPoIB"},
    {rdma_cm_ps::kTcp, "TCP"},
    {rdma_cm_ps::kUdp, "UDP"},
    {rdma_cm_ps::kIb, "IB"},
}};

// --- the table -----------------------------------------------------------------------------

// The 11 fields of a REQ or LAP path (`path` is `primary` or `alternate`).
#define CM_PATH_FIELDS(path, Title, ack_aliases)                                                 \
  num(CM(path.local_lid), #path "_local_lid", Title " Local Port LID", 16, kHex),                \
      num(CM(path.remote_lid), #path "_remote_lid", Title " Remote Port LID", 16, kHex),         \
      gid(CM(path.local_gid), #path "_local_gid", Title " Local Port GID"),                      \
      gid(CM(path.remote_gid), #path "_remote_gid", Title " Remote Port GID"),                   \
      num(CM(path.flow_label), #path "_flow_label", Title " Flow Label", 20, kHex),              \
      num(CM(path.traffic_class), #path "_traffic_class", Title " Traffic Class", 8, kHex),      \
      num(CM(path.hop_limit), #path "_hop_limit", Title " Hop Limit", 8),                        \
      num(CM(path.packet_rate), #path "_packet_rate", Title " Packet Rate", 6),                  \
      num(CM(path.sl), #path "_sl", Title " SL", 4),                                             \
      flag(CM(path.subnet_local), #path "_subnet_local", Title " Subnet Local"),                 \
      num(CM(path.local_ack_timeout), #path "_local_ack_timeout", Title " Local ACK Timeout", 5, \
          false, kNoNames, ack_aliases)

constexpr auto kFields = std::to_array<CmField>({
    derived<&message_name>("msg", "Message", FieldType::kName),
    num(CM(local_comm_id), "local_comm_id", "Local Communication ID", 32, kHex),
    num(CM(remote_comm_id), "remote_comm_id", "Remote Communication ID", 32, kHex),
    // REQ (IBA Table 106); REP and LAP share many of these.
    num(CM(vendor_id), "vendor_id", "Vendor ID", 24, kHex),
    num(CM(service_id), "service_id", "Service ID", 64, kHex),
    num(CM(local_ca_guid), "local_ca_guid", "Local CA GUID", 64, kHex),
    num(CM(local_qkey), "local_qkey", "Local Q_Key", 32, kHex),
    num(CM(local_qpn), "local_qpn", "Local QPN", 24, kHex),
    num(CM(responder_resources), "responder_resources", "Responder Resources", 8),
    num(CM(local_eecn), "local_eecn", "Local EECN", 24, kHex),
    num(CM(initiator_depth), "initiator_depth", "Initiator Depth", 8),
    num(CM(remote_eecn), "remote_eecn", "Remote EECN", 24, kHex),
    num(CM(remote_cm_response_timeout), "remote_cm_response_timeout", "Remote CM Response Timeout",
        5),
    num(CM(transport_type), "transport_type", "Transport Service Type", 2, false,
        kTransportTypeNames, "transport"),
    derived<&transport_name>("transport_name", "Transport Service Type Name", FieldType::kName),
    flag(CM(end_to_end_flow_control), "end_to_end_flow_control", "End-to-End Flow Control"),
    num(CM(starting_psn), "starting_psn", "Starting PSN", 24, kHex),
    num(CM(local_cm_response_timeout), "local_cm_response_timeout", "Local CM Response Timeout", 5),
    num(CM(retry_count), "retry_count", "Retry Count", 3),
    num(CM(pkey), "pkey", "Partition Key", 16, kHex, kNoNames, "partition_key"),
    num(CM(path_mtu), "path_mtu", "Path Packet Payload MTU", 4),
    flag(CM(rdc_exists), "rdc_exists", "RDC Exists"),
    num(CM(rnr_retry_count), "rnr_retry_count", "RNR Retry Count", 3),
    num(CM(max_cm_retries), "max_cm_retries", "Max CM Retries", 4),
    flag(CM(srq), "srq", "SRQ"),
    num(CM(extended_transport_type), "extended_transport_type", "Extended Transport Type", 3, false,
        kExtendedTransportTypeNames),
    CM_PATH_FIELDS(primary, "Primary", "local_ack_timeout"),
    CM_PATH_FIELDS(alternate, "Alternate", ""),
    flag(CM(sap_supported), "sap_supported", "SAP Supported"),
    bytes_field(CM(private_data), "private_data", "Private Data"),
    // The rdma_cm service ID and private-data header of a REQ (IBA Annex A11).
    derived<&rdma_port_space>("rdma_cm.port_space", "RDMA CM Port Space", FieldType::kUnsigned, 16,
                              kHex, kPortSpaceNames),
    derived<&rdma_port_space_name>("rdma_cm.port_space_name", "RDMA CM Port Space Name",
                                   FieldType::kName),
    derived<&rdma_port>("rdma_cm.port", "RDMA CM Port", FieldType::kUnsigned, 16),
    derived<&rdma_ip_version>("rdma_cm.ip_version", "RDMA CM IP Version", FieldType::kUnsigned, 4),
    derived<&rdma_src_port>("rdma_cm.src_port", "RDMA CM Source Port", FieldType::kUnsigned, 16),
    // 4 bytes when ip_version is 4.
    derived<&rdma_ip<4>>("rdma_cm.src_ip", "RDMA CM Source IP", FieldType::kIpv6, 0, kHex),
    derived<&rdma_ip<20>>("rdma_cm.dst_ip", "RDMA CM Destination IP", FieldType::kIpv6, 0, kHex),
    // MRA, REJ, REP, DREQ/LAP.
    num(CM(message_mraed), "message_mraed", "Message MRAed", 2, false, kCmMessageKindNames),
    derived<&name_of<CmMra, &CmMra::message_mraed, &mra_message_name>>(
        "message_mraed_name", "Message MRAed Name", FieldType::kName),
    num(CM(service_timeout), "service_timeout", "Service Timeout", 5),
    num(CM(message_rejected), "message_rejected", "Message Rejected", 2, false,
        kCmMessageKindNames),
    derived<&name_of<CmRej, &CmRej::message_rejected, &mra_message_name>>(
        "message_rejected_name", "Message Rejected Name", FieldType::kName),
    num(CM(reject_info_length), "reject_info_length", "Reject Info Length", 7),
    num(CM(reason), "reason", "Reason", 16, false, kRejReasonNames, "reason"),
    derived<&name_of<CmRej, &CmRej::reason, &rej_reason_name>>("reason_name", "Reason Name",
                                                               FieldType::kName),
    bytes_field<kRejAriSize>(CM(ari), "ari", "Additional Rejection Information"),
    num(CM(target_ack_delay), "target_ack_delay", "Target ACK Delay", 5),
    num(CM(failover_accepted), "failover_accepted", "Failover Accepted", 2),
    num(CM(remote_qpn), "remote_qpn", "Remote QPN/EECN", 24, kHex),
    // SIDR_REQ, SIDR_REP, APR.
    num(CM(request_id), "request_id", "Request ID", 32, kHex),
    num(CM(sidr_status), "sidr_status", "Status", 8, false, kSidrStatusNames),
    derived<&name_of<CmSidrRep, &CmSidrRep::sidr_status, &sidr_status_name>>(
        "sidr_status_name", "Status Name", FieldType::kName),
    num(CM(additional_info_length), "additional_info_length", "Additional Info Length", 8),
    num(CM(qpn), "qpn", "QPN", 24, kHex),
    num(CM(qkey), "qkey", "Q_Key", 32, kHex),
    bytes_field<kAprInfoSize>(CM(additional_info), "additional_info", "Additional Information"),
    num(CM(ap_status), "ap_status", "AP Status", 8, false, kAprStatusNames),
    derived<&name_of<CmApr, &CmApr::ap_status, &apr_status_name>>(
        "ap_status_name", "AP Status Name", FieldType::kName),
    // ClassPortInfo (IBA 13.4.8.1).
    num(CM(base_version), "base_version", "Base Version", 8),
    num(CM(class_version), "class_version", "Class Version", 8),
    num(CM(capability_mask), "capability_mask", "Capability Mask", 16, kHex),
    num(CM(capability_mask2), "capability_mask2", "Capability Mask 2", 27, kHex),
    num(CM(resp_time_value), "resp_time_value", "Response Time Value", 5),
    gid(CM(redirect_gid), "redirect_gid", "Redirect GID"),
    num(CM(redirect_tc), "redirect_tc", "Redirect Traffic Class", 8, kHex),
    num(CM(redirect_sl), "redirect_sl", "Redirect SL", 4),
    num(CM(redirect_flow_label), "redirect_flow_label", "Redirect Flow Label", 20, kHex),
    num(CM(redirect_lid), "redirect_lid", "Redirect LID", 16, kHex),
    num(CM(redirect_pkey), "redirect_pkey", "Redirect P_Key", 16, kHex),
    num(CM(redirect_qp), "redirect_qp", "Redirect QP", 24, kHex),
    num(CM(redirect_qkey), "redirect_qkey", "Redirect Q_Key", 32, kHex),
    gid(CM(trap_gid), "trap_gid", "Trap GID"),
    num(CM(trap_tc), "trap_tc", "Trap Traffic Class", 8, kHex),
    num(CM(trap_sl), "trap_sl", "Trap SL", 4),
    num(CM(trap_flow_label), "trap_flow_label", "Trap Flow Label", 20, kHex),
    num(CM(trap_lid), "trap_lid", "Trap LID", 16, kHex),
    num(CM(trap_pkey), "trap_pkey", "Trap P_Key", 16, kHex),
    num(CM(trap_hop_limit), "trap_hop_limit", "Trap Hop Limit", 8),
    num(CM(trap_qp), "trap_qp", "Trap QP", 24, kHex),
    num(CM(trap_qkey), "trap_qkey", "Trap Q_Key", 32, kHex),
});

#undef CM_PATH_FIELDS
#undef CM

constexpr auto kDefs = [] {
  std::array<FieldDef, kFields.size()> out{};
  for (std::size_t i = 0; i < kFields.size(); ++i) out[i] = kFields[i].def;
  return out;
}();

const CmField& access(const FieldDef& f) {
  return kFields[static_cast<std::size_t>(&f - kDefs.data())];
}

// --- per-message order -----------------------------------------------------------------------

template <std::size_t N>
consteval std::array<const FieldDef*, N + 1> fields(const std::array<std::string_view, N>& names) {
  std::array<const FieldDef*, N + 1> out{};
  out[0] = &kDefs[0];  // msg
  for (std::size_t i = 0; i < N; ++i) {
    for (const FieldDef& f : kDefs)
      if (f.name == names[i]) out[i + 1] = &f;
    if (out[i + 1] == nullptr) throw "a message lists a field the CM table lacks";
  }
  return out;
}

#define CM_PATH_NAMES(path)                                                                  \
#path "_local_lid", #path "_remote_lid", #path "_local_gid", #path "_remote_gid",          \
      #path "_flow_label", #path "_traffic_class", #path "_hop_limit", #path "_packet_rate", \
      #path "_sl", #path "_subnet_local", #path "_local_ack_timeout"

constexpr auto kReq = fields(std::to_array<std::string_view>({
    "local_comm_id",
    "vendor_id",
    "service_id",
    "local_ca_guid",
    "local_qkey",
    "local_qpn",
    "responder_resources",
    "local_eecn",
    "initiator_depth",
    "remote_eecn",
    "remote_cm_response_timeout",
    "transport_type",
    "transport_name",
    "end_to_end_flow_control",
    "starting_psn",
    "local_cm_response_timeout",
    "retry_count",
    "pkey",
    "path_mtu",
    "rdc_exists",
    "rnr_retry_count",
    "max_cm_retries",
    "srq",
    "extended_transport_type",
    CM_PATH_NAMES(primary),
    CM_PATH_NAMES(alternate),
    "sap_supported",
    "private_data",
    "rdma_cm.port_space",
    "rdma_cm.port_space_name",
    "rdma_cm.port",
    "rdma_cm.ip_version",
    "rdma_cm.src_port",
    "rdma_cm.src_ip",
    "rdma_cm.dst_ip",
}));
constexpr auto kMra = fields(std::to_array<std::string_view>({
    "local_comm_id",
    "remote_comm_id",
    "message_mraed",
    "message_mraed_name",
    "service_timeout",
    "private_data",
}));
constexpr auto kRej = fields(std::to_array<std::string_view>({
    "local_comm_id",
    "remote_comm_id",
    "message_rejected",
    "message_rejected_name",
    "reject_info_length",
    "reason",
    "reason_name",
    "ari",
    "private_data",
}));
constexpr auto kRep = fields(std::to_array<std::string_view>({
    "local_comm_id",
    "remote_comm_id",
    "local_qkey",
    "local_qpn",
    "vendor_id",
    "local_eecn",
    "starting_psn",
    "responder_resources",
    "initiator_depth",
    "target_ack_delay",
    "failover_accepted",
    "end_to_end_flow_control",
    "rnr_retry_count",
    "srq",
    "local_ca_guid",
    "private_data",
}));
constexpr auto kRtu = fields(std::to_array<std::string_view>({
    "local_comm_id",
    "remote_comm_id",
    "private_data",
}));
constexpr auto kDreq = fields(std::to_array<std::string_view>({
    "local_comm_id",
    "remote_comm_id",
    "remote_qpn",
    "private_data",
}));
constexpr auto kDrep = kRtu;
constexpr auto kSidrReq = fields(std::to_array<std::string_view>({
    "request_id",
    "pkey",
    "service_id",
    "private_data",
}));
constexpr auto kSidrRep = fields(std::to_array<std::string_view>({
    "request_id",
    "sidr_status",
    "sidr_status_name",
    "additional_info_length",
    "vendor_id",
    "qpn",
    "service_id",
    "qkey",
    "additional_info",
    "private_data",
}));
constexpr auto kLap = fields(std::to_array<std::string_view>({
    "local_comm_id",
    "remote_comm_id",
    "remote_qpn",
    "remote_cm_response_timeout",
    CM_PATH_NAMES(alternate),
    "private_data",
}));
constexpr auto kApr = fields(std::to_array<std::string_view>({
    "local_comm_id",
    "remote_comm_id",
    "additional_info_length",
    "ap_status",
    "ap_status_name",
    "additional_info",
    "private_data",
}));
constexpr auto kClassPortInfo = fields(std::to_array<std::string_view>({
    "base_version",     "class_version",   "capability_mask",
    "capability_mask2", "resp_time_value", "redirect_gid",
    "redirect_tc",      "redirect_sl",     "redirect_flow_label",
    "redirect_lid",     "redirect_pkey",   "redirect_qp",
    "redirect_qkey",    "trap_gid",        "trap_tc",
    "trap_sl",          "trap_flow_label", "trap_lid",
    "trap_pkey",        "trap_hop_limit",  "trap_qp",
    "trap_qkey",
}));

#undef CM_PATH_NAMES

// Indexed like CmMessage's alternatives.
constexpr std::array<std::span<const FieldDef* const>, std::variant_size_v<CmMessage>>
    kMessageFields = {kReq,  kMra,     kRej,     kRep, kRtu, kDreq,
                      kDrep, kSidrReq, kSidrRep, kLap, kApr, kClassPortInfo};

bool has_alias(const FieldDef& f, std::string_view key) {
  std::string_view rest = f.aliases;
  while (!rest.empty()) {
    const std::size_t space = rest.find(' ');
    if (rest.substr(0, space) == key) return true;
    rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
  }
  return false;
}

template <std::size_t... I>
std::array<CmMessage, sizeof...(I)> one_of_each(std::index_sequence<I...>) {
  return {CmMessage{std::in_place_index<I>}...};
}

// "REQ has", "REQ and LAP have": for an error about a message that lacks the field.
std::string holders(const FieldDef& f) {
  std::vector<std::string_view> names;
  for (const CmMessage& m : one_of_each(std::make_index_sequence<std::variant_size_v<CmMessage>>{}))
    if (std::ranges::find(kMessageFields[m.index()], &f) != kMessageFields[m.index()].end())
      names.push_back(cm_message_name(m));
  if (names.empty()) return "no message has";
  if (names.size() == 1) return fmt::format("{} has", names[0]);
  return fmt::format("{} and {} have", fmt::join(names.begin(), names.end() - 1, ", "),
                     names.back());
}

// The field a setter may write, or why not.
const CmField* writable(const CmMessage& msg, std::string_view key, std::string& why) {
  const FieldDef* f = find_cm_field(key);
  if (f == nullptr) {
    why = fmt::format("{} has no field '{}' (no CM message has)", cm_message_name(msg), key);
    return nullptr;
  }
  const auto& listed = kMessageFields[msg.index()];
  if (std::ranges::find(listed, f) == listed.end()) {
    why = fmt::format("{} has no field '{}' ({})", cm_message_name(msg), f->name, holders(*f));
    return nullptr;
  }
  if (!f->settable()) {
    why = fmt::format("cm.{} is derived from other fields and cannot be set", f->name);
    return nullptr;
  }
  return &access(*f);
}

}  // namespace

std::span<const FieldDef> cm_field_table() {
  return kDefs;
}

std::span<const FieldDef* const> cm_message_fields(const CmMessage& msg) {
  return kMessageFields[msg.index()];
}

const FieldDef* find_cm_field(std::string_view key) {
  if (key.starts_with("cm.")) key.remove_prefix(3);
  for (const FieldDef& f : kDefs)
    if (f.name == key) return &f;
  for (const FieldDef& f : kDefs)
    if (has_alias(f, key)) return &f;
  return nullptr;
}

std::optional<FieldValue> get_cm_field(const CmMessage& msg, const FieldDef& field) {
  const std::less<const FieldDef*> before;
  if (before(&field, kDefs.data()) || !before(&field, kDefs.data() + kDefs.size()))
    return std::nullopt;
  return access(field).get(msg);
}

FieldSetResult set_cm_field(CmMessage& msg, std::string_view key, std::uint64_t value) {
  std::string why;
  const CmField* f = writable(msg, key, why);
  if (!f) return FieldSetResult::failure(std::move(why));
  const FieldDef& d = f->def;
  if (f->set == nullptr)
    return FieldSetResult::failure(fmt::format("cm.{} takes bytes, not a number", d.name));
  if (value > d.max())
    return FieldSetResult::failure(fmt::format("cm.{}: {} does not fit in {} bit{} (at most {:#x})",
                                               d.name, value, d.bits, d.bits == 1 ? "" : "s",
                                               d.max()));
  f->set(msg, value);
  return {};
}

FieldSetResult set_cm_field(CmMessage& msg, std::string_view key, Bytes value) {
  std::string why;
  const CmField* f = writable(msg, key, why);
  if (!f) return FieldSetResult::failure(std::move(why));
  const FieldDef& d = f->def;
  if (f->set_bytes == nullptr)
    return FieldSetResult::failure(fmt::format("cm.{} takes a number, not bytes", d.name));
  if (!f->set_bytes(msg, value)) {
    if (d.type == FieldType::kIpv6)
      return FieldSetResult::failure(
          fmt::format("cm.{}: a GID is 16 bytes, not {}", d.name, value.size()));
    return FieldSetResult::failure(fmt::format("cm.{}: {} bytes do not fit in {}'s field", d.name,
                                               value.size(), cm_message_name(msg)));
  }
  return {};
}

void visit_cm_fields(const CmMessage& msg, FieldSink& sink) {
  for (const FieldDef* f : cm_message_fields(msg))
    if (auto v = access(*f).get(msg)) sink.field(f->layer, f->name, *v);
}

}  // namespace roceconf
