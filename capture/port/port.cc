#include "capture/port/port.h"

namespace roceconf {

std::string_view port_error_code_name(PortErrorCode code) {
  switch (code) {
    case PortErrorCode::kNotFound:
      return "not found";
    case PortErrorCode::kPermission:
      return "permission";
    case PortErrorCode::kIo:
      return "io";
    case PortErrorCode::kClosed:
      return "closed";
  }
  return "unknown";
}

}  // namespace roceconf
