// Over 600 lines: the whole self-contained page (style, script, every section) is written here.
#include "reports/html_writer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <span>

#include "reports/statements.h"
#include "reports/text.h"
#include "reports/verdict.h"

namespace roceconf::report {
namespace {

std::string esc(std::string_view text) {
  return xml_escape(text);
}

constexpr std::string_view kStyle = R"css(
:root{--pass:#1a7f37;--fail:#cf222e;--skip:#6e7781;--error:#9a6700;--inconclusive:#8250df;
--line:#d0d7de;--muted:#57606a;--code:#f6f8fa;--sent:#0969da;--recv:#8250df;--life:#8c959f}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;
max-width:1100px;margin:0 auto;padding:12px}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:20px 0 6px;
border-bottom:1px solid var(--line)}
a{color:#0969da}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0}
dl.kv dt{color:var(--muted)}dl.kv dd{margin:0;overflow-wrap:anywhere}
.verdict{display:inline-block;padding:3px 10px;border-radius:4px;font-weight:700;color:#fff;
letter-spacing:.03em}
.badge{display:inline-block;min-width:3.4em;text-align:center;padding:0 6px;border-radius:3px;
font-size:11px;font-weight:700;color:#fff;vertical-align:1px;white-space:nowrap}
.short{display:none}
.b-pass{background:var(--pass)}.b-fail{background:var(--fail)}.b-skip{background:var(--skip)}
.b-error{background:var(--error)}.b-inconclusive{background:var(--inconclusive)}
.b-incomplete{background:var(--error)}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:6px 0}
th,td{border:1px solid var(--line);padding:2px 8px;text-align:left;vertical-align:top}
th{background:var(--code)}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td.z{color:#afb8c1}
.headline{border:1px solid var(--line);border-radius:6px;padding:8px 12px;margin:6px 0 10px}
.headline p{margin:4px 0}.coverage{font-weight:600}.muted{color:var(--muted)}
.waiver{color:#9a6700}.rule p{margin:4px 0}
.grade{font-weight:600}.g-blocking{color:var(--fail)}.g-finding,.g-waived{color:var(--error)}
.warn{background:#fff8c5;border:1px solid #d4a72c;padding:6px 10px;border-radius:4px}
#toolbar{margin:8px 0;display:flex;gap:6px;flex-wrap:wrap}
#toolbar button{font:inherit;padding:2px 10px;border:1px solid var(--line);border-radius:4px;
background:var(--code);cursor:pointer}
ul.bad{margin:4px 0;padding-left:20px}ul.bad li{overflow-wrap:anywhere}
section.case{border:1px solid var(--line);border-left:4px solid var(--skip);border-radius:4px;
margin:6px 0}
section.c-pass{border-left-color:var(--pass)}section.c-fail{border-left-color:var(--fail)}
section.c-error{border-left-color:var(--error)}
section.c-inconclusive{border-left-color:var(--inconclusive)}
section.case>details>summary{cursor:pointer;padding:5px 10px;overflow-wrap:anywhere}
section.case .title{color:var(--muted)}
.body{padding:0 12px 10px}
.desc{white-space:pre-line;margin:4px 0}
.reason{margin:4px 0}
table.diff td.actual{color:var(--fail);font-weight:600}
table.security tr.finding td{color:var(--fail)}
table.trace td.unchecked{font-style:italic;color:var(--inconclusive)}.release{color:var(--muted)}
pre{background:var(--code);padding:6px 8px;border-radius:4px;overflow-x:auto;margin:4px 0}
.ladder{margin-top:8px}
.ladder .lanes,.ladder li{display:grid;grid-template-columns:6.5em minmax(0,1fr)}
.ladder .lanes b{display:flex;justify-content:space-between;font-size:12px;color:var(--muted);
padding:0 2px}
.ladder ol{list-style:none;margin:0;padding:0}
.ladder .t{color:var(--muted);text-align:right;padding:1px 8px 0 0;white-space:nowrap;
font-size:12px;font-variant-numeric:tabular-nums}
.ladder .m{border-left:2px solid var(--life);border-right:2px solid var(--life);padding:2px 0;
min-width:0}
.ladder .arrow{position:relative;margin:0 1px;padding:0 12px 1px;border-bottom:2px solid var(--c);
overflow-wrap:anywhere}
.ladder .sent{--c:var(--sent)}.ladder .recv{--c:var(--recv)}
.ladder .recv .arrow{text-align:right}
.ladder .arrow::after{content:"";position:absolute;bottom:-6px;border:5px solid transparent}
.ladder .sent .arrow::after{right:-1px;border-right:0;border-left:9px solid var(--c)}
.ladder .recv .arrow::after{left:-1px;border-left:0;border-right:9px solid var(--c)}
.ladder .box{width:fit-content;max-width:90%;margin:0 6px;padding:0 6px;border-radius:3px;
overflow-wrap:anywhere}
.ladder .ctl .box{margin-left:auto;border:1px dashed var(--life);background:#fff8c5}
.ladder .met .box{color:var(--pass)}.ladder .quiet .box{color:var(--pass);font-style:italic}
.ladder .failed .box{color:var(--fail);font-weight:600;border:1px solid var(--fail);
background:#ffebe9}
.ladder .note .box{color:var(--muted);font-style:italic}
.ladder .ctr .box{margin-left:auto;border:1px solid #8250df;background:#fbefff;
font-variant-numeric:tabular-nums}
.ladder .klog .box{margin-left:auto;border-left:3px solid #bc4c00;background:#fff1e5;
font-family:ui-monospace,monospace;font-size:12px}
.ladder .legend{display:flex;flex-wrap:wrap;gap:4px 12px;font-size:11px;color:var(--muted);
margin:0 0 4px 6.5em}
.ladder .legend span::before{content:"";display:inline-block;width:10px;height:10px;
margin-right:4px;vertical-align:-1px;border-radius:2px}
.ladder .legend .lg-pkt::before{background:var(--sent)}
.ladder .legend .lg-ctl::before{border:1px dashed var(--life);background:#fff8c5}
.ladder .legend .lg-ctr::before{border:1px solid #8250df;background:#fbefff}
.ladder .legend .lg-klog::before{border-left:3px solid #bc4c00;background:#fff1e5}
.ladder .legend .lg-clock::before{display:none}
.ladder .gap .box{margin:4px auto;color:var(--muted)}
.ladder .step{display:block;font-size:11px;color:var(--muted);padding:0 12px}
.ladder .box .step{padding:0}
.ladder .recv .step{text-align:right}
.tag{display:inline-block;font-size:11px;padding:0 4px;margin-left:4px;border-radius:3px;
background:#ddf4ff;color:#0550ae}
.ladder details.hex{margin:0 14px}
.ladder details.hex summary{font-size:11px;color:var(--muted);cursor:pointer}
.ladder details.hex pre{font-size:11.5px}
.ladder .recv details.hex summary{text-align:right}
@media (max-width:640px){body{padding:6px;font-size:13px}.long{display:none}.short{display:inline}
.ladder .lanes,.ladder li{grid-template-columns:4.8em minmax(0,1fr)}
.ladder .t{padding-right:4px;font-size:11px}.body{padding:0 6px 8px}th,td{padding:2px 4px}}
@media print{#toolbar{display:none}section.case{break-inside:avoid-page}}
)css";

// Expand/collapse all, show only what did not pass, open a case linked by #anchor, open all for
// printing. data-js="ready" marks that the script ran.
constexpr std::string_view kScript = R"js(
(function () {
  var d = document, bar = d.getElementById('toolbar');
  var cases = d.querySelectorAll('section.case');
  function each(f) { for (var i = 0; i < cases.length; i++) f(cases[i]); }
  function setOpen(s, open) { s.querySelector('details').open = open; }
  function button(label, f) {
    var b = d.createElement('button');
    b.type = 'button'; b.textContent = label; b.addEventListener('click', f);
    bar.appendChild(b); return b;
  }
  button('Expand all', function () { each(function (s) { setOpen(s, true); }); });
  button('Collapse all', function () { each(function (s) { setOpen(s, false); }); });
  var only = false;
  var filter = button('Only not passing', function () {
    only = !only;
    filter.textContent = only ? 'Show all cases' : 'Only not passing';
    each(function (s) { s.hidden = only && s.classList.contains('ok'); });
  });
  function openHash() {
    var s = location.hash && d.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (s && s.classList.contains('case')) setOpen(s, true);
  }
  addEventListener('hashchange', openHash);
  addEventListener('beforeprint', function () { each(function (s) { setOpen(s, true); }); });
  openHash();
  bar.hidden = false;
  d.documentElement.setAttribute('data-js', 'ready');
})();
)js";

std::string micros(std::int64_t ns) {
  const double us = static_cast<double>(ns) / 1e3;
  return us < 1000 && us > -1000 ? fmt::format("{:.1f} µs", us) : fmt::format("{:.0f} µs", us);
}

std::string human_duration(std::int64_t ns) {
  const double s = static_cast<double>(ns) / 1e9;
  if (ns < 1'000'000) return micros(ns);
  if (ns < 1'000'000'000) return fmt::format("{:.1f} ms", s * 1e3);
  if (s < 120) return fmt::format("{:.2f} s", s);
  return fmt::format("{}m {:02}s", static_cast<long>(s) / 60, static_cast<long>(s) % 60);
}

std::string badge(Verdict v) {
  return fmt::format("<span class=\"badge b-{}\">{}</span>", verdict_name(v), verdict_label(v));
}

std::string hex_dump(std::span<const std::uint8_t> frame) {
  std::string out;
  for (std::size_t at = 0; at < frame.size(); at += 16) {
    out += fmt::format("{:04x} ", at);
    for (std::size_t i = at; i < std::min(at + 16, frame.size()); ++i)
      out += fmt::format("{}{:02x}", i == at + 8 ? "  " : " ", frame[i]);
    out += '\n';
  }
  return out;
}

std::string tags(const Event& e) {
  std::string out;
  for (const std::string& flag : e.analysis) out += "<span class=\"tag\">" + esc(flag) + "</span>";
  return out;
}

void write_event(std::string& out, const Event& e, const CaseResult& c, bool show_step) {
  const std::string step =
      show_step && !e.step.empty() ? "<span class=\"step\">" + esc(e.step) + "</span>" : "";
  std::string_view cls;
  std::string body;
  switch (e.kind) {
    case EventKind::kSent:
    case EventKind::kReceived: {
      const bool sent = e.kind == EventKind::kSent;
      cls = sent ? "sent" : "recv";
      body = fmt::format("<div class=\"arrow\">{}{}</div>{}", esc(e.text), tags(e), step);
      if (!e.frame.empty())
        body += fmt::format(
            "<details class=\"hex\"><summary>frame, {} bytes</summary><pre>{}</pre></details>",
            e.frame.size(), hex_dump(e.frame));
      break;
    }
    case EventKind::kControl:
      cls = "ctl";
      body = fmt::format("<div class=\"box\">⚙ {}{}{}</div>", esc(e.text), tags(e), step);
      break;
    case EventKind::kExpectMet:
      cls = "met";
      body = fmt::format("<div class=\"box\">✓ {}{}{}</div>", esc(e.text), tags(e), step);
      break;
    case EventKind::kExpectFailed:
      cls = "failed";
      body = fmt::format("<div class=\"box\">✗ {}{}{}</div>", esc(e.text), tags(e), step);
      break;
    case EventKind::kSilenceOk:
      cls = "quiet";
      body = fmt::format("<div class=\"box\">… {}{}{}</div>", esc(e.text), tags(e), step);
      break;
    case EventKind::kNote:
      cls = "note";
      body = fmt::format("<div class=\"box\">{}{}{}</div>", esc(e.text), tags(e), step);
      break;
    case EventKind::kCounter:
      cls = "ctr";
      body = fmt::format("<div class=\"box\">Σ {}{}{}</div>", esc(e.text), tags(e), step);
      break;
    case EventKind::kKernelLog:
      cls = "klog";
      body = fmt::format("<div class=\"box\">⌁ {}{}{}</div>", esc(e.text), tags(e), step);
      break;
  }
  out += fmt::format(
      "<li class=\"ev {}\" data-kind=\"{}\"><span class=\"t\">+{}</span><div "
      "class=\"m\">{}</div></li>\n",
      cls, event_kind_name(e.kind), micros(e.unix_ns - c.start_unix_ns), body);
}

void write_ladder(std::string& out, const CaseResult& c, std::size_t cap) {
  const std::vector<const Event*> events = events_in_time_order(c);
  if (events.empty()) return;
  cap = std::max<std::size_t>(cap, 2);
  const std::size_t head = events.size() > cap ? cap / 2 : events.size();
  const std::size_t tail_from = events.size() > cap ? events.size() - (cap - head) : events.size();
  out +=
      "<div class=\"ladder\"><div class=\"legend\"><span class=\"lg-pkt\">packets</span>"
      "<span class=\"lg-ctl\">control API</span><span class=\"lg-ctr\">counter changes</span>"
      "<span class=\"lg-klog\">device kernel log</span><span class=\"lg-clock\">one clock: the "
      "tester's</span></div><div class=\"lanes\"><span></span><b><span>tester</span>"
      "<span>target</span></b></div>\n<ol>\n";
  const std::string* last_step = nullptr;
  const auto emit = [&](const Event& e) {
    const bool show_step = last_step == nullptr || *last_step != e.step;
    last_step = &e.step;
    write_event(out, e, c, show_step);
  };
  for (std::size_t i = 0; i < head; ++i) emit(*events[i]);
  if (tail_from > head) {
    out += fmt::format(
        "<li class=\"ev gap\"><span class=\"t\"></span><div class=\"m\"><div class=\"box\">… {} "
        "events left out here (the JSON report and the pcapng evidence have all {}) …</div></div>"
        "</li>\n",
        tail_from - head, events.size());
    last_step = nullptr;
  }
  for (std::size_t i = tail_from; i < events.size(); ++i) emit(*events[i]);
  out += "</ol></div>\n";
}

std::string area_anchor(std::string_view area) {
  std::string anchor = case_anchor(area);
  return "area-" + anchor.substr(5);
}

bool passing(Verdict v) {
  return v == Verdict::kPass || v == Verdict::kSkip;
}

void write_case(std::string& out, const CaseResult& c, const HtmlOptions& options, Grade grade,
                const Waiver* waiver) {
  out += fmt::format(
      "<section class=\"case c-{}{}\" id=\"{}\"><details{}><summary>{} <code>{}</code> <span "
      "class=\"title\">{}</span></summary>\n<div class=\"body\">\n",
      verdict_name(c.verdict), passing(c.verdict) ? " ok" : "", esc(case_anchor(c.id)),
      passing(c.verdict) ? "" : " open", badge(c.verdict), esc(c.id), esc(c.title));
  out += "<dl class=\"kv\">";
  const auto row = [&](std::string_view name, const std::string& html) {
    out += fmt::format("<dt>{}</dt><dd>{}</dd>", name, html);
  };
  row("Case", "<code>" + esc(c.id) + "</code>");
  if (!c.title.empty()) row("Title", esc(c.title));
  if (!c.citation.empty()) {
    row("Citation",
        "<code>" + esc(c.citation) + "</code>" +
            (c.release.empty() ? "" : " <span class=\"release\">" + esc(c.release) + "</span>"));
    if (!c.rule.empty()) row("Rule", esc(c.rule));
    if (!c.checked.empty()) row("Checked", esc(c.checked));
  } else if (!c.clause.empty()) {
    row("Clause", esc(c.clause));
  }
  if (!c.requirement.empty()) row("Requirement", esc(c.requirement));
  if (!c.needs.empty()) row("Needs", esc(fmt::format("{}", fmt::join(c.needs, ", "))));
  if (!c.source.empty()) row("Source", "<code>" + esc(c.source) + "</code>");
  row("Verdict", badge(c.verdict));
  row("Grade", fmt::format("<span class=\"grade g-{0}\">{0}</span>", grade_name(grade)));
  if (waiver != nullptr)
    row("Waiver",
        fmt::format("<span class=\"waiver\">{}</span> <span class=\"muted\">({}{})</span>",
                    esc(waiver->reason), esc(waiver->where),
                    waiver->until.empty() ? "" : ", until " + esc(waiver->until)));
  row("Duration", human_duration(c.duration_ns));
  if (!c.reason.empty()) row("Reason", "<span class=\"reason\">" + esc(c.reason) + "</span>");
  if (!c.failed_step.empty())
    row("Failed step", "<code class=\"failed-step\">" + esc(c.failed_step) + "</code>");
  out += "</dl>\n";
  if (!c.description.empty()) out += "<p class=\"desc\">" + esc(c.description) + "</p>\n";
  if (!c.diffs.empty()) {
    out +=
        "<div class=\"scroll\"><table class=\"diff\"><thead><tr><th>field</th><th>expected</th>"
        "<th>actual</th></tr></thead><tbody>\n";
    for (const FieldDiff& d : c.diffs)
      out += fmt::format(
          "<tr><td><code>{}</code></td><td class=\"expected\">{}</td><td "
          "class=\"actual\">{}</td></tr>\n",
          esc(d.field), esc(d.expected), esc(d.actual));
    out += "</tbody></table></div>\n<pre class=\"difftext\">";
    for (const FieldDiff& d : c.diffs) out += esc(diff_text(d)) + "\n";
    out += "</pre>\n";
  }
  write_ladder(out, c, options.max_events_per_case);
  out += "</div></details></section>\n";
}

// Appendix: the traceability of every case of the run (citation, release, level, rule, where
// the citation was checked), so the report stands alone as a certificate's annex.
void write_traceability_appendix(std::string& out, const RunResult& run) {
  out +=
      "<h2 id=\"traceability\">Appendix: traceability</h2>\n<p>Each case's citation (clause "
      "numbers and statement IDs of the release named), the rule it checks, and the public "
      "source its citation was checked against. <em>unchecked</em>: no public source confirmed "
      "the number.</p>\n<div class=\"scroll\"><table class=\"trace\"><thead><tr><th>Case</th>"
      "<th>Citation</th><th>Release</th><th>Level</th><th>Rule</th><th>Checked</th><th>Verdict"
      "</th></tr></thead>\n<tbody>\n";
  for (const CaseResult& c : run.cases) {
    const bool unchecked = c.checked.empty() || c.checked.find("unchecked") != std::string::npos;
    out += fmt::format(
        "<tr><td><a href=\"#{}\"><code>{}</code></a></td><td><code>{}</code></td><td>{}</td>"
        "<td>{}</td><td>{}</td><td{}>{}</td><td>{}</td></tr>\n",
        esc(case_anchor(c.id)), esc(c.id), esc(c.citation.empty() ? c.clause : c.citation),
        esc(c.release), esc(c.requirement), esc(c.rule), unchecked ? " class=\"unchecked\"" : "",
        esc(c.checked.empty() ? "unchecked" : c.checked), badge(c.verdict));
  }
  out += "</tbody></table></div>\n";
}

// Appendix: the public compliance statements (reports/statements.h) and which cases of this run
// cover each, with their verdicts; the rest listed with why, never hidden.
void write_coverage_appendix(std::string& out, const RunResult& run) {
  const Coverage cov = coverage(run.cases);
  out += fmt::format(
      "<h2 id=\"statements\">Appendix: compliance statements</h2>\n<p>The public IBA and "
      "Annex A17 compliance statements and CTS tests that apply to RoCEv2: {} of {} are cited by "
      "a case of this run; {} more do not apply to RoCEv2. A statement counts as covered when a "
      "case's citation names it.</p>\n<div class=\"scroll\"><table class=\"trace\"><thead><tr>"
      "<th>Statement</th><th>Meaning</th><th>Cases (verdict)</th><th>Status</th></tr></thead>\n"
      "<tbody>\n",
      cov.covered, cov.applicable, cov.not_applicable);
  for (const CoverageRow& row : cov.rows) {
    const Statement& s = *row.statement;
    std::string cases;
    for (const CaseResult* c : row.cases)
      cases += fmt::format("{}<a href=\"#{}\"><code>{}</code></a> {}", cases.empty() ? "" : "<br>",
                           esc(case_anchor(c->id)), esc(c->id), badge(c->verdict));
    std::string status;
    if (s.kind == Statement::Kind::kNotApplicable)
      status = "not applicable to RoCEv2: " + std::string(s.note);
    else if (s.kind == Statement::Kind::kExtra)
      status = "cited, not a public item: " + std::string(s.note);
    else if (row.cases.empty())
      status = "not covered: " + std::string(s.note.empty() ? "no case yet" : s.note);
    else
      status = "covered";
    out += fmt::format(
        "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td{}>{}</td></tr>\n", esc(s.id),
        esc(s.meaning), cases.empty() ? "—" : cases,
        s.kind == Statement::Kind::kApplies && row.cases.empty() ? " class=\"unchecked\"" : "",
        esc(status));
  }
  out += "</tbody></table></div>\n";
}

std::string count_cell(int n) {
  return fmt::format("<td class=\"n{}\">{}</td>", n == 0 ? " z" : "", n);
}

std::string counts_cells(const Counts& c) {
  return count_cell(c.pass) + count_cell(c.fail) + count_cell(c.skip) + count_cell(c.error) +
         count_cell(c.inconclusive) + fmt::format("<td class=\"n\">{}</td>", c.total());
}

std::string_view verdict_class(std::string_view verdict) {
  if (verdict == "CONFORMANT") return "b-pass";
  if (verdict == "INCOMPLETE" || verdict == "INSUFFICIENT COVERAGE" || verdict == "FINDINGS")
    return "b-incomplete";
  if (verdict == "NOT TESTED") return "b-skip";
  return "b-fail";
}

// In the summary table; a phone shows a symbol instead of the words.
std::string verdict_badge(std::string_view verdict) {
  const std::string_view symbol = verdict == "CONFORMANT"       ? "✓"
                                  : verdict == "NOT CONFORMANT" ? "✗"
                                  : verdict == "NOT TESTED"     ? "–"
                                                                : "…";
  return fmt::format(
      "<span class=\"badge {}\" title=\"{}\"><span class=\"long\">{}</span><span "
      "class=\"short\">{}</span></span>",
      verdict_class(verdict), verdict, verdict, symbol);
}

}  // namespace

std::string case_anchor(std::string_view id) {
  std::string out = "case-";
  for (const char c : id)
    out += c == '/' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ? '-' : c;
  return out;
}

// The figures of the measuring cases (area sec), one table: a finding is marked, the threshold
// beside it.
void write_security_section(std::string& out, const RunResult& run) {
  bool first = true;
  for (const CaseResult& c : run.cases) {
    if (c.area != "sec" || c.measurements.empty()) continue;
    if (first)
      out +=
          "<h2 id=\"security\">Security measurements</h2>\n<p>How predictable the target's QP "
          "numbers, starting PSNs and R_Keys are, and what one forged packet does (thresholds "
          "from ReDMArk, USENIX Security 2021).</p>\n<div class=\"scroll\"><table "
          "class=\"security\"><thead><tr><th>Case</th><th>Measured</th><th>Value</th>"
          "<th>Threshold</th><th>Finding</th></tr></thead><tbody>\n";
    first = false;
    for (const Measurement& m : c.measurements)
      out += fmt::format(
          "<tr{}><td><a href=\"#{}\"><code>{}</code></a> {}</td><td>{}</td><td>{}</td><td>{}</td>"
          "<td>{}</td></tr>\n",
          m.finding ? " class=\"finding\"" : "", esc(case_anchor(c.id)), esc(c.id),
          badge(c.verdict), esc(m.name), esc(m.value), esc(m.threshold), m.finding ? "yes" : "no");
  }
  if (!first) out += "</tbody></table></div>\n";
}

std::string_view overall_verdict(const RunResult& run) {
  return headline_name(certify(run).headline);
}

std::string to_html(const RunResult& run, const HtmlOptions& options) {
  const Counts all = run.counts();
  const Certificate cert = certify(run);
  const std::string_view verdict = headline_name(cert.headline);
  const std::string target =
      run.target_kind.empty()
          ? run.target_description
          : run.target_kind + (run.target_description.empty() ? "" : ": " + run.target_description);
  const std::string device = device_text(run);
  std::string out;
  out.reserve(64 * 1024);
  out += fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'; script-src 'unsafe-inline'\">\n"
      "<title>{} RoCE conformance: {} — {}</title>\n<style>{}</style>\n</head>\n<body>\n",
      esc(run.tool), verdict, esc(device), kStyle);

  // The headline box: the certificate, its coverage, what it certifies.
  out += fmt::format(
      "<header>\n<h1>RoCE conformance report</h1>\n<div class=\"headline\" id=\"headline\">"
      "<p class=\"verdict {}\">{}</p>\n<p class=\"coverage\">{}{}</p>\n"
      "<p class=\"device\">Device: <b>{}</b></p>\n<p class=\"target\">Target: {}</p>\n"
      "<p class=\"rule-link\"><a href=\"#verdict-rule\">How the verdict is decided</a></p>"
      "</div>\n",
      verdict_class(verdict), verdict, cert.why.empty() ? "" : esc(cert.why) + "; ",
      esc(cert.coverage), esc(device), esc(target));
  for (const std::string& note : run.notes)
    out += fmt::format("<p class=\"run-note\">Note: {}</p>\n", esc(note));
  out += "<dl class=\"kv\" id=\"identity\">";
  const auto row = [&](std::string_view name, const std::string& html) {
    out += fmt::format("<dt>{}</dt><dd>{}</dd>", name, html);
  };
  const auto pairs = [&](const std::vector<std::pair<std::string, std::string>>& kv) {
    std::string html;
    for (const auto& [key, value] : kv)
      html += fmt::format("{}<span class=\"muted\">{}</span> {}", html.empty() ? "" : " · ",
                          esc(key), esc(value));
    return html.empty() ? std::string("not recorded") : html;
  };
  const auto code = [&](const std::string& text) { return "<code>" + esc(text) + "</code>"; };
  row("Device", pairs(run.identity.device));
  row("Target", esc(target));
  row("Quirks", run.quirks.empty()
                    ? std::string("none")
                    : "<code>" + esc(fmt::format("{}", fmt::join(run.quirks, ", "))) + "</code>");
  row("Tester host", pairs(run.identity.host));
  row("Tool", esc(run.tool + (run.version.empty() ? "" : " " + run.version)));
  row("Catalogue",
      esc(run.catalogue.version.empty() ? "not recorded" : run.catalogue.version) +
          (run.catalogue.digest.empty() ? "" : ", sha256 " + code(run.catalogue.digest)) +
          fmt::format(", {} cases ({} MUST)", run.catalogue.cases, run.catalogue.must_cases) +
          (run.catalogue.specification.empty() ? "" : ", " + esc(run.catalogue.specification)));
  if (!run.identity.command_line.empty()) row("Command line", code(run.identity.command_line));
  row("Seed", fmt::format("{}", run.identity.seed));
  if (!run.identity.profile_path.empty())
    row("Profile",
        code(run.identity.profile_path) + ", sha256 " + code(run.identity.profile_sha256));
  if (!run.identity.preflight.empty()) {
    std::string checks;
    for (const auto& [name, result] : run.identity.preflight)
      checks += (checks.empty() ? "" : "; ") + name + " " + result;
    row("Preflight", esc(checks));
  }
  row("Started", esc(iso8601_utc(run.start_unix_ns, false)));
  row("Duration", human_duration(run.duration_ns));
  row("Round trip", micros(run.rtt_ns));
  row("Silence window", human_duration(run.silence_ns));
  if (!run.filters.empty() || !run.filter.empty())
    row("Filter", "<code>" + esc(run.filter) + "</code>");
  if (!run.rerun_of.empty()) row("Rerun of", code(run.rerun_of));
  if (!run.identity.evidence_path.empty())
    row("Evidence", code(run.identity.evidence_path) + ", sha256 <code class=\"evidence-sha256\">" +
                        esc(run.identity.evidence_sha256) + "</code> (check: <code>sha256sum " +
                        esc(std::filesystem::path(run.identity.evidence_path).filename().string()) +
                        "</code>)");
  out += "</dl>\n";
  if (run.interrupted)
    out += fmt::format(
        "<p class=\"warn\">The run was interrupted: this report holds the {} cases that "
        "completed.</p>\n",
        all.total());
  out += "</header>\n";

  // Summary by area.
  out +=
      "<h2>Summary</h2>\n<div class=\"scroll\"><table class=\"summary\" id=\"summary\"><thead>"
      "<tr><th>Area</th><th class=\"n\">Pass</th><th class=\"n\">Fail</th><th "
      "class=\"n\">Skip</th><th class=\"n\">Error</th><th class=\"n\"><span "
      "class=\"long\">Inconclusive</span><span class=\"short\">Inc.</span></th><th "
      "class=\"n\">Total</th><th>Verdict</th></tr></thead>\n<tbody>\n";
  const std::vector<std::string> areas = run.areas();
  for (const std::string& area : areas) {
    const Counts c = run.counts(area);
    int blocking = 0, findings = 0, graded = 0;
    for (std::size_t i = 0; i < run.cases.size(); ++i) {
      if (run.cases[i].area != area) continue;
      blocking += cert.grades[i] == Grade::kBlocking;
      findings += cert.grades[i] == Grade::kFinding;
      graded += cert.grades[i] != Grade::kSkipped && cert.grades[i] != Grade::kWaived;
    }
    const std::string_view word = blocking > 0   ? "NOT CONFORMANT"
                                  : findings > 0 ? "FINDINGS"
                                  : graded == 0  ? "NOT TESTED"
                                                 : "CONFORMANT";
    out += fmt::format("<tr><td><a href=\"#{}\">{}</a></td>{}<td>{}</td></tr>\n",
                       esc(area_anchor(area)), esc(area), counts_cells(c), verdict_badge(word));
  }
  out += fmt::format("</tbody><tfoot><tr><th>All</th>{}<td>{}</td></tr></tfoot></table></div>\n",
                     counts_cells(all), verdict_badge(verdict));

  // What needs attention, linked: blocking first, then findings, then waived cases.
  const auto list = [&](std::string_view heading, std::string_view id, Grade grade) {
    bool first = true;
    for (std::size_t i = 0; i < run.cases.size(); ++i) {
      if (cert.grades[i] != grade) continue;
      const CaseResult& c = run.cases[i];
      if (first) out += fmt::format("<h2 id=\"{}\">{}</h2>\n<ul class=\"bad\">\n", id, heading);
      first = false;
      out += fmt::format("<li>{} <a href=\"#{}\"><code>{}</code></a> {}{}", badge(c.verdict),
                         esc(case_anchor(c.id)), esc(c.id),
                         grade == Grade::kFinding ? "(" + esc(c.requirement) + ") " : "",
                         esc(c.reason));
      if (grade == Grade::kWaived) {
        const Waiver& w = cert.waivers[static_cast<std::size_t>(cert.waiver_of[i])].waiver;
        out += fmt::format(" <br><span class=\"waiver\">Waived: {}</span>", esc(w.reason));
      }
      out += "</li>\n";
    }
    if (!first) out += "</ul>\n";
  };
  list("Blocking", "blocking", Grade::kBlocking);
  list("Findings (SHOULD or MAY: reported, not blocking)", "findings", Grade::kFinding);
  list("Waived", "waived", Grade::kWaived);

  // Every waiver, applied or not: none is applied silently.
  if (!cert.waivers.empty()) {
    out +=
        "<h2 id=\"waivers\">Waivers</h2>\n<div class=\"scroll\"><table class=\"waivers\"><thead>"
        "<tr><th>Case</th><th>Status</th><th>Verdict</th><th>Until</th><th>Reason</th>"
        "<th>Where</th></tr></thead><tbody>\n";
    for (const WaiverUse& u : cert.waivers)
      out += fmt::format(
          "<tr class=\"w-{}\"><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td>"
          "<td class=\"waiver\">{}</td><td><code>{}</code></td></tr>\n",
          u.status == WaiverStatus::kApplied ? "applied" : "other", esc(u.waiver.id),
          waiver_status_name(u.status), u.verdict.empty() ? "not run" : esc(u.verdict),
          u.waiver.until.empty() ? "—" : esc(u.waiver.until), esc(u.waiver.reason),
          esc(u.waiver.where));
    out += "</tbody></table></div>\n";
  }

  write_security_section(out, run);

  out += "<h2 id=\"verdict-rule\">How the verdict is decided</h2>\n<div class=\"rule\">\n";
  for (const std::string& paragraph : verdict_rule_text()) out += "<p>" + esc(paragraph) + "</p>\n";
  out += "</div>\n";

  out += "<div id=\"toolbar\" hidden></div>\n";
  for (const std::string& area : areas) {
    out += fmt::format("<h2 id=\"{}\">{}</h2>\n", esc(area_anchor(area)), esc(area));
    for (std::size_t i = 0; i < run.cases.size(); ++i)
      if (run.cases[i].area == area) {
        const int w = cert.waiver_of[i];
        write_case(out, run.cases[i], options, cert.grades[i],
                   w < 0 ? nullptr : &cert.waivers[static_cast<std::size_t>(w)].waiver);
      }
  }
  write_traceability_appendix(out, run);
  write_coverage_appendix(out, run);
  out += fmt::format("<script>{}</script>\n</body>\n</html>\n", kScript);
  return out;
}

}  // namespace roceconf::report
