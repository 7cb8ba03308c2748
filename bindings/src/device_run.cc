// One device's run as the pytest plugin makes it, case by case (each a pytest test): the
// built-in catalogue's cases (scripts and C++) and Python cases against the device's target,
// gathered into the same result model `roceconf run` fills, so the device's JSON, HTML and
// JUnit reports are `roceconf run`'s. A device whose target could not be set up gets a report
// saying so (setup_error), and the fleet report (reports/fleet_report.h) merges them all.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/stl.h>
#include <nlohmann/json.hpp>

#include "cases/builtin.h"
#include "device_run.h"
#include "engine.h"
#include "reports/atomic_file.h"
#include "reports/fleet_report.h"
#include "reports/html_writer.h"
#include "reports/json_writer.h"
#include "reports/junit_writer.h"
#include "reports/terminal.h"
#include "suite/engine/profile.h"
#include "suite/engine/raw_target.h"
#include "suite/engine/runner.h"
#include "targets.h"

namespace roceconf::python {

namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool is_must(const engine::CaseDef& c) {
  return c.requirement != "SHOULD" && c.requirement != "MAY";
}

class DeviceRun {
 public:
  struct Options {
    std::string label, kind, description;
    std::vector<std::string> quirks;
    Pairs host;
    std::uint64_t seed = 1;
    double expect_floor_ms = 200, silence_floor_ms = 20;
    std::string profile_path, profile_sha256, command_line;
    int local_cases = 0;  // Python cases beside the catalogue
  };

  DeviceRun(std::shared_ptr<TargetHandle> target, Options o)
      : target_(std::move(target)), options_(std::move(o)) {
    const engine::Catalogue& catalogue = cases::builtin_catalogue();
    report::RunResult& r = result_;
#ifdef ROCECONF_VERSION
    r.version = ROCECONF_VERSION;
#endif
    r.target_kind = options_.kind;
    r.target_description = options_.description;
    r.quirks = options_.quirks;
    r.catalogue.version = std::string(cases::kCatalogueVersion);
    if (options_.local_cases > 0)
      r.catalogue.version += fmt::format(" + {} local case{}", options_.local_cases,
                                         options_.local_cases == 1 ? "" : "s");
    r.catalogue.digest = cases::catalogue_digest(catalogue);
    r.catalogue.specification = std::string(cases::kSpecification);
    r.catalogue.cases = static_cast<int>(catalogue.cases().size()) + options_.local_cases;
    r.catalogue.must_cases = static_cast<int>(
        std::count_if(catalogue.cases().begin(), catalogue.cases().end(), is_must));
    r.identity.device = {{"label", options_.label}};
    if (target_) {
      engine::Target& t = target_->get();
      r.target_kind = std::string(t.kind());
      r.target_description = t.describe();
      for (auto& kv : t.identity())
        if (kv.first != "label") r.identity.device.push_back(std::move(kv));
    } else if (!options_.profile_path.empty()) {
      // A device that failed its set-up is still named by what its profile says it is.
      if (auto profile = engine::load_profile(options_.profile_path))
        for (auto& kv : engine::device_identity(*profile, nullptr))
          r.identity.device.push_back(std::move(kv));
    } else if (!options_.quirks.empty()) {
      r.identity.device.emplace_back("quirks", fmt::format("{}", fmt::join(options_.quirks, ",")));
    }
    r.identity.host = options_.host;
    r.identity.seed = options_.seed;
    r.identity.command_line = options_.command_line;
    r.identity.profile_path = options_.profile_path;
    r.identity.profile_sha256 = options_.profile_sha256;
    r.start_unix_ns = unix_now_ns();  // the target is open (or failed to): the run starts
    started_ = std::chrono::steady_clock::now();
    timing_.expect_floor = static_cast<TimeNs>(options_.expect_floor_ms * 1e6);
    timing_.silence_floor = static_cast<TimeNs>(options_.silence_floor_ms * 1e6);
  }

  py::dict run(const engine::CaseDef& def) {
    if (!target_) raise("TargetError", "this device failed its set-up: " + setup_error_);
    engine::Target& t = target_->get();
    {
      py::gil_scoped_release release;
      if (!calibrated_) {  // once per device, as `roceconf run` does
        std::string note;
        timing_.rtt = engine::calibrate_rtt(t, note);
        result_.rtt_ns = timing_.rtt;
        result_.silence_ns = timing_.silence_window();
        calibrated_ = true;
      }
      report::CaseResult r = engine::run_case(t, def, timing_, options_.seed);
      // A run-level case (header/sent-framing) grades what the device's earlier cases left.
      if (def.grade_run) def.grade_run(r, result_.cases);
      result_.cases.push_back(std::move(r));
      result_.notes = engine::run_notes(t, result_.cases);
    }
    result_.duration_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - started_)
                              .count();
    return result_dict(result_.cases.back());
  }

  py::dict run_builtin(const std::string& id) {
    for (const engine::CaseDef& def : cases::builtin_catalogue().cases())
      if (def.id == id) return run(def);
    raise("CaseError", fmt::format("no case '{}' in the catalogue", id));
  }

  // The HTML and JUnit reports, which know no set-up errors, say it in the target's line.
  void set_setup_error(std::string error) {
    setup_error_ = std::move(error);
    target_.reset();
    result_.target_description +=
        (result_.target_description.empty() ? "" : "; ") + ("set-up failed: " + setup_error_);
  }

