#include "suite/soak/soak.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "control/messages.h"
#include "suite/engine/case_context.h"
#include "suite/engine/case_stop.h"
#include "suite/engine/runner.h"
#include "suite/engine/script.h"
#include "suite/soak/render.h"

namespace roceconf::soak {

namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t mix64(std::uint64_t x) {  // splitmix64: one episode's seed from the run's
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::uint64_t rss_kib() {
  std::ifstream in("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
}

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::int64_t unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// What kind of step failed, to tell the same failure from another while shrinking:
// "expect ACK", "expect nothing", "poll", "read", ...
std::string signature(const std::string& failed_step) {
  const auto space = failed_step.find(' ');
  std::istringstream words(space == std::string::npos ? "" : failed_step.substr(space + 1));
  std::vector<std::string> w;
  for (std::string s; words >> s;)
    if (!(w.empty() && s.starts_with('+'))) w.push_back(s);
  if (w.empty()) return failed_step;
  if (w[0] == "expect" && w.size() > 2) return "expect " + w[2];
  return w[0];
}

// Whether an operation counts as traffic (the set-up writes do not).
bool counts(const Op& op) {
  return op.kind != OpKind::kInit && op.kind != OpKind::kInitWords && op.kind != OpKind::kVerify;
}

std::size_t step_count(const std::string& script) {
  std::size_t n = 0;
  std::istringstream in(script);
  for (std::string l; std::getline(in, l);) {
    if (l.empty() || l.starts_with("//")) continue;
    const auto colon = l.find(':');
    const auto space = l.find(' ');
    if (colon != std::string::npos && (space == std::string::npos || colon < space)) continue;
    ++n;
  }
  return n;
}

// A CaseDef that runs a rendered script step by step, calling `at_op` when a new operation's
// first step comes (false stops the episode there, as a pass of what ran).
engine::CaseDef script_case(const std::string& id, const Rendered& rendered,
                            std::function<bool(int op, engine::CaseContext&)> at_op) {
  engine::CaseDef def;
  def.id = id;
  def.area = "soak";
  def.source = "soak";
  auto script = engine::parse_script(id + ".rcase", rendered.text);
  if (!script) {
    def.run = [e = script.error()](engine::CaseContext& ctx) { ctx.error(e); };
    return def;
  }
  def.title = script->title;
  def.needs = script->needs;
  def.run = [s = std::move(*script), &rendered,
             at_op = std::move(at_op)](engine::CaseContext& ctx) {
    int current = -2;
    for (const auto& st : s.steps) {
      const int op = st.line >= 1 && static_cast<std::size_t>(st.line) <= rendered.line_op.size()
                         ? rendered.line_op[st.line - 1]
                         : -1;
      if (op != current && op >= 0) {
        current = op;
        if (at_op && !at_op(op, ctx)) return;
      }
      ctx.set_step(fmt::format("{}:{} {}", s.path, st.line, st.text));
      engine::run_step(ctx, st);
    }
  };
  return def;
}

std::vector<std::uint32_t> pick_pmtus(std::uint32_t n, std::uint32_t max_pmtu, std::mt19937_64& r) {
  std::vector<std::uint32_t> choices;
  for (std::uint32_t m = 256; m <= std::min<std::uint32_t>(max_pmtu, 4096); m *= 2)
    choices.push_back(m);
  if (choices.empty()) choices.push_back(256);
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < n; ++i)
    out.push_back(choices[std::uniform_int_distribution<std::size_t>(0, choices.size() - 1)(r)]);
  return out;
}

// Connections renamed c0, c1, ... in the order they first appear, with their path MTUs.
void compact_connections(Layout& layout, std::vector<Op>& ops) {
  std::map<std::uint8_t, std::uint8_t> to;
  std::vector<std::uint32_t> pmtus;
  for (auto& op : ops) {
    auto [it, added] = to.try_emplace(op.conn, static_cast<std::uint8_t>(to.size()));
    if (added) pmtus.push_back(layout.pmtus[op.conn]);
    op.conn = it->second;
  }
  layout.pmtus = pmtus;
}

class Shrinker {
 public:
  Shrinker(engine::Target& target, const SoakOptions& options, Layout layout, std::string sig)
      : target_(target), options_(options), layout_(std::move(layout)), sig_(std::move(sig)) {}

  std::size_t runs() const { return runs_; }
  const Layout& layout() const { return layout_; }

  // Whether `ops` still fails the same way, run from a reset target.
  bool fails(const std::vector<Op>& ops, const Layout& layout) {
    if (runs_ >= options_.shrink_budget || ops.empty()) return false;
    if (options_.interrupted && options_.interrupted->load()) return false;
    ++runs_;
    const Rendered rendered = render(layout, ops, {"soak candidate", {}});
    const engine::CaseDef def = script_case("soak/reproducer", rendered, nullptr);
    const report::CaseResult r = engine::run_case(target_, def, options_.timing, options_.seed);
    return r.verdict == report::Verdict::kFail && signature(r.failed_step) == sig_;
  }

  std::vector<Op> shrink(std::vector<Op> ops) {
    ops = ddmin(std::move(ops));
    // Then simpler operations, and again fewer, until nothing changes.
    for (int round = 0; round < 4; ++round) {
      bool changed = false;
      const auto attempt = [&](std::vector<Op> candidate) {
        if (!fails(candidate, layout_)) return false;
        ops = std::move(candidate);
        changed = true;
        return true;
      };
      {
        std::vector<Op> serial = ops;  // one operation a batch
        bool differs = false;
        for (std::size_t i = 0; i < serial.size(); ++i) {
          differs = differs || serial[i].batch != i;
          serial[i].batch = static_cast<std::uint32_t>(i);
        }
        if (differs) attempt(std::move(serial));
      }
      for (std::size_t i = 0; i < ops.size(); ++i) {
        for (const std::uint32_t len : {1u, 16u}) {
          // An INIT of length 0 covers the whole data area.
          const bool whole = ops[i].kind == OpKind::kInit && ops[i].len == 0;
          if (ops[i].kind == OpKind::kInitWords || ops[i].kind == OpKind::kVerify ||
              (!whole && ops[i].len <= len))
            continue;
          std::vector<Op> shorter = ops;
          shorter[i].len = len;
          if (attempt(std::move(shorter))) break;
        }
        if (ops[i].count > 1) {
          std::vector<Op> fewer = ops;
          fewer[i].count = 1;
          attempt(std::move(fewer));
        }
        if (ops[i].kind == OpKind::kDupOld) {
          // A duplicate of the last request needs fewer requests before it.
          std::vector<Op> last = ops;
          last[i].kind = OpKind::kDupLast;
          if (!attempt(std::move(last)) && ops[i].back > 1) {
            std::vector<Op> nearer = ops;
            nearer[i].back = 1;
            attempt(std::move(nearer));
          }
        }
      }
      for (std::size_t i = ops.size(); i-- > 0 && ops.size() > 1;) {
        std::vector<Op> rest = ops;
        rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
        attempt(std::move(rest));
      }
      if (!changed) break;
    }
    {
      std::vector<Op> renamed = ops;
      Layout layout = layout_;
      compact_connections(layout, renamed);
      if (fails(renamed, layout)) {
        ops = std::move(renamed);
        layout_ = std::move(layout);
      }
    }
    return ops;
  }

 private:
  // ddmin: drop ever smaller chunks while the rest still fails.
  std::vector<Op> ddmin(std::vector<Op> ops) {
    std::size_t n = 2;
    while (ops.size() >= 2) {
      const std::size_t chunk = (ops.size() + n - 1) / n;
      bool reduced = false;
      for (std::size_t start = 0; start < ops.size(); start += chunk) {
        std::vector<Op> rest(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(start));
        rest.insert(rest.end(),
                    ops.begin() + static_cast<std::ptrdiff_t>(std::min(ops.size(), start + chunk)),
                    ops.end());
        if (fails(rest, layout_)) {
          ops = std::move(rest);
          n = std::max<std::size_t>(n - 1, 2);
          reduced = true;
          break;
        }
      }
      if (!reduced) {
        if (n >= ops.size()) break;
        n = std::min(n * 2, ops.size());
      }
    }
    return ops;
  }

  engine::Target& target_;
  const SoakOptions& options_;
  Layout layout_;
  std::string sig_;
  std::size_t runs_ = 0;
};

}  // namespace

std::expected<Layout, std::string> soak_layout(engine::Target& target, const SoakOptions& options,
                                               std::mt19937_64& random) {
  const engine::Capabilities caps = target.capabilities();
  Layout layout;
  layout.pmtus = pick_pmtus(options.connections, std::min(options.max_pmtu, caps.max_pmtu), random);
  if (caps.control) {
    layout.control = true;
    return layout;  // `open`'s region (64 KiB) and receives (16 of 4096 bytes)
  }
  if (!caps.responder)
    return std::unexpected(
        "the target has neither the control API nor a responder (RESPONDER_CONVENTION.md): "
        "there is nothing to soak");
  // The responder's region and receive size, from one connection's REP.
  engine::CaseDef probe;
  probe.id = "soak/probe";
  probe.area = "soak";
  probe.needs = {"responder"};
  probe.run = [&layout](engine::CaseContext& ctx) {
    engine::Connection& c = ctx.new_connection("c");
    ctx.connect(c, {});
    if (!c.region) ctx.fail("the REP carried no region");
    layout.region = c.region->length;
    layout.recv_len = c.region->recv_size;
  };
  const report::CaseResult r = engine::run_case(target, probe, options.timing, options.seed);
  if (r.verdict != report::Verdict::kPass)
    return std::unexpected(
        fmt::format("a probe connection to the responder did not work: {}", r.reason));
  if (layout.region < 4096 + layout.atomic_words * 8)
    return std::unexpected(
        fmt::format("the responder's region is {} bytes: a soak needs at least {}", layout.region,
                    4096 + layout.atomic_words * 8));
  return layout;
}

SoakResult run_soak(engine::Target& target, const SoakOptions& options,
                    const SnapshotSink& snapshots, const ProgressSink& progress) {
  SoakResult result;
  const auto t0 = Clock::now();
  SoakOptions opts = options;
  if (!opts.rtt_given) {
    std::string note;
    opts.timing.rtt = engine::calibrate_rtt(target, note);
  }
  std::mt19937_64 layout_random(mix64(opts.seed));
  auto base = soak_layout(target, opts, layout_random);
  if (!base) {
    result.error = base.error();
    return result;
  }
  auto last_snapshot = t0;
  std::uint64_t snapshot_ops = 0;
  double snapshot_t = 0;
  const auto snapshot = [&](engine::CaseContext* ctx, const Layout& layout,
                            const Rendered* rendered, int op, bool final) {
    const double t = since(t0);
    nlohmann::json j;
    j["t_s"] = std::round(t * 1000) / 1000;
    j["unix_ns"] = unix_ns();
    j["episode"] = result.episodes;
    j["ops"] = result.ops;
    j["payload_bytes"] = result.payload;
    const double dt = t - snapshot_t;
    j["ops_per_s"] = dt > 0 ? std::round(static_cast<double>(result.ops - snapshot_ops) / dt) : 0.0;
    j["divergences"] = result.divergence ? 1 : 0;
    j["rss_kib"] = rss_kib();
    if (final) j["final"] = true;
    if (rendered && op >= 0 && static_cast<std::size_t>(op) < rendered->receives_posted.size())
      j["outstanding"] = {{"receives_posted", rendered->receives_posted[op]},
                          {"psn_gaps_open", rendered->gaps_open[op]}};
    if (ctx) {
      nlohmann::json conns = nlohmann::json::array();
      for (std::size_t i = 0; i < layout.pmtus.size(); ++i) {
        const std::string name = fmt::format("c{}", i);
        if (!ctx->has_connection(name)) continue;
        engine::Connection& c = ctx->connection(name);
        nlohmann::json cj{{"name", name},
                          {"qp_num", c.remote_qpn},
                          {"pmtu", c.pmtu},
                          {"tester_next_psn", c.next_psn}};
        if (c.via_control) {
          auto q = ctx->call(control::QueryQp{.qp_num = c.remote_qpn});
          if (q && q->attr.qp_state) cj["qp_state"] = *q->attr.qp_state;
          if (q && q->attr.sq_psn) cj["target_sq_psn"] = *q->attr.sq_psn;
          if (q && q->attr.rq_psn) cj["target_rq_psn"] = *q->attr.rq_psn;
        }
        conns.push_back(std::move(cj));
      }
      j["connections"] = std::move(conns);
      if (layout.control) {
        auto counters = ctx->call(control::Counters{});
        if (counters) j["counters"] = counters->counters;
      }
    }
    snapshot_ops = result.ops;
    snapshot_t = t;
    last_snapshot = Clock::now();
    result.seconds = t;
    if (snapshots) snapshots(j.dump());
    if (progress)
      progress(
          fmt::format("soak: {:.0f} s, episode {}, {} operations ({}/s), {:.1f} MB moved, {} "
                      "divergences, rss {} KiB",
                      t, result.episodes, result.ops, j["ops_per_s"].get<double>(),
                      static_cast<double>(result.payload) / 1e6, result.divergence ? 1 : 0,
                      j["rss_kib"].get<std::uint64_t>()));
  };
  const auto bounded = [&] {
    if (opts.interrupted && opts.interrupted->load()) {
      result.interrupted = true;
      return true;
    }
    if (opts.duration_s && since(t0) >= *opts.duration_s) return true;
    if (opts.ops && result.ops >= *opts.ops) return true;
    return false;
  };
  snapshot(nullptr, *base, nullptr, -1, false);
  while (!bounded()) {
    const std::uint64_t episode_seed = mix64(opts.seed ^ mix64(result.episodes + 1));
    std::mt19937_64 random(episode_seed);
    Layout layout = *base;
    layout.pmtus = pick_pmtus(opts.connections,
                              std::min(opts.max_pmtu, target.capabilities().max_pmtu), random);
    std::uint32_t batches = opts.episode_batches;
    const std::vector<Op> ops = generate(layout, opts.mix, batches, random);
    const Rendered rendered =
        render(layout, ops, {fmt::format("soak episode {}", result.episodes), {}});
    int reached = -1;
    const engine::CaseDef def = script_case(fmt::format("soak/episode-{}", result.episodes),
                                            rendered, [&](int op, engine::CaseContext& ctx) {
                                              // Operations before `op` are done.
                                              for (int k = reached + 1; k < op; ++k)
                                                if (counts(ops[static_cast<std::size_t>(k)]))
                                                  ++result.ops;
                                              reached = std::max(reached, op - 1);
                                              if (bounded()) return false;
                                              if (since(last_snapshot) >= opts.snapshot_every_s)
                                                snapshot(&ctx, layout, &rendered, op, false);
                                              return true;
                                            });
    const report::CaseResult r = engine::run_case(target, def, opts.timing, opts.seed);
    ++result.episodes;
    if (r.verdict == report::Verdict::kPass) {
      if (!result.interrupted && !(opts.ops && result.ops >= *opts.ops) &&
          !(opts.duration_s && since(t0) >= *opts.duration_s)) {
        for (int k = reached + 1; k < static_cast<int>(ops.size()); ++k)
          if (counts(ops[static_cast<std::size_t>(k)])) ++result.ops;
        result.payload += rendered.payload;
      }
      continue;
    }
    if (r.verdict != report::Verdict::kFail) {
      result.error = fmt::format("episode {} ended {}: {} (at {})", result.episodes - 1,
                                 report::verdict_name(r.verdict), r.reason, r.failed_step);
      break;
    }
    // A divergence: shrink the operations up to the failing one.
    Divergence d;
    d.episode = result.episodes - 1;
    d.episode_seed = episode_seed;
    d.reason = r.reason;
    d.step = r.failed_step;
    const int failing = op_of_step(rendered, r.failed_step);
    std::vector<Op> prefix(ops.begin(), failing >= 0 ? ops.begin() + failing + 1 : ops.end());
    d.ops_before = prefix.size();
    if (progress)
      progress(fmt::format("soak: divergence in episode {} at operation {} of {}: {}", d.episode,
                           failing, ops.size(), r.reason));
    Layout final_layout = layout;
    std::vector<Op> shrunk = prefix;
    if (opts.shrink) {
      Shrinker shrinker(target, opts, layout, signature(r.failed_step));
      if (shrinker.fails(prefix, layout)) {
        shrunk = shrinker.shrink(prefix);
        final_layout = shrinker.layout();
      } else if (progress) {
        progress(
            "soak: the episode's operations up to the divergence do not fail again alone; "
            "the reproducer is the whole episode");
        shrunk = ops;
      }
      d.shrink_runs = shrinker.runs();
    }
    d.ops_after = shrunk.size();
    std::set<std::string> kinds;
    for (const auto& op : shrunk) kinds.insert(std::string(op_kind_name(op.kind)));
    // Once more, from the text as `roceconf run --cases` loads it; its failure names the file.
    const auto run_text = [&](const std::string& text) {
      const engine::CaseDef def = engine::load_script("cases/scripts/soak-reproducer.rcase", text);
      return engine::run_case(target, def, opts.timing, opts.seed);
    };
    const report::CaseResult bare = run_text(render(final_layout, shrunk, {"soak", {}}).text);
    const std::string& why = bare.verdict == report::Verdict::kFail ? bare.reason : r.reason;
    Header header;
    header.title = fmt::format("Soak reproducer: {}", why.substr(0, 160));
    header.description = {
        fmt::format("Found by `roceconf soak --seed {}` on {} (episode {}, its seed {:#x}): {} "
                    "operations up to the divergence, shrunk to {} in {} runs.",
                    opts.seed, target.describe(), d.episode, episode_seed, d.ops_before,
                    d.ops_after, d.shrink_runs),
        fmt::format("In the soak the step that failed was: {}", r.failed_step),
        "Run it alone: roceconf run --cases THIS_FILE --filter 'scripts/*' (with the soak's "
        "target options)."};
    d.script = render(final_layout, shrunk, header).text;
    d.script_steps = step_count(d.script);
    const report::CaseResult rr = run_text(d.script);
    d.reproduces = rr.verdict == report::Verdict::kFail;
    d.reproduced_reason = rr.reason;
    result.divergence = std::move(d);
    break;
  }
  snapshot(nullptr, *base, nullptr, -1, true);
  return result;
}

}  // namespace roceconf::soak
