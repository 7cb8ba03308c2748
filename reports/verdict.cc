#include "reports/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "reports/text.h"

namespace roceconf::report {
namespace {

bool bad(Verdict v) {
  return v == Verdict::kFail || v == Verdict::kError || v == Verdict::kInconclusive;
}

// MUST unless the case says SHOULD or MAY: a case without a level cannot lower the bar.
bool is_must(std::string_view level) {
  return level != "SHOULD" && level != "MAY";
}

std::string plural(int n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::string utc_date(std::int64_t unix_ns) {
  const auto days = std::chrono::floor<std::chrono::days>(
      std::chrono::sys_time<std::chrono::nanoseconds>(std::chrono::nanoseconds(unix_ns)));
  const std::chrono::year_month_day ymd(days);
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
}

bool valid_date(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (s[i] < '0' || s[i] > '9') return false;
  const auto num = [&](std::size_t at, std::size_t n) {
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) v = v * 10 + (s[i] - '0');
    return v;
  };
  const std::chrono::year_month_day ymd{std::chrono::year(num(0, 4)),
                                        std::chrono::month(static_cast<unsigned>(num(5, 2))),
                                        std::chrono::day(static_cast<unsigned>(num(8, 2)))};
  return ymd.ok();
}

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view next_word(std::string_view& s) {
  s = trim(s);
  std::size_t end = 0;
  while (end < s.size() && s[end] != ' ' && s[end] != '\t') ++end;
  const std::string_view word = s.substr(0, end);
  s = trim(s.substr(end));
  return word;
}

}  // namespace

std::string_view headline_name(Headline h) {
  switch (h) {
    case Headline::kNotConformant:
      return "NOT CONFORMANT";
    case Headline::kIncomplete:
      return "INCOMPLETE";
    case Headline::kInsufficientCoverage:
      return "INSUFFICIENT COVERAGE";
    case Headline::kConformant:
      return "CONFORMANT";
  }
  return "INCOMPLETE";
}

std::string_view grade_name(Grade g) {
  switch (g) {
    case Grade::kPass:
      return "pass";
    case Grade::kBlocking:
      return "blocking";
    case Grade::kFinding:
      return "finding";
    case Grade::kWaived:
      return "waived";
    case Grade::kSkipped:
      return "skipped";
  }
  return "blocking";
}

std::string_view waiver_status_name(WaiverStatus s) {
  switch (s) {
    case WaiverStatus::kApplied:
      return "applied";
    case WaiverStatus::kExpired:
      return "expired";
    case WaiverStatus::kUnused:
      return "unused";
    case WaiverStatus::kNotRun:
      return "not run";
  }
  return "not run";
}

Certificate certify(const RunResult& run) {
  Certificate cert;
  cert.run = static_cast<int>(run.cases.size());
  cert.catalogue = run.catalogue.cases;
  cert.must_total = run.catalogue.must_cases;
  const std::string today = utc_date(run.start_unix_ns);

  cert.waivers.reserve(run.waivers.size());
  for (const Waiver& w : run.waivers) cert.waivers.push_back({w, WaiverStatus::kNotRun, ""});
  cert.grades.reserve(run.cases.size());
  cert.waiver_of.assign(run.cases.size(), -1);
  for (std::size_t i = 0; i < run.cases.size(); ++i) {
    const CaseResult& c = run.cases[i];
    for (std::size_t k = 0; k < cert.waivers.size(); ++k) {
      WaiverUse& use = cert.waivers[k];
      if (use.waiver.id != c.id) continue;
      use.verdict = verdict_name(c.verdict);
      if (!use.waiver.until.empty() && use.waiver.until < today) {
        use.status = WaiverStatus::kExpired;
      } else if (bad(c.verdict)) {
        use.status = WaiverStatus::kApplied;
        if (cert.waiver_of[i] < 0) cert.waiver_of[i] = static_cast<int>(k);
      } else {
        use.status = WaiverStatus::kUnused;
      }
    }
    const bool must = is_must(c.requirement);
    if (must && (c.verdict == Verdict::kPass || c.verdict == Verdict::kFail)) ++cert.must_graded;
    Grade g;
    if (c.verdict == Verdict::kSkip) {
      g = Grade::kSkipped;
      ++cert.skipped;
    } else if (c.verdict == Verdict::kPass) {
      g = Grade::kPass;
      ++cert.pass;
    } else if (cert.waiver_of[i] >= 0) {
      g = Grade::kWaived;
      ++cert.waived;
    } else if (must) {
      g = Grade::kBlocking;
      ++cert.blocking;
    } else {
      g = Grade::kFinding;
      ++(c.requirement == "MAY" ? cert.may_findings : cert.should_findings);
    }
    if (g != Grade::kSkipped && g != Grade::kWaived) ++cert.graded;
    cert.grades.push_back(g);
  }

  std::string why;
  if (run.interrupted) {
    why = fmt::format("no certificate: interrupted after {} of {} catalogue cases", cert.run,
                      cert.catalogue);
  } else if (cert.catalogue <= 0) {
    why = "no certificate: the run does not record its catalogue";
  } else if (!run.rerun_of.empty()) {
    why = fmt::format("no certificate: a rerun of {} of {} catalogue cases (from {})", cert.run,
                      cert.catalogue, run.rerun_of);
  } else if (!run.filters.empty() || !run.filter.empty()) {
    why = fmt::format("no certificate: {} of {} catalogue cases run (filtered: {})", cert.run,
                      cert.catalogue, run.filter);
  } else if (cert.run < cert.catalogue) {
    why = fmt::format("no certificate: {} of {} catalogue cases run", cert.run, cert.catalogue);
  }
  const bool insufficient = cert.must_graded * 2 < cert.must_total || cert.graded == 0;
  if (cert.blocking > 0) {
    cert.headline = Headline::kNotConformant;
  } else if (!why.empty()) {
    cert.headline = Headline::kIncomplete;
    cert.why = why;
  } else if (insufficient) {
    cert.headline = Headline::kInsufficientCoverage;
    cert.why = fmt::format("{} of {} MUST cases graded, at least {} needed", cert.must_graded,
                           cert.must_total, (cert.must_total + 1) / 2);
  } else {
    cert.headline = Headline::kConformant;
  }

  std::string detail = fmt::format("{} pass", cert.pass);
  if (cert.blocking > 0) detail += fmt::format(", {} blocking", cert.blocking);
  if (cert.should_findings > 0) detail += ", " + plural(cert.should_findings, "SHOULD finding");
  if (cert.may_findings > 0) detail += ", " + plural(cert.may_findings, "MAY finding");
  std::string coverage = fmt::format("{} of {} graded ({}), {} skipped", cert.graded,
                                     cert.catalogue, detail, cert.skipped);
  if (cert.waived > 0 || !run.waivers.empty()) coverage += fmt::format(", {} waived", cert.waived);
  if (!run.catalogue.version.empty() || !run.catalogue.digest.empty()) {
    coverage +=
        fmt::format(" — catalogue {}", run.catalogue.version.empty() ? std::string("(no version)")
                                                                     : run.catalogue.version);
    if (!run.catalogue.digest.empty())
      coverage += fmt::format(" (sha256 {})", run.catalogue.digest.substr(0, 8));
  }
  if (!run.catalogue.specification.empty()) coverage += ", " + run.catalogue.specification;
  cert.coverage = std::move(coverage);
  cert.exit_status = cert.blocking > 0 || run.interrupted ? 1 : 0;
  return cert;
}

std::string Certificate::line() const {
  std::string out(headline_name(headline));
  out += ": ";
  if (!why.empty()) out += why + "; ";
  return out + coverage;
}

std::string target_text(const RunResult& run) {
  std::string out = "target " + (run.target_kind.empty() ? std::string("?") : run.target_kind);
  if (!run.target_description.empty()) out += ": " + run.target_description;
  return one_line(out);
}

std::string device_text(const RunResult& run) {
  std::string label, name, source, rest;
  for (const auto& [key, value] : run.identity.device) {
    if (key == "label") {  // what the fleet calls the device (the pytest plugin's devices)
      label = value;
    } else if (key == "name") {
      name = value;
    } else if (key == "source") {
      source = value;
    } else {
      rest += fmt::format("{}{} {}", rest.empty() ? "" : ", ", key, value);
    }
  }
  std::string out = name.empty() ? std::string("device not identified") : name;
  if (!label.empty()) out = name.empty() ? label : label + " — " + name;
  if (!rest.empty()) out += ", " + rest;
  if (!source.empty()) out += " (" + source + ")";
  return one_line(out);
}

std::vector<std::string> verdict_rule_text() {
  return {
      "Each case has a verdict (pass, fail, skip, error, inconclusive) and a level: MUST, SHOULD "
      "or MAY (a case without a level counts as MUST).",
      "Blocking: a MUST case whose verdict is fail, error or inconclusive and that is not waived.",
      "Finding: a SHOULD or MAY case whose verdict is fail, error or inconclusive. Findings are "
      "listed in every report but do not block.",
      "Waived: a fail, error or inconclusive case with a waiver (--waivers) for its id that has "
      "not expired. Its real verdict is kept beside the waiver's reason; it does not block. An "
      "expired waiver is not applied; a waiver of a case that passed, skipped or did not run is "
      "reported as unused.",
      "Graded: the cases that ran and were neither skipped nor waived. A MUST case counts as "
      "graded for coverage when its verdict is pass or fail.",
      "The headline is the first that matches: NOT CONFORMANT when any case is blocking; "
      "INCOMPLETE (no certificate) when the run was interrupted, filtered (--filter), a rerun "
      "(--rerun-failed), or did not run the whole catalogue; INSUFFICIENT COVERAGE when fewer "
      "than half of the catalogue's MUST cases were graded; CONFORMANT otherwise.",
      "Exit status of roceconf run: 0 when nothing is blocking and the run was not interrupted "
      "(a filtered run that passes exits 0 with the headline INCOMPLETE), 1 when a case is "
      "blocking or the run was interrupted, 2 for usage and set-up errors.",
  };
}

std::expected<std::vector<Waiver>, std::string> parse_waivers(
    std::string_view text, std::string_view file_name,
    const std::function<bool(std::string_view)>& is_case) {
  std::vector<Waiver> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    const std::string where = fmt::format("{}:{}", file_name, line_no);
    const auto error = [&](const std::string& what) {
      return std::unexpected(fmt::format("{}: {}", where, one_line(what)));
    };
    Waiver w;
    w.where = where;
    w.id = std::string(next_word(line));
    if (!is_case(w.id))
      return error(fmt::format("unknown case id '{}' (see 'roceconf run --list')", w.id));
    for (const Waiver& other : out)
      if (other.id == w.id)
        return error(fmt::format("case '{}' is waived twice (also at {}): keep one line", w.id,
                                 other.where));
    std::string_view rest = line;
    if (rest.starts_with("until=")) {
      const std::string_view date = next_word(rest).substr(6);
      if (!valid_date(date))
        return error(fmt::format("bad date '{}' (write until=YYYY-MM-DD)", date));
      w.until = std::string(date);
    }
    if (rest.empty())
      return error(fmt::format("the waiver of '{}' has no reason (write why after the id)", w.id));
    w.reason = std::string(rest);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace roceconf::report
