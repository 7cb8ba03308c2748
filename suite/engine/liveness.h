// Liveness probes: whether a target still does its job after hostile input. A probe only asks
// (one SEND, one posted WR, one ClassPortInfo Get) and reads the answer; it tells a QP that went
// to Error, which a conformant device may do after a malformed packet, from one that stays in
// RTS and answers nothing (wedged), and a CM that answers from one that does not. The fuzzer's
// oracle (suite/fuzz) and the case language's `alive` step run them.
#pragma once

#include <string>

namespace roceconf::engine {

class CaseContext;
struct Connection;
}  // namespace roceconf::engine

namespace roceconf {
struct Packet;
}

namespace roceconf::engine {

struct Liveness {
  bool ok = true;
  std::string detail;  // what was asked and what came back, one line
};

// c's target QP: a SEND from the tester must get any answer for c (ACK, NAK, RNR NAK) within
// one expect window. With the control API the QP may instead be in Error (or Reset) and quiet;
// and the target's requester must still send: a WR posted on c's QP must put a packet for c on
// the wire (its request, or a retry of an earlier one) unless the QP is in Error.
Liveness probe_connection(CaseContext& ctx, Connection& c);

// What an answer for c says of the PSN c's responder expects next (Connection::flow_psn): a PSN
// sequence NAK names it, an ACK of PSN P makes it P + 1. Other packets change nothing.
void learn_expected_psn(Connection& c, const roceconf::Packet& p);

// The target's CM: a ClassPortInfo Get on QP1 gets its GetResp, asked up to three times.
Liveness probe_cm(CaseContext& ctx);

}  // namespace roceconf::engine
