#include "agent/cm_active.h"

#include <arpa/inet.h>
#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "dissector/address_text.h"

namespace roceconf::agent {
namespace {

constexpr int kResolveMs = 2000;
constexpr std::uint64_t kTcpServicePrefix = 0x0000000001060000ull;  // IBA Annex A11, RDMA_PS_TCP

[[noreturn]] void refuse(int e, std::string message) {
  throw CmActiveFailure{e, std::move(message)};
}

}  // namespace

CmActive::~CmActive() {
  for (auto& [n, e] : by_qp_) rdma_destroy_id(e.id);
  if (channel_) rdma_destroy_event_channel(channel_);
}

nlohmann::json CmActive::connect(const Fields& f, ibv_qp* qp, const std::string& local_ip) {
  std::uint16_t port = 0;
  if (f.has("port")) {
    port = static_cast<std::uint16_t>(f.u("port", UINT16_MAX));
  } else {
    const std::uint64_t sid = f.u("service_id", UINT64_MAX);
    if ((sid & ~std::uint64_t{0xFFFF}) != kTcpServicePrefix)
      refuse(EOPNOTSUPP, fmt::format("cm_connect: service_id {:#x} is outside rdma_cm's TCP port "
                                     "space (0x106xxxx); give 'port'",
                                     sid));
    port = static_cast<std::uint16_t>(sid & 0xFFFF);
  }
  const std::string dgid = f.text("dgid");
  // The text is a GID ("192.0.2.1" or "::ffff:192.0.2.1"); only IPv4-mapped ones name an IPv4 peer.
  constexpr std::array<std::uint8_t, 12> kMappedPrefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  const auto gid = parse_gid(dgid);
  if (!gid || !std::equal(kMappedPrefix.begin(), kMappedPrefix.end(), gid->begin()))
    fail("cm_connect.dgid: '{}' is not an IPv4 address (rdma_cm resolves IPv4 peers here)", dgid);
  in_addr dst{};
  std::memcpy(&dst, gid->data() + 12, sizeof dst);
  (void)f.text("dmac");  // the kernel resolves the peer's MAC itself
  if (f.has("starting_psn"))
    refuse(EOPNOTSUPP, "cm_connect: rdma_cm chooses the REQ's Starting PSN itself");
  if (f.has("pkey") && f.u("pkey", UINT16_MAX) != 0xFFFF)
    refuse(EOPNOTSUPP, "cm_connect: rdma_cm sends the REQ with P_Key 0xFFFF only");
  for (const char* timer : {"cm_response_timeout", "max_cm_retries", "packet_lifetime"})
    if (f.has(timer))
      refuse(EOPNOTSUPP, fmt::format("cm_connect: {} cannot be chosen through rdma_cm", timer));
  if (by_qp_.contains(qp->qp_num)) forget(qp->qp_num);  // a new connect replaces the old one

  if (!channel_) {
    channel_ = rdma_create_event_channel();
    if (!channel_) refuse(errno, "cm_connect: rdma_create_event_channel failed");
    fcntl(channel_->fd, F_SETFL, fcntl(channel_->fd, F_GETFL) | O_NONBLOCK);
  }
  Entry e;
  e.qp = qp;
  e.param.qp_num = qp->qp_num;
  e.param.responder_resources = static_cast<std::uint8_t>(f.u("responder_resources", 255, 1));
  e.param.initiator_depth = static_cast<std::uint8_t>(f.u("initiator_depth", 255, 1));
  e.param.retry_count = static_cast<std::uint8_t>(f.u("retry_count", 7, 7));
  e.param.rnr_retry_count = static_cast<std::uint8_t>(f.u("rnr_retry_count", 7, 7));
  if (f.has("private_data")) {
    e.private_data = f.hex("private_data");
    if (e.private_data.size() > 56)
      fail("cm_connect.private_data: at most 56 bytes after the rdma_cm header");
  }
  if (rdma_create_id(channel_, &e.id, nullptr, RDMA_PS_TCP) != 0)
    refuse(errno, "cm_connect: rdma_create_id failed");
  sockaddr_in src{}, to{};
  src.sin_family = to.sin_family = AF_INET;
  inet_pton(AF_INET, local_ip.c_str(), &src.sin_addr);
  to.sin_addr = dst;
  to.sin_port = htons(port);
  if (rdma_resolve_addr(e.id, reinterpret_cast<sockaddr*>(&src), reinterpret_cast<sockaddr*>(&to),
                        kResolveMs) != 0) {
    const int err = errno;
    rdma_destroy_id(e.id);
    refuse(err, fmt::format("cm_connect: rdma_resolve_addr to {}: {}", dgid, std::strerror(err)));
  }
  e.id->context = reinterpret_cast<void*>(static_cast<std::uintptr_t>(qp->qp_num));
  by_qp_[qp->qp_num] = std::move(e);
  return {{"service_id", fmt::format("{:#x}", kTcpServicePrefix | port)}};
}

bool CmActive::to_rts(Entry& e) {
  ibv_qp_attr attr{};
  int mask = 0;
  ibv_qp_attr now{};
  ibv_qp_init_attr init{};
  ibv_query_qp(e.qp, &now, IBV_QP_STATE, &init);
  if (now.qp_state == IBV_QPS_RESET) {
    attr.qp_state = IBV_QPS_INIT;
    if (rdma_init_qp_attr(e.id, &attr, &mask) != 0 || ibv_modify_qp(e.qp, &attr, mask) != 0)
      return false;
  }
  for (const ibv_qp_state s : {IBV_QPS_RTR, IBV_QPS_RTS}) {
    attr = {};
    attr.qp_state = s;
    if (rdma_init_qp_attr(e.id, &attr, &mask) != 0 || ibv_modify_qp(e.qp, &attr, mask) != 0)
      return false;
  }
  return true;
}

void CmActive::handle(Entry& e, const rdma_cm_event& ev) {
  switch (ev.event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      if (rdma_resolve_route(e.id, kResolveMs) != 0) e.state = "timed_out";
      break;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
      rdma_conn_param p = e.param;
      p.private_data = e.private_data.empty() ? nullptr : e.private_data.data();
      p.private_data_len = static_cast<std::uint8_t>(e.private_data.size());
      if (rdma_connect(e.id, &p) != 0) e.state = "timed_out";
      break;
    }
    case RDMA_CM_EVENT_CONNECT_RESPONSE:
      e.remote_qpn = ev.param.conn.qp_num;
      if (to_rts(e) && rdma_establish(e.id) == 0) {
        e.state = "established";
      } else {
        rdma_reject(e.id, nullptr, 0);
        e.state = "rejected";
      }
      break;
    case RDMA_CM_EVENT_ESTABLISHED:
      e.state = "established";
      break;
    case RDMA_CM_EVENT_REJECTED:
      e.state = "rejected";
      e.reason = ev.status;
      break;
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_CONNECT_ERROR:
      e.state = "timed_out";
      break;
    case RDMA_CM_EVENT_DISCONNECTED:
      if (e.state == "established") rdma_disconnect(e.id);  // answers the DREQ
      e.state = "disconnected";
      break;
    default:
      break;
  }
}

