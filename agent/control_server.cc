#include "agent/control_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

#include <fmt/format.h>

namespace roceconf::agent {
namespace {
void log(const std::string& line) {
  fmt::print(stderr, "roceconf-agent: {}\n", line);
}

bool is_wildcard(const sockaddr* a) {
  if (a->sa_family == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr == htonl(INADDR_ANY);
  if (a->sa_family == AF_INET6)
    return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr);
  return false;
}
}  // namespace

std::expected<std::pair<std::string, std::uint16_t>, std::string> split_host_port(
    const std::string& text, std::string_view flag) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    return std::unexpected(fmt::format("{} '{}': write HOST:PORT (or [IPv6]:PORT)", flag, text));
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  const char* first = text.data() + colon + 1;
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(first, last, port);
  if (ec != std::errc{} || end != last || port == 0 || port > 65535)
    return std::unexpected(fmt::format("{} '{}': the port must be 1-65535", flag, text));
  return std::pair{host, static_cast<std::uint16_t>(port)};
}

std::expected<std::unique_ptr<ControlServer>, std::string> ControlServer::listen(
    const std::string& address, const SessionOptions& session, std::string secret) {
  auto hp = split_host_port(address, "--control");
  if (!hp) return std::unexpected(hp.error());
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(hp->second);
  if (const int e = getaddrinfo(hp->first.c_str(), port.c_str(), &hints, &res); e != 0)
    return std::unexpected(
        fmt::format("--control {}: {} (give a numeric address)", address, gai_strerror(e)));
  if (secret.empty() && is_wildcard(res->ai_addr)) {
    freeaddrinfo(res);
    return std::unexpected(fmt::format(
        "--control {} listens on every address without a secret: give --secret-file FILE (or "
        "${}), and bind the test link's address, not a wildcard",
        address, control::kSecretEnv));
  }
  const int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    freeaddrinfo(res);
    return std::unexpected(fmt::format("socket: {}", std::strerror(errno)));
  }
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const int bound = bind(fd, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  if (bound != 0 || ::listen(fd, 16) != 0) {
    const int e = errno;
    close(fd);
    return std::unexpected(fmt::format("--control {}: {}", address, std::strerror(e)));
  }
  return std::unique_ptr<ControlServer>(new ControlServer(fd, session, std::move(secret)));
}

ControlServer::~ControlServer() {
  while (!clients_.empty()) close_client(clients_.begin()->first, "the agent stops");
  if (fd_ >= 0) close(fd_);
}

void ControlServer::on_accept() {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    const int c =
        accept4(fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0) return;
    char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?";
    getnameinfo(reinterpret_cast<sockaddr*>(&peer), len, host, sizeof host, serv, sizeof serv,
                NI_NUMERICHOST | NI_NUMERICSERV);
    const std::string name = fmt::format("{}:{}", host, serv);
    if (clients_.size() >= kMaxClients) {
      send_all(c, control::error_line(
                      fmt::format("{} controllers are connected already", kMaxClients), "EBUSY"));
      close(c);
      continue;
    }
    const int one = 1;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Client& client = clients_
                         .try_emplace(c, Client{name, control::LineReader(kMaxLine),
                                                control::ControlGate(secret_, "roceconf-agent"),
                                                nullptr, 0, std::chrono::steady_clock::now()})
                         .first->second;
    if (client.gate.authenticated()) {
      open_session(client);
    } else {
      log(fmt::format("controller {} connected; it must authenticate", name));
    }
  }
}

void ControlServer::open_session(Client& c) {
  c.session = std::make_unique<Session>(session_options_);
  ++sessions_opened_;
  log(fmt::format(
      "controller {} {}{}", c.peer, c.gate.requires_secret() ? "authenticated" : "connected",
      c.session->has_device() ? "" : " (no device: " + c.session->device_error() + ")"));
}

bool ControlServer::send_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, 5000) <= 0) return false;  // a controller that stopped reading
      continue;
    }
    return false;
  }
  return true;
}

void ControlServer::on_readable(int fd) {
  const auto it = clients_.find(fd);
  if (it == clients_.end()) return;
  Client& c = it->second;
  char chunk[65536];
  for (;;) {
    const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n == 0) return close_client(fd, "disconnected");
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return close_client(fd, fmt::format("receive failed: {}", std::strerror(errno)));
    }
    c.reader.append({chunk, static_cast<std::size_t>(n)});
    while (auto line = c.reader.next()) {
      ++c.requests;
      if (auto gated = c.gate.screen(*line)) {
        if (!send_all(fd, gated->line + "\n")) return close_client(fd, "could not send a response");
        if (gated->close) return close_client(fd, "failed to authenticate; closed");
        continue;
      }
      if (!c.session) open_session(c);
      if (!send_all(fd, c.session->handle_line(*line) + "\n"))
        return close_client(fd, "could not send a response");
    }
    if (c.reader.overflowed()) {
      send_all(fd, control::error_line("a request line is longer than 1 MiB; closing", "E2BIG"));
      return close_client(fd, "sent a line longer than 1 MiB");
    }
  }
}

void ControlServer::on_cm_readable(int cm_fd) {
  for (auto& [fd, c] : clients_)
    if (c.session && c.session->cm_fd() == cm_fd) return c.session->on_cm_events();
}

void ControlServer::expire_unauthenticated(std::chrono::steady_clock::time_point now) {
  std::vector<int> late;
  for (const auto& [fd, c] : clients_)
    if (!c.session && !c.gate.authenticated() && now - c.connected >= auth_timeout_)
      late.push_back(fd);
  for (const int fd : late) {
    send_all(fd, control::error_line(fmt::format("authenticate within {} ms of connecting; closing",
                                                 auth_timeout_.count()),
                                     "ETIMEDOUT"));
    close_client(fd, "did not authenticate in time; closed");
  }
}

void ControlServer::close_client(int fd, const std::string& why) {
  const auto it = clients_.find(fd);
  if (it == clients_.end()) return;
  const Client& c = it->second;
  log(fmt::format("controller {} {} after {} requests{}", c.peer, why, c.requests,
                  c.session ? "; freeing " + c.session->holdings() : ""));
  clients_.erase(it);  // the session's destructor frees its verbs resources
  close(fd);
}

}  // namespace roceconf::agent
