// The analyzer over whole streams: generated traffic with known events, and real captures.
#include "dissector/analysis/stream_analyzer.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dissector/testing/traffic.h"

namespace roceconf::analysis {
namespace {

using Counts = std::map<std::string, std::size_t>;

void count(const FrameAnalysis& fa, Counts& counts) {
  for (const Flag& f : fa.flags) ++counts[std::string(f.name())];
}

// Generated traffic is correct RoCE with deliberate losses, RNR and error NAKs: none of the
// flags that mean a broken peer may appear, and the deliberate events must pair up.
TEST(StreamAnalyzer, GeneratedTrafficHasOnlyTheEventsItContains) {
  AnalyzerOptions options;
  options.keep_results = false;
  StreamAnalyzer analyzer(options);
  TrafficGenerator gen(1);
  Counts counts;
  std::size_t rc_frames = 0, cm_frames = 0, max_entries = 0, nak_due = 0;
  std::set<std::pair<std::uint32_t, std::uint32_t>> cm_request_channels;  // (channel, connection)
  constexpr std::uint64_t kFrames = 200000;
  for (std::uint64_t n = 1; n <= kFrames; ++n) {
    LinkType link = LinkType::kEthernet;
    const std::vector<std::uint8_t> bytes = gen.next(&link);
    const Packet p = decode(bytes, link);
    const FrameAnalysis& fa = analyzer.add(n, static_cast<std::int64_t>(n) * 200, p);
    count(fa, counts);
    rc_frames += fa.rc ? 1 : 0;
    nak_due += fa.rc && fa.rc->nak_due ? 1 : 0;
    if (fa.rc && fa.rc->role == RcRole::kRequest && fa.rc->connection != 0)
      cm_request_channels.emplace(fa.rc->channel, fa.rc->connection);
    cm_frames += fa.cm ? 1 : 0;
    if (n % 4096 == 0) max_entries = std::max(max_entries, analyzer.stats().rc.window_entries);
  }
  for (const char* bad :
       {"opcode-sequence", "mtu-exceeded", "mtu-short-first-middle", "pkey-mismatch",
        "read-response-split", "msn-stuck", "ack-psn-unknown", "ack-over-gap", "nak-repeated",
        "duplicate", "cm-tid-mismatch", "cm-unknown-comm-id", "cm-unexpected", "cm-duplicate-req",
        "cm-retransmission"}) {
    EXPECT_EQ(counts[bad], 0u) << bad;
  }
  // The generator puts each side's own first request PSN in its CM message, where Linux (and
  // the rxe and OFED captures) put the PSN that side expects to receive: then every connection's
  // first request is flagged, and nothing else follows from it.
  EXPECT_TRUE(counts["cm-start-psn"] == 0 || counts["cm-start-psn"] == cm_request_channels.size())
      << counts["cm-start-psn"] << " of " << cm_request_channels.size();
  // Each lost packet: the first request after it is owed a NAK (the rest of the message is
  // out of sequence too, dropped silently), one sequence-error NAK names it.
  EXPECT_GT(counts["nak-seq-error"], 0u);
  EXPECT_EQ(nak_due, counts["nak-seq-error"]);
  EXPECT_GE(counts["out-of-sequence"], counts["nak-seq-error"]);
  EXPECT_EQ(counts["not-captured"], 0u);
  EXPECT_EQ(counts["nak-missing"], 0u);
  EXPECT_EQ(counts["out-of-sequence-answered"], 0u);
  EXPECT_EQ(counts["duplicate-executed"], 0u);
  EXPECT_GT(counts["nak-rnr"], 0u);
  EXPECT_GT(counts["retransmission"], counts["nak-seq-error"]);
  EXPECT_GT(counts["acks"], 1000u);
  EXPECT_GT(counts["read-response"], 1000u);
  EXPECT_GT(rc_frames, kFrames / 2);
  EXPECT_GT(cm_frames, 100u);

  const AnalyzerStats st = analyzer.stats();
  EXPECT_EQ(st.frames, kFrames);
  EXPECT_EQ(st.results, 0u);
  EXPECT_GT(st.connections, 50u);
  EXPECT_GT(st.rc.paired, 0u);
  // A dozen live connections at a time; closed ones give their windows back.
  EXPECT_GT(st.rc.channels, 100u);
  EXPECT_LT(max_entries, 24 * 4096u);
  EXPECT_LT(st.rc.window_entries, 24 * 4096u);
}

// Malformed frames (cut short, bad lengths, reserved opcodes) among good ones: judged or
// ignored, never a crash.
TEST(StreamAnalyzer, SurvivesMalformedFrames) {
  StreamAnalyzer analyzer;
  TrafficGenerator gen(3);
  std::mt19937_64 rng(3);
  for (std::uint64_t n = 1; n <= 50000; ++n) {
    LinkType link = LinkType::kEthernet;
    std::vector<std::uint8_t> bytes = gen.next(&link);
    if (rng() % 8 == 0) bytes = mutate(bytes, link, rng);
    analyzer.add(n, static_cast<std::int64_t>(n) * 200, decode(bytes, link));
  }
  EXPECT_EQ(analyzer.stats().results, 50000u);
}

// Results are kept per frame and earlier frames learn their answers.
TEST(StreamAnalyzer, GeneratedTrafficStoredResults) {
  StreamAnalyzer analyzer;
  TrafficGenerator gen(7);
  std::vector<std::uint64_t> requests;
  for (std::uint64_t n = 1; n <= 20000; ++n) {
    LinkType link = LinkType::kEthernet;
    const std::vector<std::uint8_t> bytes = gen.next(&link);
    const FrameAnalysis& fa =
        analyzer.add(n, static_cast<std::int64_t>(n) * 200, decode(bytes, link));
    if (fa.rc && fa.rc->role == RcRole::kRequest) requests.push_back(n);
  }
  ASSERT_GT(requests.size(), 1000u);
  std::size_t acked = 0;
  for (std::uint64_t n : requests) {
    const FrameAnalysis* r = analyzer.result(n);
    ASSERT_NE(r, nullptr);
    if (r->rc->acked_by != 0) {
      ++acked;
      EXPECT_GT(r->rc->acked_by, n);
      EXPECT_GT(r->rc->ack_delay_ns, 0);
    }
  }
  EXPECT_GT(acked, requests.size() / 2);
  EXPECT_EQ(analyzer.stats().results, 20000u);
}

struct PcapClose {
  void operator()(pcap_t* p) const { pcap_close(p); }
};

// Runs a capture from the shared folder through the analyzer; false when the file is absent.
bool analyze_capture(const std::string& name, StreamAnalyzer& analyzer,
                     std::vector<const FrameAnalysis*>& out) {
  const std::filesystem::path path = std::filesystem::path(ROCECONF_SHARED_CAPTURES) / name;
  if (!std::filesystem::exists(path)) return false;
  std::array<char, PCAP_ERRBUF_SIZE> err{};
  std::unique_ptr<pcap_t, PcapClose> pcap(pcap_open_offline_with_tstamp_precision(
      path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err.data()));
  EXPECT_TRUE(pcap) << err.data();
  if (!pcap) return true;
  const auto link = static_cast<LinkType>(pcap_datalink(pcap.get()));
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  std::uint64_t n = 0;
  while (pcap_next_ex(pcap.get(), &header, &data) == 1) {
    const Packet p = decode(Bytes(data, header->caplen), link);
    const std::int64_t t = static_cast<std::int64_t>(header->ts.tv_sec) * 1000000000 +
                           header->ts.tv_usec;  // nanosecond precision requested
    out.push_back(&analyzer.add(++n, t, p));
  }
  return true;
}

std::vector<std::string> problems(const FrameAnalysis& fa) {
  std::vector<std::string> v;
  for (const Flag& f : fa.flags)
    if (f.severity() != Severity::kNote) v.emplace_back(f.name());
  return v;
}

// Linux rxe between two VMs: CM, an RDMA WRITE and its ACK, a 4 KiB READ in four responses.
TEST(StreamAnalyzer, RxeCapture) {
  StreamAnalyzer analyzer;
  std::vector<const FrameAnalysis*> f;
  if (!analyze_capture("montybeatnik_roce_capture_read-write-ecn.pcap", analyzer, f))
    GTEST_SKIP() << "shared capture montybeatnik_roce_capture_read-write-ecn.pcap is absent from "
                 << ROCECONF_SHARED_CAPTURES;
  ASSERT_EQ(f.size(), 12u);
  for (const FrameAnalysis* fa : f)
    EXPECT_EQ(problems(*fa), std::vector<std::string>{}) << "frame " << fa->frame;

  ASSERT_TRUE(f[0]->cm && f[1]->cm && f[2]->cm);
  EXPECT_EQ(f[0]->cm->message, "REQ");
  EXPECT_EQ(f[2]->cm->state, CmState::kEstablished);
  EXPECT_EQ(f[11]->cm->state, CmState::kClosed);
  const CmConnection* c = analyzer.cm().connection(f[0]->cm->connection);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->active_qpn, 0x11u);
  EXPECT_EQ(c->passive_qpn, 0x11u);

