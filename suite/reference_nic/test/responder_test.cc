#include "suite/reference_nic/responder.h"

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "dissector/analysis/psn.h"
#include "dissector/names.h"
#include "suite/reference_nic/nic.h"

namespace roceconf::target {
namespace {

using namespace opcode;

constexpr Ipv4Address kPeerIp{192, 0, 2, 1};
constexpr MacAddress kPeerMac{0x02, 0, 0, 0, 0, 0x02};
constexpr std::uint32_t kPeerQpn = 0x99;
constexpr std::uint32_t kUdQkey = 0x11111111;
constexpr std::uint8_t kAck = 0x1F;
constexpr std::uint32_t kHalf = psn::kHalf;

struct QpOptions {
  QpType type = QpType::kRc;
  PathMtu mtu = PathMtu::k1024;
  std::uint32_t rq_psn = 1000;
  AccessFlags access = access::kLocalWrite | access::kRemote;
  std::uint8_t max_dest_rd_atomic = 4;
  std::uint8_t min_rnr_timer = 12;
  bool to_rts = true;
  std::uint16_t pkey_index = 0;
};

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed = 1) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 7);
  return v;
}

// A NIC on a virtual clock whose transmitted frames are collected, with one PD,
// one CQ and one 64 KiB MR (remote targets in its first half, receive buffers
// in its second).
class ResponderTest : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kRecvArea = 32 * 1024;

  void SetUp() override { make_nic({}); }

  void make_nic(Quirks quirks) {
    NicConfig config;
    config.quirks = quirks;
    frames_.clear();
    nic_ = std::make_unique<Nic>(config, [this](std::span<const std::uint8_t> f) {
      frames_.emplace_back(f.begin(), f.end());
    });
    pd_ = *nic_->device().alloc_pd();
    cq_ = (*nic_->device().create_cq(1024))->handle();
    mr_ = *nic_->device().reg_mr(MrInit{pd_, 64 * 1024, access::kAll, std::nullopt, {}});
  }
  void with_quirk(Quirk q) {
    Quirks quirks;
    quirks.set(q);
    make_nic(quirks);
  }

  std::uint32_t make_qp(const QpOptions& o = {}) {
    Qp* qp = *nic_->device().create_qp(QpInit{o.type, pd_, cq_, cq_, QpCap{16, 64, 4, 4}});
    using namespace qp_attr;
    QpAttr a;
    a.qp_state = QpState::kInit;
    a.pkey_index = o.pkey_index;
    a.port_num = 1;
    a.qp_access_flags = o.access;
    a.qkey = kUdQkey;
    const bool ud = o.type == QpType::kUd;
    auto r =
        nic_->modify_qp(qp->qp_num(), a, kState | kPkeyIndex | kPort | (ud ? kQkey : kAccessFlags));
    EXPECT_TRUE(r) << r.error().message;
    a.qp_state = QpState::kRtr;
    a.ah_attr.dgid = gid_from_ipv4(kPeerIp);
    a.ah_attr.dmac = kPeerMac;
    a.path_mtu = o.mtu;
    a.dest_qp_num = kPeerQpn;
    a.rq_psn = o.rq_psn;
    a.max_dest_rd_atomic = o.max_dest_rd_atomic;
    a.min_rnr_timer = o.min_rnr_timer;
    QpAttrMask rtr = kState;
    if (o.type == QpType::kRc)
      rtr |= kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer;
    if (o.type == QpType::kUc) rtr |= kAv | kPathMtu | kDestQpn | kRqPsn;
    r = nic_->modify_qp(qp->qp_num(), a, rtr);
    EXPECT_TRUE(r) << r.error().message;
    if (o.to_rts) {
      a.qp_state = QpState::kRts;
      a.sq_psn = 0;
      a.timeout = 14;
      a.retry_cnt = 7;
      a.rnr_retry = 7;
      a.max_rd_atomic = 4;
      QpAttrMask rts = kState | kSqPsn;
      if (o.type == QpType::kRc) rts |= kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic;
      r = nic_->modify_qp(qp->qp_num(), a, rts);
      EXPECT_TRUE(r) << r.error().message;
    }
    return qp->qp_num();
  }

  // Posts a receive WQE of `len` bytes in the receive area (one SGE); returns
  // its address.
  std::uint64_t post_recv(std::uint32_t qpn, std::uint64_t wr_id, std::uint32_t len = 4096) {
    const std::uint64_t addr = mr_->addr() + kRecvArea + next_recv_;
    next_recv_ = (next_recv_ + len + 64) % (32 * 1024 - 8192);
    const std::vector<RecvWr> wr{RecvWr{wr_id, {Sge{addr, len, mr_->lkey()}}}};
    EXPECT_TRUE(nic_->post_recv(qpn, wr));
    return addr;
  }

  Packet request(std::uint32_t qpn, std::uint8_t op, std::uint32_t psn, Bytes payload = {},
                 bool ackreq = false) {
    Packet p;
    p.eth = Ethernet{nic_->device().port().mac, kPeerMac, ethertype::kIpv4};
    Ipv4 ip;
    ip.src = kPeerIp;
    ip.dst = nic_->config().ipv4;
    p.ipv4 = ip;
    p.udp = Udp{};
    Bth b;
    b.opcode = op;
    b.dqpn = qpn;
    b.psn = psn & psn::kMask;
    b.ackreq = ackreq;
    p.bth = b;
    p.payload = payload;
    return p;
  }
  Packet send_only(std::uint32_t qpn, std::uint32_t psn, Bytes payload, bool ackreq = true) {
    return request(qpn, kRcSendOnly, psn, payload, ackreq);
  }
  Packet write(std::uint32_t qpn, std::uint8_t op, std::uint32_t psn, Bytes payload,
               std::uint64_t va = 0, std::uint32_t rkey = 0, std::uint32_t dmalen = 0) {
    Packet p = request(qpn, op, psn, payload, true);
    if (opcode_info(op).headers & hdr::kReth) p.reth = Reth{va, rkey, dmalen};
    return p;
  }
  Packet read(std::uint32_t qpn, std::uint32_t psn, std::uint64_t va, std::uint32_t rkey,
              std::uint32_t len) {
    Packet p = request(qpn, kRcReadRequest, psn);
    p.reth = Reth{va, rkey, len};
    return p;
  }
  Packet atomic(std::uint32_t qpn, std::uint8_t op, std::uint32_t psn, std::uint64_t va,
                std::uint64_t swap_add, std::uint64_t compare = 0) {
    Packet p = request(qpn, op, psn);
    p.atomiceth = AtomicEth{va, mr_->rkey(), swap_add, compare};
    return p;
  }

  void inject(const Packet& p, const EncodeOptions& options = {}) {
    now_ += 1000;
    nic_->receive(encode(p, options), now_);
  }

  // Frames sent since the last call, decoded (their bytes are kept for the
  // test's lifetime).
  std::vector<Packet> sent() {
    std::vector<Packet> out;
    while (!frames_.empty()) {
      kept_.push_back(std::move(frames_.front()));
      frames_.pop_front();
      out.push_back(decode(kept_.back()));
    }
    return out;
  }
  // Exactly one frame was sent: it.
  Packet one() {
    auto out = sent();
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? Packet{} : out.back();
  }

  static void expect_ack(const Packet& p, std::uint8_t syndrome, std::uint32_t psn,
                         std::optional<std::uint32_t> msn = std::nullopt) {
    ASSERT_TRUE(p.bth && p.aeth);
    EXPECT_EQ(p.bth->opcode, kRcAck);
    EXPECT_EQ(p.aeth->syndrome, syndrome) << syndrome_name(p.aeth->syndrome);
    EXPECT_EQ(p.bth->psn, psn & psn::kMask);
    EXPECT_EQ(p.bth->dqpn, kPeerQpn);
    if (msn) {
      EXPECT_EQ(p.aeth->msn, *msn);
    }
    EXPECT_TRUE(p.icrc && p.icrc->ok());
  }

  Qp& qp(std::uint32_t qpn) { return *nic_->device().qp(qpn); }
  Cq& cq() { return *nic_->device().cq(cq_); }
  std::uint32_t epsn(std::uint32_t qpn) { return nic_->responder().state(qpn)->epsn; }
  Counters& counters() { return nic_->device().counters(); }
  std::span<std::uint8_t> memory(std::uint64_t va, std::size_t len) { return mr_->range(va, len); }
  std::uint64_t va(std::uint64_t offset = 0) const { return mr_->addr() + offset; }
  bool has_event(AsyncEventType type, std::uint32_t element) {
    for (const AsyncEvent& e : events_seen_) {
      if (e.event_type == type && e.element == element) return true;
    }
    for (const AsyncEvent& e : nic_->device().async_events()) {
      events_seen_.push_back(e);
      if (e.event_type == type && e.element == element) return true;
    }
    return false;
  }

  std::unique_ptr<Nic> nic_;
  std::uint32_t pd_ = 0;
  std::uint32_t cq_ = 0;
  Mr* mr_ = nullptr;
  std::uint64_t now_ = 0;
  std::uint64_t next_recv_ = 0;
  std::deque<std::vector<std::uint8_t>> frames_;
  std::deque<std::vector<std::uint8_t>> kept_;
  std::vector<AsyncEvent> events_seen_;
};

