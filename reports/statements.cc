// The registry of public compliance items (statements.h), and coverage derived from citations.
#include "reports/statements.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "reports/result.h"

namespace roceconf::report {
namespace {

using K = Statement::Kind;

// Notes shared by several items.
constexpr std::string_view kSmSa =
    "subnet management and subnet administration classes do not apply to RoCEv2 (A17.6)";
constexpr std::string_view kIbLink = "tests the IB link layer, which RoCEv2 does not have";
constexpr std::string_view kQp0 = "QP0 does not exist on RoCEv2 (A17.6; CA17-33 drops DestQP 0)";
constexpr std::string_view kGrh =
    "GRH presence and next-header checks are replaced by the IP header on RoCEv2 (A17.4.4)";
constexpr std::string_view kCa17Cancelled = "cancelled for RoCEv2 by Annex A17 (A17.7)";
constexpr std::string_view kDualMode =
    "needs a port running RoCE (v1) and RoCEv2 together: no case yet";
constexpr std::string_view kNoPublic =
    "no public text of this statement was found; cited by its number alone";

constexpr Statement kStatements[] = {
    // ---- Chapter 9: transport layer ----
    {"CTS-C09_060_01_01", "9",
     "CTS: RC SEND with the tester as requester: every ACK carries the MSN of its message and "
     "the receives are consumed in order"},
    {"CTS-C09_060_05", "9",
     "CTS: two outstanding multi-packet RDMA READs from the device, only the first answered: "
     "exactly one completion, the second stays outstanding"},
    {"CTS-C09_060_07", "9",
     "CTS: the same with two outstanding Fetch&Add: one atomic ACK, one completion"},
    {"CTS-C09_060_09", "9",
     "CTS: the same with two outstanding Compare&Swap: one atomic ACK, one completion"},
    {"CTS-C09_130_01", "9",
     "CTS: the requester waits at least the RNR NAK's timer before resending and completes with "
     "RNR retry exceeded after rnr_retry resends"},
    {"CTS-C09_142_01", "9",
     "CTS: an unanswered request is resent exactly retry_cnt times on the local ACK timeout, then "
     "completes with retry exceeded"},
    {"C9-1", "9", "The Base Transport Header has the format of the specification"},
    {"C9-2", "9", "BTH opcodes take only the defined values; reserved ones are not executed"},
    {"C9-6", "9",
     "A sender sets the BTH reserved fields to zero; a receiver ignores reserved fields"},
    {"C9-41", "9", "A packet for QP0 is exempt from the P_Key check", K::kNotApplicable, kQp0},
    {"C9-42", "9",
     "A packet for QP1 is accepted when its P_Key matches any P_Key of the port's table"},
    {"C9-43", "9",
     "A packet for any other QP must carry the QP's P_Key; else it is dropped silently and the "
     "P_Key violation counted"},
    {"C9-43.1.1", "9", "GRH presence check of a received packet", K::kNotApplicable, kGrh},
    {"C9-43.1.2", "9", "GRH next-header check of a received packet", K::kNotApplicable, kGrh},
    {"C9-44", "9", "GRH checks of a packet with a GRH", K::kNotApplicable, kGrh},
    {"C9-49", "9", "QP1 uses the well-known Q_Key; a GSI datagram with another Q_Key is dropped"},
    {"C9-88", "9",
     "A zero-length RDMA READ or WRITE (also with immediate) does not have its R_Key checked"},
    {"C9-92", "9",
     "Request length checks: FIRST and MIDDLE carry exactly the path MTU, ONLY and LAST at most "
     "it"},
    {"C9-94", "9", "An RDMA DMA length above 2^31 bytes is a length error"},
    {"C9-105", "9",
     "A duplicate request is acknowledged again and not executed again; a duplicate READ is "
     "answered again"},
    {"C9-140", "9",
     "The transport timer is 4.096 us x 2^(local ACK timeout); a timeout of 0 disables it"},
    {"C9-148", "9",
     "The MSN starts at 0 and counts completed new messages, not duplicates; READ and atomic "
     "responses carry it"},
    {"C9-205", "9",
     "The responder checks that a message fits the receive WQE's buffers; one too long is a "
     "length error"},
    {"C9-218", "9",
     "Requester class F error (the CQ is full): the QP goes to Error and an affiliated "
     "asynchronous error is raised"},
    {"C9-220", "9",
     "Responder class A error: the WQEs of both queues, and later ones, complete flushed in "
     "error"},
    {"C9-222.1.1", "9",
     "Responder class C error: NAK with the code of Table 63; with no WQE involved (WRITE "
     "without immediate) an affiliated asynchronous error"},
    {"o9-30", "9", "A TCA, RD or XRC responder acknowledges every request packet",
     K::kNotApplicable,
     "concerns TCA, RD and XRC responders; the RC HCA variant is graded by psn/in-order-ack"},
    {"C9-81", "9", "A responder acknowledges an in-order request (cited by number)", K::kExtra,
     kNoPublic},
    {"C9-97", "9",
     "A request beyond the expected PSN gets a NAK PSN sequence error (cited by number)", K::kExtra,
     kNoPublic},
    {"C9-98", "9", "One NAK per PSN gap (cited by number)", K::kExtra, kNoPublic},
    {"C5-8", "5", "Packets are no longer than the path MTU allows (cited by number)", K::kExtra,
     "not among the public chapter 9-13 and A17 items; quoted on linux-rdma (2020-03)"},

    // ---- Chapter 10: software transport interface ----
    {"C10-2", "10", "GID index 0 holds the port's read-only invariant GID"},
    {"C10-10", "10",
     "A UD send whose address handle belongs to another PD than the QP completes in error",
     K::kApplies,
     "needs address handle objects in the control API (a UD WR carries its address vector): no "
     "case yet"},
    {"C10-15", "10",
     "A UD send whose Q_Key has the high bit set uses the QP's own Q_Key (controlled Q_Key)"},
    {"C10-20", "10", "A new QP is in the Reset state"},
    {"C10-56", "10", "Remote access through a memory region of another PD than the QP's fails"},
    {"C10-57", "10", "Remote access needs the memory region's access right for it"},
    {"C10-68", "10",
     "After a memory window is rebound or invalidated, the old binding works no "
     "more"},
    {"C10-72", "10", "A memory window is bound only through a QP of its PD"},
    {"C10-73", "10", "A memory window is bound only to a region with the bind right"},
    {"C10-74", "10", "A writable memory window needs a locally writable region"},
    {"C10-75", "10", "A zero-based memory window lies inside its region"},
    {"C10-76.2.1", "10", "Access through a type 1 memory window needs a matching PD"},
    {"C10-77", "10", "A memory window's access rights are enforced on remote access"},
    {"C10-87", "10",
     "The responder consumes no receive WQE for an RDMA WRITE without immediate, nor for a "
     "failed one"},
    {"C10-93.1.1", "10", "A UD message larger than the port MTU is not sent and is no error"},
    {"C10-96", "10",
     "Post Send in Reset, Init or RTR is refused; in SQE or Error the work completes flushed"},
    {"C10-97.2.1", "10", "Post Receive in Reset is refused"},
    {"C10-116", "10", "A P_Key whose low 15 bits are zero is invalid"},
    {"o10-2.2.3", "10", "Destroying a QP attached to a multicast group fails", K::kApplies,
     "needs multicast groups in the control API: no case yet"},
    {"o10-2.2.5", "10", "Destroying a QP with a bound type 2B memory window succeeds"},
    {"o10-36.2.2", "10", "A type 1 memory window cannot be zero-based"},
    {"o10-37.2.13", "10", "Which memory regions a local invalidate may invalidate"},
    {"o10-37.2.17", "10", "Which memory windows a remote invalidate may invalidate"},
    {"o10-37.2.26", "10", "A type 2 bind needs a free memory window"},
    {"o10-37.2.30", "10", "A type 2 bind needs a non-empty region"},
    {"o10-37.2.32", "10", "A type 2 memory window is bound through a send WR only"},
    {"o10-37.2.34", "10", "Invalidating a bound type 2 memory window frees it"},
    {"o10-37.2.35", "10", "An invalidated type 2 memory window's R_Key fails"},
    {"o10-37.2.40", "10", "A type 1 memory window is bound through the bind verb only"},
    {"o10-37.2.43", "10", "A type 2 memory window is usable only through the QP it is bound to"},
    {"CA10-49", "10", "IB congestion log aging (Annex A10)", K::kNotApplicable,
     "Annex A10 congestion control does not apply to RoCEv2 (A17.4.8)"},

    // ---- Chapter 11: verbs ----
    {"C11-13", "11", "Get Special QP for QP0", K::kNotApplicable,
     "QP0 does not exist on RoCEv2 (A17.5.8)"},
    {"o11-1", "11", "Raw datagram QPs", K::kNotApplicable,
     "cancelled for RoCEv2 by Annex A17 (A17.5.8)"},
    {"C11-17", "11", "Destroying a CQ that a work queue still uses fails"},
    {"C11-31", "11", "A CQ armed for the next completion raises one event for it"},
    {"C11-32", "11", "A CQ armed for solicited completions raises an event only for them"},
    {"C11-37", "11",
     "A CQ overrun puts the CQ in error and raises the affiliated asynchronous error"},
    {"C11-39", "11", "A catastrophic work queue error is reported as an asynchronous event",
     K::kApplies, "needs a way to provoke a catastrophic error: no case yet"},
    {"o11-5.2.5", "11", "A QP on an SRQ raises Last WQE Reached when it drains in Error",
     K::kApplies, "needs shared receive queues in the control API: no case yet"},

    // ---- Chapter 12: communication management ----
    {"o12-1", "12", "The REQ message and its fields"},
    {"C12-4", "12", "The REJ message and its reasons"},
    {"o12-3", "12", "The REP message and its fields"},
    {"o12-4", "12", "The RTU message"},
    {"o12-5", "12", "The DREQ message, sent by either side"},
    {"o12-6", "12", "The DREP message"},

    // ---- Chapter 13: management model ----
    {"CTS-C13_013", "13", "CTS: MAD response time within RespTimeValue, probed with an SMP",
     K::kNotApplicable, kSmSa},
    {"CTS-C13_014_01", "13", "CTS: MAD response time after a SubnGet(PortInfo)", K::kNotApplicable,
     kSmSa},
    {"C13-3", "13", "A MAD is exactly 256 bytes"},
    {"C13-4.2-1.1", "13", "The common MAD header: base version, class, class version, method, TID"},
    {"C13-5", "13", "Management class values"},
    {"o13-5", "13", "SMA traps", K::kNotApplicable, kSmSa},
    {"o13-6", "13", "SMA trap repress", K::kNotApplicable, kSmSa},
    {"o13-7", "13", "SMA trap resend", K::kNotApplicable, kSmSa},
    {"C13-32.1.2", "13", "SA InformInfo subscription", K::kNotApplicable, kSmSa},
    {"o13-2.1.1", "13", "Event forwarding by the SA", K::kNotApplicable, kSmSa},
    {"o13-12.1.1", "13", "SA event subscription records", K::kNotApplicable, kSmSa},
    {"o13-13.1.1", "13", "SA report forwarding", K::kNotApplicable, kSmSa},
    {"o13-14.1.1", "13", "SA report repress", K::kNotApplicable, kSmSa},
    {"o13-17.1.1", "13", "InformInfo records", K::kNotApplicable, kSmSa},
    {"o13-17.1.2", "13", "InformInfo record removal", K::kNotApplicable, kSmSa},

    // ---- Chapter 16 and Annex A16 ----
    {"C16-15.1.3", "16", "Performance management attributes", K::kNotApplicable,
     "performance management does not apply to RoCEv2 (A17.6)"},
    {"CA16-18", "16",
     "An address vector with a reserved service level (8-15) is an invalid address vector",
     K::kApplies, "Annex A17 makes it a MAY (A17.5.3): no case yet"},

    // ---- Chapter 17: channel adapters ----
    {"C17-7", "17", "The P_Key table is loaded by the subnet manager", K::kNotApplicable,
     kCa17Cancelled},
    {"C17-7.a1", "17", "P_Key table entries set by the subnet manager", K::kNotApplicable,
     kCa17Cancelled},
    {"C17-9", "17", "Channel adapter port count rules", K::kNotApplicable, kCa17Cancelled},
    {"C17-19", "17", "Locally routed packets", K::kNotApplicable, kCa17Cancelled},
    {"C17-20", "17", "Link backpressure", K::kNotApplicable, kCa17Cancelled},
    {"C17-24", "17", "QP0 on every port", K::kNotApplicable, kCa17Cancelled},

    // ---- Annex A17: RoCEv2 ----
    {"CA17-1", "A17", "A port supports RoCEv2 over both IPv4 and IPv6"},
    {"CA17-2", "A17", "A RoCEv2 packet is Ethernet, IP, UDP, BTH and the rest, then the ICRC"},
    {"CA17-3", "A17", "A sent IPv4 header has IHL 5 (no options)"},
    {"CA17-4", "A17", "A sent IPv4 DSCP is the address vector's traffic class"},
    {"CA17-5", "A17", "ECN is 00 when RoCEv2 congestion management is not supported"},
    {"CA17-6", "A17", "The IPv4 total length counts the ICRC"},
    {"CA17-7", "A17", "A sent IPv4 packet has Don't Fragment set"},
    {"CA17-8", "A17", "A sent IPv4 packet has fragment offset 0 (and More Fragments clear)"},
    {"CA17-9", "A17", "A sent IPv4 TTL is the address vector's hop limit"},
    {"CA17-10", "A17", "The IPv4 protocol is 17 (UDP)"},
    {"CA17-11", "A17", "The IP source address is the source GID's"},
    {"CA17-12", "A17", "The IP destination address is the destination GID's"},
    {"CA17-13", "A17", "A sent IPv6 traffic class DSCP is the address vector's"},
    {"CA17-14", "A17", "A sent IPv6 ECN as for IPv4"},
    {"CA17-15", "A17", "The IPv6 payload length counts the ICRC"},
    {"CA17-16", "A17", "The IPv6 next header is 17 (UDP)"},
    {"CA17-17", "A17", "The IPv6 hop limit is the address vector's"},
    {"CA17-18", "A17", "The IPv6 source address is the source GID"},
    {"CA17-19", "A17", "The IPv6 destination address is the destination GID"},
    {"CA17-20", "A17", "The UDP destination port is 4791"},
    {"CA17-21", "A17", "The UDP length counts the ICRC"},
    {"CA17-22", "A17", "The ICRC covers the IP datagram with the variant fields masked"},
    {"CA17-23", "A17", "Inbound packets are validated as chapter 9 says"},
    {"CA17-24", "A17",
     "Packets that break the RoCEv2 IP and UDP rules (A17.3.1-3) are dropped silently"},
    {"CA17-25", "A17", "The transport layer is the base specification's chapter 9"},
    {"CA17-26", "A17", "Every entry of a port's GID table has a GID type (IPv4, IPv6, IB)"},
    {"CA17-27", "A17",
     "A packet whose IP version field is not the frame's IP version is dropped silently"},
    {"CA17-28", "A17", "IB raw datagrams are not supported", K::kApplies,
     "needs raw QP creation in the control API: no case yet"},
    {"CA17-29", "A17", "The BTH FECN and BECN bits are not used and are ignored"},
    {"CA17-30", "A17",
     "The verbs change as A17.5 says: port attributes without LID, LMC, VLs or SM address, and "
     "a RoCEv2 port type"},
    {"CA17-31", "A17", "A RoCEv2 port does not support client reregistration"},
    {"CA17-32", "A17", "A RoCEv2 port does not support the optional port change event", K::kApplies,
     "needs port events provoked: no case yet"},
    {"CA17-33", "A17", "A packet for DestQP 0 is dropped silently"},
    {"CA17-34", "A17", "The REQ's port LID fields are reserved: not validated"},
    {"CA17-35", "A17", "A REJ never carries reason 13 or 19 (LID rejected)"},
    {"CA17-36", "A17", "A LAP's alternate port LID fields are reserved and not validated"},
    {"CA17-37", "A17", "An APR never carries status 7 (alternate remote port LID rejected)"},
    {"CA17-38", "A17", "The alternate local port LID is reserved and ignored on receipt"},
    {"CA17-39", "A17", "A channel adapter checks transport errors in every packet"},
    {"CA17-40", "A17", "A dual-mode port picks RoCE or RoCEv2 by the GID type", K::kApplies,
     kDualMode},
    {"CA17-41", "A17", "A dual-mode port's DGID check fails on a protocol mismatch", K::kApplies,
     kDualMode},
    {"CA17-42", "A17", "A dual-mode RC QP uses one protocol", K::kApplies, kDualMode},
    {"CA17-43", "A17", "A dual-mode UD QP accepts both protocols", K::kApplies, kDualMode},
    {"CA17-44", "A17",
     "With congestion management, a valid packet marked ECN CE makes a CNP to its source"},
    {"CA17-45", "A17", "On a CNP the QP lowers its send rate"},
    {"CA17-46", "A17", "After a CNP the QP should raise its rate again"},

    // ---- IB-only test suites ----
    {"IBT-TD_10.2.4.1.1", "7 (IB only)", "IBTrainer: no reply to a bad VCRC", K::kNotApplicable,
     kIbLink},
    {"IBT-TD_10.2.4.1.3", "7 (IB only)", "IBTrainer: no reply to LVer 1-15", K::kNotApplicable,
     kIbLink},
    {"IBT-TD_10.2.4.1.9", "7 (IB only)", "IBTrainer: a bad end delimiter", K::kNotApplicable,
     kIbLink},
    {"IBT-TD_10.2.4.1.10", "7 (IB only)", "IBTrainer: an EBP end delimiter", K::kNotApplicable,
     kIbLink},
    {"IBT-SMPacketsInLinkInitializeAndLinkArm", "7 (IB only)",
     "IBTrainer: SMPs in the link's Initialize and Arm states", K::kNotApplicable, kIbLink},
    {"CTS-C14_016_Set", "14-15 (IB only)", "CTS: SMA M_Key", K::kNotApplicable, kSmSa},
    {"CTS-C14_024_05", "14-15 (IB only)", "CTS: SMA GUIDInfo", K::kNotApplicable, kSmSa},
    {"CTS-C14_024_06_CA_03", "14-15 (IB only)", "CTS: SMA PortInfo", K::kNotApplicable, kSmSa},
    {"CTS-C14_024_09_CA", "14-15 (IB only)", "CTS: SMA VLArbitrationTable", K::kNotApplicable,
     kSmSa},
    {"CTS-C14_024_11", "14-15 (IB only)", "CTS: SMA RandomFDB", K::kNotApplicable, kSmSa},
    {"CTS-C15_0_1_012_17_01", "14-15 (IB only)", "CTS: SA PathRecord", K::kNotApplicable, kSmSa},
    {"CTS-C15_0_1_012_17_02_1", "14-15 (IB only)", "CTS: SA PathRecord query", K::kNotApplicable,
     kSmSa},
    {"CTS-C15_0_1_012_17_02_3", "14-15 (IB only)", "CTS: SA PathRecord query", K::kNotApplicable,
     kSmSa},
};

bool looks_like_statement(std::string_view t) {
  if (t.starts_with("CTS-") || t.starts_with("IBT-")) return t.size() > 4;
  // C9-97, o12-5, CA17-22, C13-4.2-1.1: a letter prefix, a chapter number, a dash, a number.
  std::size_t i = 0;
  if (t.starts_with("CA"))
    i = 2;
  else if (!t.empty() && (t[0] == 'C' || t[0] == 'o'))
    i = 1;
  else
    return false;
  const std::size_t digits = i;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i == digits || i + 1 >= t.size() || t[i] != '-') return false;
  return std::isdigit(static_cast<unsigned char>(t[i + 1])) != 0;
}

std::string md_cell(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::span<const Statement> statements() {
  return kStatements;
}

const Statement* find_statement(std::string_view id) {
  for (const Statement& s : kStatements)
    if (s.id == id) return &s;
  return nullptr;
}

std::vector<std::string> statement_tokens(std::string_view citation) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < citation.size()) {
    while (i < citation.size() && (citation[i] == ' ' || citation[i] == ';' || citation[i] == ','))
      ++i;
    std::size_t j = i;
    while (j < citation.size() && citation[j] != ' ' && citation[j] != ';' && citation[j] != ',')
      ++j;
    const std::string_view token = citation.substr(i, j - i);
    if (looks_like_statement(token)) out.emplace_back(token);
    i = j;
  }
  return out;
}

