#include "suite/reference_nic/qp.h"

#include <gtest/gtest.h>

#include <string>

#include "suite/reference_nic/device.h"

namespace roceconf::target {
namespace {

using namespace qp_attr;
using S = QpState;

constexpr S kAllStates[] = {S::kReset, S::kInit, S::kRtr, S::kRts, S::kSqd, S::kSqe, S::kErr};

// The legal transitions and their required attributes, written out here from the IBA / verbs
// table independently of qp.cc.
struct Legal {
  S from, to;
  QpAttrMask required;
};
std::vector<Legal> legal_transitions(QpType t) {
  QpAttrMask init = 0, rtr = 0, rts = 0;
  switch (t) {
    case QpType::kRc:
      init = kPkeyIndex | kPort | kAccessFlags;
      rtr = kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer;
      rts = kSqPsn | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic;
      break;
    case QpType::kUc:
      init = kPkeyIndex | kPort | kAccessFlags;
      rtr = kAv | kPathMtu | kDestQpn | kRqPsn;
      rts = kSqPsn;
      break;
    case QpType::kUd:
      init = kPkeyIndex | kPort | kQkey;
      rts = kSqPsn;
      break;
    case QpType::kGsi:
      init = kPkeyIndex | kQkey;
      rts = kSqPsn;
      break;
  }
  std::vector<Legal> out = {
      {S::kReset, S::kInit, init}, {S::kInit, S::kInit, 0}, {S::kInit, S::kRtr, rtr},
      {S::kRtr, S::kRts, rts},     {S::kRts, S::kRts, 0},   {S::kRts, S::kSqd, 0},
      {S::kSqd, S::kRts, 0},       {S::kSqd, S::kSqd, 0},   {S::kSqe, S::kRts, 0},
  };
  for (S s : kAllStates) {
    out.push_back({s, S::kReset, 0});
    out.push_back({s, S::kErr, 0});
  }
  return out;
}

const Legal* find_legal(const std::vector<Legal>& table, S from, S to) {
  for (const Legal& l : table) {
    if (l.from == from && l.to == to) return &l;
  }
  return nullptr;
}

// Valid values for every attribute.
QpAttr good_attrs() {
  QpAttr a;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qkey = 0x11111111;
  a.qp_access_flags = access::kLocalWrite | access::kRemoteRead | access::kRemoteWrite;
  a.ah_attr.dgid = gid_from_ipv4({192, 0, 2, 2});
  a.ah_attr.sgid_index = 0;
  a.ah_attr.dmac = {0x02, 0, 0, 0, 0, 0x02};
  a.ah_attr.hop_limit = 64;
  a.path_mtu = PathMtu::k1024;
  a.dest_qp_num = 0x22;
  a.rq_psn = 100;
  a.max_dest_rd_atomic = 4;
  a.min_rnr_timer = 12;
  a.sq_psn = 200;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 4;
  a.en_sqd_async_notify = true;
  return a;
}

class QpTest : public ::testing::Test {
 protected:
  QpTest() {
    pd = *dev.alloc_pd();
    scq = *dev.create_cq(64);
    rcq = *dev.create_cq(64);
  }

  Qp& make(QpType t, QpCap cap = {8, 8, 2, 2, 64}, bool sig_all = false) {
    auto q = dev.create_qp(QpInit{t, pd, scq->handle(), rcq->handle(), cap, sig_all});
    EXPECT_TRUE(q) << q.error().message;
    return **q;
  }

  static VerbsResult<void> to(Qp& qp, S state, QpAttrMask mask) {
    QpAttr a = good_attrs();
    a.qp_state = state;
    a.cur_qp_state = qp.state();  // what CUR_STATE, when given, must say
    return qp.modify(a, mask | kState);
  }

  // Walks a fresh QP to `state` with exactly the required attributes.
  static void bring(Qp& qp, S state) {
    const auto table = legal_transitions(qp.qp_type());
    const auto step = [&](S from, S next) {
      ASSERT_EQ(qp.state(), from);
      auto r = to(qp, next, find_legal(table, from, next)->required);
      ASSERT_TRUE(r) << r.error().message;
    };
    if (state == S::kReset) return;
    if (state == S::kErr) return step(S::kReset, S::kErr);
    step(S::kReset, S::kInit);
    if (state == S::kInit) return;
    step(S::kInit, S::kRtr);
    if (state == S::kRtr) return;
    step(S::kRtr, S::kRts);
    if (state == S::kSqd) step(S::kRts, S::kSqd);
    if (state == S::kSqe) qp.enter_sqe();
    ASSERT_EQ(qp.state(), state);
  }

