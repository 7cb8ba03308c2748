#include "suite/engine/control_steps.h"

#include <algorithm>

#include <fmt/format.h>

namespace roceconf::engine {

ControlSteps::ControlSteps(Target& target, EvidenceRecorder& evidence)
    : target_(target),
      evidence_(evidence),
      client_([this](const nlohmann::json& request) -> std::expected<nlohmann::json, std::string> {
        return exchange(request);
      }) {}

void ControlSteps::require(std::string_view capability) {
  const Capabilities caps = target_.capabilities();
  if (capability == "listener") {
    if (!caps.responder) evidence_.skip("needs an rdma_cm listener on the target's service port");
    return;
  }
  if (capability == "responder") {
    if (!caps.responder)
      evidence_.skip(
          "needs a responder following the RCNF convention on the target's service port");
    needs_convention_ = true;
    if (!target_.no_convention().empty()) skip_no_convention();
    return;
  }
  if (capability == "control") {
    if (!caps.control)
      evidence_.skip("needs the control API (reference target, daemon, or a DUT agent)");
    return;
  }
  if (capability == "pkey-limited") {
    if (!caps.control) evidence_.skip("needs the control API to choose the target QP's P_Key");
    if (!pkey_index(0x1234) || !pkey_index(0x9234))
      evidence_.skip("needs P_Keys 0x9234 (full) and 0x1234 (limited) in the target's P_Key table");
    return;
  }
  if (capability == "mw-type1" || capability == "mw-type2") {
    if (!caps.control) evidence_.skip("needs the control API to allocate memory windows");
    const int type = capability == "mw-type1" ? 1 : 2;
    if (!memory_window_type(type))
      evidence_.skip(fmt::format("needs type {} memory windows: the device reports {}", type,
                                 memory_windows_text()));
    return;
  }
  if (capability == "cc") {
    // RoCEv2 congestion management (Annex A17.9.3): without it a device sends no CNP and need
    // not react to one, so the cc cases have nothing to grade.
    if (!caps.congestion_management)
      evidence_.skip(
          "not supported: the target does not declare RoCEv2 congestion management (capability "
          "cc; a raw profile's 'capabilities = ..., cc')");
    return;
  }
  if (capability == "vlan") {
    if (!target_.marking().vlan)
      evidence_.skip(
          "needs a VLAN: the tester sends untagged frames (set 'vlan = ID' in the raw profile)");
    return;
  }
  if (capability == "ipv6") {
    // RoCEv2 over IPv6 needs an IPv6 address (GID) on both ends.
    if (!target_.device().ip6)
      evidence_.skip(
          "needs IPv6: the target has no IPv6 address (set 'target_ip6 = ADDRESS' in the raw "
          "profile: an IPv6 GID of the device)");
    if (!target_.tester().ip6)
      evidence_.skip(
          "needs IPv6: the tester has no IPv6 address (set 'tester_ip6 = ADDRESS' in the raw "
          "profile)");
    return;
  }
  if (capability == "destructive") {
    if (!target_.destructive())
      evidence_.skip(
          "destructive: its input may crash or wedge the device; runs only with --destructive");
    return;
  }
  evidence_.error(fmt::format(
      "unknown capability '{}' (listener, responder, control, pkey-limited, mw-type1, mw-type2, "
      "vlan, ipv6, cc, destructive)",
      capability));
}

void ControlSteps::skip_no_convention() {
  evidence_.skip(
      fmt::format("{}: the target's REP carried no RCNF block ({}), so no receive "
                  "buffers or region are known (RESPONDER_CONVENTION.md)",
                  kNoConventionSkip, target_.no_convention()));
}

void ControlSteps::ensure_control() {
  if (!target_.capabilities().control) evidence_.skip("needs the control API");
}

void ControlSteps::broken(std::string_view op, const control::Error& e) {
  // A transport failure has ERRORed the case in exchange already.
  evidence_.error(fmt::format("control API: {}: {}", op, e.message));
}

void ControlSteps::refused(std::string_view op, const control::Error& e) {
  evidence_.inconclusive(fmt::format("set-up step {} failed on the target: {}", op, e.message));
}

// The evidence shows each exchange as `op {fields} -> {answer}`, the JSON the target saw and
// said (the answer cut at 600 characters).
nlohmann::json ControlSteps::exchange(const nlohmann::json& request) {
  auto response = target_.control(request);
  if (!response) evidence_.error("control API: " + response.error());
  const std::string text = request.value("op", std::string("?"));
  nlohmann::json shown = request;
  shown.erase("op");
  shown.erase("id");
  nlohmann::json answer = *response;
  answer.erase("id");
  std::string answer_text = answer.dump();
  if (polled_last_) {
    if (answer_text == *polled_last_) return *response;
    *polled_last_ = answer_text;
  }
  if (answer_text.size() > 600) answer_text = answer_text.substr(0, 600) + "...";
  evidence_.record(
      report::EventKind::kControl,
      fmt::format("{} {} -> {}", text, shown.empty() ? "" : shown.dump(), answer_text));
  return *response;
}

nlohmann::json ControlSteps::control(nlohmann::json request) {
  ensure_control();
  return exchange(request);
}

nlohmann::json ControlSteps::control_ok(nlohmann::json request) {
  const std::string op = request.value("op", std::string("?"));
  nlohmann::json r = control(std::move(request));
  if (!r.value("ok", false))
    evidence_.inconclusive(fmt::format("set-up step {} failed on the target: {}", op,
                                       r.value("error", std::string("no error text"))));
  return r;
}

std::map<std::string, std::uint64_t> ControlSteps::counters() {
  return setup(control::Counters{}).counters;
}

std::uint32_t ControlSteps::create_cq(const std::string& name, std::uint32_t depth) {
  const std::uint32_t cq = setup(control::CreateCq{depth}).cq;
  cqs_[name] = cq;
  return cq;
}

std::uint32_t ControlSteps::cq(const std::string& name) {
  const auto it = cqs_.find(name);
  if (it == cqs_.end()) evidence_.error(fmt::format("no CQ named '{}'", name));
  return it->second;
}

const control::HelloReply& ControlSteps::hello() {
  if (!hello_) hello_ = setup(control::Hello{});
  return *hello_;
}

bool ControlSteps::has_op(std::string_view op) {
  const auto& ops = hello().ops;
  return ops.empty() || std::ranges::find(ops, op) != ops.end();
}

// The window types hello's device.memory_windows lists (none: the device has no windows).
bool ControlSteps::memory_window_type(int type) {
  const nlohmann::json& device = hello().device;
  if (!device.is_object()) return false;
  const auto it = device.find("memory_windows");
  if (it == device.end() || !it->is_array()) return false;
  for (const auto& t : *it)
    if (t.is_number_integer() && t.get<int>() == type) return true;
  return false;
}

std::string ControlSteps::memory_windows_text() {
  const nlohmann::json& device = hello().device;
  if (!device.is_object() || !device.contains("memory_windows")) return "none";
  const nlohmann::json& list = device["memory_windows"];
  if (!list.is_array() || list.empty()) return "none";
  return "types " + list.dump();
}

std::optional<std::uint32_t> ControlSteps::pkey_index(std::uint16_t pkey) {
  const auto& port = hello().port;
  if (!port) return std::nullopt;
  const auto it = std::ranges::find(port->pkeys, pkey);
  if (it == port->pkeys.end()) return std::nullopt;
  return static_cast<std::uint32_t>(it - port->pkeys.begin());
}

std::optional<std::uint16_t> ControlSteps::pkey_at(std::uint32_t index) {
  const auto& port = hello().port;
  if (!port || index >= port->pkeys.size()) return std::nullopt;
  return port->pkeys[index];
}

}  // namespace roceconf::engine
