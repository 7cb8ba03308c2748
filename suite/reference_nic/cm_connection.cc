#include "suite/reference_nic/cm_connection.h"

#include <array>

namespace roceconf::target {

std::string_view cm_state_name(CmState state) {
  static constexpr std::array<std::string_view, 7> kNames = {
      "REQ_SENT",    "MRA_REQ_RCVD", "REP_SENT", "MRA_REP_RCVD",
      "ESTABLISHED", "DREQ_SENT",    "TIMEWAIT",
  };
  const auto i = static_cast<std::size_t>(state);
  return i < kNames.size() ? kNames[i] : "UNKNOWN";
}

}  // namespace roceconf::target
