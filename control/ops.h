// The control API's ops and the fields each one takes (CONTROL_API.md), declared once. Both
// servers (the reference NIC's ControlApi, roceconf-agent's Session) refuse unknown fields with
// these lists and answer hello's "ops" with kOpNames, and the typed client (client.h) writes only
// these fields, so the three cannot drift apart: a field added here is a field of every side.
#pragma once

#include <array>
#include <span>
#include <string_view>

namespace roceconf::control {

// Version of the request/response format, reported by hello.
inline constexpr int kProtocolVersion = 1;

// cq_events waits at most this long for a first event.
inline constexpr unsigned kMaxEventWaitMs = 1000;

// kernel_log answers at most this many lines, whatever max_lines asks (the newest are kept).
inline constexpr unsigned kMaxKernelLogLines = 1000;

// Every op, in the order hello lists them.
inline constexpr auto kOpNames = std::to_array<std::string_view>(
    {"hello",        "capabilities",  "alloc_pd",   "dealloc_pd", "reg_mr",        "dereg_mr",
     "write_mr",     "read_mr",       "alloc_mw",   "dealloc_mw", "bind_mw",       "create_cq",
     "destroy_cq",   "req_notify_cq", "poll_cq",    "cq_events",  "create_qp",     "modify_qp",
     "query_qp",     "destroy_qp",    "post_send",  "post_recv",  "counters",      "kernel_log",
     "async_events", "quirks",        "cm_connect", "cm_status",  "cm_disconnect", "reset"});

// The request fields of each op (besides the envelope's "id" and "op").
namespace keys {
using List = std::span<const std::string_view>;
inline constexpr std::array<std::string_view, 0> kNone{};
inline constexpr auto kAuth = std::to_array<std::string_view>({"mac"});
inline constexpr auto kPd = std::to_array<std::string_view>({"pd"});
inline constexpr auto kRegMr = std::to_array<std::string_view>({"pd", "length", "access", "iova"});
inline constexpr auto kMrHandle = std::to_array<std::string_view>({"handle"});
inline constexpr auto kWriteMr = std::to_array<std::string_view>({"handle", "offset", "data"});
inline constexpr auto kReadMr = std::to_array<std::string_view>({"handle", "offset", "length"});
inline constexpr auto kAllocMw = std::to_array<std::string_view>({"pd", "type"});
inline constexpr auto kMw = std::to_array<std::string_view>({"mw"});
inline constexpr auto kBindMw = std::to_array<std::string_view>(
    {"qp_num", "mw", "mr", "addr", "length", "access", "zero_based", "wr_id", "send_flags"});
inline constexpr auto kCreateCq = std::to_array<std::string_view>({"depth"});
inline constexpr auto kCq = std::to_array<std::string_view>({"cq"});
inline constexpr auto kReqNotifyCq = std::to_array<std::string_view>({"cq", "solicited_only"});
inline constexpr auto kPollCq = std::to_array<std::string_view>({"cq", "max"});
inline constexpr auto kCqEvents = std::to_array<std::string_view>({"wait_ms"});
// "type" is the older spelling of "qp_type"; a request gives one of them.
inline constexpr auto kCreateQp = std::to_array<std::string_view>(
    {"qp_type", "type", "pd", "send_cq", "recv_cq", "cap", "sq_sig_all"});
inline constexpr auto kModifyQp = std::to_array<std::string_view>({"qp_num", "attr"});
inline constexpr auto kQpNum = std::to_array<std::string_view>({"qp_num"});
inline constexpr auto kPost = std::to_array<std::string_view>({"qp_num", "wrs"});
inline constexpr auto kCounters = std::to_array<std::string_view>({"names"});
// The device host's kernel log lines stamped within [since, until] (the host's Unix time), the
// newest max_lines of them.
inline constexpr auto kKernelLog =
    std::to_array<std::string_view>({"since_unix_ns", "until_unix_ns", "max_lines"});
inline constexpr auto kCmConnect = std::to_array<std::string_view>(
    {"qp_num", "service_id", "port", "dgid", "dmac", "path_mtu", "starting_psn", "pkey",
     "responder_resources", "initiator_depth", "retry_count", "rnr_retry_count", "private_data",
     "cm_response_timeout", "max_cm_retries", "packet_lifetime"});

// Objects inside requests.
inline constexpr auto kQpAttr = std::to_array<std::string_view>({"qp_state",
                                                                 "cur_qp_state",
                                                                 "en_sqd_async_notify",
                                                                 "qp_access_flags",
                                                                 "pkey_index",
                                                                 "port_num",
                                                                 "qkey",
                                                                 "ah_attr",
                                                                 "path_mtu",
                                                                 "timeout",
                                                                 "retry_cnt",
                                                                 "rnr_retry",
                                                                 "rq_psn",
                                                                 "max_rd_atomic",
                                                                 "alt_ah_attr",
                                                                 "alt_pkey_index",
                                                                 "alt_port_num",
                                                                 "alt_timeout",
                                                                 "min_rnr_timer",
                                                                 "sq_psn",
                                                                 "max_dest_rd_atomic",
                                                                 "path_mig_state",
                                                                 "cap",
                                                                 "dest_qp_num"});
inline constexpr auto kAddressVector = std::to_array<std::string_view>(
    {"dgid", "dmac", "flow_label", "sgid_index", "hop_limit", "traffic_class", "sl", "port_num",
     "static_rate", "udp_sport"});
inline constexpr auto kQpCap = std::to_array<std::string_view>(
    {"max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data"});
inline constexpr auto kSendWr = std::to_array<std::string_view>(
    {"wr_id", "opcode", "send_flags", "sg_list", "inline_data", "imm_data", "invalidate_rkey",
     "rdma", "atomic", "ud", "bind_mw"});
// A BIND_MW WR's window, its new R_Key and what it binds (ibv_send_wr.bind_mw).
inline constexpr auto kBindMwWr =
    std::to_array<std::string_view>({"mw", "rkey", "mr", "addr", "length", "access", "zero_based"});
inline constexpr auto kRecvWr = std::to_array<std::string_view>({"wr_id", "sg_list"});
inline constexpr auto kSge = std::to_array<std::string_view>({"addr", "length", "lkey"});
inline constexpr auto kRdma = std::to_array<std::string_view>({"remote_addr", "rkey"});
inline constexpr auto kAtomic =
    std::to_array<std::string_view>({"remote_addr", "compare_add", "swap", "rkey"});
inline constexpr auto kUd = std::to_array<std::string_view>({"ah", "remote_qpn", "remote_qkey"});
}  // namespace keys

struct OpKeys {
  std::string_view op;
  keys::List keys;
};
// Each op with its request fields, in kOpNames order (ops.cc checks the two agree at compile
// time). "auth" is the gate's (auth.h), not an op of the API.
std::span<const OpKeys> op_keys();
// The request fields of `op`; empty for an unknown op.
keys::List keys_of(std::string_view op);

// Whether a server's handler table lists exactly kOpNames, in order: each server checks its
// table with it at compile time.
template <typename Table>
constexpr bool lists_every_op(const Table& table) {
  if (table.size() != kOpNames.size()) return false;
  for (std::size_t i = 0; i < kOpNames.size(); ++i)
    if (table[i].name != kOpNames[i]) return false;
  return true;
}

}  // namespace roceconf::control
