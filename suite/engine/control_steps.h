// The case steps that speak the target's control API (control/CONTROL_API.md) through the typed
// client (control/client.h): one request with its exchange on the timeline, set-up requests that
// must succeed, counters, named CQs, and the capability checks a case makes first (require). The
// target's hello is asked once per case and kept (its P_Key table and ops).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "control/client.h"
#include "control/messages.h"
#include "suite/engine/evidence_recorder.h"
#include "suite/engine/target.h"

namespace roceconf::engine {

class ControlSteps {
 public:
  ControlSteps(Target& target, EvidenceRecorder& evidence);

  // SKIPs the case when the target lacks a capability: "listener" (an rdma_cm listener on the
  // service port), "responder" (one that follows the RCNF convention), "control",
  // "pkey-limited" (a limited P_Key entry in the target's table), "mw-type1"/"mw-type2" (memory
  // windows of that type, from hello's device.memory_windows), "vlan" (the tester tags its
  // frames), "ipv6" (the target and the tester each have an IPv6 address), "cc" (RoCEv2
  // congestion management: CNPs and rate reaction). ERRORs for any other name.
  void require(std::string_view capability);
  // Whether this case required "responder": a REP without an RCNF block then SKIPs it.
  bool needs_convention() const { return needs_convention_; }
  // SKIPs the case: the target's responder follows no RCNF convention (target.no_convention()).
  [[noreturn]] void skip_no_convention();

  // One request of control/messages.h; SKIPs without the control capability, ERRORs the case
  // when the exchange fails or the answer is malformed, records the exchange. A refusal
  // (ok=false) is the result's error.
  template <typename Request>
  control::Result<typename Request::Reply> call(const Request& request) {
    ensure_control();
    auto reply = client_.call(request);
    if (!reply && reply.error().kind != control::Error::Kind::kRefused)
      broken(Request::kOp, reply.error());
    return reply;
  }
  // Same, and ends the case INCONCLUSIVE when the target refuses (a set-up step).
  template <typename Request>
  typename Request::Reply setup(const Request& request) {
    auto reply = call(request);
    if (!reply) refused(Request::kOp, reply.error());
    return std::move(*reply);
  }
  // As call, for a request asked again every few ms: the exchange goes on the timeline only when
  // its answer differs from `last` (the answer's text before; updated).
  template <typename Request>
  control::Result<typename Request::Reply> call_polled(const Request& request, std::string& last) {
    polled_last_ = &last;
    struct Reset {
      std::string** p;
      ~Reset() { *p = nullptr; }
    } reset{&polled_last_};
    return call(request);
  }

  // Any request object, as a Python or C++ case writes it; recorded as call's. control_ok ends
  // the case INCONCLUSIVE when the target answers ok=false.
  nlohmann::json control(nlohmann::json request);
  nlohmann::json control_ok(nlohmann::json request);

  // The target's counters, by name.
  std::map<std::string, std::uint64_t> counters();
  // A named CQ made through control (create cq as NAME depth=N).
  std::uint32_t create_cq(const std::string& name, std::uint32_t depth);
  std::uint32_t cq(const std::string& name);  // ERRORs for a name never created

  // The target's hello answer (asked on first use).
  const control::HelloReply& hello();
  // Whether hello's device.memory_windows lists window type `type` (1 or 2), and the list as
  // text for a SKIP reason.
  bool memory_window_type(int type);
  std::string memory_windows_text();
  // Whether the hello lists `op` among the control ops (a target that lists none has all).
  bool has_op(std::string_view op);
  // The index of `pkey` in the target's P_Key table.
  std::optional<std::uint32_t> pkey_index(std::uint16_t pkey);
  // The P_Key at `index` of the table; nullopt past its end.
  std::optional<std::uint16_t> pkey_at(std::uint32_t index);

 private:
  void ensure_control();  // SKIPs without the control capability
  [[noreturn]] void broken(std::string_view op, const control::Error& e);
  [[noreturn]] void refused(std::string_view op, const control::Error& e);
  // The typed client's transport: one exchange with the target, recorded.
  nlohmann::json exchange(const nlohmann::json& request);

  Target& target_;
  EvidenceRecorder& evidence_;
  control::Client client_;
  std::string* polled_last_ = nullptr;  // call_polled's answer text, while it runs
  bool needs_convention_ = false;
  std::map<std::string, std::uint32_t> cqs_;
  std::optional<control::HelloReply> hello_;
};

}  // namespace roceconf::engine
