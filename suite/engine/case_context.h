// The running case: the tester stack (emulated connections, CM active and passive sides, PSN
// and MSN tracking), the steps (send, expect, expect nothing, control) and the evidence they leave.
// Script cases (script.h) and C++ cases call the same steps. A step that fails throws CaseStop
// with the verdict, reason and field diffs; the runner records it.
//
// A facade: the work is done by the units it joins, each in a file of its own (evidence_recorder,
// receive_demux, wire_steps, control_steps, target_qp, cm_active, cm_passive, segmenter).
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dissector/packet.h"
#include "reports/result.h"
#include "suite/engine/assignments.h"
#include "suite/engine/case_stop.h"
#include "suite/engine/cm_active.h"
#include "suite/engine/cm_passive.h"
#include "suite/engine/connection.h"
#include "suite/engine/control_steps.h"
#include "suite/engine/evidence_recorder.h"
#include "suite/engine/frame_builder.h"
#include "suite/engine/matcher.h"
#include "suite/engine/receive_demux.h"
#include "suite/engine/target.h"
#include "suite/engine/target_qp.h"
#include "suite/engine/timing.h"
#include "suite/engine/wire_steps.h"

namespace roceconf::engine {

class CaseContext {
 public:
  CaseContext(Target& target, const Timing& timing, report::CaseResult& result, std::uint64_t seed);
  ~CaseContext();
  CaseContext(const CaseContext&) = delete;
  CaseContext& operator=(const CaseContext&) = delete;

  Target& target() { return target_; }
  const Timing& timing() const { return timing_; }
  TimeNs now() { return wire_.now(); }
  std::mt19937_64& random() { return random_; }

  // The case line the next events belong to ("cases/psn/gap.rcase:9").
  void set_step(std::string step) { evidence_.set_step(std::move(step)); }
  const std::string& step() const { return evidence_.step(); }

  // SKIPs the case when the target lacks a capability: "listener", "responder" (the RCNF
  // convention), "control", "pkey-limited" (ControlSteps::require).
  void require(std::string_view capability);

  // ---- connections ----
  Connection& connection(const std::string& name);  // an existing one (else the case is wrong)
  Connection& new_connection(const std::string& name);
  bool has_connection(const std::string& name) const { return connections_.contains(name); }

  // Full rdma_cm connect to the responder (REQ, REP, RTU), reading the region from the REP's
  // RCNF block. Keys: pmtu (bytes), pkey, target_psn (the REQ's Starting PSN: where the target's
  // requests start), rtu (0: stop after REP), and any REQ field. The tester sends from the
  // REP's Starting PSN (IBA 12.7.23, 12.7.36). FAILs when the target rejects or does not answer.
  void connect(Connection& c, const Assignments& a);
  // A target QP made through the control API and connected to the tester's emulated QP without
  // CM. Keys: pmtu, pkey_index, psn, recv (receives posted), recv_len, cq (a named CQ),
  // access (remote access flags, comma list), min_rnr_timer, max_dest_rd_atomic, region (bytes).
  void open(Connection& c, const Assignments& a);
  // The tester as the CM passive side, to grade the target's active side (control): a target QP
  // made as open() makes it (moved to INIT, receives posted), cm_connect towards the tester, the
  // target's REQ read (FAILs unless it names the QP and the service asked for, with a nonzero
  // Local Communication ID, transport RC and a valid path MTU), the REP, the RTU, and cm_status
  // must say established. The tester sends from the REQ's Starting PSN, the target from the
  // REP's (IBA 12.7.23, 12.7.36). Keys: rep=0 (stop after reading the REQ: the case answers),
  // service_id or port (default: a TCP port 4000-4999), pmtu, pkey, psn (the REQ's Starting PSN,
  // passed to cm_connect), target_psn (the REP's), recv, recv_len, region, connect.FIELD (any
  // cm_connect field), req.FIELD (more fields the REQ must have), and any REP field.
  void accept(Connection& c, const Assignments& a);
  // cm_status of the target QP of an accepted connection must have these fields (state=
  // established, reason=28, ...) within `window` (asked again every few ms until then).
  void expect_status(Connection& c, const Assignments& want, TimeNs window);
  // DREQ and the DREP (FAILs without DREP).
  void disconnect(Connection& c);

