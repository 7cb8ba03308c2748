// Header field values to and from Python: integers with their wire width checked, addresses as
// text ("02:00:00:00:00:01", "192.0.2.1", "fe80::1"), byte strings as bytes.
#include <algorithm>

#include <fmt/format.h>

#include "common.h"

namespace roceconf::python {

std::vector<std::uint8_t> bytes_of(py::handle value, std::string_view field) {
  if (py::isinstance<py::bytes>(value) || py::isinstance<py::bytearray>(value) ||
      py::isinstance<py::memoryview>(value)) {
    const std::string s = py::bytes(py::reinterpret_borrow<py::object>(value));
    return {s.begin(), s.end()};
  }
  raise("EncodeError", fmt::format("{}: expected bytes, got {}", field,
                                   value.get_type().attr("__name__").cast<std::string>()));
}

std::uint64_t uint_of(py::handle value, std::string_view field, unsigned bits) {
  if (!py::isinstance<py::int_>(value))  // bool is an int
    raise("EncodeError", fmt::format("{}: expected an integer, got {}", field,
                                     value.get_type().attr("__name__").cast<std::string>()));
  const py::int_ v = py::reinterpret_borrow<py::int_>(value);
  if (py::bool_(v < py::int_(0)))
    raise("EncodeError", fmt::format("{}: {} is negative", field, py::repr(v).cast<std::string>()));
  const py::int_ limit = py::int_(1).attr("__lshift__")(bits);
  if (py::bool_(v >= limit))
    raise("EncodeError", fmt::format("{}: {} does not fit in {} bits", field,
                                     py::repr(v).cast<std::string>(), bits));
  return v.cast<std::uint64_t>();
}

void parse_address(py::handle value, std::string_view field, std::uint8_t* out, std::size_t size) {
  if (py::isinstance<py::bytes>(value)) {
    const auto b = bytes_of(value, field);
    if (b.size() != size)
      raise("EncodeError", fmt::format("{}: {} bytes given, {} needed", field, b.size(), size));
    std::copy(b.begin(), b.end(), out);
    return;
  }
  if (size == 16 && py::isinstance<py::int_>(value)) {  // Scapy's GRH takes GIDs as integers
    const py::int_ v = py::reinterpret_borrow<py::int_>(value);
    const py::bytes b = v.attr("to_bytes")(16, "big");
    const std::string s = b;
    std::copy(s.begin(), s.end(), out);
    return;
  }
  if (!py::isinstance<py::str>(value))
    raise("EncodeError", fmt::format("{}: expected an address string", field));
  const std::string text = value.cast<std::string>();
  const auto put = [&](const auto& address) {
    std::copy(address->begin(), address->end(), out);
    return true;
  };
  bool ok = false;
  if (size == 6) {
    if (const auto mac = parse_mac(text)) ok = put(mac);
  } else if (size == 4) {
    if (const auto ip = parse_ipv4(text)) ok = put(ip);
  } else if (size == 16) {
    if (const auto ip = parse_ipv6(text)) ok = put(ip);
  }
  if (!ok) raise("EncodeError", fmt::format("{}: '{}' is not a valid address", field, text));
}

}  // namespace roceconf::python
