#include "suite/reference_nic/mr.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace roceconf::target {
namespace {

using access::kLocalWrite;
using access::kMwBind;
using access::kRemoteAtomic;
using access::kRemoteRead;
using access::kRemoteWrite;

class MrTest : public ::testing::Test {
 protected:
  Mr* reg(std::uint32_t pd, std::uint64_t len, AccessFlags acc) {
    auto r = table.reg(MrInit{pd, len, acc, std::nullopt, {}});
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : nullptr;
  }
  MrTable table;
};

// Default keys: seeded random below 2^31 (window keys have bit 31), none reused right after its
// dereg_mr, the same sequence for the same seed.
TEST_F(MrTest, KeysAreRandomAndNotReusedAfterDereg) {
  std::vector<std::uint32_t> first;
  std::set<std::uint32_t> retired;
  for (int i = 0; i < 64; ++i) {
    Mr* m = reg(1, 64, kLocalWrite);
    first.push_back(m->rkey());
    EXPECT_LT(m->rkey(), 0x80000000u);
    EXPECT_NE(m->rkey() >> 8, 0u);
    EXPECT_EQ(table.find_key(m->rkey()), m);
  }
  std::set<std::int64_t> steps;
  for (std::size_t i = 1; i < first.size(); ++i)
    steps.insert(std::int64_t{first[i]} - std::int64_t{first[i - 1]});
  EXPECT_GT(steps.size(), 60u);  // no common step
  for (std::uint32_t h = 1; h <= 64; ++h) {
    retired.insert(table.find(h)->rkey());
    ASSERT_TRUE(table.dereg(h));
  }
  for (int i = 0; i < 1000; ++i) {
    Mr* m = reg(1, 64, kLocalWrite);
    EXPECT_FALSE(retired.contains(m->rkey())) << i;
    retired.insert(m->rkey());
    ASSERT_TRUE(table.dereg(m->handle()));
  }
  MrTable again;
  EXPECT_EQ((*again.reg(MrInit{1, 64, kLocalWrite, std::nullopt, {}}))->rkey(), first[0]);
}

// rkey-reuse: the key just deregistered goes to the next region.
TEST_F(MrTest, ReusePolicyHandsTheOldKeyOn) {
  table.set_key_policy(MrTable::KeyPolicy::kReuse, 7);
  Mr* a = reg(1, 64, kLocalWrite);
  const std::uint32_t old_key = a->rkey();
  ASSERT_TRUE(table.dereg(a->handle()));
  EXPECT_EQ(reg(1, 64, kLocalWrite)->rkey(), old_key);
}

// sequential-rkeys: `slot << 8 | variant`, as many NICs build them.
TEST_F(MrTest, KeysAreIndexShiftedWithVariantAndUnique) {
  table.set_key_policy(MrTable::KeyPolicy::kSequential, 0);
  Mr* a = reg(1, 64, kLocalWrite);
  Mr* b = reg(1, 64, kLocalWrite);
  EXPECT_EQ(a->lkey() >> 8, 1u);
  EXPECT_EQ(b->lkey() >> 8, 2u);
  EXPECT_EQ(a->rkey(), a->lkey());
  EXPECT_NE(a->lkey(), b->lkey());
  EXPECT_EQ(a->handle(), 1u);
  EXPECT_EQ(b->handle(), 2u);

  // Re-using slot 1 changes the variant byte: the old key no longer finds anything.
  const std::uint32_t old_key = a->lkey();
  ASSERT_TRUE(table.dereg(a->handle()));
  Mr* c = reg(1, 64, kLocalWrite);
  EXPECT_EQ(c->lkey() >> 8, 1u);
  EXPECT_NE(c->lkey(), old_key);
  EXPECT_EQ(table.find_key(old_key), nullptr);
  EXPECT_EQ(table.find_key(c->lkey()), c);
  EXPECT_EQ(c->handle(), 3u);  // handles are not reused

  std::set<std::uint32_t> keys;
  for (int i = 0; i < 500; ++i) keys.insert(reg(1, 8, 0)->lkey());
  EXPECT_EQ(keys.size(), 500u);
  EXPECT_EQ(table.find_key(0), nullptr);  // key 0 is never issued
}

TEST_F(MrTest, RegistrationRules) {
  auto r = table.reg(MrInit{1, 64, kRemoteWrite, std::nullopt, {}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().status, VerbsStatus::kInval);
  EXPECT_NE(r.error().message.find("LOCAL_WRITE"), std::string::npos) << r.error().message;
  EXPECT_FALSE(table.reg(MrInit{1, 64, kRemoteAtomic, std::nullopt, {}}));
  EXPECT_TRUE(table.reg(MrInit{1, 64, kRemoteRead, std::nullopt, {}}));  // read alone is fine
  EXPECT_FALSE(table.reg(MrInit{1, 0, 0, std::nullopt, {}}));
  EXPECT_FALSE(table.reg(MrInit{1, 64, 0x100, std::nullopt, {}}));
  EXPECT_FALSE(table.reg(MrInit{1, 64, 0, UINT64_MAX - 10, {}}));  // iova + len wraps

  MrTable small(MrTable::Limits{1, 1024});
  EXPECT_FALSE(small.reg(MrInit{1, 2048, 0, std::nullopt, {}}));
  EXPECT_TRUE(small.reg(MrInit{1, 16, 0, std::nullopt, {}}));
  auto full = small.reg(MrInit{1, 16, 0, std::nullopt, {}});
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().status, VerbsStatus::kNoMem);
}

TEST_F(MrTest, TargetOwnedAndCallerBuffers) {
  Mr* owned = reg(1, 100, kLocalWrite);
  EXPECT_TRUE(owned->owns_memory());
  EXPECT_EQ(owned->length(), 100u);
  EXPECT_EQ(owned->addr() % 4096, 0u);

  std::vector<std::uint8_t> mine(32, 0xAB);
  auto r = table.reg(MrInit{1, 0, kLocalWrite | kRemoteRead, 0x5000, mine});
  ASSERT_TRUE(r);
  EXPECT_FALSE((*r)->owns_memory());
  EXPECT_EQ((*r)->addr(), 0x5000u);
  EXPECT_EQ((*r)->length(), 32u);
  auto span = table.check_remote(1, (*r)->rkey(), 0x5010, 4, kRemoteRead);
  ASSERT_TRUE(span);
  span->bytes[0] = 0x11;
  EXPECT_EQ(mine[16], 0x11);  // the caller's bytes, not a copy
}

TEST_F(MrTest, AutomaticVasDoNotOverlap) {
  Mr* a = reg(1, 5000, 0);
  Mr* b = reg(1, 10, 0);
  EXPECT_GE(b->addr(), a->addr() + a->length());
  // One past the end of a is not inside b either.
  EXPECT_FALSE(b->contains(a->addr() + a->length(), 1));
}

TEST_F(MrTest, CheckRemoteReasons) {
  Mr* mr = reg(1, 4096, kLocalWrite | kRemoteRead | kRemoteWrite);
  const std::uint64_t va = mr->addr();
  const std::uint32_t rkey = mr->rkey();

  auto ok = table.check_remote(1, rkey, va + 100, 200, kRemoteWrite);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->mr, mr);
  EXPECT_EQ(ok->bytes.size(), 200u);
  EXPECT_EQ(ok->bytes.data(), mr->bytes().data() + 100);

