// CM cases that need what a script cannot say: values of one message compared with another
// (comm IDs, QPNs), counts of retransmissions, answers that may take several allowed forms, and
// loops (many connection set-ups at once).
#include <fmt/format.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cases/builtin.h"
#include "cases/cpp/case_def.h"

namespace roceconf::cases {

namespace {

using engine::CaseContext;
using engine::Connection;
using engine::kMillisecond;
using engine::Received;

constexpr const char* kSource = "cases/cpp/cm_cases.cc";

std::string hex(std::uint64_t v) {
  return fmt::format("{:#x}", v);
}

void step(CaseContext& ctx, std::string_view what) {
  ctx.set_step(fmt::format("{}: {}", kSource, what));
}

// The CM message of a received frame, when it is one of type M.
template <typename M>
const M* cm_as(const Received& r) {
  if (!r.packet.mad || !r.packet.mad->cm) return nullptr;
  return std::get_if<M>(&*r.packet.mad->cm);
}

std::string cm_name(const Received& r) {
  if (!r.packet.mad || !r.packet.mad->cm) return "a packet that is not a CM message";
  return std::string(cm_message_name(*r.packet.mad->cm));
}

Received expect_rep(CaseContext& ctx, Connection& c) {
  return ctx.expect(&c, {"REP", {}}, ctx.timing().expect_window(), false);
}

// RTU, then one SEND at the connection's starting PSN that must be ACKed.
void rtu_and_data(CaseContext& ctx, Connection& c) {
  step(ctx, fmt::format("RTU and SEND_ONLY psn=0 on {}", c.name));
  ctx.cm_send(c, "RTU", {});
  c.state = engine::ConnState::kEstablished;
  ctx.send(c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "32"}});
  ctx.expect(&c, {"ACK", {{"psn", "0"}, {"syndrome", "ack"}}}, ctx.timing().expect_window(), false);
}

// ---- REP identifies the connection ---------------------------------------------------------

void rep_identifies_connection(CaseContext& ctx) {
  ctx.require("responder");
  Connection& c = ctx.new_connection("c");
  step(ctx, "REQ");
  ctx.cm_send(c, "REQ", {});
  step(ctx, "REP: Remote Communication ID, Local Communication ID, Local QPN");
  const Received r = expect_rep(ctx, c);
  const auto* rep = cm_as<CmRep>(r);
  if (rep->remote_comm_id != c.local_comm_id)
    ctx.fail("the REP's Remote Communication ID is not the REQ's Local Communication ID",
             {{"cm.remote_comm_id", hex(c.local_comm_id), hex(rep->remote_comm_id)}});
  if (rep->local_comm_id == 0)
    ctx.fail("the REP's Local Communication ID is 0", {{"cm.local_comm_id", "not 0", "0x0"}});
  if (rep->local_qpn <= 1)
    ctx.fail("the REP names QP0 or QP1 (the management QPs) as the connection's QP",
             {{"cm.local_qpn", "a QPN other than 0 and 1", hex(rep->local_qpn)}});
  const std::uint32_t target_comm_id = rep->local_comm_id;
  rtu_and_data(ctx, c);
  step(ctx, "DREQ with the REP's IDs, DREP");
  ctx.cm_send(c, "DREQ", {});
  const Received d = ctx.expect(&c, {"DREP", {}}, ctx.timing().expect_window(), true);
  const auto* drep = cm_as<CmDrep>(d);
  if (drep->local_comm_id != target_comm_id || drep->remote_comm_id != c.local_comm_id)
    ctx.fail("the DREP's communication IDs are not those of the connection",
             {{"cm.local_comm_id", hex(target_comm_id), hex(drep->local_comm_id)},
              {"cm.remote_comm_id", hex(c.local_comm_id), hex(drep->remote_comm_id)}});
  c.state = engine::ConnState::kClosed;
}

// ---- REP responder resources and initiator depth -------------------------------------------

