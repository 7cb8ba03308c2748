#include "suite/engine/catalogue.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace roceconf::engine {

std::string clause_text(std::string_view citation, std::string_view release,
                        std::string_view rule) {
  std::string out(citation);
  if (!release.empty()) out += fmt::format("{}({})", out.empty() ? "" : " ", release);
  if (!rule.empty()) out += fmt::format("{}{}", out.empty() ? "" : ": ", rule);
  return out;
}

bool has_unchecked_citation(const CaseDef& def) {
  return def.checked.empty() || def.checked.find("unchecked") != std::string::npos;
}

void Catalogue::add(CaseDef def) {
  if (def.release.empty()) def.release = std::string(kCatalogueRelease);
  if (!def.citation.empty()) def.clause = clause_text(def.citation, def.release, def.rule);
  cases_.push_back(std::move(def));
}

bool glob_match(std::string_view g, std::string_view t) {
  std::size_t gi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (gi < g.size() && (g[gi] == '?' || g[gi] == t[ti])) {
      ++gi;
      ++ti;
    } else if (gi < g.size() && g[gi] == '*') {
      star = gi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      gi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (gi < g.size() && g[gi] == '*') ++gi;
  return gi == g.size();
}

std::vector<const CaseDef*> Catalogue::select(std::string_view glob) const {
  std::vector<const CaseDef*> out;
  for (const auto& c : cases_)
    if (glob.empty() || glob_match(glob, c.id) || glob_match(glob, c.area)) out.push_back(&c);
  return out;
}

void Catalogue::sort() {
  static constexpr std::array<std::string_view, 19> kAreas = {
      "cm", "cm-fault", "psn", "mtu", "pkey", "nak",  "icrc", "header", "data",  "qp",
      "cq", "ud",       "req", "cc",  "mw",   "ipv6", "sec",  "scale",  "robust"};
  const auto rank = [](const CaseDef& c) {
    const auto it = std::find(kAreas.begin(), kAreas.end(), c.area);
    return static_cast<std::size_t>(it - kAreas.begin());
  };
  std::stable_sort(cases_.begin(), cases_.end(), [&](const CaseDef& a, const CaseDef& b) {
    const auto ra = rank(a), rb = rank(b);
    return ra != rb ? ra < rb : a.id < b.id;
  });
}

}  // namespace roceconf::engine
