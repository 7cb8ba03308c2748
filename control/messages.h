// The control API's requests and responses as types (CONTROL_API.md): one struct per request,
// naming its response type (Reply), and the verbs structures they carry. Enums and flags keep
// their API names ("RTS", "SIGNALED"); bytes are bytes (hex only on the wire). A field the API
// marks optional is a std::optional here: left empty, it is not sent and the server's default
// holds. Every member has a default ({}), so a request is written with designated initializers
// naming only what it sets. codec.h turns them into JSON and back; client.h sends them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace roceconf::control {

// ---- verbs structures ----------------------------------------------------------------------

struct Sge {
  std::uint64_t addr = 0;
  std::uint32_t length = 0;
  std::uint32_t lkey = 0;
};

struct QpCap {
  std::optional<std::uint32_t> max_send_wr{}, max_recv_wr{}, max_send_sge{}, max_recv_sge{},
      max_inline_data{};
};

// ibv_ah_attr as the API gives it: dgid "192.0.2.1" (::ffff:192.0.2.1) or any IPv6 text.
struct AddressVector {
  std::string dgid{};
  std::string dmac{};  // "aa:bb:cc:dd:ee:ff"
  std::optional<std::uint32_t> flow_label{};
  std::optional<std::uint8_t> sgid_index{}, hop_limit{}, traffic_class{}, sl{}, port_num{},
      static_rate{};
  std::optional<std::uint16_t> udp_sport{};
};

// ibv_qp_attr: in modify_qp the fields given make the attribute mask; query_qp gives them all.
struct QpAttr {
  std::optional<std::string> qp_state{}, cur_qp_state{};  // "RESET", "INIT", "RTR", "RTS", ...
  std::optional<bool> en_sqd_async_notify{};
  std::optional<std::vector<std::string>> qp_access_flags{};  // "REMOTE_WRITE", ...
  std::optional<std::uint16_t> pkey_index{}, alt_pkey_index{};
  std::optional<std::uint8_t> port_num{}, alt_port_num{};
  std::optional<std::uint32_t> qkey{};
  std::optional<AddressVector> ah_attr{}, alt_ah_attr{};
  std::optional<std::uint32_t> path_mtu{};  // bytes (or the ibv_mtu value 1-5 in a request)
  std::optional<std::uint8_t> timeout{}, alt_timeout{}, retry_cnt{}, rnr_retry{}, min_rnr_timer{};
  std::optional<std::uint32_t> rq_psn{}, sq_psn{}, dest_qp_num{};
  std::optional<std::uint8_t> max_rd_atomic{}, max_dest_rd_atomic{};
  std::optional<std::string> path_mig_state{};  // "MIGRATED", "REARM", "ARMED"
  std::optional<QpCap> cap{};
  std::optional<bool> sq_draining{};  // query_qp only
};

struct SendWr {
  std::uint64_t wr_id = 0;
  std::string opcode = "SEND";            // SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_READ, ...
  std::vector<std::string> send_flags{};  // FENCE, SIGNALED, SOLICITED, INLINE
  std::vector<Sge> sg_list{};
  std::optional<std::vector<std::uint8_t>> inline_data{};  // needs the INLINE flag
  std::optional<std::uint32_t> imm_data{}, invalidate_rkey{};
  struct Rdma {
    std::uint64_t remote_addr = 0;
    std::uint32_t rkey = 0;
  };
  std::optional<Rdma> rdma{};
  struct Atomic {
    std::uint64_t remote_addr = 0;
    std::uint64_t compare_add = 0;
    std::uint64_t swap = 0;
    std::uint32_t rkey = 0;
  };
  std::optional<Atomic> atomic{};
  struct Ud {
    AddressVector ah{};
    std::uint32_t remote_qpn = 0;
    std::uint32_t remote_qkey = 0;
  };
  std::optional<Ud> ud{};
  // BIND_MW: a type 2 window bound to `length` bytes at `addr` of region `mr` (length 0 with
  // no region for a type 1 unbind through the verb is bind_mw's, not this).
  struct BindMw {
    std::uint32_t mw = 0;                 // window handle
    std::optional<std::uint32_t> rkey{};  // the new R_Key; unset: the next key byte
    std::uint32_t mr = 0;                 // region handle
    std::uint64_t addr = 0;
    std::uint64_t length = 0;
    std::vector<std::string> access{};  // REMOTE_READ, REMOTE_WRITE, REMOTE_ATOMIC
    bool zero_based = false;
  };
  std::optional<BindMw> bind_mw{};
};