void rep_rdma_resources(CaseContext& ctx) {
  ctx.require("responder");
  constexpr unsigned kOurResponderResources = 3;  // READs/atomics the tester would accept
  constexpr unsigned kOurInitiatorDepth = 2;      // READs/atomics the tester will have in flight
  Connection& c = ctx.new_connection("c");
  step(ctx, fmt::format("REQ responder_resources={} initiator_depth={}", kOurResponderResources,
                        kOurInitiatorDepth));
  ctx.cm_send(c, "REQ",
              {{"responder_resources", std::to_string(kOurResponderResources)},
               {"initiator_depth", std::to_string(kOurInitiatorDepth)}});
  step(ctx, "REP: Responder Resources, Initiator Depth");
  const Received r = expect_rep(ctx, c);
  const auto* rep = cm_as<CmRep>(r);
  const unsigned resources = rep->responder_resources;
  if (rep->initiator_depth > kOurResponderResources)
    ctx.fail("the REP's Initiator Depth exceeds the REQ's Responder Resources",
             {{"cm.initiator_depth", fmt::format("<= {}", kOurResponderResources),
               std::to_string(rep->initiator_depth)}});
  if (resources > kOurInitiatorDepth)
    ctx.fail(
        "the REP's Responder Resources exceed the REQ's Initiator Depth (the swap of the "
        "two fields is missing?)",
        {{"cm.responder_resources", fmt::format("<= {}", kOurInitiatorDepth),
          std::to_string(resources)}});
  if (resources < 1)
    ctx.fail(
        "the REP's Responder Resources are 0: the responder takes no READ or atomic (the "
        "RCNF convention promises at least 1)",
        {{"cm.responder_resources", ">= 1", "0"}});
  if (!c.region) ctx.skip("the REP carries no RCNF block: no region to READ from");
  step(ctx, "RTU");
  ctx.cm_send(c, "RTU", {});
  c.state = engine::ConnState::kEstablished;
  // As many READs in flight as the responder said it takes: each must be answered.
  for (unsigned i = 0; i < resources; ++i) {
    step(ctx, fmt::format("READ {} of {} in flight", i + 1, resources));
    ctx.send(c, "RDMA_READ_REQUEST",
             {{"psn", std::to_string(i)},
              {"offset", std::to_string(8 * i)},
              {"len", "0"},
              {"dmalen", "8"}});
  }
  for (unsigned i = 0; i < resources; ++i) {
    step(ctx, fmt::format("READ response {}", i + 1));
    ctx.expect(&c, {"READ_RESPONSE", {{"psn", std::to_string(i)}, {"len", "8"}}},
               ctx.timing().expect_window(), false);
  }
}

// ---- duplicate REQ -------------------------------------------------------------------------

// What answers duplicates of c's REQ within `window`: the REP again (the same connection), an MRA,
// or nothing; a REP of another connection, a REJ or anything else fails.
void only_the_same_rep(CaseContext& ctx, Connection& c, const CmRep& rep, TimeNs window) {
  const std::uint32_t qpn = rep.local_qpn, comm_id = rep.local_comm_id, psn = rep.starting_psn;
  for (const Received& got : ctx.collect(&c, window)) {
    if (const auto* again = cm_as<CmRep>(got)) {
      if (again->local_qpn != qpn || again->local_comm_id != comm_id || again->starting_psn != psn)
        ctx.fail("the duplicate REQ got a REP for a second connection",
                 {{"cm.local_qpn", hex(qpn), hex(again->local_qpn)},
                  {"cm.local_comm_id", hex(comm_id), hex(again->local_comm_id)},
                  {"cm.starting_psn", hex(psn), hex(again->starting_psn)}});
    } else if (const auto* rej = cm_as<CmRej>(got)) {
      ctx.fail(fmt::format("the duplicate REQ was rejected (reason {}): a lost REP must not end "
                           "the connection attempt",
                           rej->reason),
               {{"cm.msg", "REP (the same), MRA or nothing", "REJ"}});
    } else if (!cm_as<CmMra>(got)) {
      ctx.fail(fmt::format("the duplicate REQ got {}", cm_name(got)),
               {{"cm.msg", "REP (the same), MRA or nothing", cm_name(got)}});
    }
  }
}

