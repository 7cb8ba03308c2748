#include "agent/verbs_names.h"

#include <algorithm>
#include <array>
#include <span>

namespace roceconf::agent {
namespace {

struct Named {
  std::uint32_t value;
  std::string_view name;
};

constexpr std::array kQpStates = std::to_array<Named>({{IBV_QPS_RESET, "RESET"},
                                                       {IBV_QPS_INIT, "INIT"},
                                                       {IBV_QPS_RTR, "RTR"},
                                                       {IBV_QPS_RTS, "RTS"},
                                                       {IBV_QPS_SQD, "SQD"},
                                                       {IBV_QPS_SQE, "SQE"},
                                                       {IBV_QPS_ERR, "ERR"}});
constexpr std::array kWcStatus =
    std::to_array<Named>({{IBV_WC_SUCCESS, "SUCCESS"},
                          {IBV_WC_LOC_LEN_ERR, "LOC_LEN_ERR"},
                          {IBV_WC_LOC_QP_OP_ERR, "LOC_QP_OP_ERR"},
                          {IBV_WC_LOC_EEC_OP_ERR, "LOC_EEC_OP_ERR"},
                          {IBV_WC_LOC_PROT_ERR, "LOC_PROT_ERR"},
                          {IBV_WC_WR_FLUSH_ERR, "WR_FLUSH_ERR"},
                          {IBV_WC_MW_BIND_ERR, "MW_BIND_ERR"},
                          {IBV_WC_BAD_RESP_ERR, "BAD_RESP_ERR"},
                          {IBV_WC_LOC_ACCESS_ERR, "LOC_ACCESS_ERR"},
                          {IBV_WC_REM_INV_REQ_ERR, "REM_INV_REQ_ERR"},
                          {IBV_WC_REM_ACCESS_ERR, "REM_ACCESS_ERR"},
                          {IBV_WC_REM_OP_ERR, "REM_OP_ERR"},
                          {IBV_WC_RETRY_EXC_ERR, "RETRY_EXC_ERR"},
                          {IBV_WC_RNR_RETRY_EXC_ERR, "RNR_RETRY_EXC_ERR"},
                          {IBV_WC_LOC_RDD_VIOL_ERR, "LOC_RDD_VIOL_ERR"},
                          {IBV_WC_REM_INV_RD_REQ_ERR, "REM_INV_RD_REQ_ERR"},
                          {IBV_WC_REM_ABORT_ERR, "REM_ABORT_ERR"},
                          {IBV_WC_INV_EECN_ERR, "INV_EECN_ERR"},
                          {IBV_WC_INV_EEC_STATE_ERR, "INV_EEC_STATE_ERR"},
                          {IBV_WC_FATAL_ERR, "FATAL_ERR"},
                          {IBV_WC_RESP_TIMEOUT_ERR, "RESP_TIMEOUT_ERR"},
                          {IBV_WC_GENERAL_ERR, "GENERAL_ERR"}});
constexpr std::array kWcOpcodes =
    std::to_array<Named>({{IBV_WC_SEND, "SEND"},
                          {IBV_WC_RDMA_WRITE, "RDMA_WRITE"},
                          {IBV_WC_RDMA_READ, "RDMA_READ"},
                          {IBV_WC_COMP_SWAP, "COMP_SWAP"},
                          {IBV_WC_FETCH_ADD, "FETCH_ADD"},
                          {IBV_WC_BIND_MW, "BIND_MW"},
                          {IBV_WC_LOCAL_INV, "LOCAL_INV"},
                          {IBV_WC_RECV, "RECV"},
                          {IBV_WC_RECV_RDMA_WITH_IMM, "RECV_RDMA_WITH_IMM"}});
constexpr std::array kWrOpcodes =
    std::to_array<Named>({{IBV_WR_SEND, "SEND"},
                          {IBV_WR_SEND_WITH_IMM, "SEND_WITH_IMM"},
                          {IBV_WR_SEND_WITH_INV, "SEND_WITH_INV"},
                          {IBV_WR_RDMA_WRITE, "RDMA_WRITE"},
                          {IBV_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM"},
                          {IBV_WR_RDMA_READ, "RDMA_READ"},
                          {IBV_WR_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP"},
                          {IBV_WR_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD"},
                          {IBV_WR_LOCAL_INV, "LOCAL_INV"},
                          {IBV_WR_BIND_MW, "BIND_MW"}});
constexpr std::array kQpTypes =
    std::to_array<Named>({{IBV_QPT_RC, "RC"}, {IBV_QPT_UC, "UC"}, {IBV_QPT_UD, "UD"}});
constexpr std::array kMigStates = std::to_array<Named>(
    {{IBV_MIG_MIGRATED, "MIGRATED"}, {IBV_MIG_REARM, "REARM"}, {IBV_MIG_ARMED, "ARMED"}});
constexpr std::array kEvents =
    std::to_array<Named>({{IBV_EVENT_CQ_ERR, "CQ_ERR"},
                          {IBV_EVENT_QP_FATAL, "QP_FATAL"},
                          {IBV_EVENT_QP_REQ_ERR, "QP_REQ_ERR"},
                          {IBV_EVENT_QP_ACCESS_ERR, "QP_ACCESS_ERR"},
                          {IBV_EVENT_COMM_EST, "COMM_EST"},
                          {IBV_EVENT_SQ_DRAINED, "SQ_DRAINED"},
                          {IBV_EVENT_PATH_MIG, "PATH_MIG"},
                          {IBV_EVENT_PATH_MIG_ERR, "PATH_MIG_ERR"},
                          {IBV_EVENT_DEVICE_FATAL, "DEVICE_FATAL"},
                          {IBV_EVENT_PORT_ACTIVE, "PORT_ACTIVE"},
                          {IBV_EVENT_PORT_ERR, "PORT_ERR"},
                          {IBV_EVENT_LID_CHANGE, "LID_CHANGE"},
                          {IBV_EVENT_PKEY_CHANGE, "PKEY_CHANGE"},
                          {IBV_EVENT_SM_CHANGE, "SM_CHANGE"},
                          {IBV_EVENT_SRQ_ERR, "SRQ_ERR"},
                          {IBV_EVENT_SRQ_LIMIT_REACHED, "SRQ_LIMIT_REACHED"},
                          {IBV_EVENT_QP_LAST_WQE_REACHED, "QP_LAST_WQE_REACHED"},
                          {IBV_EVENT_CLIENT_REREGISTER, "CLIENT_REREGISTER"},
                          {IBV_EVENT_GID_CHANGE, "GID_CHANGE"}});
constexpr std::array kAccess = std::to_array<Named>({{IBV_ACCESS_LOCAL_WRITE, "LOCAL_WRITE"},
                                                     {IBV_ACCESS_REMOTE_WRITE, "REMOTE_WRITE"},
                                                     {IBV_ACCESS_REMOTE_READ, "REMOTE_READ"},
                                                     {IBV_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC"},
                                                     {IBV_ACCESS_MW_BIND, "MW_BIND"}});
constexpr std::array kSend = std::to_array<Named>({{IBV_SEND_FENCE, "FENCE"},
                                                   {IBV_SEND_SIGNALED, "SIGNALED"},
                                                   {IBV_SEND_SOLICITED, "SOLICITED"},
                                                   {IBV_SEND_INLINE, "INLINE"}});
constexpr std::array kWc = std::to_array<Named>({{IBV_WC_GRH, "GRH"},
                                                 {IBV_WC_WITH_IMM, "WITH_IMM"},
                                                 {IBV_WC_IP_CSUM_OK, "IP_CSUM_OK"},
                                                 {IBV_WC_WITH_INV, "WITH_INV"}});

std::string name_of(std::span<const Named> table, std::uint32_t value) {
  for (const Named& n : table)
    if (n.value == value) return std::string(n.name);
  return std::to_string(value);
}

std::optional<std::uint32_t> value_of(std::span<const Named> table, std::string_view name) {
  for (const Named& n : table)
    if (n.name == name) return n.value;
  return std::nullopt;
}

std::span<const Named> flags_of(FlagSet set) {
  switch (set) {
    case FlagSet::kAccess:
      return kAccess;
    case FlagSet::kSend:
      return kSend;
    case FlagSet::kWc:
      return kWc;
  }
  return {};
}

}  // namespace

std::string qp_state_name(ibv_qp_state s) {
  return name_of(kQpStates, s);
}
std::optional<ibv_qp_state> qp_state_from_name(std::string_view name) {
  const auto v = value_of(kQpStates, name);
  return v ? std::optional(static_cast<ibv_qp_state>(*v)) : std::nullopt;
}
std::string wc_status_name(ibv_wc_status s) {
  return name_of(kWcStatus, s);
}
std::string wc_opcode_name(ibv_wc_opcode o) {
  return name_of(kWcOpcodes, o);
}
std::optional<ibv_wr_opcode> wr_opcode_from_name(std::string_view name) {
  const auto v = value_of(kWrOpcodes, name);
  return v ? std::optional(static_cast<ibv_wr_opcode>(*v)) : std::nullopt;
}
std::optional<ibv_qp_type> qp_type_from_name(std::string_view name) {
  const auto v = value_of(kQpTypes, name);
  return v ? std::optional(static_cast<ibv_qp_type>(*v)) : std::nullopt;
}
std::string qp_type_name(ibv_qp_type t) {
  return name_of(kQpTypes, t);
}
std::string async_event_name(ibv_event_type t) {
  return name_of(kEvents, t);
}
std::string mig_state_name(ibv_mig_state s) {
  return name_of(kMigStates, s);
}

ibv_mtu mtu_from_number(std::uint64_t v) {
  if (v >= 1 && v <= 5) return static_cast<ibv_mtu>(v);
  switch (v) {
    case 256:
      return IBV_MTU_256;
    case 512:
      return IBV_MTU_512;
    case 1024:
      return IBV_MTU_1024;
    case 2048:
      return IBV_MTU_2048;
    case 4096:
      return IBV_MTU_4096;
    default:
      return static_cast<ibv_mtu>(0);
  }
}

std::uint32_t mtu_bytes(ibv_mtu mtu) {
  return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 0;
}

std::uint32_t parse_flags(const Fields& f, std::string_view key, FlagSet set) {
  if (!f.has(key)) return 0;
  const nlohmann::json& v = f.at(key);
  if (!v.is_array())
    return static_cast<std::uint32_t>(Fields::to_unsigned(v, f.path(key), UINT32_MAX));
  const auto table = flags_of(set);
  std::uint32_t flags = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto bit = v[i].is_string() ? value_of(table, v[i].get<std::string>()) : std::nullopt;
    if (!bit) {
      std::string known;
      for (const Named& n : table) known += fmt::format("{}{}", known.empty() ? "" : ", ", n.name);
      fail("{}[{}]: {} is not a flag name (known: {})", f.path(key), i, shown(v[i]), known);
    }
    flags |= *bit;
  }
  return flags;
}

nlohmann::json flag_list(std::uint32_t flags, FlagSet set) {
  nlohmann::json out = nlohmann::json::array();
  std::uint32_t unknown = flags;
  for (const Named& n : flags_of(set)) {
    if (flags & n.value) out.push_back(n.name);
    unknown &= ~n.value;
  }
  if (unknown) out.push_back(fmt::format("{:#x}", unknown));
  return out;
}

}  // namespace roceconf::agent
