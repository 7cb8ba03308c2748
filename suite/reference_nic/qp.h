// Queue pairs (IBA Vol 1 10.3 QP state machine, ch. 11 QP verbs; ibv_modify_qp(3),
// ibv_post_send(3), ibv_post_recv(3)) of type RC, UC, UD and the GSI QP1: the verbs state machine
// RESET → INIT → RTR → RTS ⇄ SQD, SQE, ERR with the attributes each transition requires and
// accepts (the table of the Linux kernel's ib_modify_qp_is_ok, which encodes the IBA one), the
// send and receive work queues with their capacities, and the flush of outstanding work requests
// with WR_FLUSH_ERR when the QP enters ERR.
//
// The wire transport (requester / responder) is built on this class: it reads the attributes
// (attr()), takes receive WQEs (take_recv), walks the send queue (send_queue), completes work
// (complete_send / complete_recv) and reports transport errors (enter_error / enter_sqe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "control/verbs_names.h"
#include "suite/reference_nic/async_events.h"
#include "suite/reference_nic/cq.h"
#include "suite/reference_nic/errors.h"
#include "suite/reference_nic/memory_window.h"
#include "suite/reference_nic/mr.h"
#include "suite/reference_nic/port_tables.h"

namespace roceconf::target {

// Values follow enum ib_qp_type (GSI = 1) / enum ibv_qp_type (RC = 2, UC = 3, UD = 4).
enum class QpType : std::uint8_t { kGsi = 1, kRc = 2, kUc = 3, kUd = 4 };
std::string_view qp_type_name(QpType type);  // "RC", "UC", "UD", "GSI"
std::optional<QpType> qp_type_from_name(std::string_view name);

// Values follow enum ibv_qp_state.
enum class QpState : std::uint8_t {
  kReset = 0,
  kInit = 1,
  kRtr = 2,
  kRts = 3,
  kSqd = 4,
  kSqe = 5,
  kErr = 6,
};
std::string_view qp_state_name(QpState state);  // "RESET", "INIT", ..., "ERR"
std::optional<QpState> qp_state_from_name(std::string_view name);

// Values follow enum ibv_mig_state.
enum class MigState : std::uint8_t { kMigrated = 0, kRearm = 1, kArmed = 2 };

// Attribute mask bits; values follow enum ibv_qp_attr_mask.
using QpAttrMask = std::uint32_t;
namespace qp_attr {
inline constexpr QpAttrMask kState = 1u << 0;
inline constexpr QpAttrMask kCurState = 1u << 1;
inline constexpr QpAttrMask kEnSqdAsyncNotify = 1u << 2;
inline constexpr QpAttrMask kAccessFlags = 1u << 3;
inline constexpr QpAttrMask kPkeyIndex = 1u << 4;
inline constexpr QpAttrMask kPort = 1u << 5;
inline constexpr QpAttrMask kQkey = 1u << 6;
inline constexpr QpAttrMask kAv = 1u << 7;
inline constexpr QpAttrMask kPathMtu = 1u << 8;
inline constexpr QpAttrMask kTimeout = 1u << 9;
inline constexpr QpAttrMask kRetryCnt = 1u << 10;
inline constexpr QpAttrMask kRnrRetry = 1u << 11;
inline constexpr QpAttrMask kRqPsn = 1u << 12;
inline constexpr QpAttrMask kMaxQpRdAtomic = 1u << 13;
inline constexpr QpAttrMask kAltPath = 1u << 14;
inline constexpr QpAttrMask kMinRnrTimer = 1u << 15;
inline constexpr QpAttrMask kSqPsn = 1u << 16;
inline constexpr QpAttrMask kMaxDestRdAtomic = 1u << 17;
inline constexpr QpAttrMask kPathMigState = 1u << 18;
inline constexpr QpAttrMask kCap = 1u << 19;
inline constexpr QpAttrMask kDestQpn = 1u << 20;
}  // namespace qp_attr

// "PKEY_INDEX, PORT, ACCESS_FLAGS" (IBV_QP_ names without the prefix), in bit order.
std::string qp_attr_mask_names(QpAttrMask mask);
// A mask bit from its name ("PATH_MTU") or from the QpAttr field it sets ("path_mtu", "ah_attr",
// "qp_access_flags"): the control API builds masks from the JSON fields it is given.
std::optional<QpAttrMask> qp_attr_mask_from_name(std::string_view name);

// The primary path of a connected QP (ibv_ah_attr with its RoCE parts), or the destination of a
// UD send. On RoCEv2 the GRH fields become IP fields: hop_limit is the IPv4 TTL / IPv6 hop limit,
// traffic_class the IPv4 TOS / IPv6 traffic class.
struct AddressVector {
  Gid dgid{};                    // ::ffff:a.b.c.d for an IPv4 peer
  std::uint32_t flow_label = 0;  // 20 bits; 0 = derive from the QPNs (rdma_calc_flow_label)
  std::uint8_t sgid_index = 0;   // our source GID (and so the source IP) in the GID table
  std::uint8_t hop_limit = 64;
  std::uint8_t traffic_class = 0;
  std::uint8_t sl = 0;  // 802.1Q PCP when the port tags frames
  std::uint8_t port_num = 1;
  std::uint8_t static_rate = 0;
  MacAddress dmac{};
  std::uint16_t udp_sport = 0;  // 0 = derive from the flow label, fixed at modify time
  friend bool operator==(const AddressVector&, const AddressVector&) = default;
};

// RoCEv2 UDP source-port entropy as Linux computes it (spec-facts §1.1).
std::uint32_t rdma_calc_flow_label(std::uint32_t lqpn, std::uint32_t rqpn);
std::uint16_t rdma_flow_label_to_udp_sport(std::uint32_t flow_label);

struct QpCap {
  std::uint32_t max_send_wr = 0;
  std::uint32_t max_recv_wr = 0;
  std::uint32_t max_send_sge = 1;
  std::uint32_t max_recv_sge = 1;
  std::uint32_t max_inline_data = 0;
  friend bool operator==(const QpCap&, const QpCap&) = default;
};

// struct ibv_qp_attr. Fields are meaningful once a transition has set them.
struct QpAttr {
  QpState qp_state = QpState::kReset;
  QpState cur_qp_state = QpState::kReset;
  PathMtu path_mtu = PathMtu::k1024;
  MigState path_mig_state = MigState::kMigrated;
  std::uint32_t qkey = 0;
  std::uint32_t rq_psn = 0;
  std::uint32_t sq_psn = 0;
  std::uint32_t dest_qp_num = 0;
  AccessFlags qp_access_flags = 0;  // remote rights of incoming requests (RC/UC)
  QpCap cap;                        // read-only here: set at creation
  AddressVector ah_attr;
  AddressVector alt_ah_attr;  // APM is InfiniBand-only; RoCE rejects ALT_PATH
  std::uint16_t pkey_index = 0;
  std::uint16_t alt_pkey_index = 0;
  bool en_sqd_async_notify = false;
  bool sq_draining = false;
  std::uint8_t max_rd_atomic = 0;       // READ/atomics we may have outstanding as requester
  std::uint8_t max_dest_rd_atomic = 0;  // responder resources for the peer's READ/atomics
  std::uint8_t min_rnr_timer = 0;       // 5-bit code sent in our RNR NAKs
  std::uint8_t port_num = 1;
  std::uint8_t timeout = 0;    // local ACK timeout: 4.096 µs × 2^timeout, 0 = infinite
  std::uint8_t retry_cnt = 0;  // 0..7
  std::uint8_t rnr_retry = 0;  // 0..7, 7 = infinite
  std::uint8_t alt_port_num = 0;
  std::uint8_t alt_timeout = 0;
};

struct QpInit {
  QpType qp_type = QpType::kRc;
  std::uint32_t pd = 0;
  std::uint32_t send_cq = 0;
  std::uint32_t recv_cq = 0;
  QpCap cap;
  bool sq_sig_all = false;  // every send WR completes with a CQE, not only SIGNALED ones
};

// Device limits a QP is checked against (from ibv_device_attr).
struct QpLimits {
  std::uint32_t max_qp_wr = 16384;
  std::uint32_t max_sge = 32;
  std::uint32_t max_inline_data = 256;
  std::uint8_t max_qp_rd_atom = 128;       // bound for max_dest_rd_atomic
  std::uint8_t max_qp_init_rd_atom = 128;  // bound for max_rd_atomic
};

// ---- transitions -----------------------------------------------------------------------------

struct TransitionRule {
  QpAttrMask required = 0;  // besides STATE
  QpAttrMask optional = 0;
};
// The rule for from → to on a QP of `type`; nullopt when the transition is illegal. Beside the
// kernel table, RESET → ERR is legal: IBA lets modify_qp move a QP to ERR from any state (mlx4
// emulated it for that reason); the Linux table leaves it out.
std::optional<TransitionRule> qp_transition(QpType type, QpState from, QpState to);
// States reachable from `from` by modify_qp, in enum order.
std::vector<QpState> qp_next_states(QpType type, QpState from);

// ---- work requests ---------------------------------------------------------------------------

// Values follow enum ibv_wr_opcode.
enum class WrOpcode : std::uint8_t {
  kRdmaWrite = 0,
  kRdmaWriteWithImm = 1,
  kSend = 2,
  kSendWithImm = 3,
  kRdmaRead = 4,
  kAtomicCmpAndSwp = 5,
  kAtomicFetchAndAdd = 6,
  kLocalInv = 7,
  kBindMw = 8,
  kSendWithInv = 9,
};
std::string_view wr_opcode_name(WrOpcode opcode);
// BIND_MW and LOCAL_INV: work of the send queue that sends nothing.
inline bool is_local_op(WrOpcode opcode) {
  return opcode == WrOpcode::kLocalInv || opcode == WrOpcode::kBindMw;
}  // "RDMA_WRITE_WITH_IMM", ...
std::optional<WrOpcode> wr_opcode_from_name(std::string_view name);
// The completion opcode of a send WR (SEND_WITH_IMM -> SEND, ...).
WcOpcode wc_opcode_of(WrOpcode opcode);

// send_flags bits; values follow enum ibv_send_flags.
namespace send_flag {
inline constexpr std::uint32_t kFence = 1u << 0;
inline constexpr std::uint32_t kSignaled = 1u << 1;
inline constexpr std::uint32_t kSolicited = 1u << 2;
inline constexpr std::uint32_t kInline = 1u << 3;
}  // namespace send_flag

struct SendWr {
  std::uint64_t wr_id = 0;
  WrOpcode opcode = WrOpcode::kSend;
  std::uint32_t send_flags = 0;
  std::vector<Sge> sg_list;
  // With send_flag::kInline the payload is these bytes, copied at post time as verbs does; the
  // SGEs are ignored.
  std::vector<std::uint8_t> inline_data;
  std::uint32_t imm_data = 0;         // host order
  std::uint32_t invalidate_rkey = 0;  // SEND_WITH_INV, LOCAL_INV
  MwBind bind_mw;                     // BIND_MW
  struct Rdma {
    std::uint64_t remote_addr = 0;
    std::uint32_t rkey = 0;
  } rdma;
  struct Atomic {
    std::uint64_t remote_addr = 0;
    std::uint64_t compare_add = 0;
    std::uint64_t swap = 0;
    std::uint32_t rkey = 0;
  } atomic;
  // UD: the address vector travels with each WR (verbs passes an address handle).
  struct Ud {
    AddressVector ah;
    std::uint32_t remote_qpn = 0;
    std::uint32_t remote_qkey = 0;
  } ud;