// A new connection c: its REQ, and the REP that must answer it.
CmRep req_and_rep(CaseContext& ctx, Connection& c) {
  step(ctx, "REQ");
  ctx.cm_send(c, "REQ", {});
  step(ctx, "REP");
  return *cm_as<CmRep>(expect_rep(ctx, c));
}

void duplicate_req(CaseContext& ctx) {
  ctx.require("responder");
  Connection& c = ctx.new_connection("c");
  const CmRep rep = req_and_rep(ctx, c);
  step(ctx, "the same REQ again (same TID, IDs, QPN and PSN)");
  ctx.cm_send(c, "REQ", {{"tid", hex(c.req_tid)}});
  step(ctx, "what answers the duplicate: the same REP, an MRA, or nothing");
  only_the_same_rep(ctx, c, rep, ctx.timing().expect_window());
  rtu_and_data(ctx, c);
}

// cm-fault/req-storm: the same REQ a thousand times after its REP.
constexpr int kStormReqs = 1000;

void req_storm(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  const CmRep rep = req_and_rep(ctx, c);
  step(ctx, fmt::format("the same REQ {} times more (same TID, IDs, QPN and PSN)", kStormReqs));
  for (int i = 0; i < kStormReqs; ++i) ctx.cm_send(c, "REQ", {{"tid", hex(c.req_tid)}});
  step(ctx, "for 1 s: only the same REP again, MRAs, or nothing");
  only_the_same_rep(ctx, c, rep,
                    std::max<TimeNs>(ctx.timing().expect_window(), 1000 * kMillisecond));
  rtu_and_data(ctx, c);
}

// ---- LAP on RoCE ---------------------------------------------------------------------------

// A LAP whose alternate port LIDs are nonzero: they are reserved on RoCE, so the CM must not
// reject for them. It may load the path (APR status 0), refuse alternate paths altogether (an
// APR of another status) or ignore the LAP, as Linux does on RoCE; never APR status 7.
void lap_lid_fields_ignored(CaseContext& ctx) {
  ctx.require("responder");
  Connection& c = ctx.new_connection("c");
  step(ctx, "connect c");
  ctx.connect(c, {});
  step(ctx, "LAP with alternate local/remote port LIDs 0x1234/0x5678");
  ctx.cm_send(c, "LAP",
              {{"cm.alternate_local_lid", "0x1234"}, {"cm.alternate_remote_lid", "0x5678"}});
  step(ctx, "what answers the LAP: an APR of any status but 7, or nothing");
  for (const Received& got : ctx.collect(&c, ctx.timing().expect_window())) {
    if (const auto* apr = cm_as<CmApr>(got)) {
      if (apr->ap_status == 7)
        ctx.fail("the LAP's reserved LID fields were validated: APR status 7 (invalid LID)",
                 {{"cm.ap_status", "not 7 (the LIDs are reserved on RoCEv2)", "7"}});
      if (apr->remote_comm_id != c.local_comm_id)
        ctx.fail("the APR does not carry the LAP's communication ID",
                 {{"cm.remote_comm_id", hex(c.local_comm_id), hex(apr->remote_comm_id)}});
      ctx.note(fmt::format("APR status {}", apr->ap_status));
    } else if (cm_as<CmDreq>(got) || cm_as<CmRej>(got)) {
      ctx.fail(fmt::format("the LAP ended the connection ({})", cm_name(got)),
               {{"cm.msg", "APR or nothing", cm_name(got)}});
    }
  }
  step(ctx, "the connection still carries data");
  ctx.send(c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "32"}});
  ctx.expect(&c, {"ACK", {{"psn", "0"}, {"syndrome", "ack"}}}, ctx.timing().expect_window());
}

// ---- stale connection ----------------------------------------------------------------------

