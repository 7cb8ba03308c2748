// How a running case ends early: a step throws CaseStop with the verdict and the evidence (the
// failing step's reason and field diffs); the runner catches it and records the result.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reports/result.h"

namespace roceconf::engine {

class CaseStop : public std::runtime_error {
 public:
  CaseStop(report::Verdict verdict, std::string reason, std::vector<report::FieldDiff> diffs = {})
      : std::runtime_error(reason), verdict(verdict), diffs(std::move(diffs)) {}
  report::Verdict verdict;
  std::vector<report::FieldDiff> diffs;
};

}  // namespace roceconf::engine
