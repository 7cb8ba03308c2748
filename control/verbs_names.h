// The verbs names of the control API's vocabulary (CONTROL_API.md): completion statuses and
// opcodes, work-request opcodes, QP types and states, access and completion flags, and the
// modify_qp attribute names. Values are libibverbs' (enum ibv_wc_status, ibv_qp_state, ...), names
// are theirs without the IBV_ prefix. The reference NIC names its verbs model with these tables
// and the engine checks a case's values against them, so a name means the same on both sides.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roceconf::control::verbs {

struct Named {
  std::uint32_t value;
  std::string_view name;
};

// ibv_wc_status.
inline constexpr auto kWcStatus = std::to_array<Named>({
    {0, "SUCCESS"},
    {1, "LOC_LEN_ERR"},
    {2, "LOC_QP_OP_ERR"},
    {3, "LOC_EEC_OP_ERR"},
    {4, "LOC_PROT_ERR"},
    {5, "WR_FLUSH_ERR"},
    {6, "MW_BIND_ERR"},
    {7, "BAD_RESP_ERR"},
    {8, "LOC_ACCESS_ERR"},
    {9, "REM_INV_REQ_ERR"},
    {10, "REM_ACCESS_ERR"},
    {11, "REM_OP_ERR"},
    {12, "RETRY_EXC_ERR"},
    {13, "RNR_RETRY_EXC_ERR"},
    {14, "LOC_RDD_VIOL_ERR"},
    {15, "REM_INV_RD_REQ_ERR"},
    {16, "REM_ABORT_ERR"},
    {17, "INV_EECN_ERR"},
    {18, "INV_EEC_STATE_ERR"},
    {19, "FATAL_ERR"},
    {20, "RESP_TIMEOUT_ERR"},
    {21, "GENERAL_ERR"},
});

// ibv_wc_opcode.
inline constexpr auto kWcOpcode = std::to_array<Named>({
    {0, "SEND"},
    {1, "RDMA_WRITE"},
    {2, "RDMA_READ"},
    {3, "COMP_SWAP"},
    {4, "FETCH_ADD"},
    {5, "BIND_MW"},
    {6, "LOCAL_INV"},
    {128, "RECV"},
    {129, "RECV_RDMA_WITH_IMM"},
});

// ibv_wr_opcode.
inline constexpr auto kWrOpcode = std::to_array<Named>({
    {0, "RDMA_WRITE"},
    {1, "RDMA_WRITE_WITH_IMM"},
    {2, "SEND"},
    {3, "SEND_WITH_IMM"},
    {4, "RDMA_READ"},
    {5, "ATOMIC_CMP_AND_SWP"},
    {6, "ATOMIC_FETCH_AND_ADD"},
    {7, "LOCAL_INV"},
    {8, "BIND_MW"},
    {9, "SEND_WITH_INV"},
});

// ibv_qp_type (and ib_qp_type's GSI = 1, QP1).
inline constexpr auto kQpType = std::to_array<Named>({{1, "GSI"}, {2, "RC"}, {3, "UC"}, {4, "UD"}});

// ibv_qp_state.
inline constexpr auto kQpState = std::to_array<Named>(
    {{0, "RESET"}, {1, "INIT"}, {2, "RTR"}, {3, "RTS"}, {4, "SQD"}, {5, "SQE"}, {6, "ERR"}});

// ibv_mig_state.
inline constexpr auto kMigState =
    std::to_array<Named>({{0, "MIGRATED"}, {1, "REARM"}, {2, "ARMED"}});

// Flag bits: ibv_access_flags, ibv_wc_flags, ibv_send_flags.
inline constexpr auto kAccessFlags = std::to_array<Named>({{1u << 0, "LOCAL_WRITE"},
                                                           {1u << 1, "REMOTE_WRITE"},
                                                           {1u << 2, "REMOTE_READ"},
                                                           {1u << 3, "REMOTE_ATOMIC"}});
inline constexpr auto kWcFlags = std::to_array<Named>(
    {{1u << 0, "GRH"}, {1u << 1, "WITH_IMM"}, {1u << 2, "IP_CSUM_OK"}, {1u << 3, "WITH_INV"}});
inline constexpr auto kSendFlags = std::to_array<Named>(
    {{1u << 0, "FENCE"}, {1u << 1, "SIGNALED"}, {1u << 2, "SOLICITED"}, {1u << 3, "INLINE"}});

