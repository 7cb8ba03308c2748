// The pcapng writer, checked three ways: by walking its blocks, by reading it back with libpcap,
// and (when installed) by tshark and capinfos, which also read the per-packet comments.
#include "capture/port/pcapng_writer.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "capture/port/test/port_test_util.h"

namespace roceconf {
namespace {

using test::psn_of;
using test::roce_frame;
using test::TempDir;

constexpr std::int64_t kT0 = 1'700'000'000'123'456'789;  // 2023-11-14, nanoseconds matter

struct ReadFrame {
  std::vector<std::uint8_t> data;
  std::int64_t unix_ns;
  std::uint32_t original_length;
};

// Every frame of `path` through libpcap with nanosecond timestamps; fails the test on errors.
std::vector<ReadFrame> read_with_libpcap(const std::string& path, int* dlt = nullptr) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p =
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf);
  EXPECT_NE(p, nullptr) << errbuf;
  if (!p) return {};
  if (dlt) *dlt = pcap_datalink(p);
  std::vector<ReadFrame> frames;
  pcap_pkthdr* h;
  const u_char* d;
  int rc;
  while ((rc = pcap_next_ex(p, &h, &d)) == 1)
    frames.push_back(
        {{d, d + h->caplen}, std::int64_t{h->ts.tv_sec} * 1'000'000'000 + h->ts.tv_usec, h->len});
  EXPECT_EQ(rc, PCAP_ERROR_BREAK) << pcap_geterr(p);
  pcap_close(p);
  return frames;
}

std::vector<std::uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::uint32_t le32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return b[at] | b[at + 1] << 8 | b[at + 2] << 16 | std::uint32_t{b[at + 3]} << 24;
}

struct Block {
  std::uint32_t type;
  std::size_t offset;
  std::uint32_t length;
};

// Walks the blocks, checking the framing rules every block obeys.
std::vector<Block> walk(const std::vector<std::uint8_t>& b) {
  std::vector<Block> blocks;
  std::size_t at = 0;
  while (at + 12 <= b.size()) {
    const std::uint32_t type = le32(b, at);
    const std::uint32_t length = le32(b, at + 4);
    EXPECT_EQ(length % 4, 0u) << "block at " << at;
    EXPECT_LE(at + length, b.size()) << "block at " << at;
    if (length % 4 != 0 || at + length > b.size() || length < 12) break;
    EXPECT_EQ(le32(b, at + length - 4), length) << "trailing length of block at " << at;
    blocks.push_back({type, at, length});
    at += length;
  }
  EXPECT_EQ(at, b.size());
  return blocks;
}

// The value of option `code` in the EPB at `block`, or nullopt.
std::optional<std::string> epb_option(const std::vector<std::uint8_t>& b, const Block& block,
                                      std::uint16_t code) {
  const std::uint32_t captured = le32(b, block.offset + 20);
  std::size_t at = block.offset + 28 + (captured + 3) / 4 * 4;
  const std::size_t end = block.offset + block.length - 4;
  while (at + 4 <= end) {
    const std::uint16_t c = b[at] | b[at + 1] << 8;
    const std::uint16_t len = b[at + 2] | b[at + 3] << 8;
    if (c == 0) break;
    if (c == code) return std::string(b.begin() + at + 4, b.begin() + at + 4 + len);
    at += 4 + (len + 3) / 4 * 4;
  }
  return std::nullopt;
}

PcapngWriter must_create(const std::string& path, PcapngOptions options = {}) {
  auto w = PcapngWriter::create(path, std::move(options));
  EXPECT_TRUE(w) << (w ? "" : w.error().message);
  return std::move(*w);
}

const std::vector<std::string> kComments = {"cm/req-rep-rtu step 1: sent REQ", "",
                                            "psn/gap step 3: matched NAK (seq err) ü"};

void write_three(PcapngWriter& w) {
  for (std::uint32_t i = 0; i < 3; ++i) {
    const auto frame = roce_frame(i + 1);
    ASSERT_TRUE(
        w.write({.frame = frame,
                 .unix_ns = kT0 + i * 1'000'001,
                 .comment = kComments[i],
                 .direction = i == 0 ? PacketDirection::kOutbound : PacketDirection::kUnknown}));
  }
}

TEST(PcapngWriterTest, BlocksAreWellFormed) {
  TempDir dir;
  const std::string path = dir.file("blocks.pcapng");
  {
    auto w = must_create(path, {.interfaces = {"a", "b"}});
    write_three(w);
    ASSERT_TRUE(w.close());
    EXPECT_EQ(w.packets(), 3u);
  }
  const auto b = file_bytes(path);
  const auto blocks = walk(b);
  ASSERT_EQ(blocks.size(), 6u);  // SHB, IDB a, IDB b, 3 EPBs
  EXPECT_EQ(blocks[0].type, 0x0A0D0D0Au);
  EXPECT_EQ(le32(b, 8), 0x1A2B3C4Du);  // little-endian byte-order magic
  EXPECT_EQ(blocks[1].type, 1u);
  EXPECT_EQ(b[blocks[1].offset + 8], 1);  // LINKTYPE_ETHERNET
  EXPECT_EQ(blocks[2].type, 1u);
  for (int i = 0; i < 3; ++i) {
    const Block& epb = blocks[3 + i];
    EXPECT_EQ(epb.type, 6u);
    const auto comment = epb_option(b, epb, 1);
    if (kComments[i].empty())
      EXPECT_FALSE(comment);
    else
      EXPECT_EQ(comment, kComments[i]);
  }
  EXPECT_EQ(epb_option(b, blocks[3], 2), std::string("\x02\0\0\0", 4));  // outbound
  // With no options at all, the EPB ends right after the padded packet data.
  EXPECT_EQ(blocks[4].length, 32 + (roce_frame(2).size() + 3) / 4 * 4);
}

TEST(PcapngWriterTest, LibpcapReadsFramesAndNanosecondTimestamps) {
  TempDir dir;
  const std::string path = dir.file("libpcap.pcapng");
  {
    auto w = must_create(path);
    write_three(w);
    const auto big = roce_frame(9);
    ASSERT_TRUE(w.write({.frame = big, .unix_ns = kT0 + 5, .original_length = 9000}));
  }  // the destructor closes
  int dlt = -1;
  const auto frames = read_with_libpcap(path, &dlt);
  EXPECT_EQ(dlt, DLT_EN10MB);
  ASSERT_EQ(frames.size(), 4u);
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(frames[i].data, roce_frame(i + 1));
    EXPECT_EQ(frames[i].unix_ns, kT0 + i * 1'000'001);
  }
  EXPECT_EQ(frames[3].original_length, 9000u);
}

