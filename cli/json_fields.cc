#include "cli/json_fields.h"

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "dissector/summary.h"

namespace roceconf::cli {

namespace {

std::string hex(Bytes bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 0xF]);
  }
  return s;
}

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::kNote:
      return "note";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
  }
  return "";
}

// Walks "a.b.c" down through existing objects: the object holding the last segment, and that
// segment; missing objects are created unless `obj` is const (then: nullptr). A segment naming a
// non-object keeps the rest of the name flat.
template <typename J>
std::pair<J*, std::string_view> walk(J& obj, std::string_view name) {
  J* at = &obj;
  for (std::size_t dot; (dot = name.find('.')) != std::string_view::npos;) {
    const std::string key(name.substr(0, dot));
    auto it = at->find(key);
    if (it == at->end()) {
      if constexpr (std::is_const_v<J>)
        return {nullptr, name};
      else
        it = at->emplace(key, Json::object()).first;
    } else if (!it->is_object()) {
      break;
    }
    at = &*it;
    name.remove_prefix(dot + 1);
  }
  return {at, name};
}

bool has_field(const Json& obj, std::string_view name) {
  const auto [at, last] = walk(obj, name);
  return at != nullptr && at->contains(std::string(last));
}

// The object a field of `layer` goes into: the layer's latest occurrence, or a new one when the
// field is already set there (the layer repeats: stacked VLAN tags).
Json& layer_object(Json& out, std::string_view layer, std::string_view name) {
  std::string key(layer);
  auto it = out.find(key);
  if (it != out.end() && !it->is_object() && !it->is_array()) {
    key += "_layer";  // never overwrite a frame-level key such as "frame"
    it = out.find(key);
  }
  if (it == out.end()) return out[key] = Json::object();
  Json& latest = it->is_array() ? it->back() : *it;
  if (!has_field(latest, name)) return latest;
  if (!it->is_array()) {
    Json first = std::move(*it);
    *it = Json::array();
    it->push_back(std::move(first));
  }
  it->push_back(Json::object());
  return it->back();
}

}  // namespace

Json field_value_json(const FieldValue& value) {
  return std::visit(
      [](const auto& v) -> Json {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string_view>)
          return std::string(v);
        else if constexpr (std::is_same_v<V, Bytes>)
          return hex(v);
        else if constexpr (std::is_same_v<V, Address>)
          return format_address(v.bytes);
        else
          return v;
      },
      value);
}

void JsonFieldSink::field(std::string_view layer, std::string_view name, const FieldValue& value) {
  const auto [obj, last] = walk(layer_object(out_, layer, name), name);
  (*obj)[std::string(last)] = field_value_json(value);
}

Json findings_json(const Findings& findings) {
  Json list = Json::array();
  for (const Finding& f : findings) {
    list.push_back(Json{{"code", f.code_name()},
                        {"layer", layer_name(f.layer)},
                        {"offset", f.offset},
                        {"severity", severity_name(f.severity())},
                        {"message", f.message}});
  }
  return list;
}

void add_packet_json(Json& out, const Packet& packet) {
  JsonFieldSink sink(out);
  visit_fields(packet, sink);
  out["findings"] = findings_json(packet.findings);
}

}  // namespace roceconf::cli
