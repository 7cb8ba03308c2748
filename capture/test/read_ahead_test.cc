// ReadAhead delivers exactly what PcapReader reads, in order, across batch boundaries, then the
// reader's error; and it can be dropped mid-file.
#include "capture/read_ahead.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capture/test/capture_files.h"
#include "dissector/packet.h"

namespace roceconf {
namespace {

using test::TempDir;
using test::TestFrame;

std::vector<TestFrame> numbered_frames(std::size_t n) {
  std::vector<TestFrame> frames;
  for (std::size_t i = 0; i < n; ++i) {
    Packet p;
    p.ipv4 = Ipv4{};
    p.udp = Udp{};
    Bth bth;
    bth.psn = static_cast<std::uint32_t>(i);
    p.bth = bth;
    const std::vector<std::uint8_t> payload(i % 300, static_cast<std::uint8_t>(i));
    p.payload = payload;
    frames.push_back({encode(p), 1'700'000'000'000'000'000u + i * 1000, 0});
  }
  return frames;
}

ReadAhead open_ahead(const std::string& path, std::size_t batch_bytes, std::size_t batch_frames) {
  auto reader = PcapReader::open(path);
  EXPECT_TRUE(reader.has_value()) << reader.error();
  return ReadAhead(std::move(*reader), batch_bytes, batch_frames, 2);
}

TEST(ReadAhead, DeliversEveryFrameInOrderAcrossBatches) {
  TempDir dir;
  const std::string path = dir.file("many.pcap");
  const auto expected = numbered_frames(1000);
  ASSERT_TRUE(test::write_pcap(path, DLT_EN10MB, expected));
  for (auto [bytes, frames] : {std::pair<std::size_t, std::size_t>{1 << 20, 7}, {2000, 4096}}) {
    auto reader = PcapReader::open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error();
    ReadAhead ahead(std::move(*reader), bytes, frames, 2);
    std::size_t n = 0;
    while (const ReadAhead::Batch* batch = ahead.next()) {
      ASSERT_LE(batch->size(), frames);
      for (std::size_t i = 0; i < batch->size(); ++i, ++n) {
        ASSERT_LT(n, expected.size());
        const CaptureFrame f = batch->frame(i);
        EXPECT_EQ(std::vector<std::uint8_t>(f.data.begin(), f.data.end()), expected[n].bytes);
        EXPECT_EQ(f.time_ns, expected[n].time_ns);
        EXPECT_EQ(f.orig_length, expected[n].bytes.size());
      }
    }
    EXPECT_EQ(n, expected.size());
    EXPECT_EQ(ahead.error(), "");
    EXPECT_EQ(ahead.next(), nullptr);  // stays at the end
  }
}

TEST(ReadAhead, EndsWithTheReadersErrorAfterTheGoodFrames) {
  TempDir dir;
  const std::string path = dir.file("cut.pcap");
  ASSERT_TRUE(test::write_pcap(path, DLT_EN10MB, numbered_frames(50)));
  auto bytes = test::read_bytes(path);
  bytes.resize(bytes.size() - 5);
  ASSERT_TRUE(test::write_bytes(path, bytes));
  ReadAhead ahead = open_ahead(path, 1 << 20, 8);
  std::size_t n = 0;
  while (const ReadAhead::Batch* batch = ahead.next()) n += batch->size();
  EXPECT_EQ(n, 49u);
  EXPECT_NE(ahead.error().find("is truncated after frame 49"), std::string::npos) << ahead.error();
}

TEST(ReadAhead, CanBeDroppedMidFile) {
  TempDir dir;
  const std::string path = dir.file("many.pcap");
  ASSERT_TRUE(test::write_pcap(path, DLT_EN10MB, numbered_frames(2000)));
  for (int round = 0; round < 20; ++round) {
    ReadAhead ahead = open_ahead(path, 1 << 20, 3);
    ASSERT_NE(ahead.next(), nullptr);
  }  // each destructor stops a reader blocked on a full queue
}

}  // namespace
}  // namespace roceconf
