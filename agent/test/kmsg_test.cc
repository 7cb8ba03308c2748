#include "agent/kmsg.h"

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

namespace roceconf::agent {
namespace {

TEST(Kmsg, ParsesARecord) {
  const auto r = parse_kmsg_record("6,1234,5678901,-;rdma_rxe: loaded");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->priority, 6u);
  EXPECT_EQ(r->facility, 0u);
  EXPECT_EQ(r->seq, 1234u);
  EXPECT_EQ(r->usec, 5678901u);
  EXPECT_EQ(r->text, "rdma_rxe: loaded");
}

TEST(Kmsg, KeepsFacilityAndExtraPrefixFields) {
  // Newer kernels add fields after the flags (the caller: "caller=T123").
  const auto r = parse_kmsg_record("30,7,100,c,caller=T42;systemd[1]: a; b");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->priority, 6u);
  EXPECT_EQ(r->facility, 3u);
  EXPECT_EQ(r->text, "systemd[1]: a; b") << "only the first ';' ends the prefix";
}

TEST(Kmsg, MalformedRecordsGetAClearError) {
  const struct {
    const char* line;
    const char* says;
  } cases[] = {
      {"no prefix at all", "no ';'"},
      {"6,1;text", "prio,seq,usec,flags"},
      {"6,1,2;text", "prio,seq,usec,flags"},
      {"x,1,2,-;text", "prio 'x'"},
      {"6,,2,-;text", "seq ''"},
      {"6,1,-5,-;text", "usec '-5'"},
      {"6,1,99999999999999999999999,-;text", "usec"},
      {"6,1,9223372036854775,-;text", "out of range"},
      {";", "prio,seq,usec,flags"},
      {"", "no ';'"},
  };
  for (const auto& c : cases) {
    const auto r = parse_kmsg_record(c.line);
    ASSERT_FALSE(r) << c.line;
    EXPECT_NE(r.error().find(c.says), std::string::npos) << c.line << ": " << r.error();
  }
}

TEST(Kmsg, SelectsTheWindowOnTheUnixClock) {
  // Monotonic 1 s is Unix 1000 s.
  const std::int64_t offset = 999'000'000'000;
  KmsgSelector s(
      {.since_unix_ns = 1000'000'002'000, .until_unix_ns = 1000'000'004'000, .max_lines = 10},
      offset);
  s.feed(
      "6,1,1000001,-;before\n"
      " SUBSYSTEM=infiniband\n"
      "6,2,1000002,-;first in\n"
      "4,3,1000003,-;second in\n garbage dictionary line\n"
      "bad record\n"
      "6,4,10000");  // cut by the chunk: finished by the next
  s.feed("04,-;third in\n6,5,1000005,-;after\n");
  s.finish();
  const KmsgSelection got = s.take();
  ASSERT_EQ(got.lines.size(), 3u);
  EXPECT_EQ(got.lines[0].record.text, "first in");
  EXPECT_EQ(got.lines[0].unix_ns, 1000'000'002'000);
  EXPECT_EQ(got.lines[1].record.priority, 4u);
  EXPECT_EQ(got.lines[2].record.text, "third in");
  EXPECT_EQ(got.dropped, 0u);
  EXPECT_EQ(got.malformed, 1u);
  EXPECT_NE(got.first_malformed.find("bad record"), std::string::npos);
}

TEST(Kmsg, KeepsTheNewestWhenOverTheBound) {
  KmsgSelector s({.since_unix_ns = 0, .until_unix_ns = INT64_MAX, .max_lines = 2}, 0);
  s.feed("6,1,1,-;a\n6,2,2,-;b\n6,3,3,-;c\n6,4,4,-;d");
  s.finish();
  const KmsgSelection got = s.take();
  ASSERT_EQ(got.lines.size(), 2u);
  EXPECT_EQ(got.lines[0].record.text, "c");
  EXPECT_EQ(got.lines[1].record.text, "d");
  EXPECT_EQ(got.dropped, 2u);
}

TEST(Kmsg, ReadsAFileOfRecordsAndSaysWhyNot) {
  const std::string path = ::testing::TempDir() + "kmsg_sample";
  {
    std::ofstream out(path);
    out << "6,10,5,-;rxe0: qp#17 moved to error state\n SUBSYSTEM=infiniband\n";
  }
  const auto got = read_kernel_log(path, {}, 0);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_EQ(got->lines.size(), 1u);
  EXPECT_EQ(got->lines[0].record.seq, 10u);
  std::remove(path.c_str());
  const auto missing = read_kernel_log(path, {}, 0);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().error, ENOENT);
  EXPECT_NE(missing.error().message.find(path), std::string::npos);
}

TEST(Kmsg, ThePrintkClockIsPlacedByTheSchedulersHeader) {
  const char* header =
      "Sched Debug Version: v0.11, 6.1.0-50-amd64 #1\n"
      "ktime                                   : 123456.000250\n"
      "sched_clk                               : 123471.500000\n"
      "cpu_clk                                 : 123471.600100\n"
      "jiffies                                 : 4325000000\n";
  // ktime - cpu_clk = 123456.000250 ms - 123471.600100 ms.
  EXPECT_EQ(monotonic_minus_printk_ns(header), -15'599'850);
  EXPECT_FALSE(monotonic_minus_printk_ns("ktime : 1.000000\n")) << "no cpu_clk";
  EXPECT_FALSE(monotonic_minus_printk_ns("ktime : 1.5\ncpu_clk : 2.000000\n"))
      << "six decimals or nothing";
  EXPECT_FALSE(monotonic_minus_printk_ns("ktime_x : 1.000000\ncpu_clk : 2.000000\n"));
  EXPECT_FALSE(monotonic_minus_printk_ns(""));
  const KmsgClock here = kmsg_clock();
  EXPECT_TRUE(here.method == "sched_debug" || here.method == "monotonic") << here.method;
}

}  // namespace
}  // namespace roceconf::agent
