#include "suite/reference_nic/control_server.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace roceconf::target {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;

std::string errno_text(int err) {
  return std::strerror(err);
}

std::expected<sockaddr_un, std::string> socket_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty()) return std::unexpected("the control socket path is empty");
  if (path.size() >= sizeof addr.sun_path)
    return std::unexpected(fmt::format("control socket path '{}' is longer than {} bytes", path,
                                       sizeof addr.sun_path - 1));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// True when a process accepts connections at `addr` (a live daemon, not a stale file).
bool answers(const sockaddr_un& addr) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool live = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return live;
}

}  // namespace

std::string default_control_path() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime && *runtime) return fmt::format("{}/roceconf-target.sock", runtime);
  return "/run/roceconf-target.sock";
}

std::expected<std::unique_ptr<ControlServer>, std::string> ControlServer::open(
    const std::string& path, Handler handler, std::string secret) {
  const auto addr = socket_address(path);
  if (!addr) return std::unexpected(addr.error());

  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return std::unexpected(fmt::format(
          "control socket path '{}' exists and is not a socket: choose another --control", path));
    if (answers(*addr))
      return std::unexpected(fmt::format(
          "control socket '{}' is in use by another roceconf target: stop it or choose another "
          "--control",
          path));
    unlink(path.c_str());  // stale: left by a daemon that did not exit cleanly
  }

  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::unexpected(fmt::format("socket(AF_UNIX): {}", errno_text(errno)));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0) {
    const int err = errno;
    close(fd);
    return std::unexpected(fmt::format("cannot create control socket '{}': {}{}", path,
                                       errno_text(err),
                                       err == EACCES ? " (choose a writable --control path)" : ""));
  }
  // The socket drives a device: only its owner may talk to it.
  chmod(path.c_str(), 0600);
  if (listen(fd, 16) != 0) {
    const int err = errno;
    close(fd);
    unlink(path.c_str());
    return std::unexpected(fmt::format("listen on '{}': {}", path, errno_text(err)));
  }
  return std::unique_ptr<ControlServer>(
      new ControlServer(fd, path, std::move(handler), std::move(secret)));
}

ControlServer::ControlServer(int fd, std::string path, Handler handler, std::string secret)
    : listen_fd_(fd),
      path_(std::move(path)),
      handler_(std::move(handler)),
      secret_(std::move(secret)) {}

ControlServer::~ControlServer() {
  for (const auto& c : clients_) close(c->fd);
  close(listen_fd_);
  unlink(path_.c_str());
}

void ControlServer::add_poll_fds(std::vector<pollfd>& fds) const {
  fds.push_back({listen_fd_, POLLIN, 0});
  for (const auto& c : clients_) {
    short events = c->closing ? 0 : POLLIN;
    if (!c->out.empty()) events |= POLLOUT;
    fds.push_back({c->fd, events, 0});
  }
}

void ControlServer::dispatch(std::span<const pollfd> fds) {
  for (const pollfd& p : fds) {
    if (p.revents == 0) continue;
    if (p.fd == listen_fd_) {
      accept_clients();
      continue;
    }
    const auto it = std::find_if(clients_.begin(), clients_.end(),
                                 [&](const auto& c) { return c->fd == p.fd; });
    if (it == clients_.end()) continue;
    Client& c = **it;
    if (p.revents & (POLLERR | POLLNVAL)) {
      c.out.clear();
      c.closing = true;
    } else {
      if (p.revents & (POLLIN | POLLHUP)) read_from(c);
      flush(c);
    }
  }
  // Drop the clients that are done: closing with nothing left to send.
  std::erase_if(clients_, [](const auto& c) {
    if (!c->closing || !c->out.empty()) return false;
    close(c->fd);
    return true;
  });
}

void ControlServer::accept_clients() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: all taken; other errors: the client is already gone
    auto c = std::make_unique<Client>(
        Client{fd,
               control::LineReader(kMaxLine),
               {},
               false,
               control::ControlGate(secret_, "roceconf reference daemon")});
    if (clients_.size() >= kMaxClients)
      reject(*c,
             fmt::format("too many control clients (at most {}): try again later", kMaxClients));
    flush(*c);
    clients_.push_back(std::move(c));
  }
}

void ControlServer::read_from(Client& c) {
  if (c.closing) return;
  char buffer[kReadChunk];
  // A bounded number of reads per wake-up, so one busy client cannot starve the NIC.
  for (int round = 0; round < 16; ++round) {
    const ssize_t n = recv(c.fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      c.in.append({buffer, static_cast<std::size_t>(n)});
      answer_lines(c, false);
      if (c.closing || c.out.size() > kMaxPendingOutput) break;
      continue;
    }
    if (n == 0) {
      answer_lines(c, true);  // a last line without its newline still gets its answer
      c.closing = true;
      return;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      c.out.clear();
      c.closing = true;
    }
    break;
  }
  if (c.out.size() > kMaxPendingOutput) {
    // It does not read what it asked for: drop it rather than hold its answers forever.
    c.out.clear();
    c.closing = true;
  }
}

void ControlServer::answer_lines(Client& c, bool at_eof) {
  while (auto line = c.in.next()) {
    answer(c, *line);
    if (c.closing) return;
  }
  if (c.in.overflowed()) {
    reject(c, fmt::format("request line longer than {} bytes: closing the connection", kMaxLine));
    return;
  }
  if (at_eof)
    if (auto last = c.in.rest()) answer(c, *last);
}

void ControlServer::answer(Client& c, std::string_view line) {
  if (auto gated = c.gate.screen(line)) {
    c.out += gated->line;
    c.out += '\n';
    if (gated->close) {
      c.in.clear();
      c.closing = true;
      shutdown(c.fd, SHUT_RD);
    }
    return;
  }
  c.out += handler_(line);
  c.out += '\n';
}

void ControlServer::reject(Client& c, std::string_view message) {
  c.out += control::error_line(message);
  c.in.clear();
  c.closing = true;
  shutdown(c.fd, SHUT_RD);
}

void ControlServer::flush(Client& c) {
  while (!c.out.empty()) {
    const ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.out.erase(0, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // The peer is gone (EPIPE, ECONNRESET): nothing more can reach it.
    c.out.clear();
    c.closing = true;
    return;
  }
}

}  // namespace roceconf::target
