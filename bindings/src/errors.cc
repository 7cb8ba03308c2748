// C++ errors become the package's exceptions (roceconf/errors.py): PyRaise by its kind, and a
// case verdict (CaseStop) thrown by an engine step as CaseStopped, carrying the verdict so the
// runner records it when the Python case lets it through.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include "common.h"
#include "reports/result.h"
#include "suite/engine/case_stop.h"

namespace roceconf::python {

void register_errors(py::module_& m) {
  (void)m;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const PyRaise& e) {
      const py::object type = py::module_::import("roceconf.errors").attr(e.kind.c_str());
      PyErr_SetObject(type.ptr(), py::str(e.message).ptr());
    } catch (const engine::CaseStop& e) {
      py::list diffs;
      for (const auto& d : e.diffs) diffs.append(py::make_tuple(d.field, d.expected, d.actual));
      const py::object type = py::module_::import("roceconf.errors").attr("CaseStopped");
      const py::object value =
          type(std::string(report::verdict_name(e.verdict)), std::string(e.what()), diffs);
      PyErr_SetObject(type.ptr(), value.ptr());
    }
  });
}

}  // namespace roceconf::python
