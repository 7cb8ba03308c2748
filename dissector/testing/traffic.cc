// Over 600 lines: the generator of every test capture, one scenario per function.
#include "dissector/testing/traffic.h"

#include <pcap/pcap.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <optional>
#include <utility>

#include "dissector/icrc.h"
#include "dissector/mad/rdma_cm.h"
#include "dissector/names.h"

namespace roceconf {

namespace {

// Randomness helpers over the raw engine output (see the header on portability).
std::uint64_t below(std::mt19937_64& g, std::uint64_t n) {
  return g() % n;
}
std::uint64_t between(std::mt19937_64& g, std::uint64_t lo, std::uint64_t hi) {
  return lo + below(g, hi - lo + 1);
}
bool chance(std::mt19937_64& g, double p) {
  return static_cast<double>(g() >> 11) * 0x1p-53 < p;
}
template <std::size_t N>
std::size_t weighted(std::mt19937_64& g, const std::array<unsigned, N>& weights) {
  unsigned total = 0;
  for (unsigned w : weights) total += w;
  std::uint64_t r = below(g, total);
  for (std::size_t i = 0; i < N; ++i) {
    if (r < weights[i]) return i;
    r -= weights[i];
  }
  return N - 1;
}
template <typename T>
T narrow(std::uint64_t v) {
  return static_cast<T>(v);
}

constexpr std::size_t kConnections = 12;
constexpr std::size_t kHosts = 16;
constexpr std::uint32_t kMaxMessage = 65536;
constexpr std::uint32_t kNoPacket = UINT32_MAX;

constexpr std::uint8_t kCnpDscp = 48;               // mlx5's default cnp_dscp
constexpr std::uint8_t kCnpPcp = 6;                 // and cnp_802p_prio
constexpr std::uint32_t kRdmaUdpQkey = 0x01234567;  // rdma_cm's UD Q_Key

enum class Wire : std::uint8_t { kRoceV2Ipv4, kRoceV2Ipv6, kRoceV1, kIb, kIbGlobal };
// Wire, service and path-MTU mixes of a new connection.
constexpr std::array<unsigned, 5> kWireMix = {55, 25, 8, 8, 4};
constexpr std::array<Service, 3> kServices = {Service::kRc, Service::kUc, Service::kUd};
constexpr std::array<unsigned, 3> kServiceMix = {75, 10, 15};
constexpr std::array<std::uint32_t, 5> kMtus = {256, 512, 1024, 2048, 4096};
constexpr std::array<unsigned, 5> kMtuMix = {4, 4, 45, 7, 40};
// Ports of common rdma_cm services: NVMe-oF, perftest, NFS/RDMA, iSER.
constexpr std::array<std::uint16_t, 4> kServicePorts = {4420, 18515, 20049, 3260};

// What a connection does per step.
enum class Op : std::uint8_t {
  kWrite,
  kWriteImm,
  kSend,
  kSendImm,
  kSendInv,
  kRead,
  kCompareSwap,
  kFetchAdd,
  kFlush,
  kAtomicWrite,
};
constexpr std::array<unsigned, 10> kRcMix = {300, 60, 180, 40, 20, 200, 15, 15, 10, 10};
constexpr std::array<unsigned, 10> kUcMix = {450, 100, 350, 100, 0, 0, 0, 0, 0, 0};

// Traffic classes of what a connection sends: data is ECN-capable, CNPs and MADs are not.
enum class Class : std::uint8_t { kData, kCnp, kMgmt };

struct Host {
  MacAddress mac{};
  Ipv4Address ip4{};
  Ipv6Address ip6{};
  Gid link_gid{};  // fe80::EUI-64 of the MAC, as RoCEv1 uses
  std::uint64_t guid = 0;
  Gid ib_gid{};  // fe80:: + port GUID
  std::uint16_t lid = 0;
  std::uint32_t gsi_psn = 0;  // QP1's send PSN
  std::uint32_t tid_hi = 0;   // MAD agent's half of the transaction ID
  std::uint32_t tid_lo = 0;
};

struct Endpoint {
  std::size_t host = 0;
  std::uint32_t qpn = 0;
  std::uint32_t comm_id = 0;
  std::uint16_t ip_id = 0;
  std::uint32_t psn = 0;  // next request PSN this end sends
};

struct Frame {
  std::vector<std::uint8_t> bytes;
  LinkType link = LinkType::kEthernet;
};

struct Connection {
  bool open = false;
  Wire wire = Wire::kRoceV2Ipv4;
  Service service = Service::kRc;
  std::optional<Vlan> vlan;
  std::uint8_t dscp = 26;
  std::uint32_t pmtu = 1024;
  std::uint16_t pkey = Bth::kDefaultPkey;
  std::uint32_t flow_label = 0;
  std::uint16_t sport = 0xC000;
  std::uint8_t sl = 0;
  std::uint64_t service_id = 0;
  std::uint16_t src_port = 0;  // rdma_cm's, in the REQ private data
  std::uint32_t qkey = kRdmaUdpQkey;
  std::uint32_t rkey = 0;
  std::uint64_t va = 0;   // base of the remote buffer
  std::uint32_t msn = 0;  // the responder's
  std::uint32_t ops_left = 0;
  Endpoint a, b;  // a requests and b responds; UD traffic goes both ways
  std::deque<Frame> queue;
};

struct Message {
  bool write = false;  // RDMA WRITE, else SEND
  bool imm = false;
  bool inv = false;
  bool solicited = false;
  std::uint32_t length = 0;
  const std::uint8_t* data = nullptr;
  std::uint32_t psn = 0;  // of the first packet
  std::uint64_t va = 0;
  std::uint32_t imm_data = 0;
  std::uint32_t inv_rkey = 0;
};

std::uint32_t segments(std::uint32_t length, std::uint32_t pmtu) {
  return length == 0 ? 1 : (length + pmtu - 1) / pmtu;
}

// fe80::/64 with the modified EUI-64 of the MAC (RFC 4291), as RoCEv1 GIDs are formed.
Gid link_local_gid(const MacAddress& mac) {
  Gid g{0xfe, 0x80};
  g[8] = narrow<std::uint8_t>(mac[0] ^ 2);
  g[9] = mac[1];
  g[10] = mac[2];
  g[11] = 0xff;
  g[12] = 0xfe;
  std::copy(mac.begin() + 3, mac.end(), g.begin() + 13);
  return g;
}

std::uint32_t ipv4_number(const Ipv4Address& a) {
  return std::uint32_t{a[0]} << 24 | std::uint32_t{a[1]} << 16 | std::uint32_t{a[2]} << 8 | a[3];
}

// Linux rdma_calc_flow_label() and rdma_flow_label_to_udp_sport(): both ends derive the same.
std::uint32_t flow_label(std::uint32_t lqpn, std::uint32_t rqpn) {
  std::uint64_t v = std::uint64_t{lqpn} * rqpn;
  v ^= v >> 20;
  v ^= v >> 40;
  return static_cast<std::uint32_t>(v & 0xFFFFF);
}
std::uint16_t udp_sport(std::uint32_t fl) {
  std::uint32_t lo = fl & 0x3FFF;
  lo ^= (fl & 0xFC000) >> 14;
  return static_cast<std::uint16_t>(lo | 0xC000);
}

// RFC 8200 forbids a zero UDP checksum over IPv6, so RoCEv2 senders fill it in (the ICRC masks
// it, and the encoder leaves it as given). `ip` is where the IPv6 header starts.
void fill_udp6_checksum(std::vector<std::uint8_t>& frame, std::size_t ip) {
  const std::size_t udp = ip + Ipv6::kSize;
  const std::size_t length = frame.size() - udp;
  std::uint32_t sum = kIpProtoUdp + static_cast<std::uint32_t>(length);
  for (std::size_t i = ip + 8; i < udp; i += 2) sum += be::load16(&frame[i]);  // addresses
  be::store16(&frame[udp + 6], 0);
  for (std::size_t i = udp; i + 1 < frame.size(); i += 2) sum += be::load16(&frame[i]);
  if (length % 2 != 0) sum += std::uint32_t{frame.back()} << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  const auto checksum = static_cast<std::uint16_t>(~sum);
  be::store16(&frame[udp + 6], checksum == 0 ? 0xFFFF : checksum);
}

}  // namespace

struct TrafficGenerator::Impl {
  explicit Impl(std::uint64_t seed);

