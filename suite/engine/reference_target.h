// The default target: the reference NIC in this process, on an in-memory port pair. Time is a
// virtual clock that starts at the real time of day and only moves when both sides wait, so
// silence windows and CM timeouts cost nothing and a run is exactly repeatable. Every reset()
// builds a fresh NIC (with the same quirks): cases cannot disturb one another.
#pragma once

#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "suite/engine/target.h"
#include "suite/reference_nic/responder_app.h"

namespace roceconf::engine {

struct ReferenceOptions {
  std::vector<std::string> quirks;  // names, as --quirk takes them
  std::uint16_t service_port = 7471;
  bool virtual_time = true;  // false: the real clock (benchmarks of the engine itself)
  // The responder application acts as a stock `rping -s` (ResponderAppConfig::stock).
  bool stock_responder = false;
};

// What the reference NIC declares of its congestion management (scope, interval, reaction).
CongestionProfile reference_congestion();

class ReferenceTarget final : public Target {
 public:
  // Fails only on an unknown quirk name (the message lists the valid ones).
  static std::expected<std::unique_ptr<ReferenceTarget>, std::string> create(
      const ReferenceOptions& options);
  ~ReferenceTarget() override;

  std::string_view kind() const override { return "reference"; }
  std::string describe() const override;
  // name "roceconf reference NIC", fw_ver (the roceconf version), node_guid, quirks, source
  // "built-in".
  std::vector<std::pair<std::string, std::string>> identity() const override;
  // Congestion management as the reference NIC models it (suite/reference_nic/congestion.h):
  // CNPs paced per QP on a 50 µs interval, a rate cut at once and recovered within a few ms.
  Capabilities capabilities() const override {
    return {.responder = true,
            .control = true,
            .congestion_management = true,
            .congestion = reference_congestion()};
  }
  roceconf::Port& port() override;
  Endpoint tester() const override;
  Endpoint device() const override;
  std::uint16_t service_port() const override { return options_.service_port; }
  std::expected<nlohmann::json, std::string> control(const nlohmann::json& request) override;
  std::expected<void, std::string> reset() override;

  struct State;

 private:
  explicit ReferenceTarget(ReferenceOptions options);
  ReferenceOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace roceconf::engine