void stale_connection(CaseContext& ctx) {
  ctx.require("responder");
  Connection& c = ctx.new_connection("c");
  step(ctx, "connect c");
  ctx.connect(c, {});
  step(ctx, "SEND_ONLY on c");
  ctx.send(c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "32"}});
  ctx.expect(&c, {"ACK", {{"psn", "0"}}}, ctx.timing().expect_window(), false);
  Connection& d = ctx.new_connection("d");
  step(ctx, "REQ d from c's QP (new communication ID, same QPN and CA GUID)");
  ctx.cm_send(d, "REQ", {{"local_qpn", hex(c.local_qpn)}});
  step(ctx, "REJ reason 10 (stale connection) for d");
  ctx.expect(&d, {"REJ", {{"reason", "10"}, {"cm.message_rejected", "0"}}},
             ctx.timing().expect_window(), false);
  // The passive side may also release the old connection; answer its DREQ so it does not retry.
  step(ctx, "c: a DREQ, if the target releases the old connection (not required)");
  for (const Received& got : ctx.collect(&c, ctx.timing().silence_window())) {
    if (cm_as<CmDreq>(got)) {
      ctx.note("the target released the old connection with a DREQ; DREP sent");
      ctx.cm_send(c, "DREP", {{"tid", hex(got.packet.mad->header.tid)}});
      c.state = engine::ConnState::kClosed;
    }
  }
}

// ---- no RTU: REP resent, then REJ Timeout ----------------------------------------------------

// want_rej: the REJ Timeout after the last retry is required (SHOULD case); without it only the
// REP retries are graded and a REJ of any reason is accepted.
void rtu_timeout(CaseContext& ctx, bool want_rej) {
  ctx.require("listener");
  constexpr unsigned kMaxCmRetries = 2;
  constexpr unsigned kResponseTimeout = 12;  // 4.096 us x 2^12 = 16.8 ms
  const TimeNs limit = 600 * kMillisecond;
  Connection& c = ctx.new_connection("c");
  step(ctx, fmt::format("REQ local_cm_response_timeout={} max_cm_retries={}", kResponseTimeout,
                        kMaxCmRetries));
  ctx.cm_send(c, "REQ",
              {{"local_cm_response_timeout", std::to_string(kResponseTimeout)},
               {"max_cm_retries", std::to_string(kMaxCmRetries)}});
  step(ctx, "REP");
  const Received first = expect_rep(ctx, c);
  const auto* rep = cm_as<CmRep>(first);
  const std::uint32_t qpn = rep->local_qpn, comm_id = rep->local_comm_id;
  step(ctx, want_rej ? "no RTU: the REP again, then REJ Timeout" : "no RTU: the REP again");
  const TimeNs start = ctx.now();
  unsigned resent = 0;
  std::optional<Received> rej;
  // Without want_rej the whole window is watched: a REP after the retries ran out also counts.
  while ((!rej || !want_rej) && ctx.now() - start < limit) {
    for (Received& got : ctx.collect(&c, 10 * kMillisecond)) {
      if (const auto* again = cm_as<CmRep>(got)) {
        ++resent;
        if (again->local_qpn != qpn || again->local_comm_id != comm_id)
          ctx.fail("a resent REP names another connection",
                   {{"cm.local_qpn", hex(qpn), hex(again->local_qpn)},
                    {"cm.local_comm_id", hex(comm_id), hex(again->local_comm_id)}});
      } else if (cm_as<CmRej>(got)) {
        if (!rej) rej = std::move(got);
        if (want_rej) break;
      } else {
        ctx.fail(fmt::format("while waiting for the RTU the target sent {}", cm_name(got)),
                 {{"cm.msg", "REP or REJ", cm_name(got)}});
      }
    }
  }
  if (resent == 0)
    ctx.fail("the target gave up without resending its REP once",
             {{"REP retransmissions", fmt::format("1 to {}", kMaxCmRetries), "0"}});
  if (resent > kMaxCmRetries)
    ctx.fail(
        fmt::format("the REP was resent {} times, more than Max CM Retries", resent),
        {{"REP retransmissions", fmt::format("1 to {}", kMaxCmRetries), std::to_string(resent)}});
  if (!want_rej) {
    ctx.note(fmt::format(
        "REP resent {} time(s){}", resent,
        rej ? fmt::format(", then REJ reason {}", cm_as<CmRej>(*rej)->reason) : ", then nothing"));
    if (rej) c.state = engine::ConnState::kRejected;
    return;
  }
  if (!rej)
    ctx.fail(fmt::format("no REJ within {} ms of the REP (the REP was resent {} times)",
                         limit / kMillisecond, resent),
             {{"cm.msg", "REJ reason 4 (timeout)", "nothing"}});
  const auto* r = cm_as<CmRej>(*rej);
  if (r->reason != 4 || r->remote_comm_id != c.local_comm_id)
    ctx.fail("the REJ that ends the wait for the RTU is not a Timeout REJ for this connection",
             {{"cm.reason", "0x4 (timeout)", hex(r->reason)},
              {"cm.remote_comm_id", hex(c.local_comm_id), hex(r->remote_comm_id)}});
  ctx.note(fmt::format("REP resent {} time(s), then REJ Timeout", resent));
  c.state = engine::ConnState::kRejected;
}

