// The defects only hostile input reaches (area "fuzz", quirks.cc): for each, the input that
// triggers it, what the NIC then does, and that the clean NIC survives the same input. A
// sentinel after every input tells dead from wedged: a SEND on the QP, a CM ClassPortInfo.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "dissector/icrc.h"
#include "dissector/names.h"
#include "suite/reference_nic/cm_agent.h"
#include "suite/reference_nic/nic.h"
#include "suite/reference_nic/test/peer_frames.h"

namespace roceconf::target {
namespace {

using test::kPeerIp;
using test::kPeerMac;
constexpr std::uint32_t kPeerQpn = 0x77;
constexpr std::uint32_t kPeerFirstPsn = 100;  // the PSN the NIC expects of the peer
constexpr std::uint32_t kOwnFirstPsn = 200;   // the NIC's own first PSN
constexpr std::uint64_t kMs = 1'000'000;
constexpr std::size_t kIpAt = Ethernet::kSize;
constexpr std::size_t kBthAt = kIpAt + Ipv4::kSize + Udp::kSize;

class FuzzQuirkTest : public ::testing::TestWithParam<bool> {
 protected:
  // GetParam(): whether the quirk under test is on.
  void make(Quirk quirk) {
    Quirks quirks;
    quirks.set(quirk, GetParam());
    NicConfig config;
    config.quirks = quirks;
    nic_ = std::make_unique<Nic>(config, [this](std::span<const std::uint8_t> f) {
      frames_.emplace_back(f.begin(), f.end());
    });
    Device& d = nic_->device();
    pd_ = *d.alloc_pd();
    cq_ = (*d.create_cq(64))->handle();
    mr_ = *d.reg_mr(MrInit{pd_, 8192, access::kAll, std::nullopt, {}});
    qpn_ = (*d.create_qp(QpInit{QpType::kRc, pd_, cq_, cq_, QpCap{8, 8, 1, 1}}))->qp_num();
    using namespace qp_attr;
    QpAttr a;
    a.qp_state = QpState::kInit;
    a.port_num = 1;
    a.qp_access_flags = access::kRemote;
    ASSERT_TRUE(nic_->modify_qp(qpn_, a, kState | kPkeyIndex | kPort | kAccessFlags));
    a.qp_state = QpState::kRtr;
    a.ah_attr.dgid = gid_from_ipv4(kPeerIp);
    a.ah_attr.dmac = kPeerMac;
    a.path_mtu = PathMtu::k1024;
    a.dest_qp_num = kPeerQpn;
    a.rq_psn = kPeerFirstPsn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    {
      auto r = nic_->modify_qp(
          qpn_, a,
          kState | kAv | kPathMtu | kDestQpn | qp_attr::kRqPsn | kMaxDestRdAtomic | kMinRnrTimer);
      ASSERT_TRUE(r) << r.error().message;
    }
    a.qp_state = QpState::kRts;
    a.sq_psn = kOwnFirstPsn;
    a.timeout = 14;  // 67 ms
    a.retry_cnt = 3;
    a.rnr_retry = 3;
    a.max_rd_atomic = 1;
    ASSERT_TRUE(nic_->modify_qp(
        qpn_, a, kState | qp_attr::kSqPsn | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic));
    for (std::uint64_t i = 0; i < 4; ++i)
      ASSERT_TRUE(nic_->post_recv(
          qpn_, std::vector<RecvWr>{RecvWr{i, {Sge{mr_->addr(), 256, mr_->lkey()}}}}));
  }

  Packet request(std::uint8_t op, std::uint32_t dqpn, std::uint32_t psn) {
    Packet p = test::peer_packet(nic_->device().port().mac, nic_->config().ipv4, op, dqpn, psn);
    p.bth->ackreq = true;
    return p;
  }
  std::vector<std::uint8_t> send_only(std::uint32_t psn, std::size_t len = 16) {
    Packet p = request(opcode::kRcSendOnly, qpn_, psn);
    payload_.assign(len, 0x42);
    p.payload = payload_;
    return encode(p);
  }
  std::vector<std::uint8_t> class_port_info(std::uint64_t tid) {
    Packet p = test::peer_mad(nic_->device().port().mac, nic_->config().ipv4, ClassPortInfo{}, tid);
    p.mad->header.method = mad_method::kGet;
    return encode(p);
  }

