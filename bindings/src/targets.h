// A Target as Python holds it; cases run against it (run.cc) and its port can be borrowed.
#pragma once

#include <memory>

#include "common.h"
#include "suite/engine/target.h"

namespace roceconf::python {

class TargetHandle {
 public:
  explicit TargetHandle(std::shared_ptr<engine::Target> t) : target_(std::move(t)) {}
  engine::Target& get() const;
  std::shared_ptr<void> shared() const { return target_; }
  void close() {
    py::gil_scoped_release r;  // a daemon target's teardown waits for its process
    target_.reset();
  }

 private:
  std::shared_ptr<engine::Target> target_;
};

}  // namespace roceconf::python
