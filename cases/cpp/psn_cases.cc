// PSN cases that need computed values: random starting PSNs.
#include <fmt/format.h>

#include "cases/builtin.h"
#include "dissector/analysis/psn.h"

namespace roceconf::cases {

namespace {

using engine::CaseContext;

// A connection whose starting PSN is chosen at random (just below the wrap, where an
// implementation that keeps PSNs in a wider integer fails) must continue exactly from it.
void random_start(CaseContext& ctx) {
  ctx.require("responder");
  const std::uint32_t start = psn::add(psn::kMask, -static_cast<std::int64_t>(ctx.random()() % 4));
  engine::Connection& c = ctx.new_connection("c");
  ctx.set_step(fmt::format("cases/cpp/psn_cases.cc: connect with starting PSN {:#08x}", start));
  ctx.connect(c, {{"psn", std::to_string(start)}});
  for (int i = 0; i < 8; ++i) {
    ctx.set_step(fmt::format("cases/cpp/psn_cases.cc: SEND {} of 8 across the wrap", i + 1));
    ctx.send(c, "SEND_ONLY", {{"ackreq", "1"}, {"len", "16"}});
    ctx.expect(&c, {"ACK", {{"psn", std::to_string(i)}, {"syndrome", "ack"}}},
               ctx.timing().expect_window(), false);
  }
}

}  // namespace

void add_psn_cpp_cases(engine::Catalogue& catalogue) {
  engine::CaseDef def;
  def.id = "psn/random-start-continuity";
  def.area = "psn";
  def.title = "A random starting PSN near the wrap is continued exactly (ACK PSNs follow it)";
  def.description =
      "The REQ offers a starting PSN a few below 0xFFFFFF; eight SENDs cross the wrap and each "
      "must be ACKed with its own PSN.";
  def.clause = "IBA Vol 1 9.7.1 (PSN), 12.7.23 (REQ Starting PSN)";
  def.requirement = "MUST";
  def.needs = {"responder"};
  def.source = "cases/cpp/psn_cases.cc";
  def.run = random_start;
  catalogue.add(std::move(def));
}

}  // namespace roceconf::cases
