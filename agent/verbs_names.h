// libibverbs enums and flags by the control API's names (their IBV_ names without the prefix),
// both ways. Unknown values are shown as numbers, never dropped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <infiniband/verbs.h>
#include <nlohmann/json.hpp>

#include "agent/request_fields.h"

namespace roceconf::agent {

std::string qp_state_name(ibv_qp_state state);
std::optional<ibv_qp_state> qp_state_from_name(std::string_view name);
std::string wc_status_name(ibv_wc_status status);
std::string wc_opcode_name(ibv_wc_opcode opcode);
std::optional<ibv_wr_opcode> wr_opcode_from_name(std::string_view name);
std::optional<ibv_qp_type> qp_type_from_name(std::string_view name);
std::string qp_type_name(ibv_qp_type type);
std::string async_event_name(ibv_event_type type);
std::string mig_state_name(ibv_mig_state state);

// Bytes (256-4096) or the ibv_mtu value (1-5); 0 when neither.
ibv_mtu mtu_from_number(std::uint64_t value);
std::uint32_t mtu_bytes(ibv_mtu mtu);

enum class FlagSet { kAccess, kSend, kWc };
// A list of names, or a number taken as the raw bits (CONTROL_API.md).
std::uint32_t parse_flags(const Fields& f, std::string_view key, FlagSet set);
nlohmann::json flag_list(std::uint32_t flags, FlagSet set);

}  // namespace roceconf::agent
