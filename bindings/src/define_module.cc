// What roceconf._roceconf holds, wherever it is created (module.h).
#include "device_run.h"
#include "module.h"

namespace roceconf::python {

void define_module(py::module_& m) {
  m.doc() = "roceconf's C++ core: codec, ports, targets, engine, runner.";
  m.attr("__version__") = ROCECONF_VERSION;
  register_errors(m);
  register_layers(m);
  register_names(m);
  register_packets(m);
  register_ports(m);
  register_targets(m);
  register_engine(m);
  register_run(m);
  register_device_run(m);
}

}  // namespace roceconf::python
