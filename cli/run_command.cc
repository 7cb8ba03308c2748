// Over 600 lines: `roceconf run`'s options, their checks and a run's life (reports, interrupts,
// reruns, Python cases) form one command.
#include "cli/run_command.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cases/builtin.h"
#include "cases/embedded.h"
#ifdef ROCECONF_WITH_PYTHON
#include "bindings/embed.h"
#endif
#include "cli/compare_command.h"
#include "cli/decode_command.h"
#include "cli/doctor_command.h"
#include "reports/atomic_file.h"
#include "reports/html_writer.h"
#include "reports/json_writer.h"
#include "reports/junit_writer.h"
#include "reports/sha256.h"
#include "reports/statements.h"
#include "reports/terminal.h"
#include "reports/verdict.h"
#include "suite/engine/daemon_target.h"
#include "suite/engine/evidence.h"
#include "suite/engine/profile.h"
#include "suite/engine/raw_target.h"
#include "suite/engine/reference_target.h"
#include "suite/engine/runner.h"
#include "suite/engine/script.h"
#include "suite/reference_nic/quirks.h"

namespace roceconf::cli {

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  g_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C stops at once
}

int setup_error(const std::string& message) {
  std::fflush(stdout);
  fmt::print(stderr, "roceconf: error: {}\n", message);
  return kExitUsage;
}

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::expected<std::vector<std::string>, std::string> process_arguments();

std::expected<std::unique_ptr<engine::Target>, std::string> open_target(const RunArgs& args) {
  if (args.target == "reference") {
    engine::ReferenceOptions o;
    o.quirks = args.quirks;
    o.stock_responder = args.stock_responder;
    o.virtual_time = args.clock != "real";
    auto t = engine::ReferenceTarget::create(o);
    if (!t) return std::unexpected(t.error());
    return std::unique_ptr<engine::Target>(std::move(*t));
  }
  if (args.clock != "virtual")
    return std::unexpected(
        "--clock applies to the reference target only (daemon and raw targets run on the wall "
        "clock)");
  if (args.target == "daemon") {
    engine::DaemonTargetOptions o;
    o.quirks = args.quirks;
    o.stock_responder = args.stock_responder;
    target::Quirks check;
    for (const auto& q : args.quirks)
      if (auto ok = check.enable(q); !ok) return std::unexpected(ok.error());
    auto t = engine::DaemonTarget::start(o);
    if (!t) return std::unexpected(t.error());
    return std::unique_ptr<engine::Target>(std::move(*t));
  }
  if (args.target == "raw") {
    if (!args.quirks.empty())
      return std::unexpected("--quirk applies to the reference and daemon targets only");
    if (args.stock_responder)
      return std::unexpected(
          "--stock-responder applies to the reference and daemon targets only (a raw target's "
          "responder is whatever the device's host runs)");
    engine::Profile profile;
    if (!args.profile.empty()) {
      auto p = engine::load_profile(args.profile);
      if (!p) return std::unexpected(p.error());
      profile = std::move(*p);
    }
    engine::ProfileOverrides o{args.interface, args.target_mac,   args.target_ip, args.tester_mac,
                               args.tester_ip, args.service_port, args.agent};
    if (auto ok = engine::apply_overrides(profile, o); !ok) return std::unexpected(ok.error());
    if (auto ok = engine::validate(profile); !ok) return std::unexpected(ok.error());
    auto t = engine::RawTarget::open(profile);
    if (!t) return std::unexpected(t.error());
    return std::unique_ptr<engine::Target>(std::move(*t));
  }
  return std::unexpected(
      fmt::format("unknown target '{}' (reference, daemon or raw)", args.target));
}

// Markdown table cells: one line, no column breaks.
std::string md_cell(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|')
      out += "\\|";
    else
      out += ch == '\n' ? ' ' : ch;
  }
  return out;
}