// ibv_qp_attr_mask: each bit's IBV_QP_ name and the ibv_qp_attr field that sets it.
struct AttrName {
  std::uint32_t bit;
  std::string_view name;   // "PATH_MTU"
  std::string_view field;  // "path_mtu"
};
inline constexpr auto kQpAttrMask = std::to_array<AttrName>({
    {1u << 0, "STATE", "qp_state"},
    {1u << 1, "CUR_STATE", "cur_qp_state"},
    {1u << 2, "EN_SQD_ASYNC_NOTIFY", "en_sqd_async_notify"},
    {1u << 3, "ACCESS_FLAGS", "qp_access_flags"},
    {1u << 4, "PKEY_INDEX", "pkey_index"},
    {1u << 5, "PORT", "port_num"},
    {1u << 6, "QKEY", "qkey"},
    {1u << 7, "AV", "ah_attr"},
    {1u << 8, "PATH_MTU", "path_mtu"},
    {1u << 9, "TIMEOUT", "timeout"},
    {1u << 10, "RETRY_CNT", "retry_cnt"},
    {1u << 11, "RNR_RETRY", "rnr_retry"},
    {1u << 12, "RQ_PSN", "rq_psn"},
    {1u << 13, "MAX_QP_RD_ATOMIC", "max_rd_atomic"},
    {1u << 14, "ALT_PATH", "alt_ah_attr"},
    {1u << 15, "MIN_RNR_TIMER", "min_rnr_timer"},
    {1u << 16, "SQ_PSN", "sq_psn"},
    {1u << 17, "MAX_DEST_RD_ATOMIC", "max_dest_rd_atomic"},
    {1u << 18, "PATH_MIG_STATE", "path_mig_state"},
    {1u << 19, "CAP", "cap"},
    {1u << 20, "DEST_QPN", "dest_qp_num"},
});
// The other fields the alternate path carries (ALT_PATH).
inline constexpr auto kAltPathFields =
    std::to_array<std::string_view>({"alt_pkey_index", "alt_port_num", "alt_timeout"});

// ibv_port_cap_flags: the capability bits of ibv_port_attr.port_cap_flags.
inline constexpr auto kPortCapFlags = std::to_array<Named>({
    {1u << 1, "SM"},
    {1u << 2, "NOTICE_SUP"},
    {1u << 3, "TRAP_SUP"},
    {1u << 4, "OPT_IPD_SUP"},
    {1u << 5, "AUTO_MIGR_SUP"},
    {1u << 6, "SL_MAP_SUP"},
    {1u << 7, "MKEY_NVRAM"},
    {1u << 8, "PKEY_NVRAM"},
    {1u << 9, "LED_INFO_SUP"},
    {1u << 11, "SYS_IMAGE_GUID_SUP"},
    {1u << 12, "PKEY_SW_EXT_PORT_TRAP_SUP"},
    {1u << 14, "EXTENDED_SPEEDS_SUP"},
    {1u << 15, "CAP_MASK2_SUP"},
    {1u << 16, "CM_SUP"},
    {1u << 17, "SNMP_TUNNEL_SUP"},
    {1u << 18, "REINIT_SUP"},
    {1u << 19, "DEVICE_MGMT_SUP"},
    {1u << 20, "VENDOR_CLASS_SUP"},
    {1u << 21, "DR_NOTICE_SUP"},
    {1u << 22, "CAP_MASK_NOTICE_SUP"},
    {1u << 23, "BOOT_MGMT_SUP"},
    {1u << 24, "LINK_LATENCY_SUP"},
    {1u << 25, "CLIENT_REG_SUP"},
    {1u << 26, "IP_BASED_GIDS"},
});

// The name of `value` in `table`; nullopt for a value it lacks.
constexpr std::optional<std::string_view> name_of(std::span<const Named> table,
                                                  std::uint32_t value) {
  for (const Named& n : table)
    if (n.value == value) return n.name;
  return std::nullopt;
}
// The value of `name` in `table`; nullopt for a name it lacks.
constexpr std::optional<std::uint32_t> value_of(std::span<const Named> table,
                                                std::string_view name) {
  for (const Named& n : table)
    if (n.name == name) return n.value;
  return std::nullopt;
}
// The names of the bits set in `bits`, lowest first; a bit the table lacks as "BIT_n".
inline std::vector<std::string> flag_names(std::span<const Named> table, std::uint32_t bits) {
  std::vector<std::string> out;
  for (std::uint32_t b = 0; b < 32; ++b) {
    if (!(bits & (1u << b))) continue;
    const auto n = name_of(table, 1u << b);
    out.push_back(n ? std::string(*n) : "BIT_" + std::to_string(b));
  }
  return out;
}
// A modify_qp mask bit from its IBV_QP_ name ("PATH_MTU") or from the field that sets it
// ("path_mtu", "ah_attr", "alt_timeout").
constexpr std::optional<std::uint32_t> attr_mask_bit(std::string_view name) {
  for (const AttrName& a : kQpAttrMask)
    if (a.name == name || a.field == name) return a.bit;
  for (std::string_view alt : kAltPathFields)
    if (alt == name) return 1u << 14;
  return std::nullopt;
}

}  // namespace roceconf::control::verbs
