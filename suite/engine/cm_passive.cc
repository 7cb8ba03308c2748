#include "suite/engine/cm_passive.h"

#include <algorithm>

#include <fmt/format.h>

#include "control/field_text.h"
#include "dissector/analysis/psn.h"
#include "dissector/mad/rdma_cm.h"
#include "dissector/names.h"

namespace roceconf::engine {

CmPassive::CmPassive(Target& target, const Timing& timing, EvidenceRecorder& evidence,
                     WireSteps& wire, ControlSteps& control, CmActive& cm, TargetQps& qps,
                     PassiveTable& passive, std::mt19937_64& random)
    : target_(target),
      timing_(timing),
      evidence_(evidence),
      wire_(wire),
      control_(control),
      cm_(cm),
      qps_(qps),
      passive_(passive),
      random_(random) {}

void CmPassive::accept(Connection& c, const Assignments& a) {
  control_.require("control");
  if (passive_.contains(c.name))
    evidence_.error(fmt::format("connection '{}' was accepted already", c.name));
  std::uint32_t recv = 16, recv_len = 4096, region = 64 * 1024;
  bool rep = true;
  std::optional<std::uint32_t> psn;
  std::optional<std::uint16_t> pkey;
  // A TCP port of its own per case: a REQ a target still retries from an earlier case is not
  // taken for this one.
  std::uint64_t service_id =
      rdma_cm_service_id(rdma_cm_ps::kTcp, static_cast<std::uint16_t>(4000 + random_() % 1000));
  control::TextFields connect_fields;
  Assignments req_fields, rep_fields;
  for (const auto& item : a.items()) {
    const auto num = [&](std::uint64_t max) {
      auto n = parse_uint(item.value);
      if (!n || *n > max)
        evidence_.error(
            fmt::format("{}: '{}' is not a number up to {:#x}", item.key, item.value, max));
      return *n;
    };
    if (item.key == "rep") {
      rep = item.value != "0" && item.value != "no" && item.value != "false";
    } else if (item.key == "pmtu") {
      c.pmtu = static_cast<std::uint32_t>(num(4096));
      if (mtu_enum(c.pmtu) == 0) evidence_.error("pmtu: not 256, 512, 1024, 2048 or 4096");
      if (c.pmtu > target_.capabilities().max_pmtu)
        evidence_.skip(fmt::format("needs a path MTU of {}; the link to the target carries {}",
                                   c.pmtu, target_.capabilities().max_pmtu));
    } else if (item.key == "pkey") {
      pkey = static_cast<std::uint16_t>(num(0xFFFF));
    } else if (item.key == "psn") {
      psn = static_cast<std::uint32_t>(num(psn::kMask));
    } else if (item.key == "target_psn") {
      c.remote_psn0 = static_cast<std::uint32_t>(num(psn::kMask));
    } else if (item.key == "service_id") {
      service_id = num(UINT64_MAX);
    } else if (item.key == "port") {
      service_id = rdma_cm_service_id(rdma_cm_ps::kTcp, static_cast<std::uint16_t>(num(0xFFFF)));
    } else if (item.key == "recv") {
      recv = static_cast<std::uint32_t>(num(0xFFFF));
    } else if (item.key == "recv_len") {
      recv_len = static_cast<std::uint32_t>(num(0xFFFFFFFF));
    } else if (item.key == "region") {
      region = static_cast<std::uint32_t>(num(0xFFFFFFFF));
    } else if (item.key.starts_with("connect.")) {
      // Numbers as the case wrote them (0x.., yes/no) go as numbers.
      const auto n = parse_uint(item.value);
      connect_fields.emplace_back(item.key.substr(8), n ? std::to_string(*n) : item.value);
    } else if (item.key.starts_with("req.")) {
      req_fields.set(item.key.substr(4), item.value);
    } else {
      rep_fields.set(item.key, item.value);
    }
  }

  // The target's QP, as open() makes it, in INIT (as rdma_create_qp leaves it) so receives can be
  // posted before the connect.
  for (const char* op : {"cm_connect", "cm_status"})
    if (!control_.has_op(op))
      evidence_.skip(fmt::format("needs the control API's {} (the target's CM active side)", op));
  std::uint32_t pkey_index = 0;
  if (pkey) {
    const auto found = control_.pkey_index(*pkey);
    if (!found)
      evidence_.skip(fmt::format("needs P_Key {:#06x} in the target's P_Key table", *pkey));
    pkey_index = *found;
    c.pkey = *pkey;
  }
  qps_.make(c, {.cq_name = {},
                .recv = recv,
                .recv_len = recv_len,
                .region = region,
                .qp_access = {"REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"},
                .pkey_index = pkey_index});
  c.local_comm_id = 0;  // the tester's comes with the REP
  passive_[c.name].service_id = service_id;

  // The target connects to the tester.
  const Endpoint tester = target_.tester();
  control::CmConnect request{.qp_num = c.remote_qpn,
                             .service_id = service_id,
                             .dgid = format_ipv4(tester.ip),
                             .dmac = format_mac(tester.mac),
                             .path_mtu = c.pmtu,
                             .starting_psn = psn,
                             .pkey = c.pkey};
  if (auto set = control::set_from_text(request, connect_fields); !set)
    evidence_.error(fmt::format("accept connect.FIELD: {}", set.error()));
  if (const auto connected = control_.setup(request); connected.comm_id)
    passive_[c.name].target_comm_id = *connected.comm_id;

  // Its REQ.
  const Received got =
      wire_.expect(&c, {{"REQ", req_fields}}, timing_.expect_window(), ExpectMode::kNext);
  const CmReq& req = std::get<CmReq>(*got.packet.mad->cm);
  std::vector<report::FieldDiff> diffs;
  if (req.local_comm_id == 0) diffs.push_back({"cm.local_comm_id", "not 0", "0x0"});
  if (req.local_qpn != c.remote_qpn)
    diffs.push_back({"cm.local_qpn",
                     fmt::format("{:#x} (the QP given to cm_connect)", c.remote_qpn),
                     fmt::format("{:#x}", req.local_qpn)});
  if (req.service_id != service_id)
    diffs.push_back({"cm.service_id", fmt::format("{:#018x}", service_id),
                     fmt::format("{:#018x}", req.service_id)});
  if (req.transport_type != cm_transport::kRc)
    diffs.push_back({"cm.transport_type", "0 (RC)", std::to_string(req.transport_type)});
  if (mtu_bytes(req.path_mtu) == 0)
    diffs.push_back({"cm.path_mtu", "1-5 (256-4096 bytes)", std::to_string(req.path_mtu)});
  if (psn && (req.starting_psn & psn::kMask) != *psn)
    diffs.push_back({"cm.starting_psn", fmt::format("{:#08x} (cm_connect's)", *psn),
                     fmt::format("{:#08x}", req.starting_psn)});
  if (!diffs.empty())
    evidence_.fail("the target's REQ does not ask for the connection cm_connect named", diffs);
  const PassiveSide* info = &passive_.at(c.name);
  if (info->target_comm_id && *info->target_comm_id != req.local_comm_id)
    evidence_.note(
        fmt::format("cm_connect answered comm_id {:#x}; the REQ's Local Communication ID is {:#x}",
                    *info->target_comm_id, req.local_comm_id));
  passive_[c.name].req_seen = true;
  c.remote_comm_id = req.local_comm_id;
  c.req_tid = got.packet.mad->header.tid;
  c.service_id = req.service_id;
  c.pmtu = mtu_bytes(req.path_mtu);
  c.pkey = req.pkey;
  // IBA 12.7.23: the REQ's Starting PSN is where the passive side (the tester) sends from.
  c.local_psn0 = req.starting_psn & psn::kMask;
  c.next_psn = c.local_psn0;
  c.flow_psn = c.local_psn0;
  // The REP's resources answer the REQ's: the tester's responder takes as many reads as the
  // target's initiator depth, and issues at most the target's responder resources.
  c.responder_resources = req.initiator_depth;
  c.initiator_depth = req.responder_resources;
  do c.local_comm_id = static_cast<std::uint32_t>(random_());
  while (c.local_comm_id == 0);
  if (!rep) return;

  cm_.cm_send(c, "REP", rep_fields);
  wire_.expect(&c, {{"RTU", {}}}, timing_.expect_window(), ExpectMode::kNext);
  c.state = ConnState::kEstablished;
  Assignments established;
  established.set("state", "established");
  qps_.expect_status(c, established, timing_.expect_window());
}

}  // namespace roceconf::engine
