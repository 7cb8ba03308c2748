#include "agent/responder.h"

#include <arpa/inet.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "control/rcnf_private_data.h"

namespace roceconf::agent {

struct Responder::Connection {
  rdma_cm_id* id = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_mr* region = nullptr;
  ibv_mr* recv = nullptr;
  std::uint8_t* region_buffer = nullptr;
  std::uint8_t* recv_buffer = nullptr;
  bool has_qp = false;
  std::uint64_t receives = 0;
};

namespace {

void log(const std::string& line) {
  fmt::print(stderr, "roceconf-agent: {}\n", line);
}

void set_nonblocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

void* zeroed(std::size_t bytes) {
  const std::size_t rounded = (bytes + 4095) & ~std::size_t{4095};
  void* p = std::aligned_alloc(4096, rounded);
  if (p) std::memset(p, 0, rounded);
  return p;
}

bool post_receive(Responder::Connection& c, std::uint32_t index, std::uint32_t size) {
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(c.recv_buffer) + std::uint64_t{index} * size, size,
              c.recv->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = index;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  return ibv_post_recv(c.id->qp, &wr, &bad) == 0;
}

}  // namespace

Responder::Responder(const ResponderConfig& config) : config_(config) {}

std::expected<std::unique_ptr<Responder>, std::string> Responder::start(
    const ResponderConfig& config) {
  std::unique_ptr<Responder> r(new Responder(config));
  r->channel_ = rdma_create_event_channel();
  if (!r->channel_)
    return std::unexpected(
        fmt::format("rdma_create_event_channel: {} (is rdma_ucm loaded?)", std::strerror(errno)));
  set_nonblocking(r->channel_->fd);
  for (const auto& [address, port] : config.listen) {
    sockaddr_storage addr{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
    if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(port);
    } else if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(port);
    } else {
      return std::unexpected(fmt::format("--listen: '{}' is not an IPv4 or IPv6 address", address));
    }
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(r->channel_, &id, nullptr, RDMA_PS_TCP) != 0)
      return std::unexpected(fmt::format("rdma_create_id: {}", std::strerror(errno)));
    r->listeners_.push_back(id);
    if (addr.ss_family == AF_INET6) {
      // This address only: the IPv4 one has a listener of its own.
      int only = 1;
      (void)rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &only, sizeof only);
    }
    if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&addr)) != 0)
      return std::unexpected(
          fmt::format("rdma_bind_addr {}:{}: {} (is the address on an RDMA "
                      "device's interface, and the port free?)",
                      address, port, std::strerror(errno)));
    if (rdma_listen(id, 1024) != 0)
      return std::unexpected(fmt::format("rdma_listen: {}", std::strerror(errno)));
  }
  return r;
}

bool Responder::is_listener(const rdma_cm_id* id) const {
  return std::find(listeners_.begin(), listeners_.end(), id) != listeners_.end();
}

Responder::~Responder() {
  while (!connections_.empty()) release(connections_.begin()->first);
  if (completions_) ibv_destroy_comp_channel(completions_);
  for (rdma_cm_id* id : listeners_) rdma_destroy_id(id);
  if (channel_) rdma_destroy_event_channel(channel_);
}

int Responder::cm_fd() const {
  return channel_->fd;
}
int Responder::completion_fd() const {
  return completions_ ? completions_->fd : -1;
}
int Responder::async_fd() const {
  return completions_ctx_ ? completions_ctx_->async_fd : -1;
}

void Responder::on_async_event() {
  ibv_async_event ev{};
  while (ibv_get_async_event(completions_ctx_, &ev) == 0) {
    if (ev.event_type == IBV_EVENT_COMM_EST) {
      // Without this the CM keeps resending the REP until the RTU comes.
      for (const auto& [id, c] : connections_)
        if (c->has_qp && id->qp == ev.element.qp) {
          const int rc = rdma_notify(id, IBV_EVENT_COMM_EST);
          log(fmt::format("QP {}: data before the RTU (COMM_EST), the CM is told: {}",
                          id->qp->qp_num, rc == 0 ? "ok" : std::strerror(errno)));
        }
    }
    ibv_ack_async_event(&ev);
  }
}