  auto nf = table.check_remote(1, rkey + 1, va, 8, kRemoteRead);  // wrong variant byte
  ASSERT_FALSE(nf);
  EXPECT_EQ(nf.error().fault, AccessFault::kNotFound);
  EXPECT_EQ(table.check_remote(1, 0xDEAD00, va, 8, kRemoteRead).error().fault,
            AccessFault::kNotFound);

  auto pd = table.check_remote(2, rkey, va, 8, kRemoteRead);
  ASSERT_FALSE(pd);
  EXPECT_EQ(pd.error().fault, AccessFault::kWrongPd);

  auto denied = table.check_remote(1, rkey, va, 8, kRemoteAtomic);
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().fault, AccessFault::kAccessDenied);
  EXPECT_NE(denied.error().message.find("REMOTE_ATOMIC"), std::string::npos);
}

TEST_F(MrTest, CheckRemoteBounds) {
  Mr* mr = reg(1, 4096, kLocalWrite | kRemoteWrite);
  const std::uint64_t va = mr->addr();
  const std::uint32_t k = mr->rkey();
  EXPECT_TRUE(table.check_remote(1, k, va, 4096, kRemoteWrite));      // exactly the MR
  EXPECT_TRUE(table.check_remote(1, k, va + 4095, 1, kRemoteWrite));  // last byte
  EXPECT_EQ(table.check_remote(1, k, va + 4095, 2, kRemoteWrite).error().fault,
            AccessFault::kOutOfBounds);  // one past the end
  EXPECT_EQ(table.check_remote(1, k, va - 1, 1, kRemoteWrite).error().fault,
            AccessFault::kOutOfBounds);  // one before
  EXPECT_EQ(table.check_remote(1, k, va, 4097, kRemoteWrite).error().fault,
            AccessFault::kOutOfBounds);
  // va + len wrapping past 2^64 must not look in bounds.
  EXPECT_EQ(table.check_remote(1, k, va + 8, UINT64_MAX - 4, kRemoteWrite).error().fault,
            AccessFault::kOutOfBounds);
}