  std::vector<std::uint8_t> next(LinkType* link);

  void plan(Connection& c);
  void setup(Connection& c);
  void connect(Connection& c);
  void disconnect(Connection& c);
  void rc_uc_op(Connection& c);
  void ud_op(Connection& c);

  void send_packets(Connection& c, const Message& m, std::uint32_t from, std::uint32_t skip,
                    bool ackreq);
  void ack(Connection& c, std::uint32_t psn, std::uint8_t syndrome);
  void read_response(Connection& c, std::uint32_t psn, std::uint32_t length,
                     const std::uint8_t* data);
  void cnp(Connection& c, bool from_a);
  void mad(Connection& c, bool from_a, const CmMessage& msg, std::uint64_t tid,
           std::uint8_t method = mad_method::kSend);
  void emit(Connection& c, bool from_a, Packet& p, Class cls = Class::kData);

  Bth bth(const Connection& c, bool from_a, std::uint8_t op, std::uint32_t psn) const;
  CmPath path(const Connection& c) const;
  RdmaCmHeader rdma_cm_header(const Connection& c) const;
  std::uint64_t new_tid(Endpoint& e);
  std::uint32_t message_size();
  const std::uint8_t* message_data() { return data.data() + below(rng, kMaxMessage); }
  std::uint8_t ack_syndrome() {
    // ACK with a credit count, or "unlimited" as with an SRQ.
    return chance(rng, 0.5) ? syndrome::kAckUnlimited : narrow<std::uint8_t>(between(rng, 0, 30));
  }
  std::uint32_t qpn() { return narrow<std::uint32_t>(between(rng, 0x100, 0x3FFFF)); }

