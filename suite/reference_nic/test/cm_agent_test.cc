#include "suite/reference_nic/cm_agent.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <iostream>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dissector/mad/rdma_cm.h"
#include "suite/reference_nic/nic.h"

namespace roceconf::target {
namespace {

constexpr std::uint64_t kService = 0x1000000000000042;
constexpr std::uint64_t kPeerGuid = 0x0200C0FFEE000001;
constexpr std::uint64_t kNicGuid = 0x020000FFFE0000AA;
constexpr Ipv4Address kNicIp{192, 0, 2, 2};
constexpr Ipv4Address kPeerIp{192, 0, 2, 1};
constexpr MacAddress kNicMac{0x02, 0, 0, 0, 0, 0xAA};
constexpr MacAddress kPeerMac{0x02, 0, 0, 0, 0, 0xBB};
constexpr std::uint16_t kPeerSport = 0xC123;
constexpr std::uint64_t kMs = 1'000'000;

NicConfig nic_config(Ipv4Address ip, MacAddress mac, std::uint64_t guid, Quirks quirks = {}) {
  NicConfig c;
  c.ipv4 = ip;
  c.device.port.mac = mac;
  c.device.attr.node_guid = guid;
  c.quirks = quirks;
  return c;
}

// A MAD from the peer's QP1 to the NIC's, as a peer CM sends it (spec-facts §9.1).
std::vector<std::uint8_t> mad_frame(const CmMessage& m, std::uint64_t tid,
                                    std::uint8_t class_version = kCmClassVersion,
                                    std::uint8_t method = mad_method::kSend,
                                    std::uint16_t attr_id = 0) {
  Packet p;
  p.eth = Ethernet{kNicMac, kPeerMac, ethertype::kIpv4};
  Ipv4 ip;
  ip.src = kPeerIp;
  ip.dst = kNicIp;
  p.ipv4 = ip;
  p.udp = Udp{kPeerSport, Udp::kRocePort, 0, 0};
  Bth b;
  b.opcode = opcode::kUdSendOnly;
  b.dqpn = Device::kGsiQpn;
  p.bth = b;
  p.deth = Deth{kGsiQkey, 0, Device::kGsiQpn};
  MadHeader h;
  h.class_version = class_version;
  h.method = method;
  h.tid = tid;
  h.attr_id = attr_id;
  Mad mad{h, m, {}};
  if (attr_id) mad.cm.reset();  // a header-only MAD for an attribute of our choosing
  p.mad = mad;
  return encode(p);
}

// An RC SEND ONLY from the peer to our QP `dqpn` with `psn`.
std::vector<std::uint8_t> send_frame(std::uint32_t dqpn, std::uint32_t psn) {
  static const std::vector<std::uint8_t> payload(16, 0x5A);
  Packet data;
  data.eth = Ethernet{kNicMac, kPeerMac, ethertype::kIpv4};
  Ipv4 ip;
  ip.src = kPeerIp;
  ip.dst = kNicIp;
  data.ipv4 = ip;
  data.udp = Udp{0xC555, Udp::kRocePort, 0, 0};
  Bth b;
  b.opcode = opcode::kRcSendOnly;
  b.dqpn = dqpn;
  b.psn = psn;
  b.ackreq = true;
  data.bth = b;
  data.payload = payload;
  return encode(data);
}

CmReq make_req(std::uint32_t comm_id = 0x1111, std::uint32_t qpn = 0x55) {
  CmReq r;
  r.local_comm_id = comm_id;
  r.service_id = kService;
  r.local_ca_guid = kPeerGuid;
  r.local_qpn = qpn;
  r.starting_psn = 0x123456;  // where the target's requests start (its sq_psn)
  r.responder_resources = 4;
  r.initiator_depth = 2;
  r.path_mtu = 5;
  r.retry_count = 6;
  r.rnr_retry_count = 5;
  r.max_cm_retries = 3;
  r.local_cm_response_timeout = 10;  // 4.19 ms
  r.primary.local_gid = gid_from_ipv4(kPeerIp);
  r.primary.remote_gid = gid_from_ipv4(kNicIp);
  r.primary.local_ack_timeout = 17;
  return r;
}

class CmAgentTest : public ::testing::Test {
 protected:
  void SetUp() override { make(Quirks{}); }

  void make(Quirks quirks, PathMtu active_mtu = PathMtu::k1024) {
    NicConfig c = nic_config(kNicIp, kNicMac, kNicGuid, quirks);
    c.device.port.attr.active_mtu = active_mtu;
    frames.clear();
    nic = std::make_unique<Nic>(
        c, [this](std::span<const std::uint8_t> f) { frames.emplace_back(f.begin(), f.end()); });
    pd = *nic->device().alloc_pd();
    cq = (*nic->device().create_cq(64))->handle();
  }

  ListenerCallbacks listener() {
    ListenerCallbacks l;
    l.create_qp = [this](const CmReq& req) -> std::expected<std::uint32_t, std::uint16_t> {
      if (create_error) return std::unexpected(*create_error);
      const QpType t = req.transport_type == cm_transport::kUc ? QpType::kUc : QpType::kRc;
      auto qp = nic->device().create_qp(QpInit{t, pd, cq, cq, QpCap{16, 16, 1, 1, 0}, false});
      if (!qp) return std::unexpected(std::uint16_t{1});
      created.push_back((*qp)->qp_num());
      return (*qp)->qp_num();
    };
    l.private_data = [](std::uint32_t) { return std::vector<std::uint8_t>{'h', 'i'}; };
    l.established = [this](std::uint32_t q) { established.push_back(q); };
    l.disconnected = [this](std::uint32_t q) { disconnected.push_back(q); };
    return l;
  }

  void deliver(const std::vector<std::uint8_t>& frame, std::uint64_t now = 0) {
    nic->receive(frame, now);
  }
  void send_req(const CmReq& req, std::uint64_t tid = 0xABCD0001, std::uint64_t now = 0) {
    deliver(mad_frame(req, tid), now);
  }

  // The last frame the NIC sent, decoded (views into `frames`, valid until the next send).
  Packet last() {
    EXPECT_FALSE(frames.empty());
    return decode(frames.back());
  }
  template <typename M>
  M last_cm() {
    const Packet p = last();
    EXPECT_TRUE(p.mad && p.mad->cm);
    const M* m = p.mad && p.mad->cm ? std::get_if<M>(&*p.mad->cm) : nullptr;
    EXPECT_NE(m, nullptr) << "last message is not the expected CM message";
    return m ? *m : M{};
  }
  CmRej last_rej() { return last_cm<CmRej>(); }
  const Qp& qp(std::uint32_t n) { return *nic->device().qp(n); }
  void post_recv(std::uint32_t qp_num) {
    Mr* mr = *nic->device().reg_mr(MrInit{pd, 256, access::kLocalWrite, std::nullopt, {}});
    ASSERT_TRUE(
        nic->post_recv(qp_num, std::vector<RecvWr>{RecvWr{7, {Sge{mr->addr(), 256, mr->lkey()}}}}));
  }

  // Accepts make_req() and returns the REP's QPN.
  std::uint32_t accept_one(const CmReq& req = make_req(), std::uint64_t now = 0) {
    send_req(req, 0xABCD0001, now);
    return last_cm<CmRep>().local_qpn;
  }

