// Targets from Python: the reference NIC in process (with quirks), the reference daemon on a
// veth pair the target creates (root), a real device described by a profile, and a client for
// a running daemon's control socket. Control requests and resets release the GIL.
#include <memory>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "json.h"
#include "ports.h"
#include "suite/engine/control_client.h"
#include "suite/engine/daemon_target.h"
#include "suite/engine/profile.h"
#include "suite/engine/raw_target.h"
#include "suite/engine/reference_target.h"
#include "suite/engine/runner.h"
#include "targets.h"

namespace roceconf::python {

namespace {

py::dict endpoint(const engine::Endpoint& e) {
  py::dict d;
  d["mac"] = format_mac(e.mac);
  d["ip"] = format_ipv4(e.ip);
  d["ip6"] = e.ip6 ? py::object(py::str(format_gid(*e.ip6))) : py::object(py::none());
  return d;
}

std::shared_ptr<TargetHandle> wrap(std::unique_ptr<engine::Target> t) {
  return std::make_shared<TargetHandle>(std::shared_ptr<engine::Target>(std::move(t)));
}

}  // namespace

engine::Target& TargetHandle::get() const {
  if (!target_) raise("TargetError", "this target is closed");
  return *target_;
}

void register_targets(py::module_& m) {
  py::class_<TargetHandle, std::shared_ptr<TargetHandle>>(
      m, "Target", "A device under test: the reference NIC, the reference daemon, or a real one.")
      .def_static(
          "reference",
          [](const std::vector<std::string>& quirks, std::uint16_t service_port, bool real_time) {
            engine::ReferenceOptions o;
            o.quirks = quirks;
            o.service_port = service_port;
            o.virtual_time = !real_time;
            auto t = engine::ReferenceTarget::create(o);
            if (!t) raise("TargetError", t.error());
            return wrap(std::move(*t));
          },
          py::arg("quirks") = std::vector<std::string>{}, py::arg("service_port") = 7471,
          py::arg("real_time") = false,
          "The reference NIC in this process on an in-memory port, on a virtual clock (real_time: "
          "the wall clock, so windows and timeouts take their real time).")
      .def_static(
          "daemon",
          [](const std::vector<std::string>& quirks, const std::string& roceconf_binary) {
            engine::DaemonTargetOptions o;
            o.quirks = quirks;
            o.roceconf_binary = roceconf_binary;
            std::expected<std::unique_ptr<engine::DaemonTarget>, std::string> t;
            {
              py::gil_scoped_release r;
              t = engine::DaemonTarget::start(o);
            }
            if (!t) raise("TargetError", t.error());
            return wrap(std::move(*t));
          },
          py::arg("quirks") = std::vector<std::string>{}, py::arg("roceconf_binary"),
          "`roceconf target` in its own namespace on a veth pair it creates (root).")
      .def_static(
          "raw",
          [](const std::string& profile_path, std::optional<std::string> interface,
             std::optional<std::string> target_mac, std::optional<std::string> target_ip,
             std::optional<std::string> tester_mac, std::optional<std::string> tester_ip,
             std::optional<std::uint16_t> service_port) {
            engine::Profile profile;
            if (!profile_path.empty()) {
              auto p = engine::load_profile(profile_path);
              if (!p) raise("TargetError", p.error());
              profile = std::move(*p);
            }
            engine::ProfileOverrides o;
            o.interface = interface;
            o.target_mac = target_mac;
            o.target_ip = target_ip;
            o.tester_mac = tester_mac;
            o.tester_ip = tester_ip;
            o.service_port = service_port;
            if (auto ok = engine::apply_overrides(profile, o); !ok)
              raise("TargetError", ok.error());
            if (auto ok = engine::validate(profile); !ok) raise("TargetError", ok.error());
            auto t = engine::RawTarget::open(profile);
            if (!t) raise("TargetError", t.error());
            return wrap(std::move(*t));
          },
          py::arg("profile") = "", py::arg("interface") = py::none(),
          py::arg("target_mac") = py::none(), py::arg("target_ip") = py::none(),
          py::arg("tester_mac") = py::none(), py::arg("tester_ip") = py::none(),
          py::arg("service_port") = py::none(),
          "A real device through an interface, described by a profile (suite/engine/PROFILE.md).")
      .def_property_readonly("kind",
                             [](const TargetHandle& t) { return std::string(t.get().kind()); })
      .def("describe", [](const TargetHandle& t) { return t.get().describe(); })
      .def_property_readonly("capabilities",
                             [](const TargetHandle& t) {
                               const auto c = t.get().capabilities();
                               py::dict d;
                               d["responder"] = c.responder;
                               d["control"] = c.control;
                               d["max_pmtu"] = c.max_pmtu;
                               d["congestion_management"] = c.congestion_management;
                               return d;
                             })
      .def_property_readonly("tester",
                             [](const TargetHandle& t) { return endpoint(t.get().tester()); })
      .def_property_readonly("device",
                             [](const TargetHandle& t) { return endpoint(t.get().device()); })
      .def_property_readonly("service_port",
                             [](const TargetHandle& t) { return t.get().service_port(); })
      .def_property_readonly(
          "port",
          [](const std::shared_ptr<TargetHandle>& t) {
            return std::make_shared<PortHandle>(&t->get().port(), t->shared());
          },
          "The tester's port: frames sent here reach the target.")
      .def(
          "control",
          [](const TargetHandle& t, const py::object& request) {
            const nlohmann::json req = to_json(request);
            std::expected<nlohmann::json, std::string> res;
            {
              py::gil_scoped_release r;
              res = t.get().control(req);
            }
            if (!res) raise("TransportError", res.error());
            return from_json(*res);
          },
          py::arg("request"), "One control-API request (control/CONTROL_API.md) and its response.")
      .def("reset",
           [](const TargetHandle& t) {
             std::expected<void, std::string> ok;
             {
               py::gil_scoped_release r;
               ok = t.get().reset();
             }
             if (!ok) raise("TargetError", ok.error());
           })
      .def(
          "rtt",
          [](const TargetHandle& t) {
            std::string note;
            TimeNs rtt;
            {
              py::gil_scoped_release r;
              rtt = engine::calibrate_rtt(t.get(), note);
            }
            return rtt;
          },
          "The round trip in ns (CM ClassPortInfo on QP1); 0 when the target does not answer.")
      .def("close", &TargetHandle::close, "Idempotent; a daemon target removes its lab.");

  py::class_<engine::ControlClient>(m, "ControlClient",
                                    "A running daemon's control socket (JSON lines).")
      .def(py::init([](const std::string& path, double timeout) {
             std::expected<std::unique_ptr<engine::ControlClient>, std::string> c;
             {
               py::gil_scoped_release r;
               c = engine::ControlClient::connect(
                   path, std::chrono::milliseconds(static_cast<long>(timeout * 1000)));
             }
             if (!c) raise("TransportError", c.error());
             return std::move(*c);
           }),
           py::arg("path"), py::arg("timeout") = 5.0)
      .def(
          "request",
          [](engine::ControlClient& c, const py::object& request, double timeout) {
            const nlohmann::json req = to_json(request);
            std::expected<nlohmann::json, std::string> res;
            {
              py::gil_scoped_release r;
              res = c.request(req, std::chrono::milliseconds(static_cast<long>(timeout * 1000)));
            }
            if (!res) raise("TransportError", res.error());
            return from_json(*res);
          },
          py::arg("request"), py::arg("timeout") = 5.0)
      .def_property_readonly("path", &engine::ControlClient::path);
}

}  // namespace roceconf::python
