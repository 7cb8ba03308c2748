// The reference NIC's requester (spec-facts §5, §8): segmentation at every PMTU, PSNs and
// AckReq, ACK coalescing, go-back-N on a sequence NAK, retry and RNR-retry exhaustion, the local
// ACK timeout, remote-error NAKs, READ reassembly, atomics, the READ/atomic limit, UC and UD
// sends, and the stale-sq-on-rts and wqe-prefetch-overwrite defects. The NIC's frames are
// collected from its sink; responses are built with the codec and fed back in.
#include "suite/reference_nic/requester.h"

#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "dissector/analysis/psn.h"
#include "dissector/names.h"
#include "dissector/packet.h"
#include "suite/reference_nic/nic.h"

namespace roceconf::target {
namespace {

constexpr std::uint32_t kPeerQpn = 0x123;
constexpr std::uint32_t kPsn0 = 100;
constexpr std::uint64_t kUs = 1000;

struct RcOptions {
  PathMtu mtu = PathMtu::k1024;
  std::uint32_t sq_psn = kPsn0;
  std::uint8_t timeout = 14;
  std::uint8_t retry_cnt = 3;
  std::uint8_t rnr_retry = 3;
  std::uint8_t max_rd_atomic = 4;
  bool sq_sig_all = true;
};

class RequesterTest : public ::testing::Test {
 protected:
  void SetUp() override { make_nic({}); }

  void make_nic(Quirks quirks) {
    frames_.clear();
    cursor_ = 0;
    NicConfig config;
    config.quirks = quirks;
    nic_ = std::make_unique<Nic>(config, [this](std::span<const std::uint8_t> frame) {
      frames_.emplace_back(frame.begin(), frame.end());
    });
    Device& d = nic_->device();
    pd_ = *d.alloc_pd();
    cq_ = (*d.create_cq(1024))->handle();
    mr_ = *d.reg_mr(mr_init(1 << 17, access::kAll));
    for (std::size_t i = 0; i < mr_->length(); ++i) {
      mr_->bytes()[i] = static_cast<std::uint8_t>(i * 7 + 3);
    }
  }

  MrInit mr_init(std::uint64_t length, AccessFlags flags) const {
    MrInit init;
    init.pd = pd_;
    init.length = length;
    init.access = flags;
    return init;
  }

  AddressVector peer_av() const {
    AddressVector av;
    av.dgid = gid_from_ipv4({192, 0, 2, 1});
    av.dmac = {0x02, 0, 0, 0, 0, 0x09};
    return av;
  }

  Qp& create(QpType type, bool sq_sig_all = true) {
    QpInit init;
    init.qp_type = type;
    init.pd = pd_;
    init.send_cq = cq_;
    init.recv_cq = cq_;
    init.cap = QpCap{.max_send_wr = 256,
                     .max_recv_wr = 16,
                     .max_send_sge = 4,
                     .max_recv_sge = 4,
                     .max_inline_data = 64};
    init.sq_sig_all = sq_sig_all;
    return **nic_->device().create_qp(init);
  }

  void modify(Qp& qp, const QpAttr& attr, QpAttrMask mask) {
    auto ok = nic_->modify_qp(qp.qp_num(), attr, mask);
    ASSERT_TRUE(ok) << ok.error().to_string();
  }

  // RESET → INIT → RTR → RTS for an RC or UC QP.
  void connect(Qp& qp, const RcOptions& o) {
    using namespace qp_attr;
    const bool rc = qp.qp_type() == QpType::kRc;
    QpAttr a;
    a.qp_state = QpState::kInit;
    a.qp_access_flags = access::kRemote;
    modify(qp, a, kState | kPkeyIndex | kPort | kAccessFlags);
    a.qp_state = QpState::kRtr;
    a.ah_attr = peer_av();
    a.path_mtu = o.mtu;
    a.dest_qp_num = kPeerQpn;
    a.rq_psn = 5000;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = 1;
    modify(
        qp, a,
        kState | kAv | kPathMtu | kDestQpn | kRqPsn | (rc ? kMaxDestRdAtomic | kMinRnrTimer : 0));
    a.qp_state = QpState::kRts;
    a.sq_psn = o.sq_psn;
    a.timeout = o.timeout;
    a.retry_cnt = o.retry_cnt;
    a.rnr_retry = o.rnr_retry;
    a.max_rd_atomic = o.max_rd_atomic;
    modify(qp, a, kState | kSqPsn | (rc ? kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic : 0));
  }

  Qp& rc(const RcOptions& o = {}) {
    Qp& qp = create(QpType::kRc, o.sq_sig_all);
    connect(qp, o);
    return qp;
  }

  void to_state(Qp& qp, QpState s) {
    QpAttr a;
    a.qp_state = s;
    modify(qp, a, qp_attr::kState);
  }

  Sge sge(std::uint64_t offset, std::uint32_t length) const {
    return Sge{mr_->addr() + offset, length, mr_->lkey()};
  }
  std::vector<std::uint8_t> memory(std::uint64_t offset, std::size_t length) const {
    auto b = mr_->bytes().subspan(offset, length);
    return {b.begin(), b.end()};
  }

  SendWr send_wr(std::uint64_t id, std::uint32_t length, std::uint64_t offset = 0) const {
    SendWr wr;
    wr.wr_id = id;
    wr.opcode = WrOpcode::kSend;
    wr.send_flags = send_flag::kSignaled;
    wr.sg_list = {sge(offset, length)};
    return wr;
  }
  SendWr write_wr(std::uint64_t id, std::uint32_t length) const {
    SendWr wr = send_wr(id, length);
    wr.opcode = WrOpcode::kRdmaWrite;
    wr.rdma = {0x7000000000ull, 0x4242};
    return wr;
  }
  SendWr read_wr(std::uint64_t id, std::uint32_t length, std::uint64_t offset) const {
    SendWr wr = send_wr(id, length, offset);
    wr.opcode = WrOpcode::kRdmaRead;
    wr.rdma = {0x7000001000ull, 0x5151};
    return wr;
  }

  void post(Qp& qp, std::vector<SendWr> wrs) {
    auto ok = nic_->post_send(qp.qp_num(), wrs);
    ASSERT_TRUE(ok) << ok.error().error.to_string();
  }

