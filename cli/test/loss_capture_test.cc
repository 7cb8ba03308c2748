// The real loss capture (rxe, netem loss, go-back-N that loses packets again) through
// `roceconf decode --json` and through the engine's ladder annotator: both must say what the
// responder's PSN state machine says about frames 44-66 (../shared/captures/README.md; the same
// table the analyzer and the Wireshark plugin are held to).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pcap/pcap.h>
#include <nlohmann/json.hpp>

#include "capture/pcap_reader.h"
#include "capture/test/capture_files.h"
#include "cli/test/run_binary.h"
#include "dissector/analysis/test/loss_capture.h"
#include "dissector/names.h"
#include "dissector/packet.h"
#include "suite/engine/annotator.h"

namespace roceconf {
namespace {

using analysis::test::kLossCapture;
using analysis::test::kLossPsnBase;
using analysis::test::loss_requests;
using analysis::test::loss_responses;

std::filesystem::path capture_path() {
  return std::filesystem::path(ROCECONF_SHARED_CAPTURES) / kLossCapture;
}

std::string psn_hex(std::uint32_t low) {
  return fmt::format("{:#08x}", kLossPsnBase | low);
}

bool has_flag(const nlohmann::json& analysis, const std::string& name) {
  for (const auto& f : analysis["flags"])
    if (f["name"] == name) return true;
  return false;
}

TEST(LossCapture, DecodeJsonFollowsTheResponder) {
  if (!std::filesystem::exists(capture_path()))
    GTEST_SKIP() << "shared capture " << kLossCapture << " is absent from "
                 << ROCECONF_SHARED_CAPTURES;
  test::TempDir dir;
  const test::RunResult r = test::run_roceconf({"decode", "--json", capture_path().string()}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::uint64_t, nlohmann::json> frames;
  std::size_t not_captured = 0, duplicates = 0;
  for (const std::string& line : r.out_lines()) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (!j.contains("analysis")) continue;
    not_captured += has_flag(j["analysis"], "not-captured") ? 1 : 0;
    duplicates += has_flag(j["analysis"], "duplicate") ? 1 : 0;
    frames[j["frame"].get<std::uint64_t>()] = j["analysis"];
  }
  EXPECT_EQ(not_captured, 0u);
  EXPECT_EQ(duplicates, 1u);  // frame 652 resends 0x95c564 after it was accepted (frame 648)
  EXPECT_EQ(frames[652]["psn"]["state"], "duplicate");
  for (const auto& want : loss_requests()) {
    SCOPED_TRACE("frame " + std::to_string(want.frame));
    ASSERT_TRUE(frames.contains(want.frame));
    const nlohmann::json& a = frames[want.frame];
    EXPECT_EQ(a["role"], "request");
    const nlohmann::json& psn = a["psn"];
    EXPECT_EQ(psn["expected"].get<std::uint32_t>(), kLossPsnBase | want.expected);
    EXPECT_EQ(psn["state"], std::string(want.state));
    EXPECT_EQ(psn.value("nak_due", false), want.nak_due);
    EXPECT_EQ(psn.value("retransmission", false), want.retransmission);
    EXPECT_EQ(psn.value("retransmission_of", std::uint64_t{0}), want.retransmission_of);
    EXPECT_EQ(psn.value("resent_after_nak", std::uint64_t{0}), want.resent_after_nak);
    EXPECT_EQ(has_flag(a, "out-of-sequence"), want.state == "out-of-sequence");
    EXPECT_FALSE(has_flag(a, "duplicate"));
  }
  for (const auto& want : loss_responses()) {
    SCOPED_TRACE("frame " + std::to_string(want.frame));
    const nlohmann::json& a = frames[want.frame];
    EXPECT_EQ(a["role"], "response");
    EXPECT_EQ(a.value("nak_cause", std::uint64_t{0}), want.nak_cause);
    EXPECT_EQ(has_flag(a, "nak-seq-error"), want.nak);
    EXPECT_FALSE(a.contains("not_captured"));
  }
}

TEST(LossCapture, EngineAnnotatorAgrees) {
  if (!std::filesystem::exists(capture_path()))
    GTEST_SKIP() << "shared capture " << kLossCapture << " is absent from "
                 << ROCECONF_SHARED_CAPTURES;
  auto reader = PcapReader::open(capture_path().string());
  ASSERT_TRUE(reader) << reader.error();
  engine::Annotator annotator;
  std::map<std::uint64_t, std::vector<std::string>> ladder;
  Packet packet;
  for (std::uint64_t n = 1; n <= 66; ++n) {
    auto next = reader->next();
    ASSERT_TRUE(next && *next);
    decode_into(packet, (**next).data, reader->link_type());
    ladder[n] = annotator.add(packet, static_cast<TimeNs>((**next).time_ns));
  }
  auto find = [&ladder](std::uint64_t frame, const std::string& prefix) -> std::string {
    for (const std::string& s : ladder[frame])
      if (s.starts_with(prefix)) return s;
    return "";
  };
  for (const auto& want : loss_requests()) {
    SCOPED_TRACE("frame " + std::to_string(want.frame));
    EXPECT_EQ(find(want.frame, "duplicate"), "");
    if (want.state == "out-of-sequence") {
      EXPECT_EQ(find(want.frame, "out-of-sequence:"),
                fmt::format("out-of-sequence: PSN {} ahead of expected PSN {} ({} missing)",
                            psn_hex(want.psn), psn_hex(want.expected),
                            (want.psn - want.expected) & 0xFFF));
    } else {
      EXPECT_EQ(find(want.frame, "out-of-sequence"), "");
    }
    if (want.retransmission) {
      const std::string text =
          want.retransmission_of != 0
              ? fmt::format("retransmission: retransmission of frame {} after NAK in frame {}",
                            want.retransmission_of, want.resent_after_nak)
              : fmt::format("retransmission: resent after NAK in frame {}", want.resent_after_nak);
      EXPECT_EQ(find(want.frame, "retransmission:"), text);
    } else {
      EXPECT_EQ(find(want.frame, "retransmission"), "");
    }
  }
  for (const auto& want : loss_responses()) {
    if (!want.nak) continue;
    EXPECT_EQ(find(want.frame, "nak-seq-error:"),
              fmt::format("nak-seq-error: NAK PSN sequence error, expected PSN {} (caused by "
                          "frame {})",
                          psn_hex(want.psn), want.nak_cause));
  }
}

// A frame from 192.0.2.1 to 192.0.2.2 (requests) or back (responses), as on the wire.
std::vector<std::uint8_t> rc_frame(bool request, std::uint8_t op, std::uint32_t psn,
                                   std::uint8_t syndrome = 0x1F) {
  Packet p;
  p.eth = Ethernet{};
  Ipv4 ip;
  ip.src = request ? Ipv4Address{192, 0, 2, 1} : Ipv4Address{192, 0, 2, 2};
  ip.dst = request ? Ipv4Address{192, 0, 2, 2} : Ipv4Address{192, 0, 2, 1};
  p.ipv4 = ip;
  p.udp = Udp{};
  Bth b;
  b.opcode = op;
  b.dqpn = request ? 0x22 : 0x11;
  b.psn = psn;
  p.bth = b;
  static const std::vector<std::uint8_t> payload(64, 0x5a);
  if (request) p.payload = Bytes(payload.data(), payload.size());
  if (!request) p.aeth = Aeth{syndrome, 1};
  return encode(p);
}

// `decode --connections`: a capture that missed requests the responder acknowledged is not
// complete enough to grade; a go-back-N captured at the requester (the lost packet on the wire
// once, the NAK, the resends) is, with its resends counted as retransmissions, not duplicates.
TEST(LossCapture, ConnectionsSayWhetherTheCaptureCanGrade) {
  test::TempDir dir;
  auto write = [&dir](const std::string& name, const std::vector<std::vector<std::uint8_t>>& f) {
    std::vector<test::TestFrame> frames;
    for (std::size_t i = 0; i < f.size(); ++i) frames.push_back({f[i], 1'000'000'000 + i * 1000});
    const std::string path = dir.file(name);
    EXPECT_TRUE(test::write_pcap(path, DLT_EN10MB, frames));
    return path;
  };
  using namespace opcode;
  const std::string lossy =
      write("lossy.pcap", {rc_frame(true, kRcSendOnly, 10), rc_frame(true, kRcSendOnly, 11),
                           rc_frame(true, kRcSendOnly, 14), rc_frame(false, kRcAck, 14)});
  std::vector<std::vector<std::uint8_t>> gbn;
  for (std::uint32_t psn = 0; psn < 6; ++psn) gbn.push_back(rc_frame(true, kRcSendOnly, psn));
  gbn.push_back(rc_frame(false, kRcAck, 2, syndrome::kNakPsnSeqError));
  for (std::uint32_t psn = 2; psn < 6; ++psn) gbn.push_back(rc_frame(true, kRcSendOnly, psn));
  gbn.push_back(rc_frame(false, kRcAck, 5));
  const std::string requester = write("requester.pcap", gbn);

  const test::RunResult a = test::run_roceconf({"decode", "--connections", "--json", lossy}, dir);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(a.out_lines().size(), 1u) << a.out;
  const auto conn = nlohmann::json::parse(a.out_lines()[0]);
  EXPECT_EQ(conn["gradable"], false);
  ASSERT_EQ(conn["directions"].size(), 1u);
  const auto& j = conn["directions"][0];
  EXPECT_EQ(j["requests"], 3);
  EXPECT_EQ(j["not_captured"], 2);
  EXPECT_EQ(j["gradable"], false);
  const test::RunResult text = test::run_roceconf({"decode", "--connections", lossy}, dir);
  EXPECT_NE(text.out.find("connections: 1 (0 bound through CM, 0 complete enough to grade)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("incomplete: not graded"), std::string::npos) << text.out;

  const test::RunResult b =
      test::run_roceconf({"decode", "--connections", "--json", requester}, dir);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  ASSERT_EQ(b.out_lines().size(), 1u) << b.out;
  const auto k = nlohmann::json::parse(b.out_lines()[0])["directions"][0];
  EXPECT_EQ(k["requests"], 10);
  EXPECT_EQ(k["duplicates"], 0);
  EXPECT_EQ(k["out_of_sequence"], 0);
  EXPECT_EQ(k["retransmissions"], 4);
  EXPECT_EQ(k["not_captured"], 0);
  EXPECT_EQ(k["gradable"], true);
  EXPECT_EQ(k["naks"]["psn_seq_err"], 1);
  EXPECT_EQ(k["acks"], 1);
  EXPECT_EQ(k["messages"], 6);  // PSNs 0-5; the resends are not new messages
  EXPECT_EQ(k["response_time"]["count"], 2);
}

// `decode --connections` on the real loss capture. The counts are those of Wireshark's own
// InfiniBand dissector (tshark -d udp.port==4791,infiniband, grouped by addresses, DestQP and
// AETH syndrome): the write stream's 572 requests to QP 0x29 (2,378,280 bytes) and 35
// responses to QP 0x2a (2,170 bytes: 17 ACKs, 18 sequence-error NAKs).
TEST(LossCapture, ConnectionsOfTheRealCapture) {
  if (!std::filesystem::exists(capture_path()))
    GTEST_SKIP() << "shared capture " << kLossCapture << " is absent from "
                 << ROCECONF_SHARED_CAPTURES;
  test::TempDir dir;
  const test::RunResult r =
      test::run_roceconf({"decode", "--connections", "--json", capture_path().string()}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.out_lines().size(), 2u) << r.out;
  // Written as CM closes them: the write stream's connection first.
  const auto write = nlohmann::json::parse(r.out_lines()[0]);
  EXPECT_EQ(write["cm_connection"], 2);
  EXPECT_EQ(write["packets"], 607);
  EXPECT_EQ(write["bytes"], 2380450);
  ASSERT_EQ(write["directions"].size(), 1u);
  const auto& d = write["directions"][0];
  EXPECT_EQ(d["source"], "192.0.2.11");
  EXPECT_EQ(d["qpn"], 0x29);
  EXPECT_EQ(d["source_qpn"], 0x2a);
  EXPECT_EQ(d["requests"], 572);
  EXPECT_EQ(d["responses"], 35);
  EXPECT_EQ(d["acks"], 17);
  EXPECT_EQ(d["naks"]["psn_seq_err"], 18);
  EXPECT_EQ(d["naks"]["inv_req"], 0);
  EXPECT_EQ(d["gradable"], true);  // every PSN acknowledged is in the capture
  EXPECT_GT(d["retransmissions"].get<int>(), 0);
  EXPECT_LE(d["response_time"]["median_ns"].get<std::int64_t>(),
            d["response_time"]["p99_ns"].get<std::int64_t>());
  // Both directions of the synchronisation connection (CM 1).
  const auto sync = nlohmann::json::parse(r.out_lines()[1]);
  EXPECT_EQ(sync["cm_connection"], 1);
  EXPECT_EQ(sync["directions"].size(), 2u);
  EXPECT_EQ(sync["packets"], 64);

  const test::RunResult text =
      test::run_roceconf({"decode", "--connections", capture_path().string()}, dir);
  EXPECT_NE(text.out.find("connections: 2 (2 bound through CM, 2 complete enough to grade)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("192.0.2.11 QP 0x00002a -> 192.0.2.12 QP 0x000029"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("18/0/0/0/0"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace roceconf
