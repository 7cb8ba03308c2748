// The contents of the module roceconf._roceconf: filled into the extension module (module.cc)
// and into the command line's embedded interpreter (embed.cc) alike.
#pragma once

#include "common.h"

namespace roceconf::python {

void define_module(py::module_& m);

}  // namespace roceconf::python
