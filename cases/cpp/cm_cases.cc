// CM cases that need loops: many connections set up at once.
#include <fmt/format.h>

#include <set>

#include "cases/builtin.h"

namespace roceconf::cases {

namespace {

using engine::CaseContext;
using engine::Connection;

// N REQs sent back to back before any REP is read: every one must be answered with a REP of
// its own QPN, and every connection must then carry data.
void concurrent_setups(CaseContext& ctx, int n) {
  ctx.require("responder");
  std::vector<Connection*> conns;
  for (int i = 0; i < n; ++i) {
    Connection& c = ctx.new_connection(fmt::format("c{}", i));
    ctx.set_step(fmt::format("cases/cpp/cm_cases.cc: REQ {} of {}", i + 1, n));
    ctx.cm_send(c, "REQ", {});
    conns.push_back(&c);
  }
  std::set<std::uint32_t> qpns;
  for (Connection* c : conns) {
    ctx.set_step(fmt::format("cases/cpp/cm_cases.cc: REP for {}", c->name));
    ctx.expect(c, {"REP", {}}, ctx.timing().expect_window(), false);
    if (!qpns.insert(c->remote_qpn).second)
      ctx.fail(fmt::format("{} got QPN {:#x}, already given to another connection", c->name,
                           c->remote_qpn),
               {{"cm.local_qpn", "a QPN not yet used", fmt::format("{:#x}", c->remote_qpn)}});
  }
  for (Connection* c : conns) {
    ctx.set_step(fmt::format("cases/cpp/cm_cases.cc: RTU and SEND on {}", c->name));
    ctx.cm_send(*c, "RTU", {});
    ctx.send(*c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "32"}});
  }
  for (Connection* c : conns) {
    ctx.set_step(fmt::format("cases/cpp/cm_cases.cc: ACK on {}", c->name));
    ctx.expect(c, {"ACK", {{"psn", "0"}}}, ctx.timing().expect_window(), false);
  }
}

}  // namespace

void add_cm_cpp_cases(engine::Catalogue& catalogue) {
  for (int n : {1, 8, 32, 128}) {
    engine::CaseDef def;
    def.id = fmt::format("cm/concurrent-setups-{}", n);
    def.area = "cm";
    def.title = fmt::format("{} connection set-ups in flight at once all succeed with distinct QPNs", n);
    def.description = fmt::format(
        "{} REQs are sent back to back before any REP is read. Each must get a REP carrying a QP "
        "number no other connection has, and each connection must then accept a SEND.", n);
    def.clause = "IBA Vol 1 12.6.8 (REP: Local QPN), 12.9.1 (connection establishment)";
    def.requirement = "MUST";
    def.needs = {"responder"};
    def.source = "cases/cpp/cm_cases.cc";
    def.run = [n](CaseContext& ctx) { concurrent_setups(ctx, n); };
    catalogue.add(std::move(def));
  }
}

}  // namespace roceconf::cases
