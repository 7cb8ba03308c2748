#include "dissector/analysis/connection_groups.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace roceconf::analysis {

namespace {

// An address as a file-name part: "192.0.2.11", "2001_db8__1", "gid-fe80__1", "lid-0x0004".
std::string file_part(const NetAddress& a) {
  std::string s = a.kind == NetAddress::Kind::kNone ? std::string("unknown") : a.to_string();
  for (char& c : s) {
    const bool keep = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      c == '.' || c == '-';
    if (!keep) c = c == ' ' ? '-' : '_';
  }
  return s;
}

std::string endpoint_part(const ConnectionEndpoint& e) {
  std::string s = file_part(e.address);
  if (e.qpn) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "-0x%06x", static_cast<unsigned>(*e.qpn));
    s += buf;
  }
  return s;
}

}  // namespace

std::string ConnectionGroup::name() const {
  std::string s = endpoint_part(a) + "--" + endpoint_part(b);
  if (cm_connection != 0) s += "-cm" + std::to_string(cm_connection);
  return s;
}

std::uint32_t ConnectionGroups::node(std::uint32_t& n) {
  if (n == 0) {
    n = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back(Node{n, 0, 0});
  }
  return n;
}

std::uint32_t ConnectionGroups::node_for_frame(std::uint32_t& n, std::uint64_t frame) {
  Node& x = nodes_[node(n)];
  if (x.frames++ == 0) x.first_frame = frame;
  return n;
}

std::uint32_t ConnectionGroups::find(std::uint32_t n) const {
  while (nodes_[n].parent != n) n = nodes_[n].parent;
  return n;
}

void ConnectionGroups::unite(std::uint32_t a, std::uint32_t b) {
  // Path halving on the way up keeps the trees flat.
  auto root = [this](std::uint32_t n) {
    while (nodes_[n].parent != n) {
      nodes_[n].parent = nodes_[nodes_[n].parent].parent;
      n = nodes_[n].parent;
    }
    return n;
  };
  a = root(a);
  b = root(b);
  if (a == b) return;
  if (a > b) std::swap(a, b);  // the older node stays the root: deterministic
  nodes_[b].parent = a;
}

std::uint32_t ConnectionGroups::intern(const NetAddress& a) {
  // AddressKey's hash serves for a lone address too.
  const auto [it, added] =
      address_ids_.try_emplace(AddressKey{a, NetAddress{}, 0}, addresses_.size());
  if (added) addresses_.push_back(a);
  return it->second;
}

ConnectionGroups::ChannelInfo& ConnectionGroups::channel(std::uint32_t id) {
  if (id >= channels_.size()) channels_.resize(std::max<std::size_t>(id + 1, channels_.size() * 2));
  return channels_[id];
}

ConnectionGroups::CmInfo& ConnectionGroups::connection(std::uint32_t id) {
  if (id >= connections_.size())
    connections_.resize(std::max<std::size_t>(id + 1, connections_.size() * 2));
  return connections_[id];
}

void ConnectionGroups::update_candidate(std::uint32_t id) {
  const ChannelInfo& c = channel(id);
  if (c.src == 0) return;  // no frame of its own yet: no requests either
  const PairKey key = pair_key(c.src, c.dst);
  if (c.rc && c.requests && c.peer == 0) {
    candidates_[key].insert(id);
  } else if (const auto it = candidates_.find(key); it != candidates_.end()) {
    it->second.erase(id);
    if (it->second.empty()) candidates_.erase(it);
  }
}

// Mirrors the tracker's link(): pairing two channels unpairs their previous peers.
void ConnectionGroups::set_peer(std::uint32_t id, std::uint32_t peer) {
  const std::uint32_t old = channel(id).peer;
  if (old == peer) return;
  if (old != 0 && channel(old).peer == id) {
    channel(old).peer = 0;
    update_candidate(old);
  }
  channel(id).peer = peer;
  if (peer != 0) {
    const std::uint32_t other = channel(peer).peer;
    if (other != 0 && other != id && channel(other).peer == peer) {
      channel(other).peer = 0;
      update_candidate(other);
    }
    channel(peer).peer = id;
    update_candidate(peer);
  }
  update_candidate(id);
}

