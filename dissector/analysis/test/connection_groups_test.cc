// Connection groups: a capture cut along them analyses, shard by shard, exactly as it did
// whole (every frame's judgement and every channel's counts), over generated traffic, the real
// captures, and pairing without CM that stays ambiguous for a while.
#include "dissector/analysis/connection_groups.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "dissector/analysis/test/frames.h"
#include "dissector/testing/traffic.h"

namespace roceconf::analysis {
namespace {

struct Frame {
  std::vector<std::uint8_t> bytes;
  LinkType link = LinkType::kEthernet;
  std::int64_t time_ns = 0;
};

// What the analysis said about one frame, with frame numbers translated to the whole
// capture's and channel/connection numbers reduced to "has one".
struct Judgement {
  bool rc = false, cm = false;
  int role = 0, psn_state = 0;
  std::int64_t expected = -1, sender_next = -1;
  bool nak_due = false, retransmission = false, paired = false, bound = false;
  std::uint64_t retransmission_of = 0, resend_after_nak = 0, request_frame = 0,
                first_acked_frame = 0, nak_cause_frame = 0;
  std::uint32_t acked_count = 0, not_captured = 0, capture_gaps = 0, pmtu = 0, read_index = 0,
                read_count = 0;
  std::string cm_message;
  int cm_state = 0;
  bool cm_duplicate = false, cm_retransmission = false;
  std::vector<std::tuple<std::string, std::uint64_t, std::int64_t>> flags;  // name, frame, ns
  std::vector<std::pair<std::uint64_t, std::string>> answers;               // frame, flag

  friend bool operator==(const Judgement&, const Judgement&) = default;
};

// Channel summary without its numbering: key -> counters.
using ChannelKey = std::tuple<std::string, std::string, std::uint32_t>;
using ChannelCounts = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t,
                                 std::uint64_t, bool, bool>;

struct Analysis {
  std::vector<Judgement> frames;
  std::map<ChannelKey, ChannelCounts> channels;
};

// Runs `frames` (the whole capture, or one shard given by the original frame numbers in
// `numbers`) through a fresh analyzer.
Analysis analyse(const std::vector<Frame>& frames, const std::vector<std::uint64_t>& numbers) {
  AnalyzerOptions options;
  options.keep_results = false;
  StreamAnalyzer analyzer(options);
  Analysis out;
  auto original = [&](std::uint64_t n) { return n == 0 ? 0 : numbers.at(n - 1); };
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    const Frame& f = frames.at(numbers[i] - 1);
    const Packet p = decode(f.bytes, f.link);
    const FrameAnalysis& fa = analyzer.add(i + 1, f.time_ns, p);
    Judgement j;
    if (fa.rc) {
      const RcFrameInfo& rc = *fa.rc;
      j.rc = true;
      j.role = static_cast<int>(rc.role);
      j.psn_state = static_cast<int>(rc.psn_state);
      j.expected = rc.expected_psn ? *rc.expected_psn : -1;
      j.sender_next = rc.sender_next ? *rc.sender_next : -1;
      j.nak_due = rc.nak_due;
      j.retransmission = rc.retransmission;
      j.paired = rc.peer_channel != 0;
      j.bound = rc.connection != 0;
      j.retransmission_of = original(rc.retransmission_of);
      j.resend_after_nak = original(rc.resend_after_nak);
      j.request_frame = original(rc.request_frame);
      j.first_acked_frame = original(rc.first_acked_frame);
      j.nak_cause_frame = original(rc.nak_cause_frame);
      j.acked_count = rc.acked_count;
      j.not_captured = rc.not_captured;
      j.capture_gaps = rc.capture_gaps;
      j.pmtu = rc.pmtu;
      j.read_index = rc.read_index;
      j.read_count = rc.read_count;
    }
    if (fa.cm) {
      j.cm = true;
      j.cm_message = std::string(fa.cm->message);
      j.cm_state = fa.cm->connection != 0 ? static_cast<int>(fa.cm->state) : -1;
      j.cm_duplicate = fa.cm->duplicate;
      j.cm_retransmission = fa.cm->retransmission;
    }
    for (const Flag& flag : fa.flags)
      j.flags.emplace_back(flag.name(), original(flag.frame), flag.ns);
    for (const RcAnswer& a : analyzer.answers())
      j.answers.emplace_back(original(a.request_frame), std::string(a.flag.name()));
    out.frames.push_back(std::move(j));
  }
  for (const RcChannelSummary& c : analyzer.rc().summaries()) {
    out.channels[{c.source, c.destination, c.qpn}] =
        ChannelCounts{c.requests,     c.out_of_sequence,   c.duplicates,     c.retransmissions,
                      c.not_captured, c.peer_channel != 0, c.connection != 0};
  }
  return out;
}

struct Split {
  ConnectionGroups groups;
  std::vector<std::vector<std::uint64_t>> shards;  // [0]: no connection; [g]: group g
};

// Both passes, as `decode --split-by-connection` runs them.
void split(const std::vector<Frame>& frames, Split& s) {
  AnalyzerOptions options;
  options.keep_results = false;
  {
    StreamAnalyzer analyzer(options);
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const Packet p = decode(frames[i].bytes, frames[i].link);
      s.groups.observe(p, analyzer.add(i + 1, frames[i].time_ns, p), analyzer.cm());
    }
  }
  s.groups.finish();
  s.shards.assign(s.groups.size() + 1, {});
  StreamAnalyzer analyzer(options);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const Packet p = decode(frames[i].bytes, frames[i].link);
    s.shards.at(s.groups.group_of(analyzer.add(i + 1, frames[i].time_ns, p))).push_back(i + 1);
  }
}

