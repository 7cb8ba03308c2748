// Value names from Python: a field's number given by its name in the codec's table (as the
// table spells it or as an identifier), the identifiers, and the names behind roceconf.Opcode,
// Syndrome, NakCode, CmMessage and RejReason (constants.py). No name is written here: every one
// comes from the field table (dissector/field_table.h) and the tables it holds.
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "dissector/names.h"
#include "layers.h"

namespace roceconf::python {

std::string name_identifier(std::string_view name) {
  std::string out;
  char before = 0;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isupper(u) && std::islower(static_cast<unsigned char>(before)))
      out += '_';  // ClassPortInfo -> CLASS_PORT_INFO
    if (std::isalnum(u))
      out += static_cast<char>(std::toupper(u));
    else if (!out.empty() && out.back() != '_')
      out += '_';
    before = c;
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

namespace {

// The table's entry a name stands for, as the table spells it or as its identifier.
const ValueName* find_named(const FieldDef& f, std::string_view name) {
  if (const auto n = f.value_of(name))
    for (const ValueName& v : f.values)
      if (v.value == *n) return &v;
  const std::string want = name_identifier(name);
  for (const ValueName& v : f.values)
    if (!want.empty() && name_identifier(v.name) == want) return &v;
  return nullptr;
}

}  // namespace

std::uint64_t named_value(const FieldDef& f, std::string_view name, std::string_view field) {
  if (const ValueName* v = find_named(f, name)) return v->value;
  std::string some;
  std::size_t shown = 0;
  for (const ValueName& v : f.values) {
    if (some.find(fmt::format("'{}'", v.name)) != std::string::npos) continue;
    if (shown++ == 6) {
      some += ", ...";
      break;
    }
    some += fmt::format("{}'{}'", some.empty() ? "" : ", ", v.name);
  }
  raise("EncodeError",
        fmt::format("{}: unknown name '{}' (a number, or one of {})", field, name, some));
}

void register_names(py::module_& m) {
  m.def(
      "named_value",
      [](const std::string& cls, const std::string& name, const std::string& value) {
        const LayerSpec* spec = find_layer(cls);
        const FieldSpec* f = spec ? spec->field(name) : nullptr;
        if (!f || !f->def || f->def->values.empty())
          raise("EncodeError", fmt::format("{}.{} has no value names", cls, name));
        return named_value(*f->def, value, cls + "." + name);
      },
      py::arg("cls"), py::arg("field"), py::arg("name"),
      "The number a value name stands for in a field (BTH.opcode 'RC_SEND_ONLY' -> 4); "
      "EncodeError for an unknown name.");
  m.def(
      "value_names",
      [](const std::string& key) {
        const FieldDef* f = find_field(key);
        if (!f) raise("EncodeError", fmt::format("no field '{}'", key));
        py::list out;  // (identifier, name, value), each name once (its first value)
        std::set<std::string> seen;
        for (const ValueName& v : f->values) {
          std::string id = name_identifier(v.name);
          if (id.empty() || !seen.insert(id).second) continue;
          out.append(py::make_tuple(id, py::str(v.name.data(), v.name.size()), v.value));
        }
        return out;
      },
      py::arg("key"),
      "The value names of a table field (\"bth.opcode\") as [(identifier, name, value)].");
  m.def(
      "step_value",
      [](const std::string& key, const std::string& value) -> py::object {
        // Case steps take the table's spelling of a name; an identifier ("NO_QP_AVAILABLE")
        // becomes it. Anything else (numbers, "ack", "+1") goes to the step as it is.
        for (const FieldDef* f : find_fields(key)) {
          if (f->values.empty() || f->value_of(value)) continue;
          if (const ValueName* v = find_named(*f, value))
            return py::str(v->name.data(), v->name.size());
        }
        return py::none();
      },
      py::arg("key"), py::arg("value"),
      "The table's spelling of a value name given to a case step key, or None.");
  m.def(
      "nak_codes",
      [] {
        py::list out;  // NAK codes (IBA Table 46): the NAK syndromes' low 5 bits
        for (const ValueName& v : find_field("aeth.syndrome")->values) {
          const auto s = static_cast<std::uint8_t>(v.value);
          if (aeth_type(s) != AethType::kNak) continue;
          std::string id = name_identifier(v.name);
          if (id.starts_with("NAK_")) id.erase(0, 4);
          out.append(py::make_tuple(id, py::str(v.name.data(), v.name.size()), aeth_value(s)));
        }
        return out;
      },
      "The NAK codes as [(identifier, syndrome name, code)], from the AETH syndrome names.");
}

}  // namespace roceconf::python
