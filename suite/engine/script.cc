// Running the typed steps of a script (parsed and checked in script_parse.cc).
#include <algorithm>

#include <fmt/format.h>

#include "control/codec.h"
#include "control/field_text.h"
#include "control/fields.h"
#include "suite/engine/frame_builder.h"
#include "suite/engine/liveness.h"
#include "suite/engine/script.h"
#include "suite/engine/script_check.h"

namespace roceconf::engine {

namespace {

// The connection a step names (`expect c`, `expect nothing from c`, `post send c`), or none.
const Connection* step_connection(CaseContext& ctx, const Step& s) {
  return std::visit(
      [&](const auto& a) -> const Connection* {
        if constexpr (requires { a.conn.has_value(); })
          return a.conn ? &ctx.connection(*a.conn) : nullptr;
        else if constexpr (requires { a.conn.empty(); })
          return a.conn.empty() ? nullptr : &ctx.connection(a.conn);
        else
          return nullptr;
      },
      s.action);
}

// `Nato`: N local ACK timeouts (4.096 us x 2^timeout, IBA 9.7.6.1.3) of the step's connection.
TimeNs ack_timeouts(CaseContext& ctx, const Step& s, double n) {
  const Connection* c = step_connection(ctx, s);
  if (!c) ctx.error(fmt::format("'{}': a duration in ato needs the step's connection", s.text));
  if (c->ack_timeout == 0) ctx.error("ato: the connection's local ACK timeout is 0 (no timer)");
  return static_cast<TimeNs>(n * 4096.0 * static_cast<double>(std::uint64_t{1} << c->ack_timeout));
}

// An expected packet a requester timer sends may come as late as the timing's tolerance allows.
TimeNs expect_window(CaseContext& ctx, const Step& s) {
  if (!s.window) return ctx.timing().expect_window();
  if (s.window->rtts) return ctx.timing().expect_window(*s.window->rtts);
  if (s.window->ack_timeouts) {
    const Timing& t = ctx.timing();
    return static_cast<TimeNs>(static_cast<double>(ack_timeouts(ctx, s, *s.window->ack_timeouts)) *
                               t.timer_tolerance) +
           t.timer_slack;
  }
  return s.window->ns;
}

// Silence in ato is exact: a timer must not fire before its time.
TimeNs silence_window(CaseContext& ctx, const Step& s) {
  if (!s.window) return ctx.timing().silence_window();
  if (s.window->rtts) return ctx.timing().silence_window(*s.window->rtts);
  if (s.window->ack_timeouts) return ack_timeouts(ctx, s, *s.window->ack_timeouts);
  return s.window->ns;
}

// `@c.FIELD` values read from the connection now (the target's REQ TID, its comm ID, ...), so a
// step can require what an earlier one read: `expect c REQ tid=@c.req_tid`.
Assignments resolve(CaseContext& ctx, const Assignments& fields) {
  Assignments out;
  for (const auto& [key, value] : fields.items()) {
    if (!value.starts_with('@')) {
      out.set(key, value);
      continue;
    }
    const std::string_view ref = std::string_view(value).substr(1);
    const auto dot = ref.find('.');
    if (dot == std::string_view::npos)
      ctx.error(fmt::format("'@{}': write @CONNECTION.FIELD (@c.req_tid)", ref));
    if (ref.substr(0, dot) == "tester") {  // the tester's marking: @tester.vlan
      auto v = marking_field(ctx.target().marking(), ref.substr(dot + 1));
      if (!v) ctx.error(v.error());
      out.set(key, std::to_string(*v));
      continue;
    }
    const Connection& c = ctx.connection(std::string(ref.substr(0, dot)));
    auto v = connection_field(c, ref.substr(dot + 1));
    if (!v) ctx.error(fmt::format("'@{}': {}", ref, v.error()));
    out.set(key, fmt::format("{:#x}", *v));
  }
  return out;
}

// One visitor a step: what the verb does against the target.
struct Runner {
  CaseContext& ctx;
  const Step& s;

