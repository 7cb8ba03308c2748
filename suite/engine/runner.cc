#include "suite/engine/runner.h"

#include <algorithm>
#include <chrono>
#include <iterator>

#include <fmt/format.h>

#include "dissector/analysis/sent_framing.h"
#include "suite/engine/case_stop.h"

namespace roceconf::engine {

namespace {

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ULL;
  return h;
}

}  // namespace

TimeNs calibrate_rtt(Target& target, std::string& note) {
  (void)target.reset();
  report::CaseResult scratch;
  CaseContext ctx(target, Timing{}, scratch, 0x52545431);
  std::vector<TimeNs> samples;
  try {
    Connection& c = ctx.new_connection("calibration");
    for (int i = 0; i < 5; ++i) {
      const TimeNs start = ctx.now();
      ctx.cm_send(c, "ClassPortInfo", {});
      const TimeNs deadline = start + 1'000 * kMillisecond;
      bool answered = false;
      while (ctx.now() < deadline) {
        auto got = ctx.collect(nullptr, deadline - ctx.now());
        for (const auto& r : got)
          if (r.packet.mad && r.packet.mad->cm &&
              std::holds_alternative<ClassPortInfo>(*r.packet.mad->cm)) {
            samples.push_back(r.time - start);
            answered = true;
          }
        if (answered || got.empty()) break;
      }
      if (!answered) break;
    }
  } catch (const CaseStop& stop) {
    note = "round trip not measured: " + std::string(stop.what());
    return 0;
  }
  if (samples.empty()) {
    note =
        "round trip not measured: the target did not answer ClassPortInfo on QP1; windows use "
        "the floors";
    return 0;
  }
  std::sort(samples.begin(), samples.end());
  const TimeNs rtt = samples[samples.size() / 2];
  note = fmt::format("round trip {:.1f} us (median of {} ClassPortInfo exchanges)",
                     static_cast<double>(rtt) / 1e3, samples.size());
  return rtt;
}

report::CaseResult run_case(Target& target, const CaseDef& def, const Timing& timing,
                            std::uint64_t seed, CaseRecords* records) {
  report::CaseResult r;
  r.id = def.id;
  r.area = def.area;
  r.title = def.title;
  r.description = def.description;
  r.clause = def.clause;
  r.citation = def.citation;
  r.rule = def.rule;
  r.release = def.release;
  r.checked = def.checked;
  r.requirement = def.requirement;
  r.needs = def.needs;
  r.source = def.source;
  const auto wall_start = std::chrono::system_clock::now();
  r.start_unix_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(wall_start.time_since_epoch()).count();
  if (auto reset = target.reset(); !reset) {
    r.verdict = report::Verdict::kError;
    r.reason = "target reset failed: " + reset.error();
    return r;
  }
  Clock& clock = target.port().clock();
  const TimeNs t0 = clock.now_ns();
  r.start_unix_ns = clock.unix_ns(t0);
  if (records) records->begin(r);
  CaseContext ctx(target, timing, r, seed ^ fnv1a(def.id));
  try {
    // What the case declares it needs is checked before it runs, whatever language it is in.
    for (const auto& need : def.needs) ctx.require(need);
    def.run(ctx);
    r.verdict = report::Verdict::kPass;
  } catch (const CaseStop& stop) {
    r.verdict = stop.verdict;
    r.reason = stop.what();
    r.diffs = stop.diffs;
    if (stop.verdict != report::Verdict::kSkip) r.failed_step = ctx.step();
  } catch (const std::exception& e) {
    r.verdict = report::Verdict::kError;
    r.reason = fmt::format("internal error: {}", e.what());
    r.failed_step = ctx.step();
  }
  if (target.kind() != "reference") ctx.close_all();
  if (ctx.dropped_frames() > 0)
    ctx.note(fmt::format("{} more frames arrived and were not recorded (at most {} a case)",
                         ctx.dropped_frames(), CaseContext::kMaxFrameEvents));
  r.duration_ns = clock.now_ns() - t0;
  if (records) records->end(r);
  return r;
}

void run_cases(Target& target, const std::vector<const CaseDef*>& cases, const RunOptions& options,
               report::RunResult& result) {
  Timing timing = options.timing;
  if (!options.rtt_given) {
    std::string note;
    timing.rtt = calibrate_rtt(target, note);
  }
  result.rtt_ns = timing.rtt;
  result.silence_ns = timing.silence_window();
  // Run-level cases go last: they grade what every other case of the run left behind.
  std::vector<const CaseDef*> order;
  std::ranges::copy_if(cases, std::back_inserter(order),
                       [](const CaseDef* c) { return !c->grade_run; });
  std::ranges::copy_if(cases, std::back_inserter(order),
                       [](const CaseDef* c) { return static_cast<bool>(c->grade_run); });
  bool run_level_ran = false;
  CaseRecords records(target);
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (options.interrupted && options.interrupted->load()) {
      result.interrupted = true;
      break;
    }
    const CaseDef& def = *order[i];
    if (options.on_start) options.on_start(def, i, order.size());
    report::CaseResult r = run_case(target, def, timing, options.seed, &records);
    if (def.grade_run) {
      def.grade_run(r, result.cases);
      run_level_ran = true;
    }
    result.cases.push_back(std::move(r));
    if (options.on_done) options.on_done(result.cases.back(), i, order.size());
  }
  result.notes = run_notes(target, result.cases);
  std::ranges::move(records.notes(), std::back_inserter(result.notes));
  result.host_clock = records.host_clock();
  if (!run_level_ran) {
    // The findings stay on the packets' events; say that no verdict weighed them.
    std::size_t packets = 0;
    for (const auto& c : result.cases)
      for (const auto& e : c.events)
        if (std::ranges::any_of(e.analysis,
                                [](const std::string& a) { return a.starts_with(kFramingPrefix); }))
          ++packets;
    if (packets > 0)
      result.notes.push_back(fmt::format(
          "{} {} the target sent {} framing findings (on their events) that no case graded: "
          "header/sent-framing did not run",
          packets, packets == 1 ? "packet" : "packets", packets == 1 ? "carries" : "carry"));
  }
}

std::vector<std::string> run_notes(const Target& target,
                                   const std::vector<report::CaseResult>& cases) {
  std::vector<std::string> notes;
  if (!target.no_convention().empty()) {
    const auto skipped = std::ranges::count_if(cases, [](const report::CaseResult& r) {
      return r.verdict == report::Verdict::kSkip && r.reason.starts_with(kNoConventionSkip);
    });
    notes.push_back(fmt::format(
        "the target's responder follows no RCNF convention (its REP carried no RCNF block: {}); "
        "{} {} skipped, not graded (RESPONDER_CONVENTION.md)",
        target.no_convention(), skipped,
        skipped == 1 ? "case that needs it was" : "cases that need it were"));
  }
  return notes;
}

}  // namespace roceconf::engine
