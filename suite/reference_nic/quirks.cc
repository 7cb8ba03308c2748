#include "suite/reference_nic/quirks.h"

#include <fmt/format.h>

#include <array>

namespace roceconf::target {

namespace {
using enum Quirk;
constexpr std::array<QuirkInfo, static_cast<std::size_t>(kCount)> kQuirks = {{
    {kPsnGapAck, "psn-gap-ack", "psn", "a PSN gap is ACKed instead of NAKed"},
    {kPsnNakRepeat, "psn-nak-repeat", "psn", "a sequence NAK for every out-of-order packet"},
    {kAckPsnOffByOne, "ack-psn-off-by-one", "psn", "ACKs carry the PSN after the acknowledged one"},
    {kDupReexecute, "dup-reexecute", "psn", "duplicate SEND/WRITE requests are executed again"},
    {kMsnStuck, "msn-stuck", "psn", "the AETH MSN never increments"},
    {kNakCodeSwap, "nak-code-swap", "nak", "NAK codes invalid request and remote access swapped"},
    {kRnrAsNak, "rnr-as-nak", "nak", "no receive WQE answered with NAK invalid request, not RNR"},
    {kMtuUnchecked, "mtu-unchecked", "mtu", "payload lengths are not checked against the PMTU"},
    {kReadRespSplitWrong, "read-resp-split-wrong", "mtu", "READ responses split at PMTU - 4"},
    {kPkeyUnchecked, "pkey-unchecked", "pkey", "the P_Key is never compared"},
    {kPkeyLimitedMatch, "pkey-limited-match", "pkey", "two limited members match"},
    {kIcrcUnchecked, "icrc-unchecked", "icrc", "a bad ICRC is accepted"},
    {kRejWrongReason, "rej-wrong-reason", "cm", "unknown service ID rejected with reason 3, not 8"},
    {kTidMismatch, "tid-mismatch", "cm", "CM replies do not echo the transaction ID"},
    {kRtuRequired, "rtu-required", "cm", "data before the RTU is dropped"},
    {kQpnReuse, "qpn-reuse", "cm", "concurrent REQs get one QPN"},
    {kIllegalTransitionAccepted, "illegal-transition-accepted", "qp", "RESET→RTS is allowed"},
    {kStaleSqOnRts, "stale-sq-on-rts", "qp", "old send queue content is sent on entering RTS"},
    {kWqePrefetchOverwrite, "wqe-prefetch-overwrite", "qp",
     "two WQEs under one doorbell: the second overwrites the first"},
    {kCqOverflowLate, "cq-overflow-late", "cq",
     "CQ overflow reported one completion late, with the wrong error"},
    {kIcrcPadExcluded, "icrc-pad-excluded", "icrc", "the ICRC is computed without the pad bytes"},
    {kSmallBadIcrcAccepted, "small-bad-icrc-accepted", "icrc",
     "a bad ICRC is not caught on frames shorter than 65 bytes"},
    {kGsiQkeyUnchecked, "gsi-qkey-unchecked", "cm", "QP1 takes datagrams with any Q_Key"},
    {kReqLidChecked, "req-lid-checked", "cm",
     "a REQ with nonzero port LIDs is rejected with reason 13 (LIDs are reserved on RoCEv2)"},
    {kDreqIdsSwapped, "dreq-ids-swapped", "cm",
     "the DREQ the target sends carries the two communication IDs swapped"},
    {kPdUnchecked, "pd-unchecked", "nak", "an R_Key of a region of another PD is accepted"},
    {kGidTypeUnreported, "gid-type-unreported", "qp",
     "the GID table lists its entries without their GID type"},
    {kPostBeforeReady, "post-before-ready", "qp",
     "post_send in RESET, INIT or RTR and post_recv in RESET are queued, not refused"},
    {kCqDestroyInUse, "cq-destroy-in-use", "cq", "a CQ that a QP uses can be destroyed"},
    {kUdOversizeError, "ud-oversize-error", "ud",
     "a UD send above the port MTU completes with a length error instead of silently"},
    {kUdQkeyUnchecked, "ud-qkey-unchecked", "ud", "a UD QP takes datagrams with any Q_Key"},
    {kControlledQkeyIgnored, "controlled-qkey-ignored", "ud",
     "a WR Q_Key with the high bit set is sent as given, not replaced by the QP's"},
    {kCqOverrunKeepsQp, "cq-overrun-keeps-qp", "cq",
     "a send CQ overrun raises CQ_ERR but leaves the requester QP in RTS"},
    {kQp0Accepted, "qp0-accepted", "header",
     "a request to DestQP 0 is not dropped: it reaches the sender's newest QP"},
    {kIpVersionUnchecked, "ip-version-unchecked", "header",
     "the IPv4 version field is not checked (the EtherType alone says IPv4)"},
    {kIpOptionsAccepted, "ip-options-accepted", "header", "IPv4 headers with options are accepted"},
    {kIpFragmentsAccepted, "ip-fragments-accepted", "header",
     "an IPv4 first fragment (More Fragments set) is taken as a whole datagram"},
    {kIpLengthUnchecked, "ip-length-unchecked", "header",
     "IP total length and UDP length are ignored: the frame's size is used"},
    {kZeroLengthRkeyChecked, "zero-length-rkey-checked", "nak",
     "a zero-length RDMA READ or WRITE has its R_Key checked"},
    {kDmaLengthUnchecked, "dmalen-unchecked", "nak", "a RETH DMA length above 2^31 is not refused"},
    {kSendOverflowTruncated, "send-overflow-truncated", "nak",
     "a SEND longer than its receive buffers is truncated and completes successfully"},
    {kWriteConsumesReceive, "write-consumes-receive", "data",
     "an RDMA WRITE without immediate consumes and completes a receive WQE"},
    {kTtlFixed64, "ttl-fixed-64", "header", "TTL 64 on every packet, not the AV's hop limit"},
    {kEcnEctWithoutCc, "ecn-ect-without-cc", "header",
     "ECT(0) on every packet though congestion management is not modelled"},
    {kDfClear, "df-clear", "header", "the IPv4 Don't Fragment bit is never set"},
    {kPortLidReported, "port-lid-reported", "qp",
     "the port reports LID 1, an SM at LID 1 and LMC 1, as an InfiniBand port would"},
    {kClientReregAdvertised, "client-rereg-advertised", "qp",
     "the port advertises client reregistration (CLIENT_REG_SUP)"},
    {kSolicitedEventAlways, "solicited-event-always", "cq",
     "a CQ armed for solicited completions raises its event on any completion"},
    {kCqStaysArmed, "cq-stays-armed", "cq",
     "a completion event does not disarm the CQ: every later completion raises one"},
    {kLapLidChecked, "lap-lid-checked", "cm",
     "a LAP with nonzero alternate port LIDs is answered with APR status 7 (invalid LID)"},
    {kMadIcrcUnchecked, "mad-icrc-unchecked", "cm-fault",
     "CM MADs (DestQP 1) are handled whatever their ICRC"},
    {kForgedRepAccepted, "forged-rep-accepted", "cm-fault",
     "the active side takes a REP whose Remote Communication ID is not its REQ's"},
    {kRejKeepsQp, "rej-keeps-qp", "cm-fault",
     "a REJ of the REP leaves the passive side's QP in RTR, taking requests"},
    {kCqErrorSpills, "cq-error-spills", "cq",
     "the overrun of one CQ stops every CQ of the device from taking completions"},
    {kLateDupReqRejected, "late-dup-req-rejected", "cm-fault",
     "a late duplicate REQ of an established connection is answered with REJ stale connection"},
    {kGoBackNFromStart, "go-back-n-from-start", "req",
     "a sequence NAK in the middle of a message resends the message from its first packet"},
    {kRetransmitTwicePerNak, "retransmit-twice-per-nak", "req",
     "a sequence NAK makes the requester resend everything from the NAKed PSN twice"},
    {kAckTimeoutIgnored, "ack-timeout-ignored", "req",
     "the local ACK timeout fires after 4 ms, whatever the QP's timeout attribute says"},
    {kRetryCountIgnored, "retry-count-ignored", "req",
     "retry_cnt never runs out: the requester retries for ever, never RETRY_EXC_ERR"},
    {kRnrTimerIgnored, "rnr-timer-ignored", "req",
     "a request answered with an RNR NAK is resent at once, not after the NAK's timer"},
    {kReadRerequestFromStart, "read-rerequest-from-start", "req",
     "a lost READ response makes the requester ask for the whole READ again"},
    {kGhostAckCompletes, "ghost-ack-completes", "req",
     "an ACK for a PSN the requester never sent completes every outstanding WR"},
    {kCoalescedAckCompletesOne, "coalesced-ack-completes-one", "req",
     "one ACK or response completes at most one of the WRs before its PSN"},
    {kExceedsMaxRdAtomic, "exceeds-max-rd-atomic", "req",
     "READs and atomics are sent beyond the QP's max_rd_atomic"},
    {kSequentialRkeys, "sequential-rkeys", "sec",
     "the R_Keys of successive memory regions differ by a constant step"},
    {kRkeyReuse, "rkey-reuse", "sec",
     "a deregistered memory region's R_Key is handed to the next region registered"},
    {kSequentialQpns, "sequential-qpns", "sec", "QP numbers are handed out one after the other"},
    {kSequentialPsns, "sequential-psns", "sec",
     "the Starting PSNs of the REPs count up by one per connection"},
    {kMwRkeySurvivesRebind, "mw-rkey-survives-rebind", "mw",
     "a memory window's old R_Key still works after a rebind or an invalidation"},
    {kMwPdUnchecked, "mw-pd-unchecked", "mw",
     "a type 1 memory window is reached through a QP of another PD"},
    {kMwQpUnchecked, "mw-qp-unchecked", "mw",
     "a type 2 memory window is reached through a QP other than the one it is bound to"},
    {kMwBindRightUnchecked, "mw-bind-right-unchecked", "mw",
     "memory windows bind to regions registered without the MW_BIND right"},
    {kMwAccessUnchecked, "mw-access-unchecked", "mw",
     "a memory window grants its region's access rights instead of its own"},
    {kMwZeroBasedUnbounded, "mw-zero-based-unbounded", "mw",
     "a zero-based memory window reaches past its length to the end of its region"},
    {kIpv6HopLimitFixed, "ipv6-hop-limit-fixed", "ipv6",
     "IPv6 hop limit 64 on every packet, not the AV's (the IPv4 TTL is right)"},
    {kIpv6TrafficClassZero, "ipv6-traffic-class-zero", "ipv6",
     "IPv6 traffic class 0 on every packet, not the AV's"},
    {kIpv6PlenWithoutIcrc, "ipv6-plen-without-icrc", "ipv6",
     "the IPv6 payload length leaves out the 4-byte ICRC"},
    {kIpv6IcrcUnchecked, "ipv6-icrc-unchecked", "ipv6",
     "the ICRC of packets over IPv6 is not checked (IPv4 packets are)"},
    {kCnpMissing, "cnp-missing", "cc", "no CNP for a request marked ECN CE"},
    {kCnpWrongQpn, "cnp-wrong-qpn", "cc",
     "the CNP names the QP that received the marked request, not the sender's QP"},
    {kCnpConsumesPsn, "cnp-consumes-psn", "cc",
     "the CNP carries the responder's expected PSN and moves it on by one"},
    {kCnpUnpaced, "cnp-unpaced", "cc", "a CNP for every CE-marked request, no pacing interval"},
    {kCnpPacedPerPort, "cnp-paced-per-port", "cc",
     "CNPs paced per port: one per interval for all QPs together"},
    {kCnpIgnored, "cnp-ignored", "cc", "a received CNP leaves the QP's send rate as it was"},
    {kCnpSlowsAll, "cnp-slows-all", "cc", "a received CNP lowers the send rate of every QP"},
    // Area "fuzz": each needs an input no catalogue case sends, so a plain run stays blind and
    // the fuzzer must find it (cases/README.md, "Defects only hostile input reaches").
    //
    // Linux rxe computed payload_size() as the UDP length less headers, pad and ICRC before
    // checking that they fit, so a short packet with a forged PadCnt underflowed it (fixed by
    // "RDMA/rxe: Validate pad and ICRC before payload_size() in rxe_rcv"); ReDMArk (USENIX
    // Security 2021) showed one injected packet disabling a connection.
    {kPadOverrunWedgesQp, "pad-overrun-wedges-qp", "fuzz",
     "a request whose PadCnt exceeds its payload wedges the QP: it stays RTS and answers nothing "
     "again (rxe: \"Validate pad and ICRC before payload_size() in rxe_rcv\")"},
    // rxe read an unknown opcode's header length (0) from its table and computed the ICRC past
    // the frame: a 48-byte UDP/4791 packet with opcode 0xff to QPN 0xFFFFFF could panic the host,
    // no QP or connection needed ("RDMA/rxe: Reject unknown opcodes before ICRC processing").
    {kUnknownOpcodeKillsNic, "unknown-opcode-kills-nic", "fuzz",
     "a reserved or vendor opcode to QPN 0xFFFFFF, whatever its ICRC, stops the whole NIC: nothing "
     "goes on the wire again, CM included, until reset (rxe: \"Reject unknown opcodes before ICRC "
     "processing\")"},
    // The same rxe fix's other half: a packet shorter than its opcode's headers had them read past
    // its end; the truncated-header class of dissector faults (Wireshark's advisories).
    {kTruncatedAethHangsRequester, "truncated-aeth-hangs-requester", "fuzz",
     "a READ response whose AETH is cut short (ICRC good) hangs the requester QP: no completion, "
     "no retry, no error (rxe rxe_rcv header-length check; truncated-header dissector faults)"},
    // MADs are 256 bytes (C13-3) and an rdma_cm REQ's private data starts with a header whose IP
    // version is 4 or 6 (Annex A11; Linux cma.c checks both before use); a CM agent that trusts
    // either reads past its buffer.
    {kMalformedMadHangsCm, "malformed-mad-hangs-cm", "fuzz",
     "a MAD to QP1 shorter or longer than 256 bytes, or a REQ whose rdma_cm header has an IP "
     "version other than 4 and 6, hangs the CM agent: no MAD answered until reset, data on "
     "existing connections unaffected"},
    // The region check written as va + len <= end wraps: CVE-2016-8636, rxe's mem_check_range
    // ("IB/rxe: Fix mem_check_range integer overflow", 647bf3d8a8e5, now mr_check_range); the
    // same bug fixed in libfabric's ofi_mr_map_verify (ofiwg/libfabric#12826).
    {kRethVaWraps, "reth-va-wraps", "fuzz",
     "a RETH whose VA + DMA length wraps past 2^64 passes the region check: the WRITE is ACKed "
     "and its bytes land outside the region, a READ returns bytes from outside it "
     "(CVE-2016-8636, rxe mem_check_range)"},
}};
}  // namespace

std::span<const QuirkInfo> all_quirks() {
  return kQuirks;
}

const QuirkInfo& quirk_info(Quirk q) {
  return kQuirks[static_cast<std::size_t>(q)];
}

std::expected<void, std::string> Quirks::enable(std::string_view name) {
  for (const QuirkInfo& info : kQuirks) {
    if (info.name == name) {
      set(info.quirk);
      return {};
    }
  }
  std::string known;
  for (const QuirkInfo& info : kQuirks)
    known += fmt::format("{}{}", known.empty() ? "" : ", ", info.name);
  return std::unexpected(fmt::format("unknown quirk '{}' (known: {})", name, known));
}

std::string Quirks::names() const {
  std::string out;
  for (const QuirkInfo& info : kQuirks)
    if (has(info.quirk)) out += fmt::format("{}{}", out.empty() ? "" : ",", info.name);
  return out.empty() ? "none" : out;
}

}  // namespace roceconf::target
