#include "reports/junit_writer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "reports/text.h"

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

void write_case(std::string& out, const CaseResult& c) {
  out += fmt::format("    <testcase classname=\"roceconf.{}\" name=\"{}\" time=\"{}\"",
                     attr(c.area), attr(c.id), seconds(c.duration_ns));
  if (!c.source.empty()) out += fmt::format(" file=\"{}\"", attr(c.source));
  out += ">\n";
  if (!c.citation.empty() || !c.release.empty()) {
    // The citation a certification quotes, per test case (as pytest's record_property does).
    out += "      <properties>\n";
    for (const auto& [name, value] :
         {std::pair<const char*, const std::string&>{"citation", c.citation},
          {"release", c.release},
          {"rule", c.rule},
          {"checked", c.checked}})
      if (!value.empty())
        out += fmt::format("        <property name=\"{}\" value=\"{}\"/>\n", name, attr(value));
    out += "      </properties>\n";
  }
  const std::string message = attr(c.reason);
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

std::string properties(const RunResult& run) {
  std::string quirks = fmt::format("{}", fmt::join(run.quirks, ","));
  return fmt::format(
      "    <properties>\n"
      "      <property name=\"target.kind\" value=\"{}\"/>\n"
      "      <property name=\"target.description\" value=\"{}\"/>\n"
      "      <property name=\"target.quirks\" value=\"{}\"/>\n"
      "      <property name=\"version\" value=\"{}\"/>\n"
      "      <property name=\"interrupted\" value=\"{}\"/>\n"
      "    </properties>\n",
      attr(run.target_kind), attr(run.target_description), attr(quirks), attr(run.version),
      run.interrupted);
}

}  // namespace

std::string to_junit_xml(const RunResult& run) {
  const Counts all = run.counts();
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
      "time=\"{}\" timestamp=\"{}\">\n",
      attr(run.tool), all.total(), all.fail, all.error + all.inconclusive, all.skip,
      seconds(run.duration_ns), iso8601_utc(run.start_unix_ns, false));
  const std::string props = properties(run);
  for (const std::string& area : run.areas()) {
    const Counts c = run.counts(area);
    std::int64_t area_ns = 0;
    for (const CaseResult& r : run.cases)
      if (r.area == area) area_ns += r.duration_ns;
    out += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
        "time=\"{}\">\n",
        attr(area), c.total(), c.fail, c.error + c.inconclusive, c.skip, seconds(area_ns));
    out += props;
    for (const CaseResult& r : run.cases)
      if (r.area == area) write_case(out, r);
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace roceconf::report
