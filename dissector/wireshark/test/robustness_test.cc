// tshark with the plugin never crashes and the plugin never raises an exception, on the codec's
// fuzz corpus (each input as an Ethernet frame, as a RoCEv2 payload behind valid Ethernet/IPv4/
// UDP 4791 headers, as a MAD behind a valid BTH/DETH, and as a native InfiniBand frame), on
// truncated copies of the real captures in ../shared/captures, and on seeded random and
// mutated traffic. Every tree is built (-V, two passes) so every field path runs.
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "dissector/testing/traffic.h"
#include "dissector/wireshark/test/tshark_harness.h"

namespace roceconf::wireshark::test {
namespace {

namespace fs = std::filesystem;
using ByteVec = std::vector<std::uint8_t>;

ByteVec read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return ByteVec(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<ByteVec> corpus(const char* sub) {
  std::vector<fs::path> paths;
  const fs::path dir = fs::path(ROCECONF_FUZZ_CORPUS) / sub;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  std::vector<ByteVec> out;
  for (const auto& p : paths) out.push_back(read_file(p));
  return out;
}

void put16(ByteVec& b, std::size_t at, std::uint16_t v) {
  b[at] = static_cast<std::uint8_t>(v >> 8);
  b[at + 1] = static_cast<std::uint8_t>(v);
}

// Ethernet/IPv4/UDP to port 4791 around `payload`, lengths and IP checksum right.
ByteVec udp_frame(const ByteVec& payload) {
  ByteVec f(14 + 20 + 8, 0);
  f[0] = 0x02;
  f[6] = 0x02;
  f[11] = 1;
  put16(f, 12, 0x0800);
  f[14] = 0x45;
  put16(f, 16, static_cast<std::uint16_t>(std::min<std::size_t>(28 + payload.size(), 0xFFFF)));
  f[22] = 64;
  f[23] = 17;
  const std::uint8_t src[] = {192, 0, 2, 1}, dst[] = {192, 0, 2, 2};
  std::copy(src, src + 4, f.begin() + 26);
  std::copy(dst, dst + 4, f.begin() + 30);
  std::uint32_t sum = 0;
  for (std::size_t i = 14; i < 34; i += 2) sum += (f[i] << 8) | f[i + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  put16(f, 24, static_cast<std::uint16_t>(~sum));
  put16(f, 34, 0xC000);
  put16(f, 36, 4791);
  put16(f, 38, static_cast<std::uint16_t>(std::min<std::size_t>(8 + payload.size(), 0xFFFF)));
  f.insert(f.end(), payload.begin(), payload.end());
  return f;
}

// BTH (UD SEND_ONLY to QP1) and DETH before a MAD, an ICRC after it.
ByteVec mad_payload(const ByteVec& mad) {
  ByteVec p = {0x64, 0,    0xFF, 0xFF, 0, 0, 0, 1, 0, 0, 0, 5,  // BTH
               0x80, 0x01, 0x00, 0x00, 0, 0, 0, 1};             // DETH
  p.insert(p.end(), mad.begin(), mad.end());
  p.insert(p.end(), {0xDE, 0xAD, 0xBE, 0xEF});
  return p;
}

class RobustnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = tshark_unavailable();
    if (!why.empty()) GTEST_SKIP() << why;
  }

  // Dissects `records` with every tree built; fails on a crash or an exception in roceconf.
  void survive(const std::vector<Record>& records, std::uint16_t linktype,
               const std::string& what) {
    ASSERT_FALSE(records.empty()) << what;
    const std::string path = dir_.file("input.pcapng");
    write_pcapng(path, records, linktype);
    const std::string script = "{ " + tshark_command(dir_.path()) + " -r " + quote(path) +
                               " -2 -V; echo \"tshark-exit=$?\"; } 2>&1 | grep -E "
                               "'Dissector bug, protocol roceconf|Malformed Packet: roceconf|"
                               "roceconf.*xception|tshark-exit='";
    const auto r = testutil::run(script);
    EXPECT_EQ(r.output, "tshark-exit=0\n") << what << " (" << records.size() << " frames)";
  }

  TempDir dir_;
};

TEST_F(RobustnessTest, FuzzCorpusAsFrames) {
  const auto decode = corpus("decode");
  const auto mad = corpus("mad");
  if (decode.empty() && mad.empty()) GTEST_SKIP() << "no fuzz corpus at " ROCECONF_FUZZ_CORPUS;
  std::vector<Record> eth, ib;
  std::int64_t ns = 1'700'000'000'000'000'000;
  auto add = [&ns](std::vector<Record>& v, ByteVec bytes) {
    if (bytes.empty()) return;
    Record r;
    r.bytes = std::move(bytes);
    r.ns = ns += 1000;
    v.push_back(std::move(r));
  };
  for (const ByteVec& input : decode) {
    add(eth, input);
    add(eth, udp_frame(input));
    add(ib, input);
  }
  for (const ByteVec& input : mad) add(eth, udp_frame(mad_payload(input)));
  survive(eth, 1, "fuzz corpus as Ethernet frames and RoCEv2 payloads");
  survive(ib, 247, "fuzz corpus as native InfiniBand frames");
}

TEST_F(RobustnessTest, TruncatedRealCaptures) {
  const fs::path dir = ROCECONF_SHARED_CAPTURES;
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no captures at " << dir.string();
  std::mt19937_64 rng(4791);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext != ".pcap" && ext != ".pcapng") continue;
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* pcap = pcap_open_offline(e.path().c_str(), err);
    if (pcap == nullptr) continue;
    const int link = pcap_datalink(pcap);
    std::vector<Record> records;
    pcap_pkthdr* h = nullptr;
    const u_char* data = nullptr;
    std::int64_t ns = 1'700'000'000'000'000'000;
    while (pcap_next_ex(pcap, &h, &data) == 1 && records.size() < 4000) {
      const ByteVec frame(data, data + h->caplen);
      // An ERF record cut inside its own header is a file error for wiretap, not a frame.
      const std::size_t keep = link == 197 ? std::min<std::size_t>(16, frame.size()) : 0;
      for (int cut = 0; cut < 3 && frame.size() > keep; ++cut) {
        Record r;
        r.bytes.assign(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(
                                                          keep + rng() % (frame.size() - keep)));
        r.original_length = static_cast<std::uint32_t>(frame.size());
        r.ns = ns += 1000;
        if (!r.bytes.empty()) records.push_back(std::move(r));
      }
      Record whole;
      whole.bytes = frame;
      whole.ns = ns += 1000;
      records.push_back(std::move(whole));
    }
    pcap_close(pcap);
    if (records.empty()) continue;
    ++files;
    survive(records, static_cast<std::uint16_t>(link), "truncated " + e.path().filename().string());
  }
  if (files == 0) GTEST_SKIP() << "no readable captures in " << dir.string();
}

