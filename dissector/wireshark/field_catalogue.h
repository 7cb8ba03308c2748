// The codec's field vocabulary as a fixed list, for consumers that must declare every field
// before seeing a packet (Wireshark registers its hf[] table once, at start-up). The list is
// read from visit_fields() itself over sample packets that carry every layer and every CM
// message, so it can never drift from what the codec emits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dissector/fields.h"

namespace roceconf::wireshark {

enum class FieldKind : std::uint8_t { kUnsigned, kBool, kString, kBytes, kEther, kIpv4, kIpv6 };

struct CatalogueField {
  std::string layer;   // "bth"
  std::string name;    // "psn"
  std::string abbrev;  // "roceconf.bth.psn"
  FieldKind kind = FieldKind::kUnsigned;
};

class FieldCatalogue {
 public:
  // Every field visit_fields() can emit, in first-emitted order. `prefix` starts each abbrev.
  // Layers in `skip` are left out (the plugin declares ICRC and VCRC fields itself).
  static FieldCatalogue build(std::string_view prefix, const std::vector<std::string>& skip = {});

  const std::vector<CatalogueField>& fields() const { return fields_; }
  // Index of (layer, name) for a value of `kind`: an address of another width than the one
  // catalogued maps to no field. -1 when unknown.
  int find(std::string_view layer, std::string_view name, FieldKind kind) const;

  // The kind a value takes: addresses by width (6: MAC, 4: IPv4, 16: IPv6/GID).
  static FieldKind kind_of(const FieldValue& value);

  // Adds one field unless already present (a name seen before with another kind gets a suffix).
  void add(std::string_view prefix, std::string_view layer, std::string_view name, FieldKind kind);

 private:
  std::vector<CatalogueField> fields_;
  std::unordered_map<std::string, int> index_;  // "layer.name#kind"
};

}  // namespace roceconf::wireshark
