// The memory behind the stale-sq-on-rts defect (quirks.h): a NIC that keeps its send-queue ring
// when a QP is flushed (ERR) or reset, and fetches the old entries again once the QP is back in
// RTS. Each QP's posted WQEs are copied here until the requester completes them; what the QP
// flushed or dropped instead becomes stale, and is handed back on the next entry into RTS. A NIC
// without the defect starts a reset QP with an empty send queue (IBA Vol 1 10.3.1: RESET holds no
// work requests).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "suite/reference_nic/qp.h"

namespace roceconf::target {

class StaleSendQueue {
 public:
  // Copies the WQEs posted to `qp` since the last call.
  void observe(const Qp& qp);
  // The requester completed WQE `seq` (with success or an error): it is not stale.
  void completed(std::uint32_t qp_num, std::uint64_t seq);
  // The QP flushed (ERR) or dropped (RESET) its send queue: the copies not completed go stale.
  void flushed(std::uint32_t qp_num);
  // The stale WQEs of the QP, oldest first; none are kept afterwards.
  std::vector<SendWqe> take(std::uint32_t qp_num);
  // The QP was destroyed.
  void forget(std::uint32_t qp_num) { qps_.erase(qp_num); }

 private:
  struct Ring {
    std::deque<SendWqe> live;  // posted, not yet completed
    std::vector<SendWqe> stale;
    std::optional<std::uint64_t> last_seq;  // the newest WQE copied
  };
  std::map<std::uint32_t, Ring> qps_;
};

}  // namespace roceconf::target
