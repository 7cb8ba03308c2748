// Runs a reference NIC on a roceconf::Port (not target::Port, the port attributes) (in-memory pair,
// raw socket, replay): the event loop of the in-process target and of tests. Frames the NIC
// transmits are queued and sent from the loop, never from inside Nic::receive (a sink must not
// re-enter a NIC); received frames are fed with the port clock's time; timers run when due.
#pragma once

#include <deque>
#include <expected>
#include <functional>
#include <vector>

#include "capture/port/port.h"
#include "suite/reference_nic/nic.h"

namespace roceconf::target {

class NicLoop {
 public:
  NicLoop(roceconf::Port& port, NicConfig config);

  Nic& nic() { return nic_; }
  roceconf::Port& port() { return port_; }
  std::uint64_t now() const { return static_cast<std::uint64_t>(port_.clock().now_ns()); }

  // Sends what the NIC queued, then handles at most one received frame or timer, waiting no
  // later than `deadline` (port clock).
  std::expected<void, PortError> step(TimeNs deadline);
  // Steps until `done()` holds or the port clock reaches `deadline`; true when done.
  std::expected<bool, PortError> run_until(TimeNs deadline, const std::function<bool()>& done);
  // Sends what the NIC queued.
  std::expected<void, PortError> flush();

 private:
  roceconf::Port& port_;
  std::deque<std::vector<std::uint8_t>> outbox_;
  Nic nic_;
};

}  // namespace roceconf::target