// ---- PSN regions
// ----------------------------------------------------------------------------

TEST_F(ResponderTest, PsnRegionsAroundTheExpectedPsn) {
  struct Case {
    std::int64_t offset;
    bool invalid;  // else duplicate
  };
  // ±(2^23 - 1) and exactly 2^23 (which counts as behind: the duplicate half,
  // spec-facts §4.2).
  const Case cases[] = {
      {1, true},   {kHalf - 1, true},     {kHalf, false},
      {-1, false}, {-(kHalf - 1), false}, {-static_cast<std::int64_t>(kHalf), false}};
  const auto data = pattern(16);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.offset);
    const std::uint32_t start = 5000;
    const std::uint32_t qpn = make_qp({.rq_psn = start});
    post_recv(qpn, 1);
    const Counters before = counters();
    inject(send_only(qpn, psn::add(start, c.offset), data));
    if (c.invalid) {
      expect_ack(one(), syndrome::kNakPsnSeqError, start, 0);
      EXPECT_EQ(counters().out_of_sequence, before.out_of_sequence + 1);
      EXPECT_EQ(counters().seq_nak_sent, before.seq_nak_sent + 1);
    } else {
      // Re-ACKed with the last acknowledged PSN, never executed.
      expect_ack(one(), kAck, start - 1, 0);
      EXPECT_EQ(counters().duplicate_request, before.duplicate_request + 1);
    }
    EXPECT_EQ(qp(qpn).recv_queue().size(), 1u);
    EXPECT_EQ(epsn(qpn), start);
  }
  EXPECT_EQ(cq().size(), 0u);
}

TEST_F(ResponderTest, PsnWrapsFromFFFFFFToZero) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0xFFFFFF});
  post_recv(qpn, 1);
  post_recv(qpn, 2);
  const auto data = pattern(8);
  inject(send_only(qpn, 0xFFFFFF, data));
  expect_ack(one(), kAck, 0xFFFFFF, 1);
  EXPECT_EQ(epsn(qpn), 0u);
  inject(send_only(qpn, 0, data));
  expect_ack(one(), kAck, 0, 2);
  EXPECT_EQ(epsn(qpn), 1u);
  // 0xFFFFFF is now a duplicate, 2 ahead.
  inject(send_only(qpn, 0xFFFFFF, data));
  expect_ack(one(), kAck, 0, 2);
  inject(send_only(qpn, 2, data));
  expect_ack(one(), syndrome::kNakPsnSeqError, 1, 2);
}

TEST_F(ResponderTest, ReadAcrossTheWrapConsumesOnePsnPerResponse) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0xFFFFFE});
  inject(read(qpn, 0xFFFFFE, va(), mr_->rkey(), 2500));
  const auto out = sent();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].bth->psn, 0xFFFFFEu);
  EXPECT_EQ(out[1].bth->psn, 0xFFFFFFu);
  EXPECT_EQ(out[2].bth->psn, 0u);
  EXPECT_EQ(epsn(qpn), 1u);
}

TEST_F(ResponderTest, OneNakPerGapThenSilenceThenRecovery) {
  const std::uint32_t qpn = make_qp({.rq_psn = 100});
  for (int i = 0; i < 4; ++i) post_recv(qpn, i);
  const auto data = pattern(32);
  inject(send_only(qpn, 102, data));
  expect_ack(one(), syndrome::kNakPsnSeqError, 100, 0);
  inject(send_only(qpn, 103, data));
  inject(send_only(qpn, 104, data));
  EXPECT_TRUE(sent().empty());  // the rest of the gap: silence
  EXPECT_EQ(counters().out_of_sequence, 3u);
  EXPECT_EQ(counters().seq_nak_sent, 1u);

  // The expected PSN clears the latch and is processed.
  inject(send_only(qpn, 100, data));
  expect_ack(one(), kAck, 100, 1);
  inject(send_only(qpn, 101, data));
  expect_ack(one(), kAck, 101, 2);
  // A new gap gets its own NAK.
  inject(send_only(qpn, 103, data));
  expect_ack(one(), syndrome::kNakPsnSeqError, 102, 2);
  EXPECT_EQ(counters().seq_nak_sent, 2u);
  EXPECT_EQ(cq().size(), 2u);
}

// ---- duplicates
// -----------------------------------------------------------------------------

TEST_F(ResponderTest, DuplicateSendIsReAckedAndNotExecuted) {
  const std::uint32_t qpn = make_qp({.rq_psn = 10});
  post_recv(qpn, 1);
  post_recv(qpn, 2);
  const auto data = pattern(64);
  inject(send_only(qpn, 10, data));
  expect_ack(one(), kAck, 10, 1);
  ASSERT_EQ(cq().size(), 1u);
  // Retransmitted (AckReq clear: C9-105 re-ACKs anyway).
  inject(send_only(qpn, 10, data, false));
  expect_ack(one(), kAck, 10, 1);
  EXPECT_EQ(cq().size(), 1u);
  EXPECT_EQ(qp(qpn).recv_queue().size(), 1u);
  EXPECT_EQ(counters().duplicate_request, 1u);
  EXPECT_EQ(epsn(qpn), 11u);
}

TEST_F(ResponderTest, DuplicateWriteIsNotExecuted) {
  const std::uint32_t qpn = make_qp({.rq_psn = 10});
  const auto data = pattern(64, 3);
  inject(write(qpn, kRcWriteOnly, 10, data, va(), mr_->rkey(), 64));
  expect_ack(one(), kAck, 10, 1);
  ASSERT_TRUE(std::ranges::equal(memory(va(), 64), data));
  std::ranges::fill(memory(va(), 64), 0xEE);  // the application moved on
  inject(write(qpn, kRcWriteOnly, 10, data, va(), mr_->rkey(), 64));
  expect_ack(one(), kAck, 10, 1);
  EXPECT_EQ(memory(va(), 64)[0], 0xEE);
}

