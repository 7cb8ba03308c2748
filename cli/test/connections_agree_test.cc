// `roceconf decode --connections` and the Wireshark plugin's connections table
// (`tshark -z roceconf,conn`) on the real captures in ../shared/captures: the same directions,
// in the same order, with the same counts and the same response-time median.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/test/run_binary.h"
#include "dissector/wireshark/test/tshark_harness.h"

namespace roceconf {
namespace {

namespace ws = wireshark::test;

std::string qp(const nlohmann::json& d, const char* address, const char* qpn) {
  return d.contains(qpn) ? fmt::format("{} QP {:#08x}", d[address].get<std::string>(),
                                       d[qpn].get<std::uint32_t>())
                         : d[address].get<std::string>() + " QP ?";
}

TEST(ConnectionsAgree, DecodeAndTheWiresharkTable) {
  if (const std::string why = ws::tshark_unavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::filesystem::path shared(ROCECONF_SHARED_CAPTURES);
  if (!std::filesystem::is_directory(shared))
    GTEST_SKIP() << "shared capture folder " << ROCECONF_SHARED_CAPTURES << " is absent";
  ws::TempDir home;
  test::TempDir dir;
  std::size_t captures = 0;
  for (const auto& entry : std::filesystem::directory_iterator(shared)) {
    if (entry.path().extension() != ".pcap" && entry.path().extension() != ".pcapng") continue;
    ++captures;
    SCOPED_TRACE(entry.path().filename().string());
    const std::string copy = home.file(entry.path().filename().string());
    std::filesystem::copy_file(entry.path(), copy);
    ::chmod(copy.c_str(), 0644);  // the unprivileged tshark reads it

    const test::RunResult decode =
        test::run_roceconf({"decode", "--connections", "--json", copy}, dir);
    ASSERT_EQ(decode.exit_code, 0) << decode.err;
    std::vector<nlohmann::json> directions;
    for (const std::string& line : decode.out_lines()) {
      const nlohmann::json connection = nlohmann::json::parse(line);
      for (const auto& d : connection["directions"]) directions.push_back(d);
    }
    // The table's rows come in order of first sight; the connections' directions by channel.
    std::ranges::sort(directions, {},
                      [](const nlohmann::json& d) { return d["channel"].get<int>(); });

    const ws::ConnectionTable table = ws::connection_table(home, copy);
    ASSERT_EQ(table.status, 0) << table.output;
    const auto& rows = table.rows;
    ASSERT_EQ(rows.size(), directions.size());
    ASSERT_FALSE(rows.empty());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      const auto& d = directions[i];
      ASSERT_GE(r.size(), 17u);
      EXPECT_EQ(r[0], qp(d, "source", "source_qpn"));
      EXPECT_EQ(r[1], qp(d, "destination", "qpn"));
      EXPECT_EQ(r[3], std::to_string(d["packets"].get<std::uint64_t>()));
      EXPECT_EQ(r[4], std::to_string(d["bytes"].get<std::uint64_t>()));
      EXPECT_EQ(r[5], std::to_string(d["messages"].get<std::uint64_t>()));
      EXPECT_EQ(r[6], std::to_string(d["retransmissions"].get<std::uint64_t>()));
      EXPECT_EQ(r[7], std::to_string(d["out_of_sequence"].get<std::uint64_t>()));
      EXPECT_EQ(r[8], std::to_string(d["duplicates"].get<std::uint64_t>()));
      const auto& n = d["naks"];
      EXPECT_EQ(r[9], fmt::format("{}/{}/{}/{}/{}", n["psn_seq_err"].get<int>(),
                                  n["inv_req"].get<int>(), n["rem_access"].get<int>(),
                                  n["rem_op"].get<int>(), n["inv_rd_req"].get<int>()));
      if (d["response_time"]["count"].get<int>() > 0) {
        EXPECT_EQ(r[12],
                  fmt::format("{:.1f}", d["response_time"]["median_ns"].get<double>() / 1e3));
      }
      EXPECT_EQ(r[15], std::to_string(d["not_captured"].get<std::uint64_t>()));
      EXPECT_EQ(r[16], d["gradable"].get<bool>() ? "complete" : "incomplete: not graded");
    }
  }
  EXPECT_GT(captures, 0u);
}

}  // namespace
}  // namespace roceconf
