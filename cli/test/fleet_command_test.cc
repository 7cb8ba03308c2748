// `roceconf fleet merge` over real runs of the reference target with different quirks: the
// matrix, the cases where the devices disagree (first), the failing diff linked from its cell,
// a device that failed its set-up beside intact ones, and bad input as one line with exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/test/run_binary.h"
#include "reports/fleet_report.h"

namespace roceconf::test {
namespace {

using nlohmann::json;

// A run of the psn area against the reference target with `quirk` ("" for none).
std::string psn_run(const TempDir& dir, const std::string& name, const std::string& quirk) {
  std::vector<std::string> args = {
      "run", "--filter", "psn/*", "--quiet", "--force", "--json", dir.file(name + ".json")};
  if (!quirk.empty()) args.insert(args.end(), {"--quirk", quirk});
  const auto r = run_roceconf(args, dir);
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  return dir.file(name + ".json");
}

const json* result_of(const json& fleet, const std::string& id, std::size_t device) {
  for (const auto& c : fleet["cases"])
    if (c["id"] == id) return &c["results"][device];
  return nullptr;
}

TEST(FleetCommand, MergesRunsIntoAMatrixWithDisagreementsFirst) {
  TempDir dir;
  const std::string clean = psn_run(dir, "clean", "");
  const std::string gap = psn_run(dir, "gap", "psn-gap-ack");
  const auto r = run_roceconf({"fleet", "merge", clean, gap, "--json", dir.file("fleet.json"),
                               "--html", dir.file("fleet.html")},
                              dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the psn-gap-ack device has a blocking case
  EXPECT_EQ(r.err, "");
  const json fleet = json::parse(slurp(dir.file("fleet.json")));
  EXPECT_EQ(fleet["kind"], "fleet");
  ASSERT_EQ(fleet["devices"].size(), 2u);
  // Both are the reference NIC: the quirks tell them apart, the file names make titles unique.
  EXPECT_EQ(fleet["devices"][0]["title"], "roceconf reference NIC (clean.json)");
  EXPECT_EQ(fleet["devices"][1]["title"], "roceconf reference NIC (gap.json)");
  EXPECT_NE(fleet["devices"][1]["version"].get<std::string>().find("quirks psn-gap-ack"),
            std::string::npos);
  EXPECT_NE(fleet["devices"][0]["version"].get<std::string>().find("fw "), std::string::npos);

  const auto& disagreements = fleet["disagreements"];
  ASSERT_FALSE(disagreements.empty());
  EXPECT_NE(std::find(disagreements.begin(), disagreements.end(), "psn/gap-naks-once"),
            disagreements.end());
  const json* on_clean = result_of(fleet, "psn/gap-naks-once", 0);
  const json* on_gap = result_of(fleet, "psn/gap-naks-once", 1);
  ASSERT_TRUE(on_clean && on_gap);
  EXPECT_EQ((*on_clean)["verdict"], "pass");
  EXPECT_EQ((*on_gap)["verdict"], "fail");
  ASSERT_FALSE((*on_gap)["diffs"].empty());
  EXPECT_EQ((*on_gap)["diffs"][0]["field"], "aeth.syndrome");
  // Each device's verdicts are its report's, case for case.
  for (const auto& [path, index] : {std::pair{clean, 0u}, std::pair{gap, 1u}}) {
    const json report = json::parse(slurp(path));
    for (const auto& c : report["cases"])
      EXPECT_EQ((*result_of(fleet, c["id"], index))["verdict"], c["verdict"]) << c["id"];
  }
  // Terminal: a line per device, then the disagreements.
  EXPECT_NE(r.out.find("where the devices disagree:\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("psn/gap-naks-once:"), std::string::npos) << r.out;

  // HTML: the disagreement matrix comes before the full one; the failing cell links to its
  // diff.
  const std::string html = slurp(dir.file("fleet.html"));
  const auto disagree_at = html.find("id=\"disagreement-matrix\"");
  const auto matrix_at = html.find("id=\"case-matrix\"");
  ASSERT_NE(disagree_at, std::string::npos);
  ASSERT_NE(matrix_at, std::string::npos);
  EXPECT_LT(disagree_at, matrix_at);
  const std::string anchor = report::fleet_cell_anchor(1, "psn/gap-naks-once");
  EXPECT_NE(html.find("href=\"#" + anchor + "\""), std::string::npos);
  const auto section = html.find("id=\"" + anchor + "\"");
  ASSERT_NE(section, std::string::npos);
  EXPECT_NE(html.find("aeth.syndrome expected NAK vs actual 0x1f (ACK)", section),
            std::string::npos);
}

TEST(FleetCommand, ADeviceThatFailedItsSetUpLeavesTheOthersIntact) {
  TempDir dir;
  const std::string clean = psn_run(dir, "clean", "");
  json failed = json::parse(slurp(clean));
  failed["cases"] = json::array();
  failed["target"]["device"] = {
      {"label", "cx6-r4"}, {"name", "mlx5_0"}, {"fw_ver", "22.36.1010"}, {"driver", "mlx5_core"}};
  failed["setup_error"] = "cannot open interface eth9: No such device";
  {
    std::ofstream out(dir.file("failed.json"));
    out << failed.dump();
  }
  const auto r = run_roceconf({"fleet", "merge", clean, dir.file("failed.json"), "--json",
                               dir.file("fleet.json"), "--html", dir.file("fleet.html")},
                              dir);
  EXPECT_EQ(r.exit_code, 1);
  const json fleet = json::parse(slurp(dir.file("fleet.json")));
  ASSERT_EQ(fleet["devices"].size(), 2u);
  EXPECT_EQ(fleet["devices"][1]["title"], "cx6-r4");
  EXPECT_EQ(fleet["devices"][1]["version"], "mlx5_0 · fw 22.36.1010 · mlx5_core");
  EXPECT_EQ(fleet["devices"][1]["setup_error"], "cannot open interface eth9: No such device");
  EXPECT_EQ(fleet["devices"][1]["summary"]["total"], 0);
  // The other device's results are all there, and a device that ran nothing disagrees with none.
  EXPECT_EQ(fleet["devices"][0]["summary"]["total"], json::parse(slurp(clean))["summary"]["total"]);
  EXPECT_TRUE(fleet["disagreements"].empty());
  for (const auto& c : fleet["cases"]) EXPECT_TRUE(c["results"][1].is_null()) << c["id"];
  EXPECT_NE(r.out.find("SET-UP FAILED: cannot open interface eth9"), std::string::npos) << r.out;
  const std::string html = slurp(dir.file("fleet.html"));
  EXPECT_NE(html.find("SET-UP FAILED</span> <span class=\"setup-error\">cannot open interface "
                      "eth9: No such device</span>"),
            std::string::npos);
}

TEST(FleetCommand, EscapesWhatReportsSay) {
  TempDir dir;
  const std::string clean = psn_run(dir, "clean", "");
  json odd = json::parse(slurp(clean));
  odd["target"]["device"] = {{"label", "<script>alert(1)</script>"}};
  odd["cases"][0]["verdict"] = "fail";
  odd["cases"][0]["reason"] = "<img src=x onerror=alert(1)>";
  {
    std::ofstream out(dir.file("odd.json"));
    out << odd.dump();
  }
  const auto r = run_roceconf(
      {"fleet", "merge", clean, dir.file("odd.json"), "--html", dir.file("fleet.html")}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;  // the certificates, untouched, both pass
  const std::string html = slurp(dir.file("fleet.html"));
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

TEST(FleetCommand, BadInputIsOneLineAndExitsTwo) {
  TempDir dir;
  const std::string clean = psn_run(dir, "clean", "");
  {
    std::ofstream(dir.file("not.json")) << "{ nope";
    std::ofstream(dir.file("other.json")) << R"({"tool": "other", "cases": []})";
  }
  ASSERT_EQ(
      run_roceconf({"fleet", "merge", clean, "--json", dir.file("fleet.json")}, dir).exit_code, 0);
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"fleet", "merge", clean, dir.file("missing.json")}, "cannot read "},
      {{"fleet", "merge", dir.file("not.json")}, "not JSON"},
      {{"fleet", "merge", dir.file("other.json")}, "not a roceconf report"},
      {{"fleet", "merge", dir.file("fleet.json")}, "is a fleet report"},
      {{"fleet", "merge", clean, clean}, "is given twice"},
      {{"fleet", "merge"}, "REPORT is required"},
      {{"fleet"}, "subcommand"},
  };
  for (const auto& [args, message] : bad) {
    const auto r = run_roceconf(args, dir);
    EXPECT_EQ(r.exit_code, 2) << args.back();
    const auto lines = r.err_lines();
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_TRUE(lines[0].starts_with("roceconf: error: ")) << lines[0];
    EXPECT_NE(lines[0].find(message), std::string::npos) << lines[0];
    EXPECT_EQ(r.out, "") << args.back();
  }
}

TEST(FleetReport, CasesOnlySomeDevicesRanKeepCatalogueOrder) {
  const auto device = [](const std::string& label, const std::vector<std::string>& ids) {
    json j = {{"tool", "roceconf"},
              {"target", {{"kind", "reference"}, {"device", {{"label", label}}}}},
              {"cases", json::array()}};
    for (const auto& id : ids)
      j["cases"].push_back({{"id", id}, {"area", id.substr(0, id.find('/'))}, {"verdict", "pass"}});
    auto d = report::parse_device_report(j.dump(), label + ".json");
    EXPECT_TRUE(d.has_value());
    return *d;
  };
  const report::Fleet fleet = report::merge_fleet(
      {device("a", {"cm/a", "psn/a", "psn/c"}), device("b", {"cm/a", "psn/b", "psn/c", "qp/a"})});
  std::vector<std::string> ids;
  for (const auto& c : fleet.cases) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"cm/a", "psn/a", "psn/b", "psn/c", "qp/a"}));
  EXPECT_EQ(fleet.areas, (std::vector<std::string>{"cm", "psn", "qp"}));
  EXPECT_TRUE(fleet.disagreements.empty());  // not running a case is no verdict
  EXPECT_EQ(fleet.devices[0].title, "a");
  EXPECT_EQ(fleet.counts(fleet.devices[1], "psn").pass, 2);
}

}  // namespace
}  // namespace roceconf::test