  std::mt19937_64 rng;
  std::vector<Host> hosts;
  std::array<Connection, kConnections> conns;
  std::vector<std::uint8_t> data;  // payload bytes: messages are windows into it
};

TrafficGenerator::Impl::Impl(std::uint64_t seed) : rng(seed), hosts(kHosts) {
  // Mellanox/NVIDIA OUIs, as most RoCE NICs carry.
  static constexpr std::array<std::array<std::uint8_t, 3>, 4> kOuis = {
      {{0x0c, 0x42, 0xa1}, {0xb8, 0xce, 0xf6}, {0x98, 0x03, 0x9b}, {0x1c, 0x34, 0xda}}};
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    Host& h = hosts[i];
    const auto& oui = kOuis[below(rng, kOuis.size())];
    h.mac = {oui[0], oui[1], oui[2], 0, 0, narrow<std::uint8_t>(i)};
    be::store16(&h.mac[3], narrow<std::uint16_t>(rng()));
    h.ip4 = {10, narrow<std::uint8_t>(below(rng, 4)), narrow<std::uint8_t>(i),
             narrow<std::uint8_t>(between(rng, 1, 254))};
    h.ip6 = {0xfd, 0x00, 0x0a, 0x0b};
    std::copy(h.ip4.begin(), h.ip4.end(), h.ip6.begin() + 12);
    h.link_gid = link_local_gid(h.mac);
    h.guid = std::uint64_t{oui[0]} << 56 | std::uint64_t{oui[1]} << 48 |
             std::uint64_t{oui[2]} << 40 | std::uint64_t{0x03} << 32 | (rng() & 0xFFFFFF);
    h.ib_gid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0};
    be::store64(&h.ib_gid[8], h.guid);
    h.lid = narrow<std::uint16_t>(1 + i * 3 + below(rng, 3));
    h.gsi_psn = narrow<std::uint32_t>(rng() & kPsnMask);
    h.tid_hi = narrow<std::uint32_t>(rng());
  }
  data.resize(2 * kMaxMessage);
  for (auto& byte : data) byte = narrow<std::uint8_t>(rng() >> 56);
}

std::vector<std::uint8_t> TrafficGenerator::Impl::next(LinkType* link) {
  Connection& c = conns[below(rng, conns.size())];
  while (c.queue.empty()) plan(c);
  Frame f = std::move(c.queue.front());
  c.queue.pop_front();
  if (link != nullptr) *link = f.link;
  return std::move(f.bytes);
}

void TrafficGenerator::Impl::plan(Connection& c) {
  if (!c.open) {
    connect(c);
  } else if (c.ops_left == 0) {
    disconnect(c);
  } else {
    --c.ops_left;
    if (c.service == Service::kUd)
      ud_op(c);
    else
      rc_uc_op(c);
  }
}

void TrafficGenerator::Impl::setup(Connection& c) {
  const std::size_t ha = below(rng, kHosts);
  std::size_t hb = below(rng, kHosts - 1);
  if (hb >= ha) ++hb;
  c.wire = static_cast<Wire>(weighted(rng, kWireMix));
  c.service = kServices[weighted(rng, kServiceMix)];
  const bool ethernet = c.wire != Wire::kIb && c.wire != Wire::kIbGlobal;
  c.vlan.reset();
  if (ethernet && chance(rng, 0.3)) {
    Vlan v;
    v.pcp = 3;  // the usual lossless (PFC) priority for RoCE
    v.vid = narrow<std::uint16_t>(between(rng, 2, 4094));
    c.vlan = v;
  }
  c.dscp = 26;
  c.pmtu = kMtus[weighted(rng, kMtuMix)];
  c.pkey = chance(rng, 0.9) ? Bth::kDefaultPkey
                            : narrow<std::uint16_t>(0x8000 | between(rng, 1, 0x7FFE));
  for (Endpoint* e : {&c.a, &c.b}) {
    e->qpn = qpn();
    e->comm_id = narrow<std::uint32_t>(rng());
    e->ip_id = narrow<std::uint16_t>(rng());
    e->psn = narrow<std::uint32_t>(rng() & kPsnMask);
  }
  c.a.host = ha;
  c.b.host = hb;
  c.flow_label = flow_label(c.a.qpn, c.b.qpn);
  c.sport = udp_sport(c.flow_label);
  c.sl = c.vlan ? c.vlan->pcp : narrow<std::uint8_t>(below(rng, 4));
  const std::uint16_t port = kServicePorts[below(rng, kServicePorts.size())];
  c.service_id =
      rdma_cm_service_id(c.service == Service::kUd ? rdma_cm_ps::kUdp : rdma_cm_ps::kTcp, port);
  c.src_port = narrow<std::uint16_t>(between(rng, 32768, 60999));
  c.qkey = kRdmaUdpQkey;
  c.rkey = narrow<std::uint32_t>(rng());
  c.va = 0x7f0000000000 + (rng() & 0xFFFFFFF000);
  c.msn = 0;
  c.ops_left = narrow<std::uint32_t>(between(rng, 20, 400));
}

std::uint64_t TrafficGenerator::Impl::new_tid(Endpoint& e) {
  Host& h = hosts[e.host];
  return std::uint64_t{h.tid_hi} << 32 | h.tid_lo++;
}

