#include "suite/reference_nic/device.h"

#include <gtest/gtest.h>

#include <set>

namespace roceconf::target {
namespace {

class DeviceTest : public ::testing::Test {
 protected:
  QpInit rc_init(std::uint32_t pd, std::uint32_t cq) {
    return QpInit{QpType::kRc, pd, cq, cq, QpCap{4, 4, 1, 1, 0}, false};
  }
  Device dev;
};

TEST_F(DeviceTest, HandlesAreSmallIntegersNeverReused) {
  EXPECT_EQ(dev.alloc_pd(), 1u);
  EXPECT_EQ(dev.alloc_pd(), 2u);
  ASSERT_TRUE(dev.dealloc_pd(2));
  EXPECT_EQ(dev.alloc_pd(), 3u);
  EXPECT_EQ(dev.pd_handles(), (std::vector<std::uint32_t>{1, 3}));
  EXPECT_EQ((*dev.create_cq(4))->handle(), 1u);
  EXPECT_EQ((*dev.create_cq(4))->handle(), 2u);
  EXPECT_EQ(dev.cq_handles(), (std::vector<std::uint32_t>{1, 2}));
}

TEST_F(DeviceTest, PdWithMrsOrQpsIsBusy) {
  const std::uint32_t pd = *dev.alloc_pd();
  Cq* cq = *dev.create_cq(8);
  Mr* mr = *dev.reg_mr(MrInit{pd, 64, access::kLocalWrite, std::nullopt, {}});
  Qp* qp = *dev.create_qp(rc_init(pd, cq->handle()));

  auto r = dev.dealloc_pd(pd);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().status, VerbsStatus::kBusy);
  EXPECT_EQ(r.error().message, "dealloc_pd: PD 1 still has 1 MR and 1 QP");

  ASSERT_TRUE(dev.dereg_mr(mr->handle()));
  r = dev.dealloc_pd(pd);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "dealloc_pd: PD 1 still has 0 MRs and 1 QP");

  ASSERT_TRUE(dev.destroy_qp(qp->qp_num()));
  EXPECT_TRUE(dev.dealloc_pd(pd));
  EXPECT_EQ(dev.pd(pd), nullptr);
}

TEST_F(DeviceTest, CqUsedByAQpIsBusy) {
  const std::uint32_t pd = *dev.alloc_pd();
  Cq* scq = *dev.create_cq(8);
  Cq* rcq = *dev.create_cq(8);
  Qp* qp = *dev.create_qp(QpInit{QpType::kRc, pd, scq->handle(), rcq->handle(), {}, false});
  EXPECT_EQ(dev.destroy_cq(scq->handle()).error().status, VerbsStatus::kBusy);
  EXPECT_EQ(dev.destroy_cq(rcq->handle()).error().status, VerbsStatus::kBusy);
  ASSERT_TRUE(dev.destroy_qp(qp->qp_num()));
  EXPECT_TRUE(dev.destroy_cq(scq->handle()));
  EXPECT_TRUE(dev.destroy_cq(rcq->handle()));
}

TEST_F(DeviceTest, UnknownHandlesAreEnoent) {
  EXPECT_EQ(dev.dealloc_pd(9).error().status, VerbsStatus::kNoEnt);
  EXPECT_EQ(dev.reg_mr(MrInit{9, 8, 0, std::nullopt, {}}).error().status, VerbsStatus::kNoEnt);
  EXPECT_EQ(dev.dereg_mr(9).error().status, VerbsStatus::kNoEnt);
  EXPECT_EQ(dev.destroy_cq(9).error().status, VerbsStatus::kNoEnt);
  EXPECT_EQ(dev.destroy_qp(0x99).error().status, VerbsStatus::kNoEnt);
  EXPECT_EQ(dev.modify_qp(0x99, {}, qp_attr::kState).error().status, VerbsStatus::kNoEnt);
  EXPECT_EQ(dev.query_qp(0x99).error().message, "query_qp: no QP 0x99");
  EXPECT_EQ(dev.post_send(0x99, {}).error().error.status, VerbsStatus::kNoEnt);
  EXPECT_EQ(dev.post_recv(0x99, {}).error().error.status, VerbsStatus::kNoEnt);
  EXPECT_EQ(dev.poll_cq(9, 1).error().status, VerbsStatus::kNoEnt);
  EXPECT_EQ(dev.req_notify_cq(9, false).error().status, VerbsStatus::kNoEnt);

  const std::uint32_t pd = *dev.alloc_pd();
  Cq* cq = *dev.create_cq(8);
  auto r = dev.create_qp(QpInit{QpType::kRc, pd, cq->handle(), 42, {}, false});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "create_qp: no receive CQ 42");
  EXPECT_EQ(
      dev.create_qp(QpInit{QpType::kRc, 42, cq->handle(), cq->handle(), {}, false}).error().status,
      VerbsStatus::kNoEnt);
}