TEST_F(MrTest, ZeroLengthSkipsTheKeyCheck) {
  Mr* mr = reg(1, 64, kLocalWrite);  // no remote rights at all
  // Any key, any VA, any PD, any right: a zero-length access checks nothing (spec-facts §4.6).
  for (std::uint32_t key : {0u, 0xFFFFFFFFu, mr->rkey()}) {
    auto r = table.check_remote(7, key, 0xDEADBEEF, 0, access::kRemote);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->mr, nullptr);
    EXPECT_TRUE(r->bytes.empty());
  }
}

TEST_F(MrTest, LocalChecksGatherScatter) {
  Mr* ro = reg(1, 16, 0);  // local read only
  Mr* rw = reg(1, 16, kLocalWrite);
  std::fill(ro->bytes().begin(), ro->bytes().end(), 0x5A);

  EXPECT_TRUE(table.check_local(1, Sge{ro->addr(), 16, ro->lkey()}, false));
  EXPECT_EQ(table.check_local(1, Sge{ro->addr(), 16, ro->lkey()}, true).error().fault,
            AccessFault::kAccessDenied);

  const Sge g[] = {{ro->addr() + 2, 3, ro->lkey()}, {ro->addr(), 1, ro->lkey()}};
  auto bytes = table.gather(1, g);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(*bytes, (std::vector<std::uint8_t>{0x5A, 0x5A, 0x5A, 0x5A}));

  const Sge s[] = {{rw->addr(), 2, rw->lkey()}, {rw->addr() + 8, 8, rw->lkey()}};
  const std::vector<std::uint8_t> data = {1, 2, 3, 4, 5};
  ASSERT_TRUE(table.scatter(1, s, data));
  EXPECT_EQ(rw->bytes()[0], 1);
  EXPECT_EQ(rw->bytes()[1], 2);
  EXPECT_EQ(rw->bytes()[8], 3);
  EXPECT_EQ(rw->bytes()[10], 5);
  EXPECT_EQ(rw->bytes()[11], 0);

  const std::vector<std::uint8_t> too_long(11, 0);
  EXPECT_EQ(table.scatter(1, s, too_long).error().fault, AccessFault::kLengthError);
  const Sge into_ro[] = {{ro->addr(), 4, ro->lkey()}};
  EXPECT_EQ(table.scatter(1, into_ro, data).error().fault, AccessFault::kLengthError);
  EXPECT_EQ(table.scatter(1, into_ro, std::span(data).first(4)).error().fault,
            AccessFault::kAccessDenied);
}

TEST(AccessFlags, Names) {
  EXPECT_EQ(access_flags_names(0), "0");
  EXPECT_EQ(access_flags_names(kLocalWrite | kRemoteRead), "LOCAL_WRITE|REMOTE_READ");
  EXPECT_EQ(access_flag_from_name("REMOTE_ATOMIC"), kRemoteAtomic);
  EXPECT_EQ(access_flag_from_name("MW_BIND"), kMwBind);
  EXPECT_EQ(access_flags_names(kLocalWrite | kMwBind), "LOCAL_WRITE|MW_BIND");
  EXPECT_FALSE(access_flag_from_name("BIND"));
  EXPECT_EQ(access_fault_name(AccessFault::kOutOfBounds), "out_of_bounds");
}

}  // namespace
}  // namespace roceconf::target
