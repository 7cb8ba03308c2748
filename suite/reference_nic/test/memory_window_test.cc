#include "suite/reference_nic/memory_window.h"

#include <gtest/gtest.h>

#include "suite/reference_nic/device.h"

namespace roceconf::target {
namespace {

constexpr AccessFlags kRegionRights = access::kAll | access::kMwBind;
constexpr AccessFlags kRw = access::kRemoteRead | access::kRemoteWrite;

// A device with one PD, a 4 KiB region open to binding, and two RC QPs of that PD.
class MwTest : public ::testing::Test {
 protected:
  void SetUp() override { make({}); }
  void make(Quirks quirks) {
    DeviceConfig config;
    config.quirks = quirks;
    dev_ = std::make_unique<Device>(config);
    pd_ = *dev_->alloc_pd();
    cq_ = (*dev_->create_cq(64))->handle();
    mr_ = *dev_->reg_mr(MrInit{pd_, 4096, kRegionRights, std::nullopt, {}});
    a_ = *dev_->create_qp(QpInit{QpType::kRc, pd_, cq_, cq_, QpCap{16, 16, 1, 1}});
    b_ = *dev_->create_qp(QpInit{QpType::kRc, pd_, cq_, cq_, QpCap{16, 16, 1, 1}});
  }
  void with_quirk(Quirk q) {
    Quirks quirks;
    quirks.set(q);
    make(quirks);
  }
  MwAccessor by(const Qp* qp) const { return {qp->pd(), qp->qp_num()}; }
  MwBind bind(const Mw& mw, std::uint64_t offset, std::uint64_t length, AccessFlags rights = kRw,
              bool zero_based = false) const {
    MwBind b;
    b.mw = mw.handle;
    b.mr = mr_->handle();
    b.addr = mr_->addr() + offset;
    b.length = length;
    b.access = rights;
    b.zero_based = zero_based;
    b.by_verb = mw.type == MwType::kType1;
    return b;
  }
  // Binds through a send WR run by `qp` (what a BIND_MW or the verb's WQE does).
  WcStatus run_bind(Qp* qp, const MwBind& b) {
    SendWr wr;
    wr.opcode = WrOpcode::kBindMw;
    wr.bind_mw = b;
    return dev_->execute_local_op(*qp, wr);
  }
  WcStatus run_local_inv(Qp* qp, std::uint32_t rkey) {
    SendWr wr;
    wr.opcode = WrOpcode::kLocalInv;
    wr.invalidate_rkey = rkey;
    return dev_->execute_local_op(*qp, wr);
  }
  AccessResult access_via(Qp* qp, std::uint32_t rkey, std::uint64_t va, std::uint64_t len,
                          AccessFlags needed = access::kRemoteWrite) {
    return dev_->check_remote(*qp, rkey, va, len, needed);
  }