  Device dev;
  std::uint32_t pd = 0;
  Cq* scq = nullptr;
  Cq* rcq = nullptr;
};

// ---- the state machine -------------------------------------------------------------------------

TEST_F(QpTest, EveryLegalTransitionWithItsRequiredAttributes) {
  for (QpType t : {QpType::kRc, QpType::kUc, QpType::kUd, QpType::kGsi}) {
    const auto table = legal_transitions(t);
    for (const Legal& l : table) {
      if (l.from == S::kSqe && t == QpType::kRc) continue;  // RC never enters SQE
      if (t == QpType::kGsi) {
        // One GSI QP per device: reuse QP1 by resetting it.
        if (Qp* g = dev.qp(1)) {
          ASSERT_TRUE(dev.destroy_qp(g->qp_num()));
        }
      }
      Qp& qp = make(t);
      bring(qp, l.from);
      SCOPED_TRACE(
          fmt::format("{} {}→{}", qp_type_name(t), qp_state_name(l.from), qp_state_name(l.to)));
      // Each required attribute left out → EINVAL naming it.
      for (QpAttrMask bit = 1; bit != 0 && bit <= l.required; bit <<= 1) {
        if (!(l.required & bit)) continue;
        auto r = to(qp, l.to, l.required & ~bit);
        ASSERT_FALSE(r) << "accepted without " << qp_attr_mask_names(bit);
        EXPECT_EQ(r.error().status, VerbsStatus::kInval);
        EXPECT_NE(r.error().message.find("missing required attribute " + qp_attr_mask_names(bit)),
                  std::string::npos)
            << r.error().message;
        EXPECT_EQ(qp.state(), l.from) << "a failed modify changes nothing";
      }
      auto r = to(qp, l.to, l.required);
      ASSERT_TRUE(r) << r.error().message;
      EXPECT_EQ(qp.state(), l.to);
      EXPECT_EQ(qp.query().qp_state, l.to);
      EXPECT_EQ(qp.query().cur_qp_state, l.to);
    }
  }
}

TEST_F(QpTest, EveryIllegalTransitionIsRejected) {
  for (QpType t : {QpType::kRc, QpType::kUc, QpType::kUd}) {
    const auto table = legal_transitions(t);
    for (S from : kAllStates) {
      if (from == S::kSqe && t == QpType::kRc) continue;
      for (S next : kAllStates) {
        if (find_legal(table, from, next)) continue;
        Qp& qp = make(t);
        bring(qp, from);
        // Even with every attribute the destination could want.
        auto r = to(qp, next, kAccessFlags | kPkeyIndex | kPort | kSqPsn);
        ASSERT_FALSE(r) << qp_type_name(t) << " " << qp_state_name(from) << "→"
                        << qp_state_name(next) << " accepted";
        EXPECT_EQ(r.error().status, VerbsStatus::kInval);
        EXPECT_NE(r.error().message.find("is not a legal transition"), std::string::npos)
            << r.error().message;
        EXPECT_EQ(qp.state(), from);
      }
    }
  }
}

TEST_F(QpTest, IllegalTransitionMessagesListTheLegalOnes) {
  Qp& qp = make(QpType::kRc);
  auto r = to(qp, S::kRts, 0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "modify_qp: RESET→RTS is not a legal transition (legal from RESET: RESET, INIT, ERR)");

  bring(qp, S::kInit);
  r = to(qp, S::kRts, kSqPsn | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "modify_qp: INIT→RTS is not a legal transition (legal from INIT: RESET, INIT, RTR, "
            "ERR)");

  Qp& rtr = make(QpType::kRc);
  bring(rtr, S::kRtr);
  r = to(rtr, S::kInit, 0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "modify_qp: RTR→INIT is not a legal transition (legal from RTR: RESET, RTS, ERR)");
}

TEST_F(QpTest, AnyStateToErrAndToReset) {
  for (QpType t : {QpType::kRc, QpType::kUc, QpType::kUd}) {
    for (S from : kAllStates) {
      if (from == S::kSqe && t == QpType::kRc) continue;
      for (S dest : {S::kErr, S::kReset}) {
        Qp& qp = make(t);
        bring(qp, from);
        auto r = to(qp, dest, 0);
        ASSERT_TRUE(r) << r.error().message;
        EXPECT_EQ(qp.state(), dest);
      }
    }
  }
}

TEST_F(QpTest, MissingAttributeMessageNamesItAndTheRequiredSet) {
  Qp& qp = make(QpType::kRc);
  bring(qp, S::kInit);
  auto r = to(qp, S::kRtr, kAv | kDestQpn | kMaxDestRdAtomic | kMinRnrTimer);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "modify_qp: INIT→RTR (RC) is missing required attributes PATH_MTU, RQ_PSN (required: "
            "AV, PATH_MTU, RQ_PSN, MIN_RNR_TIMER, MAX_DEST_RD_ATOMIC, DEST_QPN)");

  Qp& ud = make(QpType::kUd);
  r = to(ud, S::kInit, kPkeyIndex | kPort);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("missing required attribute QKEY"), std::string::npos);
}

