#include "suite/engine/script.h"

#include <cctype>
#include <sstream>

#include <fmt/format.h>

#include "suite/engine/matcher.h"

namespace roceconf::engine {

namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::expected<Statement, std::string> parse_statement(int line, const std::string& text) {
  Statement s;
  s.line = line;
  s.text = text;
  auto words = split_words(text);
  std::size_t i = 0;
  if (!words.empty() && words[0].starts_with('+')) {
    const std::string& t = words[0];
    const auto dots = t.find("...");
    auto at = parse_duration(
        std::string_view(t).substr(1, dots == std::string::npos ? std::string::npos : dots - 1));
    if (!at) return std::unexpected(at.error());
    s.at = *at;
    if (dots != std::string::npos) {
      auto w = parse_duration(std::string_view(t).substr(dots + 3));
      if (!w) return std::unexpected(w.error());
      s.window = *w;
    }
    i = 1;
  }
  bool in_fields = false;
  bool want_kind = false;  // after `or`: the alternative's kind comes next
  for (; i < words.size(); ++i) {
    const std::string& w = words[i];
    const auto eq = w.find('=');
    const bool is_field =
        eq != std::string::npos && eq > 0 && w.find_first_of("<>!") == std::string::npos;
    if (want_kind) {
      if (is_field || w == "or" || w == "...")
        return std::unexpected("'or' is followed by a packet kind (expect c ACK ... or NAK ...)");
      s.alternatives.back().kind = w;
      want_kind = false;
      in_fields = true;
    } else if (w == "or") {
      if (s.words.size() != 3 || s.words[0] != "expect")
        return std::unexpected("only 'expect CONNECTION KIND ...' takes 'or KIND ...'");
      if (!s.flags.empty())
        return std::unexpected("write the words after the fields at the end of the step");
      s.alternatives.emplace_back();
      want_kind = true;
    } else if (is_field) {
      (s.alternatives.empty() ? s.fields : s.alternatives.back().fields)
          .set(w.substr(0, eq), w.substr(eq + 1));
      in_fields = true;
    } else if (w == "...") {
      in_fields = true;
    } else if (in_fields) {
      s.flags.push_back(w);
    } else {
      s.words.push_back(w);
    }
  }
  if (s.words.empty()) return std::unexpected("a step needs a verb (connect, send, expect, ...)");
  if (want_kind) return std::unexpected("'or' is followed by a packet kind");
  return s;
}

// "connect rc as c" / "connect c": the connection name.
std::string name_after_verb(const Statement& s, CaseContext& ctx) {
  std::vector<std::string> w(s.words.begin() + 1, s.words.end());
  if (!w.empty() && (w[0] == "rc" || w[0] == "RC")) w.erase(w.begin());
  if (!w.empty() && w[0] == "as") w.erase(w.begin());
  if (w.size() != 1) ctx.error(fmt::format("'{}': name one connection", s.words[0]));
  return w[0];
}

TimeNs expect_window(CaseContext& ctx, const Statement& s) {
  if (!s.window) return ctx.timing().expect_window();
  if (s.window->rtts) return ctx.timing().expect_window(*s.window->rtts);
  return s.window->ns;
}

TimeNs silence_window(CaseContext& ctx, const Statement& s) {
  if (!s.window) return ctx.timing().silence_window();
  if (s.window->rtts) return ctx.timing().silence_window(*s.window->rtts);
  return s.window->ns;
}

std::uint64_t number_or_error(CaseContext& ctx, std::string_view key, std::string_view v) {
  auto n = parse_uint(v);
  if (!n) ctx.error(fmt::format("{}: {}", key, n.error()));
  return *n;
}

std::string json_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + json_text(x);
    return out;
  }
  return v.dump();
}

