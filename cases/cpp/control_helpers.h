// What the C++ cases share to drive the target's control API: set-up and must-succeed calls,
// QP states and completions compared, memory regions, send WRs, and an RC QP brought up step by
// step towards the tester's emulated QP.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "control/messages.h"
#include "suite/engine/case_context.h"

namespace roceconf::cases::ctlcase {

using engine::CaseContext;
using engine::Connection;
namespace ctl = control;

// The target's control API as the cases use it: set-up steps through CaseContext::setup (a
// refusal is INCONCLUSIVE), the step under test through must (a refusal FAILs).
class Control {
 public:
  explicit Control(CaseContext& ctx) : ctx_(ctx) {}

  template <typename Request>
  typename Request::Reply setup(const Request& request) {
    return ctx_.setup(request);
  }
  template <typename Request>
  typename Request::Reply must(const Request& request, std::string_view what) {
    auto reply = ctx_.call(request);  // ERRORs the case unless the answer is a refusal
    if (!reply) {
      const ctl::Error& e = reply.error();
      ctx_.fail(fmt::format("{}: refused ({})", what, e.message),
                {{std::string(what), "ok", e.errno_name.empty() ? "error" : e.errno_name}});
    }
    return std::move(*reply);
  }

 private:
  CaseContext& ctx_;
};

std::string pattern_hex(std::uint32_t seed, std::size_t len);

// The QP's state from query_qp must be `want`.
void expect_state(CaseContext& ctx, const Connection& c, std::string_view want);

// What a completion must have; fields left empty are not compared.
struct WcWant {
  std::optional<std::uint64_t> wr_id = std::nullopt;
  std::optional<std::string> status = std::nullopt;
  std::optional<std::string> opcode = std::nullopt;
  std::optional<std::uint32_t> byte_len = std::nullopt;
  std::optional<std::uint32_t> qp_num = std::nullopt;
};
// The next completion of `cq` must have these fields.
ctl::WorkCompletion expect_wc(CaseContext& ctx, std::uint32_t cq, const WcWant& want);
void expect_cq_empty(CaseContext& ctx, std::uint32_t cq);

// A memory region registered through control: buffers for the target's own work requests, or a
// region with chosen rights.
ctl::RegMrReply reg_mr(CaseContext& ctx, std::uint32_t pd, std::uint32_t length,
                       std::vector<std::string> access);
void write_mr(CaseContext& ctx, const ctl::RegMrReply& mr, std::uint64_t offset,
              std::span<const std::uint8_t> data);
std::string read_mr(CaseContext& ctx, const ctl::RegMrReply& mr, std::uint64_t offset,
                    std::uint64_t len);
ctl::SendWr send_wr(std::uint64_t wr_id, const ctl::RegMrReply& mr, std::uint64_t offset,
                    std::uint32_t length);

// A 64-byte WRITE at PSN `psn` through `mr`'s R_Key must get NAK remote access error and leave
// the region's first 64 bytes the pattern `fill` wrote; `changed` is the failure when it did not.
void expect_write_refused(CaseContext& ctx, Connection& c, const ctl::RegMrReply& mr,
                          std::uint32_t psn, std::uint32_t fill, std::string_view changed);

// The attributes of the three transitions RESET->INIT->RTR->RTS towards the tester's QP `c`.
ctl::QpAttr state_attr(std::string state);
ctl::QpAttr init_attr();
ctl::QpAttr rtr_attr(CaseContext& ctx, const Connection& c);
ctl::QpAttr rts_attr(std::uint32_t sq_psn);

// An RC QP on the given CQ, in RESET, recorded in `c` (so close_all destroys it).
void create_rc_qp(CaseContext& ctx, Connection& c, std::uint32_t pd, std::uint32_t cq,
                  std::uint32_t max_recv);
// RESET -> RTS as set-up (a refusal makes the case INCONCLUSIVE).
void bring_up(CaseContext& ctx, Connection& c, std::uint32_t sq_psn);
// INIT -> RTR -> RTS with a random sq_psn, as set-up.
void bring_up_from_init(CaseContext& ctx, Connection& c);
void post_recvs(CaseContext& ctx, const Connection& c, const ctl::RegMrReply& mr,
                std::uint32_t count, std::uint32_t len);
// The tester's ACK of the target's request with PSN `psn` (relative to the target's start).
void ack(CaseContext& ctx, Connection& c, std::uint32_t psn, std::uint32_t msn);

}  // namespace roceconf::cases::ctlcase
