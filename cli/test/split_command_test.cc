// `roceconf decode --split-by-connection DIR` run as a process: every frame lands in exactly one
// shard, unchanged (bytes, timestamps, lengths); a CM-bound connection's shard holds its REQ,
// REP, RTU and both directions' data; `--stats` totals and the per-channel rows of
// `--connections --json` over the shards equal the single pass; bad directories are one-line
// errors.
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "capture/test/capture_files.h"
#include "cli/test/run_binary.h"
#include "dissector/testing/traffic.h"

namespace roceconf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::RunResult;
using test::TempDir;

class SplitCli : public ::testing::Test {
 protected:
  RunResult run(const std::vector<std::string>& args) { return test::run_roceconf(args, dir_); }

  std::string out_dir(const std::string& name = "shards") const { return dir_.file(name); }

  // Splits `capture` into a fresh folder; returns the shard paths (sorted) and checks the
  // report: one line per shard with its frame count, then the total.
  std::vector<std::string> split(const std::string& capture, const std::string& name = "shards") {
    const RunResult r = run({"decode", "--split-by-connection", out_dir(name), capture});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    std::vector<std::string> shards;
    for (const auto& entry : fs::directory_iterator(out_dir(name)))
      shards.push_back(entry.path().string());
    std::ranges::sort(shards);
    const auto lines = r.out_lines();
    EXPECT_EQ(lines.size(), shards.size() + 1) << r.out;
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
      std::istringstream in(lines[i]);
      std::uint64_t frames = 0;
      std::string path;
      in >> frames >> path;
      EXPECT_TRUE(std::ranges::find(shards, path) != shards.end()) << lines[i];
      EXPECT_EQ(frames, frame_count(path)) << lines[i];
      sum += frames;
    }
    if (!lines.empty()) {
      std::istringstream in(lines.back());
      std::uint64_t total = 0;
      std::string word;
      in >> total >> word;
      EXPECT_EQ(total, sum) << lines.back();
      EXPECT_EQ(word, "total:") << lines.back();
    }
    return shards;
  }

  std::uint64_t frame_count(const std::string& path) {
    const RunResult r = run({"decode", path});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out_lines().size();
  }

  // Every frame's decode, without its number, its time since the first frame of its file or
  // its analysis (numbered per file): what must survive splitting unchanged.
  std::multiset<std::string> frames_of(const std::string& path) {
    const RunResult r = run({"decode", "--json", path});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::multiset<std::string> out;
    for (const std::string& line : r.out_lines()) {
      json j = json::parse(line);
      j.erase("frame");
      j.erase("time");
      j.erase("analysis");
      out.insert(j.dump());
    }
    return out;
  }

  // `--stats` counts (frames, by opcode, by finding), keyed by their line's label.
  std::map<std::string, std::uint64_t> stats_of(const std::string& path) {
    const RunResult r = run({"decode", "--stats", path});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, std::uint64_t> out;
    for (const std::string& line : r.out_lines()) {
      if (line.starts_with("speed:") || line.starts_with("by opcode") ||
          line.starts_with("findings by code"))
        continue;
      const auto colon = line.find(':');
      if (colon != std::string::npos) {  // "frames:   12", "RoCE frames: 9 (RoCEv2 9, ...)"
        out[line.substr(0, colon)] +=
            std::stoull(line.substr(line.find_first_not_of(' ', colon + 1)));
        continue;
      }
      const auto last = line.find_last_of(' ');  // "  RC_ACKNOWLEDGE      12"
      out[line.substr(0, line.find_last_not_of(' ', last) + 1)] +=
          std::stoull(line.substr(last + 1));
    }
    return out;
  }

  // `--connections --json` rows by (source, destination, qpn), without their numbering. A line
  // is a channel, or a connection whose "directions" are its channels.
  using Rows = std::map<std::tuple<std::string, std::string, std::uint32_t>, json>;
  void add_connection_rows(const std::string& path, Rows& rows) {
    const RunResult r = run({"decode", "--connections", "--json", path});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& line : r.out_lines()) {
      const json j = json::parse(line);
      const json channels = j.contains("directions") ? j["directions"] : json::array({j});
      for (json c : channels) {
        for (const char* numbering : {"channel", "peer_channel", "connection", "cm_connection"})
          c.erase(numbering);
        const auto key =
            std::make_tuple(c["source"].get<std::string>(), c["destination"].get<std::string>(),
                            c["qpn"].get<std::uint32_t>());
        EXPECT_FALSE(rows.contains(key)) << line;
        rows[key] = c;
      }
    }
  }

  // What the issue asks of a split: the shards together are the capture, and grade as it does.
  void expect_same_as_single_pass(const std::string& capture,
                                  const std::vector<std::string>& shards) {
    std::multiset<std::string> all;
    std::map<std::string, std::uint64_t> stats;
    Rows rows;
    for (const std::string& shard : shards) {
      const auto frames = frames_of(shard);
      EXPECT_FALSE(frames.empty()) << shard;
      all.insert(frames.begin(), frames.end());
      for (const auto& [label, n] : stats_of(shard)) stats[label] += n;
      add_connection_rows(shard, rows);
    }
    EXPECT_TRUE(all == frames_of(capture));
    EXPECT_EQ(stats, stats_of(capture));
    Rows whole;
    add_connection_rows(capture, whole);
    EXPECT_EQ(rows, whole);
    EXPECT_FALSE(whole.empty());
  }

  TempDir dir_;
};

