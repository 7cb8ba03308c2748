// Asynchronous events of a device (IBA Vol 1 ch. 11, asynchronous events and errors;
// ibv_get_async_event(3)):
// CQ errors, QP fatal / request / access errors, communication established, send queue drained,
// path migration, port events. One queue per device, read by polling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string_view>
#include <vector>

namespace roceconf::target {

// Values follow enum ibv_event_type.
enum class AsyncEventType : std::uint8_t {
  kCqErr = 0,
  kQpFatal = 1,
  kQpReqErr = 2,
  kQpAccessErr = 3,
  kCommEst = 4,
  kSqDrained = 5,
  kPathMig = 6,
  kPathMigErr = 7,
  kDeviceFatal = 8,
  kPortActive = 9,
  kPortErr = 10,
  kLidChange = 11,
  kPkeyChange = 12,
  kSmChange = 13,
  kSrqErr = 14,
  kSrqLimitReached = 15,
  kQpLastWqeReached = 16,
  kClientReregister = 17,
  kGidChange = 18,
};

// "CQ_ERR", "QP_FATAL", "COMM_EST", ...
std::string_view async_event_name(AsyncEventType type);
std::optional<AsyncEventType> async_event_from_name(std::string_view name);

struct AsyncEvent {
  AsyncEventType event_type = AsyncEventType::kDeviceFatal;
  // What the event is about: the CQ handle (CQ_ERR), the QP number (QP_*, COMM_EST, SQ_DRAINED,
  // PATH_MIG*, LAST_WQE), the port number (PORT_*, *_CHANGE), 0 for DEVICE_FATAL.
  std::uint32_t element = 0;
  friend bool operator==(const AsyncEvent&, const AsyncEvent&) = default;
};

// FIFO of events. Bounded so a peer that provokes errors forever cannot exhaust memory; events
// past the bound are counted in dropped() (a real device overwrites its event queue the same way).
class AsyncEventQueue {
 public:
  static constexpr std::size_t kDefaultCapacity = 4096;
  explicit AsyncEventQueue(std::size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  void push(AsyncEvent event);
  std::optional<AsyncEvent> poll();
  std::vector<AsyncEvent> drain();
  std::size_t size() const { return events_.size(); }
  bool empty() const { return events_.empty(); }
  std::uint64_t dropped() const { return dropped_; }

 private:
  std::deque<AsyncEvent> events_;
  std::size_t capacity_;
  std::uint64_t dropped_ = 0;
};

}  // namespace roceconf::target