  std::unique_ptr<Nic> nic;
  std::vector<std::vector<std::uint8_t>> frames;
  std::uint32_t pd = 0;
  std::uint32_t cq = 0;
  std::optional<std::uint16_t> create_error;
  std::vector<std::uint32_t> created;
  std::vector<std::uint32_t> established;
  std::vector<std::uint32_t> disconnected;
};

// ---- REJ reasons -----------------------------------------------------------------------------

TEST_F(CmAgentTest, UnknownServiceIdRejectedWithReason8) {
  send_req(make_req(0x1111));
  ASSERT_EQ(frames.size(), 1u);
  const Packet p = last();
  // Back to the sender's QP1 as a UD SEND ONLY with the GSI Q_Key and the request's TID.
  EXPECT_EQ(p.bth->opcode, opcode::kUdSendOnly);
  EXPECT_EQ(p.bth->dqpn, 1u);
  EXPECT_EQ(p.bth->pkey, 0xFFFF);
  EXPECT_EQ(p.deth->qkey, kGsiQkey);
  EXPECT_EQ(p.deth->srcqp, 1u);
  EXPECT_EQ(p.ipv4->dst, kPeerIp);
  EXPECT_EQ(p.ipv4->src, kNicIp);
  EXPECT_EQ(p.eth->dst, kPeerMac);
  EXPECT_EQ(p.udp->dport, Udp::kRocePort);
  EXPECT_TRUE(p.icrc->ok());
  EXPECT_EQ(p.mad->header.tid, 0xABCD0001u);
  EXPECT_EQ(p.mad->header.method, mad_method::kSend);
  EXPECT_EQ(p.mad->header.class_version, kCmClassVersion);
  const CmRej rej = last_rej();
  EXPECT_EQ(rej.reason, 8);
  EXPECT_EQ(rej.message_rejected, cm_msg_kind::kReq);
  EXPECT_EQ(rej.local_comm_id, 0u);
  EXPECT_EQ(rej.remote_comm_id, 0x1111u);
  EXPECT_EQ(nic->cm().counters().rej_sent, 1u);
}

TEST_F(CmAgentTest, QuirkRejWrongReasonSaysNoResources) {
  Quirks q;
  q.set(Quirk::kRejWrongReason);
  make(q);
  send_req(make_req());
  EXPECT_EQ(last_rej().reason, 3);
  // Other reasons are untouched by the defect.
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  CmReq req = make_req(0x2222);
  req.path_mtu = 0;
  send_req(req);
  EXPECT_EQ(last_rej().reason, 26);
}

TEST_F(CmAgentTest, UnsupportedTransportRejectedWithReason9) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  for (std::uint8_t t : {cm_transport::kRd, cm_transport::kExtended}) {
    CmReq req = make_req(0x3000 + t);
    req.transport_type = t;
    req.extended_transport_type = cm_transport::kExtendedXrc;
    send_req(req);
    const CmRej rej = last_rej();
    EXPECT_EQ(rej.reason, 9) << int{t};
    EXPECT_EQ(rej.remote_comm_id, 0x3000u + t);
  }
  EXPECT_TRUE(created.empty());
}

TEST_F(CmAgentTest, InvalidPathMtuRejectedWithReason26) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  for (std::uint8_t mtu : {0, 6, 7, 15}) {
    CmReq req = make_req(0x4000 + mtu);
    req.path_mtu = mtu;
    send_req(req);
    EXPECT_EQ(last_rej().reason, 26) << int{mtu};
  }
  EXPECT_TRUE(created.empty());
}

TEST_F(CmAgentTest, WrongClassVersionRejectedWithReason31) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  deliver(mad_frame(make_req(0x5555), 0x77, 3));
  const CmRej rej = last_rej();
  EXPECT_EQ(rej.reason, 31);
  EXPECT_EQ(rej.remote_comm_id, 0x5555u);
  EXPECT_EQ(last().mad->header.tid, 0x77u);
  EXPECT_TRUE(created.empty());
}

TEST_F(CmAgentTest, PrimaryGidNotOursRejectedWithReason12AndOurGid) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  CmReq req = make_req();
  req.primary.remote_gid = gid_from_ipv4({192, 0, 2, 99});
  send_req(req);
  const CmRej rej = last_rej();
  EXPECT_EQ(rej.reason, 12);
  ASSERT_EQ(rej.reject_info_length, 16);
  const Gid ours = gid_from_ipv4(kNicIp);
  EXPECT_TRUE(std::equal(ours.begin(), ours.end(), rej.ari.begin()));
}

TEST_F(CmAgentTest, ListenerWithoutQpRejectsWithItsReason) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  create_error = 1;
  send_req(make_req());
  EXPECT_EQ(last_rej().reason, 1);
  create_error = 3;
  send_req(make_req(0x9999));
  EXPECT_EQ(last_rej().reason, 3);
}

TEST_F(CmAgentTest, ListenRefusesASecondListenerAndNeedsCreateQp) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  EXPECT_EQ(nic->cm().listen(kService, listener()).error(),
            "listen: service ID 0x1000000000000042 has a listener");
  EXPECT_FALSE(nic->cm().listen(7, ListenerCallbacks{}));
}

// ---- accepting -------------------------------------------------------------------------------

TEST_F(CmAgentTest, RepCarriesNegotiatedFieldsAndQpIsInRtr) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  send_req(make_req(0x1111, 0x55));
  ASSERT_EQ(created.size(), 1u);
  const Packet p = last();
  EXPECT_EQ(p.mad->header.tid, 0xABCD0001u);
  const CmRep rep = last_cm<CmRep>();
  EXPECT_NE(rep.local_comm_id, 0u);
  EXPECT_EQ(rep.remote_comm_id, 0x1111u);
  EXPECT_EQ(rep.local_qpn, created[0]);
  EXPECT_EQ(rep.responder_resources, 2);  // the REQ's initiator depth
  EXPECT_EQ(rep.initiator_depth, 4);      // the REQ's responder resources
  EXPECT_EQ(rep.target_ack_delay, 15);
  EXPECT_EQ(rep.failover_accepted, 0);
  EXPECT_EQ(rep.rnr_retry_count, 7);
  EXPECT_EQ(rep.local_ca_guid, kNicGuid);
  EXPECT_EQ(rep.private_data[0], 'h');
  EXPECT_EQ(rep.private_data[1], 'i');

  const Qp& q = qp(created[0]);
  EXPECT_EQ(q.state(), QpState::kRtr);
  EXPECT_EQ(q.attr().path_mtu, PathMtu::k1024);  // min(REQ 4096, port 1024)
  EXPECT_EQ(q.attr().dest_qp_num, 0x55u);
  // IBA 12.7.36: the peer sends from the REP's Starting PSN.
  EXPECT_EQ(q.attr().rq_psn, rep.starting_psn);
  EXPECT_NE(rep.starting_psn, 0x123456u);
  EXPECT_EQ(q.attr().max_dest_rd_atomic, 2);
  EXPECT_EQ(q.attr().min_rnr_timer, 12);
  EXPECT_EQ(q.attr().qp_access_flags, access::kRemote);
  EXPECT_EQ(q.attr().ah_attr.dgid, gid_from_ipv4(kPeerIp));
  EXPECT_EQ(q.attr().ah_attr.dmac, kPeerMac);
  EXPECT_EQ(*q.pkey(), 0xFFFF);

  const auto info = nic->cm().connection(rep.local_comm_id);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->state, CmState::kRepSent);
  EXPECT_EQ(info->local_psn, rep.starting_psn);
  EXPECT_EQ(nic->cm().comm_id_of_qp(created[0]), rep.local_comm_id);
}