void ConnectionGroups::observe(const Packet& p, const FrameAnalysis& fa, const CmTracker& cm) {
  if (finished_) return;
  ++frames_;
  if (fa.cm && fa.cm->connection != 0) {
    CmInfo& c = connection(fa.cm->connection);
    node_for_frame(c.node, fa.frame);
    if (const CmConnection* known = cm.connection(fa.cm->connection)) {
      c.active.address = known->active;
      c.passive.address = known->passive;
      if (!known->partial) c.active.qpn = known->active_qpn;
      if (known->has_rep) c.passive.qpn = known->passive_qpn;
    }
    return;
  }
  if (!fa.rc || fa.rc->channel == 0) {
    ++other_frames_;
    return;
  }
  const RcFrameInfo& rc = *fa.rc;
  ChannelInfo& ch = channel(rc.channel);
  if (ch.src == 0) {
    // The channel's key never changes: (source, destination, BTH DestQP).
    ch.src = intern(NetAddress::source(p));
    ch.dst = intern(NetAddress::destination(p));
    ch.qpn = p.bth ? p.bth->dqpn : 0;
  }
  if (p.bth && opcode_info(p.bth->opcode).service == Service::kRc) ch.rc = true;
  if (rc.role == RcRole::kRequest) ch.requests = true;
  const std::uint32_t n = node_for_frame(ch.node, fa.frame);
  set_peer(rc.channel, rc.peer_channel);
  update_candidate(rc.channel);
  if (rc.peer_channel != 0) unite(n, node(channel(rc.peer_channel).node));
  if (rc.connection != 0) unite(n, node(connection(rc.connection).node));
  if (rc.role == RcRole::kResponse && rc.peer_channel == 0) {
    const ChannelInfo& self = channel(rc.channel);
    if (const auto it = candidates_.find(pair_key(self.dst, self.src)); it != candidates_.end()) {
      for (std::uint32_t c : it->second) unite(n, node(channel(c).node));
    }
  }
}

void ConnectionGroups::finish() {
  if (finished_) return;
  finished_ = true;
  // Roots in order of their group's first frame.
  std::vector<std::uint64_t> first(nodes_.size(), 0);
  std::vector<std::uint64_t> frames(nodes_.size(), 0);
  for (std::uint32_t n = 1; n < nodes_.size(); ++n) {
    const std::uint32_t r = find(n);
    const Node& x = nodes_[n];
    frames[r] += x.frames;
    if (x.frames != 0 && (first[r] == 0 || x.first_frame < first[r])) first[r] = x.first_frame;
  }
  std::vector<std::uint32_t> roots;
  for (std::uint32_t n = 1; n < nodes_.size(); ++n)
    if (find(n) == n && frames[n] != 0) roots.push_back(n);
  std::ranges::sort(roots, [&](std::uint32_t x, std::uint32_t y) { return first[x] < first[y]; });
  std::vector<std::uint32_t> number(nodes_.size(), 0);
  groups_.resize(roots.size());
  for (std::uint32_t i = 0; i < roots.size(); ++i) {
    number[roots[i]] = i + 1;
    groups_[i].number = i + 1;
    groups_[i].first_frame = first[roots[i]];
    groups_[i].frames = frames[roots[i]];
  }

  // Endpoints: the first CM connection's (active side first) when it knows both QPNs, else the
  // first channel's (its source, the peer's QPN; its destination, its QPN).
  std::vector<std::uint64_t> named_by(groups_.size(), 0);  // first frame of the naming channel
  channel_group_.assign(channels_.size(), 0);
  for (std::uint32_t id = 1; id < channels_.size(); ++id) {
    const ChannelInfo& c = channels_[id];
    if (c.node == 0) continue;
    const std::uint32_t g = number[find(c.node)];
    channel_group_[id] = g;
    if (g == 0) continue;
    ConnectionGroup& group = groups_[g - 1];
    ++group.channels;
    const Node& x = nodes_[c.node];
    if (c.src == 0 || x.frames == 0 || (named_by[g - 1] != 0 && named_by[g - 1] <= x.first_frame))
      continue;
    named_by[g - 1] = x.first_frame;
    group.a = {addresses_[c.src], std::nullopt};
    group.b = {addresses_[c.dst], c.qpn};
    if (c.peer != 0 && c.peer < channels_.size() && channels_[c.peer].src != 0)
      group.a.qpn = channels_[c.peer].qpn;
  }
  connection_group_.assign(connections_.size(), 0);
  for (std::uint32_t id = 1; id < connections_.size(); ++id) {
    const CmInfo& c = connections_[id];
    if (c.node == 0) continue;
    const std::uint32_t g = number[find(c.node)];
    connection_group_[id] = g;
    if (g == 0) continue;
    ConnectionGroup& group = groups_[g - 1];
    if (group.cm_connections++ == 0) {
      group.cm_connection = id;  // ids grow with first sight: the first one
      if ((c.active.qpn && c.passive.qpn) || group.channels == 0) {
        group.a = c.active;
        group.b = c.passive;
      }
    }
  }

  // Pass 2 needs only the id -> group tables.
  std::vector<Node>().swap(nodes_);
  std::vector<ChannelInfo>().swap(channels_);
  std::vector<CmInfo>().swap(connections_);
  std::vector<NetAddress>().swap(addresses_);
  address_ids_.clear();
  candidates_.clear();
}

std::uint32_t ConnectionGroups::group_of(const FrameAnalysis& fa) const {
  if (fa.cm && fa.cm->connection != 0)
    return fa.cm->connection < connection_group_.size() ? connection_group_[fa.cm->connection] : 0;
  if (fa.rc && fa.rc->channel != 0)
    return fa.rc->channel < channel_group_.size() ? channel_group_[fa.rc->channel] : 0;
  return 0;
}

}  // namespace roceconf::analysis
