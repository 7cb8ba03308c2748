#include "suite/engine/target_qp.h"

#include <algorithm>

#include <fmt/format.h>

#include "dissector/analysis/psn.h"
#include "dissector/names.h"
#include "suite/engine/timing.h"

namespace roceconf::engine {

TargetQps::TargetQps(Target& target, EvidenceRecorder& evidence, ControlSteps& control,
                     WireSteps& wire, const PassiveTable& passive)
    : target_(target), evidence_(evidence), control_(control), wire_(wire), passive_(passive) {}

void TargetQps::make(Connection& c, const TargetQpSpec& spec) {
  const std::uint32_t pd = control_.control_ok({{"op", "alloc_pd"}})["pd"];
  const std::uint32_t cq =
      spec.cq_name.empty()
          ? control_.control_ok({{"op", "create_cq"}, {"depth", 256}})["cq"].get<std::uint32_t>()
          : control_.cq(spec.cq_name);
  const nlohmann::json qp = control_.control_ok(
      {{"op", "create_qp"},
       {"qp_type", "RC"},
       {"pd", pd},
       {"send_cq", cq},
       {"recv_cq", cq},
       {"cap", {{"max_send_wr", 64}, {"max_recv_wr", std::max<std::uint32_t>(spec.recv, 64)}}}});
  c.remote_qpn = qp["qp_num"];
  c.target_cq = cq;
  c.target_pd = pd;
  c.via_control = true;
  const nlohmann::json mr = control_.control_ok(
      {{"op", "reg_mr"}, {"pd", pd}, {"length", spec.region}, {"access", spec.region_access}});
  c.region = RemoteRegion{mr["addr"].get<std::uint64_t>(),
                          mr["rkey"].get<std::uint32_t>(),
                          spec.region,
                          spec.recv,
                          spec.recv_len,
                          mr["handle"].get<std::uint32_t>()};
  control_.control_ok({{"op", "modify_qp"},
                       {"qp_num", c.remote_qpn},
                       {"attr",
                        {{"qp_state", "INIT"},
                         {"pkey_index", spec.pkey_index},
                         {"port_num", 1},
                         {"qp_access_flags", spec.qp_access}}}});
  if (spec.recv == 0) return;
  const nlohmann::json buffers = control_.control_ok({{"op", "reg_mr"},
                                                      {"pd", pd},
                                                      {"length", spec.recv * spec.recv_len},
                                                      {"access", {"LOCAL_WRITE"}}});
  nlohmann::json wrs = nlohmann::json::array();
  for (std::uint32_t i = 0; i < spec.recv; ++i)
    wrs.push_back(
        {{"wr_id", i},
         {"sg_list",
          {{{"addr", buffers["addr"].get<std::uint64_t>() + std::uint64_t{i} * spec.recv_len},
            {"length", spec.recv_len},
            {"lkey", buffers["lkey"]}}}}});
  control_.control_ok({{"op", "post_recv"}, {"qp_num", c.remote_qpn}, {"wrs", wrs}});
}

void TargetQps::open(Connection& c, const Assignments& a) {
  control_.require("control");
  std::uint32_t pkey_index = 0, recv = 16, recv_len = 4096, region = 64 * 1024;
  std::uint32_t min_rnr_timer = 1, max_dest_rd_atomic = 4;
  std::string cq_name;
  nlohmann::json access = {"LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"};
  nlohmann::json qp_access = {"REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"};
  for (const auto& item : a.items()) {
    const auto num = [&]() {
      auto n = parse_uint(item.value);
      if (!n || *n > 0xFFFFFFFF)
        evidence_.error(fmt::format("{}: '{}' is not a number", item.key, item.value));
      return static_cast<std::uint32_t>(*n);
    };
    if (item.key == "pmtu") {
      c.pmtu = num();
      if (mtu_enum(c.pmtu) == 0) evidence_.error("pmtu: not 256, 512, 1024, 2048 or 4096");
      if (c.pmtu > target_.capabilities().max_pmtu)
        evidence_.skip(fmt::format("needs a path MTU of {}; the link to the target carries {}",
                                   c.pmtu, target_.capabilities().max_pmtu));
    } else if (item.key == "target_psn") {
      c.remote_psn0 = num() & psn::kMask;
    } else if (item.key == "pkey_index")
      pkey_index = num();
    else if (item.key == "psn") {
      c.local_psn0 = num() & psn::kMask;
      c.next_psn = c.local_psn0;
    } else if (item.key == "recv")
      recv = num();
    else if (item.key == "recv_len")
      recv_len = num();
    else if (item.key == "region")
      region = num();
    else if (item.key == "cq")
      cq_name = item.value;
    else if (item.key == "min_rnr_timer")
      min_rnr_timer = num();
    else if (item.key == "max_dest_rd_atomic")
      max_dest_rd_atomic = num();
    else if (item.key == "access") {
      qp_access = nlohmann::json::array();
      std::string_view rest = item.value;
      while (!rest.empty()) {
        const auto comma = rest.find(',');
        const auto flag = rest.substr(0, comma);
        if (flag != "none") qp_access.push_back(std::string(flag));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      }
    } else
      evidence_.error(fmt::format("unknown option '{}' for open", item.key));
  }
  make(c, {.cq_name = cq_name,
           .recv = recv,
           .recv_len = recv_len,
           .region = region,
           .region_access = access,
           .qp_access = qp_access,
           .pkey_index = pkey_index});
  const Endpoint tester = target_.tester();
  control_.control_ok({{"op", "modify_qp"},
                       {"qp_num", c.remote_qpn},
                       {"attr",
                        {{"qp_state", "RTR"},
                         {"path_mtu", c.pmtu},
                         {"dest_qp_num", c.local_qpn},
                         {"rq_psn", c.local_psn0},
                         {"max_dest_rd_atomic", max_dest_rd_atomic},
                         {"min_rnr_timer", min_rnr_timer},
                         {"ah_attr",
                          {{"dgid", format_ipv4(tester.ip)},
                           {"dmac", format_mac(tester.mac)},
                           {"hop_limit", 64}}}}}});
  control_.control_ok({{"op", "modify_qp"},
                       {"qp_num", c.remote_qpn},
                       {"attr",
                        {{"qp_state", "RTS"},
                         {"sq_psn", c.remote_psn0},
                         {"timeout", 14},
                         {"retry_cnt", 7},
                         {"rnr_retry", 7},
                         {"max_rd_atomic", 4}}}});
  c.pkey = control_.pkey_at(pkey_index).value_or(0xFFFF);
  c.state = ConnState::kEstablished;
}

void TargetQps::expect_status(Connection& c, const Assignments& want, TimeNs window) {
  if (!passive_.contains(c.name))
    evidence_.error(
        fmt::format("status: '{}' is not a connection the target made (accept)", c.name));
  const TimeNs deadline = add_saturating(wire_.now(), window);
  const nlohmann::json request = {{"op", "cm_status"}, {"qp_num", c.remote_qpn}};
  std::string last_answer;
  for (;;) {
    // Asked every few ms: only answers that differ from the one before go on the timeline.
    auto response = target_.control(request);
    if (!response) evidence_.error("control API: " + response.error());
    nlohmann::json r = *response;
    r.erase("id");
    if (const std::string text = r.dump(); text != last_answer) {
      evidence_.record(report::EventKind::kControl,
                       fmt::format("cm_status {{\"qp_num\":{}}} -> {}", c.remote_qpn, text));
      last_answer = text;
    }
    if (!r.value("ok", false))
      evidence_.inconclusive(fmt::format("cm_status failed on the target: {}",
                                         r.value("error", std::string("no error text"))));
    std::vector<report::FieldDiff> diffs;
    for (const auto& [key, value] : want.items()) {
      const std::string field = "cm_status." + key;
      if (!r.contains(key)) {
        diffs.push_back({field, value, "(absent)"});
        continue;
      }
      const auto& v = r[key];
      if (v.is_number_unsigned()) {
        const auto n = parse_uint(value);
        if (!n || *n != v.get<std::uint64_t>())
          diffs.push_back({field, value, std::to_string(v.get<std::uint64_t>())});
      } else if (!v.is_string() || v.get<std::string>() != value) {
        diffs.push_back({field, value, v.is_string() ? v.get<std::string>() : v.dump()});
      }
    }
    if (diffs.empty()) return;
    if (wire_.now() >= deadline)
      evidence_.fail(fmt::format("cm_status of {} within {} ms: {}", c.name, window / kMillisecond,
                                 last_answer),
                     diffs);
    wire_.wait(std::min<TimeNs>(5 * kMillisecond, deadline - wire_.now()));
  }
}

}  // namespace roceconf::engine