Coverage coverage(const std::vector<CaseCitation>& cases) {
  Coverage c;
  std::map<std::string_view, std::size_t> row_of;
  for (const Statement& s : kStatements) {
    row_of[s.id] = c.rows.size();
    CoverageRow row;
    row.statement = &s;
    c.rows.push_back(std::move(row));
    if (s.kind == Statement::Kind::kApplies) ++c.applicable;
    if (s.kind == Statement::Kind::kNotApplicable) ++c.not_applicable;
    if (s.kind == Statement::Kind::kExtra) ++c.extra;
  }
  for (const CaseCitation& k : cases)
    for (const std::string& token : statement_tokens(k.citation)) {
      const auto it = row_of.find(token);
      if (it == row_of.end()) {
        c.unknown.push_back(k.id + ": " + token);
        continue;
      }
      CoverageRow& row = c.rows[it->second];
      if (!row.case_ids.empty() && row.case_ids.back() == k.id) continue;
      row.case_ids.push_back(k.id);
      if (k.result) row.cases.push_back(k.result);
      if (std::find(row.levels.begin(), row.levels.end(), k.level) == row.levels.end())
        row.levels.push_back(k.level);
    }
  for (const CoverageRow& row : c.rows)
    if (row.statement->kind == Statement::Kind::kApplies && !row.case_ids.empty()) ++c.covered;
  return c;
}

