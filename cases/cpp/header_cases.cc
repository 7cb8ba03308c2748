// header/sent-framing: the IP, UDP, BTH and CM MAD framing of every packet the target sends in
// the run. The engine grades each frame as it arrives (dissector/analysis/sent_framing.h) and
// puts the findings on the frame's event; this case makes traffic of every kind itself, with an
// address vector whose hop limit and traffic class a target that ignores them would get wrong,
// and, run last, folds in the findings of every other case of the run.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cases/builtin.h"
#include "cases/cpp/framing_cases.h"
#include "dissector/analysis/sent_framing.h"
#include "dissector/packet.h"

namespace roceconf::cases {

namespace {

using engine::CaseContext;
using engine::Connection;

constexpr const char* kSource = "cases/cpp/header_cases.cc";
constexpr const char* kId = "header/sent-framing";
constexpr std::size_t kMaxDiffs = 5;

}  // namespace

void framing_traffic(CaseContext& ctx, std::string_view source, bool ipv6) {
  const auto step = [&](std::string_view what) {
    ctx.set_step(fmt::format("{}: {}", source, what));
  };
  Connection& c = ctx.new_connection("c");
  step(fmt::format("connect c pmtu=1024{} REQ primary_hop_limit={} primary_traffic_class={:#x}",
                   ipv6 ? " gid=ipv6" : "", kFramingHopLimit, kFramingTrafficClass));
  engine::Assignments connect = {{"pmtu", "1024"},
                                 {"primary_hop_limit", std::to_string(kFramingHopLimit)},
                                 {"primary_traffic_class", std::to_string(kFramingTrafficClass)}};
  if (ipv6) connect.set("gid", "ipv6");
  ctx.connect(c, connect);
  const auto window = ctx.timing().expect_window();
  step("SEND_ONLY psn=0, ACK");
  ctx.send(c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "64"}});
  ctx.expect(&c, {"ACK", {{"psn", "0"}, {"syndrome", "ack"}}}, window);
  step("RDMA_WRITE_ONLY psn=1, ACK");
  ctx.send(c, "RDMA_WRITE_ONLY", {{"psn", "1"}, {"ackreq", "1"}, {"offset", "0"}, {"len", "64"}});
  ctx.expect(&c, {"ACK", {{"psn", "1"}, {"syndrome", "ack"}}}, window);
  step("READ psn=2 of 3 packets: FIRST, MIDDLE, LAST");
  ctx.send(c, "READ", {{"psn", "2"}, {"offset", "0"}, {"len", "3000"}});
  ctx.expect(&c, {"READ_RESPONSE_FIRST", {{"psn", "2"}}}, window);
  ctx.expect(&c, {"READ_RESPONSE_MIDDLE", {{"psn", "3"}}}, window);
  ctx.expect(&c, {"READ_RESPONSE_LAST", {{"psn", "4"}}}, window);
  step("FETCH_ADD psn=5, ATOMIC_ACK");
  ctx.send(c, "FETCH_ADD", {{"psn", "5"}, {"offset", "0"}, {"add", "1"}});
  ctx.expect(&c, {"ATOMIC_ACK", {{"psn", "5"}}}, window);
  step("SEND_ONLY psn=8 (6 and 7 skipped), NAK PSN sequence error");
  ctx.send(c, "SEND_ONLY", {{"psn", "8"}, {"ackreq", "1"}, {"len", "16"}});
  ctx.expect(&c, {"NAK", {{"psn", "6"}, {"syndrome", "psn_seq_err"}}}, window);
  step("DREQ, DREP");
  ctx.disconnect(c);
}

namespace {

struct Hit {
  std::string where;  // "psn/in-order-ack frame 4"
  FramingFinding finding;
};

// Every framing finding in scope on the frames of `r`, numbered as the case's frames (sent and
// received, from 1).
void collect(const report::CaseResult& r, const FramingScope& scope, std::vector<Hit>& hits,
             std::size_t& packets, std::size_t& received) {
  std::size_t frame = 0;
  for (const auto& e : r.events) {
    if (e.frame.empty()) continue;
    ++frame;
    if (e.kind != report::EventKind::kReceived) continue;
    if (scope.ipv6_frames_only && !decode(e.frame).ipv6) continue;
    ++received;
    bool broken = false;
    for (const auto& a : e.analysis) {
      auto f = parse_framing_finding(a);
      if (!f || scope.ipv6_statements != is_ipv6_framing_statement(f->statement)) continue;
      broken = true;
      hits.push_back({fmt::format("{} frame {}", r.id, frame), std::move(*f)});
    }
    if (broken) ++packets;
  }
}

}  // namespace

bool is_ipv6_framing_statement(std::string_view statement) {
  static constexpr std::string_view kIpv6[] = {"CA17-13", "CA17-14", "CA17-15", "CA17-16",
                                               "CA17-17", "CA17-18", "CA17-19"};
  return std::ranges::find(kIpv6, statement) != std::end(kIpv6);
}

