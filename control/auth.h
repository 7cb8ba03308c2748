// Authentication of a control-API connection (CONTROL_API.md, "Authentication"): a shared secret
// that never crosses the wire. The server's `hello` carries a random nonce; the controller
// answers {"op":"auth","mac":HEX} with HMAC-SHA256(secret, nonce); until it has, every other op
// is refused, and a wrong MAC ends the connection. roceconf-agent and the reference daemon gate
// their connections with ControlGate; the engine's client computes the MAC with auth_mac().
#pragma once

#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace roceconf::control {

// The environment variable that can carry the secret instead of a file.
inline constexpr char kSecretEnv[] = "ROCECONF_AGENT_SECRET";
// Shorter secrets are refused: `openssl rand -hex 32` makes a good one.
inline constexpr std::size_t kMinSecretBytes = 16;
inline constexpr std::size_t kNonceBytes = 32;

// The secret in FILE: its content without trailing whitespace (a newline from `echo`). Errors
// are one line that says what to do.
std::expected<std::string, std::string> read_secret_file(const std::string& path);
// `file` when given, else $ROCECONF_AGENT_SECRET, else none (nullopt).
std::expected<std::optional<std::string>, std::string> find_secret(const std::string& file);

// kNonceBytes random bytes (OpenSSL's RAND_bytes), as lower-case hex.
std::string make_nonce();
// HMAC-SHA256 with key `secret` over the nonce's hex text, as lower-case hex.
std::string auth_mac(std::string_view secret, std::string_view nonce);
// Whether `mac` (hex, either case) is the MAC of `nonce`; compared in constant time.
bool auth_mac_matches(std::string_view secret, std::string_view nonce, std::string_view mac);

// One connection's gate. Without a secret it is open from the start and only answers `auth`
// (ok, nothing to prove), so a controller that holds a secret has one code path. With a secret,
// before a good `auth` it answers `hello` (protocol, nonce; nothing about the device) and
// `auth`, and refuses everything else with EACCES; a failed `auth` closes the connection.
class ControlGate {
 public:
  // `secret` empty: no authentication. `server` names the server in hello ("roceconf-agent").
  ControlGate(std::string secret, std::string server);

  struct Answer {
    std::string line;    // the response, without its newline
    bool close = false;  // end the connection once it is sent
  };
  // The gate's answer to a request line, or nullopt: pass the line on to the API.
  std::optional<Answer> screen(std::string_view line);

  bool authenticated() const { return authenticated_; }
  bool requires_secret() const { return !secret_.empty(); }

 private:
  std::string secret_;
  std::string server_;
  std::string nonce_;
  bool authenticated_;
};

}  // namespace roceconf::control
