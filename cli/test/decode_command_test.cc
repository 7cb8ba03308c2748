// `roceconf decode` run as a process on captures this test writes itself: summary lines, JSON
// keys and values, --stats totals, --udp-port, and one-line errors (never a crash) on bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/test/capture_files.h"
#include "dissector/packet.h"
#include "cli/test/run_binary.h"

namespace roceconf {
namespace {

using test::RunResult;
using test::TempDir;
using test::TestFrame;

constexpr std::uint64_t kStart = 1'700'000'000'000'000'000u;
constexpr std::uint64_t kTid = 0x252b5cf34;
constexpr std::uint32_t kReqCommId = 0x11223344;
constexpr std::uint32_t kRepCommId = 0x55667788;
constexpr std::uint32_t kPsn = 0xabcdef;
const std::vector<std::uint8_t> kPayload18(18, 0x5a);

Packet roce(std::uint8_t op, std::uint32_t dqpn, std::uint32_t psn) {
  Packet p;
  p.ipv4 = Ipv4{};
  p.udp = Udp{};
  Bth b;
  b.opcode = op;
  b.dqpn = dqpn;
  b.psn = psn;
  p.bth = b;
  return p;
}

Packet cm(CmMessage msg, std::uint32_t psn) {
  Packet p = roce(opcode::kUdSendOnly, 1, psn);
  p.bth->ackreq = true;
  p.deth = Deth{kGsiQkey, 0, 1};
  Mad mad;
  mad.header.tid = kTid;
  mad.cm = std::move(msg);
  p.mad = std::move(mad);
  return p;
}

std::vector<std::uint8_t> arp_frame() {
  std::vector<std::uint8_t> f(14 + 28, 0);
  f[0] = 0xff;
  f[12] = 0x08;
  f[13] = 0x06;
  return f;
}

// The twelve frames every test below reads, one millisecond apart.
std::vector<TestFrame> mixed_frames() {
  std::vector<std::vector<std::uint8_t>> f;
  CmReq req;
  req.local_comm_id = kReqCommId;
  req.service_id = 0x0000000001061d2f;  // rdma_cm, TCP port space, port 7471
  req.local_qpn = 0x11;
  req.starting_psn = kPsn;
  req.path_mtu = 5;
  f.push_back(encode(cm(req, 1)));
  CmRep rep;
  rep.local_comm_id = kRepCommId;
  rep.remote_comm_id = kReqCommId;
  rep.local_qpn = 0x22;
  rep.starting_psn = 100;
  f.push_back(encode(cm(rep, 2)));
  CmRej rej;
  rej.local_comm_id = kRepCommId;
  rej.remote_comm_id = kReqCommId;
  rej.reason = 28;
  f.push_back(encode(cm(rej, 3)));

  Packet write = roce(opcode::kRcWriteOnly, 0x22, kPsn);
  write.bth->ackreq = true;
  write.reth = Reth{0xdead0000, 0x1234, 18};
  write.payload = kPayload18;
  f.push_back(encode(write));
  Packet ack = roce(opcode::kRcAck, 0x11, kPsn);
  ack.aeth = Aeth{0x1F, 7};
  f.push_back(encode(ack));
  Packet nak = roce(opcode::kRcAck, 0x11, kPsn + 1);
  nak.aeth = Aeth{0x60, 7};
  f.push_back(encode(nak));
  Packet ud = roce(opcode::kUdSendOnly, 0x33, 9);
  ud.deth = Deth{0x01234567, 0, 0x44};
  ud.payload = Bytes(kPayload18).first(8);
  f.push_back(encode(ud));

  Packet bad = roce(opcode::kRcSendOnly, 0x22, 10);
  bad.icrc = Icrc{0xdeadbeef, 0};
  EncodeOptions keep_icrc;
  keep_icrc.fill_icrc = false;
  f.push_back(encode(bad, keep_icrc));
  Packet v6 = roce(opcode::kRcSendOnly, 0x22, 11);
  v6.ipv4.reset();
  v6.ipv6 = Ipv6{};
  f.push_back(encode(v6));

  Packet dns = roce(opcode::kRcSendOnly, 0x22, 12);
  dns.udp = Udp{1234, 53, 0, 0};
  f.push_back(encode(dns));
  f.push_back(arp_frame());
  Packet other_port = roce(opcode::kRcSendOnly, 0x22, 13);
  other_port.udp->dport = 5000;
  f.push_back(encode(other_port));

  std::vector<TestFrame> frames;
  for (std::size_t i = 0; i < f.size(); ++i) frames.push_back({f[i], kStart + i * 1'000'000});
  return frames;
}

class DecodeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    pcap_ = dir_.file("mixed.pcap");
    ASSERT_TRUE(test::write_pcap(pcap_, DLT_EN10MB, mixed_frames()));
  }

