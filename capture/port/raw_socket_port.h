// A Port on a real interface: an AF_PACKET raw socket bound to one interface, with a classic BPF
// filter (roce_filter.h) so the kernel passes RoCE frames only, kernel receive timestamps
// (SO_TIMESTAMPNS), and our own transmissions left out (PACKET_IGNORE_OUTGOING). Linux takes
// an 802.1Q/802.1ad tag off a received frame before the socket sees it; the port puts it back
// from the auxiliary data (PACKET_AUXDATA), so frames arrive as they were on the wire. Frames
// are sent as given, tags included. Receiving
// waits in ppoll() until the deadline. The socket can be opened inside a named network namespace
// (`ip netns`), where it stays for its whole life.
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "capture/port/clock.h"
#include "capture/port/port.h"
#include "dissector/eth.h"
#include "dissector/udp.h"

namespace roceconf {

struct RawSocketOptions {
  std::string interface = {};               // e.g. "eth0", "rcnf-va"
  std::uint16_t udp_port = Udp::kRocePort;  // RoCEv2 destination port the filter passes
  // A namespace name as `ip netns` knows it (/run/netns/NAME), or a path such as
  // /proc/PID/ns/net; empty for the caller's namespace. Entering one needs CAP_SYS_ADMIN.
  std::string netns = {};
  // Receive everything the interface sees, not only RoCE (for diagnostics).
  bool no_filter = false;
};

// Inserts the tag (TPID, TCI) after the MAC addresses of `frame`, as it was on the wire.
void restore_vlan_tag(std::vector<std::uint8_t>& frame, std::uint16_t tpid, std::uint16_t tci);

class RawSocketPort final : public Port {
 public:
  // Errors: kNotFound for a missing interface or namespace, kPermission without CAP_NET_RAW
  // (or CAP_SYS_ADMIN for a namespace), kIo otherwise.
  static std::expected<std::unique_ptr<RawSocketPort>, PortError> open(
      const RawSocketOptions& options);

  ~RawSocketPort() override;
  RawSocketPort(const RawSocketPort&) = delete;
  RawSocketPort& operator=(const RawSocketPort&) = delete;

  std::expected<void, PortError> send(Bytes frame) override;
  std::expected<std::optional<ReceivedFrame>, PortError> receive(TimeNs deadline) override;
  std::string_view name() const override { return name_; }
  Clock& clock() override { return clock_; }

  int ifindex() const { return ifindex_; }
  const MacAddress& mac() const { return mac_; }
  int fd() const { return fd_; }

 private:
  RawSocketPort(int fd, int ifindex, MacAddress mac, std::string interface);

  int fd_ = -1;
  int ifindex_ = 0;
  MacAddress mac_{};
  std::string interface_;
  std::string name_;
  std::string ip_command_ = "ip";  // "ip -n NS" inside a namespace, for remedies in errors
  bool kernel_ignores_outgoing_ = false;
  SteadyClock clock_;
  std::vector<std::uint8_t> buffer_;
};

}  // namespace roceconf