TEST_F(QpTest, OptionalAttributesPerTransitionAndType) {
  Qp& rc = make(QpType::kRc);
  bring(rc, S::kRts);
  EXPECT_TRUE(to(rc, S::kRts, kMinRnrTimer | kAccessFlags | kCurState));
  EXPECT_TRUE(to(rc, S::kSqd, kEnSqdAsyncNotify));
  EXPECT_TRUE(to(rc, S::kSqd, kTimeout | kRetryCnt | kAv | kMaxDestRdAtomic));  // SQD→SQD
  auto r = to(rc, S::kRts, kPathMtu);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "modify_qp: SQD→RTS (RC) does not accept attribute PATH_MTU (accepted: CUR_STATE, "
            "ACCESS_FLAGS, ALT_PATH, MIN_RNR_TIMER, PATH_MIG_STATE)");

  Qp& ud = make(QpType::kUd);
  bring(ud, S::kInit);
  r = to(ud, S::kRtr, kSqPsn);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("does not accept attribute SQ_PSN"), std::string::npos);
  EXPECT_TRUE(to(ud, S::kRtr, kQkey | kPkeyIndex));
  r = to(ud, S::kRts, kSqPsn | kMinRnrTimer);  // RC-only optional
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("MIN_RNR_TIMER"), std::string::npos);

  Qp& uc = make(QpType::kUc);
  bring(uc, S::kRtr);
  r = to(uc, S::kRts, kSqPsn | kTimeout);  // UC has no retransmission
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("does not accept attribute TIMEOUT"), std::string::npos);

  // Modifying attributes without a state change uses the X→X row.
  Qp& init = make(QpType::kRc);
  bring(init, S::kInit);
  QpAttr a = good_attrs();
  a.qp_access_flags = access::kRemoteRead;
  ASSERT_TRUE(init.modify(a, kAccessFlags));
  EXPECT_EQ(init.query().qp_access_flags, access::kRemoteRead);
  EXPECT_EQ(init.state(), S::kInit);
}

TEST_F(QpTest, AttributeValuesAreChecked) {
  const auto expect_inval = [](VerbsResult<void> r, std::string_view needle) {
    ASSERT_FALSE(r) << "accepted; wanted an error about " << needle;
    EXPECT_EQ(r.error().status, VerbsStatus::kInval);
    EXPECT_NE(r.error().message.find(needle), std::string::npos) << r.error().message;
  };
  Qp& qp = make(QpType::kRc);
  const QpAttrMask init = kPkeyIndex | kPort | kAccessFlags;
  QpAttr a = good_attrs();
  a.qp_state = S::kInit;
  a.pkey_index = 16;
  expect_inval(qp.modify(a, init | kState), "pkey_index 16");
  a = good_attrs();
  a.qp_state = S::kInit;
  a.port_num = 2;
  expect_inval(qp.modify(a, init | kState), "port_num 2");
  a = good_attrs();
  a.qp_state = S::kInit;
  a.qp_access_flags = 0x40;
  expect_inval(qp.modify(a, init | kState), "qp_access_flags");

  bring(qp, S::kInit);
  const QpAttrMask rtr = kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer;
  const auto at_rtr = [&](auto tweak) {
    QpAttr b = good_attrs();
    b.qp_state = S::kRtr;
    tweak(b);
    return qp.modify(b, rtr | kState);
  };
  expect_inval(at_rtr([](QpAttr& b) { b.path_mtu = static_cast<PathMtu>(6); }), "path_mtu 6");
  expect_inval(at_rtr([](QpAttr& b) { b.path_mtu = static_cast<PathMtu>(0); }), "path_mtu 0");
  expect_inval(at_rtr([](QpAttr& b) { b.ah_attr.sgid_index = 5; }), "sgid_index 5");
  expect_inval(at_rtr([](QpAttr& b) { b.ah_attr.flow_label = 0x100000; }), "flow_label");
  expect_inval(at_rtr([](QpAttr& b) { b.rq_psn = 0x1000000; }), "rq_psn");
  expect_inval(at_rtr([](QpAttr& b) { b.dest_qp_num = 0x1000000; }), "dest_qp_num");
  expect_inval(at_rtr([](QpAttr& b) { b.min_rnr_timer = 32; }), "min_rnr_timer 32");
  expect_inval(at_rtr([](QpAttr& b) { b.max_dest_rd_atomic = 200; }), "max_dest_rd_atomic 200");
  EXPECT_EQ(qp.state(), S::kInit);

  ASSERT_TRUE(to(qp, S::kRtr, rtr));
  const QpAttrMask rts = kSqPsn | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic;
  const auto at_rts = [&](auto tweak, QpAttrMask extra = 0) {
    QpAttr b = good_attrs();
    b.qp_state = S::kRts;
    tweak(b);
    return qp.modify(b, rts | extra | kState);
  };
  expect_inval(at_rts([](QpAttr& b) { b.retry_cnt = 8; }), "retry_cnt 8");
  expect_inval(at_rts([](QpAttr& b) { b.rnr_retry = 8; }), "rnr_retry 8");
  expect_inval(at_rts([](QpAttr& b) { b.timeout = 32; }), "timeout 32");
  expect_inval(at_rts([](QpAttr& b) { b.max_rd_atomic = 129; }), "max_rd_atomic 129");
  expect_inval(at_rts([](QpAttr&) {}, kAltPath), "ALT_PATH");
  expect_inval(at_rts([](QpAttr& b) { b.cur_qp_state = S::kInit; }, kCurState),
               "cur_qp_state is INIT but the QP is in RTR");
  EXPECT_TRUE(at_rts([](QpAttr& b) { b.cur_qp_state = S::kRtr; }, kCurState));
}

