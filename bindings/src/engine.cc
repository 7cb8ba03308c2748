// The engine from Python: the running case's context (the same steps script and C++ cases use),
// connections, and Python functions as CaseDefs of the catalogue. A step runs with the GIL
// released; a Python case runs with it held, and its verdict (a CaseStopped, an assert, any
// other exception) becomes the case's verdict in the same result model.
#include <memory>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "engine.h"
#include "json.h"
#include "suite/engine/script.h"
#include "suite/engine/segmenter.h"
#include "suite/engine/timing.h"

namespace roceconf::python {

namespace {

using engine::CaseContext;
using engine::Connection;
using report::Verdict;

// Case-language values from Python ones: True -> 1, 5 -> "5", b"\x01" -> "01", "+1" as is.
// A key's "__" stands for the "." of dotted names (ip__csum="bad" is ip.csum=bad).
engine::Assignments assignments(const py::dict& fields) {
  engine::Assignments a;
  for (const auto& [k, v] : fields) {
    std::string key = k.cast<std::string>();
    for (std::size_t at; (at = key.find("__")) != std::string::npos;) key.replace(at, 2, ".");
    if (v.is_none()) continue;
    std::string text;
    if (py::isinstance<py::bool_>(v)) {
      text = v.cast<bool>() ? "1" : "0";
    } else if (py::isinstance<py::int_>(v)) {  // roceconf.Opcode.RC_SEND_ONLY too: its number
      text = py::str(py::int_(py::reinterpret_borrow<py::object>(v))).cast<std::string>();
    } else if (py::isinstance<py::bytes>(v)) {
      text = py::bytes(py::reinterpret_borrow<py::object>(v)).attr("hex")().cast<std::string>();
    } else {
      text = py::str(v).cast<std::string>();
    }
    a.set(std::move(key), std::move(text));
  }
  return a;
}

// A window: None (the default), a duration string ("4rtt", "10ms") or seconds.
TimeNs window_of(CaseContext& ctx, const py::object& window, bool silence) {
  const engine::Timing& t = ctx.timing();
  if (window.is_none()) return silence ? t.silence_window() : t.expect_window();
  if (py::isinstance<py::str>(window)) {
    auto d = engine::parse_duration(window.cast<std::string>());
    if (!d)
      raise("CaseError", fmt::format("window '{}': {}", window.cast<std::string>(), d.error()));
    if (d->rtts) return silence ? t.silence_window(*d->rtts) : t.expect_window(*d->rtts);
    return d->ns;
  }
  const double seconds = window.cast<double>();
  if (seconds < 0) raise("CaseError", "a window cannot be negative");
  return static_cast<TimeNs>(seconds * 1e9);
}

py::bytes bytes_of_frame(const std::vector<std::uint8_t>& b) {
  return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace

ContextHandle::ContextHandle(CaseContext& ctx) : ctx_(&ctx), alive_(std::make_shared<bool>(true)) {}

CaseContext& ContextHandle::get() const {
  if (!*alive_)
    raise("CaseError", "this case context has ended (keep it inside the case function)");
  return *ctx_;
}

Connection* ContextHandle::find(const py::object& conn) const {
  if (conn.is_none()) return nullptr;
  const std::string name = py::isinstance<py::str>(conn) ? conn.cast<std::string>()
                                                         : conn.attr("name").cast<std::string>();
  auto& ctx = get();
  if (!ctx.has_connection(name)) raise("CaseError", fmt::format("no connection '{}'", name));
  return &ctx.connection(name);
}

engine::CaseDef make_python_case(const py::handle& info) {
  engine::CaseDef def;
  def.id = info.attr("id").cast<std::string>();
  def.area = info.attr("area").cast<std::string>();
  def.title = info.attr("title").cast<std::string>();
  def.description = info.attr("description").cast<std::string>();
  def.clause = info.attr("clause").cast<std::string>();
  // Optional, as a CaseInfo of an older module may lack them.
  const auto text = [&](const char* name) {
    return py::getattr(info, name, py::str("")).cast<std::string>();
  };
  def.citation = text("citation");
  def.rule = text("rule");
  def.release = text("release");
  def.checked = text("checked");
  if (def.release.empty()) def.release = std::string(engine::kCatalogueRelease);
  if (!def.citation.empty()) def.clause = engine::clause_text(def.citation, def.release, def.rule);
  def.requirement = info.attr("requirement").cast<std::string>();
  def.needs = info.attr("needs").cast<std::vector<std::string>>();
  def.source = info.attr("source").cast<std::string>();
  // Python references are dropped with the GIL held, whoever holds the last copy.
  std::shared_ptr<py::object> call(new py::object(info.attr("invoke")), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
  def.run = [call](CaseContext& ctx) {
    py::gil_scoped_acquire gil;
    ContextHandle handle(ctx);
    std::optional<engine::CaseStop> stop;
    try {
      (*call)(handle);
    } catch (py::error_already_set& e) {
      // Returns (verdict, reason, diffs) for any exception: errors.py knows the mapping.
      const py::tuple v =
          py::module_::import("roceconf.errors").attr("verdict_of")(e.value(), e.trace());
      std::vector<report::FieldDiff> diffs;
      for (const auto& d : v[2].cast<py::list>()) {
        const auto t = d.cast<py::tuple>();
        diffs.push_back(
            {t[0].cast<std::string>(), t[1].cast<std::string>(), t[2].cast<std::string>()});
      }
      const std::string verdict = v[0].cast<std::string>();
      Verdict code = Verdict::kError;
      for (auto x : {Verdict::kPass, Verdict::kFail, Verdict::kSkip, Verdict::kError,
                     Verdict::kInconclusive})
        if (report::verdict_name(x) == verdict) code = x;
      if (code != Verdict::kPass) stop.emplace(code, v[1].cast<std::string>(), std::move(diffs));
      if (v.size() > 3 && !v[3].is_none()) ctx.set_step(v[3].cast<std::string>());
    }
    handle.end();
    if (stop) throw *stop;
  };
  return def;
}

void register_engine(py::module_& m) {
  py::class_<engine::RemoteRegion>(m, "Region", "Memory the target exposes.")
      .def_readonly("va", &engine::RemoteRegion::va)
      .def_readonly("rkey", &engine::RemoteRegion::rkey)
      .def_readonly("length", &engine::RemoteRegion::length)
      .def_readonly("recv_depth", &engine::RemoteRegion::recv_depth)
      .def_readonly("recv_size", &engine::RemoteRegion::recv_size)
      .def_readonly("mr_handle", &engine::RemoteRegion::mr_handle);

  py::class_<Connection>(m, "Connection",
                         "The tester's side of one connection: an emulated RC QP and what CM "
                         "negotiated. PSNs in steps count from local_psn0 (requests) or "
                         "remote_psn0 (the target's requests).")
      .def_readonly("name", &Connection::name)
      .def_readonly("local_qpn", &Connection::local_qpn)
      .def_readonly("remote_qpn", &Connection::remote_qpn)
      .def_readonly("local_psn0", &Connection::local_psn0)
      .def_readonly("remote_psn0", &Connection::remote_psn0)
      .def_readonly("pkey", &Connection::pkey)
      .def_readonly("pmtu", &Connection::pmtu)
      .def_readonly("local_comm_id", &Connection::local_comm_id)
      .def_readonly("remote_comm_id", &Connection::remote_comm_id)
      .def_readonly("service_id", &Connection::service_id)
      .def_readonly("req_tid", &Connection::req_tid)
      .def_readonly("next_psn", &Connection::next_psn)
      .def_readonly("last_msn", &Connection::last_msn)
      .def_readonly("region", &Connection::region)
      .def_readonly("via_control", &Connection::via_control)
      .def_property_readonly(
          "established",
          [](const Connection& c) { return c.state == engine::ConnState::kEstablished; })
      .def("__repr__", [](const Connection& c) {
        return fmt::format("<Connection {} qpn {:#x} -> {:#x}>", c.name, c.local_qpn, c.remote_qpn);
      });

  using H = ContextHandle;
  py::class_<H>(m, "CaseContext", "The running case (low level; roceconf.Context wraps it).")
      .def("set_step", [](H& h, const std::string& s) { h.get().set_step(s); })
      .def("require",
           [](H& h, const std::string& c) {
             py::gil_scoped_release r;
             h.get().require(c);
           })
      .def(
          "new_connection",
          [](H& h, const std::string& name) -> Connection& {
            auto& ctx = h.get();
            if (ctx.has_connection(name))
              raise("CaseError", fmt::format("connection '{}' exists already", name));
            return ctx.new_connection(name);
          },
          py::return_value_policy::reference)
      .def(
          "connection", [](H& h, const py::object& c) -> Connection& { return *h.find(c); },
          py::return_value_policy::reference)
      .def("has_connection",
           [](H& h, const std::string& name) { return h.get().has_connection(name); })
      .def("connect",
           [](H& h, const py::object& c, const py::dict& f) {
             auto a = assignments(f);
             auto* conn = h.find(c);
             py::gil_scoped_release r;
             h.get().connect(*conn, a);
           })
      .def("open",
           [](H& h, const py::object& c, const py::dict& f) {
             auto a = assignments(f);
             auto* conn = h.find(c);
             py::gil_scoped_release r;
             h.get().open(*conn, a);
           })
      .def("accept",
           [](H& h, const py::object& c, const py::dict& f) {
             auto a = assignments(f);
             auto* conn = h.find(c);
             py::gil_scoped_release r;
             h.get().accept(*conn, a);
           })
      .def("disconnect",
           [](H& h, const py::object& c) {
             auto* conn = h.find(c);
             py::gil_scoped_release r;
             h.get().disconnect(*conn);
           })
      .def("expect_status",
           [](H& h, const py::object& c, const py::dict& f, const py::object& window) {
             auto a = assignments(f);
             auto* conn = h.find(c);
             const TimeNs w = window_of(h.get(), window, false);
             py::gil_scoped_release r;
             h.get().expect_status(*conn, a, w);
           })
      .def("cm_send",
           [](H& h, const py::object& c, const std::string& message, const py::dict& f) {
             auto a = assignments(f);
             auto* conn = h.find(c);
             std::vector<std::uint8_t> sent;
             {
               py::gil_scoped_release r;
               sent = h.get().cm_send(*conn, message, a);
             }
             return bytes_of_frame(sent);
           })
      .def("send",
           [](H& h, const py::object& c, const std::string& op, const py::dict& f) {
             auto a = assignments(f);
             auto* conn = h.find(c);
             std::vector<std::vector<std::uint8_t>> sent;
             {
               py::gil_scoped_release r;
               sent = h.get().send(*conn, op, a);
             }
             py::list frames;
             for (const auto& b : sent) frames.append(bytes_of_frame(b));
             // A whole message (SEND, RDMA_WRITE, ...) is a list of packets however many there
             // are; one request is one packet.
             return py::make_tuple(frames, engine::message_op(op).has_value());
           })
      .def("send_frame",
           [](H& h, const py::bytes& frame, const std::string& text) {
             const std::string_view s = frame;
             std::vector<std::uint8_t> b(s.begin(), s.end());
             py::gil_scoped_release r;
             h.get().send_frame(std::move(b), text);
           })
      .def("expect",
           [](H& h, const py::object& c, const std::string& kind, const py::dict& f,
              const py::object& window, bool eventually) {
             engine::Expectation e{kind, assignments(f)};
             auto* conn = h.find(c);
             const TimeNs w = window_of(h.get(), window, false);
             engine::Received got;
             {
               py::gil_scoped_release r;
               got = h.get().expect(conn, e, w, eventually);
             }
             return py::make_tuple(bytes_of_frame(got.bytes), got.time);
           })
      .def("expect_nothing",
           [](H& h, const py::object& c, const py::object& window) {
             auto* conn = h.find(c);
             const TimeNs w = window_of(h.get(), window, true);
             py::gil_scoped_release r;
             h.get().expect_nothing(conn, w);
           })
      .def("collect",
           [](H& h, const py::object& c, const py::object& window) {
             auto* conn = h.find(c);
             const TimeNs w = window_of(h.get(), window, true);
             std::vector<engine::Received> got;
             {
               py::gil_scoped_release r;
               got = h.get().collect(conn, w);
             }
             py::list out;
             for (const auto& g : got) out.append(py::make_tuple(bytes_of_frame(g.bytes), g.time));
             return out;
           })
      .def("wait",
           [](H& h, const py::object& duration) {
             const TimeNs w = window_of(h.get(), duration, true);
             py::gil_scoped_release r;
             h.get().wait(w);
           })
      .def("control",
           [](H& h, const py::object& request, bool ok) {
             const nlohmann::json req = to_json(request);
             nlohmann::json res;
             {
               py::gil_scoped_release r;
               res = ok ? h.get().control_ok(req) : h.get().control(req);
             }
             return from_json(res);
           })
      .def("counters",
           [](H& h) {
             py::gil_scoped_release r;
             return h.get().counters();
           })
      .def("step",
           [](H& h, const std::string& text, const std::string& where) {
             // Checked as a script line is; the connections are the case's so far.
             auto step = engine::parse_step(where, text, [&](const std::string& name) {
               return h.get().has_connection(name);
             });
             if (!step) raise("CaseError", step.error());
             py::gil_scoped_release r;
             engine::run_step(h.get(), *step);
           })
      .def("note", [](H& h, const std::string& text) { h.get().note(text); })
      .def("fail",
           [](H& h, const std::string& reason,
              const std::vector<std::tuple<std::string, std::string, std::string>>& diffs) {
             std::vector<report::FieldDiff> d;
             for (const auto& [f, e, a] : diffs) d.push_back({f, e, a});
             h.get().fail(reason, d);
           })
      .def("skip", [](H& h, const std::string& reason) { h.get().skip(reason); })
      .def("inconclusive", [](H& h, const std::string& reason) { h.get().inconclusive(reason); })
      .def("error", [](H& h, const std::string& reason) { h.get().error(reason); })
      .def("random", [](H& h) { return h.get().random()(); })
      .def("now_ns", [](H& h) { return h.get().now(); })
      .def("rtt_ns", [](H& h) { return h.get().timing().rtt; })
      .def("window_ns",
           [](H& h, const py::object& w, bool silence) { return window_of(h.get(), w, silence); })
      .def("target_kind", [](H& h) { return std::string(h.get().target().kind()); })
      .def("capabilities",
           [](H& h) {
             const auto c = h.get().target().capabilities();
             py::dict d;
             d["responder"] = c.responder;
             d["control"] = c.control;
             d["max_pmtu"] = c.max_pmtu;
             return d;
           })
      .def("addresses", [](H& h) {
        const auto a = h.get().addresses();
        py::dict d;
        d["tester_mac"] = format_mac(a.tester.mac);
        d["tester_ip"] = format_ipv4(a.tester.ip);
        d["target_mac"] = format_mac(a.device.mac);
        d["target_ip"] = format_ipv4(a.device.ip);
        const auto ip6 = [](const std::optional<Ipv6Address>& ip) {
          return ip ? py::object(py::str(format_gid(*ip))) : py::object(py::none());
        };
        d["tester_ip6"] = ip6(a.tester.ip6);
        d["target_ip6"] = ip6(a.device.ip6);
        d["udp_port"] = a.udp_port;
        return d;
      });
}

}  // namespace roceconf::python