struct RecvWr {
  std::uint64_t wr_id = 0;
  std::vector<Sge> sg_list{};
};

// ibv_wc; status and opcode by name ("SUCCESS", "RECV").
struct WorkCompletion {
  std::uint64_t wr_id = 0;
  std::string status{};
  std::string opcode{};
  std::uint32_t vendor_err = 0;
  std::uint32_t byte_len = 0;
  std::uint32_t imm_data = 0;
  std::uint32_t qp_num = 0;
  std::uint32_t src_qp = 0;
  std::uint16_t pkey_index = 0;
  std::uint32_t slid = 0;
  std::uint8_t sl = 0;
  std::uint8_t dlid_path_bits = 0;
  std::vector<std::string> wc_flags{};  // GRH, WITH_IMM, IP_CSUM_OK, WITH_INV
};

struct AsyncEvent {
  std::string event_type{};                // "CQ_ERR", "QP_ACCESS_ERR", ...
  std::optional<std::uint64_t> element{};  // the CQ handle, QP number or port; none for SRQs
};

// ---- responses -----------------------------------------------------------------------------

struct Empty {};

struct GidEntry {
  std::uint32_t index = 0;
  std::string gid{};
  std::string type{};  // "RoCEv2", ...
};
struct PortInfo {
  std::uint32_t port_num = 0;
  std::string mac{}, ipv4{};
  std::uint32_t udp_port = 0;
  std::uint32_t max_mtu = 0, active_mtu = 0;  // bytes
  // ibv_port_attr's subnet fields (a RoCE port has no LID, LMC or SM: A17.5) and its
  // capability bits by name ("CM_SUP", "CLIENT_REG_SUP", ...). Absent from an older server.
  std::optional<std::uint32_t> lid{}, sm_lid{}, lmc{}, max_vl_num{};
  std::string link_layer{};  // "Ethernet", "InfiniBand"
  std::optional<std::vector<std::string>> port_cap_flags{};
  std::vector<GidEntry> gids{};
  std::vector<std::uint16_t> pkeys{};
};
struct HelloReply {
  std::string target{};
  int protocol = 0;
  // Before authentication only the three fields above and `auth` are given.
  std::vector<std::string> ops{};
  std::vector<std::string> quirks{};  // the active ones
  nlohmann::json device{};            // ibv_device_attr subset and, from an agent, its identity
  std::optional<PortInfo> port{};
  struct Auth {
    std::string method{};  // "hmac-sha256"
    std::string nonce{};
  };
  std::optional<Auth> auth{};  // the server asks the controller to authenticate
};
struct AuthReply {
  bool authenticated = false;
};
struct AllocPdReply {
  std::uint32_t pd = 0;
};
struct RegMrReply {
  std::uint32_t handle = 0;
  std::uint32_t lkey = 0;
  std::uint32_t rkey = 0;
  std::uint64_t addr = 0;
  std::uint64_t length = 0;
  std::uint32_t pd = 0;
};
struct AllocMwReply {
  std::uint32_t mw = 0;  // handle
  std::uint32_t rkey = 0;
  std::uint32_t type = 0;  // 1 or 2
  std::uint32_t pd = 0;
};
struct BindMwReply {
  std::uint32_t rkey = 0;  // the window's new R_Key
};
struct WriteMrReply {
  std::uint64_t length = 0;
};
struct ReadMrReply {
  std::vector<std::uint8_t> data{};
};
struct CreateCqReply {
  std::uint32_t cq = 0;
  std::uint32_t depth = 0;                   // what the target granted
  std::optional<std::uint32_t> requested{};  // an agent whose device rounded the depth up
};
struct PollCqReply {
  std::vector<WorkCompletion> wc{};
};
struct CqEventsReply {
  std::vector<std::uint32_t> events{};  // the CQ of each completion event, oldest first
};
struct CreateQpReply {
  std::uint32_t qp_num = 0;
  QpCap cap{};
};
struct ModifyQpReply {
  std::vector<std::string> attr_mask{};
};
struct QpInitAttr {
  std::string qp_type{};
  std::optional<std::uint32_t> pd{}, send_cq{}, recv_cq{};  // the reference target gives them
  QpCap cap{};
  bool sq_sig_all = false;
};
struct QueryQpReply {
  QpAttr attr{};
  QpInitAttr init_attr{};
};
struct PostReply {
  std::uint64_t posted = 0;
};
struct CountersReply {
  std::map<std::string, std::uint64_t> counters{};
};
// One line of the device host's kernel log (kernel_log).
struct KernelLine {
  std::int64_t unix_ns = 0;  // the host's Unix time of the record (its monotonic stamp mapped)
  std::string text{};
  std::optional<std::uint32_t> priority{};  // syslog level 0-7 (facility dropped)
  std::optional<std::uint64_t> seq{};       // the kernel's record sequence number
};
struct KernelLogReply {
  std::vector<KernelLine> lines{};  // oldest first
  std::uint64_t dropped = 0;        // lines of the window left out (max_lines), the oldest
  // The host's Unix time when it answered: with the request's send and receive times the
  // tester estimates the offset between the two clocks.
  std::int64_t now_unix_ns = 0;
  std::string source{};  // "/dev/kmsg", "event log", "none": where the lines came from
  // How the records' own stamps were put on the host's Unix time (roceconf-agent:
  // "sched_debug" or "monotonic"); empty when the server does not say.
  std::string stamp_clock{};
};
struct AsyncEventsReply {
  std::vector<AsyncEvent> events{};
  std::uint64_t dropped = 0;
};
struct QuirkInfo {
  std::string name{}, area{}, description{};
  bool active = false;
};
struct QuirksReply {
  std::vector<std::string> active{};
  std::vector<QuirkInfo> known{};
};
struct CmConnectReply {
  std::optional<std::uint32_t> comm_id{};
  std::uint64_t service_id = 0;
  std::optional<std::uint32_t> starting_psn{};
};
struct CmStatusReply {
  std::string state{};  // connecting, established, rejected, timed_out, disconnecting, ...
  std::optional<std::uint16_t> reason{};
  std::optional<std::uint32_t> comm_id{};
  std::optional<std::string> cm_state{};
  std::optional<std::uint32_t> remote_qpn{};
};

