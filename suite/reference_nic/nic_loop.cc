#include "suite/reference_nic/nic_loop.h"

#include <algorithm>

namespace roceconf::target {

NicLoop::NicLoop(roceconf::Port& port, NicConfig config)
    : port_(port), nic_(std::move(config), [this](std::span<const std::uint8_t> frame) {
        outbox_.emplace_back(frame.begin(), frame.end());
      }) {}

std::expected<void, PortError> NicLoop::flush() {
  for (; !outbox_.empty(); outbox_.pop_front())
    if (auto sent = port_.send(outbox_.front()); !sent) return sent;
  return {};
}

std::expected<void, PortError> NicLoop::step(TimeNs deadline) {
  if (auto sent = flush(); !sent) return sent;
  if (const auto timer = nic_.next_deadline())
    deadline = std::min(deadline, static_cast<TimeNs>(*timer));
  auto frame = port_.receive(deadline);
  if (!frame) return std::unexpected(frame.error());
  if (*frame) nic_.receive((*frame)->data, static_cast<std::uint64_t>((*frame)->time_ns));
  nic_.tick(now());
  return flush();
}

std::expected<bool, PortError> NicLoop::run_until(TimeNs deadline,
                                                  const std::function<bool()>& done) {
  while (!done()) {
    if (port_.clock().now_ns() >= deadline) return false;
    if (auto r = step(deadline); !r) return std::unexpected(r.error());
  }
  return true;
}

}  // namespace roceconf::target