  // Frames the NIC sent since the last call, decoded (views into frames_, which only grows).
  std::vector<Packet> sent() {
    std::vector<Packet> out;
    for (; cursor_ < frames_.size(); ++cursor_) {
      out.push_back(decode(frames_[cursor_]));
      EXPECT_TRUE(out.back().icrc && out.back().icrc->ok());
    }
    return out;
  }

  // A response from the peer to `qp`, at `now`.
  void respond(const Qp& qp, std::uint8_t opcode, std::uint32_t psn,
               std::optional<std::uint8_t> syndrome = syndrome::kAckUnlimited,
               std::vector<std::uint8_t> payload = {},
               std::optional<std::uint64_t> orig = std::nullopt) {
    Packet r;
    r.eth = Ethernet{nic_->device().port().mac, peer_av().dmac, ethertype::kIpv4};
    r.ipv4 = Ipv4{};
    r.udp = Udp{0xC123, Udp::kRocePort, 0, 0};
    Bth b;
    b.opcode = opcode;
    b.dqpn = qp.qp_num();
    b.psn = psn;
    r.bth = b;
    if (syndrome) r.aeth = Aeth{*syndrome, 1};
    if (orig) r.atomicacketh = AtomicAckEth{*orig};
    r.payload = payload;
    nic_->receive(encode(r), now_);
  }
  void ack(const Qp& qp, std::uint32_t psn, std::uint8_t syn = syndrome::kAckUnlimited) {
    respond(qp, opcode::kRcAck, psn, syn);
  }

  void advance_to(std::uint64_t t) {
    now_ = t;
    nic_->tick(t);
  }

  std::vector<Cqe> poll() { return *nic_->device().poll_cq(cq_, 1024); }

  static std::vector<std::uint32_t> psns(const std::vector<Packet>& ps) {
    std::vector<std::uint32_t> out;
    for (const Packet& p : ps) out.push_back(p.bth->psn);
    return out;
  }
  static std::vector<std::uint8_t> opcodes(const std::vector<Packet>& ps) {
    std::vector<std::uint8_t> out;
    for (const Packet& p : ps) out.push_back(p.bth->opcode);
    return out;
  }

  std::unique_ptr<Nic> nic_;
  std::vector<std::vector<std::uint8_t>> frames_;
  std::size_t cursor_ = 0;
  std::uint64_t now_ = 0;
  std::uint32_t pd_ = 0;
  std::uint32_t cq_ = 0;
  Mr* mr_ = nullptr;
};

TEST(RequesterLocalAckTimeout, IsFourMicrosecondsTimesTwoToTheTimeout) {
  EXPECT_EQ(local_ack_timeout_ns(0), std::nullopt);  // infinite
  EXPECT_EQ(local_ack_timeout_ns(1), 8192u);
  EXPECT_EQ(local_ack_timeout_ns(14), 67108864u);  // 4.096 µs × 16384 = 67.1 ms
  EXPECT_EQ(local_ack_timeout_ns(31), 4096ull << 31);
}

// ---- segmentation ------------------------------------------------------------------------------

class RequesterSegmentation : public RequesterTest,
                              public ::testing::WithParamInterface<PathMtu> {};

TEST_P(RequesterSegmentation, SendIsCutAtExactlyThePmtuWithTheRemainderLast) {
  const std::uint32_t pmtu = path_mtu_bytes(GetParam());
  Qp& qp = rc({.mtu = GetParam()});
  const std::uint32_t len = 3 * pmtu + 101;
  post(qp, {send_wr(1, len)});
  const auto ps = sent();
  ASSERT_EQ(ps.size(), 4u);
  EXPECT_EQ(opcodes(ps), (std::vector<std::uint8_t>{opcode::kRcSendFirst, opcode::kRcSendMiddle,
                                                    opcode::kRcSendMiddle, opcode::kRcSendLast}));
  EXPECT_EQ(psns(ps), (std::vector<std::uint32_t>{kPsn0, kPsn0 + 1, kPsn0 + 2, kPsn0 + 3}));
  std::vector<std::uint8_t> all;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const Packet& p = ps[i];
    EXPECT_EQ(p.payload.size(), i < 3 ? pmtu : 101u) << i;
    EXPECT_EQ(p.bth->padcount, i < 3 ? 0 : 3) << i;
    EXPECT_EQ(p.bth->ackreq, i == 3) << "AckReq on the last packet only";
    EXPECT_EQ(p.bth->dqpn, kPeerQpn);
    EXPECT_EQ(p.bth->pkey, 0xFFFF);
    EXPECT_TRUE(p.bth->migreq);  // path migration state MIGRATED
    all.insert(all.end(), p.payload.begin(), p.payload.end());
  }
  EXPECT_EQ(all, memory(0, len));
}

TEST_P(RequesterSegmentation, WriteCarriesRethOnFirstAndImmediateOnLast) {
  const std::uint32_t pmtu = path_mtu_bytes(GetParam());
  Qp& qp = rc({.mtu = GetParam()});
  SendWr wr = write_wr(1, 2 * pmtu);  // an exact multiple: FIRST + LAST of a full PMTU
  wr.opcode = WrOpcode::kRdmaWriteWithImm;
  wr.imm_data = 0xA1B2C3D4;
  post(qp, {wr});
  const auto ps = sent();
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].bth->opcode, opcode::kRcWriteFirst);
  ASSERT_TRUE(ps[0].reth);
  EXPECT_EQ(ps[0].reth->va, 0x7000000000ull);
  EXPECT_EQ(ps[0].reth->rkey, 0x4242u);
  EXPECT_EQ(ps[0].reth->dmalen, 2 * pmtu);
  EXPECT_FALSE(ps[0].immdt);
  EXPECT_EQ(ps[1].bth->opcode, opcode::kRcWriteLastImm);
  EXPECT_FALSE(ps[1].reth);
  ASSERT_TRUE(ps[1].immdt);
  EXPECT_EQ(ps[1].immdt->imm, 0xA1B2C3D4u);
  EXPECT_EQ(ps[1].payload.size(), pmtu);
  EXPECT_TRUE(ps[1].bth->ackreq);
}

