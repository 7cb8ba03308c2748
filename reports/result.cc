#include "reports/result.h"

#include <algorithm>

namespace roceconf::report {

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "fail";
    case Verdict::kSkip:
      return "skip";
    case Verdict::kError:
      return "error";
    case Verdict::kInconclusive:
      return "inconclusive";
  }
  return "error";
}

std::string_view event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::kSent:
      return "sent";
    case EventKind::kReceived:
      return "received";
    case EventKind::kExpectMet:
      return "expect-met";
    case EventKind::kExpectFailed:
      return "expect-failed";
    case EventKind::kSilenceOk:
      return "silence-ok";
    case EventKind::kControl:
      return "control";
    case EventKind::kNote:
      return "note";
    case EventKind::kCounter:
      return "counter";
    case EventKind::kKernelLog:
      return "kernel-log";
  }
  return "note";
}

namespace {

void add(Counts& counts, Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      ++counts.pass;
      break;
    case Verdict::kFail:
      ++counts.fail;
      break;
    case Verdict::kSkip:
      ++counts.skip;
      break;
    case Verdict::kError:
      ++counts.error;
      break;
    case Verdict::kInconclusive:
      ++counts.inconclusive;
      break;
  }
}

}  // namespace

Counts RunResult::counts() const {
  Counts counts;
  for (const CaseResult& c : cases) add(counts, c.verdict);
  return counts;
}

Counts RunResult::counts(std::string_view area) const {
  Counts counts;
  for (const CaseResult& c : cases)
    if (c.area == area) add(counts, c.verdict);
  return counts;
}

std::vector<std::string> RunResult::areas() const {
  std::vector<std::string> out;
  for (const CaseResult& c : cases)
    if (std::find(out.begin(), out.end(), c.area) == out.end()) out.push_back(c.area);
  return out;
}

}  // namespace roceconf::report
