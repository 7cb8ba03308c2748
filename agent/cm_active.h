// The device's CM active side for the control API's cm_connect, cm_status and cm_disconnect
// (CONTROL_API.md), through librdmacm: rdma_connect() with the controller's own QP, so the
// kernel's CM sends the REQ, takes the REP, and the QP is moved to RTR and RTS before
// rdma_establish() sends the RTU. What rdma_cm cannot choose (the Starting PSN, the P_Key, the
// path MTU, a Service ID outside the TCP port space) is refused, not ignored.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/request_fields.h"

namespace roceconf::agent {

// A failed connect step, with the errno name's value: the session answers it like a verb.
struct CmActiveFailure {
  int error;
  std::string message;
};

class CmActive {
 public:
  CmActive() = default;
  ~CmActive();
  CmActive(const CmActive&) = delete;
  CmActive& operator=(const CmActive&) = delete;

  // `qp` is the controller's QP (RESET or INIT); `local_ip` the device's IPv4 address. The caller
  // has refused unknown fields (keys::kCmConnect).
  nlohmann::json connect(const Fields& f, ibv_qp* qp, const std::string& local_ip);
  nlohmann::json status(std::uint32_t qp_num) const;
  nlohmann::json disconnect(std::uint32_t qp_num);
  // The QP is going away: its connection goes with it.
  void forget(std::uint32_t qp_num);

  int fd() const { return channel_ ? channel_->fd : -1; }
  void on_events();

 private:
  struct Entry {
    rdma_cm_id* id = nullptr;
    ibv_qp* qp = nullptr;
    std::string state = "connecting";
    std::optional<int> reason;
    std::optional<std::uint32_t> remote_qpn;
    rdma_conn_param param{};
    std::vector<std::uint8_t> private_data;
  };
  void handle(Entry& e, const rdma_cm_event& ev);
  bool to_rts(Entry& e);

  rdma_event_channel* channel_ = nullptr;
  std::map<std::uint32_t, Entry> by_qp_;
};

}  // namespace roceconf::agent
