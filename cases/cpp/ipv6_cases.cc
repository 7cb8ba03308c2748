// ipv6/sent-framing: the IPv6 header of every packet the target sends over IPv6 (Annex A17
// CA17-13 to CA17-19), graded once per run as header/sent-framing grades the rest. Its own
// traffic runs over the IPv6 GIDs with a hop limit and traffic class a target that ignores the
// address vector gets wrong.
#include <span>

#include "cases/builtin.h"
#include "cases/cpp/framing_cases.h"

namespace roceconf::cases {

namespace {

constexpr const char* kSource = "cases/cpp/ipv6_cases.cc";

}  // namespace

void add_ipv6_cpp_cases(engine::Catalogue& catalogue) {
  engine::CaseDef def;
  def.id = "ipv6/sent-framing";
  def.area = "ipv6";
  def.title = "Every packet the target sends over IPv6 has the IPv6 header Annex A17 fixes";
  def.description =
      "Each frame the target sends over IPv6 in any case of the run is checked as it arrives: "
      "the traffic class's DSCP from the address vector the tester asked for, ECN 00 unless the "
      "target declares congestion management, a payload length that reaches the end of the frame "
      "(ICRC included), next header 17 (UDP), the hop limit from the address vector, and the "
      "source and destination addresses the target's and the tester's IPv6 GIDs. This case runs "
      "last: it connects over the IPv6 GIDs with hop limit 17 and traffic class 0x68 (DSCP 26), "
      "makes a SEND, an RDMA WRITE, a three-packet READ, an atomic, a PSN sequence NAK and a "
      "DREQ, then fails when any packet of the run broke one of these rules.";
  def.citation = "CA17-13 CA17-14 CA17-15 CA17-16 CA17-17 CA17-18 CA17-19";
  def.rule =
      "Every packet the target sends over IPv6 has the AV's DSCP and hop limit, ECN 00 without "
      "congestion management, a payload length that includes the ICRC, next header 17, and its "
      "own and the tester's IPv6 GIDs as source and destination";
  def.checked = "CA17-13 to CA17-19: Annex A17 text";
  def.requirement = "MUST";
  def.needs = {"responder", "ipv6"};
  def.source = kSource;
  def.run = [](engine::CaseContext& ctx) { framing_traffic(ctx, kSource, true); };
  def.grade_run = [](report::CaseResult& own, std::span<const report::CaseResult> others) {
    grade_framing(own, others, {.ipv6_statements = true, .ipv6_frames_only = true});
  };
  catalogue.add(std::move(def));
}

}  // namespace roceconf::cases
