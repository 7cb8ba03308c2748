// The reference NIC's congestion management (congestion.h): CNPs for CE-marked requests (fields,
// pacing per QP, none for packets not CE or dropped), the rate limiter a CNP cuts and quiet time
// restores, and the cc defects.
#include "suite/reference_nic/congestion.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "dissector/analysis/psn.h"
#include "dissector/names.h"
#include "dissector/packet.h"
#include "suite/reference_nic/nic.h"
#include "suite/reference_nic/responder.h"

namespace roceconf::target {
namespace {

constexpr std::uint32_t kPeerQpn = 0x123;
constexpr std::uint32_t kPeerQpn2 = 0x456;
constexpr std::uint32_t kStartPsn = 5000;
constexpr std::uint64_t kUs = 1000;
constexpr Ipv4Address kPeerIp{192, 0, 2, 1};
constexpr Ipv4Address kNicIp{192, 0, 2, 2};

Quirks with(Quirk q) {
  Quirks s;
  s.set(q);
  return s;
}

struct Frame {
  std::uint64_t time = 0;
  std::vector<std::uint8_t> bytes;
};

class CongestionTest : public ::testing::Test {
 protected:
  void SetUp() override { make_nic({}); }

  void make_nic(Quirks quirks, std::uint32_t line_rate_mbps = 10'000) {
    frames_.clear();
    cursor_ = 0;
    NicConfig config;
    config.quirks = quirks;
    config.congestion.enabled = true;
    config.congestion.line_rate_mbps = line_rate_mbps;
    nic_ = std::make_unique<Nic>(config, [this](std::span<const std::uint8_t> frame) {
      frames_.push_back({now_, {frame.begin(), frame.end()}});
    });
    Device& d = nic_->device();
    pd_ = *d.alloc_pd();
    cq_ = (*d.create_cq(4096))->handle();
    MrInit init;
    init.pd = pd_;
    init.length = 1 << 20;
    init.access = access::kAll;
    mr_ = *d.reg_mr(init);
  }

  Qp& rc(std::uint32_t peer_qpn) {
    QpInit init;
    init.qp_type = QpType::kRc;
    init.pd = pd_;
    init.send_cq = cq_;
    init.recv_cq = cq_;
    init.cap = QpCap{.max_send_wr = 64,
                     .max_recv_wr = 64,
                     .max_send_sge = 1,
                     .max_recv_sge = 1,
                     .max_inline_data = 0};
    init.sq_sig_all = true;
    Qp& qp = **nic_->device().create_qp(init);
    using namespace qp_attr;
    QpAttr a;
    a.qp_state = QpState::kInit;
    a.qp_access_flags = access::kRemote;
    EXPECT_TRUE(nic_->modify_qp(qp.qp_num(), a, kState | kPkeyIndex | kPort | kAccessFlags));
    a.qp_state = QpState::kRtr;
    a.ah_attr.dgid = gid_from_ipv4(kPeerIp);
    a.ah_attr.dmac = {0x02, 0, 0, 0, 0, 0x09};
    a.path_mtu = PathMtu::k1024;
    a.dest_qp_num = peer_qpn;
    a.rq_psn = kStartPsn;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = 1;
    auto rtr = nic_->modify_qp(
        qp.qp_num(), a,
        kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer);
    EXPECT_TRUE(rtr) << rtr.error().to_string();
    a.qp_state = QpState::kRts;
    a.sq_psn = 100;
    a.timeout = 0;  // no retransmission while a test lets time run
    a.retry_cnt = 3;
    a.rnr_retry = 3;
    a.max_rd_atomic = 4;
    EXPECT_TRUE(nic_->modify_qp(
        qp.qp_num(), a, kState | kSqPsn | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic));
    std::vector<RecvWr> recvs;
    for (int i = 0; i < 32; ++i)
      recvs.push_back(RecvWr{.wr_id = 1, .sg_list = {Sge{mr_->addr(), 4096, mr_->lkey()}}});
    EXPECT_TRUE(nic_->post_recv(qp.qp_num(), recvs));
    return qp;
  }

  // A request from the peer to `qp`.
  Packet request(const Qp& qp, std::uint32_t psn_offset, std::uint8_t ecn) const {
    Packet r;
    r.eth = Ethernet{nic_->device().port().mac, {0x02, 0, 0, 0, 0, 0x09}, ethertype::kIpv4};
    Ipv4 ip;
    ip.src = kPeerIp;
    ip.dst = kNicIp;
    ip.ecn = ecn;
    r.ipv4 = ip;
    r.udp = Udp{0xC123, Udp::kRocePort, 0, 0};
    Bth b;
    b.opcode = opcode::kRcSendOnly;
    b.dqpn = qp.qp_num();
    b.psn = psn::add(kStartPsn, psn_offset);
    b.ackreq = true;
    r.bth = b;
    r.payload = payload_;
    return r;
  }
  void receive(const Packet& p) { nic_->receive(encode(p), now_); }

