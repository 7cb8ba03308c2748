#include "suite/engine/target_qp.h"

#include <algorithm>

#include <fmt/format.h>

#include "control/field_text.h"
#include "dissector/analysis/psn.h"
#include "dissector/names.h"
#include "suite/engine/script_check.h"
#include "suite/engine/timing.h"

namespace roceconf::engine {

TargetQps::TargetQps(Target& target, EvidenceRecorder& evidence, ControlSteps& control,
                     WireSteps& wire, const PassiveTable& passive)
    : target_(target), evidence_(evidence), control_(control), wire_(wire), passive_(passive) {}

void TargetQps::make(Connection& c, const TargetQpSpec& spec) {
  const std::uint32_t pd = control_.setup(control::AllocPd{}).pd;
  const std::uint32_t cq =
      spec.cq_name.empty() ? control_.setup(control::CreateCq{256}).cq : control_.cq(spec.cq_name);
  control::CreateQp qp{.qp_type = spec.qp_type, .pd = pd, .send_cq = cq, .recv_cq = cq};
  qp.cap = control::QpCap{.max_send_wr = 64, .max_recv_wr = std::max<std::uint32_t>(spec.recv, 64)};
  c.remote_qpn = control_.setup(qp).qp_num;
  c.target_cq = cq;
  c.target_pd = pd;
  c.via_control = true;
  const auto mr =
      control_.setup(control::RegMr{.pd = pd, .length = spec.region, .access = spec.region_access});
  c.region =
      RemoteRegion{mr.addr, mr.rkey, spec.region, spec.recv, spec.recv_len, mr.handle, mr.lkey};
  control::QpAttr init;
  init.qp_state = "INIT";
  init.pkey_index = static_cast<std::uint16_t>(spec.pkey_index);
  init.port_num = 1;
  init.qp_access_flags = spec.qp_access;
  control_.setup(control::ModifyQp{c.remote_qpn, init});
  if (spec.recv == 0) return;
  const auto buffers = control_.setup(control::RegMr{
      .pd = pd, .length = std::uint64_t{spec.recv} * spec.recv_len, .access = {"LOCAL_WRITE"}});
  control::PostRecv post{.qp_num = c.remote_qpn, .wrs = {}};
  for (std::uint32_t i = 0; i < spec.recv; ++i)
    post.wrs.push_back({.wr_id = i,
                        .sg_list = {{.addr = buffers.addr + std::uint64_t{i} * spec.recv_len,
                                     .length = spec.recv_len,
                                     .lkey = buffers.lkey}}});
  control_.setup(post);
}

void TargetQps::open(Connection& c, const Assignments& a) {
  control_.require("control");
  std::uint32_t pkey_index = 0, recv = 16, recv_len = 4096, region = 64 * 1024;
  std::uint32_t min_rnr_timer = 1, max_dest_rd_atomic = 4;
  // The requester's attributes (RTS): local ACK timeout 14 (67 ms), retries without limit.
  std::uint32_t timeout = 14, retry_cnt = 7, rnr_retry = 7, max_rd_atomic = 4;
  std::string cq_name, qp_type = "RC";
  std::vector<std::string> access = {"LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"};
  std::vector<std::string> qp_access = {"REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"};
  for (const auto& item : a.items()) {
    const auto num = [&]() {
      auto n = parse_uint(item.value);
      if (!n || *n > 0xFFFFFFFF)
        evidence_.error(fmt::format("{}: '{}' is not a number", item.key, item.value));
      return static_cast<std::uint32_t>(*n);
    };
    if (item.key == "gid") {
      if (item.value != "ipv4" && item.value != "ipv6")
        evidence_.error(fmt::format("gid: '{}' is not ipv4 or ipv6", item.value));
      c.ipv6 = item.value == "ipv6";
      if (c.ipv6) control_.require("ipv6");
    } else if (item.key == "pmtu") {
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
      c.flow_psn = c.local_psn0;
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
    else if (item.key == "timeout")
      timeout = num();
    else if (item.key == "retry_cnt")
      retry_cnt = num();
    else if (item.key == "rnr_retry")
      rnr_retry = num();
    else if (item.key == "max_rd_atomic")
      max_rd_atomic = num();
    else if (item.key == "type") {
      if (item.value != "rc" && item.value != "uc")
        evidence_.error(fmt::format("type: '{}' is not rc or uc", item.value));
      qp_type = item.value == "uc" ? "UC" : "RC";
    } else if (item.key == "access") {
      qp_access.clear();
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
  // UC has no READ or atomics: only remote writes unless the case names its flags.
  if (qp_type == "UC" && !a.has("access")) qp_access = {"REMOTE_WRITE"};
  make(c, {.cq_name = cq_name,
           .recv = recv,
           .recv_len = recv_len,
           .region = region,
           .region_access = access,
           .qp_access = qp_access,
           .pkey_index = pkey_index,
           .qp_type = qp_type});
  const Endpoint tester = target_.tester();
  control::QpAttr rtr;
  rtr.qp_state = "RTR";
  rtr.path_mtu = c.pmtu;
  rtr.dest_qp_num = c.local_qpn;
  rtr.rq_psn = c.local_psn0;
  // UC has no responder resources, RNR, acknowledgements or retries (IBA Table 90, ibv_modify_qp).
  const bool rc = qp_type == "RC";
  if (rc) {
    rtr.max_dest_rd_atomic = static_cast<std::uint8_t>(max_dest_rd_atomic);
    rtr.min_rnr_timer = static_cast<std::uint8_t>(min_rnr_timer);
  }
  rtr.ah_attr =
      control::AddressVector{.dgid = c.ipv6 ? format_gid(*tester.ip6) : format_ipv4(tester.ip),
                             .dmac = format_mac(tester.mac),
                             .hop_limit = 64};
  control_.setup(control::ModifyQp{c.remote_qpn, rtr});
  c.av_hop_limit = rtr.ah_attr->hop_limit;
  c.av_traffic_class = rtr.ah_attr->traffic_class.value_or(0);  // ibv_ah_attr default
  control::QpAttr rts;
  rts.qp_state = "RTS";
  rts.sq_psn = c.remote_psn0;
  if (rc) {
    rts.timeout = static_cast<std::uint8_t>(timeout);
    rts.retry_cnt = static_cast<std::uint8_t>(retry_cnt);
    rts.rnr_retry = static_cast<std::uint8_t>(rnr_retry);
    rts.max_rd_atomic = static_cast<std::uint8_t>(max_rd_atomic);
    c.ack_timeout = static_cast<std::uint8_t>(timeout);
  } else {
    c.ack_timeout = 0;  // no transport timer
  }
  control_.setup(control::ModifyQp{c.remote_qpn, rts});
  c.pkey = control_.pkey_at(pkey_index).value_or(0xFFFF);
  c.state = ConnState::kEstablished;
}

void TargetQps::expect_status(Connection& c, const Assignments& want, TimeNs window) {
  if (!passive_.contains(c.name))
    evidence_.error(
        fmt::format("status: '{}' is not a connection the target made (accept)", c.name));
  const TimeNs deadline = add_saturating(wire_.now(), window);
  std::string last_answer;
  for (;;) {
    // Asked every few ms: only answers that differ from the one before go on the timeline.
    const auto status = control_.call_polled(control::CmStatus{c.remote_qpn}, last_answer);
    if (!status)
      evidence_.inconclusive(
          fmt::format("cm_status failed on the target: {}", status.error().message));
    const auto diffs = compare_fields(control::FieldView(*status), want, "cm_status");
    if (diffs.empty()) return;
    if (wire_.now() >= deadline)
      evidence_.fail(fmt::format("cm_status of {} within {} ms: {}", c.name, window / kMillisecond,
                                 last_answer),
                     diffs);
    wire_.wait(std::min<TimeNs>(5 * kMillisecond, deadline - wire_.now()));
  }
}

}  // namespace roceconf::engine