// Compares `key=value` pairs against a JSON object (a WC, a QP attribute set).
std::vector<report::FieldDiff> compare_json(const nlohmann::json& actual, const Assignments& want,
                                            std::string_view prefix, const Connection* c) {
  std::vector<report::FieldDiff> diffs;
  for (const auto& [key, value] : want.items()) {
    const std::string field = fmt::format("{}.{}", prefix, key);
    if (!actual.contains(key)) {
      diffs.push_back({field, value, "(absent)"});
      continue;
    }
    const auto& a = actual[key];
    std::string expected = value;
    if (c && (key == "qp_num" || key == "dest_qp_num") && value == c->name)
      expected = std::to_string(key == "qp_num" ? c->remote_qpn : c->local_qpn);
    // `status=A|B`: any of the values (where the spec allows more than one).
    bool matched = false;
    for (std::size_t from = 0; !matched && from <= expected.size();) {
      const auto bar = expected.find('|', from);
      const std::string one =
          expected.substr(from, bar == std::string::npos ? std::string::npos : bar - from);
      if (a.is_number_unsigned()) {
        auto n = parse_uint(one);
        matched = n && *n == a.get<std::uint64_t>();
      } else {
        matched = json_text(a) == one;
      }
      if (bar == std::string::npos) break;
      from = bar + 1;
    }
    if (!matched)
      diffs.push_back(
          {field, expected,
           a.is_number_unsigned() ? std::to_string(a.get<std::uint64_t>()) : json_text(a)});
  }
  return diffs;
}

void run_counter(CaseContext& ctx, const Statement& s, std::map<std::string, std::uint64_t>& base) {
  // counter NAME >= N | == N | <= N | > N
  if (s.words.size() == 2 && s.words[1] == "snapshot") {
    base = ctx.counters();
    return;
  }
  if (s.words.size() != 4)
    ctx.error("write: counter NAME >= N (or ==, <=, >), or counter snapshot");
  const std::string& name = s.words[1];
  const std::string& op = s.words[2];
  const std::uint64_t want = number_or_error(ctx, "counter", s.words[3]);
  const auto now = ctx.counters();
  const auto it = now.find(name);
  if (it == now.end()) ctx.skip(fmt::format("the target does not expose counter '{}'", name));
  const std::uint64_t delta = it->second - (base.contains(name) ? base[name] : 0);
  const bool ok = op == ">="   ? delta >= want
                  : op == "==" ? delta == want
                  : op == "<=" ? delta <= want
                  : op == ">"  ? delta > want
                               : false;
  if (op != ">=" && op != "==" && op != "<=" && op != ">")
    ctx.error("counter: use >=, ==, <= or >");
  if (!ok)
    ctx.fail(fmt::format("counter {} is {}{}, expected {} {}", name, delta,
                         base.empty() ? "" : " (since the snapshot)", op, want),
             {{"counter." + name, op + " " + std::to_string(want), std::to_string(delta)}});
}

// `@c.FIELD`: a value the connection holds (the target's REQ TID, its comm ID, ...), so a step
// can require what an earlier one read: `expect c REQ tid=@c.req_tid`.
std::string connection_value(CaseContext& ctx, std::string_view ref) {
  const auto dot = ref.find('.');
  if (dot == std::string_view::npos)
    ctx.error(fmt::format("'@{}': write @CONNECTION.FIELD (@c.req_tid)", ref));
  const Connection& c = ctx.connection(std::string(ref.substr(0, dot)));
  const std::string_view field = ref.substr(dot + 1);
  const std::pair<std::string_view, std::uint64_t> fields[] = {{"req_tid", c.req_tid},
                                                               {"local_comm_id", c.local_comm_id},
                                                               {"remote_comm_id", c.remote_comm_id},
                                                               {"local_qpn", c.local_qpn},
                                                               {"remote_qpn", c.remote_qpn},
                                                               {"service_id", c.service_id},
                                                               {"local_psn0", c.local_psn0},
                                                               {"remote_psn0", c.remote_psn0},
                                                               {"pkey", c.pkey},
                                                               {"pmtu", c.pmtu}};
  std::string known;
  for (const auto& [name, value] : fields) {
    if (name == field) return fmt::format("{:#x}", value);
    known += fmt::format("{}{}", known.empty() ? "" : ", ", name);
  }
  ctx.error(fmt::format("'@{}': a connection has {}", ref, known));
}

Assignments resolve_references(CaseContext& ctx, const Assignments& fields) {
  Assignments out;
  for (const auto& [key, value] : fields.items())
    out.set(key, value.starts_with('@') ? connection_value(ctx, std::string_view(value).substr(1))
                                        : value);
  return out;
}