// --list: the cases as text (one a line), as the traceability table (md), or as JSON.
int list_cases(const std::vector<const engine::CaseDef*>& cases, const std::string& format) {
  if (format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const auto* c : cases)
      out.push_back({{"id", c->id},
                     {"area", c->area},
                     {"title", c->title},
                     {"level", c->requirement},
                     {"citation", c->citation},
                     {"rule", c->rule},
                     {"release", c->release},
                     {"checked", c->checked},
                     {"clause", c->clause},
                     {"needs", c->needs},
                     {"source", c->source}});
    fmt::print("{}\n", out.dump(2));
    return kExitOk;
  }
  if (format == "coverage") {
    std::vector<report::CaseCitation> citations;
    for (const auto* c : cases)
      citations.push_back({c->id, c->citation.empty() ? c->clause : c->citation, c->requirement});
    fmt::print("{}", report::coverage_markdown(report::coverage(citations)));
    return kExitOk;
  }
  if (format == "md") {
    std::map<std::string, int> levels, releases;
    int unchecked = 0, partly = 0;
    // Wholly unchecked: no source confirmed any number of the citation; partly: some of them.
    const auto wholly = [](const engine::CaseDef& c) {
      return c.checked.empty() || c.checked.starts_with("unchecked");
    };
    for (const auto* c : cases) {
      ++levels[c->requirement];
      ++releases[c->release];
      if (wholly(*c))
        ++unchecked;
      else if (engine::has_unchecked_citation(*c))
        ++partly;
    }
    fmt::print(
        "# Traceability: roceconf cases to IBA clauses\n\n"
        "Generated from the built catalogue by `roceconf run --list --format md`; do not edit "
        "(a test compares it with the catalogue). Each case's citation holds clause numbers and "
        "statement IDs of its release; the rule paraphrases what they require; *checked* names "
        "the public text the citation was checked against, and `unchecked:` the numbers no "
        "public source confirmed (cases/README.md). **unchecked**: none of them was.\n\n");
    std::string level_text, release_text;
    for (const auto& [level, n] : levels)
      level_text += fmt::format("{}{} {}", level_text.empty() ? "" : ", ", n, level);
    for (const auto& [release, n] : releases)
      release_text += fmt::format("{}{} ({} case{})", release_text.empty() ? "" : "; ",
                                  release.empty() ? "(none)" : release, n, n == 1 ? "" : "s");
    fmt::print(
        "{} cases: {}. Release: {}. Citations checked against public text: {} wholly, {} in "
        "part, {} not at all.\n\n",
        cases.size(), level_text, release_text, cases.size() - unchecked - partly, partly,
        unchecked);
    fmt::print(
        "| Case | Citation | Release | Level | Rule | Checked |\n|---|---|---|---|---|---|\n");
    for (const auto* c : cases)
      fmt::print("| `{}` | {} | {} | {} | {} | {} |\n", c->id,
                 md_cell(c->citation.empty() ? c->clause : c->citation), md_cell(c->release),
                 c->requirement, md_cell(c->rule),
                 wholly(*c) ? "**unchecked**" : md_cell(c->checked));
    return kExitOk;
  }
  for (const auto* c : cases) {
    std::string needs;
    for (const auto& n : c->needs) needs += (needs.empty() ? "" : ",") + n;
    fmt::print("{:<40} {:<6} {:<7} {:<18} {}\n", c->id, c->area, c->requirement,
               needs.empty() ? "-" : needs, c->title);
  }
  fmt::print("{} cases\n", cases.size());
  return kExitOk;
}