TEST_P(RequesterSegmentation, MessageThatFitsIsOnePacket) {
  const std::uint32_t pmtu = path_mtu_bytes(GetParam());
  Qp& qp = rc({.mtu = GetParam()});
  SendWr w = write_wr(2, pmtu);
  post(qp, {send_wr(1, pmtu), w, send_wr(3, 0), write_wr(4, 0)});
  const auto ps = sent();
  ASSERT_EQ(ps.size(), 4u);
  EXPECT_EQ(opcodes(ps), (std::vector<std::uint8_t>{opcode::kRcSendOnly, opcode::kRcWriteOnly,
                                                    opcode::kRcSendOnly, opcode::kRcWriteOnly}));
  EXPECT_EQ(ps[0].payload.size(), pmtu);
  EXPECT_EQ(ps[1].reth->dmalen, pmtu);
  EXPECT_EQ(ps[2].payload.size(), 0u);
  EXPECT_EQ(ps[3].reth->dmalen, 0u);
  for (const Packet& p : ps) EXPECT_TRUE(p.bth->ackreq);
  EXPECT_EQ(psns(ps), (std::vector<std::uint32_t>{kPsn0, kPsn0 + 1, kPsn0 + 2, kPsn0 + 3}));
}

INSTANTIATE_TEST_SUITE_P(EveryPmtu, RequesterSegmentation,
                         ::testing::Values(PathMtu::k256, PathMtu::k512, PathMtu::k1024,
                                           PathMtu::k2048, PathMtu::k4096),
                         [](const auto& info) {
                           return std::to_string(path_mtu_bytes(info.param));
                         });

TEST_F(RequesterTest, PsnsWrapAt24Bits) {
  Qp& qp = rc({.mtu = PathMtu::k256, .sq_psn = 0xFFFFFE});
  post(qp, {send_wr(1, 600), send_wr(2, 4)});
  const auto ps = sent();
  EXPECT_EQ(psns(ps), (std::vector<std::uint32_t>{0xFFFFFE, 0xFFFFFF, 0, 1}));
  ack(qp, 1);
  EXPECT_EQ(poll().size(), 2u);
}

TEST_F(RequesterTest, SendWithInvalidateAndSolicitedEvent) {
  Qp& qp = rc({.mtu = PathMtu::k256});
  SendWr wr = send_wr(1, 300);
  wr.opcode = WrOpcode::kSendWithInv;
  wr.invalidate_rkey = 0x777;
  wr.send_flags |= send_flag::kSolicited;
  SendWr imm = send_wr(2, 8);
  imm.opcode = WrOpcode::kSendWithImm;
  imm.imm_data = 99;
  post(qp, {wr, imm});
  const auto ps = sent();
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps[0].bth->opcode, opcode::kRcSendFirst);
  EXPECT_FALSE(ps[0].bth->solicited);
  EXPECT_EQ(ps[1].bth->opcode, opcode::kRcSendLastInv);
  ASSERT_TRUE(ps[1].ieth);
  EXPECT_EQ(ps[1].ieth->rkey, 0x777u);
  EXPECT_TRUE(ps[1].bth->solicited);
  EXPECT_EQ(ps[2].bth->opcode, opcode::kRcSendOnlyImm);
  EXPECT_EQ(ps[2].immdt->imm, 99u);
  EXPECT_FALSE(ps[2].bth->solicited);
}

TEST_F(RequesterTest, InlineDataIsSentWithoutAnLkey) {
  Qp& qp = rc();
  SendWr wr;
  wr.wr_id = 1;
  wr.send_flags = send_flag::kInline;
  wr.inline_data = {1, 2, 3, 4, 5};
  post(qp, {wr});
  const auto ps = sent();
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(std::vector<std::uint8_t>(ps[0].payload.begin(), ps[0].payload.end()), wr.inline_data);
  EXPECT_EQ(ps[0].bth->padcount, 3);
}

// ---- ACKs and completions ----------------------------------------------------------------------

TEST_F(RequesterTest, CoalescedAckCompletesEveryWqeUpToItsPsn) {
  Qp& qp = rc({.mtu = PathMtu::k256});
  post(qp, {send_wr(1, 600), write_wr(2, 16), send_wr(3, 8)});  // PSNs 100-102, 103, 104
  EXPECT_EQ(sent().size(), 5u);
  ack(qp, kPsn0 + 1);  // inside the first message: nothing completes
  EXPECT_TRUE(poll().empty());
  ack(qp, kPsn0 + 3);
  auto cqes = poll();
  ASSERT_EQ(cqes.size(), 2u);
  EXPECT_EQ(cqes[0].wr_id, 1u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(cqes[0].opcode, WcOpcode::kSend);
  EXPECT_EQ(cqes[0].byte_len, 600u);
  EXPECT_EQ(cqes[0].qp_num, qp.qp_num());
  EXPECT_EQ(cqes[1].wr_id, 2u);
  EXPECT_EQ(cqes[1].opcode, WcOpcode::kRdmaWrite);
  ack(qp, kPsn0 + 3);  // a duplicate: ignored
  EXPECT_TRUE(poll().empty());
  ack(qp, kPsn0 + 4);
  cqes = poll();
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].wr_id, 3u);
  EXPECT_TRUE(qp.send_queue().empty());
  EXPECT_EQ(nic_->next_deadline(), std::nullopt) << "nothing outstanding: no timer";
}

TEST_F(RequesterTest, UnsignaledWqesCompleteSilently) {
  Qp& qp = rc({.sq_sig_all = false});
  SendWr quiet = send_wr(1, 8);
  quiet.send_flags = 0;
  post(qp, {quiet, send_wr(2, 8)});
  sent();
  ack(qp, kPsn0 + 1);
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].wr_id, 2u);
}

TEST_F(RequesterTest, AckForPsnsNeverSentIsIgnored) {
  Qp& qp = rc();
  post(qp, {send_wr(1, 8)});
  sent();
  ack(qp, kPsn0 + 1);  // ahead of anything sent
  ack(qp, kPsn0 - 1);  // behind
  EXPECT_TRUE(poll().empty());
  ack(qp, kPsn0);
  EXPECT_EQ(poll().size(), 1u);
}

// ---- go-back-N, retries ------------------------------------------------------------------------

