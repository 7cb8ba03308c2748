// The CM visitor exactly as it was written by hand before the field table (names, values and
// order per message), kept as the reference the table-driven visit_cm_fields must reproduce.
#pragma once

#include <string_view>

#include "dissector/layer.h"
#include "dissector/mad/cm.h"
#include "dissector/mad/rdma_cm.h"

namespace roceconf::legacy {

// clang-format off
struct PathNames {
  std::string_view local_lid, remote_lid, local_gid, remote_gid, flow_label, traffic_class,
      hop_limit, packet_rate, sl, subnet_local, local_ack_timeout;
};
inline constexpr PathNames kPrimaryNames{
    "primary_local_lid",    "primary_remote_lid",       "primary_local_gid",
    "primary_remote_gid",   "primary_flow_label",       "primary_traffic_class",
    "primary_hop_limit",    "primary_packet_rate",      "primary_sl",
    "primary_subnet_local", "primary_local_ack_timeout"};
inline constexpr PathNames kAlternateNames{
    "alternate_local_lid",    "alternate_remote_lid",       "alternate_local_gid",
    "alternate_remote_gid",   "alternate_flow_label",       "alternate_traffic_class",
    "alternate_hop_limit",    "alternate_packet_rate",      "alternate_sl",
    "alternate_subnet_local", "alternate_local_ack_timeout"};

class Emitter {
 public:
  explicit Emitter(FieldSink& sink) : sink_(sink) {}

  void u(std::string_view name, std::uint64_t v) { emit(name, v); }
  void flag(std::string_view name, bool v) { emit(name, v); }
  void str(std::string_view name, std::string_view v) { emit(name, v); }
  void bytes(std::string_view name, Bytes v) { emit(name, v); }
  void gid(std::string_view name, const CmGid& g) { emit(name, Address{Bytes(g)}); }

  void path(const PathNames& n, const CmPath& p) {
    u(n.local_lid, p.local_lid);
    u(n.remote_lid, p.remote_lid);
    gid(n.local_gid, p.local_gid);
    gid(n.remote_gid, p.remote_gid);
    u(n.flow_label, p.flow_label);
    u(n.traffic_class, p.traffic_class);
    u(n.hop_limit, p.hop_limit);
    u(n.packet_rate, p.packet_rate);
    u(n.sl, p.sl);
    flag(n.subnet_local, p.subnet_local);
    u(n.local_ack_timeout, p.local_ack_timeout);
  }
  void comm_ids(std::uint32_t local, std::uint32_t remote) {
    u("local_comm_id", local);
    u("remote_comm_id", remote);
  }

