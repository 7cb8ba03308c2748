// The codec's fields as the plugin declares them before seeing a packet (Wireshark registers
// its hf[] table once, at start-up): one per field of the declared field table
// (dissector/field_table.h), `roceconf.<layer>.<name>`, with the table's label, width, base and
// value names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dissector/field_table.h"
#include "dissector/fields.h"

namespace roceconf::wireshark {

enum class FieldKind : std::uint8_t { kUnsigned, kBool, kString, kBytes, kEther, kIpv4, kIpv6 };

struct CatalogueField {
  std::string layer;   // "bth"
  std::string name;    // "solicited"
  std::string abbrev;  // "roceconf.bth.solicited"
  std::string label;   // "Solicited Event"
  std::string blurb;   // the case keys that name it
  FieldKind kind = FieldKind::kUnsigned;
  std::uint8_t width = 0;  // numbers: 8, 16, 24, ... 64 bits (64 for derived values)
  bool hex = false;
  std::span<const ValueName> values;  // names of values, may be empty
};

class FieldCatalogue {
 public:
  // Every field of the table in its order (then, until the table declares their layers, the
  // MAD and CM fields visit_fields() emits). `prefix` starts each abbrev. Fields whose abbrev
  // is in `own` are left out: the plugin declares those itself (roceconf.icrc.value).
  static FieldCatalogue build(std::string_view prefix, const std::vector<std::string>& own = {});

  const std::vector<CatalogueField>& fields() const { return fields_; }
  // Index of (layer, name) for a value of `kind`: a value of another kind than the field's
  // (an address of another width) maps to no field, except an IPv4 address to an IPv6 field
  // (shown IPv4-mapped). -1 when unknown.
  int find(std::string_view layer, std::string_view name, FieldKind kind) const;

  // The kind a value takes: addresses by width (6: MAC, 4: IPv4, 16: IPv6/GID).
  static FieldKind kind_of(const FieldValue& value);
  static FieldKind kind_of(FieldType type);
  // The width a number of `bits` bits is shown with, in whole bytes as Wireshark's own
  // InfiniBand dissector has them (a 24-bit QPN or PSN: 0x000029): 8, 16, 24, ... 64 (0: 64).
  static std::uint8_t width_of(unsigned bits);

 private:
  void add(CatalogueField f);

  std::vector<CatalogueField> fields_;
  std::unordered_map<std::string, int> index_;  // "layer.name#kind"
};

}  // namespace roceconf::wireshark
