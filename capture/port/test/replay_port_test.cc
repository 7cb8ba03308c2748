// Replaying a capture: frames come back at their file timestamps on the port's virtual clock,
// silence windows pass as they did in the capture, and sends are recorded.
#include "capture/port/replay_port.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <fstream>

#include "capture/port/pcapng_writer.h"
#include "capture/port/test/port_test_util.h"

namespace roceconf {
namespace {

using test::psn_of;
using test::roce_frame;
using test::TempDir;

constexpr std::int64_t kT0 = 1'700'000'000'000'000'007;
constexpr TimeNs kMs = 1'000'000;

// Frames 1, 2, 3 at t0, t0 + 1 ms, t0 + 5 ms.
std::string write_capture(const TempDir& dir) {
  const std::string path = dir.file("replay.pcapng");
  auto w = PcapngWriter::create(path);
  EXPECT_TRUE(w);
  const TimeNs offsets[] = {0, 1 * kMs, 5 * kMs};
  for (std::uint32_t i = 0; i < 3; ++i) {
    const auto frame = roce_frame(i + 1);
    EXPECT_TRUE(w->write({.frame = frame, .unix_ns = kT0 + offsets[i], .comment = "step"}));
  }
  EXPECT_TRUE(w->close());
  return path;
}

std::unique_ptr<ReplayPort> must_open(const std::string& path) {
  auto port = ReplayPort::open(path);
  EXPECT_TRUE(port) << (port ? "" : port.error().message);
  return port ? std::move(*port) : nullptr;
}

TEST(ReplayPortTest, PlaysFramesAtTheirTimestamps) {
  TempDir dir;
  auto port = must_open(write_capture(dir));
  ASSERT_TRUE(port);
  EXPECT_EQ(port->link_type(), LinkType::kEthernet);
  EXPECT_EQ(port->clock().now_ns(), kT0);  // starts at the first frame

  auto got = port->receive(kT0 + 2 * kMs);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ(psn_of((*got)->data), 1u);
  EXPECT_EQ((*got)->time_ns, kT0);
  EXPECT_EQ((*got)->unix_ns, kT0);
  got = port->receive(kT0 + 2 * kMs);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ(psn_of((*got)->data), 2u);
  EXPECT_EQ(port->clock().now_ns(), kT0 + 1 * kMs);

  // Frame 3 is later than the window: silence, and the clock ends the window.
  got = port->receive(kT0 + 2 * kMs);
  ASSERT_TRUE(got);
  EXPECT_FALSE(*got);
  EXPECT_EQ(port->clock().now_ns(), kT0 + 2 * kMs);

  got = port->receive_for(10 * kMs);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ(psn_of((*got)->data), 3u);
  EXPECT_EQ(port->clock().now_ns(), kT0 + 5 * kMs);
  EXPECT_TRUE(port->at_end());

  got = port->receive_for(kMs);
  ASSERT_TRUE(got);
  EXPECT_FALSE(*got);
  EXPECT_EQ(port->clock().now_ns(), kT0 + 6 * kMs);
}

TEST(ReplayPortTest, SendIsRecordedWithTheReplayTime) {
  TempDir dir;
  auto port = must_open(write_capture(dir));
  ASSERT_TRUE(port);
  ASSERT_TRUE(port->receive(kT0 + 1 * kMs));
  const auto reply = roce_frame(42);
  ASSERT_TRUE(port->send(reply));
  ASSERT_EQ(port->sent().size(), 1u);
  EXPECT_EQ(port->sent()[0].data, reply);
  EXPECT_EQ(port->sent()[0].time_ns, kT0);
  EXPECT_EQ(port->name(), "replay:" + dir.file("replay.pcapng"));
}

TEST(ReplayPortTest, ReadsClassicPcapFromLibpcap) {
  TempDir dir;
  const std::string path = dir.file("classic.pcap");
  pcap_t* dead =
      pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
  pcap_dumper_t* dumper = pcap_dump_open(dead, path.c_str());
  ASSERT_NE(dumper, nullptr) << pcap_geterr(dead);
  const auto frame = roce_frame(5);
  pcap_pkthdr h{};
  h.ts.tv_sec = 1'700'000'000;
  h.ts.tv_usec = 999'999'999;  // nanoseconds in a nanosecond file
  h.caplen = h.len = static_cast<bpf_u_int32>(frame.size());
  pcap_dump(reinterpret_cast<u_char*>(dumper), &h, frame.data());
  pcap_dump_close(dumper);
  pcap_close(dead);

  auto port = must_open(path);
  ASSERT_TRUE(port);
  auto got = port->receive(kForever);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->data, frame);
  EXPECT_EQ((*got)->time_ns, 1'700'000'000'999'999'999);
  got = port->receive(kForever);  // end of file: nothing, and no jump to the end of time
  ASSERT_TRUE(got);
  EXPECT_FALSE(*got);
  EXPECT_EQ(port->clock().now_ns(), 1'700'000'000'999'999'999);
}

TEST(ReplayPortTest, ErrorsNameTheFile) {
  auto missing = ReplayPort::open("/nonexistent/capture.pcapng");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, PortErrorCode::kNotFound);
  EXPECT_EQ(missing.error().message, "capture file '/nonexistent/capture.pcapng' not found");

  TempDir dir;
  const std::string text = dir.file("notes.txt");
  std::ofstream(text) << "this is not a capture file\n";
  auto garbage = ReplayPort::open(text);
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().code, PortErrorCode::kIo);
  EXPECT_NE(garbage.error().message.find(text), std::string::npos);
}

TEST(ReplayPortTest, ATruncatedFileReportsAfterItsGoodFrames) {
  TempDir dir;
  const std::string path = write_capture(dir);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 10);
  auto port = must_open(path);
  ASSERT_TRUE(port);
  ASSERT_TRUE(port->receive(kForever).value());
  ASSERT_TRUE(port->receive(kForever).value());
  auto bad = port->receive(kForever);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, PortErrorCode::kIo);
}

}  // namespace
}  // namespace roceconf
