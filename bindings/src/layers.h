// The header classes Python sees (BTH, AETH, REQ, ...): for each, its fields and how to read them
// from a decoded packet and write them into one to encode. The fields come from the codec's
// field table (dissector/field_table.h), so a Python attribute is the table's field name
// (`BTH.solicited` is bth.solicited); only what the table lacks (reserved bits a lossless round
// trip needs, Raw's bytes) and older names kept as views (IP.tos, IP.flags) are written here.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "common.h"
#include "dissector/field_table.h"
#include "dissector/packet.h"

namespace roceconf::python {

struct FieldSpec {
  std::string name;
  // Filled on encode when not given (lengths, checksums, pad count, ICRC, types).
  bool computed = false;
  // Derived from other fields (opcode_name, credits, icrc_ok): read from decoded packets and
  // ignored by encode, which derives them again.
  bool readonly = false;
  const FieldDef* def = nullptr;  // the table's field; null for the class's own
  // How Python shows it: "unsigned", "bool", "name", "bytes", "mac", "ipv4", "ipv6"; hex for
  // numbers shown in hexadecimal (the table's choice; reserved bits for the class's own).
  std::string_view type = "unsigned";
  bool hex = false;
  std::function<py::object(const Packet&, std::size_t index)> get;
  std::function<void(Packet&, std::size_t index, py::handle value, Arena& arena)> set;
};

// An older name kept as a view over fields of the class (IP.tos is dscp and ecn): never stored,
// read and written through `over`.
struct AliasSpec {
  FieldSpec field;
  std::vector<std::string> over;
};

struct LayerSpec {
  std::string cls;  // Python class name: "BTH", "REQ", ...
  std::string doc;
  std::string layer;  // the field table's layer the fields come from: "bth", "cm", ...
  std::vector<FieldSpec> fields;
  std::vector<AliasSpec> aliases;
  std::function<std::size_t(const Packet&)> count;  // instances present (Dot1Q: tags)
  std::function<void(Packet&)> add;                 // one more, with defaults

  const FieldSpec* field(std::string_view name) const;  // a field or an alias
};

// (names.cc) A value of `f` given by its name in the table's value names: exactly as the table has
// it (case-insensitive), or as an identifier ("No QP available" as "NO_QP_AVAILABLE"). `field`
// names the field in the error (EncodeError) an unknown name raises.
std::uint64_t named_value(const FieldDef& f, std::string_view name, std::string_view field);
// The identifier form of a value name: "No QP available" -> "NO_QP_AVAILABLE".
std::string name_identifier(std::string_view name);

// In wire order.
const std::vector<LayerSpec>& layer_specs();
const LayerSpec* find_layer(std::string_view cls);

}  // namespace roceconf::python
