// The daemon's control socket: a UNIX stream socket speaking JSON lines, one request line in,
// one response line out, for several clients at once. Non-blocking throughout, so a slow or
// stuck client never stalls the NIC's event loop: the owner polls the descriptors this class
// lists and hands back the ready ones.
//
// Limits keep one client from hurting the others: a line longer than kMaxLine gets an error line
// and the connection is closed; a client that does not read its responses is dropped once
// kMaxPendingOutput bytes wait for it; beyond kMaxClients new connections get an error line and
// are closed.
//
// With a secret, a client authenticates first (ControlGate, control/auth.h): until it has, the
// handler sees none of its lines. The framing is control/lines.h's, shared with roceconf-agent.
#pragma once

#include <poll.h>

#include <cstddef>
#include <expected>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "control/auth.h"
#include "control/lines.h"

namespace roceconf::target {

class ControlServer {
 public:
  static constexpr std::size_t kMaxLine = control::kMaxRequestLine;
  static constexpr std::size_t kMaxPendingOutput = 64u << 20;
  static constexpr std::size_t kMaxClients = control::kMaxClients;

  // Answers one request line (without its newline) with one response line (without newline).
  using Handler = std::function<std::string(std::string_view line)>;

  // Binds and listens at `path`. A stale socket file left by a dead daemon is replaced; a socket
  // another process still answers on, or a file that is not a socket, is an error. `secret`
  // empty: clients need not authenticate (the socket is the owner's only, mode 0600).
  static std::expected<std::unique_ptr<ControlServer>, std::string> open(const std::string& path,
                                                                         Handler handler,
                                                                         std::string secret = {});
  // Closes every connection and removes the socket file.
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Appends the descriptors to wait on (the listening socket and each client's, with POLLOUT
  // while output is pending).
  void add_poll_fds(std::vector<pollfd>& fds) const;
  // Serves the entries of `fds` that belong to this server and have events.
  void dispatch(std::span<const pollfd> fds);

  const std::string& path() const { return path_; }
  std::size_t client_count() const { return clients_.size(); }

 private:
  struct Client {
    int fd = -1;
    control::LineReader in{kMaxLine};
    std::string out;
    bool closing = false;  // close once `out` is flushed; read nothing more
    control::ControlGate gate;
  };

  ControlServer(int fd, std::string path, Handler handler, std::string secret);
  void answer(Client& c, std::string_view line);
  void accept_clients();
  void read_from(Client& c);
  void answer_lines(Client& c, bool at_eof);
  void reject(Client& c, std::string_view message);
  void flush(Client& c);

  int listen_fd_ = -1;
  std::string path_;
  Handler handler_;
  std::string secret_;
  std::vector<std::unique_ptr<Client>> clients_;
};

// The default control socket: $XDG_RUNTIME_DIR/roceconf-target.sock when that is set, else
// /run/roceconf-target.sock.
std::string default_control_path();

}  // namespace roceconf::target
