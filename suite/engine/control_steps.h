// The case steps that speak the target's control API (suite/reference_nic/CONTROL_API.md): one
// request with its exchange on the timeline, set-up requests that must succeed, counters, named
// CQs, and the capability checks a case makes first (require). The target's hello is asked once
// per case and kept (its P_Key table and ops).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "suite/engine/evidence_recorder.h"
#include "suite/engine/target.h"

namespace roceconf::engine {

// A P_Key table entry of a hello answer (a number, or text such as "0xffff"); `unparsable` for
// text that is not a number.
std::uint64_t pkey_value(const nlohmann::json& entry, std::uint64_t unparsable);

class ControlSteps {
 public:
  ControlSteps(Target& target, EvidenceRecorder& evidence);

  // SKIPs the case when the target lacks a capability: "responder", "control",
  // "pkey-limited" (a limited P_Key entry in the target's table). ERRORs for any other name.
  void require(std::string_view capability);

  // One control request; SKIPs without the control capability, ERRORs the case on a transport
  // failure, records the exchange.
  nlohmann::json control(nlohmann::json request);
  // Same, and ends the case INCONCLUSIVE when the target answers ok=false (a set-up step).
  nlohmann::json control_ok(nlohmann::json request);
  // The target's counters, by name.
  std::map<std::string, std::uint64_t> counters();
  // A named CQ made through control (create cq as NAME depth=N).
  std::uint32_t create_cq(const std::string& name, std::uint32_t depth);
  std::uint32_t cq(const std::string& name);  // ERRORs for a name never created

  // The target's hello answer (asked on first use).
  const nlohmann::json& hello();
  // Whether the hello lists `op` among the control ops (a target that lists none has all).
  bool has_op(std::string_view op);
  // The index of `pkey` in the target's P_Key table.
  std::optional<std::uint32_t> pkey_index(std::uint16_t pkey);
  // The P_Key at `index` of the table; nullopt past its end.
  std::optional<std::uint16_t> pkey_at(std::uint32_t index);

 private:
  const nlohmann::json& pkeys();  // the hello's P_Key table; empty when it has none

  Target& target_;
  EvidenceRecorder& evidence_;
  std::map<std::string, std::uint32_t> cqs_;
  nlohmann::json hello_;
};

}  // namespace roceconf::engine
