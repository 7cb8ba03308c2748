#include "reports/json_writer.h"

#include <nlohmann/json.hpp>

#include "reports/text.h"
#include "reports/verdict.h"

namespace roceconf::report {
namespace {

using Json = nlohmann::ordered_json;  // keys in the documented order, for people reading it

Json event_json(const Event& e, std::int64_t case_start_ns) {
  Json j;
  j["t_us"] = static_cast<double>(e.unix_ns - case_start_ns) / 1e3;
  j["kind"] = event_kind_name(e.kind);
  j["step"] = e.step;
  j["text"] = e.text;
  j["analysis"] = e.analysis;
  if (e.kind == EventKind::kSent || e.kind == EventKind::kReceived)
    j["frame"] = hex_string(e.frame);
  if (e.kind == EventKind::kKernelLog) j["host_unix_ns"] = e.host_unix_ns;
  return j;
}

Json measurements_json(const CaseResult& c) {
  Json out = Json::array();
  for (const Measurement& m : c.measurements)
    out.push_back(
        {{"name", m.name}, {"value", m.value}, {"threshold", m.threshold}, {"finding", m.finding}});
  return out;
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
  j["measurements"] = measurements_json(c);
  return j;
}

// The section of the security measurements (area sec): each measuring case's figures.
Json security_json(const RunResult& run) {
  Json out = Json::array();
  for (const CaseResult& c : run.cases) {
    if (c.area != "sec" || c.measurements.empty()) continue;
    out.push_back({{"case", c.id},
                   {"verdict", verdict_name(c.verdict)},
                   {"requirement", c.requirement},
                   {"measurements", measurements_json(c)}});
  }
  return out;
}

Json pairs_json(const std::vector<std::pair<std::string, std::string>>& pairs) {
  Json j = Json::object();
  for (const auto& [key, value] : pairs) j[key] = value;
  return j;
}

Json waiver_json(const Waiver& w) {
  return Json{{"id", w.id}, {"until", w.until}, {"reason", w.reason}, {"where", w.where}};
}

// The certificate (reports/verdict.h): the headline, its line, the counts behind it, the rule.
Json certificate_json(const RunResult& run, const Certificate& cert) {
  Json j;
  j["headline"] = headline_name(cert.headline);
  j["line"] = cert.line();
  j["why"] = cert.why;
  j["exit_status"] = cert.exit_status;
  j["counts"] = {{"catalogue", cert.catalogue},
                 {"run", cert.run},
                 {"graded", cert.graded},
                 {"pass", cert.pass},
                 {"skipped", cert.skipped},
                 {"waived", cert.waived},
                 {"blocking", cert.blocking},
                 {"findings", cert.findings()},
                 {"should_findings", cert.should_findings},
                 {"may_findings", cert.may_findings},
                 {"must_graded", cert.must_graded},
                 {"must_total", cert.must_total}};
  const auto ids = [&](Grade g) {
    Json out = Json::array();
    for (std::size_t i = 0; i < run.cases.size(); ++i)
      if (cert.grades[i] == g) out.push_back(run.cases[i].id);
    return out;
  };
  j["blocking"] = ids(Grade::kBlocking);
  j["findings"] = ids(Grade::kFinding);
  j["waived"] = ids(Grade::kWaived);
  Json waivers = Json::array();
  for (const WaiverUse& u : cert.waivers) {
    Json w = waiver_json(u.waiver);
    w["status"] = waiver_status_name(u.status);
    w["verdict"] = u.verdict;
    waivers.push_back(std::move(w));
  }
  j["waivers"] = std::move(waivers);
  j["rule"] = verdict_rule_text();
  return j;
}

Json identity_json(const RunResult& run) {
  const RunIdentity& id = run.identity;
  Json j;
  j["device"] = pairs_json(id.device);
  j["tester_host"] = pairs_json(id.host);
  j["roceconf_version"] = run.version;
  j["catalogue"] = {{"version", run.catalogue.version},
                    {"sha256", run.catalogue.digest},
                    {"specification", run.catalogue.specification},
                    {"cases", run.catalogue.cases},
                    {"must_cases", run.catalogue.must_cases}};
  j["seed"] = id.seed;
  j["command_line"] = id.command_line;
  j["profile"] = {{"path", id.profile_path}, {"sha256", id.profile_sha256}};
  if (!id.preflight.empty()) j["preflight"] = pairs_json(id.preflight);
  j["started"] = iso8601_utc(run.start_unix_ns);
  // Check with `sha256sum evidence.pcapng`.
  j["evidence"] = {{"path", id.evidence_path}, {"sha256", id.evidence_sha256}};
  return j;
}

}  // namespace

std::string to_json(const RunResult& run) {
  const Certificate cert = certify(run);
  Json j;
  j["tool"] = run.tool;
  j["version"] = run.version;
  j["certificate"] = certificate_json(run, cert);
  j["target"] = {{"kind", run.target_kind},
                 {"description", run.target_description},
                 {"quirks", run.quirks},
                 {"device", pairs_json(run.identity.device)}};
  j["identity"] = identity_json(run);
  j["filter"] = run.filter;
  j["filters"] = run.filters;
  j["rerun_of"] = run.rerun_of;
  j["started"] = iso8601_utc(run.start_unix_ns);
  j["duration_s"] = static_cast<double>(run.duration_ns) / 1e9;
  j["rtt_us"] = static_cast<double>(run.rtt_ns) / 1e3;
  j["silence_ms"] = static_cast<double>(run.silence_ns) / 1e6;
  j["interrupted"] = run.interrupted;
  j["notes"] = run.notes;
  if (run.host_clock.exchanges > 0)
    j["host_clock"] = {{"offset_ns", run.host_clock.offset_ns},
                       {"uncertainty_ns", run.host_clock.uncertainty_ns},
                       {"exchanges", run.host_clock.exchanges},
                       {"source", run.host_clock.source}};
  j["summary"] = counts_json(run.counts());
  Json areas = Json::object();
  for (const std::string& area : run.areas()) areas[area] = counts_json(run.counts(area));
  j["areas"] = std::move(areas);
  Json cases = Json::array();
  for (std::size_t i = 0; i < run.cases.size(); ++i) {
    Json c = case_json(run.cases[i]);
    c["grade"] = grade_name(cert.grades[i]);
    if (cert.waiver_of[i] >= 0)
      c["waiver"] = waiver_json(cert.waivers[static_cast<std::size_t>(cert.waiver_of[i])].waiver);
    cases.push_back(std::move(c));
  }
  j["cases"] = std::move(cases);
  j["security_measurements"] = security_json(run);
  // Text from targets and cases is not guaranteed UTF-8; replace rather than throw.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Json counts_json(const Counts& c) {
  return Json{{"pass", c.pass},
              {"fail", c.fail},
              {"skip", c.skip},
              {"error", c.error},
              {"inconclusive", c.inconclusive},
              {"total", c.total()}};
}

}  // namespace roceconf::report
