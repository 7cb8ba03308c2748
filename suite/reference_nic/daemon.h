// The reference target as a daemon (`roceconf target`): one Nic on a raw socket bound to a real
// interface (a veth in a namespace, usually), on the real clock, with the control API on a UNIX
// socket and, optionally, the built-in responder application. One thread runs everything: an
// event loop waits on the port, the control clients and the NIC's next timer.
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/port/raw_socket_port.h"
#include "suite/reference_nic/control_api.h"
#include "suite/reference_nic/control_server.h"
#include "suite/reference_nic/nic.h"
#include "suite/reference_nic/responder_app.h"

namespace roceconf::target {

struct DaemonOptions {
  std::string interface;
  std::string netns;              // empty: the caller's namespace
  std::optional<MacAddress> mac;  // default: the interface's MAC
  Ipv4Address ipv4{};
  std::optional<Ipv6Address> ipv6;  // a RoCEv2 GID beside the IPv4 one
  std::uint16_t udp_port = Udp::kRocePort;
  Quirks quirks;
  std::vector<std::uint16_t> pkeys;             // P_Key table entries after the default 0xFFFF
  std::optional<ResponderAppConfig> responder;  // --listen
  std::string control_path;                     // empty: default_control_path()
};

// What went wrong opening the daemon: a user error (bad interface, no privilege, socket path in
// use) or a failure while running.
struct DaemonError {
  bool usage = false;  // the user can fix it (exit status 2)
  std::string message;
};

class Daemon {
 public:
  static std::expected<std::unique_ptr<Daemon>, DaemonError> open(const DaemonOptions& options);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Serves until SIGINT or SIGTERM (or stop()); the handlers are installed for the duration.
  // An error means the port failed (interface removed, ...).
  std::expected<void, DaemonError> run();
  // Makes run() return; safe from a signal handler or another thread.
  void stop();

  // One line for the log: interface, addresses, quirks, control socket, listener.
  std::string describe() const;
  Nic& nic() { return *nic_; }

 private:
  Daemon() = default;
  void send_frame(Bytes frame);
  std::string answer(std::string_view line);
  void drain_port();
  // A fresh NIC, control API and responder application, as open() made them (the `reset` op).
  std::expected<void, std::string> build_nic();

  DaemonOptions options_;
  NicConfig nic_config_;
  std::unique_ptr<RawSocketPort> port_;
  std::unique_ptr<Nic> nic_;
  std::unique_ptr<ControlApi> api_;
  std::unique_ptr<ResponderApp> app_;
  std::unique_ptr<ControlServer> control_;
  int wake_[2] = {-1, -1};  // self-pipe: stop() and signals write, the loop polls
  std::optional<DaemonError> port_error_;
  bool send_failing_ = false;  // a send error was logged; quiet until a send succeeds
};

}  // namespace roceconf::target
