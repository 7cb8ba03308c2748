#include "suite/engine/control_client.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "control/auth.h"

namespace roceconf::engine {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The largest response kept: read_mr answers 1 MiB as 2 MiB of hex, with room to spare.
constexpr std::size_t kMaxLine = 64u << 20;
constexpr milliseconds kConnectRetry{10};

// Waits for `events` on `fd` until `deadline`; false on timeout.
bool wait_for(int fd, short events, SteadyClock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now()).count();
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, static_cast<int>(std::max<long long>(left, 0)));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return true;  // let the following call report the error
  }
}

std::string op_of(const nlohmann::json& request) {
  const auto op = request.find("op");
  return op != request.end() && op->is_string() ? op->get<std::string>() : "?";
}

}  // namespace

std::expected<std::unique_ptr<ControlClient>, std::string> ControlClient::connect(
    const std::string& path, milliseconds timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    return std::unexpected(fmt::format("control socket path '{}' must be 1 to {} bytes long", path,
                                       sizeof addr.sun_path - 1));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

  const auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    // Non-blocking: a full listen backlog gives EAGAIN instead of blocking past the deadline.
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return std::unexpected(fmt::format("socket(AF_UNIX): {}", std::strerror(errno)));
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0)
      return std::unique_ptr<ControlClient>(new ControlClient(fd, path));
    const int err = errno;
    ::close(fd);
    const bool retry = err == ENOENT || err == ECONNREFUSED || err == EAGAIN || err == EINTR;
    if (!retry || SteadyClock::now() >= deadline) {
      const std::string hint =
          err == ENOENT || err == ECONNREFUSED ? " (is the target running with --control?)" : "";
      return std::unexpected(
          fmt::format("cannot connect to control socket {}: {}{}", path, std::strerror(err), hint));
    }
    std::this_thread::sleep_for(std::min(
        kConnectRetry, std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now())));
  }
}

std::expected<std::unique_ptr<ControlClient>, std::string> ControlClient::connect_tcp(
    const std::string& host_port, milliseconds timeout) {
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == host_port.size())
    return std::unexpected(fmt::format("agent '{}' is not HOST:PORT (or [IPv6]:PORT)", host_port));
  std::string host = host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string port = host_port.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int e = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); e != 0)
    return std::unexpected(fmt::format("agent {}: {}", host_port, gai_strerror(e)));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(found, freeaddrinfo);

  const auto deadline = SteadyClock::now() + timeout;
  int last_error = 0;
  for (;;) {
    for (const addrinfo* a = list.get(); a; a = a->ai_next) {
      const int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0) {
        last_error = errno;
        continue;
      }
      int err = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
      if (err == EINPROGRESS) {
        err = ETIMEDOUT;
        if (wait_for(fd, POLLOUT, deadline)) {
          socklen_t len = sizeof err;
          if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        }
      }
      if (err == 0) {
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return std::unique_ptr<ControlClient>(new ControlClient(fd, host_port));
      }
      last_error = err;
      ::close(fd);
    }
    const bool retry = last_error == ECONNREFUSED || last_error == EINTR || last_error == EAGAIN;
    if (!retry || SteadyClock::now() >= deadline)
      return std::unexpected(fmt::format(
          "cannot connect to the agent at {}: {}{}", host_port, std::strerror(last_error),
          last_error == ECONNREFUSED ? " (is roceconf-agent --control running on the DUT host?)"
                                     : ""));
    std::this_thread::sleep_for(
        std::min(milliseconds(100),
                 std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now())));
  }
}

ControlClient::ControlClient(int fd, std::string path)
    : fd_(fd), path_(std::move(path)), reader_(kMaxLine) {}

ControlClient::~ControlClient() {
  if (fd_ >= 0) ::close(fd_);
}

std::string ControlClient::fail(const std::string& what) const {
  return fmt::format("control socket {}: {}", path_, what);
}

