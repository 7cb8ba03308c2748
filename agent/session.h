// One controller's view of the DUT (control/CONTROL_API.md, protocol 1) over libibverbs:
// the same ops, fields, names and errors as the reference daemon, so the engine's control cases
// run unchanged against real hardware. A session opens the device for itself, so its resources
// and asynchronous events are its own, and its destructor frees every resource it still holds
// (QPs, then MRs, address handles, CQs, PDs), which is what happens when a controller
// disconnects. Nothing a request contains can make handle() throw or crash.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/cm_active.h"
#include "control/ops.h"

namespace roceconf::agent {

struct SessionOptions {
  std::string device;  // ibv device name (rxe0, mlx5_0); empty: the first one
  std::uint8_t port = 1;
  std::string kernel_log = "/dev/kmsg";  // where kernel_log reads the host's kernel log
};

class Session {
 public:
  static constexpr int kProtocolVersion = control::kProtocolVersion;

  // Never fails: without the device every verb answers ENODEV with the reason, so a controller
  // learns why instead of losing its connection.
  explicit Session(const SessionOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  nlohmann::json handle(const nlohmann::json& request);
  // One JSON-lines exchange; the response is one line without the newline.
  std::string handle_line(std::string_view line);

  static std::span<const std::string_view> ops();

  // What the session holds, for logs: "2 QPs, 3 MRs, 1 CQ, 1 PD".
  std::string holdings() const;
  bool has_device() const { return ctx_ != nullptr; }
  // cm_connect's rdma_cm events: the descriptor to poll (-1 before the first cm_connect), and
  // what to do when it is readable.
  int cm_fd() const { return cm_ ? cm_->fd() : -1; }
  void on_cm_events() {
    if (cm_) cm_->on_events();
  }
  const std::string& device_error() const { return device_error_; }

  struct Mr {
    ibv_mr* mr = nullptr;
    std::uint8_t* buffer = nullptr;
    std::uint64_t length = 0;
    std::uint64_t addr = 0;  // what the peer uses: the iova, or the buffer's address
    std::uint32_t pd = 0;
  };
  struct Cq {
    ibv_cq* cq = nullptr;
    std::uint32_t depth = 0;
  };
  struct Mw {
    ibv_mw* mw = nullptr;
    std::uint32_t pd = 0;
    std::uint32_t rkey = 0;  // the last R_Key a bind was posted with
  };
  struct Qp {
    ibv_qp* qp = nullptr;
    std::uint32_t pd = 0;
    std::string dmac = "00:00:00:00:00:00";  // as the controller gave it (verbs resolves its own)
  };

 private:
  friend class Ops;
  void release_all();
  void reset();  // the `reset` op: as a new session, on the same device context

  SessionOptions options_;
  ibv_context* ctx_ = nullptr;
  ibv_comp_channel* channel_ = nullptr;  // every CQ's completion events (cq_events)
  std::string device_name_;
  std::string device_error_;
  int roce_v2_ipv4_gid_ = -1;  // default sgid_index: the port's RoCEv2 IPv4 GID
  int roce_v2_ipv6_gid_ = -1;  // toward an IPv6 GID: the port's first routable RoCEv2 IPv6 GID
  std::string local_ipv4_;     // that GID's address
  std::unique_ptr<CmActive> cm_;

  std::uint32_t next_handle_ = 1;
  std::map<std::uint32_t, ibv_pd*> pds_;
  std::map<std::uint32_t, Cq> cqs_;
  std::map<std::uint32_t, Mr> mrs_;
  std::map<std::uint32_t, Mw> mws_;
  std::map<std::uint32_t, Qp> qps_;  // by QP number
  std::vector<ibv_ah*> ahs_;         // made for UD sends; live until the session ends
};

}  // namespace roceconf::agent
