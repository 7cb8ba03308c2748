// The MAD common header's part of the declared field table (layer "mad"). visit_mad_fields
// (mad.h) walks it, then the CM table for a decoded CM message.
#pragma once

#include <span>

#include "dissector/field_table.h"

namespace roceconf {

// The MAD header fields in wire order (the reserved word is not among them).
std::span<const FieldDef> mad_field_table();

}  // namespace roceconf