  RunResult run(const std::vector<std::string>& args) { return test::run_roceconf(args, dir_); }

  // A failed run: exit code 2, nothing on stdout unless said, one "roceconf: error:" line.
  void expect_one_error_line(const RunResult& r, const std::string& contains) {
    EXPECT_EQ(r.signal, 0);
    EXPECT_EQ(r.exit_code, 2);
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_TRUE(lines[0].starts_with("roceconf: error: ")) << lines[0];
    EXPECT_NE(lines[0].find(contains), std::string::npos) << lines[0];
  }

  std::vector<nlohmann::json> json_lines(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"decode", "--json", pcap_};
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<nlohmann::json> result;
    for (const std::string& line : r.out_lines()) result.push_back(nlohmann::json::parse(line));
    return result;
  }

  TempDir dir_;
  std::string pcap_;
};

bool contains(const std::string& line, const std::string& what) {
  return line.find(what) != std::string::npos;
}

TEST_F(DecodeCli, SummaryLinePerFrame) {
  const RunResult r = run({"decode", pcap_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto lines = r.out_lines();
  ASSERT_EQ(lines.size(), 12u) << r.out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::istringstream fields(lines[i]);  // "  <frame> <seconds> <summary>"
    std::string number, time;
    fields >> number >> time;
    EXPECT_EQ(number, std::to_string(i + 1)) << lines[i];
    EXPECT_EQ(time, fmt::format("{:.6f}", i * 0.001)) << lines[i];
  }
  const auto has = [&](std::size_t frame, const std::string& what) {
    EXPECT_TRUE(contains(lines[frame - 1], what))
        << "frame " << frame << ": " << lines[frame - 1] << "\n  lacks: " << what;
  };
  has(1, "192.0.2.1 → 192.0.2.2 RoCEv2 UD_SEND_ONLY QP=0x000001 PSN=1");
  has(1, "qkey=0x80010000 srcqp=0x000001");
  has(1, "CM REQ local=0x11223344 qpn=0x000011 start_psn=11259375");
  has(2, "CM REP local=0x55667788 remote=0x11223344 qpn=0x000022 start_psn=100");
  has(3, "CM REJ local=0x55667788 remote=0x11223344 reason=28 (Consumer-defined)");
  has(4, "RC_RDMA_WRITE_ONLY QP=0x000022 PSN=11259375 va=0xdead0000 rkey=0x1234 len=18 ICRC ok");
  has(5, "RC_ACKNOWLEDGE QP=0x000011 PSN=11259375 ACK msn=7 ICRC ok");
  has(6, "NAK_PSN_SEQUENCE_ERROR msn=7");
  has(7, "UD_SEND_ONLY QP=0x000033 PSN=9 qkey=0x01234567 srcqp=0x000044");
  has(8, "RC_SEND_ONLY QP=0x000022 PSN=10 ICRC bad [bad-icrc]");
  has(9, "2001:db8::1 → 2001:db8::2 RoCEv2 RC_SEND_ONLY");
  has(10, "non-RoCE: UDP 192.0.2.1:1234 → 192.0.2.2:53");
  has(11, "non-RoCE: eth type 0x0806");
  has(12, "non-RoCE: UDP 192.0.2.1:49152 → 192.0.2.2:5000");
  for (std::size_t frame : {1, 2, 3, 4, 5, 6, 7, 9}) has(frame, "ICRC ok");
  for (std::size_t frame : {1, 2, 3, 4, 5, 6, 7, 9})
    EXPECT_FALSE(contains(lines[frame - 1], "[")) << "unexpected findings: " << lines[frame - 1];
}

TEST_F(DecodeCli, PcapngGivesTheSameLines) {
  const std::string pcapng = dir_.file("mixed.pcapng");
  ASSERT_TRUE(test::write_bytes(pcapng, test::pcapng_bytes(1, mixed_frames())));
  const RunResult a = run({"decode", pcap_});
  const RunResult b = run({"decode", pcapng});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
}

TEST_F(DecodeCli, JsonLinesCarryTheRequiredKeys) {
  const auto frames = json_lines();
  ASSERT_EQ(frames.size(), 12u);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const auto& j = frames[i];
    EXPECT_EQ(j.at("frame"), i + 1);
    EXPECT_DOUBLE_EQ(j.at("time").get<double>(), i * 0.001);
    EXPECT_TRUE(j.at("length").is_number());
    EXPECT_TRUE(j.at("findings").is_array());
  }
  const auto& req = frames[0];
  EXPECT_EQ(req["eth"]["src"], "02:00:00:00:00:01");
  EXPECT_EQ(req["ipv4"]["src"], "192.0.2.1");
  EXPECT_EQ(req["ipv4"]["dst"], "192.0.2.2");
  EXPECT_EQ(req["bth"]["opcode"], opcode::kUdSendOnly);
  EXPECT_EQ(req["bth"]["opcode_name"], "UD_SEND_ONLY");
  EXPECT_EQ(req["bth"]["dqpn"], 1);
  EXPECT_EQ(req["bth"]["psn"], 1);
  EXPECT_EQ(req["bth"]["pkey"], 0xFFFF);
  EXPECT_EQ(req["bth"]["ackreq"], true);
  EXPECT_EQ(req["bth"]["padcount"], 0);
  EXPECT_EQ(req["deth"]["qkey"], kGsiQkey);
  EXPECT_EQ(req["deth"]["srcqp"], 1);
  EXPECT_EQ(req["mad"]["attr_id"], cm_attr::kReq);
  EXPECT_EQ(req["mad"]["tid"], kTid);
  EXPECT_EQ(req["cm"]["msg"], "REQ");
  EXPECT_EQ(req["cm"]["local_comm_id"], kReqCommId);
  EXPECT_EQ(req["cm"]["local_qpn"], 0x11);
  EXPECT_EQ(req["cm"]["starting_psn"], kPsn);
  EXPECT_EQ(req["cm"]["path_mtu"], 5);
  EXPECT_EQ(req["cm"]["service_id"], 0x0000000001061d2fu);
  EXPECT_EQ(req["cm"]["rdma_cm"]["port"], 7471);  // "rdma_cm.port" nests
  EXPECT_TRUE(req["icrc"]["value"].is_number());
  EXPECT_EQ(req["icrc"]["ok"], true);
  EXPECT_EQ(req["findings"].size(), 0u);

  EXPECT_EQ(frames[1]["cm"]["msg"], "REP");
  EXPECT_EQ(frames[1]["cm"]["remote_comm_id"], kReqCommId);
  EXPECT_EQ(frames[2]["cm"]["msg"], "REJ");
  EXPECT_EQ(frames[2]["cm"]["reason"], 28);

  const auto& write = frames[3];
  EXPECT_EQ(write["bth"]["opcode_name"], "RC_RDMA_WRITE_ONLY");
  EXPECT_EQ(write["bth"]["padcount"], 2);
  EXPECT_EQ(write["reth"]["va"], 0xdead0000u);
  EXPECT_EQ(write["reth"]["rkey"], 0x1234);
  EXPECT_EQ(write["reth"]["dmalen"], 18);
  EXPECT_EQ(frames[4]["aeth"]["syndrome"], 0x1F);
  EXPECT_EQ(frames[4]["aeth"]["msn"], 7);
  EXPECT_EQ(frames[6]["deth"]["qkey"], 0x01234567);
  EXPECT_EQ(frames[6]["deth"]["srcqp"], 0x44);

  const auto& bad = frames[7];
  EXPECT_EQ(bad["icrc"]["ok"], false);
  EXPECT_EQ(bad["icrc"]["value"], 0xdeadbeefu);
  ASSERT_EQ(bad["findings"].size(), 1u);
  EXPECT_EQ(bad["findings"][0]["code"], "bad-icrc");
  EXPECT_EQ(bad["findings"][0]["layer"], "icrc");
  EXPECT_EQ(bad["findings"][0]["severity"], "error");
  EXPECT_EQ(bad["findings"][0]["offset"], bad["length"].get<int>() - 4);
  EXPECT_FALSE(bad["findings"][0]["message"].get<std::string>().empty());

  EXPECT_EQ(frames[8]["ipv6"]["src"], "2001:db8::1");
  EXPECT_EQ(frames[9]["framing"], "none");
  EXPECT_FALSE(frames[9].contains("bth"));
  EXPECT_EQ(frames[9]["udp"]["dport"], 53);
}

