// The tester's side of one connection: an emulated RC QP. It holds what CM negotiated (QPNs,
// starting PSNs, P_Key, path MTU, comm IDs) and the progress of the exchange (next PSN to send,
// last MSN seen), so case steps can speak in PSNs relative to the connection's start.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace roceconf::engine {

// The memory a responder exposes (RCNF REP private data, or an MR made through control).
struct RemoteRegion {
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint32_t length = 0;
  std::uint32_t recv_depth = 0;
  std::uint32_t recv_size = 0;
  std::uint32_t mr_handle = 0;  // control-made regions: the MR handle (for read_mr/write_mr)
  std::uint32_t lkey = 0;       // control-made regions: where READ and atomic results land
};

enum class ConnState : std::uint8_t {
  kIdle,
  kReqSent,
  kRepReceived,
  kEstablished,
  kRejected,
  kDreqSent,
  kClosed
};

struct Connection {
  std::string name;
  ConnState state = ConnState::kIdle;

  std::uint32_t local_qpn = 0;    // the tester's emulated QP: target responses carry it as DQPN
  std::uint32_t remote_qpn = 0;   // the target's QP
  std::uint32_t local_psn0 = 0;   // tester's starting PSN: request PSNs count from here
  std::uint32_t remote_psn0 = 0;  // target's starting PSN (its own requests)
  std::uint16_t pkey = 0xFFFF;
  std::uint32_t pmtu = 1024;  // bytes
  std::uint16_t udp_sport = 0xC000;
  // Over the IPv6 addresses (GIDs) of both sides instead of the IPv4-mapped ones (`gid=ipv6`):
  // its REQ names them as the primary path, its frames carry IPv6 headers.
  bool ipv6 = false;
  // The target QP's local ACK timeout attribute (control-made QPs, `open timeout=`): a window in
  // `ato` units counts 4.096 us x 2^ack_timeout.
  std::uint8_t ack_timeout = 14;
  // The address vector the tester asked the target to send with on this connection (its REQ's
  // primary path, or the ah_attr of a QP made through control); unset when the target chose
  // (accept). The sent-framing check grades the target's TTL and DSCP against it.
  std::optional<std::uint8_t> av_hop_limit;
  std::optional<std::uint8_t> av_traffic_class;

  // CM
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint64_t service_id = 0;
  std::uint64_t req_tid = 0;
  std::uint8_t responder_resources = 0;  // from the REP
  std::uint8_t initiator_depth = 0;

  std::optional<RemoteRegion> region;
  bool via_control = false;     // the target QP was made through the control API
  std::uint32_t target_cq = 0;  // control-made: the target QP's CQ (send and receive)
  std::uint32_t target_pd = 0;

  // Progress
  std::uint32_t next_psn = 0;  // absolute PSN of the next request sent
  // Where the target expects the next request if it dropped every one sent at a PSN of its own
  // (psn=, bth.psn=) and took the others in sequence: liveness probes start there too.
  std::uint32_t flow_psn = 0;
  std::optional<std::uint32_t> last_msn;  // last MSN seen in an AETH from the target
};

}  // namespace roceconf::engine
