// Running a Python case against a target (the pytest plugin and roceconf.run_case). Beside the
// catalogue, Python cases run inside the command line (embed.h).
#include <fmt/format.h>
#include <pybind11/stl.h>

#include "device_run.h"
#include "engine.h"
#include "reports/json_writer.h"
#include "suite/engine/runner.h"
#include "targets.h"

namespace roceconf::python {

py::dict result_dict(const report::CaseResult& r) {
  py::dict d;
  d["id"] = r.id;
  d["area"] = r.area;
  d["title"] = r.title;
  d["clause"] = r.clause;
  d["citation"] = r.citation;
  d["rule"] = r.rule;
  d["release"] = r.release;
  d["checked"] = r.checked;
  d["requirement"] = r.requirement;
  d["source"] = r.source;
  d["verdict"] = std::string(report::verdict_name(r.verdict));
  d["reason"] = r.reason;
  d["failed_step"] = r.failed_step;
  py::list diffs;
  for (const auto& x : r.diffs) diffs.append(py::make_tuple(x.field, x.expected, x.actual));
  d["diffs"] = diffs;
  py::list events;
  for (const auto& e : r.events) {
    py::dict ev;
    ev["kind"] = std::string(report::event_kind_name(e.kind));
    ev["step"] = e.step;
    ev["text"] = e.text;
    ev["unix_ns"] = e.unix_ns;
    ev["frame"] = py::bytes(reinterpret_cast<const char*>(e.frame.data()), e.frame.size());
    ev["analysis"] = e.analysis;
    events.append(ev);
  }
  d["events"] = events;
  d["duration_ns"] = r.duration_ns;
  return d;
}

void register_run(py::module_& m) {
  m.def(
      "run_case",
      [](const TargetHandle& target, const py::object& info, std::uint64_t seed,
         double expect_floor_ms, double silence_floor_ms, bool calibrate) {
        const engine::CaseDef def = make_python_case(info);
        engine::Timing timing;
        timing.expect_floor = static_cast<TimeNs>(expect_floor_ms * 1e6);
        timing.silence_floor = static_cast<TimeNs>(silence_floor_ms * 1e6);
        report::CaseResult r;
        {
          py::gil_scoped_release release;
          if (calibrate) {
            std::string note;
            timing.rtt = engine::calibrate_rtt(target.get(), note);
          }
          r = engine::run_case(target.get(), def, timing, seed);
        }
        return result_dict(r);
      },
      py::arg("target"), py::arg("case"), py::arg("seed") = 1, py::arg("expect_floor_ms") = 200.0,
      py::arg("silence_floor_ms") = 20.0, py::arg("calibrate") = true,
      "Runs one case against a target; the result as a dict (verdict, reason, diffs, events).");
}

}  // namespace roceconf::python