TEST_F(ResponderTest, DuplicateReadIsReplayedFromItsResource) {
  const std::uint32_t qpn = make_qp({.rq_psn = 50});
  const auto data = pattern(3000, 9);
  std::ranges::copy(data, memory(va(), 3000).begin());
  inject(read(qpn, 50, va(), mr_->rkey(), 3000));
  const auto first = sent();
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(epsn(qpn), 53u);

  // The whole READ again: the same responses, PSN for PSN and byte for byte.
  inject(read(qpn, 50, va(), mr_->rkey(), 3000));
  const auto again = sent();
  ASSERT_EQ(again.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(again[i].bth->opcode, first[i].bth->opcode);
    EXPECT_EQ(again[i].bth->psn, first[i].bth->psn);
    EXPECT_TRUE(std::ranges::equal(again[i].payload, first[i].payload));
  }
  EXPECT_EQ(epsn(qpn), 53u);
  EXPECT_EQ(counters().duplicate_request, 1u);

  // A part of it, resumed at its second response PSN: starts a response of its
  // own there.
  inject(read(qpn, 51, va(1024), mr_->rkey(), 1976));
  const auto tail = sent();
  ASSERT_EQ(tail.size(), 2u);
  EXPECT_EQ(tail[0].bth->opcode, kRcReadResponseFirst);
  EXPECT_EQ(tail[0].bth->psn, 51u);
  EXPECT_EQ(tail[1].bth->opcode, kRcReadResponseLast);
  EXPECT_EQ(tail[1].bth->psn, 52u);
  EXPECT_TRUE(std::ranges::equal(tail[0].payload, std::span(data).subspan(1024, 1024)));

  // More than the original, another R_Key, or a PSN no resource holds: silently
  // dropped.
  inject(read(qpn, 50, va(), mr_->rkey(), 3001));
  inject(read(qpn, 50, va(), mr_->rkey() + 1, 3000));
  inject(read(qpn, 40, va(), mr_->rkey(), 16));
  EXPECT_TRUE(sent().empty());
  EXPECT_EQ(qp(qpn).state(), QpState::kRts);
}

TEST_F(ResponderTest, DuplicateReadRevalidatesTheMr) {
  const std::uint32_t qpn = make_qp({.rq_psn = 50});
  Mr* other = *nic_->device().reg_mr(MrInit{pd_, 4096, access::kAll, std::nullopt, {}});
  const std::uint32_t rkey = other->rkey();
  const std::uint64_t addr = other->addr();
  inject(read(qpn, 50, addr, rkey, 100));
  EXPECT_EQ(sent().size(), 1u);
  ASSERT_TRUE(nic_->device().dereg_mr(other->handle()));
  inject(read(qpn, 50, addr, rkey, 100));
  expect_ack(one(), syndrome::kNakRemoteAccess, 50);
  EXPECT_EQ(qp(qpn).state(), QpState::kErr);
}

TEST_F(ResponderTest, DuplicateAtomicReplaysTheOriginalValue) {
  const std::uint32_t qpn = make_qp({.rq_psn = 7});
  inject(atomic(qpn, kRcFetchAdd, 7, va(64), 5));
  Packet ack = one();
  ASSERT_TRUE(ack.atomicacketh);
  EXPECT_EQ(ack.bth->opcode, kRcAtomicAck);
  EXPECT_EQ(ack.atomicacketh->orig, 0u);
  EXPECT_EQ(memory(va(64), 8)[0], 5);
  inject(atomic(qpn, kRcFetchAdd, 7, va(64), 5));
  ack = one();
  EXPECT_EQ(ack.bth->opcode, kRcAtomicAck);
  EXPECT_EQ(ack.bth->psn, 7u);
  EXPECT_EQ(ack.atomicacketh->orig, 0u);
  EXPECT_EQ(memory(va(64), 8)[0], 5);  // not added twice
  // An atomic PSN with no resource is dropped.
  inject(atomic(qpn, kRcFetchAdd, 6, va(64), 5));
  EXPECT_TRUE(sent().empty());
}

TEST_F(ResponderTest, ResourcesAreReusedOldestFirst) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0, .max_dest_rd_atomic = 2});
  inject(read(qpn, 0, va(), mr_->rkey(), 8));
  inject(read(qpn, 1, va(), mr_->rkey(), 8));
  inject(read(qpn, 2, va(), mr_->rkey(), 8));
  EXPECT_EQ(sent().size(), 3u);
  inject(read(qpn, 0, va(), mr_->rkey(), 8));  // its resource went to PSN 2
  EXPECT_TRUE(sent().empty());
  inject(read(qpn, 1, va(), mr_->rkey(), 8));
  EXPECT_EQ(sent().size(), 1u);
}

// ---- NAK causes
// -----------------------------------------------------------------------------

class NakCauseTest : public ResponderTest {
 public:
  using ResponderTest::atomic;
  using ResponderTest::inject;
  using ResponderTest::mr_;
  using ResponderTest::nic_;
  using ResponderTest::pd_;
  using ResponderTest::read;
  using ResponderTest::request;
  using ResponderTest::send_only;
  using ResponderTest::va;
  using ResponderTest::write;
};

struct NakCase {
  std::string name;
  std::uint8_t syndrome;
  AsyncEventType event;
  QpOptions qp;
  std::uint32_t recv_len = 4096;
  // Sends the packets; returns the PSN of the one in error.
  std::function<std::uint32_t(NakCauseTest&, std::uint32_t qpn)> inject;
};

