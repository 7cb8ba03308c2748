// Typed control messages seen field by field, by the names CONTROL_API.md gives them: what a
// case's expect-style step compares (poll's completion, query's QP attributes, status's
// cm_status answer) and what it sets from `key=value` text (modify's attributes, accept's
// cm_connect fields). The names and value forms are the codec's (codec.h), so a field reads as
// it does on the wire.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "control/messages.h"

namespace roceconf::control {

// One field's value: an unsigned number, or text (a list's names joined by ",", true/false, an
// object as its JSON).
struct FieldValue {
  std::optional<std::uint64_t> number;
  std::string text;  // a number's decimal
};

// A completion, a QP's attributes (query_qp's, with sq_draining) or a cm_status answer read by
// field name: view(name) is nullopt for a field it does not have (or an optional one not given).
// The message is encoded once, however many fields a comparison reads.
class FieldView {
 public:
  explicit FieldView(const WorkCompletion& wc);
  explicit FieldView(const QpAttr& attr);
  explicit FieldView(const CmStatusReply& status);
  std::optional<FieldValue> operator()(std::string_view name) const;

 private:
  nlohmann::json encoded_;
  std::optional<bool> sq_draining_;  // QpAttr's, which the codec does not write
};

// One field, as FieldView(message)(name).
template <typename Message>
std::optional<FieldValue> field(const Message& message, std::string_view name) {
  return FieldView(message)(name);
}

// `name=value` pairs as a case writes them. Numbers are decimal or 0x hex text.
using TextFields = std::vector<std::pair<std::string, std::string>>;

// modify_qp attributes from text: qp_state=RTS, qp_access_flags=REMOTE_WRITE,REMOTE_READ (or
// "none", or the ibv_access_flags bits as a number), en_sqd_async_notify=0|1, numbers up to each
// field's width. Objects (ah_attr, alt_ah_attr, cap) are not set from text. The error names the
// field ("modify_qp.attr.timeout: 300 is above the largest allowed value 255").
std::expected<QpAttr, std::string> qp_attr_from_text(const TextFields& fields);

// `request` with the given cm_connect fields set from text (service_id=0x..., private_data=hex,
// dgid=...); an unknown field or a bad value is the error, and `request` is left as it was.
std::expected<void, std::string> set_from_text(CmConnect& request, const TextFields& fields);

}  // namespace roceconf::control
