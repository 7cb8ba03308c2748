#include "reports/fleet_report.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/html_writer.h"
#include "reports/json_writer.h"
#include "reports/text.h"

namespace roceconf::report {
namespace {

using Json = nlohmann::ordered_json;

std::string text_of(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool known_verdict(std::string_view v) {
  return v == "pass" || v == "fail" || v == "skip" || v == "error" || v == "inconclusive";
}

void count(Counts& c, std::string_view verdict) {
  if (verdict == "pass") ++c.pass;
  if (verdict == "fail") ++c.fail;
  if (verdict == "skip") ++c.skip;
  if (verdict == "error") ++c.error;
  if (verdict == "inconclusive") ++c.inconclusive;
}

// "mlx5_0 · fw 22.36.1010 · mlx5_core · quirks psn-gap-ack": what tells versions of one
// device apart, in this order whatever the report's.
std::string version_of(const FleetDevice& d) {
  const auto value = [&](std::string_view key) {
    for (const auto& [k, v] : d.identity)
      if (k == key) return v;
    return std::string();
  };
  std::string out;
  const auto add = [&](const std::string& prefix, const std::string& part) {
    if (!part.empty()) out += (out.empty() ? "" : " · ") + prefix + part;
  };
  const std::string label = value("label"), name = value("name");
  if (!label.empty() && name != label) add("", name);
  add("fw ", value("fw_ver"));
  add("", value("driver"));
  add("rdma-core ", value("rdma_core"));
  if (value("quirks") != "none") add("quirks ", value("quirks"));
  return one_line(out);
}

std::string_view case_word(std::string_view verdict) {
  if (verdict == "pass") return "PASS";
  if (verdict == "fail") return "FAIL";
  if (verdict == "skip") return "SKIP";
  if (verdict == "error") return "ERROR";
  if (verdict == "inconclusive") return "INCONC";
  return "-";
}

}  // namespace

std::expected<FleetDevice, std::string> parse_device_report(const std::string& text,
                                                            const std::string& source) {
  const auto fail = [&](const std::string& what) {
    return std::unexpected(fmt::format("{}: {}", source, what));
  };
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return fail("not JSON (give the report.json of roceconf run or of --roceconf-fleet)");
  if (text_of(j, "kind") == "fleet")
    return fail("is a fleet report (give the devices' report.json files)");
  if (text_of(j, "tool") != "roceconf" || !j.contains("cases") || !j["cases"].is_array() ||
      !j.contains("target") || !j["target"].is_object())
    return fail(
        "not a roceconf report (give the report.json of roceconf run or of --roceconf-fleet)");
  FleetDevice d;
  d.source = source;
  const Json& target = j["target"];
  d.target = text_of(target, "kind");
  if (const std::string desc = text_of(target, "description"); !desc.empty())
    d.target += (d.target.empty() ? "" : ": ") + desc;
  if (target.contains("device") && target["device"].is_object())
    for (const auto& [key, value] : target["device"].items())
      if (value.is_string()) d.identity.emplace_back(key, value.get<std::string>());
  // Reports of runs before quirks were part of the identity name them only here.
  if (target.contains("quirks") && target["quirks"].is_array() && !target["quirks"].empty() &&
      std::none_of(d.identity.begin(), d.identity.end(),
                   [](const auto& kv) { return kv.first == "quirks"; })) {
    std::string quirks;
    for (const auto& q : target["quirks"])
      if (q.is_string()) quirks += (quirks.empty() ? "" : ",") + q.get<std::string>();
    d.identity.emplace_back("quirks", quirks);
  }
  if (j.contains("certificate") && j["certificate"].is_object()) {
    const Json& cert = j["certificate"];
    d.headline = text_of(cert, "headline");
    d.line = text_of(cert, "line");
    if (cert.contains("exit_status") && cert["exit_status"].is_number_integer())
      d.exit_status = cert["exit_status"].get<int>();
  }
  d.setup_error = text_of(j, "setup_error");
  d.started = text_of(j, "started");
  if (j.contains("duration_s") && j["duration_s"].is_number())
    d.duration_s = j["duration_s"].get<double>();
  if (j.contains("identity") && j["identity"].is_object() && j["identity"].contains("catalogue") &&
      j["identity"]["catalogue"].is_object()) {
    const Json& cat = j["identity"]["catalogue"];
    const std::string digest = text_of(cat, "sha256");
    if (!digest.empty())
      d.catalogue = fmt::format("{} (sha256 {}…)", text_of(cat, "version"), digest.substr(0, 12));
  }
  for (const Json& c : j["cases"]) {
    if (!c.is_object()) return fail("a case that is not an object (is the report whole?)");
    const std::string id = text_of(c, "id");
    const std::string verdict = text_of(c, "verdict");
    if (id.empty() || !known_verdict(verdict))
      return fail("a case without an id or a known verdict (is the report whole?)");
    FleetCell cell;
    cell.verdict = verdict;
    cell.grade = text_of(c, "grade");
    cell.reason = text_of(c, "reason");
    cell.failed_step = text_of(c, "failed_step");
    if (c.contains("diffs") && c["diffs"].is_array())
      for (const Json& diff : c["diffs"])
        if (diff.is_object())
          cell.diffs.push_back(
              {text_of(diff, "field"), text_of(diff, "expected"), text_of(diff, "actual")});
    d.cases.push_back(
        {id, text_of(c, "area"), text_of(c, "title"), text_of(c, "requirement"), false});
    if (!d.cells.emplace(id, std::move(cell)).second)
      return fail(fmt::format("case '{}' appears twice (is the report whole?)", id));
  }
  return d;
}

std::expected<FleetDevice, std::string> read_device_report(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path))
    return std::unexpected(fmt::format("cannot read {}: {} (give report.json files)", path,
                                       in ? "a directory" : std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_device_report(text.str(), path);
}

Counts Fleet::counts(const FleetDevice& device, std::string_view area) const {
  Counts c;
  for (const FleetCase& fc : cases) {
    if (!area.empty() && fc.area != area) continue;
    if (const auto it = device.cells.find(fc.id); it != device.cells.end())
      count(c, it->second.verdict);
  }
  return c;
}

int Fleet::exit_status() const {
  for (const FleetDevice& d : devices)
    if (!d.setup_error.empty() || d.exit_status != 0) return 1;
  return 0;
}

std::string fleet_cell_anchor(std::size_t device, std::string_view case_id) {
  return fmt::format("d{}-{}", device, case_anchor(case_id));
}

Fleet merge_fleet(std::vector<FleetDevice> devices) {
  Fleet fleet;
  // Cases in the order the reports list them (catalogue order); a case only some devices ran
  // goes where its report has it among the cases listed already.
  std::map<std::string, bool> listed;
  for (const FleetDevice& d : devices) {
    for (std::size_t i = 0; i < d.cases.size(); ++i) {
      if (listed[d.cases[i].id]) continue;
      // Before the next case of this device that is listed already, else at the end.
      auto at = fleet.cases.end();
      for (std::size_t j = i + 1; j < d.cases.size() && at == fleet.cases.end(); ++j)
        if (listed[d.cases[j].id])
          at = std::find_if(fleet.cases.begin(), fleet.cases.end(),
                            [&](const FleetCase& c) { return c.id == d.cases[j].id; });
      fleet.cases.insert(at, d.cases[i]);
      listed[d.cases[i].id] = true;
    }
  }
  for (const FleetCase& c : fleet.cases)
    if (std::find(fleet.areas.begin(), fleet.areas.end(), c.area) == fleet.areas.end())
      fleet.areas.push_back(c.area);

  // Titles: the label, else the device name, else the file name; unique.
  std::map<std::string, int> uses;
  for (FleetDevice& d : devices) {
    std::string label, name;
    for (const auto& [key, value] : d.identity) {
      if (key == "label") label = value;
      if (key == "name") name = value;
    }
    d.title = one_line(!label.empty()  ? label
                       : !name.empty() ? name
                                       : std::filesystem::path(d.source).stem().string());
    d.version = version_of(d);
    ++uses[d.title];
  }
  for (FleetDevice& d : devices)
    if (uses[d.title] > 1)
      d.title += " (" + std::filesystem::path(d.source).filename().string() + ")";

  std::set<std::string> catalogues;
  for (const FleetDevice& d : devices)
    if (!d.catalogue.empty() && d.setup_error.empty()) catalogues.insert(d.catalogue);
  if (catalogues.size() > 1)
    fleet.warnings.push_back(fmt::format(
        "the devices ran {} different catalogues: compare verdicts of one catalogue only",
        catalogues.size()));

  // Disagreement: the devices that ran a case gave it more than one verdict.
  for (std::size_t i = 0; i < fleet.cases.size(); ++i) {
    std::set<std::string> verdicts;
    for (const FleetDevice& d : devices)
      if (const auto it = d.cells.find(fleet.cases[i].id); it != d.cells.end())
        verdicts.insert(it->second.verdict);
    fleet.cases[i].disagree = verdicts.size() > 1;
    if (fleet.cases[i].disagree) fleet.disagreements.push_back(i);
  }
  fleet.devices = std::move(devices);
  return fleet;
}

std::string fleet_to_json(const Fleet& fleet) {
  Json j;
  j["tool"] = "roceconf";
  j["kind"] = "fleet";
  j["version"] = fleet.version;
  Json devices = Json::array();
  for (const FleetDevice& d : fleet.devices) {
    Json identity = Json::object();
    for (const auto& [key, value] : d.identity) identity[key] = value;
    Json areas = Json::object();
    for (const std::string& area : fleet.areas) areas[area] = counts_json(fleet.counts(d, area));
    devices.push_back({{"title", d.title},
                       {"version", d.version},
                       {"source", d.source},
                       {"target", d.target},
                       {"identity", std::move(identity)},
                       {"headline", d.headline},
                       {"line", d.line},
                       {"exit_status", d.exit_status},
                       {"setup_error", d.setup_error},
                       {"catalogue", d.catalogue},
                       {"started", d.started},
                       {"duration_s", d.duration_s},
                       {"summary", counts_json(fleet.counts(d))},
                       {"areas", std::move(areas)}});
  }
  j["devices"] = std::move(devices);
  Json disagreements = Json::array();
  for (const std::size_t i : fleet.disagreements) disagreements.push_back(fleet.cases[i].id);
  j["disagreements"] = std::move(disagreements);
  Json cases = Json::array();
  for (const FleetCase& c : fleet.cases) {
    Json results = Json::array();
    for (const FleetDevice& d : fleet.devices) {
      const auto it = d.cells.find(c.id);
      if (it == d.cells.end()) {
        results.push_back(nullptr);
        continue;
      }
      const FleetCell& cell = it->second;
      Json diffs = Json::array();
      for (const FieldDiff& diff : cell.diffs)
        diffs.push_back(
            {{"field", diff.field}, {"expected", diff.expected}, {"actual", diff.actual}});
      results.push_back({{"verdict", cell.verdict},
                         {"grade", cell.grade},
                         {"reason", cell.reason},
                         {"failed_step", cell.failed_step},
                         {"diffs", std::move(diffs)}});
    }
    cases.push_back({{"id", c.id},
                     {"area", c.area},
                     {"title", c.title},
                     {"requirement", c.requirement},
                     {"disagree", c.disagree},
                     {"results", std::move(results)}});
  }
  j["cases"] = std::move(cases);
  j["warnings"] = fleet.warnings;
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string fleet_summary_text(const Fleet& fleet, bool color) {
  const auto paint = [&](std::string_view text, std::string_view code) {
    return color ? fmt::format("\x1b[{}m{}\x1b[0m", code, text) : std::string(text);
  };
  std::size_t width = 6;
  for (const FleetDevice& d : fleet.devices) width = std::max(width, d.title.size());
  width = std::min<std::size_t>(width, 40);
  std::string out =
      fmt::format("{:<{}}  {:>5} {:>5} {:>5} {:>5} {:>6} {:>6}  certificate\n", "device", width,
                  "pass", "fail", "skip", "error", "inconc", "total");
  for (const FleetDevice& d : fleet.devices) {
    const Counts c = fleet.counts(d);
    std::string status = d.setup_error.empty() ? d.headline : "SET-UP FAILED: " + d.setup_error;
    status = paint(one_line(status), d.setup_error.empty() && d.exit_status == 0 ? "32" : "1;31");
    out += fmt::format("{:<{}}  {:>5} {:>5} {:>5} {:>5} {:>6} {:>6}  {}\n", d.title, width, c.pass,
                       c.fail, c.skip, c.error, c.inconclusive, c.total(), status);
    if (!d.version.empty()) out += fmt::format("{:<{}}  {}\n", "", width, d.version);
  }
  for (const std::string& w : fleet.warnings) out += paint("warning: " + w, "1;33") + "\n";
  if (fleet.disagreements.empty()) {
    out += fleet.devices.size() > 1 ? "The devices agree on every case.\n" : "";
    return out;
  }
  out += fmt::format("{} case{} where the devices disagree:\n", fleet.disagreements.size(),
                     fleet.disagreements.size() == 1 ? "" : "s");
  for (const std::size_t i : fleet.disagreements) {
    const FleetCase& c = fleet.cases[i];
    std::string verdicts;
    for (const FleetDevice& d : fleet.devices) {
      const auto it = d.cells.find(c.id);
      verdicts +=
          fmt::format("  {} {}", d.title, case_word(it == d.cells.end() ? "" : it->second.verdict));
    }
    out += fmt::format("  {}:{}\n", c.id, verdicts);
  }
  return out;
}

}  // namespace roceconf::report