void CmActive::on_events() {
  if (!channel_) return;
  rdma_cm_event* ev = nullptr;
  while (rdma_get_cm_event(channel_, &ev) == 0) {
    const rdma_cm_event copy = *ev;
    const auto qp_num =
        static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(ev->id->context));
    rdma_ack_cm_event(ev);
    const auto it = by_qp_.find(qp_num);
    if (it != by_qp_.end() && it->second.id == copy.id) handle(it->second, copy);
  }
}

nlohmann::json CmActive::status(std::uint32_t qp_num) const {
  const auto it = by_qp_.find(qp_num);
  if (it == by_qp_.end())
    refuse(ENOENT, fmt::format("cm_status: cm_connect never named QP {}", qp_num));
  nlohmann::json out = {{"state", it->second.state}};
  if (it->second.reason) out["reason"] = *it->second.reason;
  if (it->second.remote_qpn) out["remote_qpn"] = *it->second.remote_qpn;
  return out;
}

nlohmann::json CmActive::disconnect(std::uint32_t qp_num) {
  const auto it = by_qp_.find(qp_num);
  if (it == by_qp_.end() || it->second.state != "established")
    refuse(EINVAL, fmt::format("cm_disconnect: QP {} has no established connection", qp_num));
  if (rdma_disconnect(it->second.id) != 0) refuse(errno, "cm_disconnect: rdma_disconnect failed");
  it->second.state = "disconnecting";
  return nlohmann::json::object();
}

void CmActive::forget(std::uint32_t qp_num) {
  const auto it = by_qp_.find(qp_num);
  if (it == by_qp_.end()) return;
  rdma_destroy_id(it->second.id);
  by_qp_.erase(it);
}

}  // namespace roceconf::agent
