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
#include <string>
#include <string_view>
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

// Where a request stands against the responder's expected PSN (IBA Vol 1 9.7.5.1.2): at it
// (accepted), ahead of it (out of sequence: the first after an accepted request draws one
// sequence-error NAK, the rest are dropped silently), or behind it (a duplicate).
enum class PsnState : std::uint8_t { kUnknown, kExpected, kOutOfSequence, kDuplicate };
std::string_view psn_state_name(PsnState s);  // "expected", "out-of-sequence", "duplicate"

struct RcFrameInfo {
  RcRole role = RcRole::kRequest;
  std::uint32_t channel = 0;       // the channel the frame travels on (1, 2, ...)
  std::uint32_t peer_channel = 0;  // its peer, 0 while unpaired
  LinkSource link = LinkSource::kNone;
  std::uint32_t connection = 0;             // CM connection, 0 when none
  std::optional<std::uint32_t> source_qpn;  // the sending QP (the peer channel's DestQP)
  std::uint32_t psn = 0;
  std::uint32_t pmtu = 0;  // 0 while unknown
  // Payload bytes this frame delivers for the first time: SEND/WRITE data the responder
  // accepted at its expected PSN, or READ response data in order (for goodput).
  std::uint32_t delivered = 0;
  PmtuSource pmtu_source = PmtuSource::kUnknown;

  // Requests. expected_psn is the responder's: it moves only when the request at it arrives
  // (or a response shows the responder got further than the capture did). sender_next is the
  // sender's view, as TCP analysis has it: the PSN after the highest one sent before.
  std::optional<std::uint32_t> expected_psn;
  std::optional<std::uint32_t> sender_next;
  PsnState psn_state = PsnState::kUnknown;
  bool nak_due = false;                 // first out-of-sequence request: the responder must NAK
  bool retransmission = false;          // PSN on the wire before, or a go-back-N resend
  std::uint32_t span = 1;               // PSNs taken (READ: the responses it needs)
  std::uint64_t retransmission_of = 0;  // previous transmission of this PSN (0: none captured)
  std::uint64_t resend_after_nak = 0;   // the NAK this go-back-N resend follows
  std::uint64_t acked_by = 0;           // the answering response (set when it arrives)
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
  // PSNs this response shows the responder received that the capture never saw (capture loss),
  // and the total so far on its QP pair: a pair with capture gaps is not complete enough to grade.
  std::uint32_t not_captured = 0;
  std::uint32_t capture_gaps = 0;
};

// A judgement about an earlier request frame, made when its response arrives (acked-by,
// nak-received). Whoever stores per-frame results attaches it to that frame.
struct RcAnswer {
  std::uint64_t request_frame = 0;
  Flag flag;
};

// One request channel (a QP's requests to its peer) and what the capture showed of it.
struct RcChannelSummary {
  std::uint32_t channel = 0;
  std::uint32_t peer_channel = 0;
  std::uint32_t connection = 0;
  std::string source;       // "192.0.2.11"
  std::string destination;  // "192.0.2.12"
  std::uint32_t qpn = 0;    // destination QP
  std::uint64_t requests = 0;
  std::uint64_t out_of_sequence = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t retransmissions = 0;
  std::uint64_t not_captured = 0;  // PSNs acknowledged that the capture never saw
  // Complete enough to grade the responder: no PSN it acknowledged is missing from the capture.
  bool gradable() const { return not_captured == 0; }
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
    // Every request sent is in the capture (a tester's own frames): a PSN acknowledged but
    // never seen was never sent, so acknowledging it is the responder's fault (ack-over-gap)
    // rather than capture loss (not-captured).
    bool capture_complete = false;
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
  // The request channels still held, in order of first sight.
  std::vector<RcChannelSummary> summaries() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace roceconf::analysis
