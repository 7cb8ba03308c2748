#include "suite/reference_nic/counters.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace roceconf::target {
namespace {

TEST(Counters, BadPkeySaturatesAt16Bits) {
  Counters c;
  for (int i = 0; i < 0x10005; ++i) c.count_bad_pkey();
  EXPECT_EQ(c.bad_pkey, 0xFFFF);
  EXPECT_EQ(c.get("bad_pkey"), 0xFFFFu);
}

TEST(Counters, OthersAre64Bit) {
  Counters c;
  c.qkey_violation = 0xFFFFFFFFull;
  ++c.qkey_violation;
  EXPECT_EQ(c.get("qkey_violation"), 0x100000000ull);
}

TEST(Counters, NamesAreTheControlApiNames) {
  Counters c;
  std::vector<std::string> names;
  c.for_each([&](std::string_view n, std::uint64_t) { names.emplace_back(n); });
  const std::vector<std::string> want = {
      "bad_pkey",     "qkey_violation",    "out_of_sequence",  "duplicate_request",
      "seq_nak_sent", "rnr_nak_sent",      "rnr_nak_received", "icrc_error",
      "unknown_qp",   "local_ack_timeout", "retry_exceeded",   "rx_packets",
      "rx_bytes",     "tx_packets",        "tx_bytes",         "cq_overflow"};
  EXPECT_EQ(names, want);
  EXPECT_FALSE(c.get("no_such_counter"));
  c.rnr_nak_sent = 3;
  EXPECT_EQ(c.get("rnr_nak_sent"), 3u);
  c.reset();
  EXPECT_EQ(c.get("rnr_nak_sent"), 0u);
}

}  // namespace
}  // namespace roceconf::target
