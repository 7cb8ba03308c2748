// The conformance catalogue: every case with its metadata (id, area, clause, requirement,
// capabilities) and how to run it. Script cases (cases/**/*.rcase, compiled into the binary)
// and C++ cases (cases/cpp/) are both CaseDefs.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "suite/engine/case_context.h"

namespace roceconf::engine {

struct CaseDef {
  std::string id;    // "psn/gap-naks-once": area / name
  std::string area;  // "psn"
  std::string title;
  std::string description;
  std::string clause;
  std::string requirement;  // MUST or SHOULD
  std::vector<std::string> needs;
  std::string source;
  std::function<void(CaseContext&)> run;
};

class Catalogue {
 public:
  void add(CaseDef def) { cases_.push_back(std::move(def)); }
  const std::vector<CaseDef>& cases() const { return cases_; }
  // Cases whose id matches a glob ("psn/*", "*dup*"); all when the glob is empty.
  std::vector<const CaseDef*> select(std::string_view glob) const;
  // Keeps the order stable: by area in the order below, then by id.
  void sort();

 private:
  std::vector<CaseDef> cases_;
};

// fnmatch-style glob: * and ? (no character classes).
bool glob_match(std::string_view glob, std::string_view text);

}  // namespace roceconf::engine
