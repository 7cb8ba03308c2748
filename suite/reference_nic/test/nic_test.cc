// The NIC's receive pipeline (spec-facts §4.1, §6.5, §7): what is dropped before the transport
// sees it, which counter moves, and the pipeline-level defects (ICRC and P_Key quirks), plus the
// resource-level defects the Device applies (CQ overflow, RESET→RTS).
#include "suite/reference_nic/nic.h"

#include <gtest/gtest.h>

#include <vector>

#include "dissector/icrc.h"
#include "dissector/names.h"
#include "suite/reference_nic/test/peer_frames.h"

namespace roceconf::target {
namespace {

using test::kPeerIp;
using test::kPeerMac;
constexpr std::uint32_t kPeerQpn = 0x77;
// The IPv6 GIDs of the NIC and the peer when a test runs over IPv6 (ipv6_).
constexpr Ipv6Address kOurIp6{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
constexpr Ipv6Address kPeerIp6{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

class NicTest : public ::testing::Test {
 protected:
  void SetUp() override { make({}); }

  void make(Quirks quirks, std::uint16_t pkey = 0xFFFF, std::uint8_t hop_limit = 64,
            std::uint8_t traffic_class = 0) {
    NicConfig config;
    config.quirks = quirks;
    if (ipv6_) config.ipv6 = kOurIp6;
    frames_.clear();
    nic_ = std::make_unique<Nic>(config, [this](std::span<const std::uint8_t> f) {
      frames_.emplace_back(f.begin(), f.end());
    });
    Device& d = nic_->device();
    if (pkey != 0xFFFF) (void)d.port().pkey_table.set(1, pkey);
    pd_ = *d.alloc_pd();
    cq_ = (*d.create_cq(64))->handle();
    mr_ = *d.reg_mr(MrInit{pd_, 8192, access::kAll, std::nullopt, {}});
    qpn_ = (*d.create_qp(QpInit{QpType::kRc, pd_, cq_, cq_, QpCap{8, 8, 1, 1}}))->qp_num();
    using namespace qp_attr;
    QpAttr a;
    a.qp_state = QpState::kInit;
    a.pkey_index = pkey != 0xFFFF ? 1 : 0;
    a.port_num = 1;
    a.qp_access_flags = access::kRemote;
    ASSERT_TRUE(nic_->modify_qp(qpn_, a, kState | kPkeyIndex | kPort | kAccessFlags));
    a.qp_state = QpState::kRtr;
    a.ah_attr.dgid = ipv6_ ? kPeerIp6 : gid_from_ipv4(kPeerIp);
    a.ah_attr.dmac = kPeerMac;
    a.ah_attr.hop_limit = hop_limit;
    a.ah_attr.traffic_class = traffic_class;
    a.path_mtu = PathMtu::k1024;
    a.dest_qp_num = kPeerQpn;
    a.rq_psn = 100;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    ASSERT_TRUE(nic_->modify_qp(
        qpn_, a, kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer));
    for (std::uint64_t i = 0; i < 4; ++i)
      ASSERT_TRUE(nic_->post_recv(
          qpn_, std::vector<RecvWr>{RecvWr{i, {Sge{mr_->addr(), 256, mr_->lkey()}}}}));
  }

  // A SEND ONLY with AckReq from the peer; `len` bytes of payload (pad follows from it).
  Packet send(std::uint32_t psn, std::size_t len = 16, std::uint16_t pkey = 0xFFFF) {
    Packet p = test::peer_packet(nic_->device().port().mac, nic_->config().ipv4,
                                 opcode::kRcSendOnly, qpn_, psn);
    p.bth->pkey = pkey;
    p.bth->ackreq = true;
    if (ipv6_) {
      Ipv6 ip;
      ip.src = kPeerIp6;
      ip.dst = kOurIp6;
      p.ipv4.reset();
      p.ipv6 = ip;
      p.eth->type = ethertype::kIpv6;
    }
    payload_.assign(len, 0x42);
    p.payload = payload_;
    return p;
  }

  // Feeds one frame; returns the frames the NIC sent in reply.
  std::vector<Packet> feed(const std::vector<std::uint8_t>& frame) {
    frames_.clear();
    nic_->receive(frame, ++now_ * 1000);
    std::vector<Packet> out;
    for (const auto& f : frames_) out.push_back(decode(f));
    return out;
  }
  bool acked(const std::vector<Packet>& replies, std::uint32_t psn) {
    return replies.size() == 1 && replies[0].aeth && replies[0].bth->psn == psn &&
           aeth_type(replies[0].aeth->syndrome) == AethType::kAck;
  }
  const Counters& counters() { return nic_->device().counters(); }

  bool ipv6_ = false;  // the QP's peer, and the frames send() makes, over the IPv6 GIDs
  std::unique_ptr<Nic> nic_;
  std::vector<std::vector<std::uint8_t>> frames_;
  std::vector<std::uint8_t> payload_;
  std::uint32_t pd_ = 0, cq_ = 0, qpn_ = 0;
  Mr* mr_ = nullptr;
  std::uint64_t now_ = 0;
};

std::vector<std::uint8_t> corrupt_icrc(std::vector<std::uint8_t> f) {
  f.back() ^= 0x5A;
  return f;
}

TEST_F(NicTest, ValidRequestIsAcked) {
  EXPECT_TRUE(acked(feed(encode(send(100))), 100));
  EXPECT_EQ(counters().rx_packets, 1u);
}

TEST_F(NicTest, BadIcrcIsDroppedSilentlyAndCountedThenTheSamePsnWorks) {
  EXPECT_TRUE(feed(corrupt_icrc(encode(send(100)))).empty());
  EXPECT_EQ(counters().icrc_error, 1u);
  EXPECT_EQ(counters().bad_pkey, 0u);  // checked before the keys: never a key violation
  EXPECT_TRUE(acked(feed(encode(send(100))), 100));
}

TEST_F(NicTest, IcrcIsCheckedBeforeThePkey) {
  EXPECT_TRUE(feed(corrupt_icrc(encode(send(100, 16, 0x1234)))).empty());
  EXPECT_EQ(counters().icrc_error, 1u);
  EXPECT_EQ(counters().bad_pkey, 0u);
}

TEST_F(NicTest, QuirkIcrcUncheckedAcceptsBadIcrc) {
  Quirks q;
  q.set(Quirk::kIcrcUnchecked);
  make(q);
  EXPECT_TRUE(acked(feed(corrupt_icrc(encode(send(100)))), 100));
}

TEST_F(NicTest, QuirkSmallBadIcrcAcceptedOnlyBelow65Bytes) {
  Quirks q;
  q.set(Quirk::kSmallBadIcrcAccepted);
  make(q);
  const auto small = corrupt_icrc(encode(send(100, 4)));  // 14+20+8+12+4+4 = 62 bytes
  ASSERT_LT(small.size(), 65u);
  EXPECT_TRUE(acked(feed(small), 100));
  const auto large = corrupt_icrc(encode(send(101, 64)));
  EXPECT_TRUE(feed(large).empty());
  EXPECT_EQ(counters().icrc_error, 1u);
}

TEST_F(NicTest, QuirkIcrcPadExcludedRejectsCorrectIcrcsWithPadAndSendsWrongOnes) {
  Quirks q;
  q.set(Quirk::kIcrcPadExcluded);
  make(q);
  // No pad: both computations agree, so the packet passes and the ACK (no payload) checks.
  const auto replies = feed(encode(send(100, 16)));
  ASSERT_TRUE(acked(replies, 100));
  EXPECT_TRUE(replies[0].icrc->ok());
  // Pad 3: a correct ICRC is refused.
  EXPECT_TRUE(feed(encode(send(101, 13))).empty());
  EXPECT_EQ(counters().icrc_error, 1u);
  // A 13-byte READ response carries pad 3: its ICRC leaves the pad out, so it does not check.
  Packet read = send(101, 0);
  read.bth->opcode = opcode::kRcReadRequest;
  read.reth = Reth{mr_->addr(), mr_->rkey(), 13};
  const auto response = feed(encode(read));
  ASSERT_EQ(response.size(), 1u);
  EXPECT_EQ(response[0].bth->opcode, opcode::kRcReadResponseOnly);
  EXPECT_EQ(response[0].bth->padcount, 3);
  EXPECT_FALSE(response[0].icrc->ok());
}

TEST_F(NicTest, FramingFollowsTheAvAndTheFramingQuirksBreakIt) {
  // TTL and DSCP from the AV; ECN 00 whatever the traffic class's low bits (no congestion
  // management modelled, CA17-5); DF set.
  make({}, 0xFFFF, 17, 0x6B);
  auto replies = feed(encode(send(100)));
  ASSERT_TRUE(acked(replies, 100));
  EXPECT_EQ(replies[0].ipv4->ttl, 17);
  EXPECT_EQ(replies[0].ipv4->dscp, 0x6B >> 2);
  EXPECT_EQ(replies[0].ipv4->ecn, 0);
  EXPECT_TRUE(replies[0].ipv4->df);
  Quirks q;
  q.set(Quirk::kTtlFixed64);
  q.set(Quirk::kEcnEctWithoutCc);
  q.set(Quirk::kDfClear);
  make(q, 0xFFFF, 17, 0x68);
  replies = feed(encode(send(100)));
  ASSERT_TRUE(acked(replies, 100));
  EXPECT_EQ(replies[0].ipv4->ttl, 64);
  EXPECT_EQ(replies[0].ipv4->dscp, 0x68 >> 2);
  EXPECT_EQ(replies[0].ipv4->ecn, 2);  // ECT(0)
  EXPECT_FALSE(replies[0].ipv4->df);
}

TEST_F(NicTest, OverIpv6FramingFollowsTheAvAndTheIpv6QuirksBreakIt) {
  // The IPv6 GID is in the table as a RoCEv2 GID; replies come from it, to the peer's GID,
  // with the AV's hop limit and traffic class (ECN 00), a payload length that counts the ICRC.
  ipv6_ = true;
  make({}, 0xFFFF, 17, 0x6B);
  const auto index = nic_->device().port().gid_table.find(kOurIp6);
  ASSERT_TRUE(index);
  EXPECT_EQ(nic_->device().port().gid_table.at(*index)->gid_type, GidType::kRoceV2);
  auto replies = feed(encode(send(100)));
  ASSERT_TRUE(acked(replies, 100));
  ASSERT_TRUE(replies[0].ipv6);
  EXPECT_EQ(replies[0].ipv6->src, kOurIp6);
  EXPECT_EQ(replies[0].ipv6->dst, kPeerIp6);
  EXPECT_EQ(replies[0].ipv6->hop_limit, 17);
  EXPECT_EQ(replies[0].ipv6->traffic_class, 0x68);
  EXPECT_EQ(replies[0].ipv6->next_header, kIpProtoUdp);
  EXPECT_EQ(replies[0].ipv6->payload_length, frames_[0].size() - Ethernet::kSize - Ipv6::kSize);
  EXPECT_TRUE(replies[0].icrc->ok());
  // A bad ICRC over IPv6 is dropped and counted.
  EXPECT_TRUE(feed(corrupt_icrc(encode(send(101)))).empty());
  EXPECT_EQ(counters().icrc_error, 1u);

  Quirks q;
  q.set(Quirk::kIpv6HopLimitFixed);
  q.set(Quirk::kIpv6TrafficClassZero);
  make(q, 0xFFFF, 17, 0x68);
  replies = feed(encode(send(100)));
  ASSERT_TRUE(acked(replies, 100));
  EXPECT_EQ(replies[0].ipv6->hop_limit, 64);
  EXPECT_EQ(replies[0].ipv6->traffic_class, 0);
  // Over IPv4 the same NIC follows the AV.
  ipv6_ = false;
  make(q, 0xFFFF, 17, 0x68);
  replies = feed(encode(send(100)));
  ASSERT_TRUE(acked(replies, 100));
  EXPECT_EQ(replies[0].ipv4->ttl, 17);
  EXPECT_EQ(replies[0].ipv4->dscp, 0x68 >> 2);
}

TEST_F(NicTest, QuirkIpv6PlenWithoutIcrcLeavesOutTheTrailer) {
  ipv6_ = true;
  Quirks q;
  q.set(Quirk::kIpv6PlenWithoutIcrc);
  make(q);
  ASSERT_FALSE(feed(encode(send(100))).empty());
  ASSERT_EQ(frames_.size(), 1u);
  const auto& f = frames_[0];
  const std::uint16_t plen = be::load16(&f[Ethernet::kSize + 4]);
  EXPECT_EQ(plen + 4u, f.size() - Ethernet::kSize - Ipv6::kSize);
}

TEST_F(NicTest, QuirkIpv6IcrcUncheckedAcceptsBadIcrcOverIpv6Only) {
  Quirks q;
  q.set(Quirk::kIpv6IcrcUnchecked);
  make(q);
  EXPECT_TRUE(feed(corrupt_icrc(encode(send(100)))).empty());  // IPv4: checked
  ipv6_ = true;
  make(q);
  EXPECT_TRUE(acked(feed(corrupt_icrc(encode(send(100)))), 100));
}

TEST_F(NicTest, PkeyMismatchIsDroppedAndCountedThenTheQpStillWorks) {
  EXPECT_TRUE(feed(encode(send(100, 16, 0x1234))).empty());
  EXPECT_EQ(counters().bad_pkey, 1u);
  EXPECT_TRUE(acked(feed(encode(send(100))), 100));
}

TEST_F(NicTest, PkeyMembershipMatrix) {
  // QP in partition 0x0123 as a limited member.
  make({}, 0x0123);
  EXPECT_TRUE(feed(encode(send(100, 16, 0x0123))).empty());      // limited/limited: no match
  EXPECT_TRUE(acked(feed(encode(send(100, 16, 0x8123))), 100));  // full/limited: match
  make({}, 0x8123);
  EXPECT_TRUE(acked(feed(encode(send(100, 16, 0x0123))), 100));  // limited/full: match
  EXPECT_TRUE(feed(encode(send(101, 16, 0x8124))).empty());      // other partition
}

TEST_F(NicTest, QuirkPkeyLimitedMatchAcceptsTwoLimitedMembers) {
  Quirks q;
  q.set(Quirk::kPkeyLimitedMatch);
  make(q, 0x0123);
  EXPECT_TRUE(acked(feed(encode(send(100, 16, 0x0123))), 100));
  EXPECT_TRUE(feed(encode(send(101, 16, 0x0124))).empty());  // still partition-checked
}

TEST_F(NicTest, QuirkPkeyUncheckedAcceptsAnyPkey) {
  Quirks q;
  q.set(Quirk::kPkeyUnchecked);
  make(q);
  EXPECT_TRUE(acked(feed(encode(send(100, 16, 0x1234))), 100));
  EXPECT_EQ(counters().bad_pkey, 0u);
}

TEST_F(NicTest, TverReservedOpcodeQp0AndUnknownQpAreDropped) {
  Packet p = send(100);
  p.bth->version = 1;
  EXPECT_TRUE(feed(encode(p)).empty());
  p = send(100);
  p.bth->opcode = 0x18;
  EXPECT_TRUE(feed(encode(p)).empty());
  p = send(100);
  p.bth->dqpn = 0;
  EXPECT_TRUE(feed(encode(p)).empty());
  p = send(100);
  p.bth->dqpn = 0x999;
  EXPECT_TRUE(feed(encode(p)).empty());
  EXPECT_EQ(counters().unknown_qp, 1u);
  EXPECT_TRUE(acked(feed(encode(send(100))), 100));  // none of them moved the expected PSN
}

TEST_F(NicTest, WrongSourceAddressOrServiceIsDropped) {
  Packet p = send(100);
  p.ipv4->src = {192, 0, 2, 99};  // not the connected peer
  EXPECT_TRUE(feed(encode(p)).empty());
  p = send(100);
  p.bth->opcode = 0x24;  // UC SEND ONLY to an RC QP
  EXPECT_TRUE(feed(encode(p)).empty());
  p = send(100);
  p.ipv4->dst = {192, 0, 2, 77};  // not our address
  EXPECT_TRUE(feed(encode(p)).empty());
  EXPECT_EQ(counters().rx_packets, 2u);  // the last one was never ours
}

// ---- Annex A17 IPv4 framing (CA17-3, -6, -7, -8, -21, -24, -27) and QP0 (CA17-33) --------------

// `frame` with its IP total length and UDP length moved by the deltas, the header checksum and
// the ICRC computed over the new values (only the lengths are wrong).
std::vector<std::uint8_t> with_lengths(std::vector<std::uint8_t> f, int ip_delta, int udp_delta) {
  constexpr std::size_t ip = Ethernet::kSize;
  const std::size_t hl = std::size_t{f[ip] & 0x0Fu} * 4;
  be::store16(&f[ip + 2], static_cast<std::uint16_t>(be::load16(&f[ip + 2]) + ip_delta));
  be::store16(&f[ip + hl + 4], static_cast<std::uint16_t>(be::load16(&f[ip + hl + 4]) + udp_delta));
  be::store16(&f[ip + 10], 0);
  be::store16(&f[ip + 10], ipv4_checksum(Bytes(f).subspan(ip, hl)));
  const std::size_t icrc_at = f.size() - 4;
  store_icrc(&f[icrc_at], compute_icrc(Bytes(f).subspan(ip, icrc_at - ip), IcrcFraming::kRoceV2Ipv4,
                                       hl + Udp::kSize));
  return f;
}

class NicFramingTest : public NicTest {
 protected:
  // The frames the checks must drop, each well-formed but for one IPv4 or BTH field.
  std::vector<std::vector<std::uint8_t>> broken(std::uint32_t psn, Quirk which) {
    std::vector<std::vector<std::uint8_t>> out;
    Packet p = send(psn, 32);
    switch (which) {
      case Quirk::kQp0Accepted:
        p.bth->dqpn = 0;
        out.push_back(encode(p));
        break;
      case Quirk::kIpVersionUnchecked:
        p.ipv4->version = 6;
        out.push_back(encode(p));
        break;
      case Quirk::kIpOptionsAccepted:
        p.ipv4_options = options_;  // IHL 6, lengths and checksum follow
        out.push_back(encode(p));
        break;
      case Quirk::kIpFragmentsAccepted:
        p.ipv4->mf = true;
        p.ipv4->df = false;
        out.push_back(encode(p));
        break;
      default:
        // One PSN each, so a NIC that takes them executes each one.
        for (const auto& [ip, udp] : {std::pair{1, 0}, {-1, 0}, {0, 1}, {0, -1}})
          out.push_back(with_lengths(encode(send(psn++, 32)), ip, udp));
        break;
    }
    return out;
  }
  const std::array<std::uint8_t, 4> options_{0x94, 0x04, 0x00, 0x00};  // Router Alert
};

TEST_F(NicFramingTest, BrokenFramingIsDroppedAndTheSamePsnThenWorks) {
  for (const Quirk q : {Quirk::kQp0Accepted, Quirk::kIpVersionUnchecked, Quirk::kIpOptionsAccepted,
                        Quirk::kIpFragmentsAccepted, Quirk::kIpLengthUnchecked}) {
    SCOPED_TRACE(quirk_info(q).name);
    make({});
    for (const auto& f : broken(100, q)) EXPECT_TRUE(feed(f).empty());
    EXPECT_EQ(counters().icrc_error, 0u);  // dropped for the framing, not the ICRC
    EXPECT_TRUE(acked(feed(encode(send(100, 32))), 100));
  }
}

TEST_F(NicFramingTest, EachFramingQuirkAcceptsWhatItShouldDrop) {
  for (const Quirk q : {Quirk::kQp0Accepted, Quirk::kIpVersionUnchecked, Quirk::kIpOptionsAccepted,
                        Quirk::kIpFragmentsAccepted, Quirk::kIpLengthUnchecked}) {
    SCOPED_TRACE(quirk_info(q).name);
    Quirks quirks;
    quirks.set(q);
    make(quirks);
    std::uint32_t psn = 100;
    for (const auto& f : broken(psn, q)) {
      EXPECT_TRUE(acked(feed(f), psn));
      ++psn;
    }
  }
}

TEST_F(NicFramingTest, LengthQuirkStillChecksTheIcrcOfTheBytesThatArrived) {
  Quirks quirks;
  quirks.set(Quirk::kIpLengthUnchecked);
  make(quirks);
  auto f = with_lengths(encode(send(100, 32)), 1, 0);
  f[f.size() - 1] ^= 0x5A;
  EXPECT_TRUE(feed(f).empty());
  EXPECT_EQ(counters().icrc_error, 1u);
}

// ---- responder corner cases (C9-88, C9-94, C9-205, C10-87) --------------------------------------

TEST_F(NicTest, ZeroLengthRdmaIgnoresTheRkeyUnlessTheQuirkChecksIt) {
  for (const bool quirk : {false, true}) {
    Quirks q;
    q.set(Quirk::kZeroLengthRkeyChecked, quirk);
    make(q);
    Packet w = send(100, 0);
    w.bth->opcode = opcode::kRcWriteOnly;
    w.reth = Reth{mr_->addr(), 0x5A5A5A5A, 0};
    const auto r = feed(encode(w));
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].aeth->syndrome, quirk ? syndrome::kNakRemoteAccess : 0x1F);
    if (quirk) continue;
    Packet read = send(101, 0);
    read.bth->opcode = opcode::kRcReadRequest;
    read.reth = Reth{0, 0x5A5A5A5A, 0};
    const auto resp = feed(encode(read));
    ASSERT_EQ(resp.size(), 1u);
    EXPECT_EQ(resp[0].bth->opcode, opcode::kRcReadResponseOnly);
    EXPECT_TRUE(resp[0].payload.empty());
  }
}

TEST_F(NicTest, DmaLengthOver2GIsAnInvalidRequestUnlessTheQuirkSkipsIt) {
  for (const bool quirk : {false, true}) {
    Quirks q;
    q.set(Quirk::kDmaLengthUnchecked, quirk);
    make(q);
    Packet w = send(100, 1024);
    w.bth->opcode = opcode::kRcWriteFirst;
    w.reth = Reth{mr_->addr(), mr_->rkey(), 0x80000001u};
    const auto r = feed(encode(w));
    ASSERT_EQ(r.size(), 1u);
    // With the defect the range check is what fails: remote access error.
    EXPECT_EQ(r[0].aeth->syndrome,
              quirk ? syndrome::kNakRemoteAccess : syndrome::kNakInvalidRequest);
  }
}

TEST_F(NicTest, SendLongerThanTheReceiveIsALengthErrorUnlessTheQuirkTruncates) {
  for (const bool quirk : {false, true}) {
    Quirks q;
    q.set(Quirk::kSendOverflowTruncated, quirk);
    make(q);
    const auto r = feed(encode(send(100, 512)));  // the receives hold 256 bytes
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].aeth->syndrome, quirk ? 0x1F : syndrome::kNakInvalidRequest);
    auto wc = nic_->device().poll_cq(cq_, 8);
    ASSERT_TRUE(wc);
    ASSERT_FALSE(wc->empty());
    EXPECT_EQ((*wc)[0].status, quirk ? WcStatus::kSuccess : WcStatus::kLocLenErr);
    if (quirk) {
      EXPECT_EQ((*wc)[0].byte_len, 256u);
    }
    EXPECT_EQ(nic_->device().qp(qpn_)->state(), quirk ? QpState::kRtr : QpState::kErr);
  }
}

