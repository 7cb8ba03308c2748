#include "suite/reference_nic/errors.h"

#include <gtest/gtest.h>

namespace roceconf::target {
namespace {

TEST(VerbsErrors, StatusesAreErrnoValuesWithTheirNames) {
  EXPECT_EQ(static_cast<int>(VerbsStatus::kInval), EINVAL);
  EXPECT_EQ(static_cast<int>(VerbsStatus::kBusy), EBUSY);
  EXPECT_EQ(verbs_status_name(VerbsStatus::kInval), "EINVAL");
  EXPECT_EQ(verbs_status_name(VerbsStatus::kNoMem), "ENOMEM");
  EXPECT_EQ(verbs_status_name(VerbsStatus::kNoEnt), "ENOENT");
  EXPECT_EQ(verbs_status_name(VerbsStatus::kPerm), "EPERM");
}

TEST(VerbsErrors, VerbsErrorFormatsOneLine) {
  VerbsResult<int> r = verbs_error(VerbsStatus::kBusy, "dealloc_pd: PD {} still has {} MRs", 3, 2);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().status, VerbsStatus::kBusy);
  EXPECT_EQ(r.error().message, "dealloc_pd: PD 3 still has 2 MRs");
  EXPECT_EQ(r.error().to_string(), "EBUSY: dealloc_pd: PD 3 still has 2 MRs");
}

}  // namespace
}  // namespace roceconf::target
