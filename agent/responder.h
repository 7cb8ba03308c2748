// The responder of the roceconf convention (suite/reference_nic/RESPONDER_CONVENTION.md) over
// librdmacm: what `roceconf target --listen PORT` does in the reference target, on a real device.
// It listens with rdma_cm on a TCP-port-space service ID; for each connection it makes a PD, a CQ,
// an RC QP with receive buffers kept posted and one region open to remote read, write and atomics,
// and announces the region in the REP private data (RcnfPrivateData). It never sends requests. At
// disconnect it frees the connection's resources.
#pragma once

#include <rdma/rdma_cma.h>

#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace roceconf::agent {

struct ResponderConfig {
  // The addresses to listen on, each with its TCP port: the RoCE interface's IPv4 address and,
  // for RoCEv2 over IPv6, its IPv6 address (an rdma_cm listener serves one address family).
  std::vector<std::pair<std::string, std::uint16_t>> listen = {{"0.0.0.0", 7471}};
  std::uint32_t region_size = 64 * 1024;
  std::uint32_t recv_depth = 16;
  std::uint32_t recv_buffer_size = 4096;
  std::uint32_t max_connections = 1024;
};

class Responder {
 public:
  static std::expected<std::unique_ptr<Responder>, std::string> start(
      const ResponderConfig& config);
  ~Responder();
  Responder(const Responder&) = delete;
  Responder& operator=(const Responder&) = delete;

  // Descriptors to poll for input: the rdma_cm event channel, the completion channel and the
  // device's asynchronous events (-1 before the first connection).
  int cm_fd() const;
  int completion_fd() const;
  int async_fd() const;
  // Handle what is ready (non-blocking): CM events, receive completions (buffers reposted), and
  // COMM_EST (data before the RTU: the connection is taken as established, IBA 12.9.8.2).
  void on_cm_event();
  void on_completion();
  void on_async_event();

  std::size_t connections() const { return connections_.size(); }

  struct Connection;

 private:
  explicit Responder(const ResponderConfig& config);
  void accept(rdma_cm_id* id, const rdma_conn_param& request);
  void release(rdma_cm_id* id);
  void drain(Connection& c);

  ResponderConfig config_;
  rdma_event_channel* channel_ = nullptr;
  bool is_listener(const rdma_cm_id* id) const;
  std::vector<rdma_cm_id*> listeners_;
  ibv_comp_channel* completions_ = nullptr;  // made on the first connection's device
  ibv_context* completions_ctx_ = nullptr;
  std::map<rdma_cm_id*, std::unique_ptr<Connection>> connections_;
};

}  // namespace roceconf::agent