CmPath TrafficGenerator::Impl::path(const Connection& c) const {
  const Host& ha = hosts[c.a.host];
  const Host& hb = hosts[c.b.host];
  CmPath p = kRocePrimaryPath;
  p.traffic_class = narrow<std::uint8_t>(c.dscp << 2);
  p.sl = c.sl;
  switch (c.wire) {
    case Wire::kRoceV2Ipv4:
      p.local_gid = cm_ipv4_gid(ipv4_number(ha.ip4));
      p.remote_gid = cm_ipv4_gid(ipv4_number(hb.ip4));
      break;
    case Wire::kRoceV2Ipv6:
      p.local_gid = ha.ip6;
      p.remote_gid = hb.ip6;
      p.flow_label = c.flow_label;
      break;
    case Wire::kRoceV1:
      p.local_gid = ha.link_gid;
      p.remote_gid = hb.link_gid;
      p.hop_limit = 1;
      p.subnet_local = true;
      break;
    case Wire::kIb:
    case Wire::kIbGlobal:
      p.local_lid = ha.lid;
      p.remote_lid = hb.lid;
      p.local_gid = ha.ib_gid;
      p.remote_gid = hb.ib_gid;
      p.subnet_local = c.wire == Wire::kIb;
      p.hop_limit = c.wire == Wire::kIb ? 0 : 64;
      p.local_ack_timeout = 14;
      break;
  }
  return p;
}

RdmaCmHeader TrafficGenerator::Impl::rdma_cm_header(const Connection& c) const {
  const Host& ha = hosts[c.a.host];
  const Host& hb = hosts[c.b.host];
  RdmaCmHeader h;
  h.src_port = c.src_port;
  if (c.wire == Wire::kRoceV2Ipv6) {
    h.ip_version = 6;
    h.src_ip = ha.ip6;
    h.dst_ip = hb.ip6;
  } else {
    h.src_ip = rdma_cm_ipv4(ipv4_number(ha.ip4));
    h.dst_ip = rdma_cm_ipv4(ipv4_number(hb.ip4));
  }
  return h;
}

void TrafficGenerator::Impl::connect(Connection& c) {
  setup(c);
  if (chance(rng, 0.01)) {
    // Some stacks query the peer CM's ClassPortInfo first.
    const std::uint64_t tid = new_tid(c.a);
    mad(c, true, ClassPortInfo{}, tid, mad_method::kGet);
    ClassPortInfo info;
    info.resp_time_value = 18;
    info.capability_mask = 0x0100;
    mad(c, false, info, tid, mad_method::kGetResp);
  }
  const std::uint64_t tid = new_tid(c.a);
  if (c.service == Service::kUd) {
    std::array<std::uint8_t, kSidrReqPrivateDataSize> priv{};
    encode_rdma_cm_header(rdma_cm_header(c), std::span(priv).first<kRdmaCmHeaderSize>());
    CmSidrReq req;
    req.request_id = c.a.comm_id;
    req.pkey = c.pkey;
    req.service_id = c.service_id;
    req.private_data = priv;
    mad(c, true, req, tid);
    CmSidrRep rep;
    rep.request_id = c.a.comm_id;
    rep.qpn = c.b.qpn;
    rep.qkey = c.qkey;
    rep.service_id = c.service_id;
    mad(c, false, rep, tid);
    c.open = true;
    return;
  }

  std::array<std::uint8_t, kReqPrivateDataSize> priv{};
  const Bytes consumer(message_data(), below(rng, kRdmaCmConsumerDataSize + 1));
  build_rdma_cm_private_data(rdma_cm_header(c), consumer, priv);
  CmReq req;
  req.local_comm_id = c.a.comm_id;
  req.service_id = c.service_id;
  req.local_ca_guid = hosts[c.a.host].guid;
  req.local_qpn = c.a.qpn;
  req.responder_resources = 16;
  req.initiator_depth = 16;
  req.transport_type = c.service == Service::kRc ? cm_transport::kRc : cm_transport::kUc;
  req.starting_psn = c.b.psn;  // the passive side sends from the REQ's Starting PSN
  req.pkey = c.pkey;
  req.path_mtu = mtu_enum(c.pmtu);
  req.srq = chance(rng, 0.3);
  req.primary = path(c);
  req.private_data = priv;
  mad(c, true, req, tid);

  if (chance(rng, 0.03)) {
    CmMra mra;
    mra.local_comm_id = c.b.comm_id;
    mra.remote_comm_id = c.a.comm_id;
    mad(c, false, mra, tid);
  }
  if (chance(rng, 0.02)) {
    // Refused: no listener, or the consumer said no. The next step starts over.
    CmRej rej;
    rej.local_comm_id = c.b.comm_id;
    rej.remote_comm_id = c.a.comm_id;
    rej.reason = chance(rng, 0.5) ? 8 : 28;
    mad(c, false, rej, tid);
    return;
  }
  CmRep rep;
  rep.local_comm_id = c.b.comm_id;
  rep.remote_comm_id = c.a.comm_id;
  rep.local_qpn = c.b.qpn;
  rep.starting_psn = c.a.psn;  // and the active side from the REP's
  rep.responder_resources = 16;
  rep.initiator_depth = 16;
  rep.srq = req.srq;
  rep.local_ca_guid = hosts[c.b.host].guid;
  mad(c, false, rep, tid);
  CmRtu rtu;
  rtu.local_comm_id = c.a.comm_id;
  rtu.remote_comm_id = c.b.comm_id;
  mad(c, true, rtu, tid);
  c.open = true;
}

