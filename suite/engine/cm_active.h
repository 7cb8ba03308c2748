// The tester's CM messages and its active side (IBA 12.6, rdma_cm conventions): any CM message
// for a connection built from the connection's state with fields overridden, the full connect
// (REQ, REP, RTU) to the target's responder, the disconnect, and what a matched CM answer
// teaches the connection (the REP's QPN, Starting PSN, comm ID and RCNF region).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "dissector/packet.h"
#include "suite/engine/assignments.h"
#include "suite/engine/connection.h"
#include "suite/engine/control_steps.h"
#include "suite/engine/evidence_recorder.h"
#include "suite/engine/receive_demux.h"
#include "suite/engine/target.h"
#include "suite/engine/timing.h"
#include "suite/engine/wire_steps.h"

namespace roceconf::engine {

class CmActive {
 public:
  // `passive` says which connections the tester accepted (REP, REJ and MRA then answer the
  // target's REQ).
  CmActive(Target& target, const Timing& timing, EvidenceRecorder& evidence, WireSteps& wire,
           ControlSteps& control, PassiveTable& passive);

  // Where the TIDs of this case's MADs start (the case's random stream chooses it).
  void set_first_tid(std::uint64_t tid) { next_tid_ = tid; }

  // A CM message from the tester for `c`: REQ, REP, RTU, DREQ, DREP, MRA, REJ, LAP, ClassPortInfo
  // (Get). Defaults come from the connection; any field of the message and the MAD header (tid,
  // class_version, ...) can be set. On an accepted connection REP, REJ and MRA answer the
  // target's REQ: its TID, REJ and MRA of the REQ. Returns the frame sent.
  std::vector<std::uint8_t> cm_send(Connection& c, std::string_view message, const Assignments& a);
  // Full rdma_cm connect to the responder (REQ, REP, RTU); keys as CaseContext::connect.
  void connect(Connection& c, const Assignments& a);
  // DREQ and the DREP (FAILs without DREP).
  void disconnect(Connection& c);
  // A packet an expect matched for `c`: the last MSN seen, and the CM state a REP, REJ or DREP
  // moves (IBA 12.7.36: the REP's Starting PSN is where the active side sends from).
  void after_match(Connection* c, const Packet& p);
  // A REQ to the responder's own service ID answered REJ Invalid Service ID: nothing listens
  // there now (a stock listener between restarts, a responder that died), so the case ends
  // INCONCLUSIVE instead of failing the device for what it was not asked.
  void after_mismatch(Connection* c, const Packet& p);

 private:
  Target& target_;
  const Timing& timing_;
  EvidenceRecorder& evidence_;
  WireSteps& wire_;
  ControlSteps& control_;
  PassiveTable& passive_;
  std::uint64_t next_tid_ = 0;
};

}  // namespace roceconf::engine