TEST_F(NakCauseTest, EachCauseGetsItsNakAndTheQpFails) {
  static const auto k1024 = pattern(1024);
  static const auto k8 = pattern(8);
  static const auto k16 = pattern(16);
  constexpr std::uint32_t P = 1000;
  using T = NakCauseTest;
  const auto inv = syndrome::kNakInvalidRequest;
  const auto acc = syndrome::kNakRemoteAccess;
  const auto req_err = AsyncEventType::kQpReqErr;
  const auto acc_err = AsyncEventType::kQpAccessErr;
  std::vector<NakCase> cases = {
      {"SEND_MIDDLE without FIRST",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) { return t.inject(t.request(q, kRcSendMiddle, P, k1024)), P; }},
      {"SEND_LAST without FIRST",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) { return t.inject(t.request(q, kRcSendLast, P, k8)), P; }},
      {"WRITE_MIDDLE without FIRST",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) { return t.inject(t.request(q, kRcWriteMiddle, P, k1024)), P; }},
      {"SEND_FIRST while a SEND is in progress",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         t.inject(t.request(q, kRcSendFirst, P, k1024));
         t.inject(t.request(q, kRcSendFirst, P + 1, k1024));
         return P + 1;
       }},
      {"WRITE_FIRST while a SEND is in progress",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         t.inject(t.request(q, kRcSendFirst, P, k1024));
         t.inject(t.write(q, kRcWriteFirst, P + 1, k1024, t.va(), t.mr_->rkey(), 2048));
         return P + 1;
       }},
      {"SEND_ONLY while a WRITE is in progress",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         t.inject(t.write(q, kRcWriteFirst, P, k1024, t.va(), t.mr_->rkey(), 2048));
         t.inject(t.send_only(q, P + 1, k8));
         return P + 1;
       }},
      {"READ without REMOTE_READ on the QP",
       inv,
       req_err,
       {.access = access::kLocalWrite | access::kRemoteWrite},
       4096,
       [](T& t, std::uint32_t q) { return t.inject(t.read(q, P, t.va(), t.mr_->rkey(), 8)), P; }},
      {"WRITE without REMOTE_WRITE on the QP",
       inv,
       req_err,
       {.access = access::kRemoteRead},
       4096,
       [](T& t, std::uint32_t q) {
         return t.inject(t.write(q, kRcWriteOnly, P, k8, t.va(), t.mr_->rkey(), 8)), P;
       }},
      {"atomic without REMOTE_ATOMIC on the QP",
       inv,
       req_err,
       {.access = access::kRemoteRead},
       4096,
       [](T& t, std::uint32_t q) { return t.inject(t.atomic(q, kRcFetchAdd, P, t.va(), 1)), P; }},
      {"READ with no responder resources",
       inv,
       req_err,
       {.max_dest_rd_atomic = 0},
       4096,
       [](T& t, std::uint32_t q) { return t.inject(t.read(q, P, t.va(), t.mr_->rkey(), 8)), P; }},
      {"atomic with no responder resources",
       inv,
       req_err,
       {.max_dest_rd_atomic = 0},
       4096,
       [](T& t, std::uint32_t q) {
         return t.inject(t.atomic(q, kRcCompareSwap, P, t.va(), 1)), P;
       }},
      {"misaligned atomic",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) { return t.inject(t.atomic(q, kRcFetchAdd, P, t.va(4), 1)), P; }},
      {"SEND longer than the receive buffer",
       inv,
       req_err,
       {},
       8,
       [](T& t, std::uint32_t q) { return t.inject(t.send_only(q, P, k16)), P; }},
      {"pad count inconsistent with the payload",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         static const auto six = pattern(6);
         t.inject(t.send_only(q, P, six), EncodeOptions{.fill_pad = false});
         return P;
       }},
      {"WRITE longer than its DMA length",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         return t.inject(t.write(q, kRcWriteOnly, P, k16, t.va(), t.mr_->rkey(), 8)), P;
       }},
      {"WRITE_LAST short of the DMA length",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         t.inject(t.write(q, kRcWriteFirst, P, k1024, t.va(), t.mr_->rkey(), 3000));
         t.inject(t.write(q, kRcWriteLast, P + 1, k16));
         return P + 1;
       }},
      {"DMA length beyond 2^31",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         return t.inject(t.read(q, P, t.va(), t.mr_->rkey(), 0x80000001u)), P;
       }},
      {"SEND_LAST without payload",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         t.inject(t.request(q, kRcSendFirst, P, k1024));
         t.inject(t.request(q, kRcSendLast, P + 1, {}));
         return P + 1;
       }},
      {"SEND_FIRST shorter than the PMTU",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         return t.inject(t.request(q, kRcSendFirst, P, std::span(k1024).first(1020))), P;
       }},
      {"SEND_MIDDLE longer than the PMTU",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         static const auto big = pattern(1028);
         t.inject(t.request(q, kRcSendFirst, P, k1024));
         t.inject(t.request(q, kRcSendMiddle, P + 1, big));
         return P + 1;
       }},
      {"SEND_ONLY longer than the PMTU",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         static const auto big = pattern(1028);
         return t.inject(t.send_only(q, P, big)), P;
       }},
      {"SEND with invalidate",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         Packet p = t.request(q, kRcSendOnlyInv, P, k8, true);
         p.ieth = Ieth{t.mr_->rkey()};
         return t.inject(p), P;
       }},
      {"FLUSH (not supported)",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         Packet p = t.request(q, kRcFlush, P);
         p.feth = Feth{};
         p.reth = Reth{t.va(), t.mr_->rkey(), 8};
         return t.inject(p), P;
       }},
      {"READ request with payload",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         Packet p = t.read(q, P, t.va(), t.mr_->rkey(), 8);
         p.payload = k8;
         return t.inject(p), P;
       }},
      {"ATOMIC_WRITE of other than 8 bytes",
       inv,
       req_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         return t.inject(t.write(q, kRcAtomicWrite, P, k8, t.va(), t.mr_->rkey(), 16)), P;
       }},
      {"WRITE with an unknown R_Key",
       acc,
       acc_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         return t.inject(t.write(q, kRcWriteOnly, P, k8, t.va(), 0xDEAD00, 8)), P;
       }},
      {"WRITE beyond the end of the MR",
       acc,
       acc_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         return t.inject(t.write(q, kRcWriteOnly, P, k8, t.va(64 * 1024 - 4), t.mr_->rkey(), 8)), P;
       }},
      {"READ below the start of the MR",
       acc,
       acc_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         return t.inject(t.read(q, P, t.va() - 8, t.mr_->rkey(), 16)), P;
       }},
      {"READ from an MR without REMOTE_READ",
       acc,
       acc_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         Mr* mr =
             *t.nic_->device().reg_mr(MrInit{t.pd_, 64, access::kLocalWrite, std::nullopt, {}});
         return t.inject(t.read(q, P, mr->addr(), mr->rkey(), 8)), P;
       }},
      {"atomic on an MR of another PD",
       acc,
       acc_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         const std::uint32_t pd = *t.nic_->device().alloc_pd();
         Mr* mr = *t.nic_->device().reg_mr(MrInit{pd, 64, access::kAll, std::nullopt, {}});
         Packet p = t.atomic(q, kRcFetchAdd, P, mr->addr(), 1);
         p.atomiceth->rkey = mr->rkey();
         return t.inject(p), P;
       }},
      {"WRITE_FIRST with a range beyond the MR",
       acc,
       acc_err,
       {},
       4096,
       [](T& t, std::uint32_t q) {
         return t.inject(t.write(q, kRcWriteFirst, P, k1024, t.va(60 * 1024), t.mr_->rkey(), 8192)),
                P;
       }},
  };
  for (const NakCase& c : cases) {
    SCOPED_TRACE(c.name);
    QpOptions o = c.qp;
    o.rq_psn = P;
    const std::uint32_t qpn = make_qp(o);
    post_recv(qpn, 1, c.recv_len);
    post_recv(qpn, 2, c.recv_len);
    const std::uint32_t bad = c.inject(*this, qpn);
    auto out = sent();
    ASSERT_FALSE(out.empty());
    expect_ack(out.back(), c.syndrome, bad);
    EXPECT_EQ(qp(qpn).state(), QpState::kErr);
    EXPECT_TRUE(has_event(c.event, qpn));
    EXPECT_EQ(nic_->responder().state(qpn), nullptr);
    // Nothing more is taken: the QP no longer receives.
    inject(send_only(qpn, bad + 1, k8));
    EXPECT_TRUE(sent().empty());
  }
}

TEST_F(ResponderTest, ClassCErrorEndsTheHeldReceiveWqeAndFlushesTheRest) {
  const std::uint32_t qpn = make_qp();
  post_recv(qpn, 1);
  post_recv(qpn, 2);
  const auto k1024 = pattern(1024);
  inject(request(qpn, kRcSendFirst, 1000, k1024));
  inject(send_only(qpn, 1001, k1024));
  expect_ack(sent().back(), syndrome::kNakInvalidRequest, 1001, 0);
  const auto cqes = cq().poll(8);
  ASSERT_EQ(cqes.size(), 2u);
  EXPECT_EQ(cqes[0].wr_id, 1u);
  EXPECT_EQ(cqes[0].status, WcStatus::kRemInvReqErr);
  EXPECT_EQ(cqes[1].wr_id, 2u);
  EXPECT_EQ(cqes[1].status, WcStatus::kWrFlushErr);
}

TEST_F(ResponderTest, SendLongerThanTheBufferEndsItInLocalLengthError) {
  const std::uint32_t qpn = make_qp();
  post_recv(qpn, 1, 100);
  inject(send_only(qpn, 1000, pattern(200)));
  expect_ack(one(), syndrome::kNakInvalidRequest, 1000);
  const auto cqes = cq().poll(8);
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].status, WcStatus::kLocLenErr);
}

