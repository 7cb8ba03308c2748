// The extension module `roceconf._roceconf`; the package `roceconf` (python/roceconf/) is the
// interface users import.
#include "common.h"

PYBIND11_MODULE(_roceconf, m) {
  m.doc() = "roceconf's C++ core: codec, ports, targets, engine, runner.";
  m.attr("__version__") = ROCECONF_VERSION;
  roceconf::python::register_errors(m);
  roceconf::python::register_layers(m);
  roceconf::python::register_packets(m);
  roceconf::python::register_ports(m);
  roceconf::python::register_targets(m);
  roceconf::python::register_engine(m);
  roceconf::python::register_run(m);
}