  void operator()(const CmReq& m) {
    u("local_comm_id", m.local_comm_id);
    u("vendor_id", m.vendor_id);
    u("service_id", m.service_id);
    u("local_ca_guid", m.local_ca_guid);
    u("local_qkey", m.local_qkey);
    u("local_qpn", m.local_qpn);
    u("responder_resources", m.responder_resources);
    u("local_eecn", m.local_eecn);
    u("initiator_depth", m.initiator_depth);
    u("remote_eecn", m.remote_eecn);
    u("remote_cm_response_timeout", m.remote_cm_response_timeout);
    u("transport_type", m.transport_type);
    str("transport_name", transport_type_name(m.transport_type, m.extended_transport_type));
    flag("end_to_end_flow_control", m.end_to_end_flow_control);
    u("starting_psn", m.starting_psn);
    u("local_cm_response_timeout", m.local_cm_response_timeout);
    u("retry_count", m.retry_count);
    u("pkey", m.pkey);
    u("path_mtu", m.path_mtu);
    flag("rdc_exists", m.rdc_exists);
    u("rnr_retry_count", m.rnr_retry_count);
    u("max_cm_retries", m.max_cm_retries);
    flag("srq", m.srq);
    u("extended_transport_type", m.extended_transport_type);
    path(kPrimaryNames, m.primary);
    path(kAlternateNames, m.alternate);
    flag("sap_supported", m.sap_supported);
    bytes("private_data", m.private_data);
    if (is_rdma_cm_service_id(m.service_id)) rdma_cm(m);
  }
  void operator()(const CmMra& m) {
    comm_ids(m.local_comm_id, m.remote_comm_id);
    u("message_mraed", m.message_mraed);
    str("message_mraed_name", mra_message_name(m.message_mraed));
    u("service_timeout", m.service_timeout);
    bytes("private_data", m.private_data);
  }
  void operator()(const CmRej& m) {
    comm_ids(m.local_comm_id, m.remote_comm_id);
    u("message_rejected", m.message_rejected);
    str("message_rejected_name", mra_message_name(m.message_rejected));
    u("reject_info_length", m.reject_info_length);
    u("reason", m.reason);
    str("reason_name", rej_reason_name(m.reason));
    bytes("ari", m.ari);
    bytes("private_data", m.private_data);
  }
  void operator()(const CmRep& m) {
    comm_ids(m.local_comm_id, m.remote_comm_id);
    u("local_qkey", m.local_qkey);
    u("local_qpn", m.local_qpn);
    u("vendor_id", m.vendor_id);
    u("local_eecn", m.local_eecn);
    u("starting_psn", m.starting_psn);
    u("responder_resources", m.responder_resources);
    u("initiator_depth", m.initiator_depth);
    u("target_ack_delay", m.target_ack_delay);
    u("failover_accepted", m.failover_accepted);
    flag("end_to_end_flow_control", m.end_to_end_flow_control);
    u("rnr_retry_count", m.rnr_retry_count);
    flag("srq", m.srq);
    u("local_ca_guid", m.local_ca_guid);
    bytes("private_data", m.private_data);
  }
  void operator()(const CmRtu& m) {
    comm_ids(m.local_comm_id, m.remote_comm_id);
    bytes("private_data", m.private_data);
  }
  void operator()(const CmDreq& m) {
    comm_ids(m.local_comm_id, m.remote_comm_id);
    u("remote_qpn", m.remote_qpn);
    bytes("private_data", m.private_data);
  }
  void operator()(const CmDrep& m) {
    comm_ids(m.local_comm_id, m.remote_comm_id);
    bytes("private_data", m.private_data);
  }
  void operator()(const CmSidrReq& m) {
    u("request_id", m.request_id);
    u("pkey", m.pkey);
    u("service_id", m.service_id);
    bytes("private_data", m.private_data);
  }
  void operator()(const CmSidrRep& m) {
    u("request_id", m.request_id);
    u("sidr_status", m.sidr_status);
    str("sidr_status_name", sidr_status_name(m.sidr_status));
    u("additional_info_length", m.additional_info_length);
    u("vendor_id", m.vendor_id);
    u("qpn", m.qpn);
    u("service_id", m.service_id);
    u("qkey", m.qkey);
    bytes("additional_info", m.additional_info);
    bytes("private_data", m.private_data);
  }
  void operator()(const CmLap& m) {
    comm_ids(m.local_comm_id, m.remote_comm_id);
    u("remote_qpn", m.remote_qpn);
    u("remote_cm_response_timeout", m.remote_cm_response_timeout);
    path(kAlternateNames, m.alternate);
    bytes("private_data", m.private_data);
  }
  void operator()(const CmApr& m) {
    comm_ids(m.local_comm_id, m.remote_comm_id);
    u("additional_info_length", m.additional_info_length);
    u("ap_status", m.ap_status);
    str("ap_status_name", apr_status_name(m.ap_status));
    bytes("additional_info", m.additional_info);
    bytes("private_data", m.private_data);
  }
  void operator()(const ClassPortInfo& m) {
    u("base_version", m.base_version);
    u("class_version", m.class_version);
    u("capability_mask", m.capability_mask);
    u("capability_mask2", m.capability_mask2);
    u("resp_time_value", m.resp_time_value);
    gid("redirect_gid", m.redirect_gid);
    u("redirect_tc", m.redirect_tc);
    u("redirect_sl", m.redirect_sl);
    u("redirect_flow_label", m.redirect_flow_label);
    u("redirect_lid", m.redirect_lid);
    u("redirect_pkey", m.redirect_pkey);
    u("redirect_qp", m.redirect_qp);
    u("redirect_qkey", m.redirect_qkey);
    gid("trap_gid", m.trap_gid);
    u("trap_tc", m.trap_tc);
    u("trap_sl", m.trap_sl);
    u("trap_flow_label", m.trap_flow_label);
    u("trap_lid", m.trap_lid);
    u("trap_pkey", m.trap_pkey);
    u("trap_hop_limit", m.trap_hop_limit);
    u("trap_qp", m.trap_qp);
    u("trap_qkey", m.trap_qkey);
  }

 private:
  void emit(std::string_view name, const FieldValue& value) {
    sink_.field(layer_name(Layer::kCm), name, value);
  }

  // Views into the private data (not into a decoded copy) so they outlive this call.
  void rdma_cm(const CmReq& m) {
    const std::uint16_t ps = rdma_cm_port_space(m.service_id);
    u("rdma_cm.port_space", ps);
    str("rdma_cm.port_space_name", rdma_cm_port_space_name(ps));
    u("rdma_cm.port", rdma_cm_port(m.service_id));
    const auto header = decode_rdma_cm_header(m.private_data);
    if (!header) return;
    u("rdma_cm.ip_version", header->ip_version);
    u("rdma_cm.src_port", header->src_port);
    const std::size_t skip = header->ip_version == 4 ? 12 : 0;
    emit("rdma_cm.src_ip", Address{m.private_data.subspan(4 + skip, 16 - skip)});
    emit("rdma_cm.dst_ip", Address{m.private_data.subspan(20 + skip, 16 - skip)});
  }

  FieldSink& sink_;
};
// clang-format on

inline void visit_cm_fields(const CmMessage& msg, FieldSink& sink) {
  Emitter emitter(sink);
  emitter.str("msg", cm_message_name(msg));
  std::visit(emitter, msg);
}

}  // namespace roceconf::legacy
