#include "cli/compare_command.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "reports/atomic_file.h"
#include "cli/decode_command.h"

namespace roceconf::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::array<std::string_view, 5> kVerdicts = {"pass", "fail", "skip", "error",
                                                       "inconclusive"};

bool known(std::string_view v) {
  return std::find(kVerdicts.begin(), kVerdicts.end(), v) != kVerdicts.end();
}

bool bad(std::string_view v) {
  return v == "fail" || v == "error" || v == "inconclusive";
}

std::string joined(const std::set<std::string>& verdicts) {
  return fmt::format("{}", fmt::join(verdicts, "|"));
}

// "pass" or "pass|skip" into `out`; false on an unknown word.
bool add_verdicts(std::string_view text, std::set<std::string>& out, std::string& unknown) {
  while (!text.empty()) {
    const std::size_t bar = text.find('|');
    const std::string_view word = text.substr(0, bar);
    if (!known(word)) {
      unknown = std::string(word);
      return false;
    }
    out.emplace(word);
    text = bar == std::string_view::npos ? std::string_view() : text.substr(bar + 1);
  }
  return !out.empty();
}

std::expected<VerdictSet, std::string> from_json(const std::string& path, const Json& j) {
  VerdictSet set;
  set.label = path;
  const auto fail = [&](const std::string& what) {
    return std::unexpected(fmt::format("{}: {}", path, what));
  };
  if (j.contains("cases") && j["cases"].is_array()) {
    for (const auto& c : j["cases"]) {
      if (!c.is_object() || !c.contains("id") || !c["id"].is_string() || !c.contains("verdict") ||
          !c["verdict"].is_string())
        return fail("a case without a string id and verdict (give a roceconf report.json)");
      const std::string id = c["id"];
      const std::string v = c["verdict"];
      if (!known(v)) return fail(fmt::format("case '{}' has an unknown verdict '{}'", id, v));
      if (!set.cases.emplace(id, std::set<std::string>{v}).second)
        return fail(fmt::format("case '{}' appears twice", id));
    }
    if (j.contains("certificate") && j["certificate"].is_object() &&
        j["certificate"].value("line", Json()).is_string())
      set.headline = j["certificate"]["line"];
    if (j.contains("identity") && j["identity"].is_object() &&
        j["identity"].value("catalogue", Json()).is_object()) {
      const Json& cat = j["identity"]["catalogue"];
      if (cat.value("sha256", Json()).is_string())
        set.catalogue = fmt::format("{} (sha256 {})", cat.value("version", std::string()),
                                    cat["sha256"].get<std::string>());
    }
    return set;
  }
  if (j.contains("verdicts") && j["verdicts"].is_object()) {
    for (const auto& [id, value] : j["verdicts"].items()) {
      std::set<std::string> verdicts;
      std::string unknown;
      bool ok = true;
      if (value.is_string()) {
        ok = add_verdicts(value.get<std::string>(), verdicts, unknown);
      } else if (value.is_array() && !value.empty()) {
        for (const auto& v : value)
          ok = ok && v.is_string() && add_verdicts(v.get<std::string>(), verdicts, unknown);
      } else {
        ok = false;
      }
      if (!ok)
        return fail(fmt::format("case '{}': expected a verdict or a list of verdicts ({}){}", id,
                                fmt::join(kVerdicts, ", "),
                                unknown.empty() ? "" : ", not '" + unknown + "'"));
      set.cases.emplace(id, std::move(verdicts));
    }
    return set;
  }
  return fail(
      "neither a roceconf report (\"cases\": [...]) nor expected verdicts (\"verdicts\": {...})");
}

// `CASE VERDICT[|VERDICT...]  # why` lines.
std::expected<VerdictSet, std::string> from_text(const std::string& path, const std::string& text) {
  VerdictSet set;
  set.label = path;
  std::istringstream in(text);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string id, verdicts, extra;
    if (!(words >> id)) continue;
    const auto fail = [&](const std::string& what) {
      return std::unexpected(fmt::format("{}:{}: {}", path, line_no, what));
    };
    if (!(words >> verdicts) || (words >> extra))
      return fail("expected 'CASE VERDICT[|VERDICT...]' (a comment starts with #)");
    std::set<std::string> set_of;
    std::string unknown;
    if (!add_verdicts(verdicts, set_of, unknown))
      return fail(fmt::format("unknown verdict '{}' ({})", unknown, fmt::join(kVerdicts, ", ")));
    if (!set.cases.emplace(id, std::move(set_of)).second)
      return fail(fmt::format("case '{}' appears twice", id));
  }
  if (set.cases.empty()) return std::unexpected(fmt::format("{}: no verdicts in it", path));
  return set;
}

Json side_json(const VerdictSet& s) {
  return Json{{"file", s.label}, {"headline", s.headline}, {"catalogue", s.catalogue}};
}

}  // namespace

std::string_view change_name(Change c) {
  switch (c) {
    case Change::kRegressed:
      return "regressed";
    case Change::kFixed:
      return "fixed";
    case Change::kChanged:
      return "changed";
    case Change::kNew:
      return "new";
    case Change::kRemoved:
      return "removed";
    case Change::kSame:
      return "same";
  }
  return "changed";
}

