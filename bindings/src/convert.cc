// Header field values to and from Python: integers with their wire width checked, addresses as
// text ("02:00:00:00:00:01", "192.0.2.1", "fe80::1"), byte strings as bytes.
#include <arpa/inet.h>

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

std::string address_text(Bytes a) {
  if (a.size() == 6)
    return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", a[0], a[1], a[2], a[3], a[4],
                       a[5]);
  char text[INET6_ADDRSTRLEN] = {};
  if (a.size() == 4) inet_ntop(AF_INET, a.data(), text, sizeof text);
  if (a.size() == 16) inet_ntop(AF_INET6, a.data(), text, sizeof text);
  return text;
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
  bool ok = false;
  if (size == 6) {
    unsigned v[6];
    char tail;
    ok = std::sscanf(text.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4],
                     &v[5], &tail) == 6;
    for (int i = 0; ok && i < 6; ++i) out[i] = static_cast<std::uint8_t>(v[i]);
  } else if (size == 4) {
    ok = inet_pton(AF_INET, text.c_str(), out) == 1;
  } else if (size == 16) {
    ok = inet_pton(AF_INET6, text.c_str(), out) == 1;
  }
  if (!ok) raise("EncodeError", fmt::format("{}: '{}' is not a valid address", field, text));
}

}  // namespace roceconf::python
