// A Port moves whole Ethernet frames between the suite and a target: send one frame, or wait for
// the next one until a deadline on the port's clock. Implementations: an in-memory pair
// (memory_port.h), an AF_PACKET raw socket (raw_socket_port.h), pcap replay (replay_port.h).
// Errors are values with one line that says what to do; nothing here throws.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capture/port/clock.h"
#include "dissector/bytes.h"

namespace roceconf {

enum class PortErrorCode : std::uint8_t {
  kNotFound,    // interface, namespace or file does not exist
  kPermission,  // missing capability or file permission
  kIo,          // the system call failed for another reason
  kClosed,      // this port or its peer was closed
};

std::string_view port_error_code_name(PortErrorCode code);  // "not found", "permission", ...

struct PortError {
  PortErrorCode code = PortErrorCode::kIo;
  std::string message;  // one line: what went wrong and what to do about it
};

struct ReceivedFrame {
  std::vector<std::uint8_t> data = {};  // owned: stays valid after the next receive()
  TimeNs time_ns = 0;                   // on the receiving port's clock, comparable with deadlines
  std::int64_t unix_ns = 0;             // the same instant since the Unix epoch, for evidence files
};

class Port {
 public:
  virtual ~Port() = default;

  // Queues one frame for transmission.
  virtual std::expected<void, PortError> send(Bytes frame) = 0;
  // The next frame, or nullopt once clock() reaches `deadline` with nothing received.
  virtual std::expected<std::optional<ReceivedFrame>, PortError> receive(TimeNs deadline) = 0;
  virtual std::string_view name() const = 0;
  // The time base of deadlines and of ReceivedFrame::time_ns.
  virtual Clock& clock() = 0;

  // receive() with a deadline `timeout` from now.
  std::expected<std::optional<ReceivedFrame>, PortError> receive_for(TimeNs timeout) {
    return receive(add_saturating(clock().now_ns(), timeout));
  }
};

}  // namespace roceconf
