#include "dissector/finding.h"

#include <array>

namespace roceconf {

namespace {
constexpr std::array kFindingInfo = {
    FindingInfo{"truncated", Severity::kError},
    FindingInfo{"ip-version", Severity::kError},
    FindingInfo{"ip-checksum", Severity::kError},
    FindingInfo{"ip-length", Severity::kError},
    FindingInfo{"ip-fragment", Severity::kWarning},
    FindingInfo{"udp-length", Severity::kError},
    FindingInfo{"grh-length", Severity::kError},
    FindingInfo{"grh-version", Severity::kError},
    FindingInfo{"grh-next-header", Severity::kError},
    FindingInfo{"lrh-length", Severity::kError},
    FindingInfo{"lrh-version", Severity::kError},
    FindingInfo{"lrh-next-header", Severity::kWarning},
    FindingInfo{"bth-tver", Severity::kError},
    FindingInfo{"reserved-opcode", Severity::kError},
    FindingInfo{"unsupported-opcode", Severity::kNote},
    FindingInfo{"reserved-bits", Severity::kWarning},
    FindingInfo{"pad-count", Severity::kError},
    FindingInfo{"payload-length", Severity::kError},
    FindingInfo{"invalid-mtu", Severity::kError},
    FindingInfo{"reserved-syndrome", Severity::kError},
    FindingInfo{"mad-length", Severity::kError},
    FindingInfo{"mad-version", Severity::kWarning},
    FindingInfo{"mad-attribute", Severity::kWarning},
    FindingInfo{"cm-field", Severity::kWarning},
    FindingInfo{"bad-icrc", Severity::kError},
    FindingInfo{"bad-vcrc", Severity::kError},
    FindingInfo{"qp1-qkey", Severity::kError},
    FindingInfo{"qp0-on-roce", Severity::kWarning},
    FindingInfo{"atomic-alignment", Severity::kWarning},
    FindingInfo{"dma-length", Severity::kWarning},
    FindingInfo{"link-header", Severity::kWarning},
};
static_assert(kFindingInfo.size() == static_cast<std::size_t>(FindingCode::kLinkHeader) + 1);
}  // namespace

const FindingInfo& finding_info(FindingCode code) {
  return kFindingInfo[static_cast<std::size_t>(code)];
}

}  // namespace roceconf
