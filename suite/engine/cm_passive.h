// The tester as the CM passive side, to grade the target's active side (control API): the
// target QP made and moved to INIT with receives posted, cm_connect towards the tester, the
// target's REQ read and checked, the REP, the RTU, and cm_status saying established.
#pragma once

#include <random>

#include "suite/engine/assignments.h"
#include "suite/engine/cm_active.h"
#include "suite/engine/connection.h"
#include "suite/engine/control_steps.h"
#include "suite/engine/evidence_recorder.h"
#include "suite/engine/receive_demux.h"
#include "suite/engine/target.h"
#include "suite/engine/target_qp.h"
#include "suite/engine/timing.h"
#include "suite/engine/wire_steps.h"

namespace roceconf::engine {

class CmPassive {
 public:
  // Accepted connections are entered in `passive`; `random` chooses service IDs and comm IDs.
  CmPassive(Target& target, const Timing& timing, EvidenceRecorder& evidence, WireSteps& wire,
            ControlSteps& control, CmActive& cm, TargetQps& qps, PassiveTable& passive,
            std::mt19937_64& random);

  // Keys and checks as CaseContext::accept.
  void accept(Connection& c, const Assignments& a);

 private:
  Target& target_;
  const Timing& timing_;
  EvidenceRecorder& evidence_;
  WireSteps& wire_;
  ControlSteps& control_;
  CmActive& cm_;
  TargetQps& qps_;
  PassiveTable& passive_;
  std::mt19937_64& random_;
};

}  // namespace roceconf::engine
