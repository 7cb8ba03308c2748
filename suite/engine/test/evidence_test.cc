// The pcapng evidence read back by libpcap (frames, times, order) and by tshark (comments and
// directions, which libpcap does not expose).
#include "suite/engine/evidence.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <sys/wait.h>

#include <filesystem>
#include <sstream>

#include "dissector/packet.h"

namespace roceconf::engine {
namespace {

using report::CaseResult;
using report::Event;
using report::EventKind;
using report::RunResult;
using report::Verdict;

constexpr std::int64_t kT0 = 1'700'000'000'123'456'789;

std::vector<std::uint8_t> roce_frame(std::uint32_t psn) {
  Packet p;
  p.eth = Ethernet{{2, 0, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 1}, ethertype::kIpv4};
  p.ipv4 = Ipv4{};
  p.udp = Udp{};
  Bth bth;
  bth.opcode = opcode::kRcSendOnly;
  bth.dqpn = 0x12;
  bth.psn = psn;
  p.bth = bth;
  return encode(p);
}

Event event(std::int64_t t_ns, EventKind kind, std::string step, std::string text,
            std::vector<std::uint8_t> frame = {}) {
  return Event{kT0 + t_ns, kind, std::move(step), std::move(text), std::move(frame), {}};
}

RunResult sample_run() {
  CaseResult fail;
  fail.id = "psn/gap-naks-once";
  fail.area = "psn";
  fail.verdict = Verdict::kFail;
  fail.failed_step = "cases/psn/gap.rcase:9";  // its frames, and only they, say failed=yes
  fail.start_unix_ns = kT0;
  // Recorded out of order and mixed with events that are not frames.
  fail.events = {
      event(0, EventKind::kNote, "", "connected"),
      event(3000, EventKind::kReceived, "cases/psn/gap.rcase:9", "RC ACK psn=2", roce_frame(2)),
      event(1000, EventKind::kSent, "cases/psn/gap.rcase:7", "RC SEND_ONLY psn=1", roce_frame(1)),
      event(2000, EventKind::kExpectMet, "cases/psn/gap.rcase:8", "matched"),
      event(2500, EventKind::kSent, "cases/psn/gap.rcase:9", "RC SEND_ONLY psn=3 (gap)",
            roce_frame(3)),
      event(4000, EventKind::kControl, "cases/psn/gap.rcase:10", "poll_cq: SUCCESS"),
  };
  CaseResult pass;
  pass.id = "cm/my case";  // a space: written as '_'
  pass.area = "cm";
  pass.verdict = Verdict::kPass;
  pass.start_unix_ns = kT0 + 10'000;
  pass.events = {
      event(10'000, EventKind::kSent, "", "multi\nline note", roce_frame(10)),
      event(11'000, EventKind::kReceived, "c.rcase:2", "", roce_frame(11)),
  };
  RunResult run;
  run.cases = {fail, pass};
  return run;
}

const std::vector<std::string> kComments = {
    "roceconf case=psn/gap-naks-once step=cases/psn/gap.rcase:7 verdict=fail event=sent "
    "note=RC SEND_ONLY psn=1",
    "roceconf case=psn/gap-naks-once step=cases/psn/gap.rcase:9 verdict=fail event=sent "
    "failed=yes note=RC SEND_ONLY psn=3 (gap)",
    "roceconf case=psn/gap-naks-once step=cases/psn/gap.rcase:9 verdict=fail event=received "
    "failed=yes note=RC ACK psn=2",
    "roceconf case=cm/my_case step=- verdict=pass event=sent note=multi line note",
    "roceconf case=cm/my_case step=c.rcase:2 verdict=pass event=received",
};
const std::vector<std::uint32_t> kPsns = {1, 3, 2, 10, 11};
const std::vector<std::int64_t> kTimes = {kT0 + 1000, kT0 + 2500, kT0 + 3000, kT0 + 10'000,
                                          kT0 + 11'000};
// epb_flags direction: 1 inbound (received), 2 outbound (sent).
const std::vector<int> kDirections = {2, 2, 1, 2, 1};

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "roceconf-evidence-XXXXXX");
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct Read {
  std::vector<std::uint32_t> psns;
  std::vector<std::int64_t> times;
};

Read read_with_libpcap(const std::string& path) {
  Read read;
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p =
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf);
  EXPECT_NE(p, nullptr) << errbuf;
  if (!p) return read;
  pcap_pkthdr* h;
  const u_char* d;
  while (pcap_next_ex(p, &h, &d) == 1) {
    const Packet packet = decode(Bytes(d, h->caplen));
    read.psns.push_back(packet.bth ? packet.bth->psn : 0xFFFFFFFF);
    read.times.push_back(std::int64_t{h->ts.tv_sec} * 1'000'000'000 + h->ts.tv_usec);
  }
  pcap_close(p);
  return read;
}

std::string run_command(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return output;
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  pclose(pipe);
  return output;
}

bool have_tshark() {
  return !run_command("command -v tshark 2>/dev/null").empty();
}

struct Tagged {
  std::string comment;
  int direction = -1;
};

// Comment and direction of each frame through tshark.
std::vector<Tagged> read_with_tshark(const std::string& path) {
  const std::string out =
      run_command("tshark -r '" + path +
                  "' -T fields -E separator=/t -e frame.comment -e frame.packet_flags_direction "
                  "2>/dev/null");
  std::vector<Tagged> frames;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t tab = line.find('\t');
    Tagged t;
    t.comment = line.substr(0, tab);
    if (tab != std::string::npos) t.direction = std::stoi(line.substr(tab + 1), nullptr, 0);
    frames.push_back(t);
  }
  return frames;
}

TEST(Evidence, CommentFormat) {
  const RunResult run = sample_run();
  EXPECT_EQ(evidence_comment(run.cases[0], run.cases[0].events[1]), kComments[2]);
  EXPECT_EQ(evidence_comment(run.cases[1], run.cases[1].events[1]), kComments[4]);
}

TEST(Evidence, WholeRunReadBackByLibpcap) {
  TempDir dir;
  const std::string path = dir.file("run.pcapng");
  const auto written = write_evidence_pcapng(sample_run(), path);
  ASSERT_TRUE(written) << written.error();
  const Read read = read_with_libpcap(path);
  EXPECT_EQ(read.psns, kPsns);
  EXPECT_EQ(read.times, kTimes);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(Evidence, CommentsAndDirectionsReadBackByTshark) {
  if (!have_tshark()) GTEST_SKIP() << "tshark not installed (apt-get install tshark)";
  TempDir dir;
  const std::string path = dir.file("run.pcapng");
  ASSERT_TRUE(write_evidence_pcapng(sample_run(), path));
  const std::vector<Tagged> frames = read_with_tshark(path);
  ASSERT_EQ(frames.size(), kComments.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(frames[i].comment, kComments[i]) << "frame " << i + 1;
    EXPECT_EQ(frames[i].direction, kDirections[i]) << "frame " << i + 1;
  }
}

TEST(Evidence, StreamingKeepsCompletedCases) {
  TempDir dir;
  const std::string path = dir.file("stream.pcapng");
  const RunResult run = sample_run();
  {
    EvidenceWriter writer;
    ASSERT_TRUE(writer.open(path));
    ASSERT_TRUE(writer.add_case(run.cases[0]));
    // As if the run stopped here: the file already holds the first case.
    EXPECT_EQ(read_with_libpcap(path).psns, (std::vector<std::uint32_t>{1, 3, 2}));
    if (have_tshark()) {
      const std::vector<Tagged> frames = read_with_tshark(path);
      ASSERT_EQ(frames.size(), 3u);
      EXPECT_EQ(frames[2].comment, kComments[2]);
    }
    ASSERT_TRUE(writer.add_case(run.cases[1]));
    EXPECT_EQ(writer.packets(), 5u);
    ASSERT_TRUE(writer.close());
    EXPECT_TRUE(writer.close());  // idempotent
    EXPECT_FALSE(writer.add_case(run.cases[1]));
  }
  EXPECT_EQ(read_with_libpcap(path).psns, kPsns);
}

TEST(Evidence, ErrorsNameThePath) {
  TempDir dir;
  const std::string path = dir.file("missing/run.pcapng");
  const auto written = write_evidence_pcapng(sample_run(), path);
  ASSERT_FALSE(written);
  EXPECT_NE(written.error().find(path), std::string::npos) << written.error();
  EvidenceWriter writer;
  EXPECT_FALSE(writer.open(path));
  EXPECT_FALSE(writer.add_case(sample_run().cases[0]));
}

}  // namespace
}  // namespace roceconf::engine
