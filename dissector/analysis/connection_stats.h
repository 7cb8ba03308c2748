// Per-connection statistics of RC/UC traffic, shared by `roceconf decode --connections` and the
// Wireshark statistics tap: fed each frame's stream analysis, in memory that grows with the
// number of connections, never with the number of frames.
//
// The unit is a direction: one QP's requests to its peer and the responses that answer them
// (which travel the other way). A connection is its one or two directions, paired by the
// stream analysis (through CM when the capture has the exchange).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dissector/analysis/rc_tracker.h"
#include "dissector/packet.h"

namespace roceconf::analysis {

// Durations in log-spaced buckets, 16 to each power of two: a quantile is within about 3 % of
// the exact one. Only buckets in use are stored (response times cluster): a few hundred bytes
// however many samples.
class LatencyHistogram {
 public:
  void add(std::int64_t ns);
  std::uint64_t count() const { return count_; }
  std::int64_t min() const { return count_ == 0 ? -1 : min_; }
  std::int64_t max() const { return count_ == 0 ? -1 : max_; }
  // Nearest-rank quantile, 0 < q <= 1: the middle of the bucket holding that rank, kept within
  // [min, max]; -1 when empty.
  std::int64_t quantile(double q) const;

 private:
  std::vector<std::pair<std::uint16_t, std::uint32_t>> buckets_;  // (bucket, count) by bucket
  std::uint64_t count_ = 0;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
};

// NAK codes 0x60..0x64 (IBA Table 46), indexed by code - 0x60.
inline constexpr std::size_t kNakCodes = 5;
std::string_view nak_code_key(std::size_t index);  // "psn_seq_err", "inv_req", ...

struct DirectionStats {
  std::uint32_t channel = 0;       // the requests' channel
  std::uint32_t peer_channel = 0;  // the channel their responses travel on (0: none yet)
  std::uint32_t connection = 0;    // CM connection (0: paired by traffic, or not at all)
  std::string requester;           // "192.0.2.11"
  std::string responder;
  std::optional<std::uint32_t> requester_qpn;  // the responses' DestQP, once one is seen
  std::uint32_t responder_qpn = 0;             // the requests' DestQP

  std::uint64_t packets = 0;  // requests and their responses
  std::uint64_t bytes = 0;    // on the wire
  std::uint64_t requests = 0;
  std::uint64_t messages = 0;  // requests ending a message (ONLY, LAST, READ, atomics), once
  std::uint64_t retransmissions = 0;
  std::uint64_t out_of_sequence = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t responses = 0;
  std::uint64_t acks = 0;  // ACKs and atomic ACKs
  std::uint64_t read_responses = 0;
  std::array<std::uint64_t, kNakCodes> naks{};
  std::uint64_t rnr_naks = 0;
  std::int64_t rnr_wait_ns = 0;    // from each RNR NAK to the resend that followed it
  std::uint64_t not_captured = 0;  // PSNs acknowledged that the capture never saw
  std::uint64_t delivered = 0;     // payload bytes delivered once (RcFrameInfo::delivered)
  LatencyHistogram response_time;  // request to its response
  std::int64_t first_ns = 0;
  std::int64_t last_ns = 0;

  std::uint64_t nak_total() const;
  double seconds() const { return static_cast<double>(last_ns - first_ns) / 1e9; }
  // Delivered payload over the direction's time span; 0 for a span of zero.
  double goodput_bps() const;
  // Complete enough to grade the responder: nothing it acknowledged is missing from the capture.
  bool gradable() const { return not_captured == 0; }
  // "192.0.2.11 QP 0x00002a" ("... QP ?" while the requester's QP is unknown).
  std::string requester_text() const;
  std::string responder_text() const;
};

struct ConnectionSummary {
  std::uint32_t number = 0;                // 1, 2, ... in order of first sight
  std::uint32_t connection = 0;            // CM connection, 0 when none bound it
  std::vector<DirectionStats> directions;  // one or two, by channel

  std::uint64_t packets() const;
  std::uint64_t bytes() const;
  std::int64_t first_ns() const;
  std::int64_t last_ns() const;
  double goodput_bps() const;  // both directions' delivered payload over the connection's span
  bool gradable() const;
};

class ConnectionStats {
 public:
  // One RC or UC frame and its stream analysis (`info.channel` 0: not RC/UC, ignored).
  // Returns the direction it counted in, or nullptr (a response matched to no requests).
  const DirectionStats* add(const Packet& p, std::uint32_t wire_length, std::int64_t time_ns,
                            const RcFrameInfo& info);

  const std::map<std::uint32_t, DirectionStats>& directions() const { return directions_; }
  // Responses that answered no request channel the capture showed.
  std::uint64_t unattributed() const { return unattributed_; }
  // The connection that CM connection `cm` was, once its DREP (or REJ) closed it: taken out
  // (numbered next), so that memory follows the connections open at once, not all there were.
  std::vector<ConnectionSummary> close(std::uint32_t cm);
  // The connections still held, numbered after those closed, in order of first sight.
  std::vector<ConnectionSummary> connections() const;

 private:
  struct Pending {
    std::int64_t rnr_ns = -1;  // the last RNR NAK, until the resend after it
    // The last request that delivered data: a NAK or RNR NAK at its PSN takes it back.
    std::uint32_t delivered_psn = 0;
    std::uint32_t delivered_bytes = 0;
  };
  std::map<std::uint32_t, DirectionStats> directions_;  // by request channel
  std::map<std::uint32_t, Pending> pending_;
  std::uint64_t unattributed_ = 0;
  std::uint32_t closed_ = 0;  // connections numbered and handed out by close()
};

}  // namespace roceconf::analysis