  // A CNP from the peer to QP number `dqpn`.
  Packet cnp(std::uint32_t dqpn) const {
    Packet r = request(*nic_->device().qp(nic_->device().qp_nums().front()), 0, 0);
    r.bth->opcode = opcode::kCnp;
    r.bth->becn = true;
    r.bth->ackreq = false;
    r.bth->psn = 0;
    r.bth->dqpn = dqpn;
    r.payload = {};
    return r;
  }

  std::vector<Packet> sent() {
    std::vector<Packet> out;
    for (; cursor_ < frames_.size(); ++cursor_) {
      out.push_back(decode(frames_[cursor_].bytes));
      EXPECT_TRUE(out.back().icrc && out.back().icrc->ok());
    }
    return out;
  }
  static std::vector<Packet> cnps(const std::vector<Packet>& ps) {
    std::vector<Packet> out;
    for (const Packet& p : ps)
      if (p.bth->opcode == opcode::kCnp) out.push_back(p);
    return out;
  }

  // Runs the NIC's timers until nothing is pending or `until`.
  void run_until(std::uint64_t until) {
    while (auto t = nic_->next_deadline()) {
      if (*t > until) break;
      now_ = std::max(now_, *t);
      nic_->tick(now_);
    }
    now_ = std::max(now_, until);
  }

  // Posts one WRITE of `packets` PMTU-sized packets on `qp`.
  void post_write(Qp& qp, std::uint32_t packets) {
    SendWr wr;
    wr.wr_id = 7;
    wr.opcode = WrOpcode::kRdmaWrite;
    wr.send_flags = send_flag::kSignaled;
    wr.sg_list = {Sge{mr_->addr(), packets * 1024, mr_->lkey()}};
    wr.rdma = {0x7000000000ull, 0x4242};
    nic_->tick(now_);  // the verb acts now, as the loop that runs the NIC sees to
    ASSERT_TRUE(nic_->post_send(qp.qp_num(), std::vector<SendWr>{wr}));
  }

  // Send times of `qp`'s request packets since frame `from`.
  std::vector<std::uint64_t> times_of(const Qp& qp, std::size_t from) const {
    std::vector<std::uint64_t> out;
    for (std::size_t i = from; i < frames_.size(); ++i) {
      const Packet p = decode(frames_[i].bytes);
      if (p.bth && opcode_info(p.bth->opcode).is_request && p.bth->dqpn == qp.attr().dest_qp_num)
        out.push_back(frames_[i].time);
    }
    return out;
  }
  static std::uint64_t last_gap(const std::vector<std::uint64_t>& t) {
    return t.size() < 2 ? 0 : t[t.size() - 1] - t[t.size() - 2];
  }

