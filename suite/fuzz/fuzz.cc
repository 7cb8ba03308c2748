#include "suite/fuzz/fuzz.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dissector/names.h"
#include "dissector/opcode.h"
#include "dissector/summary.h"
#include "suite/engine/case_context.h"
#include "suite/engine/case_stop.h"
#include "suite/engine/liveness.h"
#include "suite/engine/runner.h"
#include "suite/engine/script.h"
#include "suite/engine/script_check.h"

namespace roceconf::fuzz {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::uint64_t rss_kib() {
  std::ifstream in("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
}

std::uint64_t mix64(std::uint64_t x) {  // splitmix64
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The sentinel and the victim, brought to the episode's phase: case-language lines.
std::vector<std::string> setup_lines(Phase phase, bool control) {
  const std::string make = control ? "open" : "connect";
  std::vector<std::string> out = {make + " s", "new m"};
  switch (phase) {
    case Phase::kEstablished:
      out.push_back(make + " v pmtu=1024");
      break;
    case Phase::kMidMessage:
      out.push_back(make + " v pmtu=1024");
      out.push_back("send v SEND_FIRST len=1024");
      break;
    case Phase::kAfterNak:
      out.push_back(make + " v pmtu=1024");
      out.push_back("send v SEND_ONLY psn=1 ackreq=1 len=8");
      out.push_back("expect v NAK syndrome=psn_seq_err");
      break;
    case Phase::kBeforeRtu:
      out.push_back("connect v pmtu=1024 rtu=0");
      break;
    case Phase::kAfterDreq:
      out.push_back("connect v pmtu=1024");
      out.push_back("send v DREQ");
      out.push_back("expect v DREP");
      break;
    case Phase::kRequester:
      out.push_back("open v pmtu=1024");
      out.push_back("post send v op=READ len=64");
      out.push_back("expect v RDMA_READ_REQUEST");
      break;
  }
  return out;
}

// Whether the victim's QP is the control API's, so its state can be read and its requester
// asked to send (the phases that go through the CM make it by rdma_cm).
bool victim_probed(Phase phase, bool control) {
  return control && phase != Phase::kBeforeRtu && phase != Phase::kAfterDreq;
}

std::string input_line(const Input& in) {
  std::string keys = in.keys();
  if (in.seed.kind == Template::Kind::kCm) {
    // CM messages go from a connection of their own (m), so a forged REP or REQ does not
    // rewrite the tester's idea of v; those that name a connection name v's.
    const std::string& m = in.seed.cm;
    const auto given = [&](std::string_view k) {
      return std::any_of(in.changes.begin(), in.changes.end(),
                         [&](const Change& c) { return c.first == k; });
    };
    if (m != "REQ" && m != "ClassPortInfo") {
      if (!given("cm.local_comm_id")) keys += " cm.local_comm_id=@v.local_comm_id";
      if (!given("cm.remote_comm_id")) keys += " cm.remote_comm_id=@v.remote_comm_id";
    }
    if ((m == "DREQ" || m == "LAP") && !given("cm.remote_qpn"))
      keys += " cm.remote_qpn=@v.remote_qpn";
    return "send m " + keys;
  }
  // Responses count their PSN from the target's first: the READ outstanding is at 0.
  if (in.seed.kind == Template::Kind::kResponse &&
      std::none_of(in.changes.begin(), in.changes.end(),
                   [](const Change& c) { return c.first == "psn"; }))
    keys += " psn=0";
  return "send v " + keys;
}

std::expected<engine::Step, std::string> parse_line(engine::CaseContext& ctx,
                                                    const std::string& line) {
  return engine::parse_step("fuzz", line,
                            [&](const std::string& n) { return ctx.has_connection(n); });
}

Finding make_finding(std::string kind, std::string what, std::string detail) {
  Finding f;
  f.kind = std::move(kind);
  f.what = std::move(what);
  f.detail = std::move(detail);
  return f;
}

struct Outcome {
  bool setup_failed = false;
  std::string setup_error;
  std::uint64_t sent = 0, refused = 0;
  std::optional<Finding> finding;
};

bool is_answer(const Packet& p) {
  if (!p.bth) return false;
  if (p.mad) return true;
  const OpcodeInfo& i = opcode_info(p.bth->opcode);
  return p.aeth || i.kind == OpKind::kReadResponse || i.kind == OpKind::kAtomicAck;
}

// Whether the access a sent request makes lies outside the victim's region under its R_Key.
bool outside_region(const engine::Connection& v, const Packet& p) {
  if (!v.region || !p.bth) return false;
  std::uint64_t va = 0, len = 0;
  std::uint32_t rkey = 0;
  if (p.reth) {
    va = p.reth->va;
    rkey = p.reth->rkey;
    len =
        opcode_info(p.bth->opcode).kind == OpKind::kReadRequest ? p.reth->dmalen : p.payload.size();
  } else if (p.atomiceth) {
    va = p.atomiceth->va;
    rkey = p.atomiceth->rkey;
    len = 8;
  } else {
    return false;
  }
  if (len == 0 || rkey != v.region->rkey) return false;
  const unsigned __int128 start = v.region->va, end = start + v.region->length;
  return va < start || static_cast<unsigned __int128>(va) + len > end;
}

// One episode from a reset target: set-up, the inputs, the oracle.
Outcome run_episode(engine::Target& target, Phase phase, const std::vector<Input>& inputs,
                    const FuzzOptions& options, std::uint64_t seed) {
  Outcome out;
  const bool control = target.capabilities().control;
  std::size_t index = 0;  // of the input being sent
  const auto found = [&](std::string kind, std::string what, std::string detail) {
    if (out.finding) return;
    Finding f = make_finding(std::move(kind), std::move(what), std::move(detail));
    f.at = index;
    f.phase = phase;
    f.found = inputs;
    out.finding = std::move(f);
  };
  engine::CaseDef def;
  def.id = "fuzz/episode";
  def.area = "fuzz";
  def.source = "fuzz";
  def.run = [&](engine::CaseContext& ctx) {
    for (const auto& line : setup_lines(phase, control)) {
      auto st = parse_line(ctx, line);
      if (!st) ctx.error(fmt::format("fuzz set-up '{}': {}", line, st.error()));
      ctx.set_step(line);
      try {
        engine::run_step(ctx, *st);
      } catch (const engine::CaseStop& stop) {
        out.setup_failed = true;
        out.setup_error = fmt::format("'{}': {}", line, stop.what());
        return;
      }
    }
    engine::Connection& v = ctx.connection("v");
    for (index = 0; index < inputs.size(); ++index) {
      const Input& in = inputs[index];
      const std::string line = input_line(in);
      auto st = parse_line(ctx, line);
      if (!st) {
        ++out.refused;
        continue;
      }
      ctx.set_step(line);
      const std::uint32_t expected = v.flow_psn;  // a duplicate is ACKed without being done
      std::vector<std::vector<std::uint8_t>> frames;
      try {
        const auto& send = std::get<engine::step::Send>(st->action);
        if (send.kind == engine::step::Send::Kind::kCm)
          engine::run_step(ctx, *st);  // its @v references are read as it runs
        else
          frames = ctx.send(v, send.op, send.fields);
      } catch (const engine::CaseStop& stop) {
        if (stop.verdict != report::Verdict::kError) throw;
        ++out.refused;  // the builder could not make it (a value the connection cannot take)
        continue;
      }
      ++out.sent;
      const bool bad_icrc = in.bad_icrc();
      bool outside = false;
      std::uint32_t psn = 0;
      if (!frames.empty()) {
        const Packet p = decode(frames.back());
        outside = !bad_icrc && outside_region(v, p);
        if (p.bth) psn = p.bth->psn;
        outside = outside && psn == expected;
      }
      try {
        for (const auto& r : ctx.collect(nullptr, options.timing.silence_window(2))) {
          engine::learn_expected_psn(v, r.packet);
          if (!is_answer(r.packet)) continue;
          if (bad_icrc)
            found("wrong-answer", "bad-icrc",
                  fmt::format("a frame with a bad ICRC was answered: {}", summarize(r.packet)));
          else if (outside && r.packet.bth->dqpn == v.local_qpn && r.packet.bth->psn == psn &&
                   (!r.packet.aeth || aeth_type(r.packet.aeth->syndrome) == AethType::kAck))
            found("wrong-answer", "outside-region",
                  fmt::format("an access outside the region was answered as done: {}",
                              summarize(r.packet)));
        }
      } catch (const engine::CaseStop& stop) {
        if (stop.verdict != report::Verdict::kFail) throw;
        found("wrong-answer", "framing", stop.what());
      }
    }
    // The oracle: the sentinel, the CM, the victim.
    const engine::Liveness sentinel = engine::probe_connection(ctx, ctx.connection("s"));
    const engine::Liveness cm = engine::probe_cm(ctx);
    if (!sentinel.ok && !cm.ok)
      found("dead", "dead",
            fmt::format("the sentinel connection and the CM answer nothing ({}; {})",
                        sentinel.detail, cm.detail));
    else if (!cm.ok)
      found("wedged", "cm", cm.detail);
    else if (!sentinel.ok)
      found("wedged", "sentinel", sentinel.detail);
    if (victim_probed(phase, control)) {
      const engine::Liveness victim = engine::probe_connection(ctx, v);
      if (!victim.ok) found("wedged", "victim", victim.detail);
    }
  };
  const report::CaseResult r = engine::run_case(target, def, options.timing, seed);
  if (r.verdict == report::Verdict::kError && !out.setup_failed && !out.finding) {
    out.setup_failed = true;
    out.setup_error = r.reason;
  }
  if (r.verdict == report::Verdict::kFail && !out.finding && !out.setup_failed)
    // A step of the oracle failed outside a probe (a malformed answer seen by the wire checks).
    out.finding = make_finding("wrong-answer", "framing", r.reason);
  if (out.finding) {
    out.finding->phase = phase;
    out.finding->found = inputs;
  }
  return out;
}

std::string signature(const Finding& f) {
  return f.kind + ": " + f.what;
}

class Shrinker {
 public:
  Shrinker(engine::Target& target, const FuzzOptions& options, std::string sig, std::uint64_t seed)
      : target_(target), options_(options), sig_(std::move(sig)), seed_(seed) {}
  std::size_t runs() const { return runs_; }

  bool fails(Phase phase, const std::vector<Input>& inputs) {
    if (runs_ >= options_.shrink_budget || inputs.empty()) return false;
    if (options_.interrupted && options_.interrupted->load()) return false;
    ++runs_;
    const Outcome o = run_episode(target_, phase, inputs, options_, seed_);
    if (!o.finding || signature(*o.finding) != sig_) return false;
    at_ = o.finding->at;
    return true;
  }
  std::size_t at() const { return at_; }  // of the last run that gave the finding

  // ddmin over the inputs, then each input's changes one by one, then a simpler phase.
  std::vector<Input> shrink(Phase& phase, std::vector<Input> inputs) {
    std::size_t n = 2;
    while (inputs.size() >= 2) {
      const std::size_t chunk = (inputs.size() + n - 1) / n;
      bool reduced = false;
      for (std::size_t start = 0; start < inputs.size(); start += chunk) {
        std::vector<Input> rest(inputs.begin(),
                                inputs.begin() + static_cast<std::ptrdiff_t>(start));
        rest.insert(
            rest.end(),
            inputs.begin() + static_cast<std::ptrdiff_t>(std::min(inputs.size(), start + chunk)),
            inputs.end());
        if (fails(phase, rest)) {
          inputs = std::move(rest);
          n = std::max<std::size_t>(n - 1, 2);
          reduced = true;
          break;
        }
      }
      if (!reduced) {
        if (n >= inputs.size()) break;
        n = std::min(n * 2, inputs.size());
      }
    }
    for (std::size_t i = 0; i < inputs.size(); ++i)
      for (std::size_t k = inputs[i].changes.size(); k-- > 0;) {
        std::vector<Input> fewer = inputs;
        fewer[i].changes.erase(fewer[i].changes.begin() + static_cast<std::ptrdiff_t>(k));
        if (fails(phase, fewer)) inputs = std::move(fewer);
      }
    if (phase != Phase::kEstablished && phase != Phase::kRequester &&
        fails(Phase::kEstablished, inputs))
      phase = Phase::kEstablished;
    return inputs;
  }

 private:
  engine::Target& target_;
  const FuzzOptions& options_;
  std::string sig_;
  std::uint64_t seed_;
  std::size_t runs_ = 0;
  std::size_t at_ = 0;
};

}  // namespace

std::string render_script(const Finding& f, bool control, const std::vector<std::string>& header) {
  const Phase phase = f.phase;
  const std::vector<Input>& inputs = f.shrunk;
  std::string out;
  for (const auto& h : header) out += "// " + h + "\n";
  const bool icrc =
      std::any_of(inputs.begin(), inputs.end(), [](const Input& in) { return in.bad_icrc(); });
  if (icrc) {
    out += "clause: 7.8.1; CA17-24; 9.6; 13.4\n";
    out +=
        "rule: A packet whose ICRC does not check is discarded silently; no input stops a "
        "connection or the CM\n";
  } else {
    out += "clause: 9.6; 9.7.5; 13.4\n";
    out +=
        "rule: No input stops the device: every other connection and the CM still answer, "
        "and a QP that got it answers or is in Error\n";
  }
  out += "checked: unchecked\n";
  out += "level: MUST\n";
  out += control ? "needs: control, destructive\n" : "needs: responder, destructive\n";
  for (const auto& l : setup_lines(phase, control)) out += l + "\n";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Input& in = inputs[i];
    out += input_line(in) + "\n";
    if (f.what == "outside-region" && i == f.at)
      out += "+0...2rtt expect v NAK   // an access outside the region: Remote Access Error\n";
    if (in.bad_icrc()) out += "+0...2rtt expect nothing   // a bad ICRC is never answered\n";
  }
  out += "alive s\nalive\n";
  if (victim_probed(phase, control)) out += "alive v\n";
  return out;
}

FuzzResult run_fuzz(engine::Target& target, const Corpus& corpus, const FuzzOptions& options,
                    const LineSink& snapshots, const LineSink& progress) {
  FuzzResult result;
  const auto t0 = Clock::now();
  FuzzOptions opts = options;
  if (!opts.rtt_given) {
    std::string note;
    opts.timing.rtt = engine::calibrate_rtt(target, note);
  }
  const engine::Capabilities caps = target.capabilities();
  if (!caps.control && !caps.responder) {
    result.error =
        "the target has neither the control API nor a responder (RESPONDER_CONVENTION.md): the "
        "fuzzer needs a connection to send to and to probe";
    return result;
  }
  if (corpus.size() == 0) {
    result.error = "the corpus holds no seed frames";
    return result;
  }
  Mutator mutator(corpus, caps.control, caps.responder, mix64(opts.seed));
  std::uint64_t snapshot_inputs = 0;
  double snapshot_t = 0;
  auto last_snapshot = t0;
  const auto snapshot = [&](bool final) {
    const double t = since(t0);
    nlohmann::json j;
    j["t_s"] = std::round(t * 1000) / 1000;
    j["unix_ns"] = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
    j["episodes"] = result.episodes;
    j["inputs"] = result.inputs;
    j["refused"] = result.refused;
    j["setup_failures"] = result.setup_failures;
    const double dt = t - snapshot_t;
    j["inputs_per_s"] =
        dt > 0 ? std::round(static_cast<double>(result.inputs - snapshot_inputs) / dt) : 0.0;
    j["findings"] = result.seen;
    j["rss_kib"] = rss_kib();
    if (final) j["final"] = true;
    snapshot_inputs = result.inputs;
    snapshot_t = t;
    last_snapshot = Clock::now();
    result.seconds = t;
    if (snapshots) snapshots(j.dump());
    if (progress) {
      std::uint64_t findings = 0;
      for (const auto& [k, n] : result.seen) findings += n;
      progress(fmt::format("fuzz: {:.0f} s, {} episodes, {} inputs ({}/s), {} findings, rss {} KiB",
                           t, result.episodes, result.inputs, j["inputs_per_s"].get<double>(),
                           findings, j["rss_kib"].get<std::uint64_t>()));
    }
  };
  const auto bounded = [&] {
    if (opts.interrupted && opts.interrupted->load()) {
      result.interrupted = true;
      return true;
    }
    if (opts.duration_s && since(t0) >= *opts.duration_s) return true;
    if (opts.inputs && result.inputs >= *opts.inputs) return true;
    return false;
  };
  snapshot(false);
  std::uint64_t setup_failures_in_a_row = 0;
  while (!bounded()) {
    const Mutator::Episode e = mutator.next(opts.max_inputs_per_episode);
    const std::uint64_t episode_seed = mix64(opts.seed ^ mix64(result.episodes + 1));
    const std::uint64_t before = result.inputs;
    Outcome o = run_episode(target, e.phase, e.inputs, opts, episode_seed);
    ++result.episodes;
    result.inputs += o.sent;
    result.refused += o.refused;
    if (o.setup_failed) {
      ++result.setup_failures;
      // A reset target that cannot even be connected to: dead if it worked before, else the
      // fuzz cannot run.
      if (result.episodes == result.setup_failures && result.episodes >= 3) {
        result.error = "the target could not be set up for an episode: " + o.setup_error;
        break;
      }
      if (++setup_failures_in_a_row < 3) continue;
      o.finding = make_finding(
          "dead", "set-up",
          "after a reset the target could not be connected to three times: " + o.setup_error);
      o.finding->phase = e.phase;
      o.finding->found = e.inputs;
    } else {
      setup_failures_in_a_row = 0;
    }
    if (since(last_snapshot) >= opts.snapshot_every_s) snapshot(false);
    if (!o.finding) continue;
    Finding f = std::move(*o.finding);
    ++result.seen[f.kind];
    const bool first_of_class = std::none_of(result.findings.begin(), result.findings.end(),
                                             [&](const Finding& g) { return g.kind == f.kind; });
    if (!first_of_class) continue;
    f.episode = result.episodes - 1;
    f.inputs_before = before;
    f.seconds = since(t0);
    if (progress)
      progress(fmt::format("fuzz: {} in episode {} ({} inputs, phase {}): {}", f.kind, f.episode,
                           f.found.size(), phase_name(f.phase), f.detail));
    Phase phase = f.phase;
    f.shrunk = f.found;
    if (opts.shrink) {
      Shrinker s(target, opts, signature(f), episode_seed);
      if (s.fails(phase, f.found)) {
        f.shrunk = s.shrink(phase, f.found);
        f.at = s.at();
      } else if (progress) {
        progress(
            "fuzz: the episode does not give the finding again from a reset target; "
            "the reproducer is the episode as found");
      }
      f.shrink_runs = s.runs();
      f.phase = phase;
    }
    const std::vector<std::string> header = {
        fmt::format("Fuzz finding ({}): {}", f.kind, f.detail.substr(0, 160)),
        fmt::format("Found by `roceconf fuzz --seed {}` on {} in episode {} (phase {}), after {} "
                    "inputs and {:.1f} s: {} frames shrunk to {} in {} runs.",
                    opts.seed, target.describe(), f.episode, phase_name(f.phase),
                    f.inputs_before + f.found.size(), f.seconds, f.found.size(), f.shrunk.size(),
                    f.shrink_runs),
        "Replay: roceconf run --cases THIS_FILE --filter 'scripts/*' --destructive (with the "
        "fuzz's target options)."};
    f.script = render_script(f, caps.control, header);
    target.set_destructive(true);
    const engine::CaseDef def =
        engine::load_script("cases/scripts/fuzz-reproducer.rcase", f.script);
    f.replay = engine::run_case(target, def, opts.timing, episode_seed);
    const report::CaseResult& rr = f.replay;
    f.reproduces = rr.verdict == report::Verdict::kFail;
    f.reproduced_reason = rr.verdict == report::Verdict::kFail
                              ? rr.reason
                              : fmt::format("{}: {}", report::verdict_name(rr.verdict), rr.reason);
    result.findings.push_back(std::move(f));
    if (opts.stop_at_first) break;
  }
  snapshot(true);
  return result;
}

}  // namespace roceconf::fuzz
