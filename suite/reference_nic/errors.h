// Errors returned by the reference target's verbs (create, modify, post, ...). Modelled on the
// errno values libibverbs returns (ibv_modify_qp(3), ibv_post_send(3): EINVAL, ENOMEM, ...), with
// one line of text saying exactly what was wrong, because a conformance suite shows it to people.
#pragma once

#include <cerrno>
#include <expected>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace roceconf::target {

// Values are the errno numbers, so an agent on a real NIC can report its errno unchanged.
enum class VerbsStatus : int {
  kPerm = EPERM,            // operation not permitted (privileged attribute)
  kNoEnt = ENOENT,          // no such handle (PD, CQ, QP, MR)
  kAgain = EAGAIN,          // temporarily unavailable
  kNoMem = ENOMEM,          // queue full or resource limit reached
  kBusy = EBUSY,            // object still in use (PD with MRs/QPs, CQ with QPs)
  kExist = EEXIST,          // already exists (second GSI QP)
  kInval = EINVAL,          // invalid argument, transition or attribute
  kOpNotSupp = EOPNOTSUPP,  // valid in verbs, not implemented by this target
};

// "EINVAL", "ENOMEM", ...
std::string_view verbs_status_name(VerbsStatus status);

struct VerbsError {
  VerbsStatus status = VerbsStatus::kInval;
  std::string message;  // one line, prefixed with the verb: "modify_qp: ..."

  // "EINVAL: modify_qp: ..."
  std::string to_string() const;
  friend bool operator==(const VerbsError&, const VerbsError&) = default;
};

template <typename T>
using VerbsResult = std::expected<T, VerbsError>;

// return verbs_error(VerbsStatus::kInval, "modify_qp: {} is ...", x);
template <typename... Args>
std::unexpected<VerbsError> verbs_error(VerbsStatus status, fmt::format_string<Args...> format,
                                        Args&&... args) {
  return std::unexpected(VerbsError{status, fmt::format(format, std::forward<Args>(args)...)});
}

}  // namespace roceconf::target
