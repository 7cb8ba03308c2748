// One field vocabulary for every consumer: JSON output, the engine's match masks, the Wireshark
// plugin and the Python bindings all read decoded layers through this visitor, with Scapy's
// field names where Scapy has the field.
#pragma once

#include <cstdint>
#include <string_view>
#include <variant>

#include "dissector/bytes.h"

namespace roceconf {

// A MAC (6 bytes), IPv4 (4) or IPv6 address / GID (16), shown in its usual notation.
struct Address {
  Bytes bytes;
};

// Unsigned number, flag, symbolic name (static storage), raw bytes or an address (views valid
// for the duration of the call).
using FieldValue = std::variant<std::uint64_t, bool, std::string_view, Bytes, Address>;

class FieldSink {
 public:
  virtual ~FieldSink() = default;
  // `layer` is a layer_name() ("bth", "cm", ...); `name` the field within it ("psn").
  virtual void field(std::string_view layer, std::string_view name, const FieldValue& value) = 0;
};

}  // namespace roceconf
