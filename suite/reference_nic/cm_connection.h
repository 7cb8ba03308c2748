// One connection as the CM agent tracks it (IBA Vol 1 12.9, the CM state machine; spec-facts §9):
// its state, both communication IDs, the QPs at each end, the attributes the QP transitions take
// from REQ and REP, where the peer's CM is, and the last message sent, kept for retransmission.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "dissector/mad/mad.h"
#include "suite/reference_nic/qp.h"

namespace roceconf::target {

// The states of the IBA 12.9 state machine that this agent passes through (Linux enum ib_cm_state
// names). REQ_RCVD and REP_RCVD are never observable: the agent answers within the same call.
enum class CmState : std::uint8_t {
  kReqSent,      // active: REQ sent, waiting for REP
  kMraReqRcvd,   // active: the peer asked for more time to answer the REQ
  kRepSent,      // passive: REP sent, waiting for RTU (or first data)
  kMraRepRcvd,   // passive: the peer asked for more time to answer the REP
  kEstablished,  //
  kDreqSent,     // DREQ sent, waiting for DREP
  kTimewait,     // over: the IDs stay reserved so late or duplicate messages are recognised
};

// "REQ_SENT", "MRA_REQ_RCVD", "REP_SENT", "MRA_REP_RCVD", "ESTABLISHED", "DREQ_SENT", "TIMEWAIT".
std::string_view cm_state_name(CmState state);

inline bool awaiting_rep(CmState s) {
  return s == CmState::kReqSent || s == CmState::kMraReqRcvd;
}
inline bool awaiting_rtu(CmState s) {
  return s == CmState::kRepSent || s == CmState::kMraRepRcvd;
}

// REJ reasons the agent sends (IBA Table 109, spec-facts §9.5).
namespace rej_reason {
inline constexpr std::uint16_t kNoQp = 1;
inline constexpr std::uint16_t kNoResources = 3;
inline constexpr std::uint16_t kTimeout = 4;
inline constexpr std::uint16_t kInvalidServiceId = 8;
inline constexpr std::uint16_t kInvalidTransport = 9;
inline constexpr std::uint16_t kStaleConnection = 10;
inline constexpr std::uint16_t kInvalidGid = 12;
inline constexpr std::uint16_t kInvalidPrimaryLid = 13;  // only the req-lid-checked defect
inline constexpr std::uint16_t kInvalidPathMtu = 26;
inline constexpr std::uint16_t kConsumer = 28;
inline constexpr std::uint16_t kInvalidClassVersion = 31;
}  // namespace rej_reason

// A CM timeout field (5 bits) in nanoseconds: 4.096 µs × 2^t (spec-facts §9.6).
constexpr std::uint64_t cm_timeout_ns(std::uint8_t t) {
  return std::uint64_t{4096} << (t & 0x1F);
}

// The local ACK timeout of a QP from the peer's target ACK delay and the packet lifetime of the
// path (the rule of Linux cm_ack_timeout): about the larger of the two, plus one.
constexpr std::uint8_t cm_ack_timeout(std::uint8_t ca_ack_delay, std::uint8_t packet_lifetime) {
  int t = packet_lifetime + 1;
  if (t >= ca_ack_delay) {
    t += (ca_ack_delay >= t - 1) ? 1 : 0;
  } else {
    t = ca_ack_delay + ((t >= ca_ack_delay - 1) ? 1 : 0);
  }
  return static_cast<std::uint8_t>(t < 31 ? t : 31);
}

struct CmConnection {
  bool active = false;  // we sent the REQ
  CmState state = CmState::kReqSent;
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;  // 0 until the REP (active side)
  std::uint64_t remote_ca_guid = 0;
  std::uint64_t service_id = 0;
  std::uint32_t qp_num = 0;
  std::uint32_t remote_qpn = 0;
  // The Starting PSN we announce (REQ or REP): our receive queue's first PSN (rq_psn). IBA
  // 12.7.23 / 12.7.36 and Linux cm.c: each side sends from the PSN the other announced.
  std::uint32_t local_psn = 0;
  QpType qp_type = QpType::kRc;
  // The transaction ID of the establishment (the REQ's, as the passive side answers it).
  std::uint64_t tid = 0;

  // The attributes the remaining transitions take: RTR (deferred under the rtu-required defect)
  // and RTS (on RTU or first data).
  std::optional<QpAttr> rtr;
  QpAttrMask rtr_mask = 0;
  QpAttr rts;
  QpAttrMask rts_mask = 0;

  // Where the peer's CM (its QP1) is, and the P_Key our MADs to it carry.
  AddressVector cm_av;
  std::uint16_t pkey = 0xFFFF;

  // The last message sent, as encoded, for retransmission and for answering duplicates.
  MadHeader out_header;
  std::array<std::uint8_t, kCmDataSize> out_data{};
  std::uint8_t retries_left = 0;
  std::uint8_t max_cm_retries = 0;
  std::uint64_t timeout_ns = 0;           // between retransmissions
  std::optional<std::uint64_t> deadline;  // retransmission, or the end of TIMEWAIT

  bool indexed_remote_qpn = false;  // in the live (remote QPN, CA GUID) index
};

}  // namespace roceconf::target