std::expected<VerdictSet, std::string> read_verdicts(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
    const Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return std::unexpected(fmt::format("{}: not valid JSON (give a roceconf report.json)", path));
    return from_json(path, j);
  }
  return from_text(path, text);
}

Change classify(const std::set<std::string>& a, const std::set<std::string>& b) {
  for (const auto& v : a)
    if (b.contains(v)) return Change::kSame;
  const auto only_bad = [](const std::set<std::string>& s) {
    return std::all_of(s.begin(), s.end(), [](const std::string& v) { return bad(v); });
  };
  if (a.contains("pass") && only_bad(b)) return Change::kRegressed;
  if (b.contains("pass") && only_bad(a)) return Change::kFixed;
  return Change::kChanged;
}

std::vector<CaseChange> compare(const VerdictSet& a, const VerdictSet& b) {
  std::vector<CaseChange> out;
  for (const auto& [id, va] : a.cases) {
    const auto it = b.cases.find(id);
    if (it == b.cases.end()) {
      out.push_back({id, Change::kRemoved, joined(va), ""});
    } else {
      out.push_back({id, classify(va, it->second), joined(va), joined(it->second)});
    }
  }
  for (const auto& [id, vb] : b.cases)
    if (!a.cases.contains(id)) out.push_back({id, Change::kNew, "", joined(vb)});
  std::stable_sort(out.begin(), out.end(), [](const CaseChange& x, const CaseChange& y) {
    return x.change != y.change ? x.change < y.change : x.id < y.id;
  });
  return out;
}

int run_compare(const CompareArgs& args) {
  const auto error = [](const std::string& message) {
    std::fflush(stdout);
    fmt::print(stderr, "roceconf: error: {}\n", message);
    return kExitUsage;
  };
  auto a = read_verdicts(args.a);
  if (!a) return error(a.error());
  auto b = read_verdicts(args.b);
  if (!b) return error(b.error());
  const std::vector<CaseChange> changes = compare(*a, *b);

  std::array<int, 6> counts{};
  for (const auto& c : changes) ++counts[static_cast<std::size_t>(c.change)];
  std::size_t width = 4;
  for (const auto& c : changes) width = std::max(width, c.id.size());
  for (const auto& c : changes) {
    if (c.change == Change::kSame && !args.all) continue;
    fmt::print("{:<9} {:<{}} {} -> {}\n", change_name(c.change), c.id, width,
               c.a.empty() ? "(absent)" : c.a, c.b.empty() ? "(absent)" : c.b);
  }
  if (!a->catalogue.empty() && !b->catalogue.empty() && a->catalogue != b->catalogue)
    fmt::print("note: different catalogues: {} in {}, {} in {}\n", a->catalogue, args.a,
               b->catalogue, args.b);
  if (!a->headline.empty()) fmt::print("A {}: {}\n", args.a, a->headline);
  if (!b->headline.empty()) fmt::print("B {}: {}\n", args.b, b->headline);
  fmt::print("compare: {} regressed, {} fixed, {} changed, {} new, {} removed, {} same\n",
             counts[0], counts[1], counts[2], counts[3], counts[4], counts[5]);

  if (args.json) {
    Json j;
    j["a"] = side_json(*a);
    j["b"] = side_json(*b);
    Json summary = Json::object();
    for (std::size_t i = 0; i < counts.size(); ++i)
      summary[std::string(change_name(static_cast<Change>(i)))] = counts[i];
    j["summary"] = std::move(summary);
    Json cases = Json::array();
    for (const auto& c : changes)
      cases.push_back({{"id", c.id}, {"change", change_name(c.change)}, {"a", c.a}, {"b", c.b}});
    j["cases"] = std::move(cases);
    if (auto ok = report::write_file_atomic(
            *args.json, j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
        !ok)
      return error(ok.error());
  }
  if (counts[static_cast<std::size_t>(Change::kRegressed)] > 0) return 1;
  if (args.strict &&
      counts[static_cast<std::size_t>(Change::kSame)] != static_cast<int>(changes.size()))
    return 1;
  return kExitOk;
}

void add_compare_command(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare two runs (JSON reports), or expected verdicts with a run: per case same, fixed, "
      "regressed, new, removed or changed; exit 1 when a case regressed");
  cmd->add_option("A", args->a,
                  "the earlier report.json, or expected verdicts (JSON or CASE VERDICT lines)")
      ->required();
  cmd->add_option("B", args->b, "the later report.json (or expected verdicts)")->required();
  cmd->add_option("--json", args->json, "also write the comparison as JSON here");
  cmd->add_flag("--strict", args->strict,
                "exit 1 when any case is not the same (for checking against expected verdicts)");
  cmd->add_flag("--all", args->all, "also list the cases that are the same");
  cmd->callback([args, &run] { run = [args] { return run_compare(*args); }; });
}

}  // namespace roceconf::cli
