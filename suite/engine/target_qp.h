// Target QPs made through the control API: the PD, CQ, QP, a region open to remote access and
// receive buffers (make), the whole QP moved to RTS and connected to the tester's emulated QP
// without CM (open), and the polling of cm_status for a QP whose connection the target made.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "suite/engine/assignments.h"
#include "suite/engine/connection.h"
#include "suite/engine/control_steps.h"
#include "suite/engine/evidence_recorder.h"
#include "suite/engine/receive_demux.h"
#include "suite/engine/target.h"
#include "suite/engine/wire_steps.h"

namespace roceconf::engine {

struct TargetQpSpec {
  std::string cq_name;  // empty: a CQ of its own
  std::uint32_t recv = 16;
  std::uint32_t recv_len = 4096;
  std::uint32_t region = 64 * 1024;
  std::vector<std::string> region_access = {"LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ",
                                            "REMOTE_ATOMIC"};
  std::vector<std::string> qp_access = {"REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"};
  std::uint32_t pkey_index = 0;
  std::string qp_type = "RC";  // RC or UC
};

class TargetQps {
 public:
  // `passive` names the connections the target made (expect_status needs one of them).
  TargetQps(Target& target, EvidenceRecorder& evidence, ControlSteps& control, WireSteps& wire,
            const PassiveTable& passive);

  // A target RC QP for `c`: PD, CQ (a named one or its own), the QP, a region open to remote
  // access, INIT, and `spec.recv` receive buffers posted. `c` learns the QPN and the region.
  void make(Connection& c, const TargetQpSpec& spec);
  // make, then RTR and RTS towards the tester's QP of `c`; keys as CaseContext::open.
  void open(Connection& c, const Assignments& a);
  // cm_status of the target QP of an accepted connection must have these fields within
  // `window` (asked again every few ms until then).
  void expect_status(Connection& c, const Assignments& want, TimeNs window);

 private:
  Target& target_;
  EvidenceRecorder& evidence_;
  ControlSteps& control_;
  WireSteps& wire_;
  const PassiveTable& passive_;
};

}  // namespace roceconf::engine
