// Names of CM code values, shared by the codec's name functions (cm.h) and the field table's
// value names (cm_fields.h). Values without a name are absent.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "dissector/field_table.h"

namespace roceconf {

// REJ Reason (IBA Table 109; Linux enum ib_cm_rej_reason). 34 is not assigned.
inline constexpr std::array<ValueName, 34> kRejReasonNames = {{
    {1, "No QP available"},
    {2, "No EEC available"},
    {3, "No resources available"},
    {4, "Timeout"},
    {5, "Unsupported request"},
    {6, "Invalid Communication ID"},
    {7, "Invalid Communication Instance"},
    {8, "Invalid Service ID"},
    {9, "Invalid transport service type"},
    {10, "Stale connection"},
    {11, "RDC does not exist"},
    {12, "Invalid GID"},
    {13, "Invalid LID"},
    {14, "Invalid SL"},
    {15, "Invalid traffic class"},
    {16, "Invalid hop limit"},
    {17, "Invalid packet rate"},
    {18, "Invalid alternate GID"},
    {19, "Invalid alternate LID"},
    {20, "Invalid alternate SL"},
    {21, "Invalid alternate traffic class"},
    {22, "Invalid alternate hop limit"},
    {23, "Invalid alternate packet rate"},
    {24, "Port CM redirect"},
    {25, "Port redirect"},
    {26, "Invalid path MTU"},
    {27, "Insufficient responder resources"},
    {28, "Consumer-defined"},
    {29, "Invalid RNR retry"},
    {30, "Duplicate local Communication ID"},
    {31, "Invalid class version"},
    {32, "Invalid flow label"},
    {33, "Invalid alternate flow label"},
    {35, "Vendor option not supported"},
}};

// APR AP Status (IBA Table 117).
inline constexpr std::array<ValueName, 14> kAprStatusNames = {{
    {0, "Success"},
    {1, "Invalid Communication ID"},
    {2, "Unsupported request"},
    {3, "Rejected"},
    {4, "Redirect"},
    {5, "Path is current"},
    {6, "Invalid QPN/EECN"},
    {7, "Invalid LID"},
    {8, "Invalid GID"},
    {9, "Invalid flow label"},
    {10, "Invalid traffic class"},
    {11, "Invalid hop limit"},
    {12, "Invalid packet rate"},
    {13, "Invalid SL"},
}};

// SIDR_REP Status (Linux enum ib_cm_sidr_status).
inline constexpr std::array<ValueName, 6> kSidrStatusNames = {{
    {0, "Success"},
    {1, "Service ID not supported"},
    {2, "Rejected"},
    {3, "No QP available"},
    {4, "Redirect"},
    {5, "Unsupported version"},
}};

// MRA Message MRAed and REJ Message Rejected; 3 is reserved.
inline constexpr std::array<ValueName, 3> kCmMessageKindNames = {{
    {0, "REQ"},
    {1, "REP"},
    {2, "other"},
}};

// REQ Transport Service Type; 3 defers to the Extended Transport Type (XRC when it is 1).
inline constexpr std::array<ValueName, 4> kTransportTypeNames = {{
    {0, "RC"},
    {1, "UC"},
    {2, "RD"},
    {3, "Extended"},
}};
inline constexpr std::array<ValueName, 1> kExtendedTransportTypeNames = {{{1, "XRC"}}};

// The name of `value` in `names`, empty when it has none.
constexpr std::string_view name_of_value(std::span<const ValueName> names, std::uint64_t value) {
  for (const ValueName& v : names)
    if (v.value == value) return v.name;
  return {};
}

}  // namespace roceconf
