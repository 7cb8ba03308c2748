// The CM part of the declared field table (layer "cm"): every field of every CM message and of
// ClassPortInfo, each declared once even when several messages carry it (local_qpn is REQ's
// and REP's). A field's get/set apply to whichever message the packet holds and return
// nullopt/false for a message without the field. visit_cm_fields (cm.h) walks this table.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dissector/field_table.h"
#include "dissector/mad/cm.h"

namespace roceconf {

// Every CM field: "msg" (the message name) first, then the fields in wire order of the
// messages that introduce them (REQ, MRA, REJ, REP, DREQ, SIDR, APR, ClassPortInfo).
std::span<const FieldDef> cm_field_table();

// The fields a message of this type can carry, in wire order with each derived name after
// its code, as visit_cm_fields emits them ("msg" first). rdma_cm.* are listed for every REQ;
// their get is nullopt unless the service ID is an rdma_cm one.
std::span<const FieldDef* const> cm_message_fields(const CmMessage& msg);

// The CM field a key names: "local_qpn", "cm.local_qpn" or an alias ("transport").
const FieldDef* find_cm_field(std::string_view key);

// Reads a field of `msg` (nullopt when the message has no such field). Bytes and addresses
// are views into `msg` (or into what its Bytes members view).
std::optional<FieldValue> get_cm_field(const CmMessage& msg, const FieldDef& field);

// The outcome of a set: true, or false with the reason. (The codec does not use std::expected,
// which clang reaches in libstdc++ 12 only through the workaround of suite/engine/fuzz.)
class FieldSetResult {
 public:
  FieldSetResult() = default;
  static FieldSetResult failure(std::string why) {
    FieldSetResult r;
    r.error_ = std::move(why);
    return r;
  }
  bool has_value() const { return !error_; }
  explicit operator bool() const { return has_value(); }
  const std::string& error() const { return *error_; }

 private:
  std::optional<std::string> error_;
};

// Sets a numeric or flag field by key. Errors name the message when it lacks the field
// ("REP has no field 'path_mtu' (REQ has)"), and reject read-only fields, byte fields and
// values wider than the field.
FieldSetResult set_cm_field(CmMessage& msg, std::string_view key, std::uint64_t value);

// Sets a byte-string or GID field. Private data, ARI and additional information keep a view
// of `value` (the caller keeps the bytes alive) and may be shorter than on the wire (zero
// padded); GIDs are copied and must be 16 bytes.
FieldSetResult set_cm_field(CmMessage& msg, std::string_view key, Bytes value);

}  // namespace roceconf
