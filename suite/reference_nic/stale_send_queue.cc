#include "suite/reference_nic/stale_send_queue.h"

#include <algorithm>
#include <utility>

namespace roceconf::target {

void StaleSendQueue::observe(const Qp& qp) {
  Ring& ring = qps_[qp.qp_num()];
  for (const SendWqe& w : qp.send_queue()) {
    // Sequence numbers grow with every post, so anything newer than the last copy is new; WQEs
    // that take() put back are older and already accounted for.
    if (ring.last_seq && w.seq <= *ring.last_seq) continue;
    ring.live.push_back(w);
    ring.last_seq = w.seq;
  }
}

void StaleSendQueue::completed(std::uint32_t qp_num, std::uint64_t seq) {
  const auto it = qps_.find(qp_num);
  if (it == qps_.end()) return;
  auto& live = it->second.live;
  live.erase(
      std::remove_if(live.begin(), live.end(), [seq](const SendWqe& w) { return w.seq == seq; }),
      live.end());
}

void StaleSendQueue::flushed(std::uint32_t qp_num) {
  const auto it = qps_.find(qp_num);
  if (it == qps_.end()) return;
  Ring& ring = it->second;
  for (SendWqe& w : ring.live) {
    w.started = false;
    ring.stale.push_back(std::move(w));
  }
  ring.live.clear();
}

std::vector<SendWqe> StaleSendQueue::take(std::uint32_t qp_num) {
  const auto it = qps_.find(qp_num);
  if (it == qps_.end()) return {};
  return std::exchange(it->second.stale, {});
}

}  // namespace roceconf::target