TEST_F(NicTest, WriteWithoutImmediateConsumesNoReceiveUnlessTheQuirkTakesOne) {
  for (const bool quirk : {false, true}) {
    Quirks q;
    q.set(Quirk::kWriteConsumesReceive, quirk);
    make(q);
    Packet w = send(100, 64);
    w.bth->opcode = opcode::kRcWriteOnly;
    w.reth = Reth{mr_->addr(), mr_->rkey(), 64};
    EXPECT_TRUE(acked(feed(encode(w)), 100));
    auto wc = nic_->device().poll_cq(cq_, 8);
    ASSERT_TRUE(wc);
    EXPECT_EQ(wc->size(), quirk ? 1u : 0u);
  }
}

TEST(NicDevice, QuirkIllegalTransitionAcceptedTakesResetToRts) {
  for (const bool quirk : {false, true}) {
    NicConfig config;
    config.quirks.set(Quirk::kIllegalTransitionAccepted, quirk);
    Nic nic(config, [](std::span<const std::uint8_t>) {});
    Device& d = nic.device();
    const std::uint32_t pd = *d.alloc_pd();
    const std::uint32_t cq = (*d.create_cq(4))->handle();
    const std::uint32_t qpn =
        (*d.create_qp(QpInit{QpType::kRc, pd, cq, cq, QpCap{1, 1, 1, 1}}))->qp_num();
    QpAttr a;
    a.qp_state = QpState::kRts;
    const auto r = nic.modify_qp(qpn, a, qp_attr::kState);
    EXPECT_EQ(r.has_value(), quirk);
    EXPECT_EQ(d.qp(qpn)->state(), quirk ? QpState::kRts : QpState::kReset);
  }
}

TEST(NicDevice, QuirkCqOverflowLateReportsOneCompletionLateAsQpFatal) {
  for (const bool quirk : {false, true}) {
    DeviceConfig config;
    config.quirks.set(Quirk::kCqOverflowLate, quirk);
    Device d(config);
    Cq* cq = *d.create_cq(2);
    for (int i = 0; i < 3; ++i)
      cq->push(Cqe{.wr_id = static_cast<std::uint64_t>(i), .qp_num = 0x42}, false);
    auto events = d.async_events();
    if (!quirk) {
      ASSERT_EQ(events.size(), 1u);  // at depth+1
      EXPECT_EQ(events[0].event_type, AsyncEventType::kCqErr);
      continue;
    }
    EXPECT_TRUE(events.empty());  // depth+1 lost silently
    cq->push(Cqe{.wr_id = 3, .qp_num = 0x42}, false);
    events = d.async_events();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].event_type, AsyncEventType::kQpFatal);
    EXPECT_EQ(events[0].element, 0x42u);
  }
}

}  // namespace
}  // namespace roceconf::target