TEST_F(CmAgentTest, PathMtuIsTheSmallerOfRequestAndPort) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  CmReq req = make_req();
  req.path_mtu = 2;  // 512 < port 1024
  const std::uint32_t n = accept_one(req);
  EXPECT_EQ(qp(n).attr().path_mtu, PathMtu::k512);
}

TEST_F(CmAgentTest, StartingPsnsArePseudoRandomAndRepeatPerSeed) {
  std::vector<std::uint32_t> psns[2];
  for (int run = 0; run < 2; ++run) {
    make(Quirks{});
    ASSERT_TRUE(nic->cm().listen(kService, listener()));
    for (std::uint32_t i = 0; i < 4; ++i) {
      send_req(make_req(0x100 + i, 0x60 + i));
      psns[run].push_back(last_cm<CmRep>().starting_psn);
    }
  }
  EXPECT_EQ(psns[0], psns[1]);
  EXPECT_EQ(std::set<std::uint32_t>(psns[0].begin(), psns[0].end()).size(), 4u);
  CmAgentConfig other;
  other.seed = 12345;
  nic->cm().configure(other);
  send_req(make_req(0x200, 0x70));
  EXPECT_EQ(std::count(psns[0].begin(), psns[0].end(), last_cm<CmRep>().starting_psn), 0);
}

TEST_F(CmAgentTest, RtuMovesTheQpToRtsWithTheRequestsTimers) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  send_req(make_req());
  const CmRep rep = last_cm<CmRep>();
  CmRtu rtu;
  rtu.local_comm_id = 0x1111;
  rtu.remote_comm_id = rep.local_comm_id;
  deliver(mad_frame(rtu, 0xABCD0001));
  const Qp& q = qp(rep.local_qpn);
  EXPECT_EQ(q.state(), QpState::kRts);
  EXPECT_EQ(q.attr().sq_psn, 0x123456u);  // IBA 12.7.23: we send from the REQ's Starting PSN
  EXPECT_EQ(q.attr().rq_psn, rep.starting_psn);
  EXPECT_EQ(q.attr().timeout, 17);
  EXPECT_EQ(q.attr().retry_cnt, 6);
  EXPECT_EQ(q.attr().rnr_retry, 5);
  EXPECT_EQ(q.attr().max_rd_atomic, 4);
  EXPECT_EQ(established, std::vector<std::uint32_t>{rep.local_qpn});
  EXPECT_EQ(nic->cm().connection(rep.local_comm_id)->state, CmState::kEstablished);
  EXPECT_FALSE(nic->cm().next_deadline());  // no REP retransmission pending
  // A second RTU changes nothing and is counted.
  deliver(mad_frame(rtu, 0xABCD0001));
  EXPECT_EQ(established.size(), 1u);
  EXPECT_EQ(nic->cm().counters().rtu_duplicates, 1u);
  // An RTU naming another connection is ignored.
  rtu.local_comm_id = 0x9999;
  deliver(mad_frame(rtu, 1));
  EXPECT_EQ(nic->cm().counters().rtu_duplicates, 1u);
}

TEST_F(CmAgentTest, FirstDataInRtrEstablishesWithoutRtu) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  const std::uint32_t n = accept_one();
  post_recv(n);
  (void)nic->device().async_events();
  // The RTU is lost; the peer's first SEND, at the REP's Starting PSN, arrives while the QP is
  // in RTR.
  nic->receive(send_frame(n, last_cm<CmRep>().starting_psn), 1 * kMs);
  EXPECT_EQ(qp(n).state(), QpState::kRts);
  EXPECT_EQ(established, std::vector<std::uint32_t>{n});
  const auto events = nic->device().async_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0], (AsyncEvent{AsyncEventType::kCommEst, n}));
  EXPECT_EQ(nic->cm().connection(*nic->cm().comm_id_of_qp(n))->state, CmState::kEstablished);
  EXPECT_FALSE(nic->cm().next_deadline());  // no REP retransmission any more
  // The RTU arriving afterwards is a duplicate.
  CmRtu rtu;
  rtu.local_comm_id = 0x1111;
  rtu.remote_comm_id = *nic->cm().comm_id_of_qp(n);
  deliver(mad_frame(rtu, 0xABCD0001));
  EXPECT_EQ(nic->cm().counters().rtu_duplicates, 1u);
  EXPECT_EQ(established.size(), 1u);
}

TEST_F(CmAgentTest, RepRetransmittedThenRejectedWithTimeout) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  const std::uint64_t t0 = 5 * kMs;
  send_req(make_req(), 0xABCD0001, t0);
  const std::vector<std::uint8_t> first = frames.back();
  const CmRep rep = last_cm<CmRep>();
  const std::uint64_t timeout = cm_timeout_ns(10);  // the REQ's Local CM Response Timeout
  ASSERT_EQ(nic->cm().next_deadline(), t0 + timeout);
  nic->tick(t0 + timeout - 1);
  EXPECT_EQ(frames.size(), 1u);
  for (std::uint64_t i = 1; i <= 3; ++i) {  // the REQ's Max CM Retries
    nic->tick(t0 + i * timeout);
    ASSERT_EQ(frames.size(), 1 + i);
    const Packet p = last();
    EXPECT_EQ(p.mad->header.tid, 0xABCD0001u);
    EXPECT_TRUE(
        std::equal(first.begin() + 62, first.begin() + 62 + 256, frames.back().begin() + 62))
        << "the same REP, byte for byte";
  }
  EXPECT_EQ(nic->cm().counters().rep_retries, 3u);
  nic->tick(t0 + 4 * timeout);
  ASSERT_EQ(frames.size(), 5u);
  const CmRej rej = last_rej();
  EXPECT_EQ(rej.reason, 4);
  EXPECT_EQ(rej.message_rejected, cm_msg_kind::kOther);
  EXPECT_EQ(rej.local_comm_id, rep.local_comm_id);
  EXPECT_EQ(rej.remote_comm_id, 0x1111u);
  ASSERT_EQ(rej.reject_info_length, 8);
  EXPECT_EQ(be::load64(rej.ari.data()), kNicGuid);
  EXPECT_EQ(last().mad->header.tid, 0xABCD0001u);
  EXPECT_EQ(qp(rep.local_qpn).state(), QpState::kErr);
  EXPECT_EQ(disconnected, std::vector<std::uint32_t>{rep.local_qpn});
  EXPECT_EQ(nic->cm().connection(rep.local_comm_id)->state, CmState::kTimewait);
  EXPECT_EQ(nic->cm().counters().timeouts, 1u);
  // TIMEWAIT ends after the configured time; then the record is gone.
  nic->tick(t0 + 4 * timeout + nic->cm().config().timewait_ns);
  EXPECT_FALSE(nic->cm().connection(rep.local_comm_id));
  EXPECT_FALSE(nic->cm().next_deadline());
}