TEST_F(QpTest, PathMtuAboveThePortMaximumIsRejected) {
  DeviceConfig cfg;
  cfg.port.attr.max_mtu = PathMtu::k1024;
  Device small(cfg);
  const std::uint32_t p = *small.alloc_pd();
  Cq* c = *small.create_cq(4);
  Qp* qp = *small.create_qp(QpInit{QpType::kRc, p, c->handle(), c->handle(), {}, false});
  QpAttr a = good_attrs();
  a.qp_state = S::kInit;
  ASSERT_TRUE(qp->modify(a, kState | kPkeyIndex | kPort | kAccessFlags));
  a.qp_state = S::kRtr;
  a.path_mtu = PathMtu::k2048;
  auto r =
      qp->modify(a, kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("path_mtu 2048 is above the port's 1024"), std::string::npos)
      << r.error().message;
}

TEST_F(QpTest, QueryReturnsEveryAttribute) {
  Qp& qp = make(QpType::kRc, {16, 32, 3, 4, 100});
  bring(qp, S::kRts);
  const QpAttr q = qp.query();
  const QpAttr g = good_attrs();
  EXPECT_EQ(q.qp_state, S::kRts);
  EXPECT_EQ(q.cur_qp_state, S::kRts);
  EXPECT_EQ(q.path_mtu, g.path_mtu);
  EXPECT_EQ(q.dest_qp_num, g.dest_qp_num);
  EXPECT_EQ(q.rq_psn, g.rq_psn);
  EXPECT_EQ(q.sq_psn, g.sq_psn);
  EXPECT_EQ(q.qp_access_flags, g.qp_access_flags);
  EXPECT_EQ(q.pkey_index, 0);
  EXPECT_EQ(q.port_num, 1);
  EXPECT_EQ(q.max_rd_atomic, 4);
  EXPECT_EQ(q.max_dest_rd_atomic, 4);
  EXPECT_EQ(q.min_rnr_timer, 12);
  EXPECT_EQ(q.timeout, 14);
  EXPECT_EQ(q.retry_cnt, 7);
  EXPECT_EQ(q.rnr_retry, 7);
  EXPECT_EQ(q.ah_attr.dgid, g.ah_attr.dgid);
  EXPECT_EQ(q.ah_attr.dmac, g.ah_attr.dmac);
  EXPECT_EQ(q.ah_attr.hop_limit, 64);
  EXPECT_EQ(q.cap, (QpCap{16, 32, 3, 4, 100}));
  // The UDP source port was fixed from the QPNs when the AV was set (flow label 0).
  EXPECT_EQ(q.ah_attr.udp_sport,
            rdma_flow_label_to_udp_sport(rdma_calc_flow_label(qp.qp_num(), g.dest_qp_num)));
  EXPECT_GE(q.ah_attr.udp_sport, 0xC000);
  EXPECT_EQ(qp.pkey(), 0xFFFF);
  EXPECT_EQ(qp.path_mtu_bytes(), 1024u);
}

TEST_F(QpTest, ExplicitUdpSourcePortIsKept) {
  Qp& qp = make(QpType::kRc);
  bring(qp, S::kInit);
  QpAttr a = good_attrs();
  a.qp_state = S::kRtr;
  a.ah_attr.udp_sport = 55555;
  ASSERT_TRUE(
      qp.modify(a, kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer));
  EXPECT_EQ(qp.query().ah_attr.udp_sport, 55555);
}

TEST(FlowLabel, SymmetricAndInTheEphemeralRange) {
  EXPECT_EQ(rdma_calc_flow_label(0x11, 0x22), rdma_calc_flow_label(0x22, 0x11));
  EXPECT_LE(rdma_calc_flow_label(0xFFFFFF, 0xFFFFFE), 0xFFFFFu);
  // lo = fl & 0x3fff = 0x0345, xor (fl & 0xfc000) >> 14 = 0x12 -> 0x0357 | 0xC000.
  EXPECT_EQ(rdma_flow_label_to_udp_sport(0x48345), 0xC357);
  EXPECT_EQ(rdma_flow_label_to_udp_sport(0), 0xC000);
}

