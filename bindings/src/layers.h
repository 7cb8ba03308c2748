// The header classes Python sees (BTH, AETH, REQ, ...): for each, its fields by Scapy's names,
// how to read them from a decoded packet and write them into one to encode. The Python classes
// are made from this table, so the C++ structs stay the one definition of every header.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "common.h"
#include "dissector/packet.h"

namespace roceconf::python {

struct FieldSpec {
  std::string name;
  // Filled on encode when not given (lengths, checksums, pad count, ICRC, types).
  bool computed = false;
  std::function<py::object(const Packet&, std::size_t index)> get;
  std::function<void(Packet&, std::size_t index, py::handle value, Arena& arena)> set;
};

struct LayerSpec {
  std::string cls;  // Python class name: "BTH", "REQ", ...
  std::string doc;
  std::vector<FieldSpec> fields;
  std::function<std::size_t(const Packet&)> count;  // instances present (Dot1Q: tags)
  std::function<void(Packet&)> add;                 // one more, with defaults

  const FieldSpec* field(std::string_view name) const;
};

// In wire order.
const std::vector<LayerSpec>& layer_specs();
const LayerSpec* find_layer(std::string_view cls);

}  // namespace roceconf::python
