// The interpreter inside the command line (bindings/embed.h).
#include "bindings/embed.h"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include "engine.h"
#include "module.h"
#include "suite/engine/catalogue.h"

namespace roceconf::python {

struct EmbeddedCases::State {
  // Declared first, so it is destroyed last.
  std::optional<py::scoped_interpreter> interpreter;
  std::vector<engine::CaseDef> cases;
};

EmbeddedCases::EmbeddedCases() : state_(std::make_unique<State>()) {}

EmbeddedCases::~EmbeddedCases() {
  if (!state_->interpreter) return;
  // The cases hold Python objects: they go while the interpreter still runs.
  state_->cases.clear();
}

int EmbeddedCases::run(const std::function<int(const std::vector<engine::CaseDef>&)>& body) {
  py::gil_scoped_release release;
  return body(state_->cases);
}

std::expected<std::unique_ptr<EmbeddedCases>, std::string> EmbeddedCases::load(
    const std::string& package_dir, const std::vector<std::string>& paths) {
  if (Py_IsInitialized()) return std::unexpected("the Python interpreter is already running");
  std::unique_ptr<EmbeddedCases> self(new EmbeddedCases);
  self->state_->interpreter.emplace(/*init_signal_handlers=*/false);
  try {
    py::module_ sys = py::module_::import("sys");
    sys.attr("path").attr("insert")(0, package_dir);
    // This program's core stands in for the extension module of the same name, so the cases
    // and the run share one engine.
    static py::module_::module_def def;
    py::module_ core = py::module_::create_extension_module("roceconf._roceconf", nullptr, &def);
    define_module(core);
    sys.attr("modules")["roceconf._roceconf"] = core;
    py::module_ package = py::module_::import("roceconf");
    package.attr("_roceconf") = core;
    py::list infos = py::module_::import("roceconf.case").attr("load_cases")(paths);
    for (const auto& info : infos) self->state_->cases.push_back(make_python_case(info));
  } catch (py::error_already_set& e) {
    // CaseError's text names the file and the problem; anything else gets its type too.
    const bool ours = e.matches(py::module_::import("roceconf.errors").attr("Error"));
    std::string why = ours ? py::str(e.value()).cast<std::string>() : e.what();
    self->state_->cases.clear();
    return std::unexpected(std::move(why));
  } catch (const std::exception& e) {
    self->state_->cases.clear();
    return std::unexpected(e.what());
  }
  return self;
}

}  // namespace roceconf::python