TEST_F(ResponderTest, RnrNakCarriesTheTimerAndLeavesThePacketUnconsumed) {
  const std::uint32_t qpn = make_qp({.rq_psn = 300, .min_rnr_timer = 14});
  const auto data = pattern(40);
  inject(send_only(qpn, 300, data));
  expect_ack(one(), 0x20 | 14, 300, 0);
  EXPECT_EQ(counters().rnr_nak_sent, 1u);
  EXPECT_EQ(epsn(qpn), 300u);
  EXPECT_EQ(qp(qpn).state(), QpState::kRts);
  // The retry after a receive was posted is taken.
  post_recv(qpn, 1);
  inject(send_only(qpn, 300, data));
  expect_ack(one(), kAck, 300, 1);
  EXPECT_EQ(cq().size(), 1u);
}

TEST_F(ResponderTest, RnrOnWriteWithImmediateKeepsTheWriteInProgress) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0});
  const auto data = pattern(1500);
  const auto head = std::span(data).first(1024);
  const auto tail = std::span(data).subspan(1024);
  inject(write(qpn, kRcWriteFirst, 0, head, va(), mr_->rkey(), 1500));
  expect_ack(one(), kAck, 0, 0);
  Packet last = write(qpn, kRcWriteLastImm, 1, tail);
  last.immdt = ImmDt{0xCAFE};
  inject(last);
  expect_ack(one(), 0x20 | 12, 1, 0);
  post_recv(qpn, 9);
  inject(last);
  expect_ack(one(), kAck, 1, 1);
  EXPECT_TRUE(std::ranges::equal(memory(va(), 1500), data));
  const auto cqes = cq().poll(4);
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].wr_id, 9u);
  EXPECT_EQ(cqes[0].opcode, WcOpcode::kRecvRdmaWithImm);
  EXPECT_EQ(cqes[0].byte_len, 1500u);
  EXPECT_EQ(cqes[0].imm_data, 0xCAFEu);
  EXPECT_EQ(cqes[0].wc_flags, wc_flag::kWithImm);
}

// ---- PMTU
// -----------------------------------------------------------------------------------

TEST_F(ResponderTest, PmtuBoundariesAtEveryMtu) {
  for (const PathMtu mtu :
       {PathMtu::k256, PathMtu::k512, PathMtu::k1024, PathMtu::k2048, PathMtu::k4096}) {
    const std::size_t pmtu = path_mtu_bytes(mtu);
    SCOPED_TRACE(pmtu);
    const auto full = pattern(pmtu);
    const auto longer = pattern(pmtu + 4);
    const auto shorter = pattern(pmtu - 4);
    // Exactly PMTU in FIRST and MIDDLE, 1 byte LAST, PMTU-sized ONLY: accepted.
    std::uint32_t qpn = make_qp({.mtu = mtu, .rq_psn = 0});
    post_recv(qpn, 1, 3 * 4096);
    post_recv(qpn, 2, 3 * 4096);
    inject(request(qpn, kRcSendFirst, 0, full));
    inject(request(qpn, kRcSendMiddle, 1, full));
    inject(request(qpn, kRcSendLast, 2, std::span(full).first(1), true));
    expect_ack(one(), kAck, 2, 1);
    inject(send_only(qpn, 3, full));
    expect_ack(one(), kAck, 3, 2);
    auto cqes = cq().poll(4);
    ASSERT_EQ(cqes.size(), 2u);
    EXPECT_EQ(cqes[0].byte_len, 2 * pmtu + 1);
    EXPECT_EQ(cqes[1].byte_len, pmtu);

    // FIRST shorter, ONLY longer, LAST longer: NAK invalid request.
    qpn = make_qp({.mtu = mtu, .rq_psn = 0});
    post_recv(qpn, 1, 3 * 4096);
    inject(request(qpn, kRcSendFirst, 0, shorter));
    expect_ack(one(), syndrome::kNakInvalidRequest, 0);
    qpn = make_qp({.mtu = mtu, .rq_psn = 0});
    post_recv(qpn, 1, 3 * 4096);
    inject(send_only(qpn, 0, longer));
    expect_ack(one(), syndrome::kNakInvalidRequest, 0);
    qpn = make_qp({.mtu = mtu, .rq_psn = 0});
    post_recv(qpn, 1, 3 * 4096);
    inject(request(qpn, kRcSendFirst, 0, full));
    inject(request(qpn, kRcSendLast, 1, longer));
    expect_ack(one(), syndrome::kNakInvalidRequest, 1);
    cq().poll(16);
  }
}

// ---- ACKs and MSN
// ---------------------------------------------------------------------------

TEST_F(ResponderTest, AcksAreCoalescedUntilAckReq) {
  const std::uint32_t qpn = make_qp({.rq_psn = 20});
  for (int i = 0; i < 3; ++i) post_recv(qpn, i);
  const auto data = pattern(10);
  inject(send_only(qpn, 20, data, false));
  inject(send_only(qpn, 21, data, false));
  EXPECT_TRUE(sent().empty());
  EXPECT_EQ(cq().size(), 2u);
  inject(send_only(qpn, 22, data, true));
  expect_ack(one(), kAck, 22, 3);  // one ACK covering all three
}

TEST_F(ResponderTest, MsnCountsCompletedMessages) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0});
  const auto k1024 = pattern(1024);
  // A WRITE counts at its last packet.
  inject(write(qpn, kRcWriteFirst, 0, k1024, va(), mr_->rkey(), 1100));
  expect_ack(one(), kAck, 0, 0);
  inject(write(qpn, kRcWriteLast, 1, std::span(k1024).first(76)));
  expect_ack(one(), kAck, 1, 1);
  // A READ counts when accepted: its responses carry the new MSN.
  inject(read(qpn, 2, va(), mr_->rkey(), 16));
  Packet r = one();
  EXPECT_EQ(r.bth->opcode, kRcReadResponseOnly);
  EXPECT_EQ(r.aeth->msn, 2u);
  // An atomic counts when executed.
  inject(atomic(qpn, kRcCompareSwap, 3, va(1024), 1, 0));
  EXPECT_EQ(one().aeth->msn, 3u);
  post_recv(qpn, 1);
  inject(send_only(qpn, 4, k1024));
  expect_ack(one(), kAck, 4, 4);
}

// ---- READ
// -----------------------------------------------------------------------------------

TEST_F(ResponderTest, MultiPacketReadResponses) {
  const std::uint32_t qpn = make_qp({.rq_psn = 70});
  const auto data = pattern(2500, 4);
  std::ranges::copy(data, memory(va(100), 2500).begin());
  inject(read(qpn, 70, va(100), mr_->rkey(), 2500));
  const auto out = sent();
  ASSERT_EQ(out.size(), 3u);
  const std::uint8_t ops[] = {kRcReadResponseFirst, kRcReadResponseMiddle, kRcReadResponseLast};
  const std::size_t sizes[] = {1024, 1024, 452};
  std::size_t at = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].bth->opcode, ops[i]);
    EXPECT_EQ(out[i].bth->psn, 70 + i);
    EXPECT_EQ(out[i].bth->dqpn, kPeerQpn);
    EXPECT_EQ(out[i].aeth.has_value(), i != 1);  // no AETH on MIDDLE
    ASSERT_EQ(out[i].payload.size(), sizes[i]);
    EXPECT_TRUE(std::ranges::equal(out[i].payload, std::span(data).subspan(at, sizes[i])));
    EXPECT_TRUE(out[i].icrc->ok());
    at += sizes[i];
  }
  EXPECT_EQ(out[0].aeth->syndrome, kAck);
  EXPECT_EQ(out[0].aeth->msn, 1u);
  EXPECT_EQ(epsn(qpn), 73u);
  // The next request follows the three PSNs.
  post_recv(qpn, 1);
  inject(send_only(qpn, 73, std::span(data).first(10)));
  expect_ack(one(), kAck, 73, 2);
}

