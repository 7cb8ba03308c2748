// The run-level framing cases (header/sent-framing, ipv6/sent-framing): the traffic each makes
// and the grading of the framing findings of every packet of the run, split by statement: the
// IPv6 header's rules (CA17-13 to CA17-19) are ipv6/sent-framing's, the rest header/'s.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "reports/result.h"
#include "suite/engine/case_context.h"

namespace roceconf::cases {

// Neither is a default anywhere: a target that sends with its own (64, 0) is caught.
inline constexpr std::uint8_t kFramingHopLimit = 17;
inline constexpr std::uint8_t kFramingTrafficClass = 0x68;  // DSCP 26 (AF31), ECN bits 00

// A connect whose REQ asks for kFramingHopLimit and kFramingTrafficClass (over the IPv6 GIDs
// with `ipv6`), a SEND, an RDMA WRITE, a three-packet READ, an atomic, a PSN sequence NAK and a
// DREQ; steps are named after `source`.
void framing_traffic(engine::CaseContext& ctx, std::string_view source, bool ipv6);

// Whether a sent-framing finding's statement is one of the IPv6 header's (CA17-13 to CA17-19).
bool is_ipv6_framing_statement(std::string_view statement);

struct FramingScope {
  bool ipv6_statements = false;   // grade the IPv6 header's statements, else all the others
  bool ipv6_frames_only = false;  // count and grade only frames that arrived over IPv6
};

// Folds the in-scope findings on every packet of the run (`others` and the case's own) into
// the case's verdict: FAIL naming the first and the number of packets and cases, else the
// case's own verdict with the number of packets checked.
void grade_framing(report::CaseResult& own, std::span<const report::CaseResult> others,
                   const FramingScope& scope);

}  // namespace roceconf::cases