  // Frame 4 WRITE ONLY, frame 5 its ACK.
  ASSERT_TRUE(f[3]->rc && f[4]->rc);
  EXPECT_EQ(f[3]->rc->link, LinkSource::kCm);
  EXPECT_EQ(f[3]->rc->expected_psn, 9209053u);
  EXPECT_EQ(f[3]->rc->acked_by, 5u);
  EXPECT_EQ(f[4]->rc->request_frame, 4u);
  EXPECT_EQ(f[4]->rc->acked_count, 1u);
  // Frame 6 READ 4096 bytes, frames 7-10 its responses 1..4 of 4.
  EXPECT_EQ(f[5]->rc->span, 4u);
  for (std::uint32_t k = 1; k <= 4; ++k) {
    const FrameAnalysis& r = *f[5 + k];
    EXPECT_EQ(r.rc->read_index, k);
    EXPECT_EQ(r.rc->read_count, 4u);
    EXPECT_EQ(r.rc->request_frame, 6u);
  }
  EXPECT_EQ(f[5]->rc->acked_by, 7u);
}

// Native InfiniBand (ERF, LIDs only): three CM set-ups, one of them used before its RTU.
TEST(StreamAnalyzer, InfiniBandCapture) {
  StreamAnalyzer analyzer;
  std::vector<const FrameAnalysis*> f;
  if (!analyze_capture("srinivaskoritala_infiniband.pcap", analyzer, f))
    GTEST_SKIP() << "shared capture srinivaskoritala_infiniband.pcap is absent from "
                 << ROCECONF_SHARED_CAPTURES;
  ASSERT_EQ(f.size(), 43u);
  Counts counts;
  std::size_t established = 0;
  for (const FrameAnalysis* fa : f) {
    count(*fa, counts);
    if (fa->cm && fa->cm->message == "RTU") ++established;
  }
  EXPECT_EQ(analyzer.stats().connections, 3u);
  EXPECT_EQ(established, 3u);
  for (const FrameAnalysis* fa : f)
    EXPECT_EQ(problems(*fa), std::vector<std::string>{}) << "frame " << fa->frame;
  // Frame 36: an RC SEND (IPoIB-CM) on connection 3 before its RTU in frame 37.
  EXPECT_EQ(counts["cm-established-by-data"], 1u);
  EXPECT_TRUE(f[35]->has(FlagCode::kCmEstablishedByData));
  EXPECT_EQ(f[36]->cm->state, CmState::kEstablished);
  EXPECT_EQ(f[37]->rc->request_frame, 36u);
  // Every SEND is acknowledged (frames 11-23, 31, 38, 40), each paired through CM.
  EXPECT_EQ(counts["acks"], 9u);
  EXPECT_EQ(counts["acked-by"], 9u);
  for (const FrameAnalysis* fa : f) {
    if (fa->rc) {
      EXPECT_EQ(fa->rc->link, LinkSource::kCm) << "frame " << fa->frame;
    }
  }
}

}  // namespace
}  // namespace roceconf::analysis