  // Payload length: the inline bytes or the sum of the SGE lengths.
  std::uint64_t length() const;
};

struct RecvWr {
  std::uint64_t wr_id = 0;
  std::vector<Sge> sg_list;
};

// A posted send WR. Each WR of a post_send call is its own WQE (nothing shared or merged);
// `doorbell` numbers the post_send call it came with, `seq` the WQE in post order.
struct SendWqe {
  SendWr wr;
  std::uint64_t seq = 0;
  std::uint64_t doorbell = 0;
  bool started = false;  // set by the requester once the first packet went out
};

struct RecvWqe {
  RecvWr wr;
  std::uint64_t seq = 0;
  std::uint64_t doorbell = 0;
};

// ibv_post_send / ibv_post_recv fail at the first bad WR: the ones before it stay posted.
struct PostError {
  std::size_t bad_wr = 0;  // index into the posted list
  VerbsError error;
};
using PostResult = std::expected<void, PostError>;

// ---- the queue pair --------------------------------------------------------------------------

class Qp {
 public:
  struct Env {
    const Port* port = nullptr;  // GID / P_Key tables and MTUs to validate against
    const QpLimits* limits = nullptr;
    AsyncEventQueue* events = nullptr;
    // The illegal-transition-accepted defect: RESET→RTS is taken like a legal transition.
    bool accept_reset_to_rts = false;
    // The post-before-ready defect: WRs posted before the QP can take them are queued.
    bool accept_post_before_ready = false;
    // The cq-overrun-keeps-qp defect: a send CQ overrun leaves the QP as it was.
    bool overflow_keeps_qp = false;
  };