TEST_F(ResponderTest, ReadOfExactlyOnePmtuIsOnePacket) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0});
  inject(read(qpn, 0, va(), mr_->rkey(), 1024));
  const Packet r = one();
  EXPECT_EQ(r.bth->opcode, kRcReadResponseOnly);
  EXPECT_EQ(r.payload.size(), 1024u);
  EXPECT_EQ(epsn(qpn), 1u);
}

TEST_F(ResponderTest, ZeroLengthReadAndWriteSkipTheRkeyCheck) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0});
  inject(read(qpn, 0, 0x1234, 0xBADBAD, 0));
  const Packet r = one();
  EXPECT_EQ(r.bth->opcode, kRcReadResponseOnly);
  EXPECT_TRUE(r.payload.empty());
  EXPECT_EQ(epsn(qpn), 1u);
  inject(write(qpn, kRcWriteOnly, 1, {}, 0x1234, 0xBADBAD, 0));
  expect_ack(one(), kAck, 1, 2);
  EXPECT_EQ(qp(qpn).state(), QpState::kRts);
}

// ---- WRITE and SEND
// -------------------------------------------------------------------------

TEST_F(ResponderTest, MultiPacketWriteIsPlaced) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0});
  const auto data = pattern(2100, 5);
  const Bytes d = data;
  inject(write(qpn, kRcWriteFirst, 0, d.first(1024), va(8), mr_->rkey(), 2100));
  inject(write(qpn, kRcWriteMiddle, 1, d.subspan(1024, 1024)));
  inject(write(qpn, kRcWriteLast, 2, d.subspan(2048)));
  EXPECT_EQ(sent().size(), 3u);
  EXPECT_TRUE(std::ranges::equal(memory(va(8), 2100), data));
  EXPECT_EQ(cq().size(), 0u);  // WRITE without immediate consumes no receive WQE
}

TEST_F(ResponderTest, WriteOnlyWithImmediateCompletesAReceive) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0});
  post_recv(qpn, 77);
  const auto data = pattern(100);
  Packet p = write(qpn, kRcWriteOnlyImm, 0, data, va(), mr_->rkey(), 100);
  p.immdt = ImmDt{0x01020304};
  inject(p);
  expect_ack(one(), kAck, 0, 1);
  const auto cqes = cq().poll(2);
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].wr_id, 77u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(cqes[0].opcode, WcOpcode::kRecvRdmaWithImm);
  EXPECT_EQ(cqes[0].byte_len, 100u);
  EXPECT_EQ(cqes[0].imm_data, 0x01020304u);
  EXPECT_EQ(cqes[0].qp_num, qpn);
}

TEST_F(ResponderTest, MultiPacketSendScattersAndCompletes) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0});
  const std::uint64_t a = va(40000);
  const std::uint64_t b = va(50000);
  const std::vector<RecvWr> wr{RecvWr{5, {Sge{a, 1000, mr_->lkey()}, Sge{b, 1000, mr_->lkey()}}}};
  ASSERT_TRUE(nic_->post_recv(qpn, wr));
  const auto data = pattern(1524, 2);
  const Bytes d = data;
  inject(request(qpn, kRcSendFirst, 0, d.first(1024)));
  Packet last = request(qpn, kRcSendLastImm, 1, d.subspan(1024), true);
  last.immdt = ImmDt{0xAABBCCDD};
  inject(last);
  expect_ack(one(), kAck, 1, 1);
  EXPECT_TRUE(std::ranges::equal(memory(a, 1000), d.first(1000)));
  EXPECT_TRUE(std::ranges::equal(memory(b, 524), d.subspan(1000)));
  const auto cqes = cq().poll(2);
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].wr_id, 5u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(cqes[0].opcode, WcOpcode::kRecv);
  EXPECT_EQ(cqes[0].byte_len, 1524u);
  EXPECT_EQ(cqes[0].imm_data, 0xAABBCCDDu);
  EXPECT_EQ(cqes[0].wc_flags, wc_flag::kWithImm);
  EXPECT_EQ(cqes[0].qp_num, qpn);
}

TEST_F(ResponderTest, SolicitedEventReachesACqArmedForIt) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0});
  post_recv(qpn, 1);
  post_recv(qpn, 2);
  cq().req_notify(true);
  const auto data = pattern(4);
  inject(send_only(qpn, 0, data));
  EXPECT_EQ(cq().comp_events(), 0u);
  Packet p = send_only(qpn, 1, data);
  p.bth->solicited = true;
  inject(p);
  EXPECT_EQ(cq().comp_events(), 1u);
}

// ---- atomics
// --------------------------------------------------------------------------------

TEST_F(ResponderTest, AtomicsOperateOnHostOrderWords) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0});
  auto word = memory(va(16), 8);
  const std::uint64_t start = 0x1122334455667788;
  for (int i = 0; i < 8; ++i) word[i] = static_cast<std::uint8_t>(start >> (8 * i));
  const auto value = [&] {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{word[i]} << (8 * i);
    return v;
  };
  inject(atomic(qpn, kRcCompareSwap, 0, va(16), 42, 7));  // compare fails
  EXPECT_EQ(one().atomicacketh->orig, start);
  EXPECT_EQ(value(), start);
  inject(atomic(qpn, kRcCompareSwap, 1, va(16), 42, start));  // compare matches
  EXPECT_EQ(one().atomicacketh->orig, start);
  EXPECT_EQ(value(), 42u);
  inject(atomic(qpn, kRcFetchAdd, 2, va(16), 8));
  const Packet ack = one();
  EXPECT_EQ(ack.bth->opcode, kRcAtomicAck);
  EXPECT_EQ(ack.bth->psn, 2u);
  EXPECT_EQ(ack.aeth->syndrome, kAck);
  EXPECT_EQ(ack.atomicacketh->orig, 42u);
  EXPECT_EQ(value(), 50u);
  EXPECT_EQ(epsn(qpn), 3u);
}

TEST_F(ResponderTest, AtomicWriteIsPlacedAndAnsweredByAnEmptyReadResponse) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0});
  const auto data = pattern(8, 0x40);
  inject(write(qpn, kRcAtomicWrite, 0, data, va(24), mr_->rkey(), 8));
  Packet r = one();
  EXPECT_EQ(r.bth->opcode, kRcReadResponseOnly);
  EXPECT_EQ(r.bth->psn, 0u);
  EXPECT_TRUE(r.payload.empty());
  EXPECT_EQ(r.aeth->msn, 1u);
  EXPECT_TRUE(std::ranges::equal(memory(va(24), 8), data));
  // A duplicate is answered again and not placed again.
  std::ranges::fill(memory(va(24), 8), 0);
  inject(write(qpn, kRcAtomicWrite, 0, data, va(24), mr_->rkey(), 8));
  r = one();
  EXPECT_EQ(r.bth->opcode, kRcReadResponseOnly);
  EXPECT_EQ(memory(va(24), 8)[0], 0);
}

// ---- connection establishment
// ---------------------------------------------------------------

TEST_F(ResponderTest, FirstRequestInRtrIsReportedOnce) {
  const std::uint32_t qpn = make_qp({.rq_psn = 0, .to_rts = false});
  std::vector<std::uint32_t> reported;
  nic_->responder().on_first_request = [&](std::uint32_t q) { reported.push_back(q); };
  post_recv(qpn, 1);
  post_recv(qpn, 2);
  const auto data = pattern(4);
  inject(send_only(qpn, 0, data));
  inject(send_only(qpn, 1, data));
  EXPECT_EQ(reported, std::vector<std::uint32_t>{qpn});
  EXPECT_TRUE(has_event(AsyncEventType::kCommEst, qpn));
  EXPECT_EQ(sent().size(), 2u);
  // A QP already in RTS reports nothing.
  const std::uint32_t rts = make_qp({.rq_psn = 0});
  post_recv(rts, 1);
  inject(send_only(rts, 0, data));
  EXPECT_EQ(reported.size(), 1u);
}