TEST_F(RequesterTest, SequenceNakRetransmitsEverythingFromTheNakPsn) {
  Qp& qp = rc({.mtu = PathMtu::k256});
  post(qp, {send_wr(1, 8), send_wr(2, 600), send_wr(3, 8)});  // 100, 101-103, 104
  EXPECT_EQ(sent().size(), 5u);
  ack(qp, kPsn0 + 2, syndrome::kNakPsnSeqError);  // the responder expects 102
  auto cqes = poll();
  ASSERT_EQ(cqes.size(), 1u) << "the NAK acknowledges PSNs before it";
  EXPECT_EQ(cqes[0].wr_id, 1u);
  const auto again = sent();
  EXPECT_EQ(psns(again), (std::vector<std::uint32_t>{kPsn0 + 2, kPsn0 + 3, kPsn0 + 4}));
  EXPECT_EQ(opcodes(again), (std::vector<std::uint8_t>{opcode::kRcSendMiddle, opcode::kRcSendLast,
                                                       opcode::kRcSendOnly}));
  EXPECT_EQ(again[0].payload.size(), 256u);
  EXPECT_EQ(std::vector<std::uint8_t>(again[0].payload.begin(), again[0].payload.end()),
            memory(256, 256));
  ack(qp, kPsn0 + 4);
  EXPECT_EQ(poll().size(), 2u);
}

TEST_F(RequesterTest, SequenceNaksExhaustRetryCount) {
  Qp& qp = rc({.retry_cnt = 2});
  post(qp, {send_wr(1, 8), send_wr(2, 8)});
  std::size_t transmissions = 0;
  for (const Packet& p : sent()) transmissions += p.bth->psn == kPsn0;
  for (int i = 0; i < 3; ++i) {
    ack(qp, kPsn0, syndrome::kNakPsnSeqError);
    for (const Packet& p : sent()) transmissions += p.bth->psn == kPsn0;
  }
  EXPECT_EQ(transmissions, 3u) << "retry_cnt + 1 transmissions";
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 2u);
  EXPECT_EQ(cqes[0].wr_id, 1u);
  EXPECT_EQ(cqes[0].status, WcStatus::kRetryExcErr);
  EXPECT_EQ(cqes[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(qp.state(), QpState::kErr);
  EXPECT_EQ(nic_->device().counters().retry_exceeded, 1u);
}

TEST_F(RequesterTest, LocalAckTimeoutRetransmitsFromOldestUnackedPsn) {
  Qp& qp = rc({.mtu = PathMtu::k256, .timeout = 14});
  const std::uint64_t t = *local_ack_timeout_ns(14);
  advance_to(1000);
  post(qp, {send_wr(1, 8), send_wr(2, 300)});  // 100, 101-102
  EXPECT_EQ(sent().size(), 3u);
  EXPECT_EQ(nic_->next_deadline(), 1000 + t);
  ack(qp, kPsn0);  // progress restarts the timer
  EXPECT_EQ(poll().size(), 1u);
  advance_to(2000);
  EXPECT_EQ(nic_->next_deadline(), 1000 + t) << "an ACK at 1000 re-armed it";
  advance_to(1000 + t - 1);
  EXPECT_TRUE(sent().empty());
  advance_to(1000 + t);
  EXPECT_EQ(psns(sent()), (std::vector<std::uint32_t>{kPsn0 + 1, kPsn0 + 2}));
  EXPECT_EQ(nic_->device().counters().local_ack_timeout, 1u);
  EXPECT_EQ(nic_->next_deadline(), 1000 + 2 * t);
}

TEST_F(RequesterTest, TimeoutsExhaustRetryCountAfterRetryCntPlusOneTransmissions) {
  Qp& qp = rc({.timeout = 1, .retry_cnt = 3});
  post(qp, {send_wr(1, 8), send_wr(2, 8)});
  std::size_t transmissions = 0;
  for (const Packet& p : sent()) transmissions += p.bth->psn == kPsn0;
  while (auto d = nic_->next_deadline()) {
    advance_to(*d);
    for (const Packet& p : sent()) transmissions += p.bth->psn == kPsn0;
  }
  EXPECT_EQ(transmissions, 4u);
  EXPECT_EQ(nic_->device().counters().local_ack_timeout, 4u);
  EXPECT_EQ(nic_->device().counters().retry_exceeded, 1u);
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 2u);
  EXPECT_EQ(cqes[0].status, WcStatus::kRetryExcErr);
  EXPECT_EQ(cqes[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(qp.state(), QpState::kErr);
}

TEST_F(RequesterTest, TimeoutZeroNeverRetransmits) {
  Qp& qp = rc({.timeout = 0});
  post(qp, {send_wr(1, 8)});
  sent();
  EXPECT_EQ(nic_->next_deadline(), std::nullopt);
}

// ---- RNR ---------------------------------------------------------------------------------------

TEST_F(RequesterTest, RnrNakWaitsTheTimerThenResendsFromThatPsn) {
  Qp& qp = rc();
  advance_to(5000);
  post(qp, {send_wr(1, 8), send_wr(2, 8), send_wr(3, 8)});
  sent();
  ack(qp, kPsn0 + 1, syndrome::kRnrBase | 5);  // 60 µs
  ASSERT_EQ(poll().size(), 1u);
  EXPECT_EQ(nic_->device().counters().rnr_nak_received, 1u);
  EXPECT_EQ(nic_->next_deadline(), 5000 + 60 * kUs);
  post(qp, {send_wr(4, 8)});  // queued behind the wait
  EXPECT_TRUE(sent().empty());
  advance_to(5000 + 60 * kUs - 1);
  EXPECT_TRUE(sent().empty());
  advance_to(5000 + 60 * kUs);
  EXPECT_EQ(psns(sent()), (std::vector<std::uint32_t>{kPsn0 + 1, kPsn0 + 2, kPsn0 + 3}));
  ack(qp, kPsn0 + 3);
  EXPECT_EQ(poll().size(), 3u);
}

TEST_F(RequesterTest, RnrRetryExhaustedCompletesWithRnrRetryExcErr) {
  Qp& qp = rc({.rnr_retry = 2});
  post(qp, {send_wr(1, 8)});
  sent();
  for (int i = 0; i < 2; ++i) {
    ack(qp, kPsn0, syndrome::kRnrBase | 1);
    advance_to(*nic_->next_deadline());
    EXPECT_EQ(sent().size(), 1u);
  }
  ack(qp, kPsn0, syndrome::kRnrBase | 1);
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].status, WcStatus::kRnrRetryExcErr);
  EXPECT_EQ(qp.state(), QpState::kErr);
  EXPECT_EQ(nic_->device().counters().retry_exceeded, 1u);
}

