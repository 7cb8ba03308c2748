// The case language (.rcase): one case a file, packetdrill-like. cases/README.md describes it.
//
//   // A request ahead of the expected PSN gets exactly one NAK ...
//   clause: 9.7.5.1 C9-97 C9-98; 9.7.5.2.1
//   rule: a PSN gap gets one PSN sequence error NAK ...
//   checked: Linux rxe check_psn; qib/hfi1 rc
//   level: MUST
//   needs: responder
//   connect c
//   send c SEND_ONLY psn=0 ackreq=1 len=64
//   +0...1rtt expect c ACK psn=0 syndrome=ack
//   +0...4rtt expect nothing from c
//
// A script is parsed at load into typed steps, and every verb, key, value, opcode, packet kind
// and connection name is checked then: a typo is an error naming file:line before any packet
// of the case is sent.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "suite/engine/case_context.h"
#include "suite/engine/catalogue.h"
#include "suite/engine/matcher.h"

namespace roceconf::engine {

// One struct per verb. Values that name `@c.FIELD` stay text in the assignments: they are read
// from the connection when the step runs.
namespace step {

// connect / open / accept / new: make a connection (options as cases/README.md lists them).
struct Connect {
  std::string conn;
  Assignments options;  // pmtu, pkey, target_psn, rtu; other keys set REQ fields
};
struct Open {
  std::string conn;
  Assignments options;
};
struct Accept {
  std::string conn;
  Assignments options;
};
struct New {
  std::string conn;
};
struct Disconnect {
  std::string conn;
};
struct Status {
  std::string conn;
  Assignments want;  // cm_status fields
};
struct Send {
  enum class Kind : std::uint8_t { kPacket, kMessage, kCm };
  std::string conn;
  std::string op;  // as written: "SEND_ONLY", "SEND" (a whole message), "REQ"
  Kind kind = Kind::kPacket;
  std::uint8_t opcode = 0;  // kPacket: the BTH opcode
  Assignments fields;
};
struct Expect {
  std::string conn;
  std::vector<Expectation> alternatives;  // the first is the KIND before any `or`
  CaseContext::ExpectMode mode = CaseContext::ExpectMode::kNext;
};
struct ExpectNothing {
  std::optional<std::string> conn;  // none: no RoCE packet at all
};
struct Wait {
  Duration duration;
};
struct CounterSnapshot {};
struct Counter {
  std::string name;
  std::string op;  // >=, ==, <=, >
  std::uint64_t value = 0;
};
struct CreateCq {
  std::string name;
  std::uint32_t depth = 16;
};
struct PostRecv {
  std::string conn;
  std::uint32_t count = 1;
  std::uint32_t len = 4096;
};
struct PostSend {
  std::string conn;
  std::uint64_t len = 64, fill = 0, wr_id = 1;
  std::optional<std::uint64_t> imm;
  bool solicited = false;
  std::string op = "SEND";  // a control API send opcode (SEND, RDMA_WRITE, RDMA_READ, ...)
  std::uint32_t count = 1;  // WRs under one doorbell, wr_id, wr_id + 1, ...
  bool signaled = true;
  // RDMA and atomics: the tester's address and R_Key; READ and atomic results land in the
  // connection's region at `offset`.
  std::uint64_t va = 0x10000, rkey = 0x1234, offset = 0;
  std::uint64_t add = 0, compare = 0, swap = 0;
};
struct Poll {
  std::string conn;
  bool empty = false;
  std::optional<std::string> cq;  // a `create cq` name; none: the connection's
  Assignments want;               // ibv_wc fields
};
struct Query {
  std::string conn;
  Assignments want;  // ibv_qp_attr fields
};
struct Modify {
  std::string conn;
  Assignments attr;
  std::string expect = "ok";  // or an errno name
};
struct Memory {  // read (compare) or write the connection's region
  std::string conn;
  bool write = false;
  std::uint64_t offset = 0, len = 64;
  std::uint32_t fill = 0;
  std::optional<std::string> data;  // read: the hex bytes expected instead of the pattern
};
struct Note {
  std::string text;
};
// alive [CONNECTION]: the connection's QP still works, or (bare) the CM still answers
// (liveness.h). A FAIL names what went quiet.
struct Alive {
  std::optional<std::string> conn;
};

}  // namespace step

using Action =
    std::variant<step::Connect, step::Open, step::Accept, step::New, step::Disconnect, step::Status,
                 step::Send, step::Expect, step::ExpectNothing, step::Wait, step::CounterSnapshot,
                 step::Counter, step::CreateCq, step::PostRecv, step::PostSend, step::Poll,
                 step::Query, step::Modify, step::Memory, step::Note, step::Alive>;

struct Step {
  int line = 0;
  std::string text;                // the line as written, without its comment
  std::optional<Duration> at;      // +T: wait this long before the step
  std::optional<Duration> window;  // +T...W: the step's window
  Action action;
};

struct Script {
  std::string path;  // "cases/psn/gap-naks-once.rcase"
  std::string title, description, requirement;
  // clause: (numbers and statement IDs only), rule:, release: (empty: the catalogue's),
  // checked: (sources, or "unchecked").
  std::string citation, rule, release, checked;
  std::vector<std::string> needs;
  std::vector<Step> steps;
};

// Parses and checks a script; the error is "path:line: what is wrong".
std::expected<Script, std::string> parse_script(const std::string& path, const std::string& text);

// One step line (a Python case's ctx.step), checked as a script's line is. The connections it
// may name are those `known` says exist (the case's context).
std::expected<Step, std::string> parse_step(const std::string& where, const std::string& text,
                                            const std::function<bool(const std::string&)>& known);

// Runs one step (the step label is set by the caller).
void run_step(CaseContext& ctx, const Step& s);

// A CaseDef for a script at `path` ("cases/<area>/<name>.rcase"). A script that does not parse
// still becomes a case, which ERRORs with the parse error.
CaseDef load_script(const std::string& path, const std::string& text);

}  // namespace roceconf::engine