TEST_F(ResponderTest, ResponsesCarryTheQpPkey) {
  ASSERT_TRUE(nic_->device().port().pkey_table.set(1, 0x8123));
  const std::uint32_t qpn = make_qp({.rq_psn = 0, .pkey_index = 1});
  post_recv(qpn, 1);
  const auto data = pattern(4);
  Packet p = send_only(qpn, 0, data);
  p.bth->pkey = 0x8123;
  inject(p);
  const Packet ack = one();
  EXPECT_EQ(ack.bth->pkey, 0x8123);
}

// ---- UC
// -------------------------------------------------------------------------------------

TEST_F(ResponderTest, UcReceivesInOrderMessagesWithoutAcks) {
  const std::uint32_t qpn = make_qp({.type = QpType::kUc, .rq_psn = 0});
  post_recv(qpn, 1);
  const auto data = pattern(1500);
  const Bytes d = data;
  inject(request(qpn, kUcBase | kRcSendFirst, 0, d.first(1024), true));
  inject(request(qpn, kUcBase | kRcSendLast, 1, d.subspan(1024), true));
  const auto w = pattern(64, 9);
  Packet wr = request(qpn, kUcBase | kRcWriteOnly, 2, w, true);
  wr.reth = Reth{va(), mr_->rkey(), 64};
  inject(wr);
  EXPECT_TRUE(sent().empty());
  const auto cqes = cq().poll(4);
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].byte_len, 1500u);
  EXPECT_TRUE(std::ranges::equal(memory(va(), 64), w));
  EXPECT_EQ(epsn(qpn), 3u);
}

TEST_F(ResponderTest, UcDropsToTheNextFirstAfterAGap) {
  const std::uint32_t qpn = make_qp({.type = QpType::kUc, .rq_psn = 0});
  post_recv(qpn, 1);
  const auto data = pattern(1024);
  inject(request(qpn, kUcBase | kRcSendFirst, 0, data));
  // PSN 1 lost: the rest of that message is dropped.
  inject(request(qpn, kUcBase | kRcSendMiddle, 2, data));
  inject(request(qpn, kUcBase | kRcSendLast, 3, std::span(data).first(10)));
  EXPECT_EQ(cq().size(), 0u);
  // The next message starts at an unexpected PSN and is taken, into the same
  // receive WQE.
  inject(request(qpn, kUcBase | kRcSendOnly, 9, std::span(data).first(33)));
  EXPECT_TRUE(sent().empty());
  const auto cqes = cq().poll(4);
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].wr_id, 1u);
  EXPECT_EQ(cqes[0].byte_len, 33u);
  EXPECT_EQ(epsn(qpn), 10u);
  EXPECT_EQ(counters().seq_nak_sent, 0u);
}

TEST_F(ResponderTest, UcNewFirstAbandonsTheUnfinishedMessage) {
  const std::uint32_t qpn = make_qp({.type = QpType::kUc, .rq_psn = 0});
  post_recv(qpn, 1);
  const auto data = pattern(1024);
  inject(request(qpn, kUcBase | kRcSendFirst, 0, data));
  inject(request(qpn, kUcBase | kRcSendFirst, 1, data));
  inject(request(qpn, kUcBase | kRcSendLast, 2, std::span(data).first(5)));
  const auto cqes = cq().poll(4);
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].byte_len, 1029u);
}

TEST_F(ResponderTest, UcErrorsAreSilentAndTheQpLives) {
  const std::uint32_t qpn = make_qp({.type = QpType::kUc, .rq_psn = 0});
  const auto big = pattern(1028);
  inject(request(qpn, kUcBase | kRcSendOnly, 0, pattern(8)));  // no receive WQE
  post_recv(qpn, 1);
  inject(request(qpn, kUcBase | kRcSendOnly, 1, big));  // longer than the PMTU
  Packet wr = request(qpn, kUcBase | kRcWriteOnly, 2, big);
  wr.reth = Reth{va(), 0xBAD00, 1028};
  inject(wr);  // bad R_Key
  EXPECT_TRUE(sent().empty());
  EXPECT_EQ(qp(qpn).state(), QpState::kRts);
  EXPECT_EQ(cq().size(), 0u);
  inject(request(qpn, kUcBase | kRcSendOnly, 3, std::span(big).first(20)));
  const auto cqes = cq().poll(4);
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].byte_len, 20u);
}

// ---- UD
// -------------------------------------------------------------------------------------

class ResponderUdTest : public ResponderTest {
 protected:
  Packet datagram(std::uint32_t qpn, Bytes payload, std::uint8_t op = kUdSendOnly) {
    Packet p = request(qpn, op, 1234, payload);
    p.deth = Deth{kUdQkey, 0, 0x77};
    return p;
  }
};

TEST_F(ResponderUdTest, SendLandsAfterTheGrhSpace) {
  const std::uint32_t qpn = make_qp({.type = QpType::kUd});
  const std::uint64_t buf = post_recv(qpn, 3, 512);
  const auto data = pattern(100);
  Packet p = datagram(qpn, data, kUdSendOnlyImm);
  p.immdt = ImmDt{0x5};
  inject(p);
  EXPECT_TRUE(sent().empty());
  const auto cqes = cq().poll(2);
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(cqes[0].opcode, WcOpcode::kRecv);
  EXPECT_EQ(cqes[0].byte_len, 140u);
  EXPECT_EQ(cqes[0].src_qp, 0x77u);
  EXPECT_EQ(cqes[0].wc_flags, wc_flag::kGrh | wc_flag::kWithImm);
  EXPECT_EQ(cqes[0].imm_data, 5u);
  const auto grh = memory(buf, 40);
  EXPECT_TRUE(std::all_of(grh.begin(), grh.begin() + 20, [](std::uint8_t b) { return b == 0; }));
  EXPECT_EQ(grh[20], 0x45);  // IPv4, IHL 5
  EXPECT_TRUE(std::ranges::equal(grh.subspan(32, 4), kPeerIp));
  EXPECT_TRUE(std::ranges::equal(grh.subspan(36, 4), nic_->config().ipv4));
  EXPECT_TRUE(std::ranges::equal(memory(buf + 40, 100), data));
}

TEST_F(ResponderUdTest, NoReceiveWqeOrTooLongIsDroppedSilently) {
  const std::uint32_t qpn = make_qp({.type = QpType::kUd});
  inject(datagram(qpn, pattern(10)));
  post_recv(qpn, 1, 8192);
  const auto big = pattern(4100);  // above the port's active MTU (4096)
  inject(datagram(qpn, big));
  EXPECT_TRUE(sent().empty());
  EXPECT_EQ(cq().size(), 0u);
  EXPECT_EQ(qp(qpn).recv_queue().size(), 1u);
}

TEST_F(ResponderUdTest, BufferTooSmallEndsInLocalLengthError) {
  const std::uint32_t qpn = make_qp({.type = QpType::kUd});
  post_recv(qpn, 1, 60);
  inject(datagram(qpn, pattern(30)));
  const auto cqes = cq().poll(2);
  ASSERT_EQ(cqes.size(), 1u);
  EXPECT_EQ(cqes[0].status, WcStatus::kLocLenErr);
  EXPECT_EQ(qp(qpn).state(), QpState::kErr);
}

// ---- quirks: each differs from the correct behaviour
// ----------------------------------------

