#include "control/client.h"

#include <fmt/format.h>

#include "control/auth.h"

namespace roceconf::control {

std::optional<Error> Client::refusal(const nlohmann::json& response, std::string_view op) {
  if (!response.is_object())
    return Error{
        Error::Kind::kMalformed, {}, fmt::format("{}: the response is not an object", op), {}};
  const auto ok = response.find("ok");
  if (ok != response.end() && ok->is_boolean() && ok->get<bool>()) return std::nullopt;
  Error e;
  e.kind = Error::Kind::kRefused;
  e.errno_name = response.value("errno", std::string());
  e.message = response.value("error", std::string("no error text"));
  if (const auto bad = response.find("bad_wr");
      bad != response.end() && bad->is_number_integer() && bad->get<std::int64_t>() >= 0)
    e.bad_wr = static_cast<std::size_t>(bad->get<std::int64_t>());
  return e;
}

Result<HelloReply> Client::handshake(const std::optional<std::string>& secret) {
  auto first = hello();
  if (!first || !first->auth) return first;
  if (first->auth->method != "hmac-sha256" || first->auth->nonce.empty())
    return std::unexpected(
        Error{Error::Kind::kRefused,
              {},
              fmt::format("hello asks for authentication this roceconf does not know ({})",
                          first->auth->method),
              {}});
  if (!secret)
    return std::unexpected(Error{Error::Kind::kRefused,
                                 "EACCES",
                                 fmt::format("the server requires a secret and none is given "
                                             "(the secret file, or ${})",
                                             kSecretEnv),
                                 {}});
  if (auto answer = auth(auth_mac(*secret, first->auth->nonce)); !answer)
    return std::unexpected(std::move(answer.error()));
  return hello();
}

}  // namespace roceconf::control
