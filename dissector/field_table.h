// The declared field table: every field of every header, extended header, MAD and CM message
// the codec knows, with its name, width, type, label, value names and how a case may set it.
// Everything that names a field derives from it: visit_fields() and `roceconf decode --json`,
// the case language's `send` and `expect` keys, CM and REP field setting, the Python layers and
// the Wireshark plugin's hf[] table. One name per field everywhere: "bth.solicited" is the decode
// JSON key, the case key, the Python attribute `BTH.solicited` and the filter `roceconf.bth.
// solicited`. Short case keys ("se", "tver") are declared here as aliases, never elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dissector/fields.h"

namespace roceconf {

struct Packet;

enum class FieldType : std::uint8_t {
  kUnsigned,  // a number of `bits` bits
  kBool,      // a one-bit flag
  kName,      // a symbolic name derived from another field (opcode_name): read-only
  kBytes,     // raw bytes (private data)
  kMac,       // 6-byte address
  kIpv4,      // 4-byte address
  kIpv6,      // 16-byte address or GID
};

struct ValueName {
  std::uint64_t value;
  std::string_view name;
};

struct FieldDef {
  std::string_view layer;  // "bth"
  std::string_view name;   // "solicited"
  std::string_view label;  // "Solicited Event"
  FieldType type = FieldType::kUnsigned;
  std::uint8_t bits = 0;  // width on the wire; 0 for derived values and byte strings
  bool hex = false;       // shown in hexadecimal (identifiers, keys, PSNs, checksums)
  // Filled in when a packet is built (encode(), EncodeOptions) unless the case gives it.
  bool computed = false;
  // Short case keys, space-separated ("swap add"); empty for none. Alternative layers may share
  // one ("va" is reth.va or atomiceth.va, whichever the packet has).
  std::string_view aliases;
  std::span<const ValueName> values;  // names of values (syndromes, reasons), may be empty
  // Reads the field of the `index`th instance of the layer (VLAN tags repeat; 0 otherwise).
  // nullopt when the packet has no such layer or the field does not apply to it.
  std::optional<FieldValue> (*get)(const Packet&, std::size_t index) = nullptr;
  // Writes a number (kUnsigned, kBool) into the field of a present layer; false when the layer
  // (or the CM message that has the field) is absent. nullptr for read-only fields.
  bool (*set)(Packet&, std::uint64_t) = nullptr;
  // Writes an address or byte string (kMac, kIpv4, kIpv6, kBytes); false when the layer is
  // absent or the size is wrong. Byte strings are copied into storage the packet does not own:
  // callers keep the bytes alive (see Packet::payload). nullptr for read-only fields.
  bool (*set_bytes)(Packet&, Bytes) = nullptr;

  std::string key() const;    // "bth.solicited"
  std::uint64_t max() const;  // the largest value `set` accepts
  bool settable() const { return set != nullptr || set_bytes != nullptr; }
  // The name of a value, empty when it has none.
  std::string_view value_name(std::uint64_t value) const;
  // A value given by its name ("NAK_PSN_SEQUENCE_ERROR"), case-insensitively.
  std::optional<std::uint64_t> value_of(std::string_view name) const;
};

// Every field, in wire order: Ethernet, VLAN, IPv4, IPv6, UDP, LRH, GRH, BTH, the extended
// headers, payload, MAD header, CM (every message's fields, each once), ICRC, VCRC.
std::span<const FieldDef> field_table();

// The field a key names: "bth.solicited", or an alias ("se"). nullptr when unknown. For an
// alias shared by alternative layers, the first of them.
const FieldDef* find_field(std::string_view key);
// Every field a key names: one, or the alternatives an alias stands for, in wire order.
std::vector<const FieldDef*> find_fields(std::string_view key);

// The fields of one layer ("bth"), in wire order.
std::span<const FieldDef> layer_fields(std::string_view layer);

// Names of the layers in the table, in wire order ("eth", "vlan", ..., "vcrc").
std::span<const std::string_view> field_layers();

}  // namespace roceconf