  // The JSON report; a device that failed its set-up says so in "setup_error".
  std::string json() const {
    std::string text = report::to_json(result_);
    if (setup_error_.empty()) return text;
    auto j = nlohmann::ordered_json::parse(text);
    j["setup_error"] = setup_error_;
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  }

  const report::RunResult& result() const {
    return result_;
  }
  const std::string& setup_error() const {
    return setup_error_;
  }

 private:
  std::shared_ptr<TargetHandle> target_;
  Options options_;
  report::RunResult result_;
  engine::Timing timing_;
  bool calibrated_ = false;
  std::chrono::steady_clock::time_point started_{};
  std::string setup_error_;
};

}  // namespace

void register_device_run(py::module_& m) {
  m.def(
      "catalogue",
      [] {
        py::list out;
        // Run-level cases last, as `roceconf run` runs them: they grade the others' packets.
        std::vector<const engine::CaseDef*> order;
        for (const engine::CaseDef& c : cases::builtin_catalogue().cases())
          if (!c.grade_run) order.push_back(&c);
        for (const engine::CaseDef& c : cases::builtin_catalogue().cases())
          if (c.grade_run) order.push_back(&c);
        for (const engine::CaseDef* cp : order) {
          const engine::CaseDef& c = *cp;
          py::dict d;
          d["id"] = c.id;
          d["area"] = c.area;
          d["title"] = c.title;
          d["requirement"] = c.requirement;
          d["needs"] = c.needs;
          d["source"] = c.source;
          d["run_level"] = static_cast<bool>(c.grade_run);
          out.append(d);
        }
        return out;
      },
      "The built-in catalogue (scripts and C++ cases): id, area, title, requirement, needs, "
      "source, run_level (graded over the device's other cases), in the order `roceconf run` "
      "runs them.");

  py::class_<DeviceRun>(m, "DeviceRun",
                        "One device's cases, run one at a time, and its reports (the pytest "
                        "plugin's devices).")
      .def(py::init([](std::shared_ptr<TargetHandle> target, const std::string& label,
                       const std::string& kind, const std::string& description,
                       const std::vector<std::string>& quirks, const Pairs& host,
                       std::uint64_t seed, double expect_floor_ms, double silence_floor_ms,
                       const std::string& profile_path, const std::string& profile_sha256,
                       const std::string& command_line, int local_cases) {
             DeviceRun::Options o{label,        kind,           description,     quirks,
                                  host,         seed,           expect_floor_ms, silence_floor_ms,
                                  profile_path, profile_sha256, command_line,    local_cases};
             return std::make_unique<DeviceRun>(std::move(target), std::move(o));
           }),
           py::arg("target"), py::arg("label"), py::arg("kind") = "", py::arg("description") = "",
           py::arg("quirks") = std::vector<std::string>{}, py::arg("host") = Pairs{},
           py::arg("seed") = 1, py::arg("expect_floor_ms") = 200.0,
           py::arg("silence_floor_ms") = 20.0, py::arg("profile") = "",
           py::arg("profile_sha256") = "", py::arg("command_line") = "", py::arg("local_cases") = 0)
      .def("run", &DeviceRun::run_builtin, py::arg("case_id"),
           "Runs a catalogue case by id; its result as roceconf.run_case has it.")
      .def(
          "run_python",
          [](DeviceRun& self, const py::object& info) { return self.run(make_python_case(info)); },
          py::arg("case"), "Runs a Python case (a roceconf.CaseInfo).")
      .def("fail_setup", &DeviceRun::set_setup_error, py::arg("error"),
           "Records that the device's target could not be set up; no case runs on it.")
      .def_property_readonly("setup_error", &DeviceRun::setup_error)
      .def_property_readonly("cases",
                             [](const DeviceRun& self) { return self.result().cases.size(); })
      .def("json", &DeviceRun::json, "The JSON report (reports/json_writer.h) as text.")
      .def("summary",
           [](const DeviceRun& self) { return report::summary_text(self.result(), false); })
      .def("html", [](const DeviceRun& self) { return report::to_html(self.result()); })
      .def("junit", [](const DeviceRun& self) { return report::to_junit_xml(self.result()); });

  m.def(
      "write_file_atomic",
      [](const std::string& path, const std::string& content) {
        if (auto ok = report::write_file_atomic(path, content); !ok) raise("Error", ok.error());
      },
      py::arg("path"), py::arg("content"),
      "Writes a report whole or not at all (reports/atomic_file.h).");

  m.def(
      "fleet_merge",
      [](const std::vector<std::string>& reports, const std::string& html,
         const std::string& json) {
        std::vector<report::FleetDevice> devices;
        for (const std::string& path : reports) {
          auto d = report::read_device_report(path);
          if (!d) raise("Error", d.error());
          devices.push_back(std::move(*d));
        }
        report::Fleet fleet = report::merge_fleet(std::move(devices));
#ifdef ROCECONF_VERSION
        fleet.version = ROCECONF_VERSION;
#endif
        for (const auto& [path, content] : {std::pair{json, report::fleet_to_json(fleet)},
                                            std::pair{html, report::fleet_to_html(fleet)}})
          if (!path.empty())
            if (auto ok = report::write_file_atomic(path, content); !ok) raise("Error", ok.error());
        return py::make_tuple(report::fleet_summary_text(fleet, false), fleet.exit_status());
      },
      py::arg("reports"), py::arg("html") = "", py::arg("json") = "",
      "`roceconf fleet merge`: the fleet report of these device reports; (summary, exit status).");
}

}  // namespace roceconf::python
