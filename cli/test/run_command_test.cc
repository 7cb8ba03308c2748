// `roceconf run` as a user meets it: exit codes, the reports it writes, and one-line errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/test/run_binary.h"

namespace roceconf::test {
namespace {

TEST(RunCommand, CleanRunExitsZeroAndWritesEveryReport) {
  TempDir dir;
  const auto r = run_roceconf({"run", "--filter", "psn/*", "--out", dir.file("out")}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(slurp(dir.file("out/report.json")));
  ASSERT_TRUE(json.contains("cases"));
  ASSERT_FALSE(json["cases"].empty());
  for (const auto& c : json["cases"]) {
    for (const char* key : {"id", "area", "verdict", "clause", "reason"})
      EXPECT_TRUE(c.contains(key)) << key;
    EXPECT_EQ(c["area"], "psn");
    EXPECT_TRUE(c["verdict"] == "pass" || c["verdict"] == "skip") << c["id"];
  }
  EXPECT_NE(slurp(dir.file("out/junit.xml")).find("<testsuite"), std::string::npos);
  EXPECT_NE(slurp(dir.file("out/report.html")).find("psn/gap-naks-once"), std::string::npos);
  EXPECT_GT(slurp(dir.file("out/evidence.pcapng")).size(), 1000u);
  // A filtered run that passes exits 0, but is no certificate.
  EXPECT_NE(r.out.find("\nINCOMPLETE: no certificate: "), std::string::npos) << r.out;
}

TEST(RunCommand, AQuirkThatIsCaughtExitsOne) {
  TempDir dir;
  const auto r = run_roceconf({"run", "--quirk", "psn-gap-ack", "--filter", "psn/gap-naks-once",
                               "--json", dir.file("r.json")},
                              dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto json = nlohmann::json::parse(slurp(dir.file("r.json")));
  ASSERT_EQ(json["cases"].size(), 1u);
  const auto& c = json["cases"][0];
  EXPECT_EQ(c["verdict"], "fail");
  EXPECT_NE(c["failed_step"].get<std::string>().find("gap-naks-once.rcase:"), std::string::npos);
  ASSERT_FALSE(c["diffs"].empty());
  EXPECT_EQ(c["diffs"][0]["field"], "aeth.syndrome");
  // Only the explicit report was written.
  EXPECT_FALSE(std::filesystem::exists(dir.file("roceconf-report")));
}

TEST(RunCommand, ListNamesEveryCaseWithItsArea) {
  TempDir dir;
  const auto r = run_roceconf({"run", "--list"}, dir);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("psn/gap-naks-once"), std::string::npos);
  EXPECT_NE(r.out.find("cm/concurrent-setups-32"), std::string::npos);
  EXPECT_NE(r.out.find(" cases"), std::string::npos);
}

// --list --format md is the traceability table (cases/TRACEABILITY.md), json the same for tools.
TEST(RunCommand, ListFormatsTraceability) {
  TempDir dir;
  const auto md = run_roceconf({"run", "--list", "--format", "md"}, dir);
  EXPECT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("| Case | Citation | Release | Level | Rule | Checked |"),
            std::string::npos);
  EXPECT_NE(md.out.find("| `psn/gap-naks-once` | 9.7.5.1 C9-97 C9-98; 9.7.5.2; CA17-25 | IBA Vol 1 "
                        "Release 1.2.1 + Annex A17 | MUST |"),
            std::string::npos)
      << md.out;
  EXPECT_NE(md.out.find("**unchecked**"), std::string::npos);  // a wholly unchecked citation
  const auto json = run_roceconf({"run", "--list", "--format", "json", "--filter", "mtu"}, dir);
  EXPECT_EQ(json.exit_code, 0) << json.err;
  const auto cases = nlohmann::json::parse(json.out);
  ASSERT_FALSE(cases.empty());
  for (const auto& c : cases) {
    EXPECT_EQ(c["area"], "mtu");
    for (const char* key : {"citation", "rule", "release", "checked", "level", "clause"})
      EXPECT_FALSE(c[key].get<std::string>().empty()) << c["id"] << " " << key;
  }
  EXPECT_EQ(run_roceconf({"run", "--list", "--format", "pdf"}, dir).exit_code, 2);
}

TEST(RunCommand, UserErrorsAreOneLineAndExitTwo) {
  TempDir dir;
  const std::vector<std::vector<std::string>> bad = {
      {"run", "--quirk", "no-such-quirk"},
      {"run", "--filter", "nothing/matches/this"},
      {"run", "--target", "raw"},  // no profile, no interface
      {"run", "--target", "raw", "--profile", dir.file("missing.profile")},
      {"run", "--target", "raw", "--interface", "lo", "--target-ip", "192.0.2.2", "--target-mac",
       "ff:ff:ff:ff:ff:ff", "--tester-ip", "192.0.2.1"},  // broadcast target
      {"run", "--target", "warp"},
  };
  for (const auto& args : bad) {
    const auto r = run_roceconf(args, dir);
    SCOPED_TRACE(args.back());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("roceconf: error: ", 0), 0u) << r.err;
  }
}

}  // namespace
}  // namespace roceconf::test
