#include "control/auth.h"

#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <nlohmann/json.hpp>

#include "control/fields.h"

namespace roceconf::control {
namespace {

using nlohmann::json;

std::string trimmed(std::string text) {
  while (!text.empty() &&
         (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '\t'))
    text.pop_back();
  return text;
}

std::expected<std::string, std::string> checked(std::string secret, std::string_view where) {
  if (secret.size() < kMinSecretBytes)
    return std::unexpected(fmt::format(
        "{} holds {} bytes: a secret needs at least {} (make one with `openssl rand -hex 32`)",
        where, secret.size(), kMinSecretBytes));
  return secret;
}

std::string response(const json& id, json body) {
  body["id"] = id;
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

json refusal(std::string_view errno_name, const std::string& text) {
  return {{"ok", false}, {"errno", errno_name}, {"error", fmt::format("{}: {}", errno_name, text)}};
}

}  // namespace

std::expected<std::string, std::string> read_secret_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return std::unexpected(fmt::format("secret file {}: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return std::unexpected(fmt::format("secret file {} is not a regular file", path));
  // Like an ssh key: a secret others can read is no secret.
  if (st.st_mode & 077)
    return std::unexpected(
        fmt::format("secret file {} can be read by other users (mode {:04o}): chmod 600 {}", path,
                    st.st_mode & 07777, path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(fmt::format("secret file {}: cannot read it", path));
  std::ostringstream text;
  text << in.rdbuf();
  return checked(trimmed(text.str()), fmt::format("secret file {}", path));
}

std::expected<std::optional<std::string>, std::string> find_secret(const std::string& file) {
  if (!file.empty()) {
    auto s = read_secret_file(file);
    if (!s) return std::unexpected(s.error());
    return std::optional<std::string>(std::move(*s));
  }
  const char* env = std::getenv(kSecretEnv);
  if (!env || !*env) return std::optional<std::string>();
  auto s = checked(trimmed(env), fmt::format("${}", kSecretEnv));
  if (!s) return std::unexpected(s.error());
  return std::optional<std::string>(std::move(*s));
}

std::string make_nonce() {
  std::array<std::uint8_t, kNonceBytes> bytes{};
  // RAND_bytes only fails when the system has no entropy source at all; then no nonce can be
  // trusted, and continuing with a predictable one would make the MAC replayable.
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) std::abort();
  return to_hex(bytes);
}

std::string auth_mac(std::string_view secret, std::string_view nonce) {
  std::array<std::uint8_t, EVP_MAX_MD_SIZE> mac{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(nonce.data()), nonce.size(), mac.data(), &length);
  return to_hex(std::span<const std::uint8_t>(mac.data(), length));
}

bool auth_mac_matches(std::string_view secret, std::string_view nonce, std::string_view mac) {
  const std::string expected = auth_mac(secret, nonce);
  if (mac.size() != expected.size()) return false;
  std::string given(mac);
  for (char& c : given)
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  return CRYPTO_memcmp(given.data(), expected.data(), expected.size()) == 0;
}

ControlGate::ControlGate(std::string secret, std::string server)
    : secret_(std::move(secret)),
      server_(std::move(server)),
      nonce_(secret_.empty() ? std::string() : make_nonce()),
      authenticated_(secret_.empty()) {}

std::optional<ControlGate::Answer> ControlGate::screen(std::string_view line) {
  // Once through, only `auth` is the gate's: skip parsing the (up to 1 MiB) requests twice.
  if (authenticated_ && line.find("auth") == std::string_view::npos) return std::nullopt;
  const json request = json::parse(line.begin(), line.end(), nullptr, false);
  json id = nullptr;
  std::string op;
  if (request.is_object()) {
    if (const auto it = request.find("id");
        it != request.end() && (it->is_number() || it->is_string()))
      id = *it;
    if (const auto it = request.find("op"); it != request.end() && it->is_string())
      op = it->get<std::string>();
  }
  if (authenticated_) {
    if (op != "auth") return std::nullopt;
    return Answer{response(id, {{"ok", true}, {"authenticated", true}})};
  }
  if (op == "hello" || op == "capabilities") {
    return Answer{response(id, {{"ok", true},
                                {"target", server_},
                                {"protocol", 1},
                                {"auth", {{"method", "hmac-sha256"}, {"nonce", nonce_}}}})};
  }
  if (op == "auth") {
    std::string mac;
    try {
      const Fields f(request, "auth", true);
      f.only({"mac"});
      mac = f.text("mac");
    } catch (const RequestError& e) {
      return Answer{response(id, refusal("EACCES", fmt::format("auth: {}; closing", e.message))),
                    true};
    }
    if (!auth_mac_matches(secret_, nonce_, mac))
      return Answer{
          response(id, refusal("EACCES",
                               "auth: wrong MAC: the controller's secret is not this server's; "
                               "closing")),
          true};
    authenticated_ = true;
    return Answer{response(id, {{"ok", true}, {"authenticated", true}})};
  }
  if (request.is_discarded())
    return Answer{response(
        id, refusal("EINVAL", "the line is not valid JSON (one request object per line)"))};
  return Answer{response(
      id,
      refusal("EACCES", fmt::format("{}: authenticate first: send hello, then "
                                    "{{\"op\":\"auth\",\"mac\":HMAC-SHA256(secret, nonce) in hex}}",
                                    op.empty() ? "request" : op)))};
}

}  // namespace roceconf::control
