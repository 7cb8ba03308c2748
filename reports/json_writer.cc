#include "reports/json_writer.h"

#include <nlohmann/json.hpp>

#include "reports/text.h"

namespace roceconf::report {
namespace {

using Json = nlohmann::ordered_json;  // keys in the documented order, for people reading it

Json counts_json(const Counts& c) {
  return Json{{"pass", c.pass},
              {"fail", c.fail},
              {"skip", c.skip},
              {"error", c.error},
              {"inconclusive", c.inconclusive},
              {"total", c.total()}};
}

Json event_json(const Event& e, std::int64_t case_start_ns) {
  Json j;
  j["t_us"] = static_cast<double>(e.unix_ns - case_start_ns) / 1e3;
  j["kind"] = event_kind_name(e.kind);
  j["step"] = e.step;
  j["text"] = e.text;
  j["analysis"] = e.analysis;
  if (e.kind == EventKind::kSent || e.kind == EventKind::kReceived)
    j["frame"] = hex_string(e.frame);
  return j;
}

Json case_json(const CaseResult& c) {
  Json j;
  j["id"] = c.id;
  j["area"] = c.area;
  j["title"] = c.title;
  j["description"] = c.description;
  j["clause"] = c.clause;
  j["citation"] = c.citation;
  j["rule"] = c.rule;
  j["release"] = c.release;
  j["checked"] = c.checked;
  j["requirement"] = c.requirement;
  j["needs"] = c.needs;
  j["source"] = c.source;
  j["verdict"] = verdict_name(c.verdict);
  j["reason"] = c.reason;
  j["failed_step"] = c.failed_step;
  Json diffs = Json::array();
  for (const FieldDiff& d : c.diffs)
    diffs.push_back({{"field", d.field}, {"expected", d.expected}, {"actual", d.actual}});
  j["diffs"] = std::move(diffs);
  j["started"] = iso8601_utc(c.start_unix_ns);
  j["duration_ms"] = static_cast<double>(c.duration_ns) / 1e6;
  Json events = Json::array();
  for (const Event* e : events_in_time_order(c)) events.push_back(event_json(*e, c.start_unix_ns));
  j["events"] = std::move(events);
  return j;
}

}  // namespace

std::string to_json(const RunResult& run) {
  Json j;
  j["tool"] = run.tool;
  j["version"] = run.version;
  j["target"] = {
      {"kind", run.target_kind}, {"description", run.target_description}, {"quirks", run.quirks}};
  j["filter"] = run.filter;
  j["started"] = iso8601_utc(run.start_unix_ns);
  j["duration_s"] = static_cast<double>(run.duration_ns) / 1e9;
  j["rtt_us"] = static_cast<double>(run.rtt_ns) / 1e3;
  j["silence_ms"] = static_cast<double>(run.silence_ns) / 1e6;
  j["interrupted"] = run.interrupted;
  j["summary"] = counts_json(run.counts());
  Json areas = Json::object();
  for (const std::string& area : run.areas()) areas[area] = counts_json(run.counts(area));
  j["areas"] = std::move(areas);
  Json cases = Json::array();
  for (const CaseResult& c : run.cases) cases.push_back(case_json(c));
  j["cases"] = std::move(cases);
  // Text from targets and cases is not guaranteed UTF-8; replace rather than throw.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace roceconf::report