TEST(QpNames, StatesTypesMasksOpcodes) {
  EXPECT_EQ(qp_state_name(S::kSqe), "SQE");
  EXPECT_EQ(qp_state_from_name("RTS"), S::kRts);
  EXPECT_FALSE(qp_state_from_name("READY"));
  EXPECT_EQ(qp_type_name(QpType::kUd), "UD");
  EXPECT_EQ(qp_type_from_name("UC"), QpType::kUc);
  EXPECT_EQ(qp_attr_mask_names(kPkeyIndex | kPort | kQkey), "PKEY_INDEX, PORT, QKEY");
  EXPECT_EQ(qp_attr_mask_from_name("PATH_MTU"), kPathMtu);
  EXPECT_EQ(qp_attr_mask_from_name("path_mtu"), kPathMtu);
  EXPECT_EQ(qp_attr_mask_from_name("ah_attr"), kAv);
  EXPECT_EQ(qp_attr_mask_from_name("max_rd_atomic"), kMaxQpRdAtomic);
  EXPECT_EQ(qp_attr_mask_from_name("dest_qp_num"), kDestQpn);
  EXPECT_FALSE(qp_attr_mask_from_name("bogus"));
  EXPECT_EQ(wr_opcode_name(WrOpcode::kAtomicFetchAndAdd), "ATOMIC_FETCH_AND_ADD");
  EXPECT_EQ(wr_opcode_from_name("SEND_WITH_IMM"), WrOpcode::kSendWithImm);
  EXPECT_EQ(wc_opcode_of(WrOpcode::kRdmaWriteWithImm), WcOpcode::kRdmaWrite);
  EXPECT_EQ(wc_opcode_of(WrOpcode::kAtomicCmpAndSwp), WcOpcode::kCompSwap);
}

// ---- work queues -----------------------------------------------------------------------------

SendWr send_wr(std::uint64_t id, WrOpcode op = WrOpcode::kSend, std::uint32_t flags = 0) {
  SendWr w;
  w.wr_id = id;
  w.opcode = op;
  w.send_flags = flags;
  w.sg_list = {Sge{0x10000000 + id * 16, 16, 0x100}};
  return w;
}

TEST_F(QpTest, PostSendNeedsRts) {
  Qp& qp = make(QpType::kRc);
  const SendWr wr = send_wr(1);
  for (S s : {S::kReset, S::kInit, S::kRtr}) {
    bring(qp, s);
    auto r = qp.post_send(std::span(&wr, 1));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().bad_wr, 0u);
    EXPECT_EQ(r.error().error.status, VerbsStatus::kInval);
    EXPECT_NE(r.error().error.message.find(std::string("is in ") + std::string(qp_state_name(s))),
              std::string::npos);
    ASSERT_TRUE(to(qp, S::kReset, 0));
  }
  bring(qp, S::kRts);
  EXPECT_TRUE(qp.post_send(std::span(&wr, 1)));
}

TEST_F(QpTest, PostRecvFromInit) {
  Qp& qp = make(QpType::kRc);
  RecvWr wr{7, {Sge{0x10000000, 64, 0x100}}};
  auto r = qp.post_recv(std::span(&wr, 1));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().error.message.find("RESET"), std::string::npos);
  bring(qp, S::kInit);
  ASSERT_TRUE(qp.post_recv(std::span(&wr, 1)));
  ASSERT_EQ(qp.recv_queue().size(), 1u);
  EXPECT_EQ(qp.take_recv()->wr.wr_id, 7u);
  EXPECT_FALSE(qp.take_recv());
}

TEST_F(QpTest, SeveralWrsUnderOneDoorbellStayDistinct) {
  Qp& qp = make(QpType::kRc);
  bring(qp, S::kRts);
  std::vector<SendWr> wrs = {send_wr(1, WrOpcode::kSend), send_wr(2, WrOpcode::kRdmaWrite),
                             send_wr(3, WrOpcode::kRdmaRead)};
  wrs[1].rdma = {0xA000, 0x1234};
  wrs[2].rdma = {0xB000, 0x5678};
  wrs[0].send_flags = send_flag::kInline;
  wrs[0].inline_data = {1, 2, 3};
  ASSERT_TRUE(qp.post_send(wrs));
  // The caller may reuse its WRs (and inline bytes) right after posting.
  wrs[0].inline_data = {9, 9, 9};
  wrs[1].rdma.remote_addr = 0;

  const auto& sq = qp.send_queue();
  ASSERT_EQ(sq.size(), 3u);
  EXPECT_EQ(sq[0].wr.wr_id, 1u);
  EXPECT_EQ(sq[1].wr.wr_id, 2u);
  EXPECT_EQ(sq[2].wr.wr_id, 3u);
  EXPECT_EQ(sq[0].wr.inline_data, (std::vector<std::uint8_t>{1, 2, 3}));
  EXPECT_EQ(sq[1].wr.opcode, WrOpcode::kRdmaWrite);
  EXPECT_EQ(sq[1].wr.rdma.remote_addr, 0xA000u);
  EXPECT_EQ(sq[2].wr.rdma.rkey, 0x5678u);
  EXPECT_EQ(sq[0].doorbell, sq[2].doorbell);
  EXPECT_LT(sq[0].seq, sq[1].seq);
  EXPECT_LT(sq[1].seq, sq[2].seq);

  const SendWr later = send_wr(4);
  ASSERT_TRUE(qp.post_send(std::span(&later, 1)));
  EXPECT_NE(qp.send_queue()[3].doorbell, sq[0].doorbell);
}

