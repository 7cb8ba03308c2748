// The fleet report as one self-contained HTML page (no script, nothing fetched): every value
// from a report is escaped, and each cell that did not pass links to its reason and diff.
#include <fmt/format.h>

#include "reports/fleet_report.h"
#include "reports/html_writer.h"
#include "reports/text.h"

namespace roceconf::report {
namespace {

std::string esc(std::string_view text) {
  return xml_escape(text);
}

constexpr std::string_view kStyle = R"css(
:root{--pass:#1a7f37;--fail:#cf222e;--skip:#6e7781;--error:#9a6700;--inconclusive:#8250df;
--line:#d0d7de;--muted:#57606a;--code:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;
max-width:1400px;margin:0 auto;padding:12px}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:20px 0 6px;
border-bottom:1px solid var(--line)}h3{font-size:14px;margin:4px 0}
a{color:#0969da}.muted{color:var(--muted)}
.badge{display:inline-block;min-width:3.4em;text-align:center;padding:0 6px;border-radius:3px;
font-size:11px;font-weight:700;color:#fff;white-space:nowrap}
a.badge{text-decoration:none}a.badge:hover{outline:2px solid #1f2328}
.b-pass{background:var(--pass)}.b-fail{background:var(--fail)}.b-skip{background:var(--skip)}
.b-error{background:var(--error)}.b-inconclusive{background:var(--inconclusive)}
.b-none{background:#afb8c1}.b-setup{background:var(--fail)}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:6px 0}
th,td{border:1px solid var(--line);padding:2px 8px;text-align:left;vertical-align:top}
th{background:var(--code)}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td.z{color:#afb8c1}
table.matrix th.dev{text-align:center;min-width:7em}
th.dev small,td small{display:block;font-weight:400;color:var(--muted)}
table.matrix td.v{text-align:center}
table.matrix tr.area th{text-align:left;background:#eaeef2}
tr.disagree td.id{border-left:4px solid var(--fail)}
.warn{background:#fff8c5;border:1px solid #d4a72c;padding:6px 10px;border-radius:4px}
.setup{color:var(--fail);font-weight:600}
section.cell{border:1px solid var(--line);border-left:4px solid var(--skip);border-radius:4px;
margin:6px 0;padding:4px 10px}
section.c-fail{border-left-color:var(--fail)}section.c-error{border-left-color:var(--error)}
section.c-inconclusive{border-left-color:var(--inconclusive)}
section.cell:target{box-shadow:0 0 0 3px #54aeff}
table.diff td.actual{color:var(--fail);font-weight:600}
pre{background:var(--code);padding:6px 8px;border-radius:4px;overflow-x:auto;margin:4px 0}
)css";

const FleetCell* cell_of(const FleetDevice& d, const std::string& id) {
  const auto it = d.cells.find(id);
  return it == d.cells.end() ? nullptr : &it->second;
}

bool passed(const FleetCell& c) {
  return c.verdict == "pass";
}

// A cell's details are written (and linked) when it did not pass, but a skip only where the
// devices disagree: elsewhere every device skipped for the same want of a capability.
bool detailed(const FleetCell& c, const FleetCase& fc) {
  return !passed(c) && (c.verdict != "skip" || fc.disagree);
}

std::string word(std::string_view verdict) {
  if (verdict == "pass") return "PASS";
  if (verdict == "fail") return "FAIL";
  if (verdict == "skip") return "SKIP";
  if (verdict == "error") return "ERROR";
  return "INCONC";
}

std::string device_header(const FleetDevice& d) {
  std::string out = esc(d.title);
  if (!d.version.empty()) out += "<small>" + esc(d.version) + "</small>";
  if (!d.setup_error.empty()) out += "<small class=\"setup\">set-up failed</small>";
  return out;
}

std::string verdict_cell(const Fleet& fleet, std::size_t di, const FleetCase& fc) {
  const FleetDevice& d = fleet.devices[di];
  const FleetCell* c = cell_of(d, fc.id);
  if (c == nullptr)
    return d.setup_error.empty()
               ? "<td class=\"v\"><span class=\"badge b-none\" title=\"not run\">—</span></td>"
               : "<td class=\"v\"><span class=\"badge b-none\" title=\"set-up failed\">not "
                 "run</span></td>";
  if (!detailed(*c, fc))
    return fmt::format("<td class=\"v\"><span class=\"badge b-{}\" title=\"{}\">{}</span></td>",
                       esc(c->verdict), esc(c->reason), word(c->verdict));
  return fmt::format(
      "<td class=\"v\"><a class=\"badge b-{}\" href=\"#{}\" title=\"{}\">{}</a></td>",
      esc(c->verdict), esc(fleet_cell_anchor(di, fc.id)), esc(one_line(c->reason)),
      word(c->verdict));
}

void write_matrix(std::string& out, const Fleet& fleet, const std::vector<std::size_t>& rows,
                  std::string_view id, bool by_area) {
  out += fmt::format(
      "<div class=\"scroll\"><table class=\"matrix\" id=\"{}\"><thead><tr><th>Case</th>"
      "<th>Level</th>",
      id);
  for (const FleetDevice& d : fleet.devices)
    out += "<th class=\"dev\">" + device_header(d) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  std::string area;
  for (const std::size_t i : rows) {
    const FleetCase& fc = fleet.cases[i];
    if (by_area && (i == rows.front() || fc.area != area))
      out += fmt::format("<tr class=\"area\"><th colspan=\"{}\">{}</th></tr>\n",
                         fleet.devices.size() + 2, esc(fc.area));
    area = fc.area;
    out += fmt::format(
        "<tr class=\"{}\" data-case=\"{}\"><td class=\"id\"><code>{}</code>{}</td><td>{}</td>",
        fc.disagree ? "disagree" : "agree", esc(fc.id), esc(fc.id),
        fc.title.empty() ? "" : "<small>" + esc(fc.title) + "</small>", esc(fc.requirement));
    for (std::size_t di = 0; di < fleet.devices.size(); ++di) out += verdict_cell(fleet, di, fc);
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
}

std::string counts_text(const Counts& c) {
  if (c.total() == 0) return "<span class=\"muted\">none run</span>";
  std::string out;
  const auto add = [&](int n, std::string_view what) {
    if (n > 0) out += fmt::format("{}{} {}", out.empty() ? "" : " · ", n, what);
  };
  add(c.pass, "pass");
  add(c.fail, "fail");
  add(c.error, "error");
  add(c.inconclusive, "inconclusive");
  add(c.skip, "skip");
  return out;
}

std::string_view worst(const Counts& c) {
  if (c.fail > 0) return "fail";
  if (c.error > 0) return "error";
  if (c.inconclusive > 0) return "inconclusive";
  if (c.pass > 0) return "pass";
  return c.skip > 0 ? "skip" : "none";
}

void write_details(std::string& out, const Fleet& fleet) {
  out += "<h2 id=\"details\">Cases that did not pass</h2>\n";
  bool any = false;
  for (const FleetCase& fc : fleet.cases) {
    for (std::size_t di = 0; di < fleet.devices.size(); ++di) {
      const FleetDevice& d = fleet.devices[di];
      const FleetCell* c = cell_of(d, fc.id);
      if (c == nullptr || !detailed(*c, fc)) continue;
      any = true;
      out += fmt::format(
          "<section class=\"cell c-{}\" id=\"{}\"><h3><span class=\"badge b-{}\">{}</span> "
          "<code>{}</code> on {}</h3>\n",
          esc(c->verdict), esc(fleet_cell_anchor(di, fc.id)), esc(c->verdict), word(c->verdict),
          esc(fc.id), esc(d.title));
      if (!fc.title.empty()) out += "<p class=\"muted\">" + esc(fc.title) + "</p>\n";
      if (!c->reason.empty()) out += "<p class=\"reason\">" + esc(c->reason) + "</p>\n";
      if (!c->failed_step.empty())
        out += "<p>at <code class=\"failed-step\">" + esc(c->failed_step) + "</code></p>\n";
      if (!c->grade.empty())
        out +=
            "<p class=\"muted\">grade: " + esc(c->grade) + " · report " + esc(d.source) + "</p>\n";
      if (!c->diffs.empty()) {
        out +=
            "<div class=\"scroll\"><table class=\"diff\"><thead><tr><th>field</th>"
            "<th>expected</th><th>actual</th></tr></thead><tbody>\n";
        for (const FieldDiff& diff : c->diffs)
          out += fmt::format(
              "<tr><td><code>{}</code></td><td class=\"expected\">{}</td><td "
              "class=\"actual\">{}</td></tr>\n",
              esc(diff.field), esc(diff.expected), esc(diff.actual));
        out += "</tbody></table></div>\n<pre class=\"difftext\">";
        for (const FieldDiff& diff : c->diffs) out += esc(diff_text(diff)) + "\n";
        out += "</pre>\n";
      }
      out += "<p><a href=\"#matrix\">back to the matrix</a></p></section>\n";
    }
  }
  if (!any) out += "<p>Every case that ran passed (or was skipped alike everywhere).</p>\n";
}

}  // namespace

std::string fleet_to_html(const Fleet& fleet) {
  std::string out;
  out.reserve(128 * 1024);
  out += fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'\">\n<title>roceconf fleet report: {} devices, {} disagreements</title>\n"
      "<style>{}</style>\n</head>\n<body>\n<h1>RoCE conformance: fleet of {} devices</h1>\n",
      fleet.devices.size(), fleet.disagreements.size(), kStyle, fleet.devices.size());

  out +=
      "<div class=\"scroll\"><table class=\"devices\" id=\"devices\"><thead><tr><th>Device</th>"
      "<th>Certificate</th><th class=\"n\">Pass</th><th class=\"n\">Fail</th><th "
      "class=\"n\">Skip</th><th class=\"n\">Error</th><th class=\"n\">Inconc.</th><th "
      "class=\"n\">Total</th><th>Target</th><th>Report</th></tr></thead>\n<tbody>\n";
  for (const FleetDevice& d : fleet.devices) {
    const Counts c = fleet.counts(d);
    const std::string cert =
        !d.setup_error.empty()
            ? "<span class=\"badge b-setup\">SET-UP FAILED</span> <span class=\"setup-error\">" +
                  esc(d.setup_error) + "</span>"
            : fmt::format("<span class=\"badge b-{}\">{}</span> <small>{}</small>",
                          d.exit_status == 0 ? "pass" : "fail", esc(d.headline), esc(d.line));
    const auto n = [](int v) {
      return fmt::format("<td class=\"n{}\">{}</td>", v == 0 ? " z" : "", v);
    };
    out += fmt::format(
        "<tr class=\"device{}\"><td><b>{}</b>{}</td><td>{}</td>{}{}{}{}{}{}<td>{}</td>"
        "<td><code>{}</code>{}</td></tr>\n",
        d.setup_error.empty() ? "" : " setup-failed", esc(d.title),
        d.version.empty() ? "" : "<small>" + esc(d.version) + "</small>", cert, n(c.pass),
        n(c.fail), n(c.skip), n(c.error), n(c.inconclusive), n(c.total()), esc(d.target),
        esc(d.source),
        d.catalogue.empty() ? "" : "<small>catalogue " + esc(d.catalogue) + "</small>");
  }
  out += "</tbody></table></div>\n";
  for (const std::string& w : fleet.warnings) out += "<p class=\"warn\">" + esc(w) + "</p>\n";

  out += fmt::format("<h2 id=\"disagreements\">Where the devices disagree ({})</h2>\n",
                     fleet.disagreements.size());
  if (fleet.disagreements.empty()) {
    out +=
        "<p class=\"agree-all\">The devices that ran a case agree on its verdict, for every "
        "case.</p>\n";
  } else {
    write_matrix(out, fleet, fleet.disagreements, "disagreement-matrix", false);
  }

  out +=
      "<h2 id=\"areas\">Summary by area and device</h2>\n<div class=\"scroll\"><table "
      "class=\"areas\"><thead><tr><th>Area</th>";
  for (const FleetDevice& d : fleet.devices)
    out += "<th class=\"dev\">" + device_header(d) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const std::string& area : fleet.areas) {
    out += "<tr><td>" + esc(area) + "</td>";
    for (const FleetDevice& d : fleet.devices) {
      const Counts c = fleet.counts(d, area);
      out += fmt::format("<td><span class=\"badge b-{}\">&nbsp;</span> {}</td>", worst(c),
                         counts_text(c));
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";

  out += "<h2 id=\"matrix\">Every case on every device</h2>\n";
  std::vector<std::size_t> all(fleet.cases.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (!all.empty()) write_matrix(out, fleet, all, "case-matrix", true);
  write_details(out, fleet);
  out += fmt::format("<p class=\"muted\">roceconf {} fleet merge</p>\n</body>\n</html>\n",
                     esc(fleet.version));
  return out;
}

}  // namespace roceconf::report