void TrafficGenerator::Impl::disconnect(Connection& c) {
  c.open = false;
  if (c.service == Service::kUd) return;  // rdma_cm has no teardown for UD
  const bool from_a = chance(rng, 0.5);
  Endpoint& self = from_a ? c.a : c.b;
  const Endpoint& peer = from_a ? c.b : c.a;
  const std::uint64_t tid = new_tid(self);
  CmDreq dreq;
  dreq.local_comm_id = self.comm_id;
  dreq.remote_comm_id = peer.comm_id;
  dreq.remote_qpn = peer.qpn;
  mad(c, from_a, dreq, tid);
  CmDrep drep;
  drep.local_comm_id = peer.comm_id;
  drep.remote_comm_id = self.comm_id;
  mad(c, !from_a, drep, tid);
}

std::uint32_t TrafficGenerator::Impl::message_size() {
  // Mostly small messages, a tail of large ones: most packets are small, most bytes large.
  static constexpr std::array<unsigned, 5> kMix = {5, 45, 30, 16, 4};
  switch (weighted(rng, kMix)) {
    case 0:
      return 0;
    case 1:
      return narrow<std::uint32_t>(between(rng, 1, 256));
    case 2:
      return narrow<std::uint32_t>(between(rng, 257, 4096));
    case 3:
      return narrow<std::uint32_t>(between(rng, 4097, 16384));
    default:
      return narrow<std::uint32_t>(between(rng, 16385, kMaxMessage));
  }
}

void TrafficGenerator::Impl::rc_uc_op(Connection& c) {
  const bool rc = c.service == Service::kRc;
  const auto op = static_cast<Op>(weighted(rng, rc ? kRcMix : kUcMix));
  const std::uint64_t va = c.va + (rng() & 0xFFFFF);
  switch (op) {
    case Op::kRead: {
      const std::uint32_t length = message_size();
      const std::uint32_t psn = c.a.psn;
      c.a.psn = (psn + segments(length, c.pmtu)) & kPsnMask;
      Packet p;
      p.bth = bth(c, true, opcode::kRcReadRequest, psn);
      p.bth->ackreq = true;
      p.reth = Reth{va, c.rkey, length};
      emit(c, true, p);
      if (chance(rng, 0.001)) {
        // Bad R_Key: the QP goes to error and the connection is torn down.
        ack(c, psn, syndrome::kNakRemoteAccess);
        c.ops_left = 0;
        return;
      }
      c.msn = (c.msn + 1) & kPsnMask;
      read_response(c, psn, length, message_data());
      return;
    }
    case Op::kCompareSwap:
    case Op::kFetchAdd: {
      const bool cas = op == Op::kCompareSwap;
      const std::uint32_t psn = c.a.psn;
      c.a.psn = (psn + 1) & kPsnMask;
      Packet p;
      p.bth = bth(c, true, cas ? opcode::kRcCompareSwap : opcode::kRcFetchAdd, psn);
      p.bth->ackreq = true;
      p.atomiceth = AtomicEth{va & ~std::uint64_t{7}, c.rkey, cas ? rng() : between(rng, 1, 64),
                              cas ? rng() : 0};
      emit(c, true, p);
      c.msn = (c.msn + 1) & kPsnMask;
      Packet r;
      r.bth = bth(c, false, opcode::kRcAtomicAck, psn);
      r.aeth = Aeth{ack_syndrome(), c.msn};
      r.atomicacketh = AtomicAckEth{rng()};
      emit(c, false, r);
      return;
    }
    case Op::kFlush:
    case Op::kAtomicWrite: {
      // Both are answered by a zero-length READ RESPONSE ONLY (as rxe does).
      const std::uint32_t psn = c.a.psn;
      c.a.psn = (psn + 1) & kPsnMask;
      Packet p;
      if (op == Op::kFlush) {
        p.bth = bth(c, true, opcode::kRcFlush, psn);
        p.feth =
            Feth{0, narrow<std::uint8_t>(below(rng, 2)), narrow<std::uint8_t>(between(rng, 1, 2))};
        p.reth = Reth{va, c.rkey, message_size()};
      } else {
        p.bth = bth(c, true, opcode::kRcAtomicWrite, psn);
        p.reth = Reth{va & ~std::uint64_t{7}, c.rkey, 8};
        p.payload = Bytes(message_data(), 8);
      }
      p.bth->ackreq = true;
      emit(c, true, p);
      c.msn = (c.msn + 1) & kPsnMask;
      read_response(c, psn, 0, nullptr);
      return;
    }
    default:
      break;
  }

  Message m;
  m.write = op == Op::kWrite || op == Op::kWriteImm;
  m.imm = op == Op::kWriteImm || op == Op::kSendImm;
  m.inv = op == Op::kSendInv;
  m.solicited = m.imm && chance(rng, 0.5);
  m.length = message_size();
  m.data = message_data();
  m.psn = c.a.psn;
  m.va = va;
  m.imm_data = narrow<std::uint32_t>(rng());
  m.inv_rkey = narrow<std::uint32_t>(rng());
  const std::uint32_t n = segments(m.length, c.pmtu);
  c.a.psn = (c.a.psn + n) & kPsnMask;
  const std::uint32_t last_psn = (m.psn + n - 1) & kPsnMask;
  // Responders coalesce ACKs: not every message asks for one.
  const bool acked = rc && chance(rng, 0.8);

  if (rc && !m.write && chance(rng, 0.015)) {
    // No receive posted: RNR NAK, then the whole message again after the timer.
    send_packets(c, m, 0, kNoPacket, true);
    ack(c, m.psn, narrow<std::uint8_t>(syndrome::kRnrBase | between(rng, 1, 31)));
    send_packets(c, m, 0, kNoPacket, true);
  } else if (rc && n >= 3 && chance(rng, 0.01)) {
    // A packet lost in the fabric: the next one draws a sequence-error NAK, go-back-N follows.
    const auto lost = narrow<std::uint32_t>(between(rng, 1, n - 2));
    send_packets(c, m, 0, lost, acked);
    ack(c, (m.psn + lost) & kPsnMask, syndrome::kNakPsnSeqError);
    send_packets(c, m, lost, kNoPacket, acked);
  } else {
    send_packets(c, m, 0, kNoPacket, acked);
  }
  if (!rc) return;
  if (m.write && chance(rng, 0.001)) {
    ack(c, m.psn, syndrome::kNakRemoteAccess);
    c.ops_left = 0;
    return;
  }
  c.msn = (c.msn + 1) & kPsnMask;
  if (acked) ack(c, last_psn, ack_syndrome());
}

