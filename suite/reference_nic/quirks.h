// Switchable defects of the reference target. Each models one real adapter or software-stack
// bug and nothing else, so the conformance suite can prove that it catches it.
#pragma once

#include <bitset>
#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>

namespace roceconf::target {

enum class Quirk : std::uint8_t {
  kPsnGapAck,                  // a PSN gap is ACKed instead of NAKed (sequence error)
  kPsnNakRepeat,               // a NAK for every out-of-order packet, not one per gap
  kAckPsnOffByOne,             // ACKs carry the PSN after the one acknowledged
  kDupReexecute,               // duplicate SEND/WRITE executed again
  kMsnStuck,                   // AETH MSN never increments
  kNakCodeSwap,                // invalid-request and remote-access NAK codes swapped
  kRnrAsNak,                   // missing receive WQE answered with NAK invalid request, not RNR
  kMtuUnchecked,               // packets longer/shorter than the PMTU accepted
  kReadRespSplitWrong,         // READ responses segmented at PMTU - 4 bytes
  kPkeyUnchecked,              // P_Key never compared
  kPkeyLimitedMatch,           // two limited members of a partition match
  kIcrcUnchecked,              // bad ICRC accepted
  kRejWrongReason,             // REJ for an unknown service ID says "no resources" (3), not 8
  kTidMismatch,                // CM replies do not echo the request's transaction ID
  kRtuRequired,                // data before RTU dropped (no half-open connection)
  kQpnReuse,                   // concurrent REQs answered with one QPN
  kIllegalTransitionAccepted,  // RESET→RTS allowed
  kStaleSqOnRts,               // WQEs flushed earlier are sent again on entering RTS
  kWqePrefetchOverwrite,       // two WQEs under one doorbell: the second overwrites the first
  kCqOverflowLate,             // CQ overflow reported one completion late, as a QP error
  kIcrcPadExcluded,            // ICRC computed without the pad bytes
  kSmallBadIcrcAccepted,       // bad ICRC not caught on frames shorter than 65 bytes
  kGsiQkeyUnchecked,           // QP1 takes datagrams with any Q_Key
  kReqLidChecked,              // a REQ with nonzero port LIDs rejected with reason 13
  kDreqIdsSwapped,             // the target's DREQ carries the two comm IDs swapped
  kPdUnchecked,                // an R_Key of another PD's region works
  kGidTypeUnreported,          // the GID table lists entries without their GID type
  kPostBeforeReady,            // post_send in RESET/INIT/RTR and post_recv in RESET are queued
  kCqDestroyInUse,             // destroy_cq of a CQ in use succeeds
  kUdOversizeError,            // a UD send above the MTU completes with LOC_LEN_ERR
  kUdQkeyUnchecked,            // a UD QP takes datagrams with any Q_Key
  kControlledQkeyIgnored,      // a WR Q_Key with the high bit set is sent as given
  kCqOverrunKeepsQp,           // a send CQ overrun leaves the requester QP in RTS
  kQp0Accepted,                // a request to DestQP 0 reaches the sender's newest QP
  kIpVersionUnchecked,         // the IPv4 version field is never read
  kIpOptionsAccepted,          // IPv4 headers with options (IHL > 5) accepted
  kIpFragmentsAccepted,        // IPv4 first fragments (More Fragments set) taken as whole
  kIpLengthUnchecked,          // IP total length and UDP length ignored (frame size used)
  kZeroLengthRkeyChecked,      // a zero-length RDMA READ/WRITE has its R_Key checked
  kDmaLengthUnchecked,         // RETH DMA length above 2^31 not refused
  kSendOverflowTruncated,      // a SEND longer than the receive is truncated, not refused
  kWriteConsumesReceive,       // an RDMA WRITE without immediate consumes a receive WQE
  kTtlFixed64,                 // IP TTL / hop limit always 64, whatever the AV says
  kEcnEctWithoutCc,            // ECT(0) on every packet without congestion management
  kDfClear,                    // IPv4 Don't Fragment never set
  kPortLidReported,            // the port reports a LID, an SM LID and an LMC, as an IB port
  kClientReregAdvertised,      // the port advertises client reregistration (CLIENT_REG_SUP)
  kSolicitedEventAlways,       // a CQ armed for solicited completions fires on any completion
  kCqStaysArmed,               // a completion event does not disarm the CQ
  kLapLidChecked,              // a LAP with nonzero alternate port LIDs gets APR status 7
  kMadIcrcUnchecked,           // MADs (DestQP 1) are taken whatever their ICRC
  kForgedRepAccepted,          // the active side takes a REP with a Remote Comm ID not its own
  kRejKeepsQp,                 // a REJ of the REP leaves the passive QP taking requests
  kCqErrorSpills,              // one CQ's overrun stops every CQ of the device
  kLateDupReqRejected,         // a duplicate REQ of an established connection gets REJ stale
  kGoBackNFromStart,           // a sequence NAK resends from the first PSN of the oldest message
  kRetransmitTwicePerNak,      // a sequence NAK makes the requester resend everything twice
  kAckTimeoutIgnored,          // the local ACK timeout fires after 4 ms, whatever its attribute
  kRetryCountIgnored,          // retry_cnt never runs out: no RETRY_EXC_ERR
  kRnrTimerIgnored,            // a request RNR NAKed is resent at once, not after the timer
  kReadRerequestFromStart,     // a lost READ response makes the whole READ be requested again
  kGhostAckCompletes,          // an ACK for a PSN never sent completes every outstanding WR
  kCoalescedAckCompletesOne,   // one response completes at most one earlier WR
  kExceedsMaxRdAtomic,         // READs and atomics are sent beyond max_rd_atomic
  kSequentialRkeys,            // R_Keys of successive regions differ by a constant step
  kRkeyReuse,                  // a deregistered region's R_Key goes to the next region
  kSequentialQpns,             // QPNs handed out one after the other
  kSequentialPsns,             // the REPs' Starting PSNs count up by one per connection
  kMwRkeySurvivesRebind,       // a window's old R_Key still works after a rebind or invalidation
  kMwPdUnchecked,              // a type 1 window is reached through a QP of any PD
  kMwQpUnchecked,              // a type 2 window is reached through any QP
  kMwBindRightUnchecked,       // windows bind to regions without the MW_BIND right
  kMwAccessUnchecked,          // a window grants its region's rights, not its own
  kMwZeroBasedUnbounded,       // a zero-based window reaches to the end of its region
  kIpv6HopLimitFixed,          // IPv6 hop limit always 64 (the IPv4 TTL follows the AV)
  kIpv6TrafficClassZero,       // IPv6 traffic class 0, whatever the AV says
  kIpv6PlenWithoutIcrc,        // IPv6 payload length leaves out the ICRC
  kIpv6IcrcUnchecked,          // bad ICRC accepted on packets over IPv6
  kCnpMissing,                 // no CNP for a CE-marked request
  kCnpWrongQpn,                // the CNP names the receiving QP, not the sender's
  kCnpConsumesPsn,             // the CNP takes the responder's next PSN (ePSN moves)
  kCnpUnpaced,                 // a CNP for every CE-marked request, no interval
  kCnpPacedPerPort,            // one CNP per interval for the whole port, not per QP
  kCnpIgnored,                 // a received CNP does not lower the QP's rate
  kCnpSlowsAll,                // a received CNP lowers the rate of every QP
  // Defects no catalogue case reaches (area "fuzz"): hostile input kills or wedges the device.
  kPadOverrunWedgesQp,           // a PadCnt above the payload wedges the QP (still RTS)
  kUnknownOpcodeKillsNic,        // an unknown opcode to QPN 0xFFFFFF stops the whole NIC
  kTruncatedAethHangsRequester,  // a READ response with a cut AETH hangs the requester QP
  kMalformedMadHangsCm,          // a MAD of the wrong size (or a bad rdma_cm header) hangs the CM
  kRethVaWraps,                  // a RETH VA + DMA length past 2^64 passes the region check
  kCount,
};

struct QuirkInfo {
  Quirk quirk;
  std::string_view name;  // as given to --quirk
  // The case area that must catch it; "fuzz": none may (no case sends its input), the fuzzer
  // must find it.
  std::string_view area;
  std::string_view description;
};

std::span<const QuirkInfo> all_quirks();
const QuirkInfo& quirk_info(Quirk quirk);

class Quirks {
 public:
  Quirks() = default;
  bool has(Quirk q) const { return bits_.test(static_cast<std::size_t>(q)); }
  void set(Quirk q, bool on = true) { bits_.set(static_cast<std::size_t>(q), on); }
  bool none() const { return bits_.none(); }
  // Enables a quirk by its name; the error lists the valid names.
  std::expected<void, std::string> enable(std::string_view name);
  std::string names() const;  // "psn-gap-ack,dup-reexecute" or "none"

 private:
  std::bitset<static_cast<std::size_t>(Quirk::kCount)> bits_;
};

}  // namespace roceconf::target
