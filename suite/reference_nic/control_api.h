// The control API of the reference target: the capability a DUT agent gives a tester (issue 3,
// "control API"), as JSON. Create and destroy PDs, MRs, CQs and QPs, modify and query QPs, post
// sends (several WRs under one doorbell) and receives, poll CQs, fill and check memory, read
// counters and asynchronous events, and drive the CM agent's active side (cm_connect, cm_status,
// cm_disconnect). One request object in, one response object out:
//
//   {"id": 7, "op": "create_cq", "depth": 16}     ->  {"id": 7, "ok": true, "cq": 1}
//   {"id": 8, "op": "destroy_cq", "cq": 9}        ->  {"id": 8, "ok": false, "errno": "ENOENT",
//                                                      "error": "ENOENT: destroy_cq: ..."}
//
// Field names are those of libibverbs (ibv_qp_attr, ibv_send_wr, ibv_wc); enums and flags
// travel as their names without the IBV_ prefix. control/CONTROL_API.md lists every op with its
// fields; control/ops.h declares them, for this API and roceconf-agent alike. Anything wrong in a
// request — unknown op or field, missing field, wrong type, out-of-range number, unknown handle —
// gives ok = false and one line saying what; a verbs error also carries "errno". No request can
// make handle() throw.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "control/ops.h"
#include "suite/reference_nic/nic.h"

namespace roceconf::target {

// What cm_connect started, per QP (control_api.cc): the state the connect callbacks report.
struct CmStatusTable;

class ControlApi {
 public:
  // Version of the request/response format, reported by hello.
  static constexpr int kProtocolVersion = control::kProtocolVersion;

  // `unix_now` is the clock kernel_log's now_unix_ns reads (the one the NIC runs on); empty: the
  // system's real-time clock.
  explicit ControlApi(Nic& nic, std::function<std::int64_t()> unix_now = {});
  ~ControlApi();
  ControlApi(const ControlApi&) = delete;
  ControlApi& operator=(const ControlApi&) = delete;

  nlohmann::json handle(const nlohmann::json& request);
  // One JSON-lines exchange: parses `line` (malformed JSON gets an error response with a null
  // id) and returns the response serialised on one line, without the newline.
  std::string handle_line(std::string_view line);

  // Every op name, in the order hello lists them.
  static std::span<const std::string_view> ops();

  // True once after a `reset` request was answered: the owner (the in-process target, the
  // daemon) then rebuilds the NIC and this API with it, which the API cannot do to itself.
  bool take_reset_request() { return std::exchange(reset_requested_, false); }

 private:
  Nic& nic_;
  bool reset_requested_ = false;
  // Shared with the connect callbacks the CM agent keeps (they hold it weakly): a callback that
  // fires after the API is gone changes nothing.
  std::shared_ptr<CmStatusTable> cm_status_;
  std::function<std::int64_t()> unix_now_;
};

}  // namespace roceconf::target