TEST_F(QpTest, PostSendStopsAtTheFirstBadWr) {
  Qp& qp = make(QpType::kRc, {8, 8, 2, 2, 16});
  bring(qp, S::kRts);
  std::vector<SendWr> wrs = {send_wr(1), send_wr(2), send_wr(3)};
  wrs[1].sg_list.assign(3, Sge{0x10000000, 1, 0x100});  // max_send_sge is 2
  auto r = qp.post_send(wrs);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().bad_wr, 1u);
  EXPECT_EQ(r.error().error.message, "post_send: WR 1 (wr_id 0x2): 3 SGEs, max_send_sge is 2");
  ASSERT_EQ(qp.send_queue().size(), 1u);  // WR 0 stays posted, WR 2 was never looked at
  EXPECT_EQ(qp.send_queue()[0].wr.wr_id, 1u);
}

TEST_F(QpTest, SendQueueCapacity) {
  Qp& qp = make(QpType::kRc, {2, 2, 1, 1, 0});
  bring(qp, S::kRts);
  const std::vector<SendWr> wrs = {send_wr(1), send_wr(2), send_wr(3)};
  auto r = qp.post_send(wrs);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().bad_wr, 2u);
  EXPECT_EQ(r.error().error.status, VerbsStatus::kNoMem);
  EXPECT_EQ(qp.send_queue().size(), 2u);

  std::vector<RecvWr> rwrs(3, RecvWr{0, {Sge{0x10000000, 8, 0x100}}});
  auto rr = qp.post_recv(rwrs);
  ASSERT_FALSE(rr);
  EXPECT_EQ(rr.error().bad_wr, 2u);
  EXPECT_EQ(rr.error().error.status, VerbsStatus::kNoMem);
}

TEST_F(QpTest, SendWrChecksPerQpType) {
  const auto reject = [](Qp& qp, SendWr wr, VerbsStatus st, std::string_view needle) {
    auto r = qp.post_send(std::span(&wr, 1));
    ASSERT_FALSE(r) << "accepted; wanted " << needle;
    EXPECT_EQ(r.error().error.status, st);
    EXPECT_NE(r.error().error.message.find(needle), std::string::npos) << r.error().error.message;
  };
  Qp& ud = make(QpType::kUd);
  bring(ud, S::kRts);
  reject(ud, send_wr(1, WrOpcode::kRdmaWrite), VerbsStatus::kInval,
         "RDMA_WRITE is not available on UD QPs");
  reject(ud, send_wr(1, WrOpcode::kRdmaRead), VerbsStatus::kInval, "RDMA_READ");
  SendWr bad_qpn = send_wr(1);
  bad_qpn.ud.remote_qpn = 0x1000000;
  reject(ud, bad_qpn, VerbsStatus::kInval, "remote_qpn");
  SendWr ud_ok = send_wr(2, WrOpcode::kSendWithImm);
  ud_ok.ud.remote_qpn = 0x33;
  ud_ok.ud.remote_qkey = 0x11111111;
  EXPECT_TRUE(ud.post_send(std::span(&ud_ok, 1)));

  Qp& uc = make(QpType::kUc);
  bring(uc, S::kRts);
  reject(uc, send_wr(1, WrOpcode::kRdmaRead), VerbsStatus::kInval,
         "RDMA_READ is not available on UC QPs");
  reject(uc, send_wr(1, WrOpcode::kAtomicFetchAndAdd), VerbsStatus::kInval, "UC");
  const SendWr uc_write = send_wr(2, WrOpcode::kRdmaWriteWithImm);
  EXPECT_TRUE(uc.post_send(std::span(&uc_write, 1)));

  Qp& rc = make(QpType::kRc, {8, 8, 2, 2, 4});
  bring(rc, S::kRts);
  // Binds and local invalidation are send-queue work of connected QPs, never of UD ones.
  reject(ud, send_wr(1, WrOpcode::kLocalInv), VerbsStatus::kInval, "LOCAL_INV");
  reject(ud, send_wr(1, WrOpcode::kBindMw), VerbsStatus::kInval, "BIND_MW");
  const SendWr uc_bind = send_wr(3, WrOpcode::kBindMw);
  EXPECT_TRUE(uc.post_send(std::span(&uc_bind, 1)));
  reject(rc, send_wr(1, WrOpcode::kAtomicCmpAndSwp), VerbsStatus::kInval, "8 bytes");
  SendWr atomic = send_wr(1, WrOpcode::kAtomicCmpAndSwp);
  atomic.sg_list[0].length = 8;
  atomic.atomic.remote_addr = 0x1004;
  reject(rc, atomic, VerbsStatus::kInval, "not 8-byte aligned");
  atomic.atomic.remote_addr = 0x1008;
  EXPECT_TRUE(rc.post_send(std::span(&atomic, 1)));
  SendWr inl = send_wr(1, WrOpcode::kSend, send_flag::kInline);
  inl.inline_data.assign(5, 0);
  reject(rc, inl, VerbsStatus::kInval, "max_inline_data is 4");
  reject(rc, send_wr(1, WrOpcode::kRdmaRead, send_flag::kInline), VerbsStatus::kInval, "INLINE");
  reject(rc, send_wr(1, WrOpcode::kSend, 0x100), VerbsStatus::kInval, "send_flags");
}

