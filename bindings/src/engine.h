// Python cases as catalogue entries, and the handle a running Python case holds on its context.
#pragma once

#include <memory>

#include "common.h"
#include "suite/engine/catalogue.h"

namespace roceconf::python {

// Valid while the case runs; afterwards every use raises CaseError instead of touching freed
// memory.
class ContextHandle {
 public:
  explicit ContextHandle(engine::CaseContext& ctx);
  engine::CaseContext& get() const;
  // A connection by name or by its Connection object; null for None.
  engine::Connection* find(const py::object& conn) const;
  void end() { *alive_ = false; }

 private:
  engine::CaseContext* ctx_;
  std::shared_ptr<bool> alive_;
};

// `info` is a roceconf.CaseInfo: id, area, title, description, clause, requirement, needs,
// source, and invoke(handle) running the function.
engine::CaseDef make_python_case(const py::handle& info);

}  // namespace roceconf::python