  // The Device checks `init` (validate_init) and owns the CQs for the QP's lifetime.
  Qp(std::uint32_t qp_num, const QpInit& init, Cq& send_cq, Cq& recv_cq, Env env);

  static VerbsResult<void> validate_init(const QpInit& init, const QpLimits& limits);

  // ibv_modify_qp: all-or-nothing; EINVAL names the missing, unexpected or bad attribute.
  VerbsResult<void> modify(const QpAttr& attr, QpAttrMask mask);
  // ibv_query_qp: every attribute, with cur_qp_state = qp_state and the creation caps.
  QpAttr query() const;
  const QpInit& init_attr() const { return init_; }

  PostResult post_send(std::span<const SendWr> wrs);
  PostResult post_recv(std::span<const RecvWr> wrs);

  std::uint32_t qp_num() const { return qp_num_; }
  QpType qp_type() const { return init_.qp_type; }
  QpState state() const { return attr_.qp_state; }
  std::uint32_t pd() const { return init_.pd; }
  const QpAttr& attr() const { return attr_; }
  Cq& send_cq() { return send_cq_; }
  Cq& recv_cq() { return recv_cq_; }
  // The QP's P_Key (the port table entry at pkey_index).
  std::optional<std::uint16_t> pkey() const;
  std::uint32_t path_mtu_bytes() const { return target::path_mtu_bytes(attr_.path_mtu); }
  // Responder side open: RTR, RTS, SQD, SQE (requests are accepted from RTR on).
  bool can_receive() const;
  // Requester may start new send WQEs: RTS only (SQD finishes what it started).
  bool can_send() const { return attr_.qp_state == QpState::kRts; }