  // Feeds one frame at now_; returns what the NIC sent, decoded.
  std::vector<Packet> feed(const std::vector<std::uint8_t>& frame) {
    frames_.clear();
    nic_->receive(frame, now_);
    return sent();
  }
  std::vector<Packet> sent() {
    std::vector<Packet> out;
    for (const auto& f : frames_) out.push_back(decode(f));
    return out;
  }
  // Runs the NIC's timers up to `t`; returns what it sent meanwhile.
  std::vector<Packet> advance_to(std::uint64_t t) {
    frames_.clear();
    while (auto d = nic_->next_deadline()) {
      if (*d > t) break;
      now_ = *d;
      nic_->tick(now_);
    }
    now_ = t;
    nic_->tick(now_);
    return sent();
  }

  static bool acked(const std::vector<Packet>& replies, std::uint32_t psn) {
    return replies.size() == 1 && replies[0].aeth && replies[0].bth->psn == psn &&
           aeth_type(replies[0].aeth->syndrome) == AethType::kAck;
  }
  static bool class_port_info_answer(const std::vector<Packet>& replies) {
    return replies.size() == 1 && replies[0].mad && replies[0].mad->cm &&
           std::holds_alternative<ClassPortInfo>(*replies[0].mad->cm);
  }
  QpState qp_state() { return nic_->device().qp(qpn_)->state(); }
  std::vector<Cqe> poll() { return *nic_->device().poll_cq(cq_, 64); }