// Every frame in exactly one shard, the shard sizes pass 1 counted, and each shard's analysis
// equal to the whole capture's for its frames and channels.
void expect_shards_analyse_as_whole(const std::vector<Frame>& frames, const Split& s) {
  std::vector<std::uint64_t> all(frames.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i + 1;
  const Analysis whole = analyse(frames, all);

  std::vector<int> seen(frames.size() + 1, 0);
  EXPECT_EQ(s.shards[0].size(), s.groups.other_frames());
  EXPECT_EQ(s.groups.frames(), frames.size());
  std::map<ChannelKey, ChannelCounts> merged;
  for (std::size_t g = 0; g < s.shards.size(); ++g) {
    SCOPED_TRACE("shard " + std::to_string(g));
    const std::vector<std::uint64_t>& shard = s.shards[g];
    for (std::uint64_t n : shard) ++seen[n];
    if (g != 0) {
      EXPECT_EQ(shard.size(), s.groups.group(static_cast<std::uint32_t>(g)).frames);
      ASSERT_FALSE(shard.empty());
      EXPECT_EQ(shard.front(), s.groups.group(static_cast<std::uint32_t>(g)).first_frame);
    }
    const Analysis part = analyse(frames, shard);
    for (std::size_t i = 0; i < shard.size(); ++i)
      EXPECT_TRUE(part.frames[i] == whole.frames[shard[i] - 1]) << "frame " << shard[i];
    for (const auto& [key, counts] : part.channels) {
      EXPECT_FALSE(merged.contains(key)) << std::get<0>(key) << " -> " << std::get<1>(key);
      merged[key] = counts;
    }
  }
  for (std::size_t n = 1; n <= frames.size(); ++n) EXPECT_EQ(seen[n], 1) << "frame " << n;
  EXPECT_TRUE(merged == whole.channels);
  EXPECT_FALSE(whole.channels.empty());
}

TEST(ConnectionGroups, GeneratedTrafficShardsAnalyseAsTheWhole) {
  TrafficGenerator gen(11);
  std::vector<Frame> frames;
  for (int i = 0; i < 30000; ++i) {
    Frame f;
    f.bytes = gen.next(&f.link);
    f.time_ns = 1'000'000 + i * 200;
    frames.push_back(std::move(f));
  }
  Split s;
  split(frames, s);
  // A dozen concurrent connections, replaced as they close: many groups, nearly all CM-bound.
  EXPECT_GT(s.groups.size(), 30u);
  std::size_t bound = 0;
  for (const ConnectionGroup& g : s.groups.groups()) bound += g.cm_connection != 0 ? 1 : 0;
  EXPECT_GT(bound, s.groups.size() / 2);
  expect_shards_analyse_as_whole(frames, s);
}

// The same traffic without its CM exchanges and with a frame in twenty lost to the capture:
// channels pair by PSN (or as the only candidate) alone, and every shard analyses as the whole.
TEST(ConnectionGroups, WithoutCmAndWithCaptureLoss) {
  TrafficGenerator gen(12);
  std::mt19937_64 rng(12);
  std::vector<Frame> frames;
  while (frames.size() < 20000) {
    Frame f;
    f.bytes = gen.next(&f.link);
    const Packet p = decode(f.bytes, f.link);
    if ((p.mad && p.mad->cm) || rng() % 20 == 0) continue;
    f.time_ns = static_cast<std::int64_t>(frames.size()) * 200;
    frames.push_back(std::move(f));
  }
  Split s;
  split(frames, s);
  EXPECT_GT(s.groups.size(), 30u);
  for (const ConnectionGroup& g : s.groups.groups()) EXPECT_EQ(g.cm_connection, 0u);
  expect_shards_analyse_as_whole(frames, s);
}

// Six QP pairs between the same two hosts, no CM, a frame in six lost to the capture: many
// first responses acknowledge a request the capture lost and fit none of the unpaired request
// channels, or fit several. Whatever the shards, each analyses as the whole.
TEST(ConnectionGroups, ManyQpPairsBetweenTwoHostsWithLoss) {
  using namespace test;
  std::size_t groups = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    std::vector<Frame> frames;
    std::array<std::uint32_t, 6> psn{};
    for (std::size_t i = 0; i < psn.size(); ++i) psn[i] = static_cast<std::uint32_t>(rng() % 64);
    for (int step = 0; step < 300; ++step) {
      const std::size_t i = rng() % psn.size();
      Packet p;
      if (rng() % 2 == 0) {
        p = request(opcode::kRcSendOnly, psn[i]++, 8);
        p.bth->dqpn = 0x100 + static_cast<std::uint32_t>(i);
      } else {
        p = ack((psn[i] - 1) & 0xffffff, psn[i]);
        p.bth->dqpn = 0x200 + static_cast<std::uint32_t>(i);
      }
      if (rng() % 6 == 0) continue;
      frames.push_back({encode(p), LinkType::kEthernet, step * 1000});
    }
    Split s;
    split(frames, s);
    expect_shards_analyse_as_whole(frames, s);
    groups += s.groups.size();
  }
  // Not one lump: most first responses still pair, and those pairs are shards of their own.
  EXPECT_GT(groups, 20u * 2);
}