TEST_F(ResponderTest, QuirkPsnGapAck) {
  const auto data = pattern(16);
  for (const bool quirk : {false, true}) {
    SCOPED_TRACE(quirk);
    if (quirk) with_quirk(Quirk::kPsnGapAck);
    const std::uint32_t qpn = make_qp({.rq_psn = 10});
    post_recv(qpn, 1);
    inject(send_only(qpn, 12, data, false));
    if (quirk) {
      expect_ack(one(), kAck, 12, 1);  // ACKed and taken
      EXPECT_EQ(cq().size(), 1u);
      EXPECT_EQ(epsn(qpn), 13u);
    } else {
      expect_ack(one(), syndrome::kNakPsnSeqError, 10, 0);
      EXPECT_EQ(cq().size(), 0u);
      EXPECT_EQ(epsn(qpn), 10u);
    }
  }
}

TEST_F(ResponderTest, QuirkPsnNakRepeat) {
  const auto data = pattern(16);
  for (const bool quirk : {false, true}) {
    SCOPED_TRACE(quirk);
    if (quirk) with_quirk(Quirk::kPsnNakRepeat);
    const std::uint32_t qpn = make_qp({.rq_psn = 10});
    for (std::uint32_t psn = 12; psn < 15; ++psn) inject(send_only(qpn, psn, data));
    const auto out = sent();
    ASSERT_EQ(out.size(), quirk ? 3u : 1u);
    for (const Packet& p : out) expect_ack(p, syndrome::kNakPsnSeqError, 10);
  }
}

TEST_F(ResponderTest, QuirkAckPsnOffByOne) {
  const auto data = pattern(16);
  for (const bool quirk : {false, true}) {
    SCOPED_TRACE(quirk);
    if (quirk) with_quirk(Quirk::kAckPsnOffByOne);
    const std::uint32_t qpn = make_qp({.rq_psn = 10});
    post_recv(qpn, 1);
    inject(send_only(qpn, 10, data));
    expect_ack(one(), kAck, quirk ? 11 : 10, 1);
    // NAKs keep their PSN.
    inject(send_only(qpn, 13, data));
    expect_ack(one(), syndrome::kNakPsnSeqError, 11, 1);
  }
}

TEST_F(ResponderTest, QuirkDupReexecute) {
  const auto data = pattern(16, 3);
  for (const bool quirk : {false, true}) {
    SCOPED_TRACE(quirk);
    if (quirk) with_quirk(Quirk::kDupReexecute);
    const std::uint32_t qpn = make_qp({.rq_psn = 10});
    post_recv(qpn, 1);
    post_recv(qpn, 2);
    inject(send_only(qpn, 10, data));
    inject(send_only(qpn, 10, data));
    const auto out = sent();
    ASSERT_EQ(out.size(), 2u);
    expect_ack(out[1], kAck, 10);
    EXPECT_EQ(cq().poll(4).size(), quirk ? 2u : 1u);
    EXPECT_EQ(qp(qpn).recv_queue().size(), quirk ? 0u : 1u);
    // A duplicate WRITE is placed again.
    inject(write(qpn, kRcWriteOnly, 11, data, va(), mr_->rkey(), 16));
    std::ranges::fill(memory(va(), 16), 0);
    inject(write(qpn, kRcWriteOnly, 11, data, va(), mr_->rkey(), 16));
    EXPECT_EQ(memory(va(), 16)[0], quirk ? data[0] : 0);
    EXPECT_EQ(epsn(qpn), 12u);
  }
}

TEST_F(ResponderTest, QuirkMsnStuck) {
  const auto data = pattern(16);
  for (const bool quirk : {false, true}) {
    SCOPED_TRACE(quirk);
    if (quirk) with_quirk(Quirk::kMsnStuck);
    const std::uint32_t qpn = make_qp({.rq_psn = 10});
    post_recv(qpn, 1);
    post_recv(qpn, 2);
    inject(send_only(qpn, 10, data, false));
    inject(send_only(qpn, 11, data));
    expect_ack(one(), kAck, 11, quirk ? 0 : 2);
    inject(read(qpn, 12, va(), mr_->rkey(), 8));
    EXPECT_EQ(one().aeth->msn, quirk ? 0u : 3u);
  }
}

TEST_F(ResponderTest, QuirkNakCodeSwap) {
  const auto data = pattern(8);
  for (const bool quirk : {false, true}) {
    SCOPED_TRACE(quirk);
    if (quirk) with_quirk(Quirk::kNakCodeSwap);
    std::uint32_t qpn = make_qp({.rq_psn = 10});
    inject(atomic(qpn, kRcFetchAdd, 10, va(4), 1));  // misaligned: invalid request
    expect_ack(one(), quirk ? syndrome::kNakRemoteAccess : syndrome::kNakInvalidRequest, 10);
    qpn = make_qp({.rq_psn = 10});
    inject(write(qpn, kRcWriteOnly, 10, data, va(), 0xBAD00, 8));  // remote access
    expect_ack(one(), quirk ? syndrome::kNakInvalidRequest : syndrome::kNakRemoteAccess, 10);
    // The QP still reports the right error locally.
    EXPECT_TRUE(has_event(AsyncEventType::kQpAccessErr, qpn));
  }
}

TEST_F(ResponderTest, QuirkRnrAsNak) {
  const auto data = pattern(8);
  for (const bool quirk : {false, true}) {
    SCOPED_TRACE(quirk);
    if (quirk) with_quirk(Quirk::kRnrAsNak);
    const std::uint32_t qpn = make_qp({.rq_psn = 10, .min_rnr_timer = 3});
    inject(send_only(qpn, 10, data));
    expect_ack(one(), quirk ? syndrome::kNakInvalidRequest : 0x23, 10);
    EXPECT_EQ(counters().rnr_nak_sent, quirk ? 0u : 1u);
  }
}

TEST_F(ResponderTest, QuirkMtuUnchecked) {
  const auto shorter = pattern(1000);
  const auto longer = pattern(1100);
  for (const bool quirk : {false, true}) {
    SCOPED_TRACE(quirk);
    if (quirk) with_quirk(Quirk::kMtuUnchecked);
    std::uint32_t qpn = make_qp({.rq_psn = 10});
    post_recv(qpn, 1);
    inject(send_only(qpn, 10, longer));
    if (quirk) {
      expect_ack(one(), kAck, 10, 1);
    } else {
      expect_ack(one(), syndrome::kNakInvalidRequest, 10);
    }
    qpn = make_qp({.rq_psn = 10});
    post_recv(qpn, 1);
    inject(request(qpn, kRcSendFirst, 10, shorter, true));
    if (quirk) {
      expect_ack(one(), kAck, 10, 0);
    } else {
      expect_ack(one(), syndrome::kNakInvalidRequest, 10);
    }
  }
}

TEST_F(ResponderTest, QuirkReadRespSplitWrong) {
  for (const bool quirk : {false, true}) {
    SCOPED_TRACE(quirk);
    if (quirk) with_quirk(Quirk::kReadRespSplitWrong);
    const std::uint32_t qpn = make_qp({.rq_psn = 10});
    inject(read(qpn, 10, va(), mr_->rkey(), 2048));
    const auto out = sent();
    std::vector<std::size_t> sizes;
    for (const Packet& p : out) sizes.push_back(p.payload.size());
    if (quirk) {
      EXPECT_EQ(sizes, (std::vector<std::size_t>{1020, 1020, 8}));
      EXPECT_EQ(out[1].bth->opcode, kRcReadResponseMiddle);
    } else {
      EXPECT_EQ(sizes, (std::vector<std::size_t>{1024, 1024}));
    }
    EXPECT_EQ(out.front().bth->opcode, kRcReadResponseFirst);
    EXPECT_EQ(out.back().bth->opcode, kRcReadResponseLast);
  }
}

}  // namespace
}  // namespace roceconf::target