TEST_F(RobustnessTest, RandomAndMutatedTraffic) {
  std::mt19937_64 rng(20261129);
  TrafficGenerator gen(7);
  std::vector<Record> eth, ib;
  std::int64_t ns = 1'700'000'000'000'000'000;
  for (int i = 0; i < 3000; ++i) {
    LinkType link{};
    ByteVec frame = gen.next(&link);
    if (i % 2 == 1) frame = mutate(frame, link, rng);
    Record r;
    r.bytes = std::move(frame);
    r.ns = ns += 1000;
    if (r.bytes.empty()) continue;
    (link == LinkType::kInfiniBand ? ib : eth).push_back(std::move(r));
  }
  for (int i = 0; i < 1000; ++i) {
    ByteVec payload(rng() % 400);
    for (auto& b : payload) b = static_cast<std::uint8_t>(rng());
    if (!payload.empty() && i % 3 == 0) payload[0] = static_cast<std::uint8_t>(rng() % 0x20);
    Record r;
    r.bytes = udp_frame(payload);
    r.ns = ns += 1000;
    eth.push_back(std::move(r));
  }
  survive(eth, 1, "random and mutated Ethernet traffic");
  survive(ib, 247, "random and mutated InfiniBand traffic");
}

}  // namespace
}  // namespace roceconf::wireshark::test