void Responder::on_cm_event() {
  rdma_cm_event* event = nullptr;
  while (rdma_get_cm_event(channel_, &event) == 0) {
    rdma_cm_id* id = event->id;
    const rdma_cm_event_type type = event->event;
    const rdma_conn_param request = event->param.conn;
    rdma_ack_cm_event(event);
    switch (type) {
      case RDMA_CM_EVENT_CONNECT_REQUEST:
        accept(id, request);
        break;
      case RDMA_CM_EVENT_ESTABLISHED:
        break;
      case RDMA_CM_EVENT_DISCONNECTED:
        rdma_disconnect(id);  // completes our side of the DREQ/DREP
        release(id);
        break;
      case RDMA_CM_EVENT_REJECTED:
      case RDMA_CM_EVENT_CONNECT_ERROR:
      case RDMA_CM_EVENT_UNREACHABLE:
      case RDMA_CM_EVENT_TIMEWAIT_EXIT:
        release(id);
        break;
      case RDMA_CM_EVENT_DEVICE_REMOVAL:
        log("the RDMA device went away");
        if (!is_listener(id)) release(id);
        break;
      default:
        break;
    }
  }
}

void Responder::accept(rdma_cm_id* id, const rdma_conn_param& request) {
  if (connections_.size() >= config_.max_connections) {
    rdma_reject(id, nullptr, 0);  // the kernel sends REJ "consumer reject"
    rdma_destroy_id(id);
    return;
  }
  auto owned = std::make_unique<Connection>();
  Connection& c = *owned;
  c.id = id;
  connections_[id] = std::move(owned);
  auto refuse = [&](const std::string& why) {
    log(fmt::format("refusing a connection: {}", why));
    rdma_reject(id, nullptr, 0);
    release(id);
  };
  if (!completions_) {
    completions_ = ibv_create_comp_channel(id->verbs);
    if (!completions_) return refuse("ibv_create_comp_channel failed");
    completions_ctx_ = id->verbs;
    set_nonblocking(completions_->fd);
    set_nonblocking(completions_ctx_->async_fd);
  }
  if (id->verbs != completions_ctx_) return refuse("connection on a second RDMA device");
  // Each connection has its own PD: one peer's R_Key never reaches another peer's region.
  c.pd = ibv_alloc_pd(id->verbs);
  if (!c.pd) return refuse("ibv_alloc_pd failed");
  c.cq = ibv_create_cq(id->verbs, static_cast<int>(config_.recv_depth + 2), &c, completions_, 0);
  if (!c.cq) return refuse("ibv_create_cq failed");
  ibv_req_notify_cq(c.cq, 0);
  c.region_buffer = static_cast<std::uint8_t*>(zeroed(config_.region_size));
  c.recv_buffer = static_cast<std::uint8_t*>(
      zeroed(std::size_t{config_.recv_depth} * config_.recv_buffer_size));
  if (!c.region_buffer || !c.recv_buffer) return refuse("out of memory");
  c.region = ibv_reg_mr(c.pd, c.region_buffer, config_.region_size,
                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
                            IBV_ACCESS_REMOTE_ATOMIC);
  if (!c.region) return refuse("ibv_reg_mr of the region failed");
  c.recv =
      ibv_reg_mr(c.pd, c.recv_buffer, std::size_t{config_.recv_depth} * config_.recv_buffer_size,
                 IBV_ACCESS_LOCAL_WRITE);
  if (!c.recv) return refuse("ibv_reg_mr of the receive buffers failed");
  ibv_qp_init_attr init{};
  init.qp_type = IBV_QPT_RC;
  init.send_cq = c.cq;
  init.recv_cq = c.cq;
  init.cap.max_send_wr = 1;
  init.cap.max_recv_wr = config_.recv_depth;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  if (rdma_create_qp(id, c.pd, &init) != 0) return refuse("rdma_create_qp failed");
  c.has_qp = true;
  // rdma_cm grants remote atomics only when the REQ asked for responder resources; the
  // convention promises them on every connection.
  ibv_qp_attr access{};
  access.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
                           IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
  if (ibv_modify_qp(id->qp, &access, IBV_QP_ACCESS_FLAGS) != 0)
    return refuse("setting the QP's remote access flags failed");
  for (std::uint32_t i = 0; i < config_.recv_depth; ++i)
    if (!post_receive(c, i, config_.recv_buffer_size)) return refuse("ibv_post_recv failed");

  control::RcnfPrivateData rcnf;
  rcnf.region_va = reinterpret_cast<std::uintptr_t>(c.region_buffer);
  rcnf.rkey = c.region->rkey;
  rcnf.region_length = config_.region_size;
  rcnf.recv_depth = config_.recv_depth;
  rcnf.recv_buffer_size = config_.recv_buffer_size;
  const auto block = rcnf.encode();
  ibv_device_attr attr{};
  ibv_query_device(id->verbs, &attr);
  rdma_conn_param param{};
  param.private_data = block.data();
  param.private_data_len = static_cast<std::uint8_t>(block.size());
  // READs and atomics the peer may have outstanding: what its REQ asked (its initiator depth),
  // at least 1 (the convention), at most the device's. Ours as initiator: never more than the
  // REQ's responder resources; the responder sends no requests anyway.
  // (librdmacm gives the REQ's values from our side: `responder_resources` is the peer's
  // initiator depth, `initiator_depth` its responder resources.)
  param.responder_resources = static_cast<std::uint8_t>(
      std::clamp<int>(request.responder_resources, 1, std::clamp(attr.max_qp_rd_atom, 1, 255)));
  param.initiator_depth = static_cast<std::uint8_t>(
      std::min<int>(request.initiator_depth, std::clamp(attr.max_qp_init_rd_atom, 0, 255)));
  param.rnr_retry_count = 7;
  param.retry_count = 7;
  if (rdma_accept(id, &param) != 0) {
    log(fmt::format("rdma_accept: {}", std::strerror(errno)));
    release(id);
  }
}