TEST_F(QpTest, ErrFlushesEveryOutstandingWrWithFlushErr) {
  Qp& qp = make(QpType::kRc);
  bring(qp, S::kRts);
  // Unsignaled WRs are flushed with a completion too.
  const std::vector<SendWr> sends = {send_wr(1, WrOpcode::kSend),
                                     send_wr(2, WrOpcode::kRdmaWrite, send_flag::kSignaled),
                                     send_wr(3, WrOpcode::kRdmaRead)};
  ASSERT_TRUE(qp.post_send(sends));
  const std::vector<RecvWr> recvs = {RecvWr{10, {}}, RecvWr{11, {}}};
  ASSERT_TRUE(qp.post_recv(recvs));

  ASSERT_TRUE(to(qp, S::kErr, 0));
  EXPECT_TRUE(qp.send_queue().empty());
  EXPECT_TRUE(qp.recv_queue().empty());

  const auto sc = scq->poll(10);
  ASSERT_EQ(sc.size(), 3u);
  const WcOpcode want_ops[] = {WcOpcode::kSend, WcOpcode::kRdmaWrite, WcOpcode::kRdmaRead};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(sc[i].wr_id, i + 1);
    EXPECT_EQ(sc[i].status, WcStatus::kWrFlushErr);
    EXPECT_EQ(sc[i].opcode, want_ops[i]);
    EXPECT_EQ(sc[i].qp_num, qp.qp_num());
  }
  const auto rc = rcq->poll(10);
  ASSERT_EQ(rc.size(), 2u);
  EXPECT_EQ(rc[0].wr_id, 10u);
  EXPECT_EQ(rc[1].wr_id, 11u);
  EXPECT_EQ(rc[0].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(rc[0].opcode, WcOpcode::kRecv);

  // In ERR, new WRs are accepted and flushed at once.
  const SendWr late = send_wr(4);
  ASSERT_TRUE(qp.post_send(std::span(&late, 1)));
  const RecvWr late_recv{12, {}};
  ASSERT_TRUE(qp.post_recv(std::span(&late_recv, 1)));
  EXPECT_EQ(scq->poll_one()->wr_id, 4u);
  EXPECT_EQ(rcq->poll_one()->wr_id, 12u);
  // ERR → ERR flushes nothing twice.
  ASSERT_TRUE(to(qp, S::kErr, 0));
  EXPECT_EQ(scq->size() + rcq->size(), 0u);
}

TEST_F(QpTest, ResetEmptiesQueuesWithoutCompletionsAndForgetsAttributes) {
  Qp& qp = make(QpType::kRc);
  bring(qp, S::kRts);
  const SendWr wr = send_wr(1, WrOpcode::kSend, send_flag::kSignaled);
  ASSERT_TRUE(qp.post_send(std::span(&wr, 1)));
  qp.complete_send(WcStatus::kSuccess);
  ASSERT_TRUE(qp.post_send(std::span(&wr, 1)));
  ASSERT_EQ(scq->size(), 1u);

  ASSERT_TRUE(to(qp, S::kReset, 0));
  EXPECT_TRUE(qp.send_queue().empty());
  EXPECT_EQ(scq->size(), 0u) << "the QP's completions are purged";
  EXPECT_EQ(qp.query().dest_qp_num, 0u);
  EXPECT_EQ(qp.query().sq_psn, 0u);
  bring(qp, S::kRts);  // and it can be brought up again
}

TEST_F(QpTest, SendCompletionsFollowSignaling) {
  Qp& qp = make(QpType::kRc);
  bring(qp, S::kRts);
  const std::vector<SendWr> wrs = {send_wr(1), send_wr(2, WrOpcode::kSend, send_flag::kSignaled),
                                   send_wr(3)};
  ASSERT_TRUE(qp.post_send(wrs));
  EXPECT_EQ(qp.complete_send(WcStatus::kSuccess)->wr.wr_id, 1u);
  EXPECT_EQ(scq->size(), 0u) << "unsignaled success: no CQE";
  qp.complete_send(WcStatus::kSuccess);
  EXPECT_EQ(scq->poll_one()->wr_id, 2u);
  qp.complete_send(WcStatus::kRemAccessErr);
  const auto err = scq->poll_one();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->wr_id, 3u);
  EXPECT_EQ(err->status, WcStatus::kRemAccessErr) << "errors always complete";
  EXPECT_FALSE(qp.complete_send(WcStatus::kSuccess));

  Qp& all = make(QpType::kRc, {8, 8, 2, 2, 0}, /*sig_all=*/true);
  bring(all, S::kRts);
  const SendWr w = send_wr(9, WrOpcode::kRdmaRead);
  ASSERT_TRUE(all.post_send(std::span(&w, 1)));
  all.complete_send(WcStatus::kSuccess, 16);
  const auto c = scq->poll_one();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->opcode, WcOpcode::kRdmaRead);
  EXPECT_EQ(c->byte_len, 16u);
}

