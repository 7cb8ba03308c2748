// Matches a received packet against what a case expects: a kind (ACK, NAK, RNR,
// READ_RESPONSE_FIRST, REP, REJ, ...) and named fields, read relative to the connection
// (`psn=1` is one after the connection's starting PSN, `msn=+1` one after the last MSN seen).
// Fields a case does not name are wildcards. A mismatch is a list of field diffs in the
// packetdrill style: `aeth.syndrome expected 0x60 (NAK_PSN_SEQ_ERROR) vs actual 0x1f (ACK)`.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "dissector/packet.h"
#include "reports/result.h"
#include "suite/engine/assignments.h"
#include "suite/engine/connection.h"

namespace roceconf::engine {

struct Expectation {
  std::string kind;  // "ACK", "NAK", "RNR", "READ_RESPONSE", an opcode name, a CM message, "any"
  Assignments fields;
};

// Checks an expectation before anything is sent: the kind is known, every key names a field
// (or a relative key: psn, msn, len, fill, data, icrc, syndrome), every value parses.
std::expected<void, std::string> check_expectation(const Expectation& e);

// Empty when `p` matches. An error when the expectation itself is wrong (unknown kind or field,
// a value that does not parse): that is the case's fault, not the target's.
std::expected<std::vector<report::FieldDiff>, std::string> match(const Packet& p,
                                                                 const Connection* c,
                                                                 const Expectation& e);

// Whether `p` is an ACK (AETH syndrome ACK) of a PSN before the one `e` expects (`psn=` in `e`,
// relative as in match). Any response acknowledges every earlier request (coalescing,
// 9.7.5.1.2), so a responder may ACK packets of a message before the ACK a case waits for.
bool acknowledges_earlier(const Packet& p, const Connection* c, const Expectation& e);

// Whether a kind names a CM message (REQ, REP, ...), which travels on QP1.
bool is_cm_kind(std::string_view kind);

// The packet in case syntax, so a received packet can be pasted into a case:
// "ACK psn=1 syndrome=0x1f msn=2" or "REJ cm.reason=8".
std::string describe_received(const Packet& p, const Connection* c);

}  // namespace roceconf::engine