fs::path shared(const char* name) {
  return fs::path(ROCECONF_SHARED_CAPTURES) / name;
}

std::string basename(const std::string& path) {
  return fs::path(path).filename().string();
}

TEST_F(SplitCli, GeneratedConnectionsShardsGradeAsTheWhole) {
  const std::string capture = dir_.file("generated.pcap");
  std::string error;
  ASSERT_TRUE(write_pcap(capture, 10000, 5, &error)) << error;
  const auto shards = split(capture);
  ASSERT_GT(shards.size(), 8u);
  EXPECT_EQ(basename(shards.back()), "other.pcap");  // UD and SIDR traffic
  for (std::size_t i = 0; i + 1 < shards.size(); ++i)
    EXPECT_TRUE(basename(shards[i]).starts_with("conn-00")) << shards[i];
  expect_same_as_single_pass(capture, shards);
}

// More connections at once than descriptors allowed: shards are closed and reopened for
// appending, and nothing changes.
TEST_F(SplitCli, FewDescriptorsGiveTheSameShards) {
  const std::string capture = dir_.file("generated.pcap");
  ASSERT_TRUE(write_pcap(capture, 6000, 9));
  const auto wide = split(capture, "wide");
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = 36;  // 4 shards open at a time
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  const auto narrow = split(capture, "narrow");
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_EQ(narrow.size(), wide.size());
  ASSERT_GT(wide.size(), 8u);
  for (std::size_t i = 0; i < wide.size(); ++i) {
    EXPECT_EQ(basename(narrow[i]), basename(wide[i]));
    EXPECT_EQ(test::read_bytes(narrow[i]), test::read_bytes(wide[i])) << basename(wide[i]);
  }
}