  std::unique_ptr<Nic> nic_;
  std::vector<std::vector<std::uint8_t>> frames_;
  std::vector<std::uint8_t> payload_;
  std::uint32_t pd_ = 0, cq_ = 0, qpn_ = 0;
  Mr* mr_ = nullptr;
  std::uint64_t now_ = 1000;
};

// ---- pad-overrun-wedges-qp -----------------------------------------------------------------

TEST_P(FuzzQuirkTest, PadCountAboveThePayloadWedgesTheQp) {
  make(Quirk::kPadOverrunWedgesQp);
  Packet p = request(opcode::kRcSendOnly, qpn_, kPeerFirstPsn);
  p.bth->padcount = 3;  // and no payload at all: 3 pad bytes cannot be there
  EncodeOptions keep;
  keep.fill_pad = false;
  const auto replies = feed(encode(p, keep));
  const bool quirk = GetParam();
  if (!quirk) {
    // A malformed request: NAK invalid request, the QP goes to Error (class C, spec-facts §4.2).
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_EQ(replies[0].aeth->syndrome, syndrome::kNakInvalidRequest);
    EXPECT_EQ(qp_state(), QpState::kErr);
    return;
  }
  EXPECT_TRUE(replies.empty());
  EXPECT_EQ(qp_state(), QpState::kRts) << "wedged, not in Error";
  EXPECT_TRUE(feed(send_only(kPeerFirstPsn)).empty()) << "a valid SEND is not answered";
  EXPECT_TRUE(poll().empty());
  EXPECT_TRUE(class_port_info_answer(feed(class_port_info(7)))) << "the rest of the NIC lives";
}

TEST_P(FuzzQuirkTest, PadCountThatFitsIsNotTheDefect) {
  make(Quirk::kPadOverrunWedgesQp);
  EXPECT_TRUE(
      acked(feed(send_only(kPeerFirstPsn, 13)), kPeerFirstPsn));  // PadCnt 3 over 13 bytes: fine
  EXPECT_TRUE(acked(feed(send_only(kPeerFirstPsn + 1)), kPeerFirstPsn + 1));
}

// ---- unknown-opcode-kills-nic --------------------------------------------------------------

// The rxe report's packet: BTH, 32 bytes, ICRC, a 48-byte UDP payload in all.
std::vector<std::uint8_t> rxe_opcode_probe(Packet p, bool bad_icrc) {
  static const std::vector<std::uint8_t> body(32, 0);
  p.payload = body;
  auto f = encode(p);
  if (bad_icrc) f.back() ^= 0x5A;
  return f;
}

TEST_P(FuzzQuirkTest, UnknownOpcodeToQpnFfffffStopsTheNic) {
  for (const bool bad_icrc : {false, true}) {
    SCOPED_TRACE(bad_icrc ? "bad ICRC" : "good ICRC");
    make(Quirk::kUnknownOpcodeKillsNic);
    frames_.clear();
    EXPECT_TRUE(feed(rxe_opcode_probe(request(0xFF, 0xFFFFFF, 0), bad_icrc)).empty());
    const bool quirk = GetParam();
    EXPECT_EQ(acked(feed(send_only(kPeerFirstPsn)), kPeerFirstPsn), !quirk);
    EXPECT_EQ(class_port_info_answer(feed(class_port_info(9))), !quirk);
    // Dead: nothing sent even by its own requester, and no timer left to run.
    SendWr wr;
    wr.wr_id = 1;
    wr.opcode = WrOpcode::kSend;
    wr.send_flags = send_flag::kSignaled;
    wr.sg_list = {Sge{mr_->addr(), 16, mr_->lkey()}};
    frames_.clear();
    ASSERT_TRUE(nic_->post_send(qpn_, std::vector<SendWr>{wr}));
    EXPECT_EQ(sent().size(), quirk ? 0u : 1u);
    if (quirk) {
      EXPECT_FALSE(nic_->next_deadline());
      EXPECT_TRUE(advance_to(now_ + 10'000 * kMs).empty());
    }
  }
}

TEST_P(FuzzQuirkTest, UnknownOpcodeElsewhereOrKnownOpcodeToFfffffIsDroppedOnly) {
  make(Quirk::kUnknownOpcodeKillsNic);
  EXPECT_TRUE(feed(rxe_opcode_probe(request(0xFF, qpn_, kPeerFirstPsn), false)).empty());
  EXPECT_TRUE(feed(rxe_opcode_probe(request(0x1F, 0xFFFFFE, 0), false)).empty());
  EXPECT_TRUE(feed(rxe_opcode_probe(request(opcode::kRcSendOnly, 0xFFFFFF, 0), false)).empty());
  EXPECT_TRUE(acked(feed(send_only(kPeerFirstPsn)), kPeerFirstPsn));
}

// ---- truncated-aeth-hangs-requester --------------------------------------------------------

TEST_P(FuzzQuirkTest, ReadResponseWithACutAethHangsTheRequester) {
  make(Quirk::kTruncatedAethHangsRequester);
  SendWr read;
  read.wr_id = 5;
  read.opcode = WrOpcode::kRdmaRead;
  read.send_flags = send_flag::kSignaled;
  read.sg_list = {Sge{mr_->addr() + 1024, 64, mr_->lkey()}};
  read.rdma = {0x7000001000ull, 0x5151};
  ASSERT_TRUE(nic_->post_send(qpn_, std::vector<SendWr>{read}));
  ASSERT_EQ(sent().size(), 1u);  // the READ request

  Packet r = request(opcode::kRcReadResponseOnly, qpn_, kOwnFirstPsn);
  r.bth->ackreq = false;
  r.aeth = Aeth{syndrome::kAckUnlimited, 1};
  const std::vector<std::uint8_t> data(64, 0x3C);
  r.payload = data;
  const auto whole = encode(r);
  auto cut = whole;
  ASSERT_TRUE(resize_roce_v2_transport(cut, kIpAt, kBthAt, 2));  // half an AETH
  const Packet d = decode(cut);
  ASSERT_TRUE(d.has(FindingCode::kTruncated));
  ASSERT_TRUE(d.icrc && d.icrc->ok()) << "only the length is wrong";
  EXPECT_TRUE(feed(cut).empty());

  const bool quirk = GetParam();
  // The clean requester sees no response and asks again after its ACK timeout.
  const auto retried = advance_to(now_ + 80 * kMs);
  ASSERT_EQ(retried.size(), quirk ? 0u : 1u);
  if (!quirk) {
    EXPECT_EQ(retried[0].bth->opcode, opcode::kRcReadRequest);
  }
  EXPECT_TRUE(feed(whole).empty());
  const auto cqes = poll();
  if (quirk) {
    EXPECT_TRUE(cqes.empty()) << "no completion, not even after the real response";
    EXPECT_TRUE(advance_to(now_ + 10'000 * kMs).empty()) << "no retry, no error";
    EXPECT_TRUE(poll().empty());
    EXPECT_EQ(qp_state(), QpState::kRts);
  } else {
    ASSERT_EQ(cqes.size(), 1u);
    EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
    EXPECT_EQ(cqes[0].wr_id, 5u);
  }
  // Its responder side still answers.
  EXPECT_TRUE(acked(feed(send_only(kPeerFirstPsn)), kPeerFirstPsn));
}

// ---- malformed-mad-hangs-cm ----------------------------------------------------------------

TEST_P(FuzzQuirkTest, MadOfTheWrongSizeHangsTheCmAgent) {
  for (const std::size_t mad_size : {128u, 16u, 512u}) {
    SCOPED_TRACE(mad_size);
    make(Quirk::kMalformedMadHangsCm);
    auto f = class_port_info(3);
    ASSERT_TRUE(resize_roce_v2_transport(f, kIpAt, kBthAt, Deth::kSize + mad_size));
    ASSERT_TRUE(decode(f).has(FindingCode::kMadLength));
    (void)feed(f);  // the clean agent may answer it or not; it must go on answering
    const bool quirk = GetParam();
    EXPECT_EQ(class_port_info_answer(feed(class_port_info(4))), !quirk);
    EXPECT_EQ(nic_->cm().hung(), quirk);
    EXPECT_TRUE(acked(feed(send_only(kPeerFirstPsn)), kPeerFirstPsn)) << "data still flows";
  }
}

TEST_P(FuzzQuirkTest, RdmaCmHeaderWithIpVersion5HangsTheCmAgent) {
  make(Quirk::kMalformedMadHangsCm);
  std::array<std::uint8_t, kReqPrivateDataSize> pd{};
  CmReq req = test::rdma_cm_req(nic_->config().ipv4, 7471, 0x1111, 0x99, 5, pd);
  pd[1] = static_cast<std::uint8_t>(5 << 4);  // IP version 5
  (void)feed(encode(test::peer_mad(nic_->device().port().mac, nic_->config().ipv4, req, 11)));
  EXPECT_EQ(nic_->cm().hung(), GetParam());
  EXPECT_EQ(class_port_info_answer(feed(class_port_info(12))), !GetParam());
}

TEST_P(FuzzQuirkTest, WellFormedMadsDoNotHangTheCm) {
  make(Quirk::kMalformedMadHangsCm);
  std::array<std::uint8_t, kReqPrivateDataSize> pd{};
  CmReq req = test::rdma_cm_req(nic_->config().ipv4, 7471, 0x1111, 0x99, 5, pd);
  (void)feed(encode(test::peer_mad(nic_->device().port().mac, nic_->config().ipv4, req, 11)));
  EXPECT_FALSE(nic_->cm().hung());
  EXPECT_TRUE(class_port_info_answer(feed(class_port_info(12))));
}

// ---- reth-va-wraps -------------------------------------------------------------------------

TEST_P(FuzzQuirkTest, WriteWhoseVaWrapsPast2To64IsAckedAndLandsOutsideTheRegion) {
  make(Quirk::kRethVaWraps);
  const std::vector<std::uint8_t> before(mr_->bytes().begin(), mr_->bytes().end());
  Packet w = request(opcode::kRcWriteOnly, qpn_, kPeerFirstPsn);
  const std::vector<std::uint8_t> data(64, 0xEE);
  w.reth = Reth{0xFFFFFFFFFFFFFFF0ull, mr_->rkey(), 64};  // wraps to 0x30
  w.payload = data;
  const auto replies = feed(encode(w));
  ASSERT_EQ(replies.size(), 1u);
  if (GetParam()) {
    EXPECT_TRUE(acked(replies, kPeerFirstPsn)) << "the wrong answer: an ACK";
    EXPECT_EQ(qp_state(), QpState::kRts);
  } else {
    EXPECT_EQ(replies[0].aeth->syndrome, syndrome::kNakRemoteAccess);
  }
  EXPECT_TRUE(std::equal(before.begin(), before.end(), mr_->bytes().begin()))
      << "the region itself is untouched either way";
}

TEST_P(FuzzQuirkTest, AccessPastTheRegionThatDoesNotWrapIsStillRefused) {
  make(Quirk::kRethVaWraps);
  Packet w = request(opcode::kRcWriteOnly, qpn_, kPeerFirstPsn);
  const std::vector<std::uint8_t> data(64, 0xEE);
  w.reth = Reth{mr_->addr() + mr_->length() - 32, mr_->rkey(), 64};
  w.payload = data;
  const auto replies = feed(encode(w));
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].aeth->syndrome, syndrome::kNakRemoteAccess);
}

INSTANTIATE_TEST_SUITE_P(CleanAndDefective, FuzzQuirkTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Quirk" : "Clean"; });

}  // namespace
}  // namespace roceconf::target
