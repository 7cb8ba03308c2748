// Parsing a script: its header, its lines into words, and each line into a typed step, every key
// and value checked (script_check.cc) before the case runs.
#include <cctype>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "suite/engine/script.h"
#include "suite/engine/script_check.h"

namespace roceconf::engine {

namespace {

using Fail = std::unexpected<std::string>;

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

// A line in words: the time, the words before the first key=value, the fields, the bare words
// after them, and the `or KIND f=v` alternatives of an expect.
struct Words {
  std::optional<Duration> at, window;
  std::vector<std::string> words;
  Assignments fields;
  std::vector<std::string> flags;
  std::vector<Expectation> alternatives;
};

std::expected<Words, std::string> split_line(const std::string& text) {
  Words s;
  auto words = split_words(text);
  std::size_t i = 0;
  if (!words.empty() && words[0].starts_with('+')) {
    const std::string& t = words[0];
    const auto dots = t.find("...");
    auto at = parse_duration(
        std::string_view(t).substr(1, dots == std::string::npos ? std::string::npos : dots - 1));
    if (!at) return Fail(at.error());
    s.at = *at;
    if (dots != std::string::npos) {
      auto w = parse_duration(std::string_view(t).substr(dots + 3));
      if (!w) return Fail(w.error());
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
        return Fail("'or' is followed by a packet kind (expect c ACK ... or NAK ...)");
      s.alternatives.back().kind = w;
      want_kind = false;
      in_fields = true;
    } else if (w == "or") {
      if (s.words.size() != 3 || s.words[0] != "expect")
        return Fail("only 'expect CONNECTION KIND ...' takes 'or KIND ...'");
      if (!s.flags.empty()) return Fail("write the words after the fields at the end of the step");
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
  if (s.words.empty()) return Fail("a step needs a verb (connect, send, expect, ...)");
  if (want_kind) return Fail("'or' is followed by a packet kind");
  return s;
}

// The connections and CQs a script has made so far; a Python case's step asks its context.
struct Scope {
  std::set<std::string> connections, cqs;
  std::function<bool(const std::string&)> known;  // set for a Python case's step
  bool has(const std::string& name) const {
    return connections.contains(name) || (known && known(name));
  }
};

std::expected<void, std::string> declared(const Scope& scope, const std::string& verb,
                                          const std::string& name) {
  if (scope.has(name)) return {};
  return Fail(fmt::format(
      "'{}' names connection '{}', which no earlier step made (connect, open, accept or new {})",
      verb, name, name));
}

// The words after the verb, exactly `n` of them; `usage` says how the step is written.
std::expected<void, std::string> arity(const Words& w, std::size_t n, std::string_view usage) {
  if (w.words.size() != n) return Fail(fmt::format("write: {}", usage));
  return {};
}

// No key=value on a step that takes none, no bare words after the fields but where allowed.
std::expected<void, std::string> no_fields(const Words& w, std::string_view usage) {
  if (!w.fields.empty() || !w.flags.empty()) return Fail(fmt::format("write: {}", usage));
  return {};
}

std::expected<void, std::string> no_flags(const Words& w) {
  if (!w.flags.empty())
    return Fail(fmt::format("'{}' after the fields is not a word this step takes", w.flags[0]));
  return {};
}

// `@c.FIELD` values name a made connection and one of its fields.
std::expected<void, std::string> check_references(const Scope& scope, const Assignments& a) {
  for (const auto& [key, value] : a.items()) {
    if (!value.starts_with('@')) continue;
    const std::string_view ref = std::string_view(value).substr(1);
    const auto dot = ref.find('.');
    if (dot == std::string_view::npos)
      return Fail(fmt::format("{}: write @CONNECTION.FIELD (@c.req_tid)", key));
    const std::string name(ref.substr(0, dot));
    if (name == "tester") {
      if (auto ok = check_marking_field(ref.substr(dot + 1)); !ok)
        return Fail(fmt::format("{}: {}", key, ok.error()));
      continue;
    }
    if (!scope.has(name))
      return Fail(fmt::format("{}: '@{}' names connection '{}', which no earlier step made", key,
                              ref, name));
    if (auto ok = check_connection_field(ref.substr(dot + 1)); !ok)
      return Fail(fmt::format("{}: {}", key, ok.error()));
  }
  return {};
}

// "connect rc as c" / "connect c": the connection name.
std::expected<std::string, std::string> name_after_verb(const Words& s) {
  std::vector<std::string> w(s.words.begin() + 1, s.words.end());
  if (!w.empty() && (w[0] == "rc" || w[0] == "RC")) w.erase(w.begin());
  if (!w.empty() && w[0] == "as") w.erase(w.begin());
  if (w.size() != 1) return Fail(fmt::format("'{}': name one connection", s.words[0]));
  return w[0];
}

std::expected<Action, std::string> parse_send(const Words& w, Scope& scope) {
  if (auto ok = arity(w, 3, "send CONNECTION OPCODE field=value ..."); !ok) return Fail(ok.error());
  if (auto ok = no_flags(w); !ok) return Fail(ok.error());
  step::Send s;
  s.conn = w.words[1];
  s.op = w.words[2];
  s.fields = w.fields;
  if (auto ok = check_references(scope, s.fields); !ok) return Fail(ok.error());
  if (is_cm_kind(s.op) || s.op == "ClassPortInfo") {
    // A CM message makes its connection when new (a REQ of the case's own).
    s.kind = step::Send::Kind::kCm;
    if (auto ok = check_cm_send(s.op, s.fields); !ok) return Fail(ok.error());
    scope.connections.insert(s.conn);
    return s;
  }
  if (auto ok = declared(scope, "send", s.conn); !ok) return Fail(ok.error());
  if (auto message = message_opcode(s.op)) {
    s.kind = step::Send::Kind::kMessage;
    s.opcode = *message;
  } else {
    auto code = request_opcode(s.op);
    if (!code) return Fail(code.error());
    s.opcode = *code;
  }
  if (auto ok = check_request(s.opcode, with_references_as_numbers(s.fields)); !ok)
    return Fail(ok.error());
  return s;
}

std::expected<Action, std::string> parse_expect(const Words& w, const Scope& scope) {
  if (w.words.size() >= 2 && w.words[1] == "nothing") {
    step::ExpectNothing s;
    if (w.words.size() == 4 && w.words[2] == "from")
      s.conn = w.words[3];
    else if (w.words.size() != 2)
      return Fail("write: expect nothing [from CONNECTION]");
    if (auto ok = no_fields(w, "expect nothing [from CONNECTION] (no fields)"); !ok)
      return Fail(ok.error());
    if (s.conn)
      if (auto ok = declared(scope, "expect", *s.conn); !ok) return Fail(ok.error());
    return s;
  }
  // Without fields a closing `eventually` reads as a word: it is the flag all the same.
  std::vector<std::string> flags = w.flags;
  std::size_t words = w.words.size();
  while (words > 3 && w.alternatives.empty() &&
         (w.words[words - 1] == "eventually" || w.words[words - 1] == "after-earlier-acks"))
    flags.insert(flags.begin(), w.words[--words]);
  if (words != 3) return Fail("write: expect CONNECTION KIND field=value ...");
  step::Expect s;
  s.conn = w.words[1];
  if (auto ok = declared(scope, "expect", s.conn); !ok) return Fail(ok.error());
  for (const auto& f : flags) {
    if (f == "eventually")
      s.mode = CaseContext::ExpectMode::kEventually;
    else if (f == "after-earlier-acks")
      s.mode = CaseContext::ExpectMode::kAfterEarlierAcks;
    else
      return Fail(
          fmt::format("unknown word '{}' after the fields (eventually, after-earlier-acks)", f));
  }
  s.alternatives.push_back({w.words[2], w.fields});
  for (const auto& alt : w.alternatives) s.alternatives.push_back(alt);
  if (s.mode == CaseContext::ExpectMode::kAfterEarlierAcks && !w.fields.has("psn"))
    return Fail("after-earlier-acks needs the psn= of the ACK expected");
  for (const auto& e : s.alternatives) {
    if (auto ok = check_references(scope, e.fields); !ok) return Fail(ok.error());
    if (auto ok = check_expectation({e.kind, with_references_as_numbers(e.fields)}); !ok)
      return Fail(ok.error());
  }
  return s;
}

// One line into its typed step. `scope` learns the connections and CQs the step makes.
std::expected<Action, std::string> parse_action(const Words& w, Scope& scope) {
  const std::string& verb = w.words[0];
  const auto conn = [&](std::size_t i) -> std::expected<std::string, std::string> {
    if (w.words.size() <= i) return Fail(fmt::format("'{}' needs a connection name", verb));
    if (auto ok = declared(scope, verb, w.words[i]); !ok) return Fail(ok.error());
    return w.words[i];
  };
  if (verb == "connect" || verb == "open" || verb == "accept" || verb == "new") {
    auto name = name_after_verb(w);
    if (!name) return Fail(name.error());
    if (auto ok = no_flags(w); !ok) return Fail(ok.error());
    if (verb == "new" && !w.fields.empty()) return Fail("write: new CONNECTION");
    if (auto ok = check_references(scope, w.fields); !ok) return Fail(ok.error());
    if (auto ok = check_options(verb, w.fields, scope.cqs, !scope.known); !ok)
      return Fail(ok.error());
    scope.connections.insert(*name);
    if (verb == "connect") return step::Connect{*name, w.fields};
    if (verb == "open") return step::Open{*name, w.fields};
    if (verb == "accept") return step::Accept{*name, w.fields};
    return step::New{*name};
  }
  if (verb == "send") return parse_send(w, scope);
  if (verb == "expect") return parse_expect(w, scope);
  if (verb == "disconnect") {
    if (auto ok = arity(w, 2, "disconnect CONNECTION"); !ok) return Fail(ok.error());
    if (auto ok = no_fields(w, "disconnect CONNECTION"); !ok) return Fail(ok.error());
    auto c = conn(1);
    if (!c) return Fail(c.error());
    return step::Disconnect{*c};
  }
  if (verb == "status") {
    constexpr std::string_view usage = "status CONNECTION state=NAME [reason=N]";
    if (auto ok = arity(w, 2, usage); !ok) return Fail(ok.error());
    if (w.fields.empty()) return Fail(fmt::format("write: {}", usage));
    if (auto ok = no_flags(w); !ok) return Fail(ok.error());
    auto c = conn(1);
    if (!c) return Fail(c.error());
    if (auto ok = check_options("status", w.fields, scope.cqs, false); !ok) return Fail(ok.error());
    return step::Status{*c, w.fields};
  }
  if (verb == "wait") {
    if (auto ok = arity(w, 2, "wait DURATION"); !ok) return Fail(ok.error());
    if (auto ok = no_fields(w, "wait DURATION"); !ok) return Fail(ok.error());
    auto d = parse_duration(w.words[1]);
    if (!d) return Fail(d.error());
    return step::Wait{*d};
  }
  if (verb == "alive") {
    if (auto ok = no_fields(w, "alive [CONNECTION]"); !ok) return Fail(ok.error());
    if (w.words.size() == 1) return step::Alive{};
    if (auto ok = arity(w, 2, "alive [CONNECTION]"); !ok) return Fail(ok.error());
    auto c = conn(1);
    if (!c) return Fail(c.error());
    return step::Alive{*c};
  }
  if (verb == "counter") {
    constexpr std::string_view usage = "counter NAME >= N (or ==, <=, >), or counter snapshot";
    if (auto ok = no_fields(w, usage); !ok) return Fail(ok.error());
    if (w.words.size() == 2 && w.words[1] == "snapshot") return step::CounterSnapshot{};
    if (auto ok = arity(w, 4, usage); !ok) return Fail(ok.error());
    const std::string& op = w.words[2];
    if (op != ">=" && op != "==" && op != "<=" && op != ">")
      return Fail("counter: use >=, ==, <= or >");
    auto n = parse_uint(w.words[3]);
    if (!n) return Fail(fmt::format("counter: {}", n.error()));
    return step::Counter{w.words[1], op, *n};
  }
  if (verb == "create") {
    constexpr std::string_view usage = "create cq as NAME depth=N";
    if (auto ok = arity(w, 4, usage); !ok) return Fail(ok.error());
    if (w.words[1] != "cq" || w.words[2] != "as") return Fail(fmt::format("write: {}", usage));
    if (auto ok = no_flags(w); !ok) return Fail(ok.error());
    if (auto ok = check_options("create cq", w.fields, scope.cqs, false); !ok)
      return Fail(ok.error());
    step::CreateCq s{w.words[3], 16};
    if (const auto* d = w.fields.find("depth"))
      s.depth = static_cast<std::uint32_t>(*parse_uint(*d));
    scope.cqs.insert(s.name);
    return s;
  }
  if (verb == "post") {
    constexpr std::string_view usage = "post recv|send CONNECTION field=value ...";
    if (auto ok = arity(w, 3, usage); !ok) return Fail(ok.error());
    if (w.words[1] != "recv" && w.words[1] != "send") return Fail(fmt::format("write: {}", usage));
    if (auto ok = no_flags(w); !ok) return Fail(ok.error());
    auto c = conn(2);
    if (!c) return Fail(c.error());
    if (auto ok = check_options("post " + w.words[1], w.fields, scope.cqs, false); !ok)
      return Fail(ok.error());
    const auto number = [&](std::string_view key, std::uint64_t otherwise) {
      const auto* v = w.fields.find(key);
      return v ? *parse_uint(*v) : otherwise;
    };
    if (w.words[1] == "recv")
      return step::PostRecv{*c, static_cast<std::uint32_t>(number("count", 1)),
                            static_cast<std::uint32_t>(number("len", 4096))};
    step::PostSend s{*c, number("len", 64), number("fill", 0), number("wr_id", 1), {}, false};
    if (w.fields.has("imm")) s.imm = number("imm", 0);
    const auto flag = [&](std::string_view key, bool otherwise) {
      const auto* v = w.fields.find(key);
      return v ? (*v == "1" || *v == "yes" || *v == "true") : otherwise;
    };
    s.solicited = flag("solicited", false);
    if (const auto* op = w.fields.find("op")) s.op = *send_op_name(*op);
    if (s.imm && s.op == "SEND") s.op = "SEND_WITH_IMM";
    if (s.imm && s.op == "RDMA_WRITE") s.op = "RDMA_WRITE_WITH_IMM";
    if (s.imm && !s.op.ends_with("_WITH_IMM"))
      return Fail(fmt::format("imm: op {} carries no immediate", s.op));
    if (s.op.ends_with("_WITH_IMM") && !s.imm) s.imm = 0;
    s.count = static_cast<std::uint32_t>(number("count", 1));
    if (s.count == 0) return Fail("count: at least 1");
    s.signaled = flag("signaled", true);
    s.va = number("va", s.va);
    s.rkey = number("rkey", s.rkey);
    s.offset = number("offset", 0);
    s.add = number("add", 0);
    s.compare = number("compare", 0);
    s.swap = number("swap", 0);
    if (s.op.starts_with("ATOMIC") && !w.fields.has("len")) s.len = 8;
    if (s.op.starts_with("ATOMIC") && s.len != 8) return Fail("len: an atomic is 8 bytes");
    return s;
  }
  if (verb == "poll") {
    if (w.words.size() != 2 && !(w.words.size() == 3 && w.words[2] == "empty"))
      return Fail("write: poll CONNECTION [empty] [cq=NAME] field=value ...");
    if (auto ok = no_flags(w); !ok) return Fail(ok.error());
    auto c = conn(1);
    if (!c) return Fail(c.error());
    if (auto ok = check_completion(*c, w.fields, scope.cqs, !scope.known); !ok)
      return Fail(ok.error());
    step::Poll s{*c, w.words.size() == 3, {}, {}};
    for (const auto& [k, v] : w.fields.items()) {
      if (k == "cq")
        s.cq = v;
      else
        s.want.set(k, v);
    }
    return s;
  }
  if (verb == "query" || verb == "modify") {
    if (auto ok = arity(w, 2, verb + " CONNECTION attr=value ..."); !ok) return Fail(ok.error());
    if (auto ok = no_flags(w); !ok) return Fail(ok.error());
    auto c = conn(1);
    if (!c) return Fail(c.error());
    if (auto ok = check_qp_attributes(*c, w.fields, verb == "modify"); !ok) return Fail(ok.error());
    if (verb == "query") return step::Query{*c, w.fields};
    step::Modify s{*c, {}, "ok"};
    for (const auto& [k, v] : w.fields.items()) {
      if (k == "expect")
        s.expect = v;
      else
        s.attr.set(k, v);
    }
    return s;
  }
  if (verb == "read" || verb == "write") {
    if (auto ok = arity(w, 2, verb + " CONNECTION offset=O len=L fill=N"); !ok)
      return Fail(ok.error());
    if (auto ok = no_flags(w); !ok) return Fail(ok.error());
    auto c = conn(1);
    if (!c) return Fail(c.error());
    if (auto ok = check_options(verb, w.fields, scope.cqs, false); !ok) return Fail(ok.error());
    step::Memory s{*c, verb == "write", 0, 64, 0, {}};
    if (const auto* v = w.fields.find("offset")) s.offset = *parse_uint(*v);
    if (const auto* v = w.fields.find("len")) s.len = *parse_uint(*v);
    if (const auto* v = w.fields.find("fill")) s.fill = static_cast<std::uint32_t>(*parse_uint(*v));
    if (const auto* v = w.fields.find("data")) s.data = *v;
    return s;
  }
  return Fail(fmt::format(
      "unknown step '{}' (connect, open, accept, new, status, send, expect, wait, disconnect, "
      "post, poll, query, modify, read, write, create, counter, note)",
      verb));
}

std::expected<Step, std::string> parse_one(int line, const std::string& text, Scope& scope) {
  Step step;
  step.line = line;
  step.text = text;
  // `note` keeps its text as written: no words, no fields.
  if (const auto words = split_words(text);
      !words.empty() && (words[0] == "note" ||
                         (words.size() > 1 && words[0].starts_with('+') && words[1] == "note"))) {
    auto w = split_line(words[0] == "note" ? "note" : words[0] + " note");
    if (!w) return Fail(w.error());
    step.at = w->at;
    step.window = w->window;
    const auto at = text.find("note");
    step.action = step::Note{trim(std::string_view(text).substr(at + 4))};
    return step;
  }
  auto w = split_line(text);
  if (!w) return Fail(w.error());
  step.at = w->at;
  step.window = w->window;
  auto action = parse_action(*w, scope);
  if (!action) return Fail(action.error());
  step.action = std::move(*action);
  return step;
}

// The first sentence of the leading comment is the title, the rest the description. A sentence
// ends at ". ", or at a line end unless the line stops mid-phrase.
void title_and_description(const std::vector<std::string>& block, Script& script) {
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
  for (std::size_t i = 0; i < block.size(); ++i) {
    const std::string& c = block[i];
    if (!text.empty()) text += ' ';
    const std::size_t at = text.size();
    text += c;
    if (end != std::string::npos) continue;
    if (const auto dot = c.find(". "); dot != std::string::npos) {
      end = at + dot;
    } else if (c.ends_with('.')) {
      end = text.size() - 1;
    } else if (i + 1 < block.size() && !continues(c, block[i + 1])) {
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

}  // namespace

std::expected<Script, std::string> parse_script(const std::string& path, const std::string& text) {
  Script script;
  script.path = path;
  Scope scope;
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
      if (header && !comment.empty() && script.steps.empty()) comment_block.push_back(comment);
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
          return Fail(fmt::format(
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
          return Fail(fmt::format("{}:{}: level is MUST, SHOULD or MAY", path, line));
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
    auto s = parse_one(line, code, scope);
    if (!s) return Fail(fmt::format("{}:{}: {}", path, line, s.error()));
    script.steps.push_back(std::move(*s));
  }
  if (!comment_block.empty()) title_and_description(comment_block, script);
  if (script.citation.empty()) return Fail(path + ":1: no 'clause:' line");
  if (script.requirement.empty()) return Fail(path + ":1: no 'level:' line");
  if (script.steps.empty()) return Fail(path + ":1: no steps");
  return script;
}

std::expected<Step, std::string> parse_step(const std::string& where, const std::string& text,
                                            const std::function<bool(const std::string&)>& known) {
  Scope scope;
  scope.known = known;
  std::string code = text;
  if (const auto slash = code.find("//"); slash != std::string::npos) code.resize(slash);
  code = trim(code);
  if (code.find('\n') != std::string::npos)
    return Fail(fmt::format("{}: step '{}': one step a call", where, text));
  auto s = parse_one(1, code, scope);
  if (!s) return Fail(fmt::format("{}: {}", where, s.error()));
  return s;
}

}  // namespace roceconf::engine