  std::unique_ptr<Nic> nic_;
  std::vector<Frame> frames_;
  std::size_t cursor_ = 0;
  std::uint64_t now_ = 1'000'000;
  std::uint32_t pd_ = 0;
  std::uint32_t cq_ = 0;
  Mr* mr_ = nullptr;
  std::vector<std::uint8_t> payload_ = std::vector<std::uint8_t>(32, 0x5A);
};

// ---- notification point -----------------------------------------------------------------------

TEST_F(CongestionTest, CeMarkedRequestGetsOneCnpToTheSendersQp) {
  Qp& qp = rc(kPeerQpn);
  receive(request(qp, 0, 3));
  const auto out = sent();
  const auto c = cnps(out);
  ASSERT_EQ(c.size(), 1u);
  const Packet& p = c.front();
  EXPECT_TRUE(p.bth->becn);
  EXPECT_EQ(p.bth->dqpn, kPeerQpn);
  EXPECT_EQ(p.bth->psn, 0u);
  EXPECT_EQ(p.bth->pkey, kDefaultPkey);
  EXPECT_EQ(p.ipv4->dst, kPeerIp);
  EXPECT_TRUE(p.findings.empty()) << p.findings.front().message;  // 16 zero bytes
  EXPECT_EQ(p.payload.size(), 0u);
  // The ACK is there too, and the responder's PSN and MSN are those of the SEND alone.
  ASSERT_EQ(out.size(), 2u);
  const ResponderState* st = nic_->responder().state(qp.qp_num());
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->epsn, kStartPsn + 1);
  EXPECT_EQ(st->msn, 1u);
  EXPECT_EQ(nic_->congestion().cnps_sent(), 1u);
}

TEST_F(CongestionTest, NoCnpWithoutCe) {
  Qp& qp = rc(kPeerQpn);
  for (std::uint8_t ecn : {0, 1, 2}) {
    receive(request(qp, ecn, ecn));
    now_ += 100 * kUs;
  }
  const auto out = sent();
  EXPECT_EQ(out.size(), 3u);  // three ACKs
  EXPECT_TRUE(cnps(out).empty());
}

TEST_F(CongestionTest, NoCnpForDroppedCePackets) {
  Qp& qp = rc(kPeerQpn);
  auto bad_icrc = encode(request(qp, 0, 3));
  bad_icrc.back() ^= 1;
  nic_->receive(bad_icrc, now_);
  Packet foreign = request(qp, 0, 3);
  foreign.bth->pkey = 0x1234;
  receive(foreign);
  Packet unknown = request(qp, 0, 3);
  unknown.bth->dqpn = 0xABCDE;
  receive(unknown);
  EXPECT_TRUE(sent().empty());
}

TEST_F(CongestionTest, OneCnpPerQpPerInterval) {
  Qp& a = rc(kPeerQpn);
  Qp& b = rc(kPeerQpn2);
  for (std::uint32_t i = 0; i < 5; ++i) {
    receive(request(a, i, 3));
    receive(request(b, i, 3));
  }
  auto c = cnps(sent());
  ASSERT_EQ(c.size(), 2u);  // one each
  EXPECT_NE(c[0].bth->dqpn, c[1].bth->dqpn);
  now_ += 49 * kUs;
  receive(request(a, 5, 3));
  EXPECT_TRUE(cnps(sent()).empty());
  now_ += 1 * kUs;
  receive(request(a, 6, 3));
  EXPECT_EQ(cnps(sent()).size(), 1u);
}

TEST_F(CongestionTest, Defects) {
  make_nic(with(Quirk::kCnpMissing));
  Qp& q1 = rc(kPeerQpn);
  receive(request(q1, 0, 3));
  EXPECT_TRUE(cnps(sent()).empty());

  make_nic(with(Quirk::kCnpWrongQpn));
  Qp& q2 = rc(kPeerQpn);
  receive(request(q2, 0, 3));
  auto c = cnps(sent());
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].bth->dqpn, q2.qp_num());

  make_nic(with(Quirk::kCnpConsumesPsn));
  Qp& q3 = rc(kPeerQpn);
  receive(request(q3, 0, 3));
  c = cnps(sent());
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].bth->psn, kStartPsn + 1);
  EXPECT_EQ(nic_->responder().state(q3.qp_num())->epsn, kStartPsn + 2);

  make_nic(with(Quirk::kCnpUnpaced));
  Qp& q4 = rc(kPeerQpn);
  for (std::uint32_t i = 0; i < 4; ++i) receive(request(q4, i, 3));
  EXPECT_EQ(cnps(sent()).size(), 4u);

  make_nic(with(Quirk::kCnpPacedPerPort));
  Qp& q5 = rc(kPeerQpn);
  Qp& q6 = rc(kPeerQpn2);
  receive(request(q5, 0, 3));
  receive(request(q6, 0, 3));
  EXPECT_EQ(cnps(sent()).size(), 1u);
}

// ---- reaction point ---------------------------------------------------------------------------

TEST_F(CongestionTest, RequestsArePacedAtTheLineRate) {
  Qp& qp = rc(kPeerQpn);
  post_write(qp, 8);
  run_until(now_ + 100 * kUs);
  const auto t = times_of(qp, 0);
  ASSERT_EQ(t.size(), 8u);
  // 1024 + 58 bytes at 10 Gb/s: 865 ns a packet.
  for (std::size_t i = 1; i < t.size(); ++i) EXPECT_EQ(t[i] - t[i - 1], 865u);
}