TEST_F(RequesterTest, RnrRetrySevenRetriesForEver) {
  Qp& qp = rc({.rnr_retry = 7});
  post(qp, {send_wr(1, 8)});
  sent();
  for (int i = 0; i < 50; ++i) {
    ack(qp, kPsn0, syndrome::kRnrBase | 1);
    advance_to(*nic_->next_deadline());
    ASSERT_EQ(sent().size(), 1u);
  }
  ack(qp, kPsn0);
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
}

// ---- remote errors -----------------------------------------------------------------------------

struct NakCase {
  std::uint8_t syndrome;
  WcStatus status;
};
class RequesterRemoteNak : public RequesterTest, public ::testing::WithParamInterface<NakCase> {};

TEST_P(RequesterRemoteNak, CompletesTheWqeInErrorAndFlushesTheRest) {
  Qp& qp = rc();
  post(qp, {send_wr(1, 8), write_wr(2, 8), send_wr(3, 8), send_wr(4, 8)});
  sent();
  ack(qp, kPsn0 + 1, GetParam().syndrome);
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 4u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess) << "implicitly acknowledged";
  EXPECT_EQ(cqes[1].wr_id, 2u);
  EXPECT_EQ(cqes[1].status, GetParam().status);
  EXPECT_EQ(cqes[2].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(cqes[3].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(qp.state(), QpState::kErr);
  EXPECT_EQ(nic_->next_deadline(), std::nullopt);
  EXPECT_TRUE(sent().empty()) << "no retry";
}

INSTANTIATE_TEST_SUITE_P(
    Codes, RequesterRemoteNak,
    ::testing::Values(NakCase{syndrome::kNakInvalidRequest, WcStatus::kRemInvReqErr},
                      NakCase{syndrome::kNakRemoteAccess, WcStatus::kRemAccessErr},
                      NakCase{syndrome::kNakRemoteOperational, WcStatus::kRemOpErr},
                      NakCase{syndrome::kNakInvalidRdRequest, WcStatus::kRemInvRdReqErr},
                      NakCase{0x70, WcStatus::kBadRespErr}),
    [](const auto& info) { return fmt::format("nak_{:02x}", info.param.syndrome); });

// ---- READ --------------------------------------------------------------------------------------

TEST_F(RequesterTest, ReadResponsesAreReassembledIntoTheSges) {
  Qp& qp = rc({.mtu = PathMtu::k1024});
  SendWr rd = read_wr(7, 2600, 0);
  rd.sg_list = {sge(0x8000, 1000), sge(0x9000, 1600)};  // split across two SGEs
  post(qp, {send_wr(1, 8), rd, send_wr(2, 8)});
  const auto ps = sent();
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps[1].bth->opcode, opcode::kRcReadRequest);
  EXPECT_EQ(ps[1].bth->psn, kPsn0 + 1);
  EXPECT_TRUE(ps[1].bth->ackreq);
  EXPECT_EQ(ps[1].reth->va, 0x7000001000ull);
  EXPECT_EQ(ps[1].reth->rkey, 0x5151u);
  EXPECT_EQ(ps[1].reth->dmalen, 2600u);
  EXPECT_EQ(ps[2].bth->psn, kPsn0 + 4) << "the READ consumed 3 PSNs";

  std::vector<std::uint8_t> data(2600);
  std::iota(data.begin(), data.end(), std::uint8_t{1});
  auto part = [&](std::size_t from, std::size_t n) {
    return std::vector<std::uint8_t>(data.begin() + from, data.begin() + from + n);
  };
  respond(qp, opcode::kRcReadResponseFirst, kPsn0 + 1, syndrome::kAckUnlimited, part(0, 1024));
  auto cqes = poll();
  ASSERT_EQ(cqes.size(), 1u) << "the READ response acknowledges the SEND before it";
  EXPECT_EQ(cqes[0].wr_id, 1u);
  respond(qp, opcode::kRcReadResponseMiddle, kPsn0 + 2, std::nullopt, part(1024, 1024));
  respond(qp, opcode::kRcReadResponseLast, kPsn0 + 3, syndrome::kAckUnlimited, part(2048, 552));
  cqes = poll();
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].wr_id, 7u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(cqes[0].opcode, WcOpcode::kRdmaRead);
  EXPECT_EQ(cqes[0].byte_len, 2600u);
  std::vector<std::uint8_t> got = memory(0x8000, 1000);
  const auto rest = memory(0x9000, 1600);
  got.insert(got.end(), rest.begin(), rest.end());
  EXPECT_EQ(got, data);
  ack(qp, kPsn0 + 4);
  EXPECT_EQ(poll().size(), 1u);
}

TEST_F(RequesterTest, MissingReadResponseRetriesTheRestOfTheRead) {
  Qp& qp = rc({.mtu = PathMtu::k1024});
  post(qp, {read_wr(7, 3000, 0x8000)});
  sent();
  std::vector<std::uint8_t> data(3000, 0x5A);
  respond(qp, opcode::kRcReadResponseFirst, kPsn0, syndrome::kAckUnlimited,
          {data.begin(), data.begin() + 1024});
  // The MIDDLE at 101 is lost; the LAST at 102 reveals the gap.
  respond(qp, opcode::kRcReadResponseLast, kPsn0 + 2, syndrome::kAckUnlimited,
          {data.begin(), data.begin() + 952});
  const auto ps = sent();
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].bth->opcode, opcode::kRcReadRequest);
  EXPECT_EQ(ps[0].bth->psn, kPsn0 + 1);
  EXPECT_EQ(ps[0].reth->va, 0x7000001000ull + 1024);
  EXPECT_EQ(ps[0].reth->dmalen, 3000u - 1024);
  // The responder answers the retry as a new READ: FIRST at 101, LAST at 102.
  respond(qp, opcode::kRcReadResponseFirst, kPsn0 + 1, syndrome::kAckUnlimited,
          {data.begin(), data.begin() + 1024});
  respond(qp, opcode::kRcReadResponseLast, kPsn0 + 2, syndrome::kAckUnlimited,
          {data.begin(), data.begin() + 952});
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(memory(0x8000, 3000), data);
}