  // ---- for the transport ----
  std::deque<SendWqe>& send_queue() { return sq_; }
  const std::deque<SendWqe>& send_queue() const { return sq_; }
  const std::deque<RecvWqe>& recv_queue() const { return rq_; }
  // The oldest receive WQE (a SEND's first packet consumes it); nullopt → RNR.
  std::optional<RecvWqe> take_recv();
  // Completes the oldest send WQE with `status`: a CQE when it is signaled (or sq_sig_all) or
  // failed; fills wr_id, qp_num and opcode. Ends an SQ drain when it was the last one started.
  std::optional<SendWqe> complete_send(WcStatus status, std::uint32_t byte_len = 0,
                                       std::uint32_t vendor_err = 0);
  // Posts a receive completion for `wqe`; fills wr_id and qp_num into `cqe`.
  void complete_recv(const RecvWqe& wqe, Cqe cqe, bool solicited);
  // A transport error moves the QP to ERR (flush) and raises `event` (QP_FATAL, QP_REQ_ERR,
  // QP_ACCESS_ERR) when given.
  void enter_error(std::optional<AsyncEventType> event = std::nullopt);
  // A UC/UD send error: SQE flushes the send queue, the receive side keeps working.
  void enter_sqe();
  void raise(AsyncEventType type);

 private:
  VerbsResult<void> check_values(const QpAttr& attr, QpAttrMask mask) const;
  VerbsResult<void> check_send_wr(const SendWr& wr) const;
  void apply(const QpAttr& attr, QpAttrMask mask);
  void flush_send_queue();
  void flush_recv_queue();
  void flush_send(const SendWqe& wqe);
  void flush_recv(const RecvWqe& wqe);
  void maybe_drained();
  void reset();

  std::uint32_t qp_num_;
  QpInit init_;
  Cq& send_cq_;
  Cq& recv_cq_;
  Env env_;
  QpAttr attr_;
  std::deque<SendWqe> sq_;
  std::deque<RecvWqe> rq_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t next_doorbell_ = 0;
};

}  // namespace roceconf::target