TEST_F(CmAgentTest, MraForTheRepExtendsTheWait) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  send_req(make_req());
  const CmRep rep = last_cm<CmRep>();
  CmMra mra;
  mra.local_comm_id = 0x1111;
  mra.remote_comm_id = rep.local_comm_id;
  mra.message_mraed = cm_msg_kind::kRep;
  mra.service_timeout = 20;
  deliver(mad_frame(mra, 0xABCD0001), 1 * kMs);
  EXPECT_EQ(nic->cm().connection(rep.local_comm_id)->state, CmState::kMraRepRcvd);
  const std::uint64_t extended = 1 * kMs + cm_timeout_ns(20) + cm_timeout_ns(18);
  EXPECT_EQ(nic->cm().next_deadline(), extended);
  nic->tick(cm_timeout_ns(10));  // the REP's own timeout: no retransmission now
  EXPECT_EQ(frames.size(), 1u);
  deliver(mad_frame(mra, 0xABCD0001), 2 * kMs);
  EXPECT_EQ(nic->cm().counters().mra_duplicates, 1u);
  nic->tick(extended);
  EXPECT_EQ(frames.size(), 2u);  // then the REP again
  EXPECT_EQ(last_cm<CmRep>().local_comm_id, rep.local_comm_id);
  // The RTU still completes the connection.
  CmRtu rtu;
  rtu.local_comm_id = 0x1111;
  rtu.remote_comm_id = rep.local_comm_id;
  deliver(mad_frame(rtu, 0xABCD0001), extended + 1);
  EXPECT_EQ(qp(rep.local_qpn).state(), QpState::kRts);
}

TEST_F(CmAgentTest, DuplicateReqGetsTheSameRepAndNoSecondQp) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  send_req(make_req());
  const std::vector<std::uint8_t> rep = frames.back();
  send_req(make_req());
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(created.size(), 1u);
  EXPECT_TRUE(std::equal(rep.begin() + 62, rep.begin() + 62 + 256, frames.back().begin() + 62));
  EXPECT_EQ(nic->cm().counters().req_duplicates, 1u);
  // Once established, a late duplicate is dropped.
  const CmRep r = last_cm<CmRep>();
  nic->cm().on_comm_est(r.local_qpn, 0);
  send_req(make_req());
  EXPECT_EQ(frames.size(), 2u);
  EXPECT_EQ(nic->cm().counters().req_duplicates, 2u);
}

TEST_F(CmAgentTest, DuplicateReqInTimewaitRejectedAsStale) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  send_req(make_req());
  const CmRep rep = last_cm<CmRep>();
  CmDreq dreq;
  dreq.local_comm_id = 0x1111;
  dreq.remote_comm_id = rep.local_comm_id;
  dreq.remote_qpn = rep.local_qpn;
  nic->cm().on_comm_est(rep.local_qpn, 0);
  deliver(mad_frame(dreq, 0x44));
  ASSERT_EQ(nic->cm().connection(rep.local_comm_id)->state, CmState::kTimewait);
  send_req(make_req());
  const CmRej rej = last_rej();
  EXPECT_EQ(rej.reason, 10);
  EXPECT_EQ(rej.remote_comm_id, 0x1111u);
  EXPECT_EQ(rej.message_rejected, cm_msg_kind::kReq);
  EXPECT_EQ(created.size(), 1u);
}

TEST_F(CmAgentTest, ReqFromAConnectedQpIsStaleAndTheOldConnectionReleased) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  send_req(make_req(0x1111, 0x55));
  const CmRep rep = last_cm<CmRep>();
  nic->cm().on_comm_est(rep.local_qpn, 0);
  // The peer's QP 0x55 asks again under a new communication ID.
  send_req(make_req(0x2222, 0x55));
  ASSERT_EQ(frames.size(), 3u);
  const Packet rejected = decode(frames[1]);
  const CmRej rej = std::get<CmRej>(*rejected.mad->cm);
  EXPECT_EQ(rej.reason, 10);
  EXPECT_EQ(rej.remote_comm_id, 0x2222u);
  EXPECT_EQ(rej.local_comm_id, 0u);
  const CmDreq dreq = last_cm<CmDreq>();
  EXPECT_EQ(dreq.local_comm_id, rep.local_comm_id);
  EXPECT_EQ(dreq.remote_comm_id, 0x1111u);
  EXPECT_EQ(dreq.remote_qpn, 0x55u);
  EXPECT_EQ(qp(rep.local_qpn).state(), QpState::kErr);
  EXPECT_EQ(nic->cm().connection(rep.local_comm_id)->state, CmState::kDreqSent);
  EXPECT_EQ(created.size(), 1u);
}

// ---- release ---------------------------------------------------------------------------------

TEST_F(CmAgentTest, DreqAnsweredWithDrepAndTheQpToError) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  send_req(make_req());
  const CmRep rep = last_cm<CmRep>();
  nic->cm().on_comm_est(rep.local_qpn, 0);
  CmDreq dreq;
  dreq.local_comm_id = 0x1111;
  dreq.remote_comm_id = rep.local_comm_id;
  dreq.remote_qpn = rep.local_qpn;
  deliver(mad_frame(dreq, 0x5150));
  const CmDrep drep = last_cm<CmDrep>();
  EXPECT_EQ(last().mad->header.tid, 0x5150u);
  EXPECT_EQ(drep.local_comm_id, rep.local_comm_id);
  EXPECT_EQ(drep.remote_comm_id, 0x1111u);
  EXPECT_EQ(qp(rep.local_qpn).state(), QpState::kErr);
  EXPECT_EQ(disconnected, std::vector<std::uint32_t>{rep.local_qpn});
  // The DREQ again (our DREP was lost): the DREP again, nothing else.
  deliver(mad_frame(dreq, 0x5151));
  EXPECT_EQ(last_cm<CmDrep>().local_comm_id, rep.local_comm_id);
  EXPECT_EQ(disconnected.size(), 1u);
  EXPECT_EQ(nic->cm().counters().dreq_duplicates, 1u);
}

TEST_F(CmAgentTest, DreqForAnUnknownConnectionStillGetsADrep) {
  CmDreq dreq;
  dreq.local_comm_id = 0xAAAA;
  dreq.remote_comm_id = 0xBBBB;
  dreq.remote_qpn = 0x99;
  deliver(mad_frame(dreq, 0x600D));
  const CmDrep drep = last_cm<CmDrep>();
  EXPECT_EQ(drep.local_comm_id, 0xBBBBu);
  EXPECT_EQ(drep.remote_comm_id, 0xAAAAu);
  EXPECT_EQ(last().mad->header.tid, 0x600Du);
}

TEST_F(CmAgentTest, RejForOurRepReleasesTheConnection) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  send_req(make_req());
  const CmRep rep = last_cm<CmRep>();
  CmRej rej;
  rej.local_comm_id = 0x1111;
  rej.remote_comm_id = rep.local_comm_id;
  rej.message_rejected = cm_msg_kind::kRep;
  rej.reason = 28;
  deliver(mad_frame(rej, 0xABCD0001));
  EXPECT_EQ(qp(rep.local_qpn).state(), QpState::kErr);
  EXPECT_EQ(disconnected, std::vector<std::uint32_t>{rep.local_qpn});
  EXPECT_EQ(nic->cm().counters().rej_received, 1u);
  EXPECT_EQ(frames.size(), 1u);  // no retransmission any more
  nic->tick(cm_timeout_ns(10));
  EXPECT_EQ(frames.size(), 1u);
}

// ---- SIDR and ClassPortInfo ------------------------------------------------------------------