TEST_F(RequesterTest, DuplicateReadResponsesAreIgnored) {
  Qp& qp = rc({.mtu = PathMtu::k256});
  post(qp, {read_wr(7, 300, 0x8000)});
  sent();
  const std::vector<std::uint8_t> first(256, 0xAB);
  respond(qp, opcode::kRcReadResponseFirst, kPsn0, syndrome::kAckUnlimited, first);
  // The same FIRST again (a replay after a retry crossed it): behind the expected PSN.
  respond(qp, opcode::kRcReadResponseFirst, kPsn0, syndrome::kAckUnlimited,
          std::vector<std::uint8_t>(256, 0xCD));
  EXPECT_TRUE(poll().empty());
  EXPECT_TRUE(sent().empty());
  respond(qp, opcode::kRcReadResponseLast, kPsn0 + 1, syndrome::kAckUnlimited,
          std::vector<std::uint8_t>(44, 0xEF));
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(memory(0x8000, 256), first);
}

TEST_F(RequesterTest, AckPastAnUnansweredReadRetriesTheRead) {
  Qp& qp = rc();
  post(qp, {read_wr(7, 8, 0x8000), send_wr(2, 8)});
  sent();
  ack(qp, kPsn0 + 1);  // the READ response was lost
  EXPECT_TRUE(poll().empty());
  const auto ps = sent();
  EXPECT_EQ(opcodes(ps), (std::vector<std::uint8_t>{opcode::kRcReadRequest, opcode::kRcSendOnly}));
  EXPECT_EQ(psns(ps), (std::vector<std::uint32_t>{kPsn0, kPsn0 + 1}));
}

TEST_F(RequesterTest, ReadResponseOutOfOpcodeOrderIsABadResponse) {
  Qp& qp = rc({.mtu = PathMtu::k1024});
  post(qp, {read_wr(7, 3000, 0x8000), send_wr(2, 8)});
  sent();
  respond(qp, opcode::kRcReadResponseMiddle, kPsn0, std::nullopt, std::vector<std::uint8_t>(1024));
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 2u);
  EXPECT_EQ(cqes[0].status, WcStatus::kBadRespErr);
  EXPECT_EQ(cqes[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(qp.state(), QpState::kErr);
}

TEST_F(RequesterTest, ReadResponseNotCutAtThePmtuIsABadResponse) {
  // What a responder with read-resp-split-wrong sends: FIRST of PMTU - 4 bytes.
  Qp& qp = rc({.mtu = PathMtu::k1024});
  post(qp, {read_wr(7, 3000, 0x8000)});
  sent();
  respond(qp, opcode::kRcReadResponseFirst, kPsn0, syndrome::kAckUnlimited,
          std::vector<std::uint8_t>(1020));
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].status, WcStatus::kBadRespErr);
}

TEST_F(RequesterTest, ReadIntoAnSgeWithoutLocalWriteIsALocalProtectionError) {
  Qp& qp = rc();
  Mr* ro = *nic_->device().reg_mr(mr_init(4096, 0));
  SendWr rd = read_wr(7, 64, 0);
  rd.sg_list = {Sge{ro->addr(), 64, ro->lkey()}};
  post(qp, {send_wr(1, 8), rd, send_wr(3, 8)});
  EXPECT_EQ(sent().size(), 1u) << "the READ is never sent";
  EXPECT_TRUE(poll().empty()) << "completions stay in order";
  ack(qp, kPsn0);
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 3u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(cqes[1].status, WcStatus::kLocProtErr);
  EXPECT_EQ(cqes[2].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(qp.state(), QpState::kErr);
}

TEST_F(RequesterTest, BadLkeyFailsBeforeAnythingIsSent) {
  Qp& qp = rc();
  SendWr wr = send_wr(1, 8);
  wr.sg_list[0].lkey ^= 0xFF;
  post(qp, {wr});
  EXPECT_TRUE(sent().empty());
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].status, WcStatus::kLocProtErr);
  EXPECT_EQ(qp.state(), QpState::kErr);
}

// ---- atomics -----------------------------------------------------------------------------------

TEST_F(RequesterTest, AtomicsCarryAtomicEthAndReturnTheOriginalValue) {
  Qp& qp = rc();
  SendWr cas = send_wr(1, 8, 0x100);
  cas.opcode = WrOpcode::kAtomicCmpAndSwp;
  cas.atomic = {.remote_addr = 0x7000002000, .compare_add = 5, .swap = 9, .rkey = 0x99};
  SendWr fadd = send_wr(2, 8, 0x108);
  fadd.opcode = WrOpcode::kAtomicFetchAndAdd;
  fadd.atomic = {.remote_addr = 0x7000002008, .compare_add = 3, .swap = 0, .rkey = 0x99};
  post(qp, {cas, fadd});
  const auto ps = sent();
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].bth->opcode, opcode::kRcCompareSwap);
  ASSERT_TRUE(ps[0].atomiceth);
  EXPECT_EQ(ps[0].atomiceth->va, 0x7000002000u);
  EXPECT_EQ(ps[0].atomiceth->rkey, 0x99u);
  EXPECT_EQ(ps[0].atomiceth->swap_add, 9u);
  EXPECT_EQ(ps[0].atomiceth->compare, 5u);
  EXPECT_TRUE(ps[0].bth->ackreq);
  EXPECT_EQ(ps[1].bth->opcode, opcode::kRcFetchAdd);
  EXPECT_EQ(ps[1].atomiceth->swap_add, 3u);
  EXPECT_EQ(ps[1].bth->psn, kPsn0 + 1);

  respond(qp, opcode::kRcAtomicAck, kPsn0, syndrome::kAckUnlimited, {}, 0x0102030405060708);
  respond(qp, opcode::kRcAtomicAck, kPsn0 + 1, syndrome::kAckUnlimited, {}, 42);
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 2u);
  EXPECT_EQ(cqes[0].opcode, WcOpcode::kCompSwap);
  EXPECT_EQ(cqes[0].byte_len, 8u);
  EXPECT_EQ(cqes[1].opcode, WcOpcode::kFetchAdd);
  // The original values, as little-endian host integers.
  EXPECT_EQ(memory(0x100, 8), (std::vector<std::uint8_t>{8, 7, 6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(memory(0x108, 8), (std::vector<std::uint8_t>{42, 0, 0, 0, 0, 0, 0, 0}));
}

TEST_F(RequesterTest, AtomicAckForASendIsABadResponse) {
  Qp& qp = rc();
  post(qp, {send_wr(1, 8)});
  sent();
  respond(qp, opcode::kRcAtomicAck, kPsn0, syndrome::kAckUnlimited, {}, 1);
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].status, WcStatus::kBadRespErr);
}

