#include "suite/engine/case_records.h"

#include <algorithm>

#include <fmt/format.h>

namespace roceconf::engine {

namespace {

// Clock probes before the first case: three exchanges narrow the estimate.
constexpr int kClockProbes = 3;

std::string_view level_name(std::uint32_t level) {
  static constexpr std::string_view kNames[] = {"emerg", "alert",  "crit", "err",
                                                "warn",  "notice", "info", "debug"};
  return level < 8 ? kNames[level] : "level?";
}

std::string error_text(const control::Error& e) {
  return e.message.empty() ? e.errno_name : e.message;
}

}  // namespace

CaseRecords::CaseRecords(Target& target)
    : target_(target),
      client_([this](const nlohmann::json& request) { return target_.control(request); }) {}

std::int64_t CaseRecords::now() {
  Clock& clock = target_.port().clock();
  return clock.unix_ns(clock.now_ns());
}

void CaseRecords::note(report::CaseResult& result, std::string text) {
  report::Event e;
  e.unix_ns = now();
  e.kind = report::EventKind::kNote;
  e.text = std::move(text);
  result.events.push_back(std::move(e));
}

report::HostClock CaseRecords::narrowest(report::HostClock best, std::int64_t sent,
                                         std::int64_t received, std::int64_t host_now) {
  const std::int64_t half = std::max<std::int64_t>(received - sent, 0) / 2;
  ++best.exchanges;
  if (best.exchanges == 1 || half < best.uncertainty_ns) {
    best.offset_ns = host_now - (sent + half);
    best.uncertainty_ns = half;
  }
  return best;
}

std::optional<control::KernelLogReply> CaseRecords::fetch(const control::KernelLog& request,
                                                          std::string& why_not) {
  const std::int64_t sent = now();
  auto reply = client_.kernel_log(request);
  const std::int64_t received = now();
  if (!reply) {
    why_not = error_text(reply.error());
    return std::nullopt;
  }
  const std::string source = clock_.source;
  clock_ = narrowest(clock_, sent, received, reply->now_unix_ns);
  clock_.source = reply->source.empty() ? source : reply->source;
  return std::move(*reply);
}

void CaseRecords::probe() {
  probed_ = true;
  if (!target_.capabilities().control) return;
  auto hello = client_.hello();
  if (!hello) {
    off_reason_ = "hello: " + error_text(hello.error());
    return;
  }
  // A server that lists no ops has them all (ControlSteps::has_op).
  const auto has = [&](std::string_view op) {
    return hello->ops.empty() || std::ranges::find(hello->ops, op) != hello->ops.end();
  };
  counters_ = has("counters");
  kernel_log_ = has("kernel_log");
  for (int i = 0; kernel_log_ && i < kClockProbes; ++i) {
    std::string why_not;
    if (!fetch(control::KernelLog{.max_lines = 0}, why_not)) {
      kernel_log_ = false;
      off_reason_ = "kernel_log: " + why_not;
    }
  }
}

void CaseRecords::begin(report::CaseResult& result) {
  if (!probed_) probe();
  before_.reset();
  if (!counters_) return;
  auto read = client_.counters();
  if (!read) {
    note(result, "counters not read as the case started: " + error_text(read.error()));
    return;
  }
  before_ = std::move(read->counters);
}

void CaseRecords::end(report::CaseResult& result) {
  if (counters_ && before_) {
    auto read = client_.counters();
    const std::int64_t at = now();
    if (!read) {
      note(result, "counters not read as the case ended: " + error_text(read.error()));
    } else {
      for (const auto& [name, value] : read->counters) {
        const auto was = before_->find(name);
        if (was != before_->end() && was->second == value) continue;
        report::Event e;
        e.unix_ns = at;
        e.kind = report::EventKind::kCounter;
        if (was == before_->end())
          e.text = fmt::format("{} = {} (not there as the case started)", name, value);
        else if (value > was->second)
          e.text = fmt::format("{} +{} ({} → {})", name, value - was->second, was->second, value);
        else
          e.text = fmt::format("{} -{} ({} → {})", name, was->second - value, was->second, value);
        result.events.push_back(std::move(e));
      }
    }
  }
  before_.reset();
  if (!kernel_log_) return;
  // The case's window on the host's clock, widened by the estimate's uncertainty.
  const std::int64_t until = now();
  control::KernelLog request;
  request.since_unix_ns =
      std::max<std::int64_t>(result.start_unix_ns + clock_.offset_ns - clock_.uncertainty_ns, 0);
  request.until_unix_ns = until + clock_.offset_ns + clock_.uncertainty_ns;
  request.max_lines = kMaxLinesPerCase;
  std::string why_not;
  const auto reply = fetch(request, why_not);
  if (!reply) {
    note(result, "device kernel log not read: " + why_not);
    return;
  }
  if (!reply->stamp_clock.empty()) stamp_clock_ = reply->stamp_clock;
  if (reply->dropped > 0)
    note(result,
         fmt::format("{} older device kernel log lines of the case's window left out (at most {})",
                     reply->dropped, kMaxLinesPerCase));
  for (const control::KernelLine& line : reply->lines) {
    report::Event e;
    e.unix_ns = line.unix_ns - clock_.offset_ns;
    e.host_unix_ns = line.unix_ns;
    e.kind = report::EventKind::kKernelLog;
    e.text = line.text;
    if (line.priority) e.analysis.push_back(std::string(level_name(*line.priority)));
    result.events.push_back(std::move(e));
  }
}

std::vector<std::string> CaseRecords::notes() const {
  std::vector<std::string> out;
  if (!off_reason_.empty())
    out.push_back(fmt::format(
        "counters or the device kernel log are not on the case timelines: the target's control "
        "API answered {}",
        off_reason_));
  // A target that keeps no log of its own (the reference NIC) has no second clock to place.
  if (clock_.exchanges > 0 && clock_.source != "none")
    out.push_back(fmt::format(
        "device host clock = tester clock {:+.3f} ms ± {:.3f} ms (the narrowest of {} kernel_log "
        "exchanges: half its round trip); the host's kernel log lines ({}{}) are shifted onto the "
        "tester's clock, their host times kept in the JSON report (host_unix_ns)",
        static_cast<double>(clock_.offset_ns) / 1e6,
        static_cast<double>(clock_.uncertainty_ns) / 1e6, clock_.exchanges, clock_.source,
        stamp_clock_ == "monotonic"
            ? ", their stamps taken as CLOCK_MONOTONIC: the host has no scheduler debug file to "
              "place the printk clock, so lines may sit off by the difference of the two"
        : stamp_clock_.empty() ? ""
                               : ", stamps placed by " + stamp_clock_));
  return out;
}

}  // namespace roceconf::engine
