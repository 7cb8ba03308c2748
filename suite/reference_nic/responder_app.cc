#include "suite/reference_nic/responder_app.h"

#include <vector>

#include <fmt/format.h>

#include "dissector/mad/rdma_cm.h"
#include "suite/reference_nic/cm_agent.h"

namespace roceconf::target {

// IBA Vol 1 Table 112 (REJ reasons) values the listener answers with.
namespace {
constexpr std::uint16_t kRejNoQp = 1;
constexpr std::uint16_t kRejNoResources = 3;
}  // namespace

struct ResponderApp::State {
  State(Nic& n, const ResponderAppConfig& c) : nic(n), config(c) {}

  Nic& nic;
  ResponderAppConfig config;
  std::map<std::uint32_t, Connection> connections;

  std::expected<std::uint32_t, std::uint16_t> accept();
  std::vector<std::uint8_t> announce(std::uint32_t qp_num);
  void post_receives(Connection& c);
  void drain(Connection& c);
  void release(const Connection& c);
  std::expected<RcnfPrivateData, std::string> describe(std::uint32_t qp_num) const;
};

std::expected<std::uint32_t, std::uint16_t> ResponderApp::State::accept() {
  if (connections.size() >= config.max_connections) return std::unexpected(kRejNoResources);
  Device& dev = nic.device();
  Connection c;
  // Each connection has its own PD: one peer's R_Key never reaches another peer's region.
  const auto pd = dev.alloc_pd();
  if (!pd) return std::unexpected(kRejNoResources);
  c.pd = *pd;
  auto undo = [&](std::uint16_t reason) {
    release(c);
    return std::unexpected(reason);
  };
  // A CQ that holds every receive at once, so it cannot overrun between two service() calls
  // (the send queue is never used: the peer does the talking).
  const auto cq = dev.create_cq(config.recv_depth + 1);
  if (!cq) return undo(kRejNoResources);
  c.cq = (*cq)->handle();
  MrInit region_init;
  region_init.pd = c.pd;
  region_init.length = config.region_size;
  region_init.access = access::kLocalWrite | access::kRemote;
  const auto region = dev.reg_mr(region_init);
  if (!region) return undo(kRejNoResources);
  c.region_mr = (*region)->handle();
  MrInit recv_init;
  recv_init.pd = c.pd;
  recv_init.length = std::uint64_t{config.recv_depth} * config.recv_buffer_size;
  recv_init.access = access::kLocalWrite;
  const auto recv = dev.reg_mr(recv_init);
  if (!recv) return undo(kRejNoResources);
  c.recv_mr = (*recv)->handle();
  QpInit qp_init;
  qp_init.qp_type = QpType::kRc;
  qp_init.pd = c.pd;
  qp_init.send_cq = c.cq;
  qp_init.recv_cq = c.cq;
  qp_init.cap.max_send_wr = 1;
  qp_init.cap.max_recv_wr = config.recv_depth;
  const auto qp = dev.create_qp(qp_init);
  if (!qp) return undo(kRejNoQp);
  c.qp_num = (*qp)->qp_num();
  connections[c.qp_num] = c;
  return c.qp_num;
}

// Asked once the agent moved the QP to RTR, just before the REP: the buffers go up now so the
// first SEND after the REP finds them.
std::vector<std::uint8_t> ResponderApp::State::announce(std::uint32_t qp_num) {
  const auto it = connections.find(qp_num);
  if (it == connections.end()) return {};
  post_receives(it->second);
  if (!config.announce) return {};
  const auto data = describe(qp_num);
  if (!data) return {};
  const auto bytes = data->encode();
  return {bytes.begin(), bytes.end()};
}

void ResponderApp::State::post_receives(Connection& c) {
  if (c.receives_posted) return;
  const Mr* mr = nic.device().mr(c.recv_mr);
  if (!mr) return;
  std::vector<RecvWr> wrs(config.recv_depth);
  for (std::uint32_t i = 0; i < config.recv_depth; ++i) {
    wrs[i].wr_id = i;  // the buffer index, to repost the same buffer
    wrs[i].sg_list = {{.addr = mr->addr() + std::uint64_t{i} * config.recv_buffer_size,
                       .length = config.recv_buffer_size,
                       .lkey = mr->lkey()}};
  }
  // Fails only while the QP is still in RESET; service() tries again.
  c.receives_posted = nic.post_recv(c.qp_num, wrs).has_value();
}

void ResponderApp::State::drain(Connection& c) {
  const Mr* mr = nic.device().mr(c.recv_mr);
  auto polled = nic.device().poll_cq(c.cq, config.recv_depth + 1);
  if (!polled || !mr) return;
  for (const Cqe& cqe : *polled) {
    // Flushed or failed receives are not reposted: the QP is in ERR and the connection ends.
    if (cqe.status != WcStatus::kSuccess) continue;
    if (cqe.opcode != WcOpcode::kRecv && cqe.opcode != WcOpcode::kRecvRdmaWithImm) continue;
    ++c.receives;
    const std::uint64_t index = cqe.wr_id;
    const RecvWr wr{.wr_id = index,
                    .sg_list = {{.addr = mr->addr() + index * config.recv_buffer_size,
                                 .length = config.recv_buffer_size,
                                 .lkey = mr->lkey()}}};
    (void)nic.post_recv(c.qp_num, std::span(&wr, 1));
  }
}

void ResponderApp::State::release(const Connection& c) {
  Device& dev = nic.device();
  // Reverse order of creation; a handle of 0 was never made.
  if (c.qp_num) (void)nic.destroy_qp(c.qp_num);
  if (c.recv_mr) (void)dev.dereg_mr(c.recv_mr);
  if (c.region_mr) (void)dev.dereg_mr(c.region_mr);
  if (c.cq) (void)dev.destroy_cq(c.cq);
  if (c.pd) (void)dev.dealloc_pd(c.pd);
}

std::expected<RcnfPrivateData, std::string> ResponderApp::State::describe(
    std::uint32_t qp_num) const {
  const auto it = connections.find(qp_num);
  if (it == connections.end())
    return std::unexpected(fmt::format("no responder connection on QP {:#x}", qp_num));
  const Mr* region = nic.device().mr(it->second.region_mr);
  if (!region) return std::unexpected(fmt::format("QP {:#x} has no region", qp_num));
  RcnfPrivateData d;
  d.region_va = region->addr();
  d.rkey = region->rkey();
  d.region_length = static_cast<std::uint32_t>(region->length());
  d.recv_depth = config.recv_depth;
  d.recv_buffer_size = config.recv_buffer_size;
  return d;
}

std::expected<std::unique_ptr<ResponderApp>, std::string> ResponderApp::start(
    Nic& nic, const ResponderAppConfig& config) {
  const DeviceAttr& attr = nic.device().attr();
  if (config.region_size == 0 || config.region_size > attr.max_mr_size)
    return std::unexpected(fmt::format("region size {} is not between 1 and {} bytes",
                                       config.region_size, attr.max_mr_size));
  if (config.recv_depth == 0 || config.recv_depth > attr.qp.max_qp_wr)
    return std::unexpected(fmt::format("receive depth {} is not between 1 and {}",
                                       config.recv_depth, attr.qp.max_qp_wr));
  if (config.recv_buffer_size == 0 ||
      std::uint64_t{config.recv_depth} * config.recv_buffer_size > attr.max_mr_size)
    return std::unexpected(
        fmt::format("receive buffers of {} bytes x {} do not fit one MR (at most {} bytes)",
                    config.recv_buffer_size, config.recv_depth, attr.max_mr_size));
  if (config.max_connections == 0) return std::unexpected("max_connections must be at least 1");

  auto state = std::make_shared<State>(nic, config);
  const std::weak_ptr<State> weak = state;
  ListenerCallbacks callbacks;
  callbacks.create_qp = [weak](const CmReq&) -> std::expected<std::uint32_t, std::uint16_t> {
    if (const auto s = weak.lock()) return s->accept();
    return std::unexpected(kRejNoResources);
  };
  callbacks.private_data = [weak](std::uint32_t qpn) {
    const auto s = weak.lock();
    return s ? s->announce(qpn) : std::vector<std::uint8_t>{};
  };
  callbacks.established = [weak](std::uint32_t qpn) {
    if (const auto s = weak.lock(); s && s->connections.contains(qpn))
      s->connections[qpn].established = true;
  };
  // The agent may still be working on the QP while it reports: release in service().
  callbacks.disconnected = [weak](std::uint32_t qpn) {
    if (const auto s = weak.lock(); s && s->connections.contains(qpn))
      s->connections[qpn].closing = true;
  };
  const std::uint64_t service_id = rdma_cm_service_id(rdma_cm_ps::kTcp, config.port);
  if (auto listening = nic.cm().listen(service_id, std::move(callbacks)); !listening)
    return std::unexpected(
        fmt::format("cannot listen on rdma_cm TCP port {}: {}", config.port, listening.error()));
  return std::unique_ptr<ResponderApp>(new ResponderApp(std::move(state)));
}

ResponderApp::~ResponderApp() {
  for (const auto& [qpn, c] : state_->connections) state_->release(c);
}

void ResponderApp::service() {
  auto& conns = state_->connections;
  for (auto it = conns.begin(); it != conns.end();) {
    Connection& c = it->second;
    if (c.closing) {
      state_->release(c);
      it = conns.erase(it);
      continue;
    }
    state_->post_receives(c);
    state_->drain(c);
    ++it;
  }
}

std::uint64_t ResponderApp::service_id() const {
  return rdma_cm_service_id(rdma_cm_ps::kTcp, state_->config.port);
}

const ResponderAppConfig& ResponderApp::config() const {
  return state_->config;
}

const std::map<std::uint32_t, ResponderApp::Connection>& ResponderApp::connections() const {
  return state_->connections;
}

std::expected<RcnfPrivateData, std::string> ResponderApp::private_data(std::uint32_t qp_num) const {
  return state_->describe(qp_num);
}

}  // namespace roceconf::target
