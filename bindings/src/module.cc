// The extension module `roceconf._roceconf`; the package `roceconf` (python/roceconf/) is the
// interface users import.
#include "module.h"

PYBIND11_MODULE(_roceconf, m) {
  roceconf::python::define_module(m);
}