void TrafficGenerator::Impl::ud_op(Connection& c) {
  const bool from_a = chance(rng, 0.7);
  Endpoint& self = from_a ? c.a : c.b;
  const bool imm = chance(rng, 0.1);
  Packet p;
  p.bth = bth(c, from_a, imm ? opcode::kUdSendOnlyImm : opcode::kUdSendOnly, self.psn);
  self.psn = (self.psn + 1) & kPsnMask;
  p.bth->solicited = imm && chance(rng, 0.5);
  p.deth = Deth{c.qkey, 0, self.qpn};
  if (imm) p.immdt = ImmDt{narrow<std::uint32_t>(rng())};
  p.payload = Bytes(message_data(), std::min(message_size(), c.pmtu));
  emit(c, from_a, p);
}

void TrafficGenerator::Impl::send_packets(Connection& c, const Message& m, std::uint32_t from,
                                          std::uint32_t skip, bool ackreq) {
  using namespace opcode;
  const std::uint32_t n = segments(m.length, c.pmtu);
  const std::uint8_t family = c.service == Service::kUc ? kUcBase : 0;
  for (std::uint32_t i = from; i < n; ++i) {
    if (i == skip) continue;
    const bool first = i == 0;
    const bool last = i == n - 1;
    std::uint8_t op;
    if (m.write) {
      op = n == 1  ? (m.imm ? kRcWriteOnlyImm : kRcWriteOnly)
           : first ? kRcWriteFirst
           : last  ? (m.imm ? kRcWriteLastImm : kRcWriteLast)
                   : kRcWriteMiddle;
    } else {
      op = n == 1  ? (m.imm   ? kRcSendOnlyImm
                      : m.inv ? kRcSendOnlyInv
                              : kRcSendOnly)
           : first ? kRcSendFirst
           : last  ? (m.imm   ? kRcSendLastImm
                      : m.inv ? kRcSendLastInv
                              : kRcSendLast)
                   : kRcSendMiddle;
    }
    Packet p;
    p.bth = bth(c, true, narrow<std::uint8_t>(family | op), m.psn + i);
    p.bth->ackreq = last && ackreq;
    p.bth->solicited = last && m.solicited;
    if (m.write && first) p.reth = Reth{m.va, c.rkey, m.length};
    if (last && m.imm) p.immdt = ImmDt{m.imm_data};
    if (last && m.inv) p.ieth = Ieth{m.inv_rkey};
    const std::uint32_t offset = i * c.pmtu;
    p.payload = Bytes(m.data + offset, std::min(c.pmtu, m.length - offset));
    emit(c, true, p);
  }
}

void TrafficGenerator::Impl::ack(Connection& c, std::uint32_t psn, std::uint8_t syndrome) {
  Packet p;
  p.bth = bth(c, false, opcode::kRcAck, psn);
  p.aeth = Aeth{syndrome, c.msn};
  emit(c, false, p);
}

void TrafficGenerator::Impl::read_response(Connection& c, std::uint32_t psn, std::uint32_t length,
                                           const std::uint8_t* bytes) {
  using namespace opcode;
  const std::uint32_t n = segments(length, c.pmtu);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint8_t op = n == 1       ? kRcReadResponseOnly
                            : i == 0     ? kRcReadResponseFirst
                            : i == n - 1 ? kRcReadResponseLast
                                         : kRcReadResponseMiddle;
    Packet p;
    p.bth = bth(c, false, op, psn + i);
    if (op != kRcReadResponseMiddle) p.aeth = Aeth{ack_syndrome(), c.msn};
    const std::uint32_t offset = i * c.pmtu;
    if (length > 0) p.payload = Bytes(bytes + offset, std::min(c.pmtu, length - offset));
    emit(c, false, p);
  }
}

void TrafficGenerator::Impl::cnp(Connection& c, bool from_a) {
  Packet p;
  Bth b;
  b.opcode = opcode::kCnp;
  b.becn = true;
  b.dqpn = (from_a ? c.b : c.a).qpn;
  b.psn = 0;
  p.bth = b;
  emit(c, from_a, p, Class::kCnp);
}

