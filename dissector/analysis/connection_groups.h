// Which frames of a capture belong together, so that a capture can be split into shards that
// each analyse exactly as they did in the whole capture (`roceconf decode
// --split-by-connection`). A group is the closure of: a channel and its peer channel (both
// directions of a QP pair), a channel and the CM connection that binds its QPNs, a CM MAD and
// its connection. The UDP 5-tuple is no key: each direction picks its own source port.
//
// Without CM, a response channel pairs with a request channel by the response PSN among the
// unpaired request channels between the two hosts. A response that could not be paired (several
// candidates, or none fitting) would pair earlier in a shard holding fewer candidates, so such a
// response joins every candidate it was weighed against: shards may be coarser than one QP pair
// but never analyse differently. (Unless the whole capture outgrows the analyzer's bounds,
// max_channels and max_connections: then the single pass forgets state a shard keeps.)
//
// Pass 1 observes every frame with the analysis of it; finish() numbers the groups; pass 2 runs
// the same analysis again (same channel and connection numbers) and asks group_of() each frame.
// Memory: a few words per channel and CM connection seen, nothing per frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dissector/analysis/address.h"
#include "dissector/analysis/cm_tracker.h"
#include "dissector/analysis/stream_analyzer.h"
#include "dissector/packet.h"

namespace roceconf::analysis {

struct ConnectionEndpoint {
  NetAddress address;
  std::optional<std::uint32_t> qpn;  // unknown for a side that sent nothing the QPN shows in
};

struct ConnectionGroup {
  std::uint32_t number = 0;  // 1, 2, ... in order of first frame
  std::uint64_t first_frame = 0;
  std::uint64_t frames = 0;
  std::uint32_t channels = 0;        // RC/UC channels in it
  std::uint32_t cm_connections = 0;  // CM connections in it
  std::uint32_t cm_connection = 0;   // the first of them (0: none)
  ConnectionEndpoint a;              // the CM active side, else the first channel's source
  ConnectionEndpoint b;

  // "192.0.2.11-0x000011--192.0.2.12-0x000012-cm1": safe as a file name (no '/', spaces or
  // ':'), and the same for the same capture.
  std::string name() const;
};

class ConnectionGroups {
 public:
  // Pass 1: every frame in capture order with its analysis (`cm` is the analyzer's tracker,
  // read for the endpoints of CM connections). Ignored after finish().
  void observe(const Packet& p, const FrameAnalysis& fa, const CmTracker& cm);
  // Ends pass 1: numbers the groups by first frame and drops what only pass 1 needed.
  void finish();

  // After finish(): the group (1..size()) of a frame of pass 2, 0 for frames of no connection
  // (UD, CM MADs of no connection, not RoCE).
  std::uint32_t group_of(const FrameAnalysis& fa) const;
  std::size_t size() const { return groups_.size(); }
  const ConnectionGroup& group(std::uint32_t number) const { return groups_.at(number - 1); }
  const std::vector<ConnectionGroup>& groups() const { return groups_; }
  std::uint64_t frames() const { return frames_; }
  std::uint64_t other_frames() const { return other_frames_; }  // of group 0

 private:
  struct Node {
    std::uint32_t parent = 0;
    std::uint64_t first_frame = 0;
    std::uint64_t frames = 0;
  };
  struct ChannelInfo {
    std::uint32_t node = 0;  // 0: not seen yet (nodes start at 1)
    std::uint32_t src = 0;   // interned addresses, 0: not seen in a frame of its own
    std::uint32_t dst = 0;
    std::uint32_t qpn = 0;
    std::uint32_t peer = 0;  // as the tracker has it after the channel's last frame
    bool rc = false;
    bool requests = false;  // has carried a request
  };
  struct CmInfo {
    std::uint32_t node = 0;
    ConnectionEndpoint active;
    ConnectionEndpoint passive;
  };
  using PairKey = std::uint64_t;  // (source address, destination address), interned

  std::uint32_t node_for_frame(std::uint32_t& node, std::uint64_t frame);
  std::uint32_t node(std::uint32_t& node);
  std::uint32_t find(std::uint32_t n) const;
  void unite(std::uint32_t a, std::uint32_t b);
  std::uint32_t intern(const NetAddress& a);
  ChannelInfo& channel(std::uint32_t id);
  CmInfo& connection(std::uint32_t id);
  void set_peer(std::uint32_t channel, std::uint32_t peer);
  void update_candidate(std::uint32_t id);
  static PairKey pair_key(std::uint32_t src, std::uint32_t dst) {
    return (static_cast<PairKey>(src) << 32) | dst;
  }

  std::vector<Node> nodes_{Node{}};  // node 0 unused
  std::vector<ChannelInfo> channels_;
  std::vector<CmInfo> connections_;
  std::vector<NetAddress> addresses_{NetAddress{}};
  std::unordered_map<AddressKey, std::uint32_t, AddressKeyHash> address_ids_;
  // (source, destination) -> its RC channels that have requests and no peer: the ones the
  // tracker weighs a response from destination to source against.
  std::unordered_map<PairKey, std::unordered_set<std::uint32_t>> candidates_;

  // After finish(): the group of each channel and CM connection, by id.
  std::vector<std::uint32_t> channel_group_;
  std::vector<std::uint32_t> connection_group_;
  std::vector<ConnectionGroup> groups_;
  std::uint64_t frames_ = 0;
  std::uint64_t other_frames_ = 0;
  bool finished_ = false;
};

}  // namespace roceconf::analysis
