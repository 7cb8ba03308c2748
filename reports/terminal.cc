#include "reports/terminal.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

#include "reports/text.h"
#include "reports/verdict.h"

namespace roceconf::report {
namespace {

constexpr std::size_t kMaxDiffsInSummary = 3;

std::string_view color_of(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "\x1b[32m";
    case Verdict::kFail:
      return "\x1b[1;31m";
    case Verdict::kSkip:
      return "\x1b[2m";
    case Verdict::kError:
      return "\x1b[1;33m";
    case Verdict::kInconclusive:
      return "\x1b[1;35m";
  }
  return "";
}

std::string label(Verdict v, bool color) {
  const std::string_view word = verdict_label(v);
  return color ? fmt::format("{}{}\x1b[0m", color_of(v), word) : std::string(word);
}

int terminal_columns(std::FILE* stream) {
  winsize size{};
  if (ioctl(fileno(stream), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

// Cuts at a UTF-8 boundary so a narrow terminal never wraps the bar (wrapping breaks \r).
std::string fit(std::string line, std::size_t columns) {
  std::size_t cells = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
    if (++cells > columns) {
      line.resize(i);
      break;
    }
  }
  return line;
}

}  // namespace

std::string progress_bar(int done, int total, std::string_view id, int bar_width) {
  bar_width = std::max(bar_width, 1);
  const int clamped = std::clamp(done, 0, std::max(total, 0));
  const int filled = total > 0 ? clamped * bar_width / total : 0;
  std::string bar(static_cast<std::size_t>(filled), '=');
  if (filled < bar_width && clamped > 0) bar += '>';
  bar.resize(static_cast<std::size_t>(bar_width), ' ');
  std::string line = fmt::format("[{}] {}/{}", bar, done, total);
  if (!id.empty()) line += " " + one_line(id);
  return line;
}

std::string case_line(const CaseResult& result, int index, int total, bool color) {
  const int digits = static_cast<int>(fmt::format("{}", total).size());
  std::string line = fmt::format("[{:>{}}/{}] {} {}", index, digits, total,
                                 label(result.verdict, color), one_line(result.id));
  if (!result.reason.empty()) line += ": " + one_line(result.reason);
  return line;
}

std::string summary_text(const RunResult& run, bool color) {
  const std::vector<std::string> areas = run.areas();
  std::size_t width = 4;  // "area"
  for (const std::string& area : areas) width = std::max(width, one_line(area).size());
  const auto row = [&](std::string_view name, const Counts& c) {
    return fmt::format("{:<{}} {:>5} {:>5} {:>5} {:>5} {:>6} {:>6}\n", name, width, c.pass, c.fail,
                       c.skip, c.error, c.inconclusive, c.total());
  };
  std::string out = fmt::format("{:<{}} {:>5} {:>5} {:>5} {:>5} {:>6} {:>6}\n", "area", width,
                                "pass", "fail", "skip", "error", "inconc", "total");
  for (const std::string& area : areas) out += row(one_line(area), run.counts(area));
  out += row("all", run.counts());
  for (const std::string& note : run.notes) out += "\nNote: " + one_line(note) + "\n";

  const Certificate cert = certify(run);
  const auto list = [&](std::string_view heading, Grade grade) {
    bool first = true;
    for (std::size_t i = 0; i < run.cases.size(); ++i) {
      const CaseResult& c = run.cases[i];
      if (cert.grades[i] != grade) continue;
      if (first) out += fmt::format("\n{}:\n", heading);
      first = false;
      out += fmt::format("  {} {}", label(c.verdict, color), one_line(c.id));
      if (grade == Grade::kFinding) out += " (" + one_line(c.requirement) + ")";
      out += c.reason.empty() ? "\n" : ": " + one_line(c.reason) + "\n";
      if (grade == Grade::kWaived) {
        const Waiver& w = cert.waivers[static_cast<std::size_t>(cert.waiver_of[i])].waiver;
        out += "      waived: " + one_line(w.reason) +
               (w.until.empty() ? "" : " (until " + w.until + ")") + " [" + one_line(w.where) +
               "]\n";
        continue;
      }
      if (!c.failed_step.empty()) out += "      step: " + one_line(c.failed_step) + "\n";
      for (std::size_t k = 0; k < std::min(c.diffs.size(), kMaxDiffsInSummary); ++k)
        out += "      " + one_line(diff_text(c.diffs[k])) + "\n";
      if (c.diffs.size() > kMaxDiffsInSummary)
        out += fmt::format("      ({} more diffs in the report)\n",
                           c.diffs.size() - kMaxDiffsInSummary);
    }
  };
  list("Blocking (MUST, not waived)", Grade::kBlocking);
  list("Findings (SHOULD or MAY: reported, not blocking)", Grade::kFinding);
  list("Waived (real verdict kept, not blocking)", Grade::kWaived);
  // Every waiver is listed, applied or not: none is applied silently.
  if (!cert.waivers.empty()) {
    out += "\nWaivers:\n";
    for (const WaiverUse& u : cert.waivers) {
      std::string status(waiver_status_name(u.status));
      if (u.status == WaiverStatus::kApplied) status += " to " + u.verdict;
      if (u.status == WaiverStatus::kUnused) status += ": the case's verdict is " + u.verdict;
      if (u.status == WaiverStatus::kExpired)
        status += fmt::format(" on {}: not applied, the case's verdict {} counts", u.waiver.until,
                              u.verdict);
      out += fmt::format("  {} {}: {} [{}]\n", one_line(u.waiver.id), status,
                         one_line(u.waiver.reason), one_line(u.waiver.where));
    }
  }

  const std::string_view word = headline_name(cert.headline);
  const std::string_view tint = cert.headline == Headline::kConformant      ? "\x1b[1;32m"
                                : cert.headline == Headline::kNotConformant ? "\x1b[1;31m"
                                                                            : "\x1b[1;33m";
  const std::string line = cert.line();
  out += "\n" + (color ? fmt::format("{}{}\x1b[0m", tint, word) : std::string(word)) +
         one_line(std::string_view(line).substr(word.size())) + "\n";
  out += target_text(run) + "\n";
  out += "device " + device_text(run) + "\n";
  out += fmt::format("{} of {} cases run", cert.run, cert.catalogue);
  if (run.duration_ns > 0)
    out += fmt::format(" in {:.2f} s", static_cast<double>(run.duration_ns) / 1e9);
  out += fmt::format(", seed {}", run.identity.seed);
  if (run.interrupted) out += " (interrupted)";
  out += "\n";
  return out;
}

bool is_terminal(std::FILE* stream) {
  return stream != nullptr && isatty(fileno(stream)) == 1;
}

Progress::Progress(std::FILE* out, int total, bool tty) : out_(out), total_(total), tty_(tty) {}

void Progress::draw(std::string_view id) {
  const std::string line = progress_bar(done_, total_, id);
  const std::size_t columns = static_cast<std::size_t>(std::max(terminal_columns(out_) - 1, 10));
  std::fputs(("\r" + fit(line, columns) + "\x1b[K").c_str(), out_);
  std::fflush(out_);
  drawn_ = true;
}

void Progress::clear() {
  if (!drawn_) return;
  std::fputs("\r\x1b[K", out_);
  drawn_ = false;
}

void Progress::begin(std::string_view id) {
  if (tty_) draw(id);
}

void Progress::end(const CaseResult& result) {
  ++done_;
  if (!tty_) {
    std::fputs((case_line(result, done_, total_) + "\n").c_str(), out_);
    std::fflush(out_);
    return;
  }
  if (result.verdict != Verdict::kPass && result.verdict != Verdict::kSkip) {
    clear();
    std::fputs((case_line(result, done_, total_, true) + "\n").c_str(), out_);
  }
  draw("");
}

void Progress::finish() {
  if (tty_ && out_ != nullptr) {
    clear();
    std::fflush(out_);
  }
}

}  // namespace roceconf::report