TEST_F(SplitCli, RxeCmConnectionInOneShard) {
  const fs::path capture = shared("montybeatnik_roce_capture_read-write-ecn.pcap");
  if (!fs::exists(capture))
    GTEST_SKIP() << "shared capture folder " << ROCECONF_SHARED_CAPTURES << " is absent";
  const auto shards = split(capture.string());
  ASSERT_EQ(shards.size(), 1u);
  // Named by the CM active side (address, QPN), then the passive side, then the CM connection.
  EXPECT_EQ(basename(shards[0]), "conn-0001-192.168.65.5-0x000011--192.168.65.4-0x000011-cm1.pcap");
  const RunResult r = run({"decode", shards[0]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string text = r.out;
  for (const char* what : {"CM REQ", "CM REP", "CM RTU", "CM DREQ", "CM DREP", "RDMA_WRITE_ONLY",
                           "RC_ACKNOWLEDGE", "RDMA_READ_REQUEST", "RDMA_READ_RESPONSE_LAST"})
    EXPECT_NE(text.find(what), std::string::npos) << what;
  expect_same_as_single_pass(capture.string(), shards);
}

TEST_F(SplitCli, RealCapturesGradeAsTheWhole) {
  bool any = false;
  for (const char* name :
       {"rxe_ib_write_bw_rc_loss_nak.pcap", "srinivaskoritala_infiniband.pcap"}) {
    SCOPED_TRACE(name);
    const fs::path capture = shared(name);
    if (!fs::exists(capture)) continue;
    any = true;
    const auto shards = split(capture.string(), name);
    ASSERT_FALSE(shards.empty());
    expect_same_as_single_pass(capture.string(), shards);
  }
  if (!any) GTEST_SKIP() << "shared capture folder " << ROCECONF_SHARED_CAPTURES << " is absent";
}

// The IB capture: three CM set-ups, each shard holding its REQ, REP and RTU and its data in
// both directions; SMPs, SA queries and IPoIB over UD in other.pcap.
TEST_F(SplitCli, InfiniBandConnectionsCarryTheirCmExchange) {
  const fs::path capture = shared("srinivaskoritala_infiniband.pcap");
  if (!fs::exists(capture))
    GTEST_SKIP() << "shared capture folder " << ROCECONF_SHARED_CAPTURES << " is absent";
  const RunResult r =
      run({"decode", "--split-by-connection", out_dir(), "--json", capture.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::size_t with_data = 0;
  std::uint64_t total = 0;
  for (const std::string& line : r.out_lines()) {
    const json j = json::parse(line);
    total += j["frames"].get<std::uint64_t>();
    const std::string file = j["file"];
    ASSERT_TRUE(fs::exists(file)) << file;
    if (j["kind"] == "other") {
      EXPECT_EQ(basename(file), "other.pcap");
      continue;
    }
    ASSERT_TRUE(j.contains("cm_connection")) << line;
    const RunResult d = run({"decode", "--json", file});
    ASSERT_EQ(d.exit_code, 0) << d.err;
    std::set<std::string> cm, sources;
    for (const std::string& frame : d.out_lines()) {
      const json f = json::parse(frame);
      if (!f.contains("analysis")) continue;
      const json& a = f["analysis"];
      if (a.contains("cm_message")) cm.insert(a["cm_message"].get<std::string>());
      if (a.contains("channel")) sources.insert(f["lrh"]["slid"].dump());
    }
    EXPECT_TRUE(cm.contains("REQ") && cm.contains("REP") && cm.contains("RTU")) << file;
    if (!sources.empty()) {
      ++with_data;
      EXPECT_EQ(sources.size(), 2u) << file;  // both directions
    }
  }
  EXPECT_EQ(total, 43u);
  EXPECT_GE(with_data, 2u);
}

TEST_F(SplitCli, TimestampsAndLengthsKept) {
  std::vector<test::TestFrame> frames;
  TrafficGenerator gen(3);
  for (int i = 0; i < 400; ++i) {
    LinkType link = LinkType::kEthernet;
    std::vector<std::uint8_t> bytes = gen.next(&link);
    if (link != LinkType::kEthernet) continue;
    const std::uint32_t orig = static_cast<std::uint32_t>(bytes.size());
    if (i % 7 == 0) bytes.resize(std::min<std::size_t>(bytes.size(), 60));  // snapped
    frames.push_back(
        {bytes, 1'700'000'000'123'456'789u + static_cast<std::uint64_t>(i) * 1013, orig});
  }
  const std::string capture = dir_.file("snapped.pcap");
  ASSERT_TRUE(test::write_pcap(capture, DLT_EN10MB, frames));
  const auto shards = split(capture);
  ASSERT_GT(shards.size(), 1u);
  // timestamp_ns, length and captured_length are in each frame's JSON.
  expect_same_as_single_pass(capture, shards);
}

TEST_F(SplitCli, RefusesANonEmptyDirectory) {
  const std::string capture = dir_.file("generated.pcap");
  ASSERT_TRUE(write_pcap(capture, 100, 1));
  fs::create_directory(out_dir());
  test::write_bytes(out_dir() + "/keep.txt", {'x'});
  RunResult r = run({"decode", "--split-by-connection", out_dir(), capture});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_TRUE(r.err.starts_with("roceconf: error: '" + out_dir() + "' is not empty")) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::distance(fs::directory_iterator(out_dir()), fs::directory_iterator()), 1);

  r = run({"decode", "--split-by-connection", out_dir() + "/keep.txt", capture});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines().size(), 1u) << r.err;

  r = run({"decode", "--split-by-connection", dir_.file("new"), "--stats", capture});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_FALSE(fs::exists(dir_.file("new")));

  // An empty directory is fine; a missing capture creates nothing.
  fs::create_directory(dir_.file("empty"));
  EXPECT_EQ(split(capture, "empty").size() > 0, true);
  r = run({"decode", "--split-by-connection", dir_.file("none"), dir_.file("missing.pcap")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(dir_.file("none")));
}

// A capture cut off mid-record: the frames before the cut are split, then the one error line.
TEST_F(SplitCli, TruncatedCaptureSplitsWhatWasRead) {
  const std::string capture = dir_.file("generated.pcap");
  ASSERT_TRUE(write_pcap(capture, 500, 2));
  std::vector<std::uint8_t> bytes = test::read_bytes(capture);
  bytes.resize(bytes.size() - 10);
  const std::string cut = dir_.file("cut.pcap");
  ASSERT_TRUE(test::write_bytes(cut, bytes));
  const RunResult r = run({"decode", "--split-by-connection", out_dir(), cut});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("truncated after frame 499"), std::string::npos) << r.err;
  std::uint64_t frames = 0;
  for (const auto& entry : fs::directory_iterator(out_dir())) frames += frame_count(entry.path());
  EXPECT_EQ(frames, 499u);
  EXPECT_FALSE(fs::exists(out_dir() + "/.partial"));
}

}  // namespace
}  // namespace roceconf
