// Ports from Python: an in-memory pair (one end for the tester, one for a target in the same
// process) and an AF_PACKET raw socket on an interface, optionally inside a network namespace.
// Sending and receiving release the GIL.
#include <memory>

#include <fmt/format.h>

#include "capture/port/memory_port.h"
#include "capture/port/raw_socket_port.h"
#include "ports.h"

namespace roceconf::python {

namespace {

std::string port_error(const PortError& e) {
  return fmt::format("{}: {}", port_error_code_name(e.code), e.message);
}

}  // namespace

void PortHandle::send(const py::bytes& frame) {
  const std::string_view s = frame;
  std::expected<void, PortError> ok;
  {
    py::gil_scoped_release r;
    ok = port().send(Bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()));
  }
  if (!ok) raise("TransportError", port_error(ok.error()));
}

py::object PortHandle::receive(double timeout) {
  std::expected<std::optional<ReceivedFrame>, PortError> got;
  {
    py::gil_scoped_release r;
    got = port().receive_for(static_cast<TimeNs>(timeout * 1e9));
  }
  if (!got) raise("TransportError", port_error(got.error()));
  if (!*got) return py::none();
  const auto& f = **got;
  return py::make_tuple(py::bytes(reinterpret_cast<const char*>(f.data.data()), f.data.size()),
                        f.unix_ns);
}

Port& PortHandle::port() const {
  if (owned_) return *owned_;
  if (!borrowed_) raise("TransportError", "this port is closed");
  return *borrowed_;
}

void register_ports(py::module_& m) {
  py::class_<PortHandle, std::shared_ptr<PortHandle>>(
      m, "Port", "Moves whole Ethernet frames: send(bytes), receive(timeout) -> (bytes, unix_ns).")
      .def("send", &PortHandle::send, py::arg("frame"))
      .def("receive", &PortHandle::receive, py::arg("timeout") = 1.0,
           "The next frame as (bytes, unix_ns), or None when `timeout` seconds pass.")
      .def_property_readonly("name",
                             [](const PortHandle& p) { return std::string(p.port().name()); })
      .def("close", &PortHandle::close, "Idempotent.");

  m.def(
      "memory_pair",
      [] {
        auto pair = make_memory_pair();
        return py::make_tuple(std::make_shared<PortHandle>(std::move(pair.a)),
                              std::make_shared<PortHandle>(std::move(pair.b)));
      },
      "Two connected in-memory ports: what one sends the other receives.");
  m.def(
      "raw_socket_port",
      [](const std::string& interface, const std::string& netns, std::uint16_t udp_port,
         bool no_filter) {
        RawSocketOptions o;
        o.interface = interface;
        o.netns = netns;
        o.udp_port = udp_port;
        o.no_filter = no_filter;
        std::expected<std::unique_ptr<RawSocketPort>, PortError> p;
        {
          py::gil_scoped_release r;
          p = RawSocketPort::open(o);
        }
        if (!p) raise("TransportError", port_error(p.error()));
        return std::make_shared<PortHandle>(std::move(*p));
      },
      py::arg("interface"), py::arg("netns") = "", py::arg("udp_port") = Udp::kRocePort,
      py::arg("no_filter") = false,
      "A raw socket on an interface (CAP_NET_RAW), RoCE frames only unless no_filter.");
}

}  // namespace roceconf::python