// --cases: loads the Python cases into this process (bindings/embed.h) from the package next to
// this binary (build tree) or under its install prefix, and runs them beside the catalogue.
int run_python_cases(const RunArgs& args, const std::vector<engine::CaseDef>& scripts) {
#ifdef ROCECONF_WITH_PYTHON
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  std::string package_dir;
  for (const fs::path& dir : {self.parent_path() / "python",
                              self.parent_path().parent_path() / ROCECONF_PYTHON_INSTALL_DIR})
    if (fs::exists(dir / "roceconf" / "__init__.py", ec)) {
      package_dir = dir.string();
      break;
    }
  if (package_dir.empty())
    return setup_error(fmt::format(
        "--cases needs the Python module, which is not built next to {} (install python3-dev "
        "and pybind11-dev with scripts/setup.sh, then rebuild)",
        self.string()));
  auto loaded = python::EmbeddedCases::load(package_dir, args.cases);
  if (!loaded) return setup_error(loaded.error());
  std::fflush(stdout);
  return (*loaded)->run([&args, &scripts](const std::vector<engine::CaseDef>& cases) {
    std::vector<engine::CaseDef> all = cases;
    all.insert(all.end(), scripts.begin(), scripts.end());
    return run_run(args, &all);
  });
#else
  (void)args;
  (void)scripts;
  return setup_error(
      "--cases needs the Python module, which this roceconf was built without (install "
      "python3-dev, libpython3-dev and pybind11-dev with scripts/setup.sh, then rebuild)");
#endif
}

// This process's arguments, program name first, as the kernel has them.
std::expected<std::vector<std::string>, std::string> process_arguments() {
  std::FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (!f) return std::unexpected("cannot read /proc/self/cmdline");
  std::vector<std::string> words;
  std::string word;
  for (int c; (c = std::fgetc(f)) != EOF;) {
    if (c != 0) {
      word += static_cast<char>(c);
    } else {
      words.push_back(word);
      word.clear();
    }
  }
  std::fclose(f);
  return words;
}

std::string shell_quote(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_@%+=:,./-") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string read_text(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// hostname, kernel release, OS (os-release PRETTY_NAME).
std::vector<std::pair<std::string, std::string>> tester_host() {
  std::vector<std::pair<std::string, std::string>> out;
  utsname u{};
  if (uname(&u) == 0) {
    out.emplace_back("hostname", u.nodename);
    out.emplace_back("kernel", u.release);
    out.emplace_back("machine", u.machine);
  }
  for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
    bool ok = false;
    std::istringstream in(read_text(path, ok));
    if (!ok) continue;
    for (std::string line; std::getline(in, line);) {
      if (!line.starts_with("PRETTY_NAME=")) continue;
      std::string value = line.substr(12);
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\''))
        value = value.substr(1, value.size() - 2);
      out.emplace_back("os", value);
    }
    break;
  }
  return out;
}

// Raw-target options never apply to another target: grading the reference NIC while the user
// described a device would be a false certificate.
std::optional<std::string> misplaced_raw_option(const RunArgs& args) {
  if (args.target == "raw") return std::nullopt;
  const std::pair<bool, const char*> given[] = {
      {!args.profile.empty(), "--profile describes a real device"},
      {args.interface.has_value(), "--interface selects a real device"},
      {args.target_mac.has_value(), "--target-mac addresses a real device"},
      {args.target_ip.has_value(), "--target-ip addresses a real device"},
      {args.tester_mac.has_value(), "--tester-mac applies to a real device"},
      {args.tester_ip.has_value(), "--tester-ip applies to a real device"},
      {args.service_port.has_value(), "--service-port applies to a real device"},
      {args.agent.has_value(), "--agent reaches a real device's roceconf-agent"},
  };
  for (const auto& [set, what] : given)
    if (set)
      return args.target == "reference"
                 ? fmt::format(
                       "{}: add --target raw (the default target is the built-in "
                       "reference NIC)",
                       what)
                 : fmt::format("{}: use --target raw, not --target {}", what, args.target);
  return std::nullopt;
}

// The ids a report.json holds with verdict fail, error or inconclusive (read as `compare` reads
// it).
std::expected<std::vector<std::string>, std::string> failed_in_report(const std::string& path) {
  auto report = read_verdicts(path);
  if (!report) return std::unexpected("--rerun-failed: " + report.error());
  std::vector<std::string> ids;
  for (const auto& [id, verdicts] : report->cases)
    if (std::all_of(verdicts.begin(), verdicts.end(), [](const std::string& v) {
          return v == "fail" || v == "error" || v == "inconclusive";
        }))
      ids.push_back(id);
  if (ids.empty())
    return std::unexpected(fmt::format(
        "--rerun-failed: no case failed, errored or was inconclusive in {}: nothing to rerun",
        path));
  return ids;
}

