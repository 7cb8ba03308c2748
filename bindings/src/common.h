// Shared by the extension's source files: the Python error types C++ code raises, the storage
// that keeps bytes given from Python alive while a packet is encoded, and the value conversions
// between header fields and Python objects.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include <pybind11/pybind11.h>

#include "dissector/address_text.h"  // addresses to and from text, one notation for all layers
#include "dissector/bytes.h"

namespace roceconf::python {

namespace py = pybind11;

// Raised in Python as roceconf.<kind> (errors.py): DecodeError, EncodeError, TransportError,
// TargetError, CaseError.
struct PyRaise {
  std::string kind;
  std::string message;
};
[[noreturn]] inline void raise(std::string kind, std::string message) {
  throw PyRaise{std::move(kind), std::move(message)};
}

// Byte strings handed to the codec as views during one encode.
struct Arena {
  std::deque<std::vector<std::uint8_t>> buffers;
  Bytes keep(std::vector<std::uint8_t> b) {
    buffers.push_back(std::move(b));
    return buffers.back();
  }
};

// Conversions (convert.cc). `field` names the field in error messages ("BTH.psn").
std::vector<std::uint8_t> bytes_of(py::handle value, std::string_view field);
std::uint64_t uint_of(py::handle value, std::string_view field, unsigned bits);
void parse_address(py::handle value, std::string_view field, std::uint8_t* out, std::size_t size);

// Module parts, one concept a file.
void register_errors(py::module_& m);
void register_layers(py::module_& m);
void register_names(py::module_& m);
void register_packets(py::module_& m);
void register_ports(py::module_& m);
void register_targets(py::module_& m);
void register_engine(py::module_& m);
void register_run(py::module_& m);

}  // namespace roceconf::python