  std::unique_ptr<Device> dev_;
  std::uint32_t pd_ = 0, cq_ = 0;
  Mr* mr_ = nullptr;
  Qp* a_ = nullptr;
  Qp* b_ = nullptr;
};

TEST_F(MwTest, WindowKeysAreApartFromRegionKeys) {
  const Mw* mw = *dev_->alloc_mw(pd_, MwType::kType1);
  EXPECT_TRUE(MwTable::is_window_key(mw->rkey));
  EXPECT_FALSE(MwTable::is_window_key(mr_->rkey()));
  EXPECT_FALSE(dev_->alloc_mw(999, MwType::kType1));
  EXPECT_FALSE(dev_->mw_table().alloc(pd_, static_cast<MwType>(3)));
}

TEST_F(MwTest, Type1RebindKillsTheOldKey) {
  Mw* mw = *dev_->alloc_mw(pd_, MwType::kType1);
  auto first = bind(*mw, 0, 1024);
  first.rkey = MwTable::next_rkey(*mw);
  ASSERT_EQ(run_bind(a_, first), WcStatus::kSuccess);
  const std::uint32_t key1 = mw->rkey;
  ASSERT_TRUE(access_via(a_, key1, mr_->addr(), 64));
  // Any QP of the PD reaches a type 1 window.
  EXPECT_TRUE(access_via(b_, key1, mr_->addr(), 64));
  auto second = bind(*mw, 1024, 1024);
  second.rkey = MwTable::next_rkey(*mw);
  ASSERT_EQ(run_bind(a_, second), WcStatus::kSuccess);
  EXPECT_NE(mw->rkey, key1);
  EXPECT_TRUE(access_via(a_, mw->rkey, mr_->addr() + 1024, 64));
  const auto old = access_via(a_, key1, mr_->addr() + 1024, 64);
  ASSERT_FALSE(old);
  EXPECT_EQ(old.error().fault, AccessFault::kNotFound);
}

TEST_F(MwTest, WindowBoundsRightsAndPd) {
  Mw* mw = *dev_->alloc_mw(pd_, MwType::kType1);
  ASSERT_EQ(run_bind(a_, bind(*mw, 512, 1024, access::kRemoteRead)), WcStatus::kSuccess);
  const std::uint32_t key = mw->rkey;
  const std::uint64_t base = mr_->addr() + 512;
  EXPECT_TRUE(access_via(a_, key, base, 1024, access::kRemoteRead));
  EXPECT_EQ(access_via(a_, key, base - 1, 8, access::kRemoteRead).error().fault,
            AccessFault::kOutOfBounds);
  EXPECT_EQ(access_via(a_, key, base + 1000, 32, access::kRemoteRead).error().fault,
            AccessFault::kOutOfBounds);
  // C10-77: the region allows writes, the window does not.
  EXPECT_EQ(access_via(a_, key, base, 8).error().fault, AccessFault::kAccessDenied);
  // C10-76.2.1: a QP of another PD.
  const std::uint32_t other = *dev_->alloc_pd();
  Qp* c = *dev_->create_qp(QpInit{QpType::kRc, other, cq_, cq_, QpCap{16, 16, 1, 1}});
  EXPECT_EQ(access_via(c, key, base, 8, access::kRemoteRead).error().fault, AccessFault::kWrongPd);
  // A zero-length access names no memory.
  EXPECT_TRUE(access_via(c, 0x12345678, 0, 0));
}

TEST_F(MwTest, Type2IsReachedThroughItsQpOnly) {
  Mw* mw = *dev_->alloc_mw(pd_, MwType::kType2);
  ASSERT_EQ(run_bind(a_, bind(*mw, 0, 2048)), WcStatus::kSuccess);
  EXPECT_TRUE(access_via(a_, mw->rkey, mr_->addr(), 64));
  EXPECT_EQ(access_via(b_, mw->rkey, mr_->addr(), 64).error().fault, AccessFault::kWrongPd);
}

TEST_F(MwTest, BindRules) {
  Mw* t1 = *dev_->alloc_mw(pd_, MwType::kType1);
  Mw* t2 = *dev_->alloc_mw(pd_, MwType::kType2);
  // o10-37.2.40 / o10-37.2.32: each type by its own path.
  auto wr_bind_of_type1 = bind(*t1, 0, 64);
  wr_bind_of_type1.by_verb = false;
  EXPECT_EQ(run_bind(a_, wr_bind_of_type1), WcStatus::kMwBindErr);
  auto verb_bind_of_type2 = bind(*t2, 0, 64);
  verb_bind_of_type2.by_verb = true;
  EXPECT_FALSE(dev_->mw_table().check_bind_verb(verb_bind_of_type2));
  EXPECT_EQ(run_bind(a_, verb_bind_of_type2), WcStatus::kMwBindErr);
  // o10-36.2.2: no zero-based type 1.
  EXPECT_FALSE(dev_->mw_table().check_bind_verb(bind(*t1, 0, 64, kRw, true)));
  EXPECT_EQ(run_bind(a_, bind(*t1, 0, 64, kRw, true)), WcStatus::kMwBindErr);
  // o10-37.2.30: a type 2 bind of nothing.
  EXPECT_EQ(run_bind(a_, bind(*t2, 0, 0)), WcStatus::kMwBindErr);
  // C10-75: inside the region, zero-based or not.
  EXPECT_EQ(run_bind(a_, bind(*t2, 3072, 2048, kRw, true)), WcStatus::kMwBindErr);
  EXPECT_EQ(run_bind(a_, bind(*t2, 3072, 2048)), WcStatus::kMwBindErr);
  // A key of another window.
  auto foreign = bind(*t2, 0, 64);
  foreign.rkey = t1->rkey;
  EXPECT_EQ(run_bind(a_, foreign), WcStatus::kMwBindErr);
  // o10-37.2.26: bound once, not again until invalidated.
  ASSERT_EQ(run_bind(a_, bind(*t2, 0, 64)), WcStatus::kSuccess);
  EXPECT_EQ(run_bind(a_, bind(*t2, 64, 64)), WcStatus::kMwBindErr);
}

TEST_F(MwTest, BindNeedsTheRegionsRightsAndOnePd) {
  Mw* mw = *dev_->alloc_mw(pd_, MwType::kType2);
  // C10-73: no MW_BIND.
  Mr* plain = *dev_->reg_mr(MrInit{pd_, 4096, access::kAll, std::nullopt, {}});
  auto b = bind(*mw, 0, 64);
  b.mr = plain->handle();
  b.addr = plain->addr();
  EXPECT_EQ(run_bind(a_, b), WcStatus::kMwBindErr);
  // C10-74: a writable window on a region without LOCAL_WRITE.
  Mr* ro =
      *dev_->reg_mr(MrInit{pd_, 4096, access::kRemoteRead | access::kMwBind, std::nullopt, {}});
  b.mr = ro->handle();
  b.addr = ro->addr();
  b.access = access::kRemoteWrite;
  EXPECT_EQ(run_bind(a_, b), WcStatus::kMwBindErr);
  b.access = access::kRemoteRead;
  EXPECT_EQ(run_bind(a_, b), WcStatus::kSuccess);
  // C10-72: a window of another PD through this PD's QP.
  const std::uint32_t other = *dev_->alloc_pd();
  Mw* foreign = *dev_->alloc_mw(other, MwType::kType2);
  EXPECT_EQ(run_bind(a_, bind(*foreign, 0, 64)), WcStatus::kMwBindErr);
}

TEST_F(MwTest, ZeroBasedWindowsAnswerFromZero) {
  Mw* mw = *dev_->alloc_mw(pd_, MwType::kType2);
  ASSERT_EQ(run_bind(a_, bind(*mw, 1024, 256, kRw, true)), WcStatus::kSuccess);
  const auto span = access_via(a_, mw->rkey, 0, 64);
  ASSERT_TRUE(span);
  EXPECT_EQ(span->bytes.data(), mr_->bytes().data() + 1024);
  EXPECT_EQ(access_via(a_, mw->rkey, 224, 64).error().fault, AccessFault::kOutOfBounds);
  EXPECT_EQ(access_via(a_, mw->rkey, mr_->addr() + 1024, 8).error().fault,
            AccessFault::kOutOfBounds);
}

TEST_F(MwTest, InvalidationFreesType2Windows) {
  Mw* mw = *dev_->alloc_mw(pd_, MwType::kType2);
  ASSERT_EQ(run_bind(a_, bind(*mw, 0, 64)), WcStatus::kSuccess);
  const std::uint32_t key = mw->rkey;
  // A region registered by reg_mr is not invalidated (o10-37.2.13), nor an unknown key.
  EXPECT_EQ(run_local_inv(a_, mr_->rkey()), WcStatus::kLocQpOpErr);
  EXPECT_EQ(run_local_inv(a_, key ^ 1), WcStatus::kLocQpOpErr);
  ASSERT_EQ(run_local_inv(a_, key), WcStatus::kSuccess);
  EXPECT_FALSE(mw->bound);
  EXPECT_EQ(access_via(a_, key, mr_->addr(), 8).error().fault, AccessFault::kNotFound);
  // Free again: a second invalidation fails, a new bind works (o10-37.2.34).
  EXPECT_EQ(run_local_inv(a_, key), WcStatus::kLocQpOpErr);
  auto again = bind(*mw, 64, 64);
  again.rkey = MwTable::next_rkey(*mw);
  EXPECT_EQ(run_bind(a_, again), WcStatus::kSuccess);
  // Type 1 windows are not invalidated by LOCAL_INV.
  Mw* t1 = *dev_->alloc_mw(pd_, MwType::kType1);
  ASSERT_EQ(run_bind(a_, bind(*t1, 0, 64)), WcStatus::kSuccess);
  EXPECT_EQ(run_local_inv(a_, t1->rkey), WcStatus::kLocQpOpErr);
}

TEST_F(MwTest, RemoteInvalidationOnlyOfTheQpsType2Window) {
  Mw* t2 = *dev_->alloc_mw(pd_, MwType::kType2);
  Mw* t1 = *dev_->alloc_mw(pd_, MwType::kType1);
  ASSERT_EQ(run_bind(a_, bind(*t2, 0, 64)), WcStatus::kSuccess);
  ASSERT_EQ(run_bind(a_, bind(*t1, 0, 64)), WcStatus::kSuccess);
  MwTable& t = dev_->mw_table();
  EXPECT_FALSE(t.check_remote_invalidate(by(a_), t1->rkey));
  EXPECT_FALSE(t.check_remote_invalidate(by(b_), t2->rkey));
  EXPECT_FALSE(t.check_remote_invalidate(by(a_), mr_->rkey()));
  ASSERT_TRUE(t.check_remote_invalidate(by(a_), t2->rkey));
  const std::uint32_t key = t2->rkey;
  t.invalidate_remote(by(a_), key);
  EXPECT_FALSE(t2->bound);
  EXPECT_FALSE(access_via(a_, key, mr_->addr(), 8));
}

TEST_F(MwTest, ResourcesWithBoundWindows) {
  Mw* mw = *dev_->alloc_mw(pd_, MwType::kType2);
  ASSERT_EQ(run_bind(a_, bind(*mw, 0, 64)), WcStatus::kSuccess);
  EXPECT_EQ(dev_->dereg_mr(mr_->handle()).error().status, VerbsStatus::kBusy);
  // o10-2.2.5: destroying the QP succeeds and frees the window.
  ASSERT_TRUE(dev_->destroy_qp(a_->qp_num()));
  EXPECT_FALSE(mw->bound);
  EXPECT_TRUE(dev_->dereg_mr(mr_->handle()));
  ASSERT_TRUE(dev_->destroy_qp(b_->qp_num()));
  EXPECT_EQ(dev_->dealloc_pd(pd_).error().status, VerbsStatus::kBusy);
  const std::uint32_t handle = mw->handle;  // dealloc frees *mw
  ASSERT_TRUE(dev_->dealloc_mw(handle));
  EXPECT_FALSE(dev_->dealloc_mw(handle));
  EXPECT_TRUE(dev_->dealloc_pd(pd_));
}

TEST_F(MwTest, QuirksBreakOneRuleEach) {
  with_quirk(Quirk::kMwRkeySurvivesRebind);
  Mw* mw = *dev_->alloc_mw(pd_, MwType::kType1);
  ASSERT_EQ(run_bind(a_, bind(*mw, 0, 1024)), WcStatus::kSuccess);
  const std::uint32_t old = mw->rkey;
  auto second = bind(*mw, 1024, 1024);
  second.rkey = MwTable::next_rkey(*mw);
  ASSERT_EQ(run_bind(a_, second), WcStatus::kSuccess);
  EXPECT_TRUE(access_via(a_, old, mr_->addr() + 1024, 64));

  with_quirk(Quirk::kMwPdUnchecked);
  mw = *dev_->alloc_mw(pd_, MwType::kType1);
  ASSERT_EQ(run_bind(a_, bind(*mw, 0, 1024)), WcStatus::kSuccess);
  Qp* c = *dev_->create_qp(QpInit{QpType::kRc, *dev_->alloc_pd(), cq_, cq_, QpCap{16, 16, 1, 1}});
  EXPECT_TRUE(access_via(c, mw->rkey, mr_->addr(), 64));

  with_quirk(Quirk::kMwQpUnchecked);
  mw = *dev_->alloc_mw(pd_, MwType::kType2);
  ASSERT_EQ(run_bind(a_, bind(*mw, 0, 1024)), WcStatus::kSuccess);
  EXPECT_TRUE(access_via(b_, mw->rkey, mr_->addr(), 64));

  with_quirk(Quirk::kMwBindRightUnchecked);
  mw = *dev_->alloc_mw(pd_, MwType::kType2);
  Mr* plain = *dev_->reg_mr(MrInit{pd_, 4096, access::kAll, std::nullopt, {}});
  auto b = bind(*mw, 0, 64);
  b.mr = plain->handle();
  b.addr = plain->addr();
  EXPECT_EQ(run_bind(a_, b), WcStatus::kSuccess);

  with_quirk(Quirk::kMwAccessUnchecked);
  mw = *dev_->alloc_mw(pd_, MwType::kType2);
  ASSERT_EQ(run_bind(a_, bind(*mw, 0, 1024, access::kRemoteRead)), WcStatus::kSuccess);
  EXPECT_TRUE(access_via(a_, mw->rkey, mr_->addr(), 64, access::kRemoteWrite));

  with_quirk(Quirk::kMwZeroBasedUnbounded);
  mw = *dev_->alloc_mw(pd_, MwType::kType2);
  ASSERT_EQ(run_bind(a_, bind(*mw, 1024, 256, kRw, true)), WcStatus::kSuccess);
  EXPECT_TRUE(access_via(a_, mw->rkey, 224, 64));
  EXPECT_FALSE(access_via(a_, mw->rkey, 3072, 64));  // still not past the region
}

}  // namespace
}  // namespace roceconf::target