TEST_F(CmAgentTest, SidrAnswersWithStatusOrUdQp) {
  CmSidrReq req;
  req.request_id = 0x51D;
  req.service_id = kService;
  deliver(mad_frame(req, 0x71));
  CmSidrRep rep = last_cm<CmSidrRep>();
  EXPECT_EQ(rep.request_id, 0x51Du);
  EXPECT_EQ(rep.sidr_status, sidr_status::kUnsupported);
  EXPECT_EQ(rep.service_id, kService);
  EXPECT_EQ(last().mad->header.tid, 0x71u);

  ListenerCallbacks l = listener();
  ASSERT_TRUE(nic->cm().listen(kService, l));
  deliver(mad_frame(req, 0x72));
  EXPECT_EQ(last_cm<CmSidrRep>().sidr_status, sidr_status::kUnsupported);  // not a UD service

  const std::uint32_t ud =
      (*nic->device().create_qp(QpInit{QpType::kUd, pd, cq, cq, {}, false}))->qp_num();
  l.sidr = [ud](const CmSidrReq&) -> std::expected<SidrAnswer, std::uint8_t> {
    return SidrAnswer{ud, 0x11223344, {'u', 'd'}};
  };
  ASSERT_TRUE(nic->cm().listen(kService + 1, l));
  req.service_id = kService + 1;
  deliver(mad_frame(req, 0x73));
  rep = last_cm<CmSidrRep>();
  EXPECT_EQ(rep.sidr_status, sidr_status::kSuccess);
  EXPECT_EQ(rep.qpn, ud);
  EXPECT_EQ(rep.qkey, 0x11223344u);
  EXPECT_EQ(rep.service_id, kService + 1);
  EXPECT_EQ(rep.private_data[1], 'd');

  deliver(mad_frame(req, 0x74, 1));
  EXPECT_EQ(last_cm<CmSidrRep>().sidr_status, sidr_status::kUnsupportedVersion);
}

TEST_F(CmAgentTest, ClassPortInfoGetAnswered) {
  deliver(mad_frame(ClassPortInfo{}, 0xC1A5, kCmClassVersion, mad_method::kGet));
  Packet p = last();
  EXPECT_EQ(p.mad->header.method, mad_method::kGetResp);
  EXPECT_EQ(p.mad->header.status, 0);
  EXPECT_EQ(p.mad->header.tid, 0xC1A5u);
  EXPECT_EQ(p.mad->header.attr_id, cm_attr::kClassPortInfo);
  const ClassPortInfo info = last_cm<ClassPortInfo>();
  EXPECT_EQ(info.base_version, 1);
  EXPECT_EQ(info.class_version, 2);
  EXPECT_EQ(info.resp_time_value, 20);

  // Set is not supported; Get of a protocol message is not either; an unknown version is bad.
  deliver(mad_frame(ClassPortInfo{}, 1, kCmClassVersion, mad_method::kSet));
  EXPECT_EQ(last().mad->header.status, 0x000C);
  deliver(mad_frame(CmReq{}, 2, kCmClassVersion, mad_method::kGet, cm_attr::kReq));
  EXPECT_EQ(last().mad->header.status, 0x000C);
  deliver(mad_frame(CmReq{}, 3, kCmClassVersion, mad_method::kGet, 0x7777));
  EXPECT_EQ(last().mad->header.status, 0x000C);
  EXPECT_EQ(last().mad->header.attr_id, 0x7777);
  deliver(mad_frame(ClassPortInfo{}, 4, 1, mad_method::kGet));
  EXPECT_EQ(last().mad->header.status, 0x0004);
  // Responses and unknown Sends are not answered.
  const std::size_t n = frames.size();
  deliver(mad_frame(ClassPortInfo{}, 5, kCmClassVersion, mad_method::kGetResp));
  deliver(mad_frame(CmReq{}, 6, kCmClassVersion, mad_method::kSend, 0x7777));
  EXPECT_EQ(frames.size(), n);
}

// ---- quirks ----------------------------------------------------------------------------------

// A LAP is ignored on RoCE (no alternate paths); the lap-lid-checked defect answers one with
// nonzero LIDs with APR status 7.
TEST_F(CmAgentTest, LapIgnoredUnlessTheQuirkValidatesItsLids) {
  for (const bool quirk : {false, true}) {
    Quirks q;
    if (quirk) q.set(Quirk::kLapLidChecked);
    make(q);
    ASSERT_TRUE(nic->cm().listen(kService, listener()));
    send_req(make_req());
    const CmRep rep = last_cm<CmRep>();
    nic->cm().on_comm_est(rep.local_qpn, 0);
    const std::size_t sent = frames.size();
    CmLap lap;
    lap.local_comm_id = 0x1111;
    lap.remote_comm_id = rep.local_comm_id;
    lap.remote_qpn = rep.local_qpn;
    lap.alternate.local_lid = 0x1234;
    lap.alternate.remote_lid = 0x5678;
    deliver(mad_frame(lap, 0x7000));
    if (!quirk) {
      EXPECT_EQ(frames.size(), sent) << "a LAP is ignored";
      continue;
    }
    const CmApr apr = last_cm<CmApr>();
    EXPECT_EQ(apr.ap_status, 7);
    EXPECT_EQ(apr.remote_comm_id, 0x1111u);
    EXPECT_EQ(last().mad->header.tid, 0x7000u);
    EXPECT_EQ(qp(rep.local_qpn).state(), QpState::kRts) << "the connection stays";
  }
}

TEST_F(CmAgentTest, QuirkTidMismatchRepliesWithTheNextTid) {
  Quirks q;
  q.set(Quirk::kTidMismatch);
  make(q);
  send_req(make_req(), 0x1000);
  EXPECT_EQ(last().mad->header.tid, 0x1001u);  // REJ
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  send_req(make_req(0x2222), 0x2000);
  EXPECT_EQ(last().mad->header.tid, 0x2001u);  // REP
  CmDreq dreq;
  dreq.local_comm_id = 1;
  dreq.remote_comm_id = 2;
  deliver(mad_frame(dreq, 0x3000));
  EXPECT_EQ(last().mad->header.tid, 0x3001u);  // DREP
  deliver(mad_frame(ClassPortInfo{}, 0x4000, kCmClassVersion, mad_method::kGet));
  EXPECT_EQ(last().mad->header.tid, 0x4001u);  // GetResp
}

TEST_F(CmAgentTest, QuirkRtuRequiredKeepsTheQpFromDataUntilTheRtu) {
  Quirks q;
  q.set(Quirk::kRtuRequired);
  make(q);
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  send_req(make_req());
  const CmRep rep = last_cm<CmRep>();  // the REP still goes out
  EXPECT_EQ(qp(rep.local_qpn).state(), QpState::kInit);
  // Data before the RTU: dropped by the receive pipeline, and it establishes nothing.
  post_recv(rep.local_qpn);
  (void)nic->device().async_events();
  const std::size_t sent = frames.size();
  nic->receive(send_frame(rep.local_qpn, rep.starting_psn), 0);
  nic->cm().on_comm_est(rep.local_qpn, 0);
  EXPECT_EQ(qp(rep.local_qpn).state(), QpState::kInit);
  EXPECT_TRUE(nic->device().async_events().empty());
  EXPECT_TRUE(established.empty());
  EXPECT_EQ(frames.size(), sent);  // not even an ACK
  CmRtu rtu;
  rtu.local_comm_id = 0x1111;
  rtu.remote_comm_id = rep.local_comm_id;
  deliver(mad_frame(rtu, 0xABCD0001));
  EXPECT_EQ(qp(rep.local_qpn).state(), QpState::kRts);
  EXPECT_EQ(qp(rep.local_qpn).attr().dest_qp_num, 0x55u);
  EXPECT_EQ(qp(rep.local_qpn).attr().rq_psn, rep.starting_psn);
  EXPECT_EQ(qp(rep.local_qpn).attr().sq_psn, 0x123456u);
  EXPECT_EQ(established, std::vector<std::uint32_t>{rep.local_qpn});
}

