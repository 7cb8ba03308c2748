// PcapReader over files written by libpcap (pcap) and by hand (pcapng), good and broken.
#include "capture/pcap_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capture/test/capture_files.h"
#include "dissector/packet.h"

namespace roceconf {
namespace {

using test::TempDir;
using test::TestFrame;

std::vector<std::uint8_t> roce_frame(std::uint32_t psn) {
  Packet p;
  p.ipv4 = Ipv4{};
  p.udp = Udp{};
  Bth bth;
  bth.opcode = opcode::kRcSendOnly;
  bth.dqpn = 0x12;
  bth.psn = psn;
  p.bth = bth;
  return encode(p);
}

std::vector<TestFrame> three_frames() {
  return {{roce_frame(1), 1'700'000'000'123'456'789u},
          {roce_frame(2), 1'700'000'000'223'456'789u},
          {roce_frame(3), 1'700'000'001'000'000'001u, 1500}};
}

// Reads every frame, failing the test on an error.
std::vector<CaptureFrame> read_all(PcapReader& reader,
                                   std::vector<std::vector<std::uint8_t>>& keep) {
  std::vector<CaptureFrame> frames;
  for (;;) {
    auto next = reader.next();
    EXPECT_TRUE(next.has_value()) << next.error();
    if (!next || !*next) break;
    keep.emplace_back((*next)->data.begin(), (*next)->data.end());
    frames.push_back(**next);
    frames.back().data = keep.back();
  }
  return frames;
}

void expect_three_frames(const std::string& path) {
  auto reader = PcapReader::open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error();
  EXPECT_EQ(reader->link_type(), LinkType::kEthernet);
  std::vector<std::vector<std::uint8_t>> keep;
  const auto frames = read_all(*reader, keep);
  const auto expected = three_frames();
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(reader->frames_read(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(keep[i], expected[i].bytes);
    EXPECT_EQ(frames[i].time_ns, expected[i].time_ns);
    const Packet p = decode(frames[i].data, reader->link_type());
    ASSERT_TRUE(p.bth);
    EXPECT_EQ(p.bth->psn, i + 1);
  }
  EXPECT_EQ(frames[0].orig_length, expected[0].bytes.size());
  EXPECT_EQ(frames[2].orig_length, 1500u);  // snapped frame keeps its wire length
}

TEST(PcapReader, ReadsNanosecondPcap) {
  TempDir dir;
  const std::string path = dir.file("ns.pcap");
  ASSERT_TRUE(test::write_pcap(path, DLT_EN10MB, three_frames()));
  expect_three_frames(path);
}

TEST(PcapReader, ReadsPcapng) {
  TempDir dir;
  const std::string path = dir.file("ns.pcapng");
  ASSERT_TRUE(test::write_bytes(path, test::pcapng_bytes(1, three_frames())));
  expect_three_frames(path);
}

TEST(PcapReader, ScalesMicrosecondTimestampsToNanoseconds) {
  TempDir dir;
  const std::string path = dir.file("us.pcap");
  ASSERT_TRUE(test::write_pcap(path, DLT_EN10MB, {{roce_frame(7), 5'000'123'000u}}, false));
  auto reader = PcapReader::open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error();
  auto frame = reader->next();
  ASSERT_TRUE(frame.has_value() && frame->has_value());
  EXPECT_EQ((*frame)->time_ns, 5'000'123'000u);
  auto end = reader->next();
  ASSERT_TRUE(end.has_value());
  EXPECT_FALSE(end->has_value());
}

TEST(PcapReader, MapsLinkTypes) {
  TempDir dir;
  const std::pair<int, LinkType> cases[] = {{DLT_EN10MB, LinkType::kEthernet},
                                            {DLT_RAW, LinkType::kRaw},
                                            {DLT_IPV4, LinkType::kRaw},
                                            {DLT_IPV6, LinkType::kRaw},
                                            {DLT_LINUX_SLL, LinkType::kLinuxSll},
                                            {DLT_LINUX_SLL2, LinkType::kLinuxSll2},
                                            {DLT_ERF, LinkType::kErf},
                                            {DLT_INFINIBAND, LinkType::kInfiniBand}};
  for (const auto& [dlt, link] : cases) {
    const std::string path = dir.file("link" + std::to_string(dlt) + ".pcap");
    ASSERT_TRUE(test::write_pcap(path, dlt, {}));
    auto reader = PcapReader::open(path);
    ASSERT_TRUE(reader.has_value()) << reader.error();
    EXPECT_EQ(reader->link_type(), link) << "DLT " << dlt;
  }
}

TEST(PcapReader, RejectsUnknownLinkTypeByName) {
  TempDir dir;
  const std::string path = dir.file("wifi.pcap");
  ASSERT_TRUE(test::write_pcap(path, DLT_IEEE802_11, {}));
  auto reader = PcapReader::open(path);
  ASSERT_FALSE(reader.has_value());
  EXPECT_NE(reader.error().find("IEEE802_11"), std::string::npos) << reader.error();
  EXPECT_NE(reader.error().find("cannot decode"), std::string::npos) << reader.error();
}

TEST(PcapReader, MissingFile) {
  auto reader = PcapReader::open("/nonexistent/x.pcap");
  ASSERT_FALSE(reader.has_value());
  EXPECT_EQ(reader.error(), "cannot open '/nonexistent/x.pcap': No such file or directory");
}

TEST(PcapReader, Directory) {
  TempDir dir;
  auto reader = PcapReader::open(dir.file(""));
  ASSERT_FALSE(reader.has_value());
  EXPECT_NE(reader.error().find("Is a directory"), std::string::npos) << reader.error();
}

TEST(PcapReader, EmptyFile) {
  TempDir dir;
  const std::string path = dir.file("empty.pcap");
  ASSERT_TRUE(test::write_bytes(path, {}));
  auto reader = PcapReader::open(path);
  ASSERT_FALSE(reader.has_value());
  EXPECT_EQ(reader.error(), "'" + path + "' is empty, not a pcap or pcapng capture");
}

TEST(PcapReader, BadMagic) {
  TempDir dir;
  const std::string path = dir.file("random.pcap");
  std::vector<std::uint8_t> junk(1000);
  for (std::size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<std::uint8_t>(i * 37 + 11);
  ASSERT_TRUE(test::write_bytes(path, junk));
  auto reader = PcapReader::open(path);
  ASSERT_FALSE(reader.has_value());
  EXPECT_EQ(reader.error(), "'" + path + "' is not a pcap or pcapng capture (bad magic)");
}

TEST(PcapReader, TruncatedFileHeader) {
  TempDir dir;
  const std::string path = dir.file("short.pcap");
  ASSERT_TRUE(test::write_pcap(path, DLT_EN10MB, {}));
  auto bytes = test::read_bytes(path);
  bytes.resize(10);
  ASSERT_TRUE(test::write_bytes(path, bytes));
  auto reader = PcapReader::open(path);
  ASSERT_FALSE(reader.has_value());
  EXPECT_NE(reader.error().find("truncated inside its file header"), std::string::npos)
      << reader.error();
}

// Cuts the last record short: the first frames read, then one error naming the frame count.
void expect_truncated_after_two(const std::string& path) {
  auto bytes = test::read_bytes(path);
  bytes.resize(bytes.size() - 20);
  ASSERT_TRUE(test::write_bytes(path, bytes));
  auto reader = PcapReader::open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error();
  ASSERT_TRUE(reader->next().has_value());
  ASSERT_TRUE(reader->next().has_value());
  auto third = reader->next();
  ASSERT_FALSE(third.has_value());
  EXPECT_NE(third.error().find("is truncated after frame 2"), std::string::npos) << third.error();
  EXPECT_EQ(third.error().find('\n'), std::string::npos);
}

TEST(PcapReader, TruncatedPcapRecord) {
  TempDir dir;
  const std::string path = dir.file("cut.pcap");
  ASSERT_TRUE(test::write_pcap(path, DLT_EN10MB, three_frames()));
  expect_truncated_after_two(path);
}

TEST(PcapReader, TruncatedPcapngBlock) {
  TempDir dir;
  const std::string path = dir.file("cut.pcapng");
  ASSERT_TRUE(test::write_bytes(path, test::pcapng_bytes(1, three_frames())));
  expect_truncated_after_two(path);
}

TEST(PcapReader, CorruptRecordLength) {
  TempDir dir;
  const std::string path = dir.file("corrupt.pcap");
  ASSERT_TRUE(test::write_pcap(path, DLT_EN10MB, three_frames()));
  auto bytes = test::read_bytes(path);
  // First record header starts at 24; caplen at +8 (little-endian): claim 0x7fffffff bytes.
  bytes[24 + 8] = bytes[24 + 9] = bytes[24 + 10] = 0xFF;
  bytes[24 + 11] = 0x7F;
  ASSERT_TRUE(test::write_bytes(path, bytes));
  auto reader = PcapReader::open(path);
  ASSERT_TRUE(reader.has_value()) << reader.error();
  auto first = reader->next();
  ASSERT_FALSE(first.has_value());
  EXPECT_NE(first.error().find("after frame 0"), std::string::npos) << first.error();
}

TEST(PcapReader, MoveKeepsTheHandle) {
  TempDir dir;
  const std::string path = dir.file("move.pcap");
  ASSERT_TRUE(test::write_pcap(path, DLT_EN10MB, three_frames()));
  auto opened = PcapReader::open(path);
  ASSERT_TRUE(opened.has_value());
  PcapReader reader = std::move(*opened);
  auto frame = reader.next();
  ASSERT_TRUE(frame.has_value() && frame->has_value());
  EXPECT_EQ(reader.path(), path);
}

}  // namespace
}  // namespace roceconf
