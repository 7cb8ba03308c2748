// A Port as Python holds it: owned (memory pair, raw socket) or borrowed from a target.
#pragma once

#include <memory>

#include "capture/port/port.h"
#include "common.h"

namespace roceconf::python {

class PortHandle {
 public:
  explicit PortHandle(std::unique_ptr<Port> port) : owned_(std::move(port)) {}
  explicit PortHandle(Port* borrowed, std::shared_ptr<void> owner)
      : borrowed_(borrowed), owner_(std::move(owner)) {}
  void send(const py::bytes& frame);
  py::object receive(double timeout);
  Port& port() const;
  void close() {
    owned_.reset();
    borrowed_ = nullptr;
    owner_.reset();
  }

 private:
  std::unique_ptr<Port> owned_;
  Port* borrowed_ = nullptr;
  std::shared_ptr<void> owner_;  // keeps the target of a borrowed port alive
};

}  // namespace roceconf::python
