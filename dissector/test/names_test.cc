#include "dissector/names.h"

#include <gtest/gtest.h>

namespace roceconf {
namespace {

TEST(Names, Syndromes) {
  EXPECT_EQ(syndrome_name(0x1F), "ACK");
  EXPECT_EQ(syndrome_name(0x60), "NAK_PSN_SEQUENCE_ERROR");
  EXPECT_EQ(syndrome_name(0x61), "NAK_INVALID_REQUEST");
  EXPECT_EQ(syndrome_name(0x62), "NAK_REMOTE_ACCESS_ERROR");
  EXPECT_EQ(syndrome_name(0x63), "NAK_REMOTE_OPERATIONAL_ERROR");
  EXPECT_EQ(syndrome_name(0x3A), "RNR_NAK");
  EXPECT_EQ(syndrome_short_name(0x60), "psn_seq_err");
  EXPECT_TRUE(syndrome_reserved(0x40));
  EXPECT_TRUE(syndrome_reserved(0x65));
  EXPECT_TRUE(syndrome_reserved(0x9F));
  EXPECT_FALSE(syndrome_reserved(0x64));
}

TEST(Names, CreditsAndRnrTimers) {
  EXPECT_EQ(ack_credits(0), 0u);
  EXPECT_EQ(ack_credits(5), 6u);
  EXPECT_EQ(ack_credits(30), 32768u);
  EXPECT_FALSE(ack_credits(31));
  EXPECT_EQ(rnr_timer_usec(0), 655360u);
  EXPECT_EQ(rnr_timer_usec(1), 10u);
  EXPECT_EQ(rnr_timer_usec(14), 1280u);
  EXPECT_EQ(rnr_timer_usec(25), 61440u);  // not 61410
  EXPECT_EQ(rnr_timer_usec(31), 491520u);
}

TEST(Names, Mtu) {
  EXPECT_EQ(mtu_bytes(1), 256u);
  EXPECT_EQ(mtu_bytes(3), 1024u);
  EXPECT_EQ(mtu_bytes(5), 4096u);
  EXPECT_EQ(mtu_bytes(0), 0u);
  EXPECT_EQ(mtu_bytes(6), 0u);
  EXPECT_EQ(mtu_enum(2048), 4);
  EXPECT_EQ(mtu_enum(1500), 0);
}

}  // namespace
}  // namespace roceconf