Coverage coverage(const std::vector<CaseResult>& cases) {
  std::vector<CaseCitation> citations;
  for (const CaseResult& r : cases)
    citations.push_back({r.id, r.citation.empty() ? r.clause : r.citation, r.requirement, &r});
  return coverage(citations);
}

std::string coverage_markdown(const Coverage& c) {
  std::string out;
  // The summary by chapter, in registry order.
  struct Tally {
    int applies = 0, covered = 0, na = 0;
  };
  std::vector<std::pair<std::string_view, Tally>> chapters;
  for (const CoverageRow& row : c.rows) {
    const Statement& s = *row.statement;
    if (s.kind == Statement::Kind::kExtra) continue;
    if (chapters.empty() || chapters.back().first != s.chapter) chapters.push_back({s.chapter, {}});
    Tally& t = chapters.back().second;
    if (s.kind == Statement::Kind::kNotApplicable) {
      ++t.na;
    } else {
      ++t.applies;
      if (!row.case_ids.empty()) ++t.covered;
    }
  }
  out += fmt::format(
      "Of {} public items that apply to RoCEv2, **{} are covered** by a case that cites them and "
      "{} are not; {} more do not apply to RoCEv2.\n\n",
      c.applicable, c.covered, c.applicable - c.covered, c.not_applicable);
  out += "| Chapter | Apply | Covered | Not covered | Not applicable |\n|---|---|---|---|---|\n";
  Tally all;
  for (const auto& [chapter, t] : chapters) {
    out += fmt::format("| {} | {} | {} | {} | {} |\n", chapter, t.applies, t.covered,
                       t.applies - t.covered, t.na);
    all.applies += t.applies;
    all.covered += t.covered;
    all.na += t.na;
  }
  out += fmt::format("| **Total** | **{}** | **{}** | **{}** | **{}** |\n\n", all.applies,
                     all.covered, all.applies - all.covered, all.na);
  out += "| Statement | Meaning | Case(s) | Level | Status |\n|---|---|---|---|---|\n";
  for (const CoverageRow& row : c.rows) {
    const Statement& s = *row.statement;
    std::string cases, levels;
    for (const std::string& id : row.case_ids)
      cases += fmt::format("{}`{}`", cases.empty() ? "" : ", ", id);
    for (const std::string& l : row.levels) levels += (levels.empty() ? "" : ", ") + l;
    std::string status;
    if (s.kind == Statement::Kind::kNotApplicable)
      status = fmt::format("not applicable to RoCEv2: {}", s.note);
    else if (s.kind == Statement::Kind::kExtra)
      status = fmt::format("cited, not a public item: {}", s.note);
    else if (row.case_ids.empty())
      status = fmt::format("**not covered**: {}", s.note.empty() ? "no case yet" : s.note);
    else
      status = "covered";
    out += fmt::format("| {} | {} | {} | {} | {} |\n", s.id, md_cell(s.meaning),
                       cases.empty() ? "—" : cases, levels.empty() ? "—" : levels, md_cell(status));
  }
  if (!c.unknown.empty()) {
    out += "\nCited IDs the registry does not know:";
    for (const std::string& u : c.unknown) out += " " + u + ";";
    out += "\n";
  }
  return out;
}

}  // namespace roceconf::report