void TrafficGenerator::Impl::mad(Connection& c, bool from_a, const CmMessage& msg,
                                 std::uint64_t tid, std::uint8_t method) {
  Host& h = hosts[(from_a ? c.a : c.b).host];
  Packet p;
  Bth b;
  b.opcode = opcode::kUdSendOnly;
  b.dqpn = 1;
  b.psn = h.gsi_psn;
  h.gsi_psn = (h.gsi_psn + 1) & kPsnMask;
  p.bth = b;
  p.deth = Deth{kGsiQkey, 0, 1};
  Mad m;
  m.header.method = method;
  m.header.tid = tid;
  m.cm = msg;
  p.mad = std::move(m);
  emit(c, from_a, p, Class::kMgmt);
}

Bth TrafficGenerator::Impl::bth(const Connection& c, bool from_a, std::uint8_t op,
                                std::uint32_t psn) const {
  Bth b;
  b.opcode = op;
  b.migreq = true;  // path migration state "migrated", as NICs send by default
  b.pkey = c.pkey;
  b.dqpn = (from_a ? c.b : c.a).qpn;
  b.psn = psn & kPsnMask;
  return b;
}

void TrafficGenerator::Impl::emit(Connection& c, bool from_a, Packet& p, Class cls) {
  Endpoint& src = from_a ? c.a : c.b;
  const Host& hs = hosts[src.host];
  const Host& hd = hosts[(from_a ? c.b : c.a).host];
  const std::uint8_t dscp = cls == Class::kData ? c.dscp : cls == Class::kCnp ? kCnpDscp : 0;
  Frame f;
  bool ce = false;  // a switch marked Congestion Experienced: the receiver answers with a CNP
  if (c.wire == Wire::kIb || c.wire == Wire::kIbGlobal) {
    Lrh l;
    l.sl = c.sl;
    l.vl = c.sl;
    l.dlid = hd.lid;
    l.slid = hs.lid;
    p.lrh = l;
    if (c.wire == Wire::kIbGlobal) {
      Grh g;
      g.traffic_class = narrow<std::uint8_t>(dscp << 2);
      g.flow_label = c.flow_label;
      g.sgid = hs.ib_gid;
      g.dgid = hd.ib_gid;
      p.grh = g;
    }
    f.link = LinkType::kInfiniBand;
  } else {
    p.eth = Ethernet{hd.mac, hs.mac};
    if (c.vlan) {
      Vlan v = *c.vlan;
      if (cls == Class::kCnp) v.pcp = kCnpPcp;
      p.vlans.assign(1, v);
    }
    if (c.wire == Wire::kRoceV1) {
      Grh g;
      g.traffic_class = narrow<std::uint8_t>(dscp << 2);
      g.hop_limit = 1;
      g.sgid = hs.link_gid;
      g.dgid = hd.link_gid;
      p.grh = g;
    } else {
      ce = cls == Class::kData && chance(rng, 0.005);
      const std::uint8_t ecn = ce ? 3 : cls == Class::kData ? 2 : 0;  // CE, ECT(0), not-ECT
      if (c.wire == Wire::kRoceV2Ipv4) {
        Ipv4 ip;
        ip.dscp = dscp;
        ip.ecn = ecn;
        ip.id = src.ip_id++;
        ip.src = hs.ip4;
        ip.dst = hd.ip4;
        p.ipv4 = ip;
      } else {
        Ipv6 ip;
        ip.traffic_class = narrow<std::uint8_t>(dscp << 2 | ecn);
        ip.flow_label = c.flow_label;
        ip.src = hs.ip6;
        ip.dst = hd.ip6;
        p.ipv6 = ip;
      }
      Udp u;
      u.sport = cls == Class::kCnp ? 0 : c.sport;  // a ConnectX-4 Lx sends CNPs from port 0
      p.udp = u;
    }
  }
  encode_into(f.bytes, p);
  if (p.ipv6) fill_udp6_checksum(f.bytes, Ethernet::kSize + p.vlans.size() * Vlan::kSize);
  c.queue.push_back(std::move(f));
  if (ce) cnp(c, !from_a);
}

TrafficGenerator::TrafficGenerator(std::uint64_t seed) : impl_(std::make_unique<Impl>(seed)) {}
TrafficGenerator::~TrafficGenerator() = default;
TrafficGenerator::TrafficGenerator(TrafficGenerator&&) noexcept = default;
TrafficGenerator& TrafficGenerator::operator=(TrafficGenerator&&) noexcept = default;

std::vector<std::uint8_t> TrafficGenerator::next(LinkType* link) {
  return impl_->next(link);
}

std::string_view mutation_name(Mutation mutation) {
  switch (mutation) {
    case Mutation::kTruncate:
      return "truncate";
    case Mutation::kBadIcrc:
      return "bad-icrc";
    case Mutation::kBadLength:
      return "bad-length";
    case Mutation::kBadPad:
      return "bad-pad";
    case Mutation::kTver:
      return "tver";
    case Mutation::kReservedOpcode:
      return "reserved-opcode";
  }
  return "";
}