std::expected<nlohmann::json, std::string> ControlClient::handshake(
    const std::optional<std::string>& secret, milliseconds timeout) {
  // The typed client's handshake over this connection; the last response is kept, since the
  // caller gets the server's hello as it came (ok or not).
  std::string last_op;
  nlohmann::json last;
  control::Client typed([&](const nlohmann::json& r) -> std::expected<nlohmann::json, std::string> {
    last_op = r.value("op", std::string());
    auto got = request(r, timeout);
    if (got) last = *got;
    return got;
  });
  const auto hello = typed.handshake(secret);
  if (hello) return last;
  const control::Error& e = hello.error();
  if (e.kind == control::Error::Kind::kTransport) return std::unexpected(e.message);
  if (last_op == "auth")
    return std::unexpected(fail(fmt::format(
        "the server refused the secret ({}): give the secret roceconf-agent --secret-file reads",
        e.message)));
  const auto auth = last.find("auth");
  if (last_op != "hello" || !last.value("ok", false) || auth == last.end())
    return last;  // a hello the server refused (or this client cannot read): as it came
  if (!secret)
    return std::unexpected(fail(fmt::format(
        "the server requires a secret and none is given: set agent_secret_file = FILE in the "
        "profile (or ${}) to the secret roceconf-agent --secret-file reads",
        control::kSecretEnv)));
  return std::unexpected(fail(fmt::format(
      "hello asks for authentication this roceconf does not know: {:.120}", auth->dump())));
}

std::expected<nlohmann::json, std::string> ControlClient::request(const nlohmann::json& request,
                                                                  milliseconds timeout) {
  if (!broken_.empty()) return std::unexpected(broken_);
  if (!request.is_object()) return std::unexpected(fail("a control request must be a JSON object"));
  const std::uint64_t id = next_id_++;
  const std::string op = op_of(request);
  const auto deadline = SteadyClock::now() + timeout;
  auto break_with = [this](const std::string& what) {
    broken_ = fail(what);
    return std::unexpected(broken_);
  };

  nlohmann::json numbered = request;
  numbered["id"] = id;
  std::string line;
  try {
    line = numbered.dump() + "\n";
  } catch (const nlohmann::json::exception& e) {
    return std::unexpected(fail(fmt::format("request '{}' cannot be written: {}", op, e.what())));
  }

  std::string_view out = line;
  while (!out.empty()) {
    if (!wait_for(fd_, POLLOUT, deadline)) {
      // Part of a line may be out: the stream is no longer in step with the server.
      return break_with(fmt::format("request '{}' not accepted within {} ms", op, timeout.count()));
    }
    const ssize_t n = ::send(fd_, out.data(), out.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET) return break_with("closed by the target");
      return break_with(fmt::format("send: {}", std::strerror(errno)));
    }
    out.remove_prefix(static_cast<std::size_t>(n));
  }

  for (;;) {
    if (auto text = reader_.next()) {
      nlohmann::json response = nlohmann::json::parse(*text, nullptr, false);
      if (response.is_discarded() || !response.is_object())
        return break_with(fmt::format("response to '{}' is not a JSON object: {:.80}", op, *text));
      const auto got = response.find("id");
      if (got != response.end() && got->is_number_unsigned()) {
        const auto got_id = got->get<std::uint64_t>();
        if (got_id == id) return response;
        if (abandoned_.erase(got_id) > 0) continue;  // a late answer to a timed-out request
      }
      std::string detail;
      if (const auto error = response.find("error"); error != response.end() && error->is_string())
        detail = ": " + error->get<std::string>();
      return break_with(fmt::format("response id {} does not match request id {} ('{}'){}",
                                    got == response.end() ? "(none)" : got->dump(), id, op,
                                    detail));
    }
    if (reader_.overflowed())
      return break_with(fmt::format("response to '{}' longer than {} bytes", op, kMaxLine));
    if (!wait_for(fd_, POLLIN, deadline)) {
      abandoned_.insert(id);
      return std::unexpected(
          fail(fmt::format("no response to '{}' within {} ms", op, timeout.count())));
    }
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n == 0) return break_with("closed by the target");
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      if (errno == ECONNRESET) return break_with("closed by the target");
      return break_with(fmt::format("recv: {}", std::strerror(errno)));
    }
    reader_.append({chunk, static_cast<std::size_t>(n)});
  }
}

}  // namespace roceconf::engine