// CM-bound: the REQ, REP, RTU and both directions' data in one group, named by the CM sides.
TEST(ConnectionGroups, CmExchangeAndBothDirectionsTogether) {
  using namespace test;
  std::vector<Frame> frames;
  auto add = [&frames](const Packet& p) {
    frames.push_back(
        {encode(p), LinkType::kEthernet, static_cast<std::int64_t>(frames.size()) * 1000});
  };
  CmReq req;
  req.local_comm_id = 0x1001;
  req.local_qpn = kQpA;
  req.starting_psn = 500;
  req.path_mtu = 3;
  add(cm(true, req, 7));
  CmRep rep;
  rep.local_comm_id = 0x2002;
  rep.remote_comm_id = 0x1001;
  rep.local_qpn = kQpB;
  rep.starting_psn = 100;
  add(cm(false, rep, 7));
  CmRtu rtu;
  rtu.local_comm_id = 0x1001;
  rtu.remote_comm_id = 0x2002;
  add(cm(true, rtu, 7));
  add(request(opcode::kRcSendOnly, 100, 64));                    // A -> B
  add(ack(100, 1));                                              // B -> A
  add(request(opcode::kRcSendOnly, 500, 16, /*from_a=*/false));  // B -> A
  add(ack(500, 1, 0x1F, /*from_b=*/false));                      // A -> B
  Packet ud = base(true, opcode::kUdSendOnly, 0x77, 3);          // UD: no connection
  ud.deth = Deth{0x1234, 0, 0x55};
  add(ud);

  Split s;
  split(frames, s);
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.shards[1], (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(s.shards[0], (std::vector<std::uint64_t>{8}));
  const ConnectionGroup& g = s.groups.group(1);
  EXPECT_EQ(g.cm_connection, 1u);
  EXPECT_EQ(g.cm_connections, 1u);
  EXPECT_EQ(g.channels, 2u);
  EXPECT_EQ(g.name(), "192.0.2.1-0x000011--192.0.2.2-0x000022-cm1");
  expect_shards_analyse_as_whole(frames, s);
}

// Without CM, responses pair by PSN: two QP pairs between the same hosts are two groups.
TEST(ConnectionGroups, PairsByPsnSplitApart) {
  using namespace test;
  std::vector<Frame> frames;
  auto add = [&frames](const Packet& p) {
    frames.push_back(
        {encode(p), LinkType::kEthernet, static_cast<std::int64_t>(frames.size()) * 1000});
  };
  Packet r2 = request(opcode::kRcSendOnly, 5000, 8);
  r2.bth->dqpn = 0x33;
  add(request(opcode::kRcSendOnly, 1000, 8));
  add(r2);
  Packet a2 = ack(5000, 1);
  a2.bth->dqpn = 0x44;
  add(a2);
  add(ack(1000, 1));
  Split s;
  split(frames, s);
  ASSERT_EQ(s.groups.size(), 2u);
  EXPECT_EQ(s.shards[1], (std::vector<std::uint64_t>{1, 4}));
  EXPECT_EQ(s.shards[2], (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(s.groups.group(1).name(), "192.0.2.1-0x000011--192.0.2.2-0x000022");
  EXPECT_EQ(s.groups.group(2).name(), "192.0.2.1-0x000044--192.0.2.2-0x000033");
  expect_shards_analyse_as_whole(frames, s);
}

// A response that fits neither of two request channels stays unpaired in the whole capture; in
// a shard holding one of them it would pair at once and be judged against it. So the groups
// keep all three together.
TEST(ConnectionGroups, AmbiguousPairingKeepsTheCandidatesTogether) {
  using namespace test;
  std::vector<Frame> frames;
  auto add = [&frames](const Packet& p) {
    frames.push_back(
        {encode(p), LinkType::kEthernet, static_cast<std::int64_t>(frames.size()) * 1000});
  };
  Packet r2 = request(opcode::kRcSendOnly, 5000, 8);
  r2.bth->dqpn = 0x33;
  add(request(opcode::kRcSendOnly, 1000, 8));  // 1: A -> B:0x22
  add(r2);                                     // 2: A -> B:0x33
  add(ack(900, 1));                            // 3: for a request before the capture
  add(ack(1000, 2));                           // 4: pairs by PSN with frame 1's channel
  Packet a2 = ack(5000, 1);
  a2.bth->dqpn = 0x44;
  add(a2);  // 5

  // Frames 1, 3 and 4 alone (what pairing alone would give) judge frame 3 differently.
  const Analysis whole = analyse(frames, {1, 2, 3, 4, 5});
  const Analysis naive = analyse(frames, {1, 3, 4});
  EXPECT_FALSE(whole.frames[2].paired);
  EXPECT_TRUE(naive.frames[1].paired);

  Split s;
  split(frames, s);
  expect_shards_analyse_as_whole(frames, s);
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.shards[1].size(), 5u);
}

struct PcapClose {
  void operator()(pcap_t* p) const { pcap_close(p); }
};

// The real captures in the shared folder; false when absent.
bool read_capture(const std::string& name, std::vector<Frame>& out) {
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
  while (pcap_next_ex(pcap.get(), &header, &data) == 1) {
    out.push_back({std::vector<std::uint8_t>(data, data + header->caplen), link,
                   static_cast<std::int64_t>(header->ts.tv_sec) * 1000000000 + header->ts.tv_usec});
  }
  return true;
}

TEST(ConnectionGroups, RealCaptures) {
  bool any = false;
  for (const char* name :
       {"rxe_ib_write_bw_rc_loss_nak.pcap", "montybeatnik_roce_capture_read-write-ecn.pcap",
        "srinivaskoritala_infiniband.pcap"}) {
    SCOPED_TRACE(name);
    std::vector<Frame> frames;
    if (!read_capture(name, frames)) continue;
    any = true;
    Split s;
    split(frames, s);
    EXPECT_GE(s.groups.size(), 1u);
    expect_shards_analyse_as_whole(frames, s);
  }
  if (!any) GTEST_SKIP() << "shared capture folder " << ROCECONF_SHARED_CAPTURES << " is absent";
}

}  // namespace
}  // namespace roceconf::analysis