TEST_F(CmAgentTest, QuirkQpnReuseAnswersConcurrentReqsWithOneQpn) {
  Quirks q;
  q.set(Quirk::kQpnReuse);
  make(q);
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  send_req(make_req(0x1111, 0x55));
  const CmRep first = last_cm<CmRep>();
  send_req(make_req(0x2222, 0x66));
  const CmRep second = last_cm<CmRep>();
  EXPECT_EQ(second.local_qpn, first.local_qpn);
  EXPECT_NE(second.local_comm_id, first.local_comm_id);
  EXPECT_EQ(created.size(), 1u);
  // Once nothing waits for an RTU, a new REQ gets a new QP again.
  nic->cm().on_comm_est(first.local_qpn, 0);
  send_req(make_req(0x3333, 0x77));
  EXPECT_NE(last_cm<CmRep>().local_qpn, first.local_qpn);
  EXPECT_EQ(created.size(), 2u);
}

TEST_F(CmAgentTest, WithoutQpnReuseConcurrentReqsGetDistinctQps) {
  ASSERT_TRUE(nic->cm().listen(kService, listener()));
  send_req(make_req(0x1111, 0x55));
  const CmRep first = last_cm<CmRep>();
  send_req(make_req(0x2222, 0x66));
  EXPECT_NE(last_cm<CmRep>().local_qpn, first.local_qpn);
  EXPECT_EQ(created.size(), 2u);
}

// ---- two NICs --------------------------------------------------------------------------------

// Two reference NICs joined by a queue: frames are delivered in order, one at a time, as a wire
// would (never from inside the sender's call).
class CmTwoNicTest : public ::testing::Test {
 protected:
  void SetUp() override { make({}, {}); }

  void make(Quirks qa, Quirks qb) {
    a = std::make_unique<Nic>(nic_config(kPeerIp, kPeerMac, kPeerGuid, qa),
                              [this](std::span<const std::uint8_t> f) {
                                if (!drop) queue.emplace_back(1, std::vector(f.begin(), f.end()));
                              });
    b = std::make_unique<Nic>(nic_config(kNicIp, kNicMac, kNicGuid, qb),
                              [this](std::span<const std::uint8_t> f) {
                                if (!drop) queue.emplace_back(0, std::vector(f.begin(), f.end()));
                              });
    for (Nic* n : {a.get(), b.get()}) {
      pds.push_back(*n->device().alloc_pd());
      cqs.push_back((*n->device().create_cq(64))->handle());
    }
  }

  std::uint32_t new_qp(int side, QpType type = QpType::kRc) {
    Nic& n = side == 0 ? *a : *b;
    return (*n.device().create_qp(
                QpInit{type, pds[side], cqs[side], cqs[side], QpCap{8, 8, 1, 1, 0}, false}))
        ->qp_num();
  }

  void pump(std::uint64_t now = 0) {
    while (!queue.empty()) {
      auto [to, frame] = std::move(queue.front());
      queue.pop_front();
      delivered++;
      log.emplace_back(to, frame);
      (to == 0 ? a : b)->receive(frame, now);
    }
  }

  ListenerCallbacks listener_on_b() {
    ListenerCallbacks l;
    l.create_qp = [this](const CmReq& req) -> std::expected<std::uint32_t, std::uint16_t> {
      return new_qp(1, req.transport_type == cm_transport::kUc ? QpType::kUc : QpType::kRc);
    };
    l.established = [this](std::uint32_t q) { b_established.push_back(q); };
    l.disconnected = [this](std::uint32_t q) { b_disconnected.push_back(q); };
    return l;
  }

  ConnectParams params(std::uint32_t qp_num, std::uint64_t service = kService) {
    ConnectParams p;
    p.service_id = service;
    p.peer.dgid = gid_from_ipv4(kNicIp);
    p.peer.dmac = kNicMac;
    p.qp_num = qp_num;
    p.path_mtu = PathMtu::k2048;
    p.starting_psn = 0x00ABCD + qp_num;
    p.responder_resources = 3;
    p.initiator_depth = 5;
    return p;
  }

  ConnectCallbacks callbacks() {
    ConnectCallbacks c;
    c.established = [this](std::uint32_t q, const CmRep& rep) {
      a_established.emplace_back(q, rep.local_qpn);
    };
    c.rejected = [this](std::uint16_t r) { rejected.push_back(r); };
    c.timed_out = [this] { timed_out++; };
    c.disconnected = [this](std::uint32_t q) { a_disconnected.push_back(q); };
    return c;
  }

  std::unique_ptr<Nic> a;
  std::unique_ptr<Nic> b;
  std::vector<std::uint32_t> pds;
  std::vector<std::uint32_t> cqs;
  std::deque<std::pair<int, std::vector<std::uint8_t>>> queue;
  bool drop = false;
  std::size_t delivered = 0;
  std::vector<std::pair<int, std::vector<std::uint8_t>>> log;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> a_established;  // ours, theirs
  std::vector<std::uint32_t> b_established;
  std::vector<std::uint32_t> b_disconnected;
  std::vector<std::uint32_t> a_disconnected;
  std::vector<std::uint16_t> rejected;
  int timed_out = 0;
};