void grade_framing(report::CaseResult& own, std::span<const report::CaseResult> others,
                   const FramingScope& scope) {
  std::vector<Hit> hits;
  std::size_t packets = 0, received = 0;
  std::set<std::string> broken_cases;
  for (const auto* r : [&] {
         std::vector<const report::CaseResult*> all;
         for (const auto& o : others) all.push_back(&o);
         all.push_back(&own);
         return all;
       }()) {
    const std::size_t before = hits.size();
    collect(*r, scope, hits, packets, received);
    if (hits.size() > before) broken_cases.insert(r->id);
  }
  const std::size_t cases = others.size() + 1;
  if (!hits.empty()) {
    const std::string first = fmt::format(
        "{}: {}", hits.front().where, hits.front().finding.text().substr(kFramingPrefix.size()));
    std::string reason = fmt::format("{} {} in {} {} break framing; first: {}", packets,
                                     packets == 1 ? "packet" : "packets", broken_cases.size(),
                                     broken_cases.size() == 1 ? "case" : "cases", first);
    // The case's own failure (its traffic did not go as planned) is kept beside it.
    if (own.verdict == report::Verdict::kFail && !own.reason.empty())
      reason += "; and: " + own.reason;
    if (own.verdict == report::Verdict::kError) return;  // the case itself is wrong: say that
    std::vector<report::FieldDiff> diffs;
    for (const auto& h : hits) {
      if (diffs.size() == kMaxDiffs) break;
      diffs.push_back({fmt::format("{}: {} ({})", h.where, h.finding.field, h.finding.statement),
                       h.finding.expected, h.finding.actual});
    }
    if (own.verdict == report::Verdict::kFail)
      diffs.insert(diffs.end(), own.diffs.begin(), own.diffs.end());
    own.verdict = report::Verdict::kFail;
    own.reason = std::move(reason);
    own.diffs = std::move(diffs);
    return;
  }
  if (own.verdict == report::Verdict::kPass) {
    own.reason = fmt::format("{} packets the target sent{} in {} {} checked: none breaks framing",
                             received, scope.ipv6_frames_only ? " over IPv6" : "", cases,
                             cases == 1 ? "case" : "cases");
    return;
  }
  // Its own traffic did not run (SKIP, INCONCLUSIVE) or went wrong: that verdict stands, since
  // no packet of a hop limit and traffic class of its choosing was graded; the reason says what
  // the other cases' packets showed.
  if (received > 0 && own.verdict != report::Verdict::kError)
    own.reason += fmt::format(
        "; {} packets the target sent{} in the run ({} {}) checked: none "
        "breaks framing",
        received, scope.ipv6_frames_only ? " over IPv6" : "", cases, cases == 1 ? "case" : "cases");
}

void add_header_cpp_cases(engine::Catalogue& catalogue) {
  engine::CaseDef def;
  def.id = kId;
  def.area = "header";
  def.title = "Every packet the target sends is framed as Annex A17 and chapters 9 and 13 say";
  def.description =
      "Each frame the target sends on a connection of any case is checked as it arrives: IPv4 "
      "version 4 and IHL 5, DF set and not fragmented, protocol UDP, TTL and DSCP from the "
      "address vector the tester asked for, ECN 00 unless the target declares congestion "
      "management, IP and UDP lengths that reach the end of the frame (ICRC included), UDP "
      "destination port 4791, source and destination addresses from the GIDs, BTH reserved bits "
      "and TVer 0, a valid ICRC at the end, and for CM MADs a 256-byte MAD of base version 1, "
      "class 0x07 version 2 and no REJ with a LID reason (the IPv6 header's own rules, CA17-13 "
      "to CA17-19, are graded by ipv6/sent-framing). This case runs last: it connects with "
      "hop limit 17 and traffic class 0x68, makes a SEND, an RDMA WRITE, a three-packet READ, an "
      "atomic, a PSN sequence NAK and a DREQ, then fails when any packet of the run broke a rule "
      "(the findings are on the packets' events).";
  def.citation =
      "CA17-2 CA17-3 CA17-4 CA17-5 CA17-6 CA17-7 CA17-8 CA17-9 CA17-10 CA17-11 CA17-12 CA17-20 "
      "CA17-21 CA17-35; 9.2 C9-6; C13-3 C13-4.2-1.1 C13-5";
  def.rule =
      "Every packet the target sends has IPv4 IHL 5, DF set, no fragmentation, protocol 17, TTL "
      "and DSCP from its address vector, ECN 00 without congestion management, lengths that "
      "include the ICRC, a valid ICRC, UDP port 4791, addresses from the GIDs, zero BTH reserved "
      "bits and TVer, 256-byte CM MADs of base version 1 and class version 2, and no REJ reason "
      "13 or 19";
  def.checked =
      "CA17-2 to CA17-12, CA17-20, CA17-21, CA17-35: Annex A17 text; C9-6: linux-rdma 2024-08; "
      "C13-3: linux-rdma post; C13-4.2-1.1, C13-5: p4ws mgmt.p4 (weak); unchecked: 9.2";
  def.requirement = "MUST";
  def.needs = {"responder"};
  def.source = kSource;
  def.run = [](CaseContext& ctx) { framing_traffic(ctx, kSource, false); };
  // The IPv6 header's rules (CA17-13 to CA17-19) are ipv6/sent-framing's.
  def.grade_run = [](report::CaseResult& own, std::span<const report::CaseResult> others) {
    grade_framing(own, others, {.ipv6_statements = false, .ipv6_frames_only = false});
  };
  catalogue.add(std::move(def));
}

}  // namespace roceconf::cases
