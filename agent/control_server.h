// The control API on a TCP socket (JSON lines, control/CONTROL_API.md), one Session per
// connected controller: a controller that disconnects, or is killed mid-run, leaves nothing
// behind, because its session frees every verbs resource it made. Lines longer than 1 MiB get
// an error line and the connection is closed; at most 64 controllers at once. The framing is
// control/lines.h's, shared with the reference daemon.
//
// With a secret, each connection passes a ControlGate (control/auth.h) first: its
// Session (the only thing that calls verbs) is opened once the controller has authenticated, so
// an unauthenticated one never reaches the device.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <string>

#include "agent/session.h"
#include "control/auth.h"
#include "control/lines.h"

namespace roceconf::agent {

class ControlServer {
 public:
  static constexpr std::size_t kMaxLine = control::kMaxRequestLine;
  static constexpr std::size_t kMaxClients = control::kMaxClients;
  // How long a connection may stay unauthenticated: without a limit, 64 idle connections would
  // hold every controller slot.
  static constexpr std::chrono::milliseconds kAuthTimeout{10000};

  // `address`: HOST:PORT to listen on (IPv4 or [IPv6]). `secret` empty: no authentication, and
  // then a wildcard address (0.0.0.0, ::) is refused: anyone on any network could drive the
  // device.
  static std::expected<std::unique_ptr<ControlServer>, std::string> listen(
      const std::string& address, const SessionOptions& session, std::string secret = {});
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  int listen_fd() const { return fd_; }
  void on_accept();
  // Reads what `fd` has, answers every complete line; closes the client at EOF or error.
  void on_readable(int fd);
  template <typename F>
  void for_each_client(F&& f) const {
    for (const auto& [fd, c] : clients_) f(fd);
  }
  // The sessions' cm_connect event channels, and what to do when one is readable.
  template <typename F>
  void for_each_cm_fd(F&& f) const {
    for (const auto& [fd, c] : clients_)
      if (const int cm = c.session ? c.session->cm_fd() : -1; cm >= 0) f(cm);
  }
  void on_cm_readable(int cm_fd);
  // Closes the connections that have not authenticated within the auth timeout (call it from
  // the poll loop, at least once a second).
  void expire_unauthenticated(std::chrono::steady_clock::time_point now);
  void set_auth_timeout(std::chrono::milliseconds timeout) { auth_timeout_ = timeout; }
  std::size_t clients() const { return clients_.size(); }
  // Sessions opened since the server started: each one opened the device.
  std::uint64_t sessions_opened() const { return sessions_opened_; }

 private:
  struct Client {
    std::string peer;
    control::LineReader reader;
    control::ControlGate gate;
    std::unique_ptr<Session> session;  // opened once the gate lets the controller through
    std::uint64_t requests = 0;
    std::chrono::steady_clock::time_point connected{};
  };
  ControlServer(int fd, SessionOptions session, std::string secret)
      : fd_(fd), session_options_(std::move(session)), secret_(std::move(secret)) {}
  void open_session(Client& c);
  void close_client(int fd, const std::string& why);
  bool send_all(int fd, const std::string& text);

  int fd_ = -1;
  SessionOptions session_options_;
  std::string secret_;
  std::map<int, Client> clients_;
  std::chrono::milliseconds auth_timeout_ = kAuthTimeout;
  std::atomic<std::uint64_t> sessions_opened_{0};  // read by tests while the loop runs
};

// Splits "HOST:PORT" / "[v6]:PORT"; the error names the form to use.
std::expected<std::pair<std::string, std::uint16_t>, std::string> split_host_port(
    const std::string& text, std::string_view flag);

}  // namespace roceconf::agent