TEST_F(CmTwoNicTest, ActiveConnectReachesRtsOnBothSides) {
  ASSERT_TRUE(b->cm().listen(kService, listener_on_b()));
  const std::uint32_t qa = new_qp(0);
  const auto id = a->cm().connect(params(qa), callbacks());
  ASSERT_TRUE(id) << id.error();
  EXPECT_EQ(a->device().qp(qa)->state(), QpState::kInit);
  pump();
  EXPECT_EQ(delivered, 3u);  // REQ, REP, RTU
  ASSERT_EQ(a_established.size(), 1u);
  ASSERT_EQ(b_established.size(), 1u);
  const std::uint32_t qb = b_established[0];
  EXPECT_EQ(a_established[0], std::make_pair(qa, qb));
  const Qp& pa = *a->device().qp(qa);
  const Qp& pb = *b->device().qp(qb);
  EXPECT_EQ(pa.state(), QpState::kRts);
  EXPECT_EQ(pb.state(), QpState::kRts);
  EXPECT_EQ(pa.attr().dest_qp_num, qb);
  EXPECT_EQ(pb.attr().dest_qp_num, qa);
  EXPECT_EQ(pa.attr().sq_psn, pb.attr().rq_psn);
  EXPECT_EQ(pb.attr().sq_psn, pa.attr().rq_psn);
  // Each side sends from the Starting PSN the other announced: B from the REQ's, A from the
  // REP's (IBA 12.7.23, 12.7.36).
  EXPECT_EQ(pb.attr().sq_psn, 0x00ABCDu + qa);
  EXPECT_EQ(pa.attr().sq_psn, b->cm().connection(*b->cm().comm_id_of_qp(qb))->local_psn);
  EXPECT_EQ(pa.attr().path_mtu, PathMtu::k2048);
  EXPECT_EQ(pb.attr().path_mtu, PathMtu::k2048);
  // Resources: A answers 3 READs and issues 5; B the other way round.
  EXPECT_EQ(pa.attr().max_dest_rd_atomic, 3);
  EXPECT_EQ(pb.attr().max_rd_atomic, 3);
  EXPECT_EQ(pa.attr().max_rd_atomic, 5);
  EXPECT_EQ(pb.attr().max_dest_rd_atomic, 5);
  EXPECT_EQ(pa.attr().timeout, cm_ack_timeout(15, 18));
  EXPECT_EQ(pb.attr().timeout, 19);
  EXPECT_EQ(pa.attr().ah_attr.dgid, gid_from_ipv4(kNicIp));
  EXPECT_EQ(pb.attr().ah_attr.dgid, gid_from_ipv4(kPeerIp));
  EXPECT_EQ(pb.attr().ah_attr.dmac, kPeerMac);
  const auto ia = a->cm().connection(*id);
  const auto ib = b->cm().connection(*b->cm().comm_id_of_qp(qb));
  EXPECT_EQ(ia->state, CmState::kEstablished);
  EXPECT_EQ(ib->state, CmState::kEstablished);
  EXPECT_EQ(ia->remote_comm_id, ib->local_comm_id);
  EXPECT_EQ(ib->remote_comm_id, ia->local_comm_id);
  EXPECT_FALSE(a->next_deadline());
  EXPECT_FALSE(b->next_deadline());

  // Release from A: DREQ, DREP, both QPs in ERR, both sides told.
  ASSERT_TRUE(a->cm().disconnect(*id));
  EXPECT_EQ(pa.state(), QpState::kErr);
  pump(1 * kMs);
  EXPECT_EQ(pb.state(), QpState::kErr);
  EXPECT_EQ(b_disconnected, std::vector<std::uint32_t>{qb});
  EXPECT_EQ(a_disconnected, std::vector<std::uint32_t>{qa});
  EXPECT_EQ(a->cm().connection(*id)->state, CmState::kTimewait);
  EXPECT_FALSE(a->cm().disconnect(*id));
}

TEST_F(CmTwoNicTest, ReqCarriesTheConnectParameters) {
  const std::uint32_t qa = new_qp(0);
  drop = true;
  const auto id = a->cm().connect(params(qa), callbacks());
  drop = false;
  ASSERT_TRUE(id);
  a->tick(*a->next_deadline());  // the first retry, captured
  ASSERT_EQ(queue.size(), 1u);
  const Packet p = decode(queue.front().second);
  EXPECT_EQ(p.ipv4->dst, kNicIp);
  EXPECT_EQ(p.eth->dst, kNicMac);
  EXPECT_EQ(p.bth->dqpn, 1u);
  EXPECT_EQ(p.deth->qkey, kGsiQkey);
  const CmReq req = std::get<CmReq>(*p.mad->cm);
  EXPECT_EQ(req.local_comm_id, *id);
  EXPECT_EQ(req.service_id, kService);
  EXPECT_EQ(req.local_ca_guid, kPeerGuid);
  EXPECT_EQ(req.local_qpn, qa);
  EXPECT_EQ(req.starting_psn, 0x00ABCDu + qa);
  EXPECT_EQ(req.responder_resources, 3);
  EXPECT_EQ(req.initiator_depth, 5);
  EXPECT_EQ(req.transport_type, cm_transport::kRc);
  EXPECT_EQ(req.path_mtu, 4);
  EXPECT_EQ(req.pkey, 0xFFFF);
  EXPECT_EQ(req.retry_count, 7);
  EXPECT_EQ(req.rnr_retry_count, 7);
  EXPECT_EQ(req.max_cm_retries, 15);
  EXPECT_EQ(req.remote_cm_response_timeout, 20);
  EXPECT_EQ(req.local_cm_response_timeout, 20);
  EXPECT_EQ(req.primary.local_lid, 0xFFFF);
  EXPECT_EQ(req.primary.remote_lid, 0xFFFF);
  EXPECT_EQ(req.primary.local_gid, gid_from_ipv4(kPeerIp));
  EXPECT_EQ(req.primary.remote_gid, gid_from_ipv4(kNicIp));
  EXPECT_EQ(req.primary.hop_limit, 64);
  EXPECT_EQ(req.primary.local_ack_timeout, 19);
  EXPECT_FALSE(req.primary.subnet_local);
  EXPECT_EQ(req.alternate.local_lid, 0);
  EXPECT_FALSE(is_rdma_cm_service_id(req.service_id));
  // The transaction ID is the same on every retry.
  a->tick(*a->next_deadline());
  ASSERT_EQ(queue.size(), 2u);
  EXPECT_EQ(decode(queue.back().second).mad->header.tid, p.mad->header.tid);
  EXPECT_EQ(a->cm().counters().req_retries, 2u);
}

TEST_F(CmTwoNicTest, UnansweredDreqRetriedThenReleased) {
  CmAgentConfig cfg;
  cfg.max_cm_retries = 2;
  a->cm().configure(cfg);
  ASSERT_TRUE(b->cm().listen(kService, listener_on_b()));
  const std::uint32_t qa = new_qp(0);
  const auto id = a->cm().connect(params(qa), callbacks());
  ASSERT_TRUE(id);
  pump();
  ASSERT_EQ(a_established.size(), 1u);
  drop = true;
  ASSERT_TRUE(a->cm().disconnect(*id));
  EXPECT_EQ(a->cm().connection(*id)->state, CmState::kDreqSent);
  const std::uint64_t timeout = 2 * cm_timeout_ns(18) + cm_timeout_ns(20);
  a->tick(timeout);
  a->tick(2 * timeout);
  EXPECT_EQ(a->cm().counters().dreq_retries, 2u);
  EXPECT_TRUE(a_disconnected.empty());
  a->tick(3 * timeout);
  EXPECT_EQ(a_disconnected, std::vector<std::uint32_t>{qa});
  EXPECT_EQ(a->cm().counters().timeouts, 1u);
  EXPECT_EQ(a->cm().connection(*id)->state, CmState::kTimewait);
  EXPECT_FALSE(a->cm().connection(0x12345678));
  EXPECT_FALSE(a->cm().comm_id_of_qp(0x999));
}

TEST_F(CmTwoNicTest, RepeatedRepIsAnsweredWithTheRtuAgain) {
  ASSERT_TRUE(b->cm().listen(kService, listener_on_b()));
  const std::uint32_t qa = new_qp(0);
  ASSERT_TRUE(a->cm().connect(params(qa), callbacks()));
  pump();
  ASSERT_EQ(log.size(), 3u);
  ASSERT_EQ(log[1].first, 0);  // the REP, to A
  // The REP again, as B sends it when our RTU is lost: A answers with the RTU again.
  a->receive(log[1].second, 2 * kMs);
  EXPECT_EQ(a->cm().counters().rep_duplicates, 1u);
  ASSERT_EQ(queue.size(), 1u);
  const Packet p = decode(queue.front().second);
  EXPECT_TRUE(std::holds_alternative<CmRtu>(*p.mad->cm));
  pump(2 * kMs);
  EXPECT_EQ(b->cm().counters().rtu_duplicates, 1u);
  EXPECT_EQ(a_established.size(), 1u);
}