TEST_F(DecodeCli, StatsCountsFramesOpcodesAndFindings) {
  const RunResult r = run({"decode", "--stats", pcap_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto has = [&](const std::string& text) {
    EXPECT_TRUE(contains(r.out, text)) << r.out << "\n  lacks: " << text;
  };
  const auto row = [](std::string_view name, int count) {
    return fmt::format("\n  {:<32}{:>8}\n", name, count);
  };
  has("frames:           12\n");
  has("RoCE frames:      9 (RoCEv2 9, RoCEv1 0)\n");
  has("ICRC failures:    1\n");
  has(row("UD_SEND_ONLY", 4));
  has(row("RC_ACKNOWLEDGE", 2));
  has(row("RC_RDMA_WRITE_ONLY", 1));
  has(row("RC_SEND_ONLY", 2));
  has(row("bad-icrc", 1));
  has(" frames/s (12 frames in ");
  has(" s, decode + ICRC check)\n");
  EXPECT_EQ(r.out.find("{"), std::string::npos);  // no JSON
}

TEST_F(DecodeCli, UdpPortMovesRoceToAnotherPort) {
  const RunResult standard = run({"decode", pcap_});
  const RunResult moved = run({"decode", "--udp-port", "5000", pcap_});
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  EXPECT_TRUE(contains(standard.out_lines()[11], "non-RoCE"));
  EXPECT_TRUE(contains(moved.out_lines()[11], "RoCEv2 RC_SEND_ONLY QP=0x000022 PSN=13 ICRC ok"))
      << moved.out_lines()[11];
  EXPECT_TRUE(contains(moved.out_lines()[3], "non-RoCE: UDP 192.0.2.1:49152 → 192.0.2.2:4791"));
  const RunResult stats = run({"decode", "--stats", "--udp-port=5000", pcap_});
  EXPECT_TRUE(contains(stats.out, "RoCE frames:      1 ")) << stats.out;
}

TEST_F(DecodeCli, NoIcrcSkipsTheCheck) {
  const RunResult r = run({"decode", "--no-icrc", pcap_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out_lines()[7], "ICRC unchecked")) << r.out_lines()[7];
  EXPECT_FALSE(contains(r.out, "bad-icrc"));
}

TEST_F(DecodeCli, MissingFile) {
  const std::string path = dir_.file("absent.pcap");
  const RunResult r = run({"decode", path});
  expect_one_error_line(r, "cannot open '" + path + "': No such file or directory");
  EXPECT_EQ(r.out, "");
}

TEST_F(DecodeCli, RandomBytes) {
  std::mt19937 rng(7);
  std::vector<std::uint8_t> junk(4096);
  for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
  const std::string path = dir_.file("junk.pcap");
  ASSERT_TRUE(test::write_bytes(path, junk));
  for (const char* mode : {"--json", "--stats"}) {
    const RunResult r = run({"decode", mode, path});
    expect_one_error_line(r, "is not a pcap or pcapng capture (bad magic)");
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(DecodeCli, TruncatedCaptureKeepsWhatWasRead) {
  auto bytes = test::read_bytes(pcap_);
  bytes.resize(bytes.size() - 30);  // the last record loses its tail
  const std::string path = dir_.file("cut.pcap");
  ASSERT_TRUE(test::write_bytes(path, bytes));
  const RunResult r = run({"decode", path});
  expect_one_error_line(r, "is truncated after frame 11");
  EXPECT_EQ(r.out_lines().size(), 11u);
  const RunResult stats = run({"decode", "--stats", path});
  expect_one_error_line(stats, "is truncated after frame 11");
  EXPECT_TRUE(contains(stats.out, "frames:           11\n")) << stats.out;
}

TEST_F(DecodeCli, UsageErrorsExitTwoWithOneLine) {
  expect_one_error_line(run({}), "subcommand is required");
  expect_one_error_line(run({"decode"}), "FILE is required");
  expect_one_error_line(run({"frobnicate"}), "unknown command 'frobnicate'");
  expect_one_error_line(run({"decode", "--json", "--stats", pcap_}), "excludes");
  expect_one_error_line(run({"decode", "--udp-port", "0", pcap_}), "--udp-port");
  expect_one_error_line(run({"decode", "--udp-port", "x", pcap_}), "--udp-port");
  expect_one_error_line(run({"decode", "--bogus", pcap_}), "--bogus");
}

TEST_F(DecodeCli, HelpExitsZero) {
  const RunResult r = run({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "decode"));
  const RunResult sub = run({"decode", "--help"});
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_TRUE(contains(sub.out, "--udp-port"));
}

// Damaged captures in every mode: exit 0 or 2, one error line at most, never a signal.
TEST_F(DecodeCli, DamagedCapturesNeverCrash) {
  const auto good = test::read_bytes(pcap_);
  std::mt19937 rng(1234);
  const std::string path = dir_.file("damaged.pcap");
  const char* modes[] = {"--json", "--stats", "--no-icrc"};
  for (int round = 0; round < 30; ++round) {
    auto bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 16);
    for (int k = 0; k < flips; ++k)
      bytes[24 + rng() % (bytes.size() - 24)] = static_cast<std::uint8_t>(rng());
    if (round % 3 == 0) bytes.resize(24 + rng() % (bytes.size() - 24));
    ASSERT_TRUE(test::write_bytes(path, bytes));
    const RunResult r = run({"decode", modes[round % 3], path});
    SCOPED_TRACE("round " + std::to_string(round));
    EXPECT_EQ(r.signal, 0) << r.err;
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.exit_code;
    EXPECT_LE(r.err_lines().size(), r.exit_code == 0 ? 0u : 1u) << r.err;
  }
}

// The real IB capture (ERF link type) end to end, when the shared folder is present.
TEST_F(DecodeCli, RealInfiniBandCapture) {
  const auto path =
      std::filesystem::path(ROCECONF_SHARED_CAPTURES) / "srinivaskoritala_infiniband.pcap";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared capture folder " << ROCECONF_SHARED_CAPTURES << " is absent";
  const RunResult r = run({"decode", path.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = r.out_lines();
  ASSERT_EQ(lines.size(), 43u);
  EXPECT_TRUE(contains(lines[6], "LID 4 → LID 1 IB UD_SEND_ONLY QP=0x000001")) << lines[6];
  EXPECT_TRUE(contains(lines[6], "CM REQ local=0xe9488627 qpn=0x870408")) << lines[6];
  EXPECT_TRUE(contains(lines[7], "CM REP local=0xf9024539 remote=0xe9488627")) << lines[7];
  EXPECT_TRUE(contains(lines[8], "CM RTU local=0xe9488627 remote=0xf9024539")) << lines[8];
  EXPECT_TRUE(contains(lines[10], "RC_ACKNOWLEDGE QP=0x870408 PSN=13896277 ACK msn=1"));
  for (const std::string& line : lines) EXPECT_TRUE(contains(line, "ICRC ok VCRC ok")) << line;
}

}  // namespace
}  // namespace roceconf