TEST_F(DeviceTest, CreateLimits) {
  EXPECT_EQ(dev.create_cq(0).error().status, VerbsStatus::kInval);
  EXPECT_EQ(dev.create_cq(dev.attr().max_cqe + 1).error().status, VerbsStatus::kInval);
  const std::uint32_t pd = *dev.alloc_pd();
  Cq* cq = *dev.create_cq(8);
  QpInit big = rc_init(pd, cq->handle());
  big.cap.max_send_wr = dev.attr().qp.max_qp_wr + 1;
  EXPECT_EQ(dev.create_qp(big).error().status, VerbsStatus::kInval);
  big = rc_init(pd, cq->handle());
  big.cap.max_recv_sge = 1000;
  EXPECT_EQ(dev.create_qp(big).error().status, VerbsStatus::kInval);

  DeviceConfig cfg;
  cfg.attr.max_qp = 2;
  Device small(cfg);
  const std::uint32_t p = *small.alloc_pd();
  Cq* c = *small.create_cq(8);
  ASSERT_TRUE(small.create_qp(rc_init(p, c->handle())));
  ASSERT_TRUE(small.create_qp(rc_init(p, c->handle())));
  EXPECT_EQ(small.create_qp(rc_init(p, c->handle())).error().status, VerbsStatus::kNoMem);
}

// QPNs are drawn in a seeded random order from [first_qpn, 2^24): no common step, no repeat
// (also of destroyed ones), the same order for the same seed.
TEST_F(DeviceTest, QpnsAreRandomAndStayUniqueAcrossAThousandCreates) {
  const std::uint32_t pd = *dev.alloc_pd();
  Cq* cq = *dev.create_cq(8);
  std::set<std::uint32_t> seen;
  std::vector<std::uint32_t> live, order;
  std::set<std::int64_t> steps;
  for (int i = 0; i < 1000; ++i) {
    auto qp = dev.create_qp(rc_init(pd, cq->handle()));
    ASSERT_TRUE(qp) << qp.error().message;
    const std::uint32_t qpn = (*qp)->qp_num();
    if (!order.empty()) steps.insert(std::int64_t{qpn} - std::int64_t{order.back()});
    order.push_back(qpn);
    EXPECT_GE(qpn, 0x11u);
    EXPECT_LE(qpn, 0xFFFFFFu);
    EXPECT_TRUE(seen.insert(qpn).second) << "QPN " << qpn << " handed out twice";
    live.push_back(qpn);
    // Destroy every third one: a destroyed QPN must not come back soon either.
    if (i % 3 == 2) {
      ASSERT_TRUE(dev.destroy_qp(live.front()));
      live.erase(live.begin());
    }
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_GT(steps.size(), 990u);
  EXPECT_EQ(dev.qp_nums().size(), live.size());
  EXPECT_EQ(dev.qp_nums_by_age(), live);  // oldest first
  Device again;
  const std::uint32_t p2 = *again.alloc_pd();
  Cq* c2 = *again.create_cq(8);
  EXPECT_EQ((*again.create_qp(rc_init(p2, c2->handle())))->qp_num(), order[0]);
}

TEST_F(DeviceTest, SequentialQpnsQuirkStartsAt0x11) {
  DeviceConfig cfg;
  cfg.quirks.set(Quirk::kSequentialQpns);
  Device d(cfg);
  const std::uint32_t pd = *d.alloc_pd();
  Cq* cq = *d.create_cq(8);
  EXPECT_EQ((*d.create_qp(rc_init(pd, cq->handle())))->qp_num(), 0x11u);
  EXPECT_EQ((*d.create_qp(rc_init(pd, cq->handle())))->qp_num(), 0x12u);
}

TEST_F(DeviceTest, QpnAllocationWrapsAndSkipsLiveOnes) {
  DeviceConfig cfg;
  cfg.first_qpn = 0xFFFFFE;
  Device d(cfg);
  const std::uint32_t pd = *d.alloc_pd();
  Cq* cq = *d.create_cq(8);
  // In some order: the only two QPNs from first_qpn up.
  std::set<std::uint32_t> got;
  got.insert((*d.create_qp(rc_init(pd, cq->handle())))->qp_num());
  got.insert((*d.create_qp(rc_init(pd, cq->handle())))->qp_num());
  EXPECT_EQ(got, (std::set<std::uint32_t>{0xFFFFFE, 0xFFFFFF}));
  // Both are live, so there is none left.
  auto full = d.create_qp(rc_init(pd, cq->handle()));
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().status, VerbsStatus::kNoMem);
  ASSERT_TRUE(d.destroy_qp(0xFFFFFE));
  EXPECT_EQ((*d.create_qp(rc_init(pd, cq->handle())))->qp_num(), 0xFFFFFEu);
}

