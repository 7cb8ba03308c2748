// JSON rendering of a decoded packet for `roceconf decode --json`: the field visitor's layers
// as nested objects with the visitor's own names ({"bth": {"psn": 5}}), plus the findings.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "dissector/fields.h"
#include "dissector/packet.h"

namespace roceconf::cli {

using Json = nlohmann::ordered_json;  // keeps wire order, which is how people read packets

// Numbers and flags as JSON numbers and booleans, names as strings, Address values in their
// usual notation ("192.0.2.1", "2001:db8::1", "02:00:00:00:00:01"), Bytes as lowercase hex.
Json field_value_json(const FieldValue& value);

// Collects fields into `out` as {"layer": {"name": value}}. A dotted name nests further
// ("rdma_cm.port" → {"rdma_cm": {"port": ...}}); a layer that repeats (stacked VLAN tags)
// becomes a list of objects, one per occurrence.
class JsonFieldSink final : public FieldSink {
 public:
  explicit JsonFieldSink(Json& out) : out_(out) {}
  void field(std::string_view layer, std::string_view name, const FieldValue& value) override;

 private:
  Json& out_;
};

// [{"code", "layer", "offset", "severity", "message"}, ...]
Json findings_json(const Findings& findings);

// Every layer of `packet`, then "findings", appended to the object `out`.
void add_packet_json(Json& out, const Packet& packet);

}  // namespace roceconf::cli