  void operator()(const step::Connect& a) {
    ctx.connect(ctx.new_connection(a.conn), resolve(ctx, a.options));
  }
  void operator()(const step::Open& a) {
    ctx.open(ctx.new_connection(a.conn), resolve(ctx, a.options));
  }
  void operator()(const step::Accept& a) {
    ctx.accept(ctx.new_connection(a.conn), resolve(ctx, a.options));
  }
  void operator()(const step::New& a) { ctx.new_connection(a.conn); }
  void operator()(const step::Disconnect& a) { ctx.disconnect(ctx.connection(a.conn)); }
  void operator()(const step::Status& a) {
    ctx.expect_status(ctx.connection(a.conn), resolve(ctx, a.want), expect_window(ctx, s));
  }
  void operator()(const step::Send& a) {
    const Assignments fields = resolve(ctx, a.fields);
    if (a.kind == step::Send::Kind::kCm) {
      Connection& c =
          ctx.has_connection(a.conn) ? ctx.connection(a.conn) : ctx.new_connection(a.conn);
      ctx.cm_send(c, a.op, fields);
    } else {
      ctx.send(ctx.connection(a.conn), a.op, fields);
    }
  }
  void operator()(const step::Expect& a) {
    std::vector<Expectation> alternatives;
    for (const auto& e : a.alternatives) alternatives.push_back({e.kind, resolve(ctx, e.fields)});
    ctx.expect(&ctx.connection(a.conn), alternatives, expect_window(ctx, s), a.mode);
  }
  void operator()(const step::ExpectNothing& a) {
    ctx.expect_nothing(a.conn ? &ctx.connection(*a.conn) : nullptr, silence_window(ctx, s));
  }
  void operator()(const step::Wait& a) {
    if (a.duration.ack_timeouts) ctx.error("wait: a duration in ato needs a connection");
    ctx.wait(a.duration.rtts ? ctx.timing().silence_window(*a.duration.rtts) : a.duration.ns);
  }
  void operator()(const step::CounterSnapshot&) { ctx.counter_base = ctx.counters(); }
  void operator()(const step::Counter& a) {
    auto& base = ctx.counter_base;
    const auto now = ctx.counters();
    const auto it = now.find(a.name);
    if (it == now.end()) ctx.skip(fmt::format("the target does not expose counter '{}'", a.name));
    const std::uint64_t delta = it->second - (base.contains(a.name) ? base[a.name] : 0);
    const bool ok = a.op == ">="   ? delta >= a.value
                    : a.op == "==" ? delta == a.value
                    : a.op == "<=" ? delta <= a.value
                                   : delta > a.value;
    if (!ok)
      ctx.fail(
          fmt::format("counter {} is {}{}, expected {} {}", a.name, delta,
                      base.empty() ? "" : " (since the snapshot)", a.op, a.value),
          {{"counter." + a.name, a.op + " " + std::to_string(a.value), std::to_string(delta)}});
  }
  void operator()(const step::CreateCq& a) { ctx.create_cq(a.name, a.depth); }
  void operator()(const step::PostRecv& a) {
    Connection& c = ctx.connection(a.conn);
    const auto mr = ctx.setup(
        control::RegMr{.pd = c.target_pd,
                       .length = std::max<std::uint64_t>(1, std::uint64_t{a.count} * a.len),
                       .access = {"LOCAL_WRITE"}});
    control::PostRecv post{.qp_num = c.remote_qpn, .wrs = {}};
    for (std::uint32_t i = 0; i < a.count; ++i)
      post.wrs.push_back(
          {.wr_id = 1000 + i,
           .sg_list = {
               {.addr = mr.addr + std::uint64_t{i} * a.len, .length = a.len, .lkey = mr.lkey}}});
    ctx.setup(post);
  }
  // The target's QP posts `count` WRs under one doorbell. SENDs and WRITEs carry len bytes each
  // of the fill pattern from a fresh buffer; READ responses and atomic results land in the
  // connection's region at `offset` (WR i at offset + i x len, remote address va + i x len).
  void operator()(const step::PostSend& a) {
    Connection& c = ctx.connection(a.conn);
    if (c.target_pd == 0 && !c.via_control)
      ctx.skip("needs a control-made target QP (open, accept)");
    const bool into_region = a.op == "RDMA_READ" || a.op.starts_with("ATOMIC");
    if (into_region && (!c.region || c.region->lkey == 0))
      ctx.skip("needs a control-made region (open, accept) for the result");
    const std::uint64_t total = a.len * a.count;
    std::uint64_t local = 0;
    std::uint32_t lkey = 0;
    if (into_region) {
      if (a.offset + total > c.region->length)
        ctx.error(fmt::format("post send: offset {} + {} bytes is beyond the {}-byte region",
                              a.offset, total, c.region->length));
      local = c.region->va + a.offset;
      lkey = c.region->lkey;
    } else if (total > 0) {
      const auto mr =
          ctx.setup(control::RegMr{.pd = c.target_pd, .length = total, .access = {"LOCAL_WRITE"}});
      ctx.setup(control::WriteMr{.handle = mr.handle,
                                 .offset = 0,
                                 .data = fill_pattern(static_cast<std::uint32_t>(a.fill), total)});
      local = mr.addr;
      lkey = mr.lkey;
    }
    control::PostSend post{.qp_num = c.remote_qpn, .wrs = {}};
    for (std::uint32_t i = 0; i < a.count; ++i) {
      control::SendWr wr;
      wr.wr_id = a.wr_id + i;
      wr.opcode = a.op;
      if (a.signaled) wr.send_flags.push_back("SIGNALED");
      if (a.solicited) wr.send_flags.push_back("SOLICITED");
      if (a.imm) wr.imm_data = static_cast<std::uint32_t>(*a.imm);
      const std::uint64_t at = std::uint64_t{i} * a.len;
      if (a.len > 0)
        wr.sg_list = {
            {.addr = local + at, .length = static_cast<std::uint32_t>(a.len), .lkey = lkey}};
      const auto rkey = static_cast<std::uint32_t>(a.rkey);
      if (a.op.starts_with("RDMA")) wr.rdma = control::SendWr::Rdma{a.va + at, rkey};
      if (a.op == "ATOMIC_FETCH_AND_ADD")
        wr.atomic = control::SendWr::Atomic{a.va + at, a.add, 0, rkey};
      if (a.op == "ATOMIC_CMP_AND_SWP")
        wr.atomic = control::SendWr::Atomic{a.va + at, a.compare, a.swap, rkey};
      post.wrs.push_back(std::move(wr));
    }
    ctx.setup(post);
  }
  void operator()(const step::Poll& a) {
    Connection& c = ctx.connection(a.conn);
    const std::uint32_t cq = a.cq ? ctx.cq(*a.cq) : c.target_cq;
    const auto wc = ctx.setup(control::PollCq{.cq = cq, .max = 1}).wc;
    if (a.empty) {
      if (!wc.empty())
        ctx.fail("poll: expected no completion, got " + control::describe(wc[0]),
                 {{"cq", "empty", control::describe(wc[0])}});
      return;
    }
    if (wc.empty())
      ctx.fail("poll: expected a completion, the CQ is empty", {{"cq", "a completion", "empty"}});
    // IBV_WC_GRH is defined for UD QPs only; RoCE devices (rxe) may set it on RC receives too,
    // so on a connection's completion it is not compared.
    control::WorkCompletion got = wc[0];
    std::erase(got.wc_flags, "GRH");
    if (auto diffs = compare_fields(control::FieldView(got), resolve(ctx, a.want), "wc", &c);
        !diffs.empty())
      ctx.fail("poll: the completion differs: " + control::describe(wc[0]), diffs);
  }
  void operator()(const step::Query& a) {
    Connection& c = ctx.connection(a.conn);
    const auto attr = ctx.setup(control::QueryQp{c.remote_qpn}).attr;
    if (auto diffs = compare_fields(control::FieldView(attr), resolve(ctx, a.want), "qp", &c);
        !diffs.empty())
      ctx.fail("query: the QP's attributes differ", diffs);
  }
  void operator()(const step::Modify& a) {
    Connection& c = ctx.connection(a.conn);
    control::TextFields text;
    const Assignments resolved = resolve(ctx, a.attr);
    for (const auto& [k, v] : resolved.items()) {
      // Numbers as the case wrote them (0x.., yes/no) go as numbers.
      const auto n = parse_uint(v);
      text.emplace_back(k, n ? std::to_string(*n) : v);
    }
    const auto attr = control::qp_attr_from_text(text);
    if (!attr) ctx.error(attr.error());
    const auto r = ctx.call(control::ModifyQp{c.remote_qpn, *attr});
    const std::string got =
        r ? "ok" : (r.error().errno_name.empty() ? "error" : r.error().errno_name);
    if (got != a.expect)
      ctx.fail(fmt::format("modify_qp {}: expected {}, got {} {}", control::describe(*attr),
                           a.expect, got, r ? "" : r.error().message),
               {{"modify_qp", a.expect, got}});
  }
  void operator()(const step::Memory& a) {
    Connection& c = ctx.connection(a.conn);
    if (!c.region || c.region->mr_handle == 0) ctx.skip("needs a control-made region (open)");
    const auto pattern = fill_pattern(a.fill, a.len);
    if (a.write) {
      ctx.setup(
          control::WriteMr{.handle = c.region->mr_handle, .offset = a.offset, .data = pattern});
      return;
    }
    const auto r = ctx.setup(
        control::ReadMr{.handle = c.region->mr_handle, .offset = a.offset, .length = a.len});
    const std::string want = a.data ? *a.data : control::to_hex(pattern);
    const std::string got = control::to_hex(r.data);
    if (got != want)
      ctx.fail(fmt::format("memory at offset {} differs", a.offset),
               {{"memory", want.substr(0, 64), got.substr(0, 64)}});
  }
  void operator()(const step::Note& a) { ctx.note(a.text); }
  void operator()(const step::Alive& a) {
    const Liveness l = a.conn ? probe_connection(ctx, ctx.connection(*a.conn)) : probe_cm(ctx);
    if (!l.ok) ctx.fail(l.detail);
    ctx.note(l.detail);
  }
};

}  // namespace

void run_step(CaseContext& ctx, const Step& s) {
  if (s.at && s.at->ack_timeouts)
    ctx.wait(ack_timeouts(ctx, s, *s.at->ack_timeouts));
  else if (s.at && (s.at->ns > 0 || (s.at->rtts && *s.at->rtts > 0)))
    ctx.wait(s.at->rtts ? ctx.timing().scaled(*s.at->rtts) : s.at->ns);
  std::visit(Runner{ctx, s}, s.action);
}

CaseDef load_script(const std::string& path, const std::string& text) {
  CaseDef def;
  def.source = path;
  std::string id = path;
  if (id.starts_with("cases/")) id.erase(0, 6);
  if (id.ends_with(".rcase")) id.resize(id.size() - 6);
  def.id = id;
  def.area = id.substr(0, id.find('/'));
  auto script = parse_script(path, text);
  if (!script) {
    def.title = "(does not parse)";
    def.run = [message = script.error()](CaseContext& ctx) { ctx.error(message); };
    return def;
  }
  def.title = script->title;
  def.description = script->description;
  def.citation = script->citation;
  def.rule = script->rule;
  def.release = script->release.empty() ? std::string(kCatalogueRelease) : script->release;
  def.checked = script->checked;
  def.clause = clause_text(def.citation, def.release, def.rule);
  def.requirement = script->requirement;
  def.needs = script->needs;
  // def.needs is checked by run_case before the steps run.
  def.run = [s = std::move(*script)](CaseContext& ctx) {
    for (const auto& st : s.steps) {
      ctx.set_step(fmt::format("{}:{} {}", s.path, st.line, st.text));
      run_step(ctx, st);
    }
  };
  return def;
}

}  // namespace roceconf::engine
