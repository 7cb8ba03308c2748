#include "control/field_text.h"

#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "control/codec.h"
#include "control/verbs_names.h"

namespace roceconf::control {

using nlohmann::json;

namespace {

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string out;
    for (const json& x : v) out += (out.empty() ? "" : ",") + text_of(x);
    return out;
  }
  return v.dump();
}

// A field of a message's JSON form (codec.h), as the comparisons read it.
std::optional<FieldValue> field_of(const json& object, std::string_view name) {
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const auto n = it->get<std::uint64_t>();
    return FieldValue{n, std::to_string(n)};
  }
  return FieldValue{std::nullopt, text_of(*it)};
}

// Decimal or 0x hex text as a number.
std::optional<std::uint64_t> number(std::string_view text) {
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  if (hex) text.remove_prefix(2);
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, hex ? 16 : 10);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// A JSON value for one `name=value`: the codec's readers take numbers as text.
std::expected<json, std::string> qp_attr_value(std::string_view name, const std::string& value) {
  if (name == "qp_access_flags") {
    json names = json::array();
    auto bits = number(value);
    if (!bits) {  // names, comma-separated
      std::string_view rest = value;
      while (!rest.empty()) {
        const auto comma = rest.find(',');
        const auto flag = rest.substr(0, comma);
        if (flag != "none") names.push_back(std::string(flag));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      }
      return names;
    }
    for (const verbs::Named& f : verbs::kAccessFlags)
      if (*bits & f.value) {
        names.push_back(f.name);
        *bits &= ~std::uint64_t{f.value};
      }
    if (*bits != 0)
      return std::unexpected(fmt::format(
          "modify_qp.attr.qp_access_flags: {:#x} is no access flag (LOCAL_WRITE, REMOTE_WRITE, "
          "REMOTE_READ, REMOTE_ATOMIC)",
          *bits));
    return names;
  }
  if (name == "en_sqd_async_notify") {
    if (value == "1" || value == "true" || value == "yes") return true;
    if (value == "0" || value == "false" || value == "no") return false;
    return std::unexpected(
        fmt::format("modify_qp.attr.en_sqd_async_notify: '{}' is not 0 or 1", value));
  }
  if (name == "ah_attr" || name == "alt_ah_attr" || name == "cap")
    return std::unexpected(fmt::format("modify_qp.attr.{}: an object, not set from text", name));
  return value;
}

}  // namespace

FieldView::FieldView(const WorkCompletion& wc) : encoded_(encode(wc)) {}
FieldView::FieldView(const QpAttr& attr) : encoded_(encode(attr)), sq_draining_(attr.sq_draining) {}
FieldView::FieldView(const CmStatusReply& status) : encoded_(encode(status)) {}

std::optional<FieldValue> FieldView::operator()(std::string_view name) const {
  if (name == "sq_draining") {
    if (!sq_draining_) return std::nullopt;
    return FieldValue{std::nullopt, *sq_draining_ ? "true" : "false"};
  }
  return field_of(encoded_, name);
}

std::expected<QpAttr, std::string> qp_attr_from_text(const TextFields& fields) {
  json attr = json::object();
  for (const auto& [name, value] : fields) {
    auto v = qp_attr_value(name, value);
    if (!v) return std::unexpected(v.error());
    attr[name] = std::move(*v);
  }
  return decode_qp_attr(attr, "modify_qp.attr");
}

std::expected<void, std::string> set_from_text(CmConnect& request, const TextFields& fields) {
  json out = encode(request);
  for (const auto& [name, value] : fields) out[name] = value;
  auto read = decode_cm_connect(out);
  if (!read) return std::unexpected(read.error());
  request = std::move(*read);
  return {};
}

}  // namespace roceconf::control