// post send CONNECTION [len=L] [fill=S] [wr_id=N] [imm=I] [solicited=1]: the target's QP sends
// (control post_send, signaled) L bytes of the fill pattern from a fresh buffer.
void run_post_send(CaseContext& ctx, Connection& c, const Assignments& fields) {
  std::uint64_t len = 64, fill = 0, wr_id = 1;
  std::optional<std::uint64_t> imm;
  bool solicited = false;
  for (const auto& [k, v] : fields.items()) {
    if (k == "len")
      len = number_or_error(ctx, k, v);
    else if (k == "fill")
      fill = number_or_error(ctx, k, v);
    else if (k == "wr_id")
      wr_id = number_or_error(ctx, k, v);
    else if (k == "imm")
      imm = number_or_error(ctx, k, v);
    else if (k == "solicited")
      solicited = number_or_error(ctx, k, v) != 0;
    else
      ctx.error(
          fmt::format("post send: unknown option '{}' (len, fill, wr_id, imm, solicited)", k));
  }
  if (len > (1u << 20)) ctx.error("post send: len is at most 1 MiB");
  if (c.target_pd == 0 && !c.via_control) ctx.skip("needs a control-made target QP (open, accept)");
  const auto mr = ctx.control_ok({{"op", "reg_mr"},
                                  {"pd", c.target_pd},
                                  {"length", std::max<std::uint64_t>(1, len)},
                                  {"access", {"LOCAL_WRITE"}}});
  nlohmann::json wr = {{"wr_id", wr_id},
                       {"opcode", imm ? "SEND_WITH_IMM" : "SEND"},
                       {"send_flags", solicited ? nlohmann::json{"SIGNALED", "SOLICITED"}
                                                : nlohmann::json{"SIGNALED"}}};
  if (imm) wr["imm_data"] = *imm;
  if (len > 0) {
    std::string hex;
    for (auto b : fill_pattern(static_cast<std::uint32_t>(fill), len))
      hex += fmt::format("{:02x}", b);
    ctx.control_ok({{"op", "write_mr"}, {"handle", mr["handle"]}, {"data", hex}});
    wr["sg_list"] = {{{"addr", mr["addr"]}, {"length", len}, {"lkey", mr["lkey"]}}};
  }
  ctx.control_ok({{"op", "post_send"}, {"qp_num", c.remote_qpn}, {"wrs", {wr}}});
}

}  // namespace

std::expected<Script, std::string> parse_script(const std::string& path, const std::string& text) {
  Script script;
  script.path = path;
  std::istringstream in(text);
  std::string raw;
  int line = 0;
  bool header = true;
  std::vector<std::string> comment_block;
  while (std::getline(in, raw)) {
    ++line;
    std::string code = raw;
    std::string comment;
    if (const auto slash = raw.find("//"); slash != std::string::npos) {
      code = raw.substr(0, slash);
      comment = trim(std::string_view(raw).substr(slash + 2));
    }
    code = trim(code);
    if (code.empty()) {
      if (header && !comment.empty() && script.statements.empty()) comment_block.push_back(comment);
      continue;
    }
    const auto colon = code.find(':');
    const std::string key = colon == std::string::npos ? "" : trim(code.substr(0, colon));
    if (key == "clause" || key == "rule" || key == "release" || key == "checked" ||
        key == "level" || key == "needs" || key == "title") {
      const std::string value = trim(code.substr(colon + 1));
      if (key == "clause") {
        // Numbers and statement IDs only: the paraphrase goes on the rule: line, so a report
        // can quote the citation alone.
        if (value.find_first_of("():") != std::string::npos || value.find("ch. ") == 0 ||
            value.find(" ch. ") != std::string::npos)
          return std::unexpected(fmt::format(
              "{}:{}: clause: holds clause numbers and statement IDs only (9.7.5.1 C9-97; "
              "9.7.5.2); write the paraphrase on a 'rule:' line",
              path, line));
        script.citation = value;
      }
      if (key == "rule") script.rule = value;
      if (key == "release") script.release = value;
      if (key == "checked") script.checked = value;
      if (key == "title") script.title = value;
      if (key == "level") {
        if (value != "MUST" && value != "SHOULD" && value != "MAY")
          return std::unexpected(fmt::format("{}:{}: level is MUST, SHOULD or MAY", path, line));
        script.requirement = value;
      }
      if (key == "needs")
        for (auto& w : split_words(value)) {
          if (w.ends_with(',')) w.pop_back();
          if (w != "none") script.needs.push_back(w);
        }
      continue;
    }
    header = false;
    auto s = parse_statement(line, code);
    if (!s) return std::unexpected(fmt::format("{}:{}: {}", path, line, s.error()));
    script.statements.push_back(std::move(*s));
  }
  if (!comment_block.empty()) {
    // The first sentence is the title, the rest the description. A sentence ends at ". ", or
    // at a line end unless the line stops mid-phrase.
    const auto continues = [](std::string_view line, std::string_view next) {
      static constexpr std::string_view kJoiners[] = {
          "a",  "an", "the", "its", "their", "and",  "or", "of",  "to",   "with", "for",
          "in", "on", "at",  "by",  "from",  "that", "is", "are", "than", "as",   "not"};
      if (next.empty() || std::islower(static_cast<unsigned char>(next[0]))) return true;
      if (line.ends_with(',') || line.ends_with(';') || line.ends_with(':')) return true;
      const auto space = line.rfind(' ');
      const std::string_view last = space == std::string_view::npos ? line : line.substr(space + 1);
      for (auto j : kJoiners)
        if (last == j) return true;
      return false;
    };
    std::string text;
    std::size_t end = std::string::npos;
    for (std::size_t i = 0; i < comment_block.size(); ++i) {
      const std::string& c = comment_block[i];
      if (!text.empty()) text += ' ';
      const std::size_t at = text.size();
      text += c;
      if (end != std::string::npos) continue;
      if (const auto dot = c.find(". "); dot != std::string::npos) {
        end = at + dot;
      } else if (c.ends_with('.')) {
        end = text.size() - 1;
      } else if (i + 1 < comment_block.size() && !continues(c, comment_block[i + 1])) {
        end = text.size();
      }
    }
    if (script.title.empty()) {
      script.title = end == std::string::npos ? text : text.substr(0, end);
      script.description =
          end == std::string::npos ? "" : trim(std::string_view(text).substr(end + 1));
    } else {
      script.description = text;
    }
  }
  if (script.citation.empty()) return std::unexpected(path + ": no 'clause:' line");
  if (script.requirement.empty()) return std::unexpected(path + ": no 'level:' line");
  if (script.statements.empty()) return std::unexpected(path + ": no steps");
  return script;
}