// ---- unsupported CM class version ----------------------------------------------------------

void bad_class_version(CaseContext& ctx) {
  ctx.require("responder");
  constexpr unsigned kBadVersion = 0x7F;  // no CM class version (IBA 1.2 on uses 2)
  Connection& c = ctx.new_connection("c");
  step(ctx, fmt::format("REQ with class_version={:#x}", kBadVersion));
  ctx.cm_send(c, "REQ", {{"class_version", hex(kBadVersion)}});
  step(ctx, "no REP: nothing, or REJ reason 31 (invalid class version)");
  bool rejected = false;
  for (const Received& got : ctx.collect(&c, ctx.timing().expect_window())) {
    if (cm_as<CmRep>(got))
      ctx.fail("a REQ of an unsupported CM class version was accepted (REP)",
               {{"cm.msg", "nothing, or REJ reason 31", "REP"}});
    if (const auto* rej = cm_as<CmRej>(got)) {
      if (rej->reason != 31)
        ctx.fail("a REQ of an unsupported CM class version was rejected with another reason",
                 {{"cm.reason", "0x1f (invalid class version)", hex(rej->reason)}});
      rejected = true;
    }
  }
  ctx.note(rejected ? "rejected with reason 31" : "discarded without an answer");
  c.state = engine::ConnState::kClosed;
  // The same REQ with the right class version, from another connection, is accepted.
  Connection& d = ctx.new_connection("d");
  step(ctx, "REQ d with class version 2");
  ctx.cm_send(d, "REQ", {});
  step(ctx, "REP for d");
  expect_rep(ctx, d);
  rtu_and_data(ctx, d);
}

// ---- concurrent set-ups ----------------------------------------------------------------------

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

void add(engine::Catalogue& catalogue, std::string id, std::string title, std::string description,
         Cite cite, std::string level, std::function<void(CaseContext&)> run,
         std::vector<std::string> needs = {"responder"}) {
  add_case(catalogue, kSource, std::move(id), std::move(title), std::move(description),
           std::move(cite), std::move(level), std::move(needs), std::move(run));
}

}  // namespace

