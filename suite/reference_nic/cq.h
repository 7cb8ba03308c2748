// Completion queues (IBA Vol 1 ch. 11, completion queue verbs; ibv_create_cq(3), ibv_poll_cq(3),
// ibv_req_notify_cq(3)): a bounded FIFO of work completions with the verbs CQE fields. Overrun
// raises the CQ_ERR async event on that CQ only and nothing more is queued on it; completion
// notification is off (polling), armed for the next completion, or armed for the next solicited
// one, and fires once per arming.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string_view>
#include <vector>

#include "control/verbs_names.h"
#include "suite/reference_nic/async_events.h"
#include "suite/reference_nic/counters.h"

namespace roceconf::target {

// Values follow enum ibv_wc_status.
enum class WcStatus : std::uint8_t {
  kSuccess = 0,
  kLocLenErr = 1,
  kLocQpOpErr = 2,
  kLocEecOpErr = 3,
  kLocProtErr = 4,
  kWrFlushErr = 5,
  kMwBindErr = 6,
  kBadRespErr = 7,
  kLocAccessErr = 8,
  kRemInvReqErr = 9,
  kRemAccessErr = 10,
  kRemOpErr = 11,
  kRetryExcErr = 12,
  kRnrRetryExcErr = 13,
  kLocRddViolErr = 14,
  kRemInvRdReqErr = 15,
  kRemAbortErr = 16,
  kInvEecnErr = 17,
  kInvEecStateErr = 18,
  kFatalErr = 19,
  kRespTimeoutErr = 20,
  kGeneralErr = 21,
};
// "SUCCESS", "WR_FLUSH_ERR", ... (the IBV_WC_ names without the prefix)
std::string_view wc_status_name(WcStatus status);
std::optional<WcStatus> wc_status_from_name(std::string_view name);

// Values follow enum ibv_wc_opcode.
enum class WcOpcode : std::uint8_t {
  kSend = 0,
  kRdmaWrite = 1,
  kRdmaRead = 2,
  kCompSwap = 3,
  kFetchAdd = 4,
  kBindMw = 5,
  kLocalInv = 6,
  kRecv = 128,
  kRecvRdmaWithImm = 129,
};
std::string_view wc_opcode_name(WcOpcode opcode);  // "SEND", "RECV_RDMA_WITH_IMM", ...
std::optional<WcOpcode> wc_opcode_from_name(std::string_view name);

// wc_flags bits; values follow enum ibv_wc_flags.
namespace wc_flag {
inline constexpr std::uint32_t kGrh = 1u << 0;      // a GRH (for RoCE: the IP header) is present
inline constexpr std::uint32_t kWithImm = 1u << 1;  // imm_data is valid
inline constexpr std::uint32_t kIpCsumOk = 1u << 2;
inline constexpr std::uint32_t kWithInv = 1u << 3;  // imm_data holds the invalidated R_Key
}  // namespace wc_flag

// struct ibv_wc. For an error completion only wr_id, status, qp_num and vendor_err are
// meaningful to an application (the target still fills opcode for readers of the evidence).
struct Cqe {
  std::uint64_t wr_id = 0;
  WcStatus status = WcStatus::kSuccess;
  WcOpcode opcode = WcOpcode::kSend;
  std::uint32_t vendor_err = 0;
  std::uint32_t byte_len = 0;
  std::uint32_t imm_data = 0;  // host order, as ibv_wc after be32toh
  std::uint32_t qp_num = 0;
  std::uint32_t src_qp = 0;  // UD receives: the sender's QPN (DETH SrcQP)
  std::uint32_t wc_flags = 0;
  std::uint16_t pkey_index = 0;  // GSI receives: the P_Key table index that matched
  std::uint16_t slid = 0;
  std::uint8_t sl = 0;
  std::uint8_t dlid_path_bits = 0;
  friend bool operator==(const Cqe&, const Cqe&) = default;
};

// The completion channel (ibv_comp_channel): where armed CQs report their completion events.
class CompChannel {
 public:
  void notify(std::uint32_t cq_handle) { events_.push_back(cq_handle); }
  // ibv_get_cq_event: the handle of the CQ that fired, oldest first.
  std::optional<std::uint32_t> get_event();
  std::size_t size() const { return events_.size(); }

 private:
  std::deque<std::uint32_t> events_;
};

enum class CqNotify : std::uint8_t { kNone, kNextComp, kSolicited };
std::string_view cq_notify_name(CqNotify mode);  // "none", "next", "solicited"

class Cq {
 public:
  // Where the CQ reports; every pointer may be null (a CQ tested alone).
  struct Env {
    AsyncEventQueue* events = nullptr;
    CompChannel* channel = nullptr;
    Counters* counters = nullptr;
    // The cq-overflow-late defect: completion depth+1 is lost silently and the overflow is
    // raised on depth+2, as a QP_FATAL on the completing QP instead of CQ_ERR.
    bool overflow_late = false;
    // The solicited-event-always defect: solicited-only arming fires on any completion.
    bool solicited_always = false;
    // The cq-stays-armed defect: an event leaves the CQ armed.
    bool stays_armed = false;
    // The cq-error-spills defect: the device's flag that one CQ overran, which stops them all.
    bool* spilled = nullptr;
  };
  enum class PushResult : std::uint8_t {
    kQueued,
    kOverflow,  // this completion overran the CQ: CQ_ERR raised now, completion lost
    kDropped,   // the CQ overran earlier: completion lost silently
  };

  Cq(std::uint32_t handle, std::uint32_t depth) : Cq(handle, depth, Env{}) {}
  Cq(std::uint32_t handle, std::uint32_t depth, Env env);

  // Adds a completion. `solicited` marks a receive completion of a message with the SE bit; an
  // error completion counts as solicited too (rxe posts flushed receives as solicited).
  PushResult push(const Cqe& cqe, bool solicited = false);

  // ibv_poll_cq: up to `max` completions, oldest first.
  std::vector<Cqe> poll(std::size_t max);
  std::optional<Cqe> poll_one();
  const std::deque<Cqe>& entries() const { return entries_; }

  // ibv_req_notify_cq: arm for the next completion, or for the next solicited one. Arming for
  // "next" while armed for solicited widens the arming; the event disarms the CQ.
  void req_notify(bool solicited_only);
  CqNotify notify_mode() const { return notify_; }
  std::uint64_t comp_events() const { return comp_events_; }  // events fired so far

  // Removes the completions of one QP (that QP moved to RESET or was destroyed, as mlx5 does).
  std::size_t purge_qp(std::uint32_t qp_num);

  std::uint32_t handle() const { return handle_; }
  std::uint32_t depth() const { return depth_; }
  std::size_t size() const { return entries_.size(); }
  bool overflowed() const { return overflowed_; }

  // QPs using this CQ (send or receive); the Device refuses to destroy a CQ in use.
  std::uint32_t use_count() const { return use_count_; }
  void attach() { ++use_count_; }
  void detach() { --use_count_; }

 private:
  std::uint32_t handle_;
  std::uint32_t depth_;
  Env env_;
  std::deque<Cqe> entries_;
  CqNotify notify_ = CqNotify::kNone;
  std::uint64_t comp_events_ = 0;
  bool overflowed_ = false;
  bool late_lost_ = false;  // overflow_late: the first overrunning completion was lost
  std::uint32_t use_count_ = 0;
};

}  // namespace roceconf::target
