// The pytest plugin's devices (device_run.cc): the catalogue, one device's run case by case
// with its reports, and the fleet report.
#pragma once

#include "common.h"

namespace roceconf::report {
struct CaseResult;
}

namespace roceconf::python {

// A case's result as a dict, as roceconf.run_case returns it (run.cc).
py::dict result_dict(const report::CaseResult& r);

void register_device_run(py::module_& m);

}  // namespace roceconf::python
