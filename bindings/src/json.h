// JSON to and from Python objects: control-API requests and replies, and the stream analysis
// (dissector/analysis/json/analysis_json.h). Replies are built natively, item by item;
// requests go through Python's json module, which also refuses what JSON cannot hold.
#pragma once

#include <string>

#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

namespace roceconf::python {

namespace py = pybind11;

inline nlohmann::json to_json(py::handle value) {
  return nlohmann::json::parse(
      py::module_::import("json").attr("dumps")(value).cast<std::string>());
}

// nlohmann::json or nlohmann::ordered_json (whose key order the dict keeps).
template <typename Json>
py::object from_json(const Json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(value.template get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(value.template get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(value.template get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(value.template get<double>());
    case nlohmann::json::value_t::string:
      return py::str(value.template get_ref<const std::string&>());
    case nlohmann::json::value_t::binary:
      return py::bytes(std::string(value.get_binary().begin(), value.get_binary().end()));
    case nlohmann::json::value_t::array: {
      py::list out;
      for (const auto& item : value) out.append(from_json(item));
      return out;
    }
    case nlohmann::json::value_t::object: {
      py::dict out;
      for (const auto& [key, item] : value.items()) out[py::str(key)] = from_json(item);
      return out;
    }
  }
  return py::none();
}

}  // namespace roceconf::python