void run_statement(CaseContext& ctx, const Script& script, const Statement& raw) {
  (void)script;
  Statement resolved = raw;
  resolved.fields = resolve_references(ctx, raw.fields);
  for (auto& alt : resolved.alternatives) alt.fields = resolve_references(ctx, alt.fields);
  const Statement& s = resolved;
  if (s.at && (s.at->ns > 0 || (s.at->rtts && *s.at->rtts > 0)))
    ctx.wait(s.at->rtts ? ctx.timing().scaled(*s.at->rtts) : s.at->ns);
  const std::string& verb = s.words[0];
  const auto conn_arg = [&](std::size_t i) -> Connection& {
    if (s.words.size() <= i) ctx.error(fmt::format("'{}' needs a connection name", verb));
    return ctx.connection(s.words[i]);
  };

  if (verb == "connect") {
    const std::string name = name_after_verb(s, ctx);
    ctx.connect(ctx.new_connection(name), s.fields);
  } else if (verb == "open") {
    const std::string name = name_after_verb(s, ctx);
    ctx.open(ctx.new_connection(name), s.fields);
  } else if (verb == "accept") {
    const std::string name = name_after_verb(s, ctx);
    ctx.accept(ctx.new_connection(name), s.fields);
  } else if (verb == "status") {
    // status CONNECTION state=established [reason=N] ...: cm_status of an accepted connection
    if (s.words.size() != 2 || s.fields.empty())
      ctx.error("write: status CONNECTION state=NAME [reason=N]");
    ctx.expect_status(conn_arg(1), s.fields, expect_window(ctx, s));
  } else if (verb == "new") {
    ctx.new_connection(name_after_verb(s, ctx));
  } else if (verb == "disconnect") {
    ctx.disconnect(conn_arg(1));
  } else if (verb == "send") {
    if (s.words.size() != 3) ctx.error("write: send CONNECTION OPCODE field=value ...");
    const std::string& what = s.words[2];
    if (is_cm_kind(what) || what == "ClassPortInfo") {
      Connection& c = ctx.has_connection(s.words[1]) ? ctx.connection(s.words[1])
                                                     : ctx.new_connection(s.words[1]);
      ctx.cm_send(c, what, s.fields);
    } else {
      ctx.send(conn_arg(1), what, s.fields);
    }
  } else if (verb == "expect") {
    if (s.words.size() >= 2 && s.words[1] == "nothing") {
      Connection* c = nullptr;
      if (s.words.size() == 4 && s.words[2] == "from")
        c = &ctx.connection(s.words[3]);
      else if (s.words.size() != 2)
        ctx.error("write: expect nothing [from CONNECTION]");
      ctx.expect_nothing(c, silence_window(ctx, s));
      return;
    }
    if (s.words.size() != 3) ctx.error("write: expect CONNECTION KIND field=value ...");
    auto mode = CaseContext::ExpectMode::kNext;
    for (const auto& f : s.flags) {
      if (f == "eventually")
        mode = CaseContext::ExpectMode::kEventually;
      else if (f == "after-earlier-acks")
        mode = CaseContext::ExpectMode::kAfterEarlierAcks;
      else
        ctx.error(
            fmt::format("unknown word '{}' after the fields (eventually, after-earlier-acks)", f));
    }
    if (mode == CaseContext::ExpectMode::kAfterEarlierAcks && !s.fields.has("psn"))
      ctx.error("after-earlier-acks needs the psn= of the ACK expected");
    std::vector<Expectation> alternatives = {{s.words[2], s.fields}};
    for (const auto& alt : s.alternatives) alternatives.push_back({alt.kind, alt.fields});
    ctx.expect(&conn_arg(1), alternatives, expect_window(ctx, s), mode);
  } else if (verb == "wait") {
    if (s.words.size() != 2) ctx.error("write: wait DURATION");
    auto d = parse_duration(s.words[1]);
    if (!d) ctx.error(d.error());
    ctx.wait(d->rtts ? ctx.timing().silence_window(*d->rtts) : d->ns);
  } else if (verb == "counter") {
    run_counter(ctx, s, ctx.counter_base);
  } else if (verb == "create") {
    // create cq as NAME depth=N
    if (s.words.size() != 4 || s.words[1] != "cq" || s.words[2] != "as")
      ctx.error("write: create cq as NAME depth=N");
    const auto* depth = s.fields.find("depth");
    ctx.create_cq(s.words[3],
                  depth ? static_cast<std::uint32_t>(number_or_error(ctx, "depth", *depth)) : 16);
  } else if (verb == "post" && s.words.size() == 3 && s.words[1] == "send") {
    run_post_send(ctx, conn_arg(2), s.fields);
  } else if (verb == "post") {
    // post recv CONNECTION count=N len=L
    if (s.words.size() != 3 || s.words[1] != "recv")
      ctx.error("write: post recv|send CONNECTION field=value ...");
    Connection& c = conn_arg(2);
    const std::uint32_t count =
        s.fields.find("count")
            ? static_cast<std::uint32_t>(number_or_error(ctx, "count", *s.fields.find("count")))
            : 1;
    const std::uint32_t len =
        s.fields.find("len")
            ? static_cast<std::uint32_t>(number_or_error(ctx, "len", *s.fields.find("len")))
            : 4096;
    const auto mr = ctx.control_ok({{"op", "reg_mr"},
                                    {"pd", c.target_pd},
                                    {"length", std::max<std::uint32_t>(1, count * len)},
                                    {"access", {"LOCAL_WRITE"}}});
    nlohmann::json wrs = nlohmann::json::array();
    for (std::uint32_t i = 0; i < count; ++i)
      wrs.push_back({{"wr_id", 1000 + i},
                     {"sg_list",
                      {{{"addr", mr["addr"].get<std::uint64_t>() + std::uint64_t{i} * len},
                        {"length", len},
                        {"lkey", mr["lkey"]}}}}});
    ctx.control_ok({{"op", "post_recv"}, {"qp_num", c.remote_qpn}, {"wrs", wrs}});
  } else if (verb == "poll") {
    // poll CONNECTION [empty] field=value ...: the next completion of the connection's CQ
    Connection& c = conn_arg(1);
    std::uint32_t cq = c.target_cq;
    Assignments want;
    for (const auto& [k, v] : s.fields.items()) {
      if (k == "cq")
        cq = ctx.cq(v);
      else
        want.set(k, v);
    }
    const auto r = ctx.control_ok({{"op", "poll_cq"}, {"cq", cq}, {"max", 1}});
    const auto& wc = r["wc"];
    const bool want_empty = s.words.size() == 3 && s.words[2] == "empty";
    if (want_empty) {
      if (!wc.empty())
        ctx.fail("poll: expected no completion, got " + wc[0].dump(),
                 {{"cq", "empty", wc[0].dump()}});
      return;
    }
    if (wc.empty())
      ctx.fail("poll: expected a completion, the CQ is empty", {{"cq", "a completion", "empty"}});
    // IBV_WC_GRH is defined for UD QPs only; RoCE devices (rxe) may set it on RC receives too,
    // so on a connection's completion it is not compared.
    nlohmann::json got = wc[0];
    if (auto flags = got.find("wc_flags"); flags != got.end() && flags->is_array()) {
      nlohmann::json kept = nlohmann::json::array();
      for (const auto& f : *flags)
        if (f != "GRH") kept.push_back(f);
      *flags = kept;
    }
    if (auto diffs = compare_json(got, want, "wc", &c); !diffs.empty())
      ctx.fail("poll: the completion differs: " + wc[0].dump(), diffs);
  } else if (verb == "query") {
    Connection& c = conn_arg(1);
    const auto r = ctx.control_ok({{"op", "query_qp"}, {"qp_num", c.remote_qpn}});
    if (auto diffs = compare_json(r["attr"], s.fields, "qp", &c); !diffs.empty())
      ctx.fail("query: the QP's attributes differ", diffs);
  } else if (verb == "modify") {
    // modify CONNECTION attr=value ... expect=ok|ERRNO
    Connection& c = conn_arg(1);
    nlohmann::json attr = nlohmann::json::object();
    std::string expect = "ok";
    for (const auto& [k, v] : s.fields.items()) {
      if (k == "expect")
        expect = v;
      else if (auto n = parse_uint(v); n)
        attr[k] = *n;
      else
        attr[k] = v;
    }
    const auto r = ctx.control({{"op", "modify_qp"}, {"qp_num", c.remote_qpn}, {"attr", attr}});
    const bool ok = r.value("ok", false);
    const std::string got = ok ? "ok" : r.value("errno", std::string("error"));
    if (got != expect)
      ctx.fail(fmt::format("modify_qp {}: expected {}, got {} {}", attr.dump(), expect, got,
                           r.value("error", std::string())),
               {{"modify_qp", expect, got}});
  } else if (verb == "read" || verb == "write") {
    // read CONNECTION offset=O len=L fill=N | data=HEX; write CONNECTION offset=O len=L fill=N
    Connection& c = conn_arg(1);
    if (!c.region || c.region->mr_handle == 0) ctx.skip("needs a control-made region (open)");
    const std::uint64_t offset =
        s.fields.find("offset") ? number_or_error(ctx, "offset", *s.fields.find("offset")) : 0;
    const std::uint64_t len =
        s.fields.find("len") ? number_or_error(ctx, "len", *s.fields.find("len")) : 64;
    const std::uint32_t seed =
        s.fields.find("fill")
            ? static_cast<std::uint32_t>(number_or_error(ctx, "fill", *s.fields.find("fill")))
            : 0;
    const auto pattern = fill_pattern(seed, len);
    std::string hex;
    for (auto b : pattern) hex += fmt::format("{:02x}", b);
    if (verb == "write") {
      ctx.control_ok(
          {{"op", "write_mr"}, {"handle", c.region->mr_handle}, {"offset", offset}, {"data", hex}});
      return;
    }
    const auto r = ctx.control_ok(
        {{"op", "read_mr"}, {"handle", c.region->mr_handle}, {"offset", offset}, {"length", len}});
    std::string want = hex;
    if (const auto* d = s.fields.find("data")) want = *d;
    if (r["data"].get<std::string>() != want)
      ctx.fail(fmt::format("memory at offset {} differs", offset),
               {{"memory", want.substr(0, 64), r["data"].get<std::string>().substr(0, 64)}});
  } else if (verb == "note") {
    ctx.note(s.text.substr(4));
  } else {
    ctx.error(fmt::format("unknown step '{}'", verb));
  }
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
  def.run = [s = std::move(*script)](CaseContext& ctx) {
    for (const auto& need : s.needs) ctx.require(need);
    for (const auto& st : s.statements) {
      ctx.set_step(fmt::format("{}:{} {}", s.path, st.line, st.text));
      run_statement(ctx, s, st);
    }
  };
  return def;
}

}  // namespace roceconf::engine