// ---- requests ------------------------------------------------------------------------------

struct Hello {
  static constexpr std::string_view kOp = "hello";
  using Reply = HelloReply;
};
struct Auth {
  static constexpr std::string_view kOp = "auth";
  using Reply = AuthReply;
  std::string mac{};  // HMAC-SHA256(secret, nonce), hex (auth.h)
};
struct AllocPd {
  static constexpr std::string_view kOp = "alloc_pd";
  using Reply = AllocPdReply;
};
struct DeallocPd {
  static constexpr std::string_view kOp = "dealloc_pd";
  using Reply = Empty;
  std::uint32_t pd = 0;
};
struct RegMr {
  static constexpr std::string_view kOp = "reg_mr";
  using Reply = RegMrReply;
  std::uint32_t pd = 0;
  std::uint64_t length = 0;
  // LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC, MW_BIND
  std::vector<std::string> access{};
  std::optional<std::uint64_t> iova{};
};
struct DeregMr {
  static constexpr std::string_view kOp = "dereg_mr";
  using Reply = Empty;
  std::uint32_t handle = 0;
};
struct WriteMr {
  static constexpr std::string_view kOp = "write_mr";
  using Reply = WriteMrReply;
  std::uint32_t handle = 0;
  std::uint64_t offset = 0;
  std::vector<std::uint8_t> data{};
};
struct ReadMr {
  static constexpr std::string_view kOp = "read_mr";
  using Reply = ReadMrReply;
  std::uint32_t handle = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;  // at most 1 MiB
};
// A memory window (ibv_alloc_mw): type 1 or 2 (2B on the agent).
struct AllocMw {
  static constexpr std::string_view kOp = "alloc_mw";
  using Reply = AllocMwReply;
  std::uint32_t pd = 0;
  std::uint32_t type = 1;
};
struct DeallocMw {
  static constexpr std::string_view kOp = "dealloc_mw";
  using Reply = Empty;
  std::uint32_t mw = 0;
};
// The bind verb (ibv_bind_mw) for a type 1 window: a bind WQE on the QP's send queue; the reply
// is the window's new R_Key, the completion (wr_id, when SIGNALED) says whether the bind held.
// Length 0 with mr 0 unbinds.
struct BindMw {
  static constexpr std::string_view kOp = "bind_mw";
  using Reply = BindMwReply;
  std::uint32_t qp_num = 0;
  std::uint32_t mw = 0;
  std::uint32_t mr = 0;
  std::uint64_t addr = 0;
  std::uint64_t length = 0;
  std::vector<std::string> access{};  // REMOTE_READ, REMOTE_WRITE, REMOTE_ATOMIC
  bool zero_based = false;
  std::uint64_t wr_id = 0;
  std::vector<std::string> send_flags{};  // SIGNALED
};
struct CreateCq {
  static constexpr std::string_view kOp = "create_cq";
  using Reply = CreateCqReply;
  std::uint32_t depth = 0;
};
struct DestroyCq {
  static constexpr std::string_view kOp = "destroy_cq";
  using Reply = Empty;
  std::uint32_t cq = 0;
};
struct ReqNotifyCq {
  static constexpr std::string_view kOp = "req_notify_cq";
  using Reply = Empty;
  std::uint32_t cq = 0;
  bool solicited_only = false;
};
struct PollCq {
  static constexpr std::string_view kOp = "poll_cq";
  using Reply = PollCqReply;
  std::uint32_t cq = 0;
  std::optional<std::uint32_t> max{};  // 16 when not given, at most 4096
};
// ibv_get_cq_event on the session's completion channel, drained: every event pending, each
// acknowledged. With none pending, waits up to wait_ms for the first.
struct CqEvents {
  static constexpr std::string_view kOp = "cq_events";
  using Reply = CqEventsReply;
  std::optional<std::uint32_t> wait_ms{};  // 0 when not given, at most 1000
};
struct CreateQp {
  static constexpr std::string_view kOp = "create_qp";
  using Reply = CreateQpReply;
  std::string qp_type = "RC";  // RC, UC, UD
  std::uint32_t pd = 0;
  std::uint32_t send_cq = 0;
  std::uint32_t recv_cq = 0;
  std::optional<QpCap> cap{};
  std::optional<bool> sq_sig_all{};
};
struct ModifyQp {
  static constexpr std::string_view kOp = "modify_qp";
  using Reply = ModifyQpReply;
  std::uint32_t qp_num = 0;
  QpAttr attr{};
};
struct QueryQp {
  static constexpr std::string_view kOp = "query_qp";
  using Reply = QueryQpReply;
  std::uint32_t qp_num = 0;
};
struct DestroyQp {
  static constexpr std::string_view kOp = "destroy_qp";
  using Reply = Empty;
  std::uint32_t qp_num = 0;
};
struct PostSend {
  static constexpr std::string_view kOp = "post_send";
  using Reply = PostReply;
  std::uint32_t qp_num = 0;
  std::vector<SendWr> wrs{};  // posted in one call: one doorbell
};
struct PostRecv {
  static constexpr std::string_view kOp = "post_recv";
  using Reply = PostReply;
  std::uint32_t qp_num = 0;
  std::vector<RecvWr> wrs{};
};
struct Counters {
  static constexpr std::string_view kOp = "counters";
  using Reply = CountersReply;
  std::optional<std::vector<std::string>> names{};  // none: every counter
};
// The device host's kernel log lines within a window of the host's clock. An unset bound is
// open; max_lines 0 reads no line (a clock probe: now_unix_ns only).
struct KernelLog {
  static constexpr std::string_view kOp = "kernel_log";
  using Reply = KernelLogReply;
  std::optional<std::int64_t> since_unix_ns{}, until_unix_ns{};
  std::optional<std::uint32_t> max_lines{};  // 200 when not given, at most kMaxKernelLogLines
};
struct AsyncEvents {
  static constexpr std::string_view kOp = "async_events";
  using Reply = AsyncEventsReply;
};
struct Quirks {
  static constexpr std::string_view kOp = "quirks";
  using Reply = QuirksReply;
};
struct CmConnect {
  static constexpr std::string_view kOp = "cm_connect";
  using Reply = CmConnectReply;
  std::uint32_t qp_num = 0;
  std::optional<std::uint64_t> service_id{};  // or `port`, not both
  std::optional<std::uint16_t> port{};        // an rdma_cm TCP port
  std::string dgid{}, dmac{};
  std::optional<std::uint32_t> path_mtu{};
  std::optional<std::uint32_t> starting_psn{};
  std::optional<std::uint16_t> pkey{};
  std::optional<std::uint8_t> responder_resources{}, initiator_depth{}, retry_count{},
      rnr_retry_count{};
  std::optional<std::vector<std::uint8_t>> private_data{};
  std::optional<std::uint8_t> cm_response_timeout{}, max_cm_retries{}, packet_lifetime{};
};
struct CmStatus {
  static constexpr std::string_view kOp = "cm_status";
  using Reply = CmStatusReply;
  std::uint32_t qp_num = 0;
};
struct CmDisconnect {
  static constexpr std::string_view kOp = "cm_disconnect";
  using Reply = Empty;
  std::uint32_t qp_num = 0;
};
// Back to the state of a fresh session: every resource this session made is freed.
struct Reset {
  static constexpr std::string_view kOp = "reset";
  using Reply = Empty;
};

}  // namespace roceconf::control