std::vector<std::uint8_t> mutate(Bytes frame, LinkType link, Mutation mutation,
                                 std::mt19937_64& rng) {
  std::vector<std::uint8_t> out(frame.begin(), frame.end());
  if (frame.size() < 2) return {};
  Packet p = decode(frame, link);
  if (!p.bth || !p.icrc) mutation = Mutation::kTruncate;
  EncodeOptions options;
  options.link = link == LinkType::kRaw ? LinkType::kRaw : LinkType::kEthernet;
  switch (mutation) {
    case Mutation::kTruncate: {
      std::size_t size = 1 + below(rng, frame.size() - 1);
      if (p.vcrc && size == frame.size() - 2) --size;  // IB without its VCRC is still valid
      out.resize(size);
      return out;
    }
    case Mutation::kBadIcrc: {
      // Frames as next() makes them end with the ICRC, then (native IB) the VCRC.
      const std::size_t vcrc = p.vcrc ? 2 : 0;
      const std::size_t at = !p.payload.empty() && chance(rng, 0.5)
                                 ? p.payload_offset + below(rng, p.payload.size())
                                 : frame.size() - vcrc - 4 + below(rng, 4);
      out[at] ^= narrow<std::uint8_t>(1u << below(rng, 8));
      if (vcrc != 0 && link == LinkType::kInfiniBand) {
        // Keep the link-level CRC right so that only the ICRC is at fault.
        const std::uint16_t v = compute_vcrc(Bytes(out).first(out.size() - 2));
        out[out.size() - 2] = narrow<std::uint8_t>(v);
        out[out.size() - 1] = narrow<std::uint8_t>(v >> 8);
      }
      return out;
    }
    case Mutation::kBadLength: {
      options.fill_lengths = false;
      std::array<std::uint16_t*, 5> fields{};
      std::size_t n = 0;
      if (p.ipv4) fields[n++] = &p.ipv4->total_length;
      if (p.ipv6) fields[n++] = &p.ipv6->payload_length;
      if (p.udp) fields[n++] = &p.udp->length;
      if (p.grh) fields[n++] = &p.grh->pay_len;
      if (p.lrh) fields[n++] = &p.lrh->pkt_len;
      std::uint16_t* field = fields[below(rng, n)];
      const auto delta = narrow<std::uint16_t>(between(rng, 1, 64));
      const bool up = chance(rng, 0.5);
      if (p.lrh && field == &p.lrh->pkt_len)  // 11 bits, in words
        *field =
            narrow<std::uint16_t>((*field + (up ? delta % 8 + 1 : 2048 - delta % 8 - 1)) & 0x7FF);
      else
        *field = narrow<std::uint16_t>(up ? *field + delta : *field - delta);
      break;
    }
    case Mutation::kBadPad:
      options.fill_pad = false;
      p.bth->padcount = narrow<std::uint8_t>((p.bth->padcount + 1 + below(rng, 3)) & 3);
      break;
    case Mutation::kTver:
      p.bth->version = narrow<std::uint8_t>(between(rng, 1, 15));
      break;
    case Mutation::kReservedOpcode: {
      static const std::vector<std::uint8_t> kReserved = [] {
        std::vector<std::uint8_t> ops;
        for (unsigned op = 0; op < 256; ++op)
          if (!opcode_info(narrow<std::uint8_t>(op)).valid) ops.push_back(narrow<std::uint8_t>(op));
        return ops;
      }();
      p.bth->opcode = kReserved[below(rng, kReserved.size())];
      break;
    }
  }
  return encode(p, options);
}

std::vector<std::uint8_t> mutate(Bytes frame, LinkType link, std::mt19937_64& rng) {
  return mutate(frame, link, kAllMutations[below(rng, kAllMutations.size())], rng);
}

bool write_pcap(const std::string& path, std::size_t n_frames, std::uint64_t seed,
                std::string* error) {
  auto fail = [&](std::string message) {
    if (error != nullptr) *error = std::move(message);
    return false;
  };
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  if (dead == nullptr) return fail("pcap_open_dead failed");
  pcap_dumper_t* dumper = pcap_dump_open(dead, path.c_str());
  if (dumper == nullptr) {
    std::string message = pcap_geterr(dead);
    pcap_close(dead);
    return fail(message);
  }
  TrafficGenerator gen(seed);
  std::mt19937_64 jitter(seed ^ 0x9E3779B97F4A7C15);
  std::uint64_t ns = 1'700'000'000'000'000'000;  // a fixed epoch keeps files reproducible
  for (std::size_t i = 0; i < n_frames;) {
    LinkType link;
    const std::vector<std::uint8_t> frame = gen.next(&link);
    if (link != LinkType::kEthernet) continue;
    // Serialisation at 100 Gb/s (frame, FCS, preamble and gap: 24 bytes) plus idle time.
    ns += (frame.size() + 24) * 8 / 100 + below(jitter, 200);
    pcap_pkthdr h{};
    h.ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    h.ts.tv_usec = static_cast<suseconds_t>(ns % 1'000'000'000 / 1000);
    h.caplen = h.len = static_cast<bpf_u_int32>(frame.size());
    pcap_dump(reinterpret_cast<u_char*>(dumper), &h, frame.data());
    ++i;
  }
  const bool flushed = pcap_dump_flush(dumper) == 0;
  pcap_dump_close(dumper);
  pcap_close(dead);
  return flushed ? true : fail("cannot write " + path);
}

}  // namespace roceconf