TEST_F(CongestionTest, ABurstLeavesAtOnceThenThePacingHolds) {
  NicConfig config;
  config.congestion.enabled = true;
  config.congestion.line_rate_mbps = 10'000;
  config.congestion.burst_packets = 4;
  nic_ = std::make_unique<Nic>(config, [this](std::span<const std::uint8_t> frame) {
    frames_.push_back({now_, {frame.begin(), frame.end()}});
  });
  Device& d = nic_->device();
  pd_ = *d.alloc_pd();
  cq_ = (*d.create_cq(4096))->handle();
  MrInit init;
  init.pd = pd_;
  init.length = 1 << 20;
  init.access = access::kAll;
  mr_ = *d.reg_mr(init);
  Qp& qp = rc(kPeerQpn);
  const std::uint64_t t0 = now_;
  post_write(qp, 8);
  run_until(now_ + 100 * kUs);
  const auto t = times_of(qp, 0);
  ASSERT_EQ(t.size(), 8u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(t[i], t0);  // the burst
  for (std::size_t i = 4; i < t.size(); ++i) EXPECT_EQ(t[i], t0 + (i - 3) * 865);
}

TEST_F(CongestionTest, CnpHalvesTheRateAndQuietTimeRestoresIt) {
  Qp& qp = rc(kPeerQpn);
  post_write(qp, 400);
  run_until(now_ + 10 * kUs);
  EXPECT_EQ(last_gap(times_of(qp, 0)), 865u);
  receive(cnp(qp.qp_num()));
  EXPECT_EQ(nic_->congestion().rate_mbps(qp.qp_num(), now_), 5'000u);
  const std::size_t mark = frames_.size();
  run_until(now_ + 20 * kUs);
  EXPECT_EQ(last_gap(times_of(qp, mark)), 1730u);
  receive(cnp(qp.qp_num()));
  run_until(now_ + 20 * kUs);
  EXPECT_EQ(last_gap(times_of(qp, frames_.size() - 3)), 3460u);
  // One quiet period undoes one cut, the next the other.
  run_until(now_ + 100 * kUs);
  EXPECT_EQ(nic_->congestion().rate_mbps(qp.qp_num(), now_), 5'000u);
  run_until(now_ + 100 * kUs);
  EXPECT_EQ(nic_->congestion().rate_mbps(qp.qp_num(), now_), 10'000u);
  run_until(now_ + 10 * kUs);
  EXPECT_EQ(last_gap(times_of(qp, 0)), 865u);
}

TEST_F(CongestionTest, RateHasAFloor) {
  Qp& qp = rc(kPeerQpn);
  for (int i = 0; i < 20; ++i) receive(cnp(qp.qp_num()));
  EXPECT_EQ(nic_->congestion().rate_mbps(qp.qp_num(), now_), 10'000u >> 6);
}

TEST_F(CongestionTest, CnpsForOtherQpsOrWithABadIcrcChangeNothing) {
  Qp& a = rc(kPeerQpn);
  Qp& b = rc(kPeerQpn2);
  receive(cnp(0xABCDE));  // no such QP
  auto bad = encode(cnp(a.qp_num()));
  bad.back() ^= 1;
  nic_->receive(bad, now_);
  EXPECT_EQ(nic_->congestion().rate_mbps(a.qp_num(), now_), 10'000u);
  receive(cnp(b.qp_num()));
  EXPECT_EQ(nic_->congestion().rate_mbps(a.qp_num(), now_), 10'000u);
  EXPECT_EQ(nic_->congestion().rate_mbps(b.qp_num(), now_), 5'000u);
}

TEST_F(CongestionTest, ReactionDefects) {
  make_nic(with(Quirk::kCnpIgnored));
  Qp& a = rc(kPeerQpn);
  receive(cnp(a.qp_num()));
  EXPECT_EQ(nic_->congestion().rate_mbps(a.qp_num(), now_), 10'000u);

  make_nic(with(Quirk::kCnpSlowsAll));
  Qp& b = rc(kPeerQpn);
  Qp& c = rc(kPeerQpn2);
  receive(cnp(b.qp_num()));
  EXPECT_EQ(nic_->congestion().rate_mbps(c.qp_num(), now_), 5'000u);
}

TEST_F(CongestionTest, DisabledItSendsNoCnpAndPacesNothing) {
  NicConfig config;
  config.congestion.line_rate_mbps = 10'000;  // enabled stays false
  nic_ = std::make_unique<Nic>(config, [this](std::span<const std::uint8_t> frame) {
    frames_.push_back({now_, {frame.begin(), frame.end()}});
  });
  Device& d = nic_->device();
  pd_ = *d.alloc_pd();
  cq_ = (*d.create_cq(4096))->handle();
  MrInit init;
  init.pd = pd_;
  init.length = 1 << 20;
  init.access = access::kAll;
  mr_ = *d.reg_mr(init);
  Qp& qp = rc(kPeerQpn);
  receive(request(qp, 0, 3));
  const auto out = sent();
  EXPECT_EQ(out.size(), 1u);  // the ACK alone
  EXPECT_TRUE(cnps(out).empty());
  post_write(qp, 8);
  EXPECT_EQ(sent().size(), 8u);  // all at once
}

TEST_F(CongestionTest, WithoutALineRateNothingIsPaced) {
  make_nic({}, 0);
  Qp& qp = rc(kPeerQpn);
  post_write(qp, 8);
  EXPECT_EQ(sent().size(), 8u);  // all at once
  receive(cnp(qp.qp_num()));
  receive(request(qp, 0, 3));
  EXPECT_EQ(cnps(sent()).size(), 1u);  // the notification point still works
}

}  // namespace
}  // namespace roceconf::target
