#include "suite/engine/control_steps.h"

#include <algorithm>

#include <fmt/format.h>

#include "suite/engine/assignments.h"

namespace roceconf::engine {

std::uint64_t pkey_value(const nlohmann::json& entry, std::uint64_t unparsable) {
  if (entry.is_number()) return entry.get<std::uint64_t>();
  if (!entry.is_string()) return unparsable;
  return parse_uint(entry.get<std::string>()).value_or(unparsable);
}

ControlSteps::ControlSteps(Target& target, EvidenceRecorder& evidence)
    : target_(target), evidence_(evidence) {}

void ControlSteps::require(std::string_view capability) {
  const Capabilities caps = target_.capabilities();
  if (capability == "responder") {
    if (!caps.responder)
      evidence_.skip(
          "needs a responder following the RCNF convention on the target's service port");
    return;
  }
  if (capability == "control") {
    if (!caps.control)
      evidence_.skip("needs the control API (reference target, daemon, or a DUT agent)");
    return;
  }
  if (capability == "pkey-limited") {
    if (!caps.control) evidence_.skip("needs the control API to choose the target QP's P_Key");
    bool limited = false, full = false;
    for (const auto& k : pkeys()) {
      const auto v = pkey_value(k, 0);
      if (v == 0x1234) limited = true;
      if (v == 0x9234) full = true;
    }
    if (!limited || !full)
      evidence_.skip("needs P_Keys 0x9234 (full) and 0x1234 (limited) in the target's P_Key table");
    return;
  }
  evidence_.error(
      fmt::format("unknown capability '{}' (responder, control, pkey-limited)", capability));
}

nlohmann::json ControlSteps::control(nlohmann::json request) {
  if (!target_.capabilities().control) evidence_.skip("needs the control API");
  auto response = target_.control(request);
  if (!response) evidence_.error("control API: " + response.error());
  std::string text = request.value("op", std::string("?"));
  nlohmann::json shown = request;
  shown.erase("op");
  shown.erase("id");
  nlohmann::json answer = *response;
  answer.erase("id");
  std::string answer_text = answer.dump();
  if (answer_text.size() > 600) answer_text = answer_text.substr(0, 600) + "...";
  evidence_.record(
      report::EventKind::kControl,
      fmt::format("{} {} -> {}", text, shown.empty() ? "" : shown.dump(), answer_text));
  return *response;
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
  std::map<std::string, std::uint64_t> out;
  const auto r = control_ok({{"op", "counters"}});
  for (const auto& [k, v] : r["counters"].items())
    if (v.is_number_unsigned()) out[k] = v.get<std::uint64_t>();
  return out;
}

std::uint32_t ControlSteps::create_cq(const std::string& name, std::uint32_t depth) {
  const std::uint32_t cq = control_ok({{"op", "create_cq"}, {"depth", depth}})["cq"];
  cqs_[name] = cq;
  return cq;
}

std::uint32_t ControlSteps::cq(const std::string& name) {
  const auto it = cqs_.find(name);
  if (it == cqs_.end()) evidence_.error(fmt::format("no CQ named '{}'", name));
  return it->second;
}

const nlohmann::json& ControlSteps::hello() {
  if (hello_.is_null()) hello_ = control_ok({{"op", "hello"}});
  return hello_;
}

bool ControlSteps::has_op(std::string_view op) {
  const auto ops = hello().find("ops");
  if (ops == hello().end() || !ops->is_array()) return true;
  return std::find(ops->begin(), ops->end(), std::string(op)) != ops->end();
}

const nlohmann::json& ControlSteps::pkeys() {
  static const nlohmann::json kNone = nlohmann::json::array();
  const auto& h = hello();
  const auto port = h.find("port");
  if (port == h.end() || !port->is_object()) return kNone;
  const auto table = port->find("pkeys");
  return table != port->end() && table->is_array() ? *table : kNone;
}

std::optional<std::uint32_t> ControlSteps::pkey_index(std::uint16_t pkey) {
  const auto& table = pkeys();
  for (std::uint32_t i = 0; i < table.size(); ++i)
    if (pkey_value(table[i], 0) == pkey) return i;
  return std::nullopt;
}

std::optional<std::uint16_t> ControlSteps::pkey_at(std::uint32_t index) {
  const auto& table = pkeys();
  if (index >= table.size()) return std::nullopt;
  return static_cast<std::uint16_t>(pkey_value(table[index], 0xFFFF));
}

}  // namespace roceconf::engine