TEST(PcapngWriterTest, TsharkReadsThePerPacketComments) {
  if (!test::have_program("tshark"))
    GTEST_SKIP() << "tshark not installed (apt-get install tshark)";
  TempDir dir;
  const std::string path = dir.file("comments.pcapng");
  const std::string long_comment = [] {
    std::string s;
    while (s.size() < 70'000) s += "é";  // 2 bytes each: clipped on a character boundary
    return s;
  }();
  {
    auto w = must_create(path);
    write_three(w);
    const auto frame = roce_frame(4);
    ASSERT_TRUE(w.write({.frame = frame, .unix_ns = kT0 + 10, .comment = long_comment}));
  }
  const auto out = test::run("tshark -r '" + path + "' -T fields -e frame.comment 2>/dev/null");
  ASSERT_EQ(out.status, 0) << out.output;
  const std::string expected_long = long_comment.substr(0, 65534);
  EXPECT_EQ(out.output, kComments[0] + "\n\n" + kComments[2] + "\n" + expected_long + "\n");

  // tshark's own dissection agrees on the timestamps (nanoseconds) and sees RoCE.
  const auto times = test::run("tshark -r '" + path +
                               "' -T fields -e frame.time_epoch -e infiniband.bth.psn "
                               "2>/dev/null");
  ASSERT_EQ(times.status, 0);
  EXPECT_EQ(times.output.substr(0, times.output.find('\n')), "1700000000.123456789\t1");
}

TEST(PcapngWriterTest, CapinfosCountsThePackets) {
  if (!test::have_program("capinfos"))
    GTEST_SKIP() << "capinfos not installed (apt-get install tshark)";
  TempDir dir;
  const std::string path = dir.file("capinfos.pcapng");
  {
    auto w = must_create(path);
    write_three(w);
  }
  const auto out = test::run("capinfos -M -t -c -E -T '" + path + "' 2>&1");
  ASSERT_EQ(out.status, 0) << out.output;
  // -T: a table row "file<TAB>type<TAB>encapsulation<TAB>packets".
  EXPECT_NE(out.output.find("pcapng"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("\tether\t3"), std::string::npos) << out.output;
}

TEST(PcapngWriterTest, FileAppearsOnlyWhenFlushedOrClosed) {
  TempDir dir;
  const std::string path = dir.file("atomic.pcapng");
  auto w = must_create(path);
  EXPECT_EQ(w.path(), path);
  write_three(w);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::exists(path + ".tmp"));

  ASSERT_TRUE(w.flush());
  ASSERT_EQ(read_with_libpcap(path).size(), 3u);
  const auto frame = roce_frame(4);
  ASSERT_TRUE(w.write({.frame = frame, .unix_ns = kT0}));
  ASSERT_TRUE(w.flush());
  EXPECT_EQ(read_with_libpcap(path).size(), 4u);
  ASSERT_TRUE(w.write({.frame = frame, .unix_ns = kT0}));
  EXPECT_EQ(read_with_libpcap(path).size(), 4u);  // unflushed writes do not show
  ASSERT_TRUE(w.close());
  EXPECT_EQ(read_with_libpcap(path).size(), 5u);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_TRUE(w.close());  // idempotent
  auto late = w.write({.frame = frame});
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, PortErrorCode::kClosed);
}

TEST(PcapngWriterTest, AKilledRunKeepsWhatWasFlushed) {
  TempDir dir;
  const std::string path = dir.file("killed.pcapng");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto w = PcapngWriter::create(path);
    if (!w) _exit(1);
    const auto frame = roce_frame(1);
    for (int i = 0; i < 2; ++i) (void)w->write({.frame = frame, .unix_ns = kT0});
    if (!w->flush()) _exit(2);
    // Big enough to reach the working file, then die without closing.
    const std::vector<std::uint8_t> jumbo(9000, 0xAB);
    for (int i = 0; i < 200; ++i) (void)w->write({.frame = jumbo, .unix_ns = kT0});
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const auto frames = read_with_libpcap(path);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(psn_of(frames[0].data), 1u);
}

TEST(PcapngWriterTest, ErrorsSayWhatToDo) {
  auto missing = PcapngWriter::create("/nonexistent-dir-roceconf/x.pcapng");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, PortErrorCode::kNotFound);
  EXPECT_EQ(missing.error().message,
            "cannot create '/nonexistent-dir-roceconf/x.pcapng.tmp': directory "
            "'/nonexistent-dir-roceconf' does not exist");

  TempDir dir;
  auto w = must_create(dir.file("iface.pcapng"));
  const auto frame = roce_frame(1);
  auto bad = w.write({.frame = frame, .interface = 1});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, PortErrorCode::kNotFound);
}

}  // namespace
}  // namespace roceconf
