// The transport of the control API (control/CONTROL_API.md) over a UNIX stream socket (the
// reference daemon) or TCP (roceconf-agent on a DUT host): one JSON request line out, one
// response line back (control/lines.h framing). The client numbers the requests itself and checks
// that each response carries the number of its request, so a response can never be taken for
// another's. Every wait has a deadline; failures are one line of text. The typed client
// (control::Client, control/client.h) runs over it: `control::Client typed(client.transport());`.
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "control/client.h"
#include "control/lines.h"

namespace roceconf::engine {

class ControlClient {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{5000};

  // Connects to the socket at `path`, retrying while it does not exist yet or refuses (a daemon
  // still starting) until `timeout` has passed.
  static std::expected<std::unique_ptr<ControlClient>, std::string> connect(
      const std::string& path, std::chrono::milliseconds timeout = kDefaultTimeout);

  // Connects to HOST:PORT ([IPv6]:PORT) over TCP, retrying while it refuses (an agent still
  // starting) until `timeout` has passed.
  static std::expected<std::unique_ptr<ControlClient>, std::string> connect_tcp(
      const std::string& host_port, std::chrono::milliseconds timeout = kDefaultTimeout);

  ~ControlClient();
  ControlClient(const ControlClient&) = delete;
  ControlClient& operator=(const ControlClient&) = delete;

  // Sends `request` (an object; its "id", if any, is replaced by the client's) and returns the
  // response object, ok or not. The error is a transport failure: closed socket, no response
  // within `timeout`, a response that is not JSON or answers another id.
  std::expected<nlohmann::json, std::string> request(
      const nlohmann::json& request, std::chrono::milliseconds timeout = kDefaultTimeout);

  // Opens the exchange: `hello`, and when the server asks for authentication (its hello carries
  // a nonce, CONTROL_API.md), `auth` with HMAC-SHA256(secret, nonce) and `hello` again. Returns
  // the server's hello (ok or not). The error is one line: a transport failure, a server that
  // asks for a secret when none is given, or one that refuses it.
  std::expected<nlohmann::json, std::string> handshake(
      const std::optional<std::string>& secret,
      std::chrono::milliseconds timeout = kDefaultTimeout);

  // This connection as the typed client's transport (it must outlive the client).
  control::Transport transport(std::chrono::milliseconds timeout = kDefaultTimeout) {
    return [this, timeout](const nlohmann::json& r) { return request(r, timeout); };
  }

  const std::string& path() const { return path_; }

 private:
  ControlClient(int fd, std::string path);
  std::string fail(const std::string& what) const;

  int fd_ = -1;
  std::string path_;
  control::LineReader reader_;  // bytes received after the last complete line
  std::uint64_t next_id_ = 1;
  std::set<std::uint64_t> abandoned_;  // ids that timed out: their late responses are skipped
  std::string broken_;                 // why the connection cannot be used any more
};

}  // namespace roceconf::engine