void Responder::drain(Connection& c) {
  ibv_wc wc[16];
  int n = 0;
  while ((n = ibv_poll_cq(c.cq, 16, wc)) > 0) {
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS || !(wc[i].opcode & IBV_WC_RECV)) continue;
      ++c.receives;
      post_receive(c, static_cast<std::uint32_t>(wc[i].wr_id), config_.recv_buffer_size);
    }
  }
}

void Responder::on_completion() {
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  while (ibv_get_cq_event(completions_, &cq, &context) == 0) {
    ibv_ack_cq_events(cq, 1);
    ibv_req_notify_cq(cq, 0);
    for (auto& [id, c] : connections_)
      if (c.get() == context) drain(*c);
  }
}

void Responder::release(rdma_cm_id* id) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) {
    if (!is_listener(id)) rdma_destroy_id(id);
    return;
  }
  Connection& c = *it->second;
  if (c.has_qp) rdma_destroy_qp(id);
  if (c.region) ibv_dereg_mr(c.region);
  if (c.recv) ibv_dereg_mr(c.recv);
  // Every CQ event read is acknowledged at once (on_completion), so the destroy cannot block.
  if (c.cq) ibv_destroy_cq(c.cq);
  if (c.pd) ibv_dealloc_pd(c.pd);
  std::free(c.region_buffer);
  std::free(c.recv_buffer);
  connections_.erase(it);
  rdma_destroy_id(id);
}

}  // namespace roceconf::agent
