#include "suite/reference_nic/errors.h"

namespace roceconf::target {

std::string_view verbs_status_name(VerbsStatus status) {
  switch (status) {
    case VerbsStatus::kPerm:
      return "EPERM";
    case VerbsStatus::kNoEnt:
      return "ENOENT";
    case VerbsStatus::kAgain:
      return "EAGAIN";
    case VerbsStatus::kNoMem:
      return "ENOMEM";
    case VerbsStatus::kBusy:
      return "EBUSY";
    case VerbsStatus::kExist:
      return "EEXIST";
    case VerbsStatus::kInval:
      return "EINVAL";
    case VerbsStatus::kOpNotSupp:
      return "EOPNOTSUPP";
  }
  return "E?";
}

std::string VerbsError::to_string() const {
  return fmt::format("{}: {}", verbs_status_name(status), message);
}

}  // namespace roceconf::target
