// Runs cases against a target: calibrates the round trip, then gives each case a fresh
// context (and the target a reset), records verdicts and evidence into the result model, and
// stops cleanly between cases when interrupted.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "reports/result.h"
#include "suite/engine/case_records.h"
#include "suite/engine/catalogue.h"
#include "suite/engine/target.h"
#include "suite/engine/timing.h"

namespace roceconf::engine {

struct RunOptions {
  Timing timing;  // floors; the RTT is measured unless rtt_given
  bool rtt_given = false;
  std::uint64_t seed = 1;  // varies QPNs, PSNs and comm IDs between runs
  const std::atomic<bool>* interrupted = nullptr;
  std::function<void(const CaseDef&, std::size_t index, std::size_t total)> on_start;
  std::function<void(const report::CaseResult&, std::size_t index, std::size_t total)> on_done;
};

// The round trip to the target: the median of five CM ClassPortInfo Get/GetResp exchanges on
// QP1. Zero (and `note` says why) when the target does not answer them.
TimeNs calibrate_rtt(Target& target, std::string& note);

// One case, start to end. With `records`, the case's timeline also gets the counters that
// changed across it and the device host's kernel log lines of its window (case_records.h).
report::CaseResult run_case(Target& target, const CaseDef& def, const Timing& timing,
                            std::uint64_t seed, CaseRecords* records = nullptr);

// What the run learnt of the target, said once for the run (RunResult::notes).
std::vector<std::string> run_notes(const Target& target,
                                   const std::vector<report::CaseResult>& cases);

// The cases in order; `result` gets each as it completes (so a caller can write partial
// reports). Target set-up errors become ERROR verdicts of the cases they hit.
void run_cases(Target& target, const std::vector<const CaseDef*>& cases, const RunOptions& options,
               report::RunResult& result);

}  // namespace roceconf::engine