// Reports are never overwritten silently: existing report files are moved to
// previous/<their time>/ in their own directory. Returns the directories they went to.
std::expected<std::vector<std::string>, std::string> move_previous(
    const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<fs::path> existing;
  std::time_t newest = 0;
  for (const auto& p : paths) {
    struct stat st {};
    if (p.empty() || ::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    existing.emplace_back(p);
    newest = std::max(newest, st.st_mtime);
  }
  if (existing.empty()) return std::vector<std::string>{};
  std::tm utc{};
  gmtime_r(&newest, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H-%M-%SZ", &utc);
  std::vector<std::string> moved_to;
  std::vector<std::pair<fs::path, fs::path>> chosen;  // directory -> its previous/<stamp>
  for (const fs::path& file : existing) {
    const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
    fs::path dest;
    for (const auto& [d, to] : chosen)
      if (d == dir) dest = to;
    std::error_code ec;
    if (dest.empty()) {
      dest = dir / "previous" / stamp;
      for (int n = 2; fs::exists(dest, ec); ++n)
        dest = dir / "previous" / fmt::format("{}-{}", stamp, n);
      fs::create_directories(dest, ec);
      if (ec)
        return std::unexpected(fmt::format(
            "cannot keep the previous report in {}: {} (or give --force to overwrite it)",
            dest.string(), ec.message()));
      chosen.emplace_back(dir, dest);
      moved_to.push_back(dest.string());
    }
    fs::rename(file, dest / file.filename(), ec);
    if (ec)
      return std::unexpected(fmt::format(
          "cannot move the previous report {} to {}: {} (or give --force to overwrite it)",
          file.string(), dest.string(), ec.message()));
  }
  return moved_to;
}

bool is_must(const engine::CaseDef& c) {
  return c.requirement != "SHOULD" && c.requirement != "MAY";
}

}  // namespace

int run_run(const RunArgs& args) {
  return run_run(args, nullptr);
}

int run_run(const RunArgs& args, const std::vector<engine::CaseDef>* extra) {
  if (auto misplaced = misplaced_raw_option(args)) return setup_error(*misplaced);
  if (!extra && !args.cases.empty()) {
    // Case scripts (.rcase, a soak's reproducer among them) load here; Python files through
    // the embedded module.
    std::vector<engine::CaseDef> scripts;
    RunArgs python = args;
    python.cases.clear();
    for (const auto& path : args.cases) {
      if (!path.ends_with(".rcase")) {
        python.cases.push_back(path);
        continue;
      }
      bool ok = false;
      const std::string text = read_text(path, ok);
      if (!ok)
        return setup_error(
            fmt::format("--cases: cannot read '{}': {}", path, std::strerror(errno)));
      if (auto parsed = engine::parse_script(path, text); !parsed)
        return setup_error(parsed.error());
      const std::string stem = std::filesystem::path(path).stem().string();
      engine::CaseDef def = engine::load_script("cases/scripts/" + stem + ".rcase", text);
      def.source = path;
      scripts.push_back(std::move(def));
    }
    if (python.cases.empty()) return run_run(args, &scripts);
    return run_python_cases(python, scripts);
  }
  engine::Catalogue catalogue = cases::builtin_catalogue();
  if (extra) {
    for (const auto& def : *extra) {
      for (const auto& c : catalogue.cases())
        if (c.id == def.id)
          return setup_error(
              fmt::format("case id '{}' of {} is taken by {}", def.id, def.source, c.source));
      catalogue.add(def);
    }
    catalogue.sort();
  }
  // The union of the --filter globs (each must match something), in catalogue order.
  std::vector<const engine::CaseDef*> selected;
  for (const auto& glob : args.filters)
    if (catalogue.select(glob).empty())
      return setup_error(
          fmt::format("no case matches --filter '{}' (see 'roceconf run --list')", glob));
  for (const auto& c : catalogue.cases()) {
    bool match = args.filters.empty();
    for (const auto& glob : args.filters)
      match = match || engine::glob_match(glob, c.id) || engine::glob_match(glob, c.area);
    if (match) selected.push_back(&c);
  }
  if (!args.rerun_failed.empty()) {
    auto ids = failed_in_report(args.rerun_failed);
    if (!ids) return setup_error(ids.error());
    for (const auto& id : *ids)
      if (std::none_of(catalogue.cases().begin(), catalogue.cases().end(),
                       [&](const engine::CaseDef& c) { return c.id == id; }))
        return setup_error(fmt::format(
            "--rerun-failed: case '{}' of {} is not in this catalogue (see 'roceconf run --list')",
            id, args.rerun_failed));
    std::erase_if(selected, [&](const engine::CaseDef* c) {
      return std::find(ids->begin(), ids->end(), c->id) == ids->end();
    });
    if (selected.empty())
      return setup_error(
          fmt::format("--rerun-failed: none of the {} failed cases of {} matches --filter",
                      ids->size(), args.rerun_failed));
  }
  if (args.list) return list_cases(selected, args.list_format);

  std::vector<report::Waiver> waivers;
  if (!args.waivers.empty()) {
    bool ok = false;
    const std::string text = read_text(args.waivers, ok);
    if (!ok)
      return setup_error(
          fmt::format("cannot read the waivers file {}: {}", args.waivers, std::strerror(errno)));
    auto parsed = report::parse_waivers(text, args.waivers, [&](std::string_view id) {
      return std::any_of(catalogue.cases().begin(), catalogue.cases().end(),
                         [&](const engine::CaseDef& c) { return c.id == id; });
    });
    if (!parsed) return setup_error(parsed.error());
    waivers = std::move(*parsed);
  }

  // Where the reports go: the explicit paths, else all four in the output directory.
  const bool explicit_paths = args.junit || args.json || args.html || args.pcap;
  const auto path_for = [&](const std::optional<std::string>& given, const char* name) {
    if (given) return *given;
    return explicit_paths ? std::string() : (std::filesystem::path(args.out_dir) / name).string();
  };
  const std::string junit = path_for(args.junit, "junit.xml");
  const std::string json = path_for(args.json, "report.json");
  const std::string html = path_for(args.html, "report.html");
  const std::string pcap = path_for(args.pcap, "evidence.pcapng");
  for (const auto& p : {junit, json, html, pcap}) {
    if (p.empty()) continue;
    const auto dir = std::filesystem::path(p).parent_path();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec)
      return setup_error(
          fmt::format("cannot create the report directory {}: {}", dir.string(), ec.message()));
  }

  std::vector<std::pair<std::string, std::string>> preflight;
  if (args.target == "raw") {
    auto checked = run_preflight(args);
    if (!checked) return setup_error(checked.error());
    preflight = std::move(*checked);
  }
  auto target = open_target(args);
  if (!target) return setup_error(target.error());
  (*target)->set_destructive(args.destructive);

  report::RunResult result;
#ifdef ROCECONF_VERSION
  result.version = ROCECONF_VERSION;
#endif
  result.target_kind = std::string((*target)->kind());
  result.target_description = (*target)->describe();
  result.quirks = args.quirks;
  result.filters = args.filters;
  result.filter = fmt::format("{}", fmt::join(args.filters, " "));
  result.rerun_of = args.rerun_failed;
  result.waivers = std::move(waivers);
  result.catalogue.version = std::string(cases::kCatalogueVersion);
  if (extra && !extra->empty())
    result.catalogue.version +=
        fmt::format(" + {} local case{}", extra->size(), extra->size() == 1 ? "" : "s");
  result.catalogue.digest = cases::catalogue_digest(catalogue);
  result.catalogue.specification = std::string(cases::kSpecification);
  result.catalogue.cases = static_cast<int>(catalogue.cases().size());
  result.catalogue.must_cases =
      static_cast<int>(std::count_if(catalogue.cases().begin(), catalogue.cases().end(), is_must));
  report::RunIdentity& identity = result.identity;
  identity.device = (*target)->identity();
  identity.host = tester_host();
  identity.preflight = std::move(preflight);
  if (auto words = process_arguments(); words && !words->empty()) {
    // The program by its name as typed; the arguments as given.
    for (const auto& w : *words)
      identity.command_line += (identity.command_line.empty() ? "" : " ") + shell_quote(w);
  }
  identity.seed = args.seed;
  if (!args.profile.empty()) {
    identity.profile_path = args.profile;
    auto digest = report::sha256_file(args.profile);
    if (!digest) return setup_error(digest.error());
    identity.profile_sha256 = *digest;
  }
  identity.evidence_path = pcap;

  // Never overwrite an earlier run silently.
  if (!args.force) {
    auto moved = move_previous({junit, json, html, pcap});
    if (!moved) return setup_error(moved.error());
    for (const auto& dir : *moved)
      fmt::print(stderr, "roceconf: the previous report was moved to {}/\n", dir);
  }

  engine::EvidenceWriter evidence;
  if (!pcap.empty())
    if (auto ok = evidence.open(pcap); !ok) return setup_error(ok.error());

  result.start_unix_ns = unix_now_ns();
  const auto wall = std::chrono::steady_clock::now();

  engine::RunOptions options;
  options.timing = run_timing(args);
  options.seed = args.seed;
  options.interrupted = &g_interrupted;
  const bool tty = report::is_terminal(stderr) && !args.quiet;
  options.on_start = [&](const engine::CaseDef& def, std::size_t i, std::size_t total) {
    if (tty)
      fmt::print(stderr, "\r{}\033[K",
                 report::progress_bar(static_cast<int>(i), static_cast<int>(total), def.id));
  };
  std::string evidence_error;
  options.on_done = [&](const report::CaseResult& r, std::size_t i, std::size_t total) {
    if (!pcap.empty() && evidence_error.empty())
      if (auto ok = evidence.add_case(r); !ok) evidence_error = ok.error();
    if (args.quiet) return;
    if (tty) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "{}\n",
               report::case_line(r, static_cast<int>(i) + 1, static_cast<int>(total), tty));
  };

  {
    const CtrlC ctrl_c;
    engine::run_cases(**target, selected, options, result);
  }
  result.duration_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - wall)
          .count();

  int status = kExitOk;
  // The capture is closed and hashed first, so the reports can carry its SHA-256.
  if (!pcap.empty()) {
    if (auto ok = evidence.close(); !ok && evidence_error.empty()) evidence_error = ok.error();
    if (evidence_error.empty()) {
      auto digest = report::sha256_file(pcap);
      if (digest) {
        identity.evidence_sha256 = *digest;
      } else {
        evidence_error = digest.error();
      }
    }
    if (!evidence_error.empty()) {
      fmt::print(stderr, "roceconf: error: evidence capture: {}\n", evidence_error);
      status = kExitUsage;
    }
  }
  const auto write = [&](const std::string& path, const std::string& content) {
    if (path.empty()) return;
    if (auto ok = report::write_file_atomic(path, content); !ok) {
      fmt::print(stderr, "roceconf: error: {}\n", ok.error());
      status = kExitUsage;
    }
  };
  write(json, report::to_json(result));
  write(junit, report::to_junit_xml(result));
  write(html, report::to_html(result));
  if (!args.quiet) {
    fmt::print("{}", report::summary_text(result, report::is_terminal(stdout)));
    for (const auto& [what, path] : {std::pair{"HTML report", html},
                                     {"JSON report", json},
                                     {"JUnit XML", junit},
                                     {"evidence", pcap}})
      if (!path.empty()) fmt::print("{:<12} {}\n", what, path);
    if (!identity.evidence_sha256.empty())
      fmt::print("{:<12} {} (check: sha256sum {})\n", "sha256", identity.evidence_sha256,
                 shell_quote(pcap));
  }
  if (status != kExitOk) return status;
  if (result.interrupted)
    fmt::print(stderr, "roceconf: interrupted: the reports hold the {} cases that completed\n",
               result.cases.size());
  return report::certify(result).exit_status;
}