void add_cm_cpp_cases(engine::Catalogue& catalogue) {
  add(catalogue, "cm/lap-lid-fields-ignored",
      "A LAP's reserved alternate port LIDs are not validated: no APR status 7, and the "
      "connection stays",
      "On an established connection the tester sends a LAP whose alternate path carries port "
      "LIDs 0x1234 and 0x5678. On RoCEv2 these fields are reserved: the target may load the path, "
      "refuse alternate paths with an APR of another status, or ignore the LAP, but an APR with "
      "status 7 (invalid LID), a REJ or a DREQ fails. A SEND after it must still be ACKed.",
      {"CA17-36 CA17-37 CA17-38; Table 115; Table 116",
       "The LAP's alternate port LID fields are reserved and not validated on receipt; an APR "
       "never carries status 7",
       "CA17-36, CA17-37, CA17-38: Annex A17 text; Tables 115, 116: Linux ibta_vol1_c12.h"},
      "MUST", lap_lid_fields_ignored);
  add(catalogue, "cm/rep-identifies-connection",
      "The REP echoes the REQ's communication ID and names its own ID and a data QP",
      "The REP's Remote Communication ID must be the REQ's Local Communication ID, its Local "
      "Communication ID must not be 0, and its Local QPN must not be QP0 or QP1. After the RTU a "
      "SEND to that QPN is ACKed, and a DREQ carrying the REP's IDs gets a DREP with the same "
      "pair of IDs.",
      {"Table 110 o12-3; Table 112; Table 113",
       "The REP's Remote Communication ID is the REQ's Local Communication ID, its own is nonzero "
       "and its Local QPN names a data QP; DREQ and DREP carry the pair of IDs",
       "Tables 106-113: Linux ibta_vol1_c12.h; o12-3: p4ws mgmt.p4 (weak)"},
      "MUST", rep_identifies_connection);
  add(catalogue, "cm/rep-rdma-resources",
      "The REP's READ/atomic resources fit the REQ's, and the responder takes as many READs as "
      "it offers",
      "The REQ offers Responder Resources 3 and Initiator Depth 2. The REP's Initiator Depth "
      "must not exceed 3 (the tester cannot take more), and its Responder Resources must not "
      "exceed 2 (the tester will never have more in flight; a target that copies the REQ's "
      "Responder Resources instead of swapping the two fields gets 3). The RCNF convention asks "
      "for at least 1. That many READs are then sent back to back and each must be answered.",
      {"Table 106; Table 110",
       "The REP's Initiator Depth is at most the REQ's Responder Resources and its Responder "
       "Resources at most the REQ's Initiator Depth; the responder then takes as many READs as "
       "it offered (the RCNF convention asks for at least 1)",
       "Tables 106-113: Linux ibta_vol1_c12.h; the swap: Linux cm.c"},
      "MUST", rep_rdma_resources);
  add(catalogue, "cm/duplicate-req-one-connection",
      "A repeated REQ does not make a second connection",
      "The REQ is sent again after its REP arrived (as when the REP is lost). The passive side "
      "may send the same REP again, send an MRA, or stay silent; it must not answer with a REP "
      "naming another QP, communication ID or starting PSN, and must not reject the attempt. "
      "The RTU then completes the first connection, which carries data.",
      {"Table 106",
       "A duplicate REQ (same Local Communication ID and Local CA GUID) in REP Sent is not a new "
       "connection request: the same REP again, an MRA or nothing, never another connection",
       "duplicate REQ handling: Linux cm.c cm_dup_req_handler; Table 106: Linux "
       "ibta_vol1_c12.h"},
      "MUST", duplicate_req);
  add(catalogue, "cm-fault/req-storm",
      "A storm of the same REQ makes one connection, and the target stays usable",
      "After the REP, the same REQ (same TID, communication ID, QPN and PSN) arrives 1,000 times "
      "more, as from a broken or hostile peer. The passive side may resend the same REP or send "
      "MRAs, or stay silent; it must not make a second connection (a REP with another QPN or "
      "communication ID), reject the first, or stop answering: the RTU then establishes the "
      "connection and it carries data.",
      {"Table 106; 12.6",
       "Duplicates of a REQ, however many, are not new connection requests: one connection, "
       "which still completes and carries data",
       "duplicate REQ handling: Linux cm.c cm_dup_req_handler; Table 106: Linux ibta_vol1_c12.h; "
       "unchecked: 12.6"},
      "MUST", req_storm);
  add(catalogue, "cm/stale-connection-rej",
      "A REQ from a QP that is still in a connection is rejected as stale (reason 10)",
      "With connection c established and carrying data, a new REQ arrives from the same CA GUID "
      "and QPN under a new communication ID (the peer QP was reused while the target still "
      "holds the old connection). The passive side must reject it with reason 10, Stale "
      "Connection. It may also release c with a DREQ, which the tester answers.",
      {"Table 108; Table 109",
       "A REQ whose QPN and CA GUID belong to an established connection is rejected with reason "
       "10, Stale Connection",
       "REJ reason codes: Linux ib_cm.h; stale REQ: Linux cm.c cm_match_req; unchecked: Table "
       "109"},
      "MUST", stale_connection);
  add(catalogue, "cm/rep-retries-bounded",
      "Without an RTU the REP is resent, at most Max CM Retries times, and then no more",
      "The REQ asks for a 16.8 ms CM response timeout (code 12) and Max CM Retries 2, and no "
      "RTU (and no data) follows the REP. The passive side must resend its REP (the same QP and "
      "communication ID) at least once and at most twice within 600 ms, and send nothing else "
      "but a REJ (any reason) for this connection. cm/rtu-timeout-rej grades the REJ Timeout.",
      {"Table 106",
       "The passive side resends its REP on each CM response timeout, at most Max CM Retries "
       "times; then it gives up on the connection",
       "Table 106: Linux ibta_vol1_c12.h; REP resend: Linux cm.c"},
      "MUST", [](CaseContext& ctx) { rtu_timeout(ctx, false); }, {"listener"});
  add(catalogue, "cm/rtu-timeout-rej",
      "Without an RTU the REP is resent at most Max CM Retries times, then the connection is "
      "rejected with reason 4 (Timeout)",
      "The REQ asks for a 16.8 ms CM response timeout (code 12) and Max CM Retries 2, and no "
      "RTU (and no data) follows the REP. The passive side should resend its REP (the same QP "
      "and communication ID) at least once and at most twice, then send a REJ with reason 4 "
      "for this connection, so the active side learns of it. Linux goes idle without a REJ, "
      "illumos sends one; no statement makes it mandatory: SHOULD. All of it fits in well under "
      "600 ms.",
      {"Table 106; Table 108; Table 109",
       "When the REP's retries run out without an RTU the passive side should reject the "
       "connection with reason 4, Timeout",
       "REJ reason codes: Linux ib_cm.h; no REJ from Linux cm.c cm_process_send_error, one from "
       "illumos; unchecked: Table 109"},
      "SHOULD", [](CaseContext& ctx) { rtu_timeout(ctx, true); }, {"listener"});
  add(catalogue, "cm/bad-class-version-no-connection",
      "A REQ with an unsupported CM class version makes no connection",
      "A REQ whose MAD header carries class version 0x7F is not a REQ the target's CM can "
      "read: it must not be answered with a REP. Discarding it, or a REJ with reason 31 "
      "(Invalid Class Version), are both acceptable; a REJ with another reason is not. The "
      "same REQ with class version 2 from a fresh connection is then accepted and carries "
      "data.",
      {"13.4 C13-4.2-1.1; Table 109",
       "A MAD of an unsupported class version is not processed as that class: no REP; a REJ "
       "with reason 31 (Invalid Class Version) or silence",
       "REJ reason 31: Linux ib_cm.h; C13-4.2-1.1: p4ws mgmt.p4 (weak); unchecked: 13.4, Table "
       "109"},
      "MUST", bad_class_version);

  for (int n : {1, 8, 32, 128}) {
    engine::CaseDef def;
    def.id = fmt::format("cm/concurrent-setups-{}", n);
    def.area = "cm";
    def.title =
        fmt::format("{} connection set-ups in flight at once all succeed with distinct QPNs", n);
    def.description = fmt::format(
        "{} REQs are sent back to back before any REP is read. Each must get a REP carrying a QP "
        "number no other connection has, and each connection must then accept a SEND.",
        n);
    def.citation = "12.6.8; 12.9.1; Table 110";
    def.rule =
        "Each connection established gets its own QP: the REP's Local QPN names a QP no other "
        "connection has, also when set-ups overlap";
    def.checked = "Table 110: Linux ibta_vol1_c12.h; unchecked: 12.6.8, 12.9.1";
    def.requirement = "MUST";
    def.needs = {"responder"};
    def.source = "cases/cpp/cm_cases.cc";
    def.run = [n](CaseContext& ctx) { concurrent_setups(ctx, n); };
    catalogue.add(std::move(def));
  }
}

}  // namespace roceconf::cases
