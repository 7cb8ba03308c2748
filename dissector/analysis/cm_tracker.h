// CM connection tracking over decoded MADs (IBA Vol 1 ch. 12): which REQ, MRA, REP, RTU, REJ,
// DREQ and DREP belong together, the state each leaves the connection in, and what the two
// sides negotiated (QPNs, starting PSNs, path MTU, P_Key), so that data packets can be judged
// against it. A connection is keyed by the active side's local communication ID and both
// endpoint addresses; the passive side's ID is learnt from its first reply.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "dissector/analysis/address.h"
#include "dissector/analysis/flags.h"
#include "dissector/packet.h"

namespace roceconf::analysis {

// The connection as a wire observer sees it. DREQ moves it to kTimewait (both sides are about
// to, or already, wait out stale packets); DREP to kClosed.
enum class CmState : std::uint8_t {
  kReqSent,
  kMraReceived,  // REQ acknowledged by an MRA, REP still to come
  kRepReceived,  // REP sent, waiting for RTU (or the first data packet)
  kEstablished,
  kRejected,
  kTimewait,
  kClosed,
};

std::string_view cm_state_name(CmState state);  // "req-sent", "established", ...

struct CmConnection {
  std::uint32_t id = 0;  // 1, 2, ... in order of first sight
  NetAddress active;     // sender of the REQ
  NetAddress passive;
  std::uint32_t active_comm_id = 0;
  std::uint32_t passive_comm_id = 0;  // 0 until a reply carries it
  bool partial = false;               // first seen mid-way (no REQ): REQ fields unknown
  CmState state = CmState::kReqSent;

  // From the REQ.
  std::uint64_t service_id = 0;
  std::uint8_t transport_type = 0;  // cm_transport::
  std::uint32_t active_qpn = 0;
  // Each side's Starting PSN is the PSN it expects to receive first: the passive side's
  // requests start at the REQ's, the active side's at the REP's (Linux cm_req_handler and
  // cm_rep_handler set sq_psn so; rxe and OFED captures agree).
  std::uint32_t req_starting_psn = 0;
  std::uint8_t path_mtu_enum = 0;
  std::uint32_t pmtu = 0;  // bytes; 0 for an invalid enum
  std::uint16_t pkey = 0;
  std::uint8_t req_responder_resources = 0;
  std::uint8_t req_initiator_depth = 0;
  std::uint64_t req_tid = 0;

  // From the REP.
  bool has_rep = false;
  std::uint32_t passive_qpn = 0;
  std::uint32_t rep_starting_psn = 0;
  std::uint8_t rep_responder_resources = 0;
  std::uint8_t rep_initiator_depth = 0;
  std::uint64_t rep_tid = 0;

  std::optional<std::uint16_t> reject_reason;
  std::uint64_t dreq_tid = 0;
  bool dreq_from_active = false;
  bool established_by_data = false;

  // Frames (0: not seen) and counts.
  std::uint64_t req_frame = 0, mra_frame = 0, rep_frame = 0, rtu_frame = 0, rej_frame = 0,
                dreq_frame = 0, drep_frame = 0, established_frame = 0, last_frame = 0;
  std::int64_t req_time_ns = 0, established_time_ns = 0;
  std::uint32_t req_count = 0, rep_count = 0;

  // Both QPNs known: REQ and REP seen.
  bool has_qpns() const { return !partial && has_rep; }
};

// Per-frame CM annotation.
struct CmFrameInfo {
  std::uint32_t connection = 0;  // 0: the message belongs to no connection (SIDR, unknown IDs)
  std::uint16_t attr_id = 0;
  std::string_view message;  // "REQ", "REP", ...
  std::uint64_t tid = 0;
  bool from_active = false;
  CmState state = CmState::kReqSent;  // after this message (meaningful when connection != 0)
  bool duplicate = false;             // duplicate REQ
  bool retransmission = false;        // any other message seen again
  bool tid_mismatch = false;
  bool unknown_comm_id = false;
  std::optional<std::uint16_t> reject_reason;
  std::uint64_t request_frame = 0;  // for replies: the REQ or DREQ answered
};

class CmTracker {
 public:
  // At most `max_connections` are kept; beyond that the oldest finished ones are forgotten.
  explicit CmTracker(std::size_t max_connections = 65536);

  // Tracks one CM MAD (`p.mad->cm` set). Appends flags; returns the annotation.
  CmFrameInfo process(std::uint64_t frame, std::int64_t time_ns, const Packet& p, Flags& flags);

  const CmConnection* connection(std::uint32_t id) const;
  // The newest connection whose QP `dqpn` sits at `dst` and talks to `src`: the connection a
  // data packet src -> dst with BTH DestQP `dqpn` belongs to. Needs both REQ and REP.
  const CmConnection* find(const NetAddress& src, const NetAddress& dst, std::uint32_t dqpn) const;
  // A data packet of connection `id` was seen; establishes it when still waiting for RTU.
  // Returns true when this established it.
  bool note_data(std::uint32_t id, std::uint64_t frame, std::int64_t time_ns);

  std::size_t size() const { return connections_.size(); }
  const std::map<std::uint32_t, CmConnection>& connections() const { return connections_; }

 private:
  CmConnection* match(const NetAddress& src, const NetAddress& dst, std::uint32_t local,
                      std::uint32_t remote, bool* from_active);
  CmConnection& create(const NetAddress& active, const NetAddress& passive,
                       std::uint32_t active_comm_id);
  void index_qpn(const NetAddress& at, const NetAddress& peer, std::uint32_t qpn, std::uint32_t id);
  void evict();
  std::map<std::uint32_t, CmConnection>::iterator erase(
      std::map<std::uint32_t, CmConnection>::iterator it);
  void retire(const CmConnection& c);

  std::size_t max_connections_;
  // Finished (closed or rejected) connections stay for late retransmissions, but only the
  // newest kFinishedKept: memory follows the connections open at once, not all there were.
  static constexpr std::size_t kFinishedKept = 1024;
  std::deque<std::uint32_t> finished_order_;
  std::unordered_set<std::uint32_t> finished_queued_;
  std::uint32_t next_id_ = 1;
  std::map<std::uint32_t, CmConnection> connections_;
  // (active, passive, active comm ID) -> id
  std::unordered_map<AddressKey, std::uint32_t, AddressKeyHash> by_comm_;
  // (QP's address, peer's address, QPN) -> id
  std::unordered_map<AddressKey, std::uint32_t, AddressKeyHash> by_qpn_;
};

}  // namespace roceconf::analysis