namespace {

// --check: the scripts parsed and checked as a run loads them, up to the first error, printed
// as file:line: message. Nothing is sent: no target is opened.
int check_scripts(const std::vector<std::string>& files) {
  std::size_t checked = 0;
  const auto check = [&](const std::string& path, const std::string& text) {
    auto script = engine::parse_script(path, text);
    if (!script) {
      std::fflush(stdout);
      fmt::print(stderr, "{}\n", script.error());
      return false;
    }
    ++checked;
    return true;
  };
  if (files.empty()) {
    for (const auto& file : cases::embedded_scripts())
      if (!check(std::string(file.path), std::string(file.text))) return kExitUsage;
  }
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in || std::filesystem::is_directory(path))
      return setup_error(fmt::format("--check: cannot read '{}' (give .rcase files)", path));
    if (!check(path, {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()}))
      return kExitUsage;
  }
  fmt::print("OK: {} scripts\n", checked);
  return kExitOk;
}

void add_run_options(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand(
      "run", "Run the conformance catalogue against a target and write the reports");
  add_target_options(*cmd, *args);
  cmd->add_option("--filter", args->filters,
                  "run only cases whose id or area matches a glob (repeatable: the union)")
      ->take_all();
  cmd->add_option("--rerun-failed", args->rerun_failed,
                  "run only the cases that failed, errored or were inconclusive in this "
                  "report.json");
  cmd->add_option("--waivers", args->waivers,
                  "waivers file: one 'CASE-ID [until=YYYY-MM-DD] REASON' a line (README.md)");
  cmd->add_flag("--force", args->force,
                "overwrite existing reports (default: move them to previous/<time>/ beside them)");
  cmd->add_flag("--destructive", args->destructive,
                "also run the cases that need 'destructive' (area robust): known one-packet "
                "attacks that may crash or wedge the device; they SKIP without it");
  cmd->add_flag("--list", args->list, "list the cases (after --filter) and exit");
  cmd->add_option("--format", args->list_format,
                  "--list as text (default), md (the traceability table), coverage (the "
                  "compliance statements each case covers) or json")
      ->check(CLI::IsMember({"text", "md", "coverage", "json"}));
  cmd->add_option(
      "--out", args->out_dir,
      "directory of the reports when no report path is given (default roceconf-report)");
  cmd->add_option("--junit", args->junit, "write JUnit XML here");
  cmd->add_option("--json", args->json, "write the JSON report here");
  cmd->add_option("--html", args->html, "write the HTML certification report here");
  cmd->add_option("--pcap", args->pcap, "write the pcapng evidence here");
  cmd->add_option("--seed", args->seed, "varies QPNs, PSNs and comm IDs between runs (default 1)");
  cmd->add_flag("--quiet", args->quiet, "no progress and no summary");
  cmd->add_option("--cases", args->cases,
                  "also run the @roceconf.case functions of these Python files or directories, "
                  "and these case scripts (.rcase: ids scripts/NAME, e.g. a soak's reproducer) "
                  "(repeatable)");
  auto check_files = std::make_shared<std::vector<std::string>>();
  CLI::Option* check =
      cmd->add_option("--check", *check_files,
                      "check case scripts (the built-in ones, or these .rcase files) and exit: "
                      "'OK: N scripts', or the first error as file:line: message (exit 2); "
                      "sends nothing")
          ->expected(0, CLI::detail::expected_max_vector_size);
  cmd->callback([args, &run, check, check_files] {
    if (check->count() > 0) {
      std::erase(*check_files, "");  // CLI11's value for a bare --check
      run = [check_files] { return check_scripts(*check_files); };
      return;
    }
    run = [args] { return run_run(*args); };
  });
}

}  // namespace