TEST_F(RequesterTest, MaxRdAtomicLimitsOutstandingReadsAndAtomics) {
  Qp& qp = rc({.max_rd_atomic = 1});
  SendWr fadd = send_wr(3, 8, 0x200);
  fadd.opcode = WrOpcode::kAtomicFetchAndAdd;
  fadd.atomic.remote_addr = 0x7000002000;
  post(qp, {read_wr(1, 16, 0x100), fadd, send_wr(4, 8)});
  auto ps = sent();
  ASSERT_EQ(ps.size(), 1u) << "the atomic and everything after it wait";
  EXPECT_EQ(ps[0].bth->opcode, opcode::kRcReadRequest);
  respond(qp, opcode::kRcReadResponseOnly, kPsn0, syndrome::kAckUnlimited,
          std::vector<std::uint8_t>(16, 1));
  ps = sent();
  EXPECT_EQ(opcodes(ps), (std::vector<std::uint8_t>{opcode::kRcFetchAdd, opcode::kRcSendOnly}));
  EXPECT_EQ(psns(ps), (std::vector<std::uint32_t>{kPsn0 + 1, kPsn0 + 2}));
}

TEST_F(RequesterTest, FencedWqeWaitsForOutstandingReads) {
  Qp& qp = rc();
  SendWr fenced = send_wr(2, 8);
  fenced.send_flags |= send_flag::kFence;
  post(qp, {read_wr(1, 16, 0x100), fenced});
  EXPECT_EQ(sent().size(), 1u);
  respond(qp, opcode::kRcReadResponseOnly, kPsn0, syndrome::kAckUnlimited,
          std::vector<std::uint8_t>(16, 1));
  EXPECT_EQ(opcodes(sent()), (std::vector<std::uint8_t>{opcode::kRcSendOnly}));
}

// ---- SQD ---------------------------------------------------------------------------------------

TEST_F(RequesterTest, SqdFinishesStartedWqesAndHoldsNewOnes) {
  Qp& qp = rc();
  post(qp, {send_wr(1, 8)});
  sent();
  to_state(qp, QpState::kSqd);
  post(qp, {send_wr(2, 8)});
  EXPECT_TRUE(sent().empty());
  ack(qp, kPsn0, syndrome::kNakPsnSeqError);  // a started WQE is still retransmitted
  EXPECT_EQ(psns(sent()), (std::vector<std::uint32_t>{kPsn0}));
  ack(qp, kPsn0);
  EXPECT_EQ(poll().size(), 1u);
  to_state(qp, QpState::kRts);
  EXPECT_EQ(psns(sent()), (std::vector<std::uint32_t>{kPsn0 + 1}));
}

// ---- UC and UD ---------------------------------------------------------------------------------

TEST_F(RequesterTest, UcSegmentsWithoutAckReqAndCompletesWhenSent) {
  Qp& qp = create(QpType::kUc);
  connect(qp, {.mtu = PathMtu::k512});
  SendWr w = write_wr(2, 1100);
  post(qp, {send_wr(1, 1100), w});
  const auto ps = sent();
  EXPECT_EQ(opcodes(ps), (std::vector<std::uint8_t>{0x20, 0x21, 0x22, 0x26, 0x27, 0x28}));
  EXPECT_EQ(psns(ps), (std::vector<std::uint32_t>{100, 101, 102, 103, 104, 105}));
  for (const Packet& p : ps) EXPECT_FALSE(p.bth->ackreq);
  EXPECT_EQ(ps[3].reth->dmalen, 1100u);
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 2u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(cqes[0].byte_len, 1100u);
  EXPECT_EQ(cqes[1].opcode, WcOpcode::kRdmaWrite);
  EXPECT_EQ(nic_->next_deadline(), std::nullopt);
}

class RequesterUdTest : public RequesterTest {
 protected:
  Qp& ud() {
    using namespace qp_attr;
    Qp& qp = create(QpType::kUd);
    QpAttr a;
    a.qp_state = QpState::kInit;
    a.qkey = 0x11111111;
    modify(qp, a, kState | kPkeyIndex | kPort | kQkey);
    a.qp_state = QpState::kRtr;
    modify(qp, a, kState);
    a.qp_state = QpState::kRts;
    a.sq_psn = 7;
    modify(qp, a, kState | kSqPsn);
    return qp;
  }
  SendWr ud_wr(std::uint64_t id, std::uint32_t length) const {
    SendWr wr = send_wr(id, length);
    wr.ud = {.ah = peer_av(), .remote_qpn = 0x456, .remote_qkey = 0x2222};
    return wr;
  }
};

TEST_F(RequesterUdTest, SendOnlyWithDeth) {
  Qp& qp = ud();
  SendWr imm = ud_wr(2, 8);
  imm.opcode = WrOpcode::kSendWithImm;
  imm.imm_data = 5;
  imm.ud.remote_qkey = 0x80000000;  // controlled: the QP's Q_Key is used
  post(qp, {ud_wr(1, 100), imm});
  const auto ps = sent();
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].bth->opcode, opcode::kUdSendOnly);
  EXPECT_EQ(ps[0].bth->dqpn, 0x456u);
  EXPECT_EQ(ps[0].bth->psn, 7u);
  ASSERT_TRUE(ps[0].deth);
  EXPECT_EQ(ps[0].deth->qkey, 0x2222u);
  EXPECT_EQ(ps[0].deth->srcqp, qp.qp_num());
  EXPECT_EQ(std::vector<std::uint8_t>(ps[0].payload.begin(), ps[0].payload.end()), memory(0, 100));
  EXPECT_EQ(ps[1].bth->opcode, opcode::kUdSendOnlyImm);
  EXPECT_EQ(ps[1].bth->psn, 8u);
  EXPECT_EQ(ps[1].deth->qkey, 0x11111111u);
  EXPECT_EQ(ps[1].immdt->imm, 5u);
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 2u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(cqes[0].byte_len, 100u);
}