TEST_F(QpTest, ReceiveCompletionCarriesTheWqe) {
  Qp& qp = make(QpType::kUd);
  bring(qp, S::kRtr);
  const RecvWr wr{77, {}};
  ASSERT_TRUE(qp.post_recv(std::span(&wr, 1)));
  rcq->req_notify(true);
  Cqe c;
  c.opcode = WcOpcode::kRecv;
  c.byte_len = 40 + 12;
  c.src_qp = 0x33;
  c.wc_flags = wc_flag::kGrh | wc_flag::kWithImm;
  c.imm_data = 0xCAFE;
  qp.complete_recv(*qp.take_recv(), c, true);
  const auto got = rcq->poll_one();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->wr_id, 77u);
  EXPECT_EQ(got->qp_num, qp.qp_num());
  EXPECT_EQ(got->src_qp, 0x33u);
  EXPECT_EQ(got->imm_data, 0xCAFEu);
  EXPECT_EQ(rcq->comp_events(), 1u);
}

TEST_F(QpTest, SqdDrainsAndNotifies) {
  Qp& qp = make(QpType::kRc);
  bring(qp, S::kRts);
  const std::vector<SendWr> wrs = {send_wr(1), send_wr(2)};
  ASSERT_TRUE(qp.post_send(wrs));
  qp.send_queue()[0].started = true;  // the requester sent the first one

  ASSERT_TRUE(to(qp, S::kSqd, kEnSqdAsyncNotify));
  EXPECT_TRUE(qp.query().sq_draining);
  EXPECT_FALSE(qp.can_send()) << "SQD starts no new WQE";
  EXPECT_TRUE(dev.async_events().empty());

  qp.complete_send(WcStatus::kSuccess);
  EXPECT_FALSE(qp.query().sq_draining);
  EXPECT_EQ(dev.async_events(),
            (std::vector<AsyncEvent>{{AsyncEventType::kSqDrained, qp.qp_num()}}));
  EXPECT_EQ(qp.send_queue().size(), 1u) << "the unstarted WQE waits for RTS";

  ASSERT_TRUE(to(qp, S::kRts, 0));
  EXPECT_TRUE(qp.can_send());

  // Nothing in flight: drained at once.
  ASSERT_TRUE(to(qp, S::kSqd, kEnSqdAsyncNotify));
  EXPECT_FALSE(qp.query().sq_draining);
  EXPECT_EQ(dev.async_events().size(), 1u);
}

TEST_F(QpTest, TransportErrorsAndSqe) {
  Qp& rc = make(QpType::kRc);
  bring(rc, S::kRts);
  const SendWr wr = send_wr(5);
  ASSERT_TRUE(rc.post_send(std::span(&wr, 1)));
  rc.enter_error(AsyncEventType::kQpAccessErr);
  EXPECT_EQ(rc.state(), S::kErr);
  EXPECT_EQ(scq->poll_one()->status, WcStatus::kWrFlushErr);
  EXPECT_EQ(dev.async_events(),
            (std::vector<AsyncEvent>{{AsyncEventType::kQpAccessErr, rc.qp_num()}}));

  Qp& ud = make(QpType::kUd);
  bring(ud, S::kRts);
  const RecvWr rwr{6, {}};
  ASSERT_TRUE(ud.post_recv(std::span(&rwr, 1)));
  ASSERT_TRUE(ud.post_send(std::span(&wr, 1)));
  ud.enter_sqe();
  EXPECT_EQ(ud.state(), S::kSqe);
  EXPECT_TRUE(ud.can_receive()) << "SQE keeps receiving";
  EXPECT_EQ(scq->poll_one()->status, WcStatus::kWrFlushErr);
  EXPECT_EQ(ud.recv_queue().size(), 1u);
  ASSERT_TRUE(to(ud, S::kRts, kQkey));
  EXPECT_EQ(ud.state(), S::kRts);
}

TEST_F(QpTest, RaiseReportsTheQpNumber) {
  Qp& qp = make(QpType::kRc);
  qp.raise(AsyncEventType::kCommEst);
  EXPECT_EQ(dev.poll_async_event(), (AsyncEvent{AsyncEventType::kCommEst, qp.qp_num()}));
}

}  // namespace
}  // namespace roceconf::target