CtrlC::CtrlC() {
  g_interrupted.store(false);
  previous_ = std::signal(SIGINT, on_sigint);
}

CtrlC::~CtrlC() {
  std::signal(SIGINT, previous_);
}

const std::atomic<bool>* CtrlC::flag() const {
  return &g_interrupted;
}

void add_target_options(CLI::App& cmd, RunArgs& args) {
  cmd.add_option("--target", args.target, "reference (default), daemon, or raw")
      ->check(CLI::IsMember({"reference", "daemon", "raw"}));
  std::string quirk_help = "enable a defect of the reference target (repeatable):";
  for (const auto& q : target::all_quirks()) quirk_help += " " + std::string(q.name);
  cmd.add_option("--quirk", args.quirks, quirk_help);
  cmd.add_flag("--stock-responder", args.stock_responder,
               "reference and daemon targets: the responder acts as a stock `rping -s` (no RCNF "
               "block, one 16-byte receive), showing what a device without the convention gets");
  cmd.add_option("--clock", args.clock,
                 "reference target: virtual (default: time moves only when both sides wait, a "
                 "run takes well under a second) or real (the wall clock, so windows and "
                 "timeouts take their real time, as on a wire)")
      ->check(CLI::IsMember({"virtual", "real"}));
  cmd.add_option("--profile", args.profile, "raw target: profile file (suite/engine/PROFILE.md)");
  cmd.add_option("--interface", args.interface, "raw target: interface to the device");
  cmd.add_option("--target-mac", args.target_mac, "raw target: the device's MAC");
  cmd.add_option("--target-ip", args.target_ip, "raw target: the device's IPv4 address");
  cmd.add_option("--tester-mac", args.tester_mac, "raw target: our MAC (default: the interface's)");
  cmd.add_option("--tester-ip", args.tester_ip, "raw target: our IPv4 address");
  cmd.add_option("--service-port", args.service_port,
                 "raw target: rdma_cm port of the device's responder (default 7471)");
  cmd.add_flag(
      "--skip-preflight", args.skip_preflight,
      "raw target: skip the tester-host preflight (`roceconf doctor`); the report says so");
  cmd.add_option("--agent", args.agent,
                 "raw target: HOST:PORT of roceconf-agent's control API on the DUT host");
  cmd.add_option("--expect-floor-ms", args.expect_floor_ms,
                 "shortest wait for an expected packet (default 200)");
  cmd.add_option("--silence-floor-ms", args.silence_floor_ms,
                 "shortest 'expect nothing' window (default 20)");
  cmd.add_option("--silence-rtts", args.silence_rtts,
                 "'expect nothing' windows in round trips when longer than the floor (default 4)");
  cmd.add_option("--timer-tolerance", args.timer_tolerance,
                 "a requester timer (ACK timeout, RNR timer) may fire as late as this many times "
                 "its value (default 4)")
      ->check(CLI::Range(1.0, 100.0));
  cmd.add_option("--timer-slack-ms", args.timer_slack_ms,
                 "and this much later still, for hosts whose timers tick coarsely (default 50)")
      ->check(CLI::Range(0.0, 10000.0));
}

engine::Timing run_timing(const RunArgs& args) {
  engine::Timing t;
  t.expect_floor = static_cast<TimeNs>(args.expect_floor_ms * 1e6);
  t.silence_floor = static_cast<TimeNs>(args.silence_floor_ms * 1e6);
  t.silence_rtts = args.silence_rtts;
  t.timer_tolerance = args.timer_tolerance;
  t.timer_slack = static_cast<TimeNs>(args.timer_slack_ms * 1e6);
  return t;
}

std::expected<std::unique_ptr<engine::Target>, std::string> open_run_target(const RunArgs& args) {
  if (auto misplaced = misplaced_raw_option(args)) return std::unexpected(*misplaced);
  auto target = open_target(args);
  if (target) (*target)->set_destructive(args.destructive);
  return target;
}

void add_run_command(CLI::App& app, std::function<int()>& run) {
  add_run_options(app, run);
}

}  // namespace roceconf::cli
