// The built-in responder application (`roceconf target --listen PORT`): what a DUT host runs as
// a small server, so the suite can test a target through the wire alone. It accepts rdma_cm
// connections on a TCP-port-space service ID (IBA Vol 1 Annex A11), and for each one creates a
// CQ, an RC QP with receive buffers kept posted, and one memory region open to remote read,
// write and atomics, which it announces in the REP private data (RcnfPrivateData;
// RESPONDER_CONVENTION.md).
//
// Single-threaded like the Nic: call service() from the event loop after the NIC ran.
#pragma once

#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <string>

#include "control/rcnf_private_data.h"
#include "suite/reference_nic/nic.h"

namespace roceconf::target {

// The block is the control library's (control/rcnf_private_data.h): the agent writes it too.
using control::RcnfPrivateData;

struct ResponderAppConfig {
  std::uint16_t port = 7471;  // rdma_cm TCP port (rping's default)
  std::uint32_t region_size = 64 * 1024;
  std::uint32_t recv_depth = 16;
  std::uint32_t recv_buffer_size = 4096;
  std::uint32_t max_connections = 1024;  // beyond: REJ "no resources"
  // false: the REP carries no RCNF block, as from a listener that knows no convention.
  bool announce = true;

  // A stock listener such as `rping -s`: no RCNF block, one receive of 16 bytes (rping's own
  // header). What a run against a device without the convention meets (--stock-responder).
  static ResponderAppConfig stock(std::uint16_t port) {
    return {.port = port, .recv_depth = 1, .recv_buffer_size = 16, .announce = false};
  }
};

class ResponderApp {
 public:
  // One accepted connection and the resources made for it.
  struct Connection {
    std::uint32_t qp_num = 0;
    std::uint32_t pd = 0;
    std::uint32_t cq = 0;
    std::uint32_t region_mr = 0;  // the exposed region
    std::uint32_t recv_mr = 0;    // recv_depth buffers of recv_buffer_size bytes, back to back
    bool receives_posted = false;
    bool established = false;
    bool closing = false;        // disconnected: released by the next service()
    std::uint64_t receives = 0;  // receive completions taken (and buffers reposted)
  };

  // Listens on rdma_cm_service_id(TCP, config.port). Errors: a config value out of range, or
  // the CM agent refusing the listener (service ID taken).
  static std::expected<std::unique_ptr<ResponderApp>, std::string> start(
      Nic& nic, const ResponderAppConfig& config);
  // Releases every connection's resources. The CM agent has no way to stop listening: REQs that
  // arrive afterwards are rejected with "no resources".
  ~ResponderApp();
  ResponderApp(const ResponderApp&) = delete;
  ResponderApp& operator=(const ResponderApp&) = delete;

  // Reposts the receive buffer of every completed receive and releases disconnected
  // connections. Call after Nic::receive / Nic::tick.
  void service();

  std::uint64_t service_id() const;
  const ResponderAppConfig& config() const;
  const std::map<std::uint32_t, Connection>& connections() const;  // by QP number
  // The REP private data announced for a connection's QP.
  std::expected<RcnfPrivateData, std::string> private_data(std::uint32_t qp_num) const;

  struct State;

 private:
  explicit ResponderApp(std::shared_ptr<State> state) : state_(std::move(state)) {}
  // Shared with the CM agent's callbacks, which keep only a weak reference.
  std::shared_ptr<State> state_;
};

}  // namespace roceconf::target