TEST_F(RequesterUdTest, PayloadAboveTheMtuIsNotSentAndNoError) {
  // C10-93.1.1: no packet for the message and no error; the PSN it would have had is used up.
  Qp& qp = ud();
  post(qp, {ud_wr(1, 4097), ud_wr(2, 8)});
  const auto ps = sent();
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].bth->psn, 8u);
  EXPECT_EQ(ps[0].payload.size(), 8u);
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 2u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(cqes[1].status, WcStatus::kSuccess);
  EXPECT_EQ(qp.state(), QpState::kRts);
}

// ---- quirks ------------------------------------------------------------------------------------

TEST_F(RequesterTest, FlushedWqesStayFlushedWithoutTheStaleSqDefect) {
  Qp& qp = rc();
  post(qp, {send_wr(1, 8), send_wr(2, 8)});
  EXPECT_EQ(sent().size(), 2u);
  to_state(qp, QpState::kErr);
  EXPECT_EQ(poll().size(), 2u);
  to_state(qp, QpState::kReset);
  connect(qp, {.sq_psn = 900});
  EXPECT_TRUE(sent().empty());
  EXPECT_EQ(nic_->next_deadline(), std::nullopt);
}

TEST_F(RequesterTest, StaleSqOnRtsSendsFlushedWqesAgain) {
  Quirks q;
  q.set(Quirk::kStaleSqOnRts);
  make_nic(q);
  Qp& qp = rc();
  post(qp, {send_wr(1, 8), send_wr(2, 8, 64), send_wr(3, 8, 128)});
  EXPECT_EQ(sent().size(), 3u);
  ack(qp, kPsn0);  // the first one completes: it is not stale
  to_state(qp, QpState::kErr);
  auto cqes = poll();
  ASSERT_EQ(cqes.size(), 3u);
  EXPECT_EQ(cqes[1].status, WcStatus::kWrFlushErr);
  to_state(qp, QpState::kReset);
  connect(qp, {.sq_psn = 900});
  const auto ps = sent();
  ASSERT_EQ(ps.size(), 2u) << "the two flushed WQEs go out again";
  EXPECT_EQ(psns(ps), (std::vector<std::uint32_t>{900, 901}));
  EXPECT_EQ(std::vector<std::uint8_t>(ps[0].payload.begin(), ps[0].payload.end()), memory(64, 8));
  EXPECT_EQ(std::vector<std::uint8_t>(ps[1].payload.begin(), ps[1].payload.end()), memory(128, 8));
  ack(qp, 901);
  cqes = poll();
  ASSERT_EQ(cqes.size(), 2u);
  EXPECT_EQ(cqes[0].wr_id, 2u);
  EXPECT_EQ(cqes[1].wr_id, 3u);
  // Once run, they are gone.
  to_state(qp, QpState::kReset);
  connect(qp, {.sq_psn = 50});
  EXPECT_TRUE(sent().empty());
}

TEST_F(RequesterTest, StaleSqOnRtsAfterATransportError) {
  Quirks q;
  q.set(Quirk::kStaleSqOnRts);
  make_nic(q);
  Qp& qp = rc();
  post(qp, {send_wr(1, 8), send_wr(2, 8, 64)});
  sent();
  ack(qp, kPsn0, syndrome::kNakRemoteAccess);  // WQE 1 fails, WQE 2 is flushed
  EXPECT_EQ(qp.state(), QpState::kErr);
  to_state(qp, QpState::kReset);
  connect(qp, {.sq_psn = 300});
  const auto ps = sent();
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].bth->psn, 300u);
  EXPECT_EQ(std::vector<std::uint8_t>(ps[0].payload.begin(), ps[0].payload.end()), memory(64, 8));
}

TEST_F(RequesterTest, WqesOfOneDoorbellKeepTheirOwnContent) {
  Qp& qp = rc();
  post(qp, {send_wr(1, 8, 0), send_wr(2, 16, 64)});
  const auto ps = sent();
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].payload.size(), 8u);
  EXPECT_EQ(ps[1].payload.size(), 16u);
}

TEST_F(RequesterTest, WqePrefetchOverwriteSendsTheSecondWqeTwice) {
  Quirks q;
  q.set(Quirk::kWqePrefetchOverwrite);
  make_nic(q);
  Qp& qp = rc();
  post(qp, {send_wr(1, 8, 0), send_wr(2, 16, 64), send_wr(3, 4, 128)});
  auto ps = sent();
  ASSERT_EQ(ps.size(), 3u);
  for (int i : {0, 1}) {
    EXPECT_EQ(std::vector<std::uint8_t>(ps[i].payload.begin(), ps[i].payload.end()), memory(64, 16))
        << i;
  }
  EXPECT_EQ(std::vector<std::uint8_t>(ps[2].payload.begin(), ps[2].payload.end()), memory(128, 4))
      << "only the first WQE of the doorbell is overwritten";
  ack(qp, kPsn0 + 2);
  const auto cqes = poll();
  ASSERT_EQ(cqes.size(), 3u);
  EXPECT_EQ(cqes[0].wr_id, 1u) << "the completion still names the first WQE";
  EXPECT_EQ(cqes[0].byte_len, 16u);

  // WQEs rung one by one are not affected.
  post(qp, {send_wr(4, 8, 0)});
  post(qp, {send_wr(5, 16, 64)});
  ps = sent();
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].payload.size(), 8u);
  EXPECT_EQ(ps[1].payload.size(), 16u);
}

TEST_F(RequesterTest, WqePrefetchOverwriteAppliesToAttributesToo) {
  Quirks q;
  q.set(Quirk::kWqePrefetchOverwrite);
  make_nic(q);
  Qp& qp = create(QpType::kUc);
  connect(qp, {});
  post(qp, {send_wr(1, 8), write_wr(2, 12)});
  const auto ps = sent();
  EXPECT_EQ(opcodes(ps), (std::vector<std::uint8_t>{0x2A, 0x2A}));  // UC WRITE ONLY twice
  EXPECT_EQ(ps[0].reth->dmalen, 12u);
}

}  // namespace
}  // namespace roceconf::target