TEST_F(DeviceTest, Qp1IsTheGsiQp) {
  const std::uint32_t pd = *dev.alloc_pd();
  Cq* cq = *dev.create_cq(8);
  QpInit gsi{QpType::kGsi, pd, cq->handle(), cq->handle(), {}, false};
  auto g = dev.create_qp(gsi);
  ASSERT_TRUE(g);
  EXPECT_EQ((*g)->qp_num(), 1u);
  EXPECT_EQ(dev.create_qp(gsi).error().status, VerbsStatus::kExist);
  // Ordinary QPs never get 0 or 1.
  EXPECT_GE((*dev.create_qp(rc_init(pd, cq->handle())))->qp_num(), 0x11u);
  EXPECT_EQ(dev.qp(1), *g);
}

TEST_F(DeviceTest, DestroyQpDropsItsCompletions) {
  const std::uint32_t pd = *dev.alloc_pd();
  Cq* cq = *dev.create_cq(8);
  Qp* a = *dev.create_qp(rc_init(pd, cq->handle()));
  Qp* b = *dev.create_qp(rc_init(pd, cq->handle()));
  Cqe c;
  c.qp_num = a->qp_num();
  cq->push(c);
  c.qp_num = b->qp_num();
  cq->push(c);
  const std::uint32_t b_num = b->qp_num();
  ASSERT_TRUE(dev.destroy_qp(b_num));
  const auto left = *dev.poll_cq(cq->handle(), 10);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].qp_num, a->qp_num());
  EXPECT_EQ(dev.qp(b_num), nullptr);
}

TEST_F(DeviceTest, DefaultPortHasALinkLocalGidAndTheDefaultPkey) {
  const GidEntry* g = dev.port().gid_table.at(0);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->gid, gid_link_local(dev.port().mac));
  EXPECT_EQ(dev.port().pkey_table.at(0), 0xFFFF);

  DeviceConfig cfg;
  ASSERT_TRUE(cfg.port.gid_table.add(gid_from_ipv4({192, 0, 2, 1})));
  Device d(cfg);
  EXPECT_EQ(d.port().gid_table.at(0)->gid, gid_from_ipv4({192, 0, 2, 1}));
  EXPECT_EQ(d.port().gid_table.at(1), nullptr) << "a configured table is left as given";
}

TEST_F(DeviceTest, CqOverflowReachesTheDeviceEventQueueAndCounter) {
  Cq* a = *dev.create_cq(2);
  Cq* b = *dev.create_cq(2);
  for (int i = 0; i < 3; ++i) a->push(Cqe{});
  b->push(Cqe{});
  EXPECT_EQ(dev.async_events(), (std::vector<AsyncEvent>{{AsyncEventType::kCqErr, a->handle()}}));
  EXPECT_EQ(dev.counters().cq_overflow, 1u);
  EXPECT_FALSE(dev.poll_async_event());
}

TEST_F(DeviceTest, ArmedCqReportsOnTheCompletionChannel) {
  Cq* cq = *dev.create_cq(4);
  ASSERT_TRUE(dev.req_notify_cq(cq->handle(), false));
  cq->push(Cqe{});
  EXPECT_EQ(dev.comp_channel().get_event(), cq->handle());
}

TEST_F(DeviceTest, VerbsByHandle) {
  const std::uint32_t pd = *dev.alloc_pd();
  Cq* cq = *dev.create_cq(8);
  Mr* mr = *dev.reg_mr(MrInit{pd, 64, access::kLocalWrite, std::nullopt, {}});
  const std::uint32_t qpn = (*dev.create_qp(rc_init(pd, cq->handle())))->qp_num();
  QpAttr a;
  a.qp_state = QpState::kInit;
  a.port_num = 1;
  ASSERT_TRUE(dev.modify_qp(
      qpn, a, qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kAccessFlags));
  EXPECT_EQ(dev.query_qp(qpn)->qp_state, QpState::kInit);
  const RecvWr wr{3, {Sge{mr->addr(), 64, mr->lkey()}}};
  ASSERT_TRUE(dev.post_recv(qpn, std::span(&wr, 1)));
  EXPECT_EQ(dev.qp(qpn)->recv_queue().size(), 1u);
  EXPECT_EQ(dev.mr_handles(), (std::vector<std::uint32_t>{mr->handle()}));
}

}  // namespace
}  // namespace roceconf::target
