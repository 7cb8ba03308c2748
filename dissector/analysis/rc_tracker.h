// Request/response analysis of reliable and unreliable connected traffic (IBA Vol 1 ch. 9.7),
// in the spirit of Wireshark's TCP sequence analysis.
//
// Frames travel on channels: (source address, destination address, BTH DestQP). A channel
// carries the requests of the QP at its source to the QP at its destination, and also the
// responses that QP at its source sends for requests coming the other way. The two channels of
// one QP pair, A->B:Q and B->A:P, are each other's peer: responses on one answer the requests
// on the other. The BTH names only the destination QP, so pairing needs more than one frame:
//  - CM: when a REQ and REP negotiated QPNs P and Q between A and B, the channels A->B:Q and
//    B->A:P are peers (and start from the negotiated PSNs, path MTU and P_Key);
//  - otherwise the first response on B->A:P is paired with the only channel A->B:* that has
//    requests and no peer yet, or, when there are several, with the one whose outstanding
//    requests contain the response's PSN, if exactly one does. Unpaired responses still get
//    their syndrome decoded, but no request matching.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "dissector/analysis/flags.h"
#include "dissector/packet.h"

namespace roceconf::analysis {

class CmTracker;

enum class PmtuSource : std::uint8_t {
  kUnknown,
  kCm,        // path MTU of the connection's REQ
  kInferred,  // payload of the first FIRST/MIDDLE packet seen (a valid MTU size)
};

enum class LinkSource : std::uint8_t {
  kNone,
  kCm,      // QPNs from the connection's REQ and REP
  kUnique,  // the only candidate request channel between the two addresses
  kPsn,     // the one candidate whose outstanding requests hold the response PSN
};

enum class RcRole : std::uint8_t { kRequest, kResponse };

struct RcFrameInfo {
  RcRole role = RcRole::kRequest;
  std::uint32_t channel = 0;       // the channel the frame travels on (1, 2, ...)
  std::uint32_t peer_channel = 0;  // its peer, 0 while unpaired
  LinkSource link = LinkSource::kNone;
  std::uint32_t connection = 0;  // CM connection, 0 when none
  std::uint32_t psn = 0;
  std::uint32_t pmtu = 0;  // 0 while unknown
  PmtuSource pmtu_source = PmtuSource::kUnknown;

  // Requests.
  std::optional<std::uint32_t> expected_psn;  // the next PSN before this frame
  std::uint32_t span = 1;                     // PSNs taken (READ: the responses it needs)
  std::uint64_t retransmission_of = 0;        // previous transmission of this PSN
  std::uint64_t acked_by = 0;                 // the answering response (set when it arrives)
  std::int64_t ack_delay_ns = -1;

  // Responses.
  std::uint64_t request_frame = 0;     // the request at the response's PSN
  std::int64_t response_time_ns = -1;  // since request_frame
  std::uint32_t acked_count = 0;       // requests newly acknowledged, coalesced ones included
  std::uint64_t first_acked_frame = 0;
  std::uint32_t read_index = 0;  // READ response k ...
  std::uint32_t read_count = 0;  // ... of n (0 while n is unknown)
  std::uint64_t nak_cause_frame = 0;
  std::optional<std::uint8_t> syndrome;
  std::optional<std::uint32_t> msn;
};

// A judgement about an earlier request frame, made when its response arrives (acked-by,
// nak-received). Whoever stores per-frame results attaches it to that frame.
struct RcAnswer {
  std::uint64_t request_frame = 0;
  Flag flag;
};

struct RcStats {
  std::size_t channels = 0;
  std::size_t paired = 0;          // channels with a peer
  std::size_t window_entries = 0;  // request entries held, over all channels
  std::size_t unanswered = 0;      // of which not yet acknowledged
};

class RcTracker {
 public:
  struct Options {
    std::size_t window = 4096;         // request entries kept per channel
    std::size_t max_channels = 65536;  // beyond that, the least recently used are forgotten
  };

  RcTracker();
  explicit RcTracker(Options options);
  ~RcTracker();
  RcTracker(RcTracker&&) noexcept;
  RcTracker& operator=(RcTracker&&) noexcept;

  // Analyses one RC or UC packet (BTH present) in capture order. `cm` may be null; when set,
  // channels are linked to its connections (and a connection waiting for RTU is established
  // by its first data packet). Appends this frame's flags to `flags` and judgements about
  // earlier frames to `answers`.
  RcFrameInfo process(std::uint64_t frame, std::int64_t time_ns, const Packet& p, CmTracker* cm,
                      Flags& flags, std::vector<RcAnswer>& answers);

  // The CM connection closed (DREP): its channels' request windows are freed.
  void release(std::uint32_t connection);

  RcStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace roceconf::analysis
