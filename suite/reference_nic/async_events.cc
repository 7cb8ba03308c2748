#include "suite/reference_nic/async_events.h"

#include <array>
#include <utility>

namespace roceconf::target {
namespace {

constexpr std::array<std::string_view, 19> kNames = {
    "CQ_ERR",
    "QP_FATAL",
    "QP_REQ_ERR",
    "QP_ACCESS_ERR",
    "COMM_EST",
    "SQ_DRAINED",
    "PATH_MIG",
    "PATH_MIG_ERR",
    "DEVICE_FATAL",
    "PORT_ACTIVE",
    "PORT_ERR",
    "LID_CHANGE",
    "PKEY_CHANGE",
    "SM_CHANGE",
    "SRQ_ERR",
    "SRQ_LIMIT_REACHED",
    "QP_LAST_WQE_REACHED",
    "CLIENT_REREGISTER",
    "GID_CHANGE",
};

}  // namespace

std::string_view async_event_name(AsyncEventType type) {
  const auto i = static_cast<std::size_t>(type);
  return i < kNames.size() ? kNames[i] : "UNKNOWN";
}

std::optional<AsyncEventType> async_event_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<AsyncEventType>(i);
  }
  return std::nullopt;
}

void AsyncEventQueue::push(AsyncEvent event) {
  if (events_.size() >= capacity_) {
    ++dropped_;
    return;
  }
  events_.push_back(event);
}

std::optional<AsyncEvent> AsyncEventQueue::poll() {
  if (events_.empty()) return std::nullopt;
  AsyncEvent e = events_.front();
  events_.pop_front();
  return e;
}

std::vector<AsyncEvent> AsyncEventQueue::drain() {
  std::vector<AsyncEvent> out(events_.begin(), events_.end());
  events_.clear();
  return out;
}

}  // namespace roceconf::target
