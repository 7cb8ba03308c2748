#include "reports/junit_writer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "reports/text.h"
#include "reports/verdict.h"

namespace roceconf::report {
namespace {

// Timelines of failing cases go to <system-out>; beyond this many lines CI logs get unreadable.
constexpr std::size_t kMaxTimelineLines = 200;

std::string attr(std::string_view text) {
  return xml_escape(text, true);
}

std::string seconds(std::int64_t ns) {
  return fmt::format("{:.6f}", static_cast<double>(ns) / 1e9);
}

// The failure body: the failed step, then the field diffs one a line.
std::string failure_body(const CaseResult& c) {
  std::string body;
  if (!c.failed_step.empty()) body += "step: " + c.failed_step + "\n";
  for (const FieldDiff& d : c.diffs) body += diff_text(d) + "\n";
  return xml_escape(body);
}

std::string timeline(const CaseResult& c) {
  const std::vector<const Event*> events = events_in_time_order(c);
  std::string out;
  const std::size_t shown = std::min(events.size(), kMaxTimelineLines);
  for (std::size_t i = 0; i < shown; ++i) {
    const Event& e = *events[i];
    out += fmt::format("+{:.1f}us {} {}", static_cast<double>(e.unix_ns - c.start_unix_ns) / 1e3,
                       event_kind_name(e.kind), one_line(e.text));
    if (!e.analysis.empty()) out += fmt::format(" [{}]", fmt::join(e.analysis, ","));
    if (!e.step.empty()) out += " (" + one_line(e.step) + ")";
    out += '\n';
  }
  if (events.size() > shown)
    out += fmt::format("... {} more events (see the JSON report)\n", events.size() - shown);
  return xml_escape(out);
}

// A waived case is <skipped> (it neither passes nor blocks) with the waiver and the real verdict
// in its message and in testcase properties; every case carries its grade and level.
void write_case(std::string& out, const CaseResult& c, Grade grade, const Waiver* waiver) {
  out += fmt::format("    <testcase classname=\"roceconf.{}\" name=\"{}\" time=\"{}\"",
                     attr(c.area), attr(c.id), seconds(c.duration_ns));
  if (!c.source.empty()) out += fmt::format(" file=\"{}\"", attr(c.source));
  out += ">\n";
  // The verdict, the grade and the citation a certification quotes, per test case (as pytest's
  // record_property does).
  out += fmt::format(
      "      <properties>\n        <property name=\"verdict\" value=\"{}\"/>\n        <property "
      "name=\"grade\" value=\"{}\"/>\n        <property name=\"requirement\" value=\"{}\"/>\n",
      verdict_name(c.verdict), grade_name(grade), attr(c.requirement));
  for (const auto& [name, value] :
       {std::pair<const char*, const std::string&>{"citation", c.citation},
        {"release", c.release},
        {"rule", c.rule},
        {"checked", c.checked}})
    if (!value.empty())
      out += fmt::format("        <property name=\"{}\" value=\"{}\"/>\n", name, attr(value));
  if (waiver != nullptr)
    out += fmt::format(
        "        <property name=\"waiver.reason\" value=\"{}\"/>\n        <property "
        "name=\"waiver.until\" value=\"{}\"/>\n        <property name=\"waiver.where\" "
        "value=\"{}\"/>\n",
        attr(waiver->reason), attr(waiver->until), attr(waiver->where));
  out += "      </properties>\n";
  const std::string message = attr(c.reason);
  if (waiver != nullptr) {
    out += fmt::format(
        "      <skipped message=\"{}\"/>\n",
        attr(fmt::format("waived ({}{}): {} (real verdict {}{}{})", waiver->where,
                         waiver->until.empty() ? "" : ", until " + waiver->until, waiver->reason,
                         verdict_name(c.verdict), c.reason.empty() ? "" : ": ", c.reason)));
    out += "    </testcase>\n";
    return;
  }
  switch (c.verdict) {
    case Verdict::kPass:
      break;
    case Verdict::kFail:
      out += fmt::format("      <failure message=\"{}\" type=\"fail\">{}</failure>\n", message,
                         failure_body(c));
      break;
    case Verdict::kError:
    case Verdict::kInconclusive:
      out += fmt::format("      <error message=\"{}\" type=\"{}\">{}</error>\n", message,
                         verdict_name(c.verdict), failure_body(c));
      break;
    case Verdict::kSkip:
      out += fmt::format("      <skipped message=\"{}\"/>\n", message);
      break;
  }
  if (c.verdict == Verdict::kFail || c.verdict == Verdict::kError ||
      c.verdict == Verdict::kInconclusive) {
    std::string header = c.clause.empty() ? "" : xml_escape("clause: " + c.clause + "\n");
    out += "      <system-out>" + header + timeline(c) + "</system-out>\n";
  }
  out += "    </testcase>\n";
}

std::string property(std::string_view name, std::string_view value) {
  return fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", attr(name), attr(value));
}

std::string properties(const RunResult& run, const Certificate& cert) {
  std::string out = "    <properties>\n";
  out += property("certificate.headline", headline_name(cert.headline));
  out += property("certificate.line", cert.line());
  out += property("certificate.exit_status", fmt::format("{}", cert.exit_status));
  out += property("target.kind", run.target_kind);
  out += property("target.description", run.target_description);
  out += property("target.quirks", fmt::format("{}", fmt::join(run.quirks, ",")));
  for (const std::string& note : run.notes) out += property("run.note", note);
  for (const auto& [key, value] : run.identity.device) out += property("device." + key, value);
  for (const auto& [key, value] : run.identity.host) out += property("host." + key, value);
  out += property("version", run.version);
  out += property("catalogue.version", run.catalogue.version);
  out += property("catalogue.sha256", run.catalogue.digest);
  out += property("seed", fmt::format("{}", run.identity.seed));
  out += property("command_line", run.identity.command_line);
  if (!run.identity.profile_path.empty()) {
    out += property("profile.path", run.identity.profile_path);
    out += property("profile.sha256", run.identity.profile_sha256);
  }
  if (!run.identity.evidence_path.empty()) {
    out += property("evidence.path", run.identity.evidence_path);
    out += property("evidence.sha256", run.identity.evidence_sha256);
  }
  for (const WaiverUse& u : cert.waivers)
    out += property(
        "waiver." + u.waiver.id,
        fmt::format("{} ({}{}): {}", waiver_status_name(u.status), u.waiver.where,
                    u.waiver.until.empty() ? "" : ", until " + u.waiver.until, u.waiver.reason));
  out += property("interrupted", run.interrupted ? "true" : "false");
  return out + "    </properties>\n";
}

// Counts as JUnit sees them: a waived case is skipped. All areas when `area` is empty.
Counts junit_counts(const RunResult& run, const Certificate& cert, std::string_view area) {
  Counts c;
  for (std::size_t i = 0; i < run.cases.size(); ++i) {
    if (!area.empty() && run.cases[i].area != area) continue;
    const Verdict v = cert.waiver_of[i] >= 0 ? Verdict::kSkip : run.cases[i].verdict;
    ++(v == Verdict::kPass    ? c.pass
       : v == Verdict::kFail  ? c.fail
       : v == Verdict::kSkip  ? c.skip
       : v == Verdict::kError ? c.error
                              : c.inconclusive);
  }
  return c;
}

}  // namespace

std::string to_junit_xml(const RunResult& run) {
  const Certificate cert = certify(run);
  const Counts all = junit_counts(run, cert, "");
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
      "time=\"{}\" timestamp=\"{}\">\n",
      attr(run.tool), all.total(), all.fail, all.error + all.inconclusive, all.skip,
      seconds(run.duration_ns), iso8601_utc(run.start_unix_ns, false));
  const std::string props = properties(run, cert);
  for (const std::string& area : run.areas()) {
    const Counts c = junit_counts(run, cert, area);
    std::int64_t area_ns = 0;
    for (const CaseResult& r : run.cases)
      if (r.area == area) area_ns += r.duration_ns;
    out += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
        "time=\"{}\">\n",
        attr(area), c.total(), c.fail, c.error + c.inconclusive, c.skip, seconds(area_ns));
    out += props;
    for (std::size_t i = 0; i < run.cases.size(); ++i)
      if (run.cases[i].area == area) {
        const int w = cert.waiver_of[i];
        write_case(out, run.cases[i], cert.grades[i],
                   w < 0 ? nullptr : &cert.waivers[static_cast<std::size_t>(w)].waiver);
      }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace roceconf::report