TEST_F(CmTwoNicTest, UnansweredReqRetriedThenTimedOut) {
  CmAgentConfig cfg;
  cfg.max_cm_retries = 2;
  cfg.cm_response_timeout = 8;
  cfg.packet_lifetime = 4;
  a->cm().configure(cfg);
  drop = true;
  const std::uint32_t qa = new_qp(0);
  ASSERT_TRUE(a->cm().connect(params(qa), callbacks()));
  const std::uint64_t timeout = 2 * cm_timeout_ns(4) + cm_timeout_ns(8);
  ASSERT_EQ(a->next_deadline(), timeout);
  a->tick(timeout);
  a->tick(2 * timeout);
  EXPECT_EQ(a->cm().counters().req_retries, 2u);
  EXPECT_EQ(timed_out, 0);
  drop = false;
  a->tick(3 * timeout);
  EXPECT_EQ(timed_out, 1);
  EXPECT_EQ(a->device().qp(qa)->state(), QpState::kErr);
  ASSERT_EQ(queue.size(), 1u);  // REJ Timeout so the peer can forget the REQ
  const Packet p = decode(queue.front().second);
  const CmRej rej = std::get<CmRej>(*p.mad->cm);
  EXPECT_EQ(rej.reason, 4);
  EXPECT_EQ(rej.remote_comm_id, 0u);
  EXPECT_EQ(be::load64(rej.ari.data()), kPeerGuid);
}

TEST_F(CmTwoNicTest, RejectedConnectReportsTheReason) {
  const std::uint32_t qa = new_qp(0);
  ASSERT_TRUE(a->cm().connect(params(qa), callbacks()));
  pump();
  EXPECT_EQ(rejected, std::vector<std::uint16_t>{8});
  EXPECT_EQ(a->device().qp(qa)->state(), QpState::kErr);
  EXPECT_EQ(a->cm().counters().rej_received, 1u);
  EXPECT_EQ(a->next_deadline(), a->cm().config().timewait_ns);  // only TIMEWAIT is left
}

TEST_F(CmTwoNicTest, MraForTheReqDelaysTheRetry) {
  const std::uint32_t qa = new_qp(0);
  drop = true;
  const auto id = a->cm().connect(params(qa), callbacks());
  ASSERT_TRUE(id);
  CmMra mra;
  mra.local_comm_id = 0x7777;
  mra.remote_comm_id = *id;
  mra.message_mraed = cm_msg_kind::kReq;
  mra.service_timeout = 24;
  // From B's address to A's, as B's CM would send it.
  const std::vector<std::uint8_t> frame = mad_frame(mra, 1);
  Packet p = decode(frame);
  std::swap(p.eth->src, p.eth->dst);
  std::swap(p.ipv4->src, p.ipv4->dst);
  a->receive(encode(p), 1 * kMs);
  EXPECT_EQ(a->cm().connection(*id)->state, CmState::kMraReqRcvd);
  EXPECT_EQ(a->next_deadline(), 1 * kMs + cm_timeout_ns(24) + cm_timeout_ns(18));
}

TEST_F(CmTwoNicTest, RdmaCmServiceIdCarriesTheHeader) {
  const std::uint64_t sid = rdma_cm_service_id(rdma_cm_ps::kTcp, 7471);
  std::vector<std::uint8_t> seen;
  ListenerCallbacks l = listener_on_b();
  l.create_qp = [this, &seen](const CmReq& req) -> std::expected<std::uint32_t, std::uint16_t> {
    seen.assign(req.private_data.begin(), req.private_data.end());
    return new_qp(1);
  };
  ASSERT_TRUE(b->cm().listen(sid, l));
  ConnectParams p = params(new_qp(0), sid);
  p.private_data = {1, 2, 3};
  ASSERT_TRUE(a->cm().connect(p, callbacks()));
  pump();
  ASSERT_EQ(b_established.size(), 1u);
  const auto h = decode_rdma_cm_header(seen);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->ip_version, 4);
  EXPECT_EQ(h->src_ip, rdma_cm_ipv4(0xC0000201));
  EXPECT_EQ(h->dst_ip, rdma_cm_ipv4(0xC0000202));
  EXPECT_GE(h->src_port, 0xC000);
  const Bytes consumer = rdma_cm_consumer_data(seen);
  EXPECT_EQ(consumer[0], 1);
  EXPECT_EQ(consumer[2], 3);
  p = params(new_qp(0), sid);
  p.private_data.assign(57, 0);
  EXPECT_EQ(a->cm().connect(p, callbacks()).error(),
            "connect: 57 bytes of private data; a REQ after the rdma_cm header holds 56");
}

TEST_F(CmTwoNicTest, ConnectChecksItsQp) {
  EXPECT_EQ(a->cm().connect(params(0x999), callbacks()).error(), "connect: no QP 0x999");
  const std::uint32_t ud = new_qp(0, QpType::kUd);
  EXPECT_EQ(a->cm().connect(params(ud), callbacks()).error(),
            fmt::format("connect: QP {:#x} is UD; the CM connects RC and UC QPs", ud));
  ConnectParams p = params(new_qp(0));
  p.pkey = 0x1234;
  EXPECT_EQ(a->cm().connect(p, callbacks()).error(),
            "connect: P_Key 0x1234 is not in the P_Key table");
}

TEST_F(CmTwoNicTest, UcConnectionNeedsNoReadResources) {
  ASSERT_TRUE(b->cm().listen(kService, listener_on_b()));
  const std::uint32_t qa = new_qp(0, QpType::kUc);
  ASSERT_TRUE(a->cm().connect(params(qa), callbacks()));
  pump();
  ASSERT_EQ(b_established.size(), 1u);
  EXPECT_EQ(a->device().qp(qa)->state(), QpState::kRts);
  EXPECT_EQ(b->device().qp(b_established[0])->qp_type(), QpType::kUc);
  EXPECT_EQ(b->device().qp(b_established[0])->attr().qp_access_flags, access::kRemoteWrite);
}

TEST_F(CmTwoNicTest, ThousandConcurrentSetupsAllSucceedWithDistinctQpns) {
  ASSERT_TRUE(b->cm().listen(kService, listener_on_b()));
  constexpr int kCount = 1000;
  std::vector<std::uint32_t> qps;
  for (int i = 0; i < kCount; ++i) qps.push_back(new_qp(0));
  const auto start = std::chrono::steady_clock::now();
  for (const std::uint32_t q : qps) ASSERT_TRUE(a->cm().connect(params(q), callbacks()));
  pump();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(a_established.size(), std::size_t{kCount});
  ASSERT_EQ(b_established.size(), std::size_t{kCount});
  std::set<std::uint32_t> theirs;
  for (const auto& [ours, peer] : a_established) {
    theirs.insert(peer);
    EXPECT_EQ(a->device().qp(ours)->state(), QpState::kRts);
    EXPECT_EQ(b->device().qp(peer)->attr().dest_qp_num, ours);
  }
  EXPECT_EQ(theirs.size(), std::size_t{kCount});
  const double rate = kCount / seconds;
  RecordProperty("setups_per_second", static_cast<int>(rate));
  std::cout << fmt::format(
      "[ setups   ] {} concurrent CM connection set-ups in {:.1f} ms: "
      "{:.0f} set-ups/s\n",
      kCount, seconds * 1e3, rate);
}

}  // namespace
}  // namespace roceconf::target