  // A CM message from the tester for `c`: REQ, REP, RTU, DREQ, DREP, MRA, REJ, LAP, ClassPortInfo
  // (Get). Defaults come from the connection; any field of the message and the MAD header (tid,
  // class_version, ...) can be set. On an accepted connection (the tester is the passive side)
  // REP, REJ and MRA answer the target's REQ: its TID, REJ and MRA of the REQ. Returns the
  // frame sent (a case may check what it sent).
  std::vector<std::uint8_t> cm_send(Connection& c, std::string_view message, const Assignments& a);

  // ---- data ----
  // One request packet (opcode name or number), or a whole message when `op` is SEND,
  // RDMA_WRITE, SEND_WITH_IMM, RDMA_WRITE_WITH_IMM: segmented at the path MTU, AckReq on the
  // last packet. Without psn=, the next PSN of the connection. Returns the frames sent, in order.
  std::vector<std::vector<std::uint8_t>> send(Connection& c, std::string_view op,
                                              const Assignments& a);
  // A frame as given (for cases that craft bytes themselves).
  void send_frame(std::vector<std::uint8_t> frame, std::string text);

  // The next packet for `c` (any RoCE packet when null) must match within `window`; with
  // `eventually`, other packets for `c` are skipped. Returns the match. FAILs otherwise.
  Received expect(Connection* c, const Expectation& e, TimeNs window, bool eventually = false);
  // What an expect passes over before its match (wire_steps.h).
  using ExpectMode = engine::ExpectMode;
  // The next packet must match one of `alternatives` (the spec allows each of them).
  Received expect(Connection* c, const std::vector<Expectation>& alternatives, TimeNs window,
                  ExpectMode mode);
  // No packet for `c` (none at all when null) within `window`.
  void expect_nothing(Connection* c, TimeNs window);
  // Packets for `c` that arrive within `window` (collects, never fails).
  std::vector<Received> collect(Connection* c, TimeNs window);
  // Waits `duration`, keeping what arrives for later expects.
  void wait(TimeNs duration);

  // ---- control ----
  // One typed request (control/messages.h), recorded; a refusal is the result's error, a lost or
  // malformed exchange ERRORs the case (ControlSteps::call).
  template <typename Request>
  control::Result<typename Request::Reply> call(const Request& request) {
    return control_.call(request);
  }
  // Same, and the case is INCONCLUSIVE when the target refuses (a set-up step).
  template <typename Request>
  typename Request::Reply setup(const Request& request) {
    return control_.setup(request);
  }
  // Any request object (a Python case's dict); ERRORs the case on a transport failure, records
  // the exchange.
  nlohmann::json control(nlohmann::json request);
  // Same, and the case is INCONCLUSIVE when the target answers ok=false (a set-up step).
  nlohmann::json control_ok(nlohmann::json request);
  // The target's counters, by name.
  std::map<std::string, std::uint64_t> counters();
  // A named CQ made through control (create cq as NAME depth=N).
  std::uint32_t create_cq(const std::string& name, std::uint32_t depth);
  std::uint32_t cq(const std::string& name);

  // ---- verdicts ----
  [[noreturn]] void fail(std::string reason, std::vector<report::FieldDiff> diffs = {});
  [[noreturn]] void skip(std::string reason);
  [[noreturn]] void inconclusive(std::string reason);
  [[noreturn]] void error(std::string reason);  // the case itself is wrong
  void note(std::string text);
  // A figure of a measuring case (name, value, threshold, finding): the result's measurements.
  void measure(report::Measurement m);

  Addresses addresses() const;
  // Releases what the case left open on a shared target: DREQ for connections, destroy_qp for
  // control-made QPs. Best effort, errors ignored.
  void close_all();

  // Frames recorded per case at most; the rest are counted (dropped_frames()).
  static constexpr std::uint64_t kMaxFrameEvents = EvidenceRecorder::kMaxFrameEvents;
  std::uint64_t dropped_frames() const { return evidence_.dropped_frames(); }

  // Counter values at the script's "counter snapshot" step.
  std::map<std::string, std::uint64_t> counter_base;

 private:
  // Reads the DREPs of `closing` while they keep coming (close_all).
  void await_dreps(std::vector<Connection*> closing);
  std::uint32_t new_qpn();

  // Declared in the order they are built: each unit takes the ones above it.
  Target& target_;
  Timing timing_;
  std::mt19937_64 random_;
  EvidenceRecorder evidence_;
  ConnectionTable connections_;
  PassiveTable passive_;
  ReceiveDemux demux_;
  WireSteps wire_;
  ControlSteps control_;
  CmActive cm_;
  TargetQps qps_;
  CmPassive cm_passive_;
  std::uint32_t next_qpn_ = 0;
};

}  // namespace roceconf::engine
