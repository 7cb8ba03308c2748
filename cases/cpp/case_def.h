// How the C++ case files add a case to the catalogue: its citation, rule and where the citation
// was checked, beside what every case has.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "suite/engine/catalogue.h"

namespace roceconf::cases {

// A case's citation (clause numbers, statement IDs), its rule and where the citation was checked.
struct Cite {
  std::string citation, rule, checked;
};

inline void add_case(engine::Catalogue& catalogue, std::string_view source, std::string id,
                     std::string title, std::string description, Cite cite, std::string level,
                     std::vector<std::string> needs,
                     std::function<void(engine::CaseContext&)> run) {
  engine::CaseDef def;
  def.area = id.substr(0, id.find('/'));
  def.id = std::move(id);
  def.title = std::move(title);
  def.description = std::move(description);
  def.citation = std::move(cite.citation);
  def.rule = std::move(cite.rule);
  def.checked = std::move(cite.checked);
  def.requirement = std::move(level);
  def.needs = std::move(needs);
  def.source = std::string(source);
  def.run = std::move(run);
  catalogue.add(std::move(def));
}

// A C++ case file: adds its cases with its path as their source.
class CaseFile {
 public:
  constexpr explicit CaseFile(std::string_view source) : source_(source) {}
  void add(engine::Catalogue& catalogue, std::string id, std::string title, std::string description,
           Cite cite, std::string level, std::vector<std::string> needs,
           std::function<void(engine::CaseContext&)> run) const {
    add_case(catalogue, source_, std::move(id), std::move(title), std::move(description),
             std::move(cite), std::move(level), std::move(needs), std::move(run));
  }

 private:
  std::string_view source_;
};

}  // namespace roceconf::cases
