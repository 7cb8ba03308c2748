// The certificate as a user meets it through `roceconf run` and `roceconf compare`: the target
// is never implied, waivers, coverage headlines, rerun and compare, no silent overwrite, and
// the evidence hash.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/test/run_binary.h"

namespace roceconf::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

Json report(const std::string& path) {
  return Json::parse(slurp(path));
}

std::set<std::string> ids_with(const Json& j, const std::set<std::string>& verdicts) {
  std::set<std::string> out;
  for (const auto& c : j["cases"])
    if (verdicts.contains(c["verdict"].get<std::string>())) out.insert(c["id"]);
  return out;
}

// One whole-catalogue run with a defect, shared by the tests that need failures.
class QuirkRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    const auto r = run_roceconf({"run", "--quiet", "--quirk", "psn-gap-ack", "--json",
                                 dir_->file("quirk.json"), "--seed", "3"},
                                *dir_);
    ASSERT_EQ(r.exit_code, 1) << r.err;
    const auto c =
        run_roceconf({"run", "--quiet", "--json", dir_->file("clean.json"), "--seed", "3"}, *dir_);
    ASSERT_EQ(c.exit_code, 0) << c.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string file(const std::string& name) { return dir_->file(name); }
  static TempDir* dir_;
};
TempDir* QuirkRun::dir_ = nullptr;

TEST(Certificate, RawTargetOptionsWithoutTargetRawAreAUsageError) {
  TempDir dir;
  write(dir.file("acme.profile"), "interface = lo\n");
  const std::vector<std::vector<std::string>> mistakes = {
      {"run", "--profile", dir.file("acme.profile")},
      {"run", "--interface", "eth1"},
      {"run", "--target-ip", "192.0.2.2"},
      {"run", "--target-mac", "02:00:00:00:00:02"},
      {"run", "--tester-mac", "02:00:00:00:00:01"},
      {"run", "--tester-ip", "192.0.2.1"},
      {"run", "--service-port", "7471"},
      {"run", "--agent", "192.0.2.2:7700"},
      {"run", "--target", "daemon", "--profile", dir.file("acme.profile")},
  };
  for (const auto& args : mistakes) {
    SCOPED_TRACE(args[args.size() - 2]);
    const auto r = run_roceconf(args, dir);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_NE(r.err.find("--target raw"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;  // nothing was graded
    EXPECT_FALSE(fs::exists(dir.file("roceconf-report")));
  }
  const auto r = run_roceconf({"run", "--profile", dir.file("acme.profile")}, dir);
  EXPECT_EQ(r.err,
            "roceconf: error: --profile describes a real device: add --target raw (the default "
            "target is the built-in reference NIC)\n");
}

TEST(Certificate, FilteredRunHeadlinesIncompleteAndNamesTargetAndDevice) {
  TempDir dir;
  const auto r = run_roceconf({"run", "--filter", "psn/*", "--json", dir.file("r.json")}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;  // nothing blocks: exit 0, but no certificate
  const Json j = report(dir.file("r.json"));
  const int total = j["identity"]["catalogue"]["cases"];
  const int run = static_cast<int>(j["cases"].size());
  EXPECT_LT(run, total);
  EXPECT_EQ(j["certificate"]["headline"], "INCOMPLETE");
  const std::string line = fmt::format(
      "INCOMPLETE: no certificate: {} of {} catalogue cases run (filtered: psn/*)", run, total);
  EXPECT_NE(r.out.find("\n" + line), std::string::npos) << r.out;
  EXPECT_EQ(j["certificate"]["line"].get<std::string>().rfind(line, 0), 0u);
  EXPECT_NE(r.out.find("\ntarget reference: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\ndevice roceconf reference NIC, fw_ver "), std::string::npos) << r.out;
  EXPECT_EQ(j["target"]["device"]["name"], "roceconf reference NIC");
  EXPECT_EQ(j["identity"]["device"]["source"], "built-in");
}

TEST(Certificate, RepeatableFilterRunsTheUnion) {
  TempDir dir;
  const auto r = run_roceconf({"run", "--quiet", "--filter", "psn/gap-naks-once", "--filter",
                               "cm/tid-echoed", "--filter", "mtu/*", "--json", dir.file("r.json")},
                              dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const Json j = report(dir.file("r.json"));
  std::set<std::string> ids;
  for (const auto& c : j["cases"]) {
    ids.insert(c["id"]);
    EXPECT_TRUE(c["id"] == "psn/gap-naks-once" || c["id"] == "cm/tid-echoed" || c["area"] == "mtu")
        << c["id"];
  }
  EXPECT_TRUE(ids.contains("psn/gap-naks-once") && ids.contains("cm/tid-echoed"));
  EXPECT_GT(ids.size(), 3u);
  EXPECT_EQ(j["filters"].size(), 3u);
  // A glob that matches nothing is a mistake even beside one that does.
  const auto bad = run_roceconf({"run", "--filter", "psn/*", "--filter", "nope/*"}, dir);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("'nope/*'"), std::string::npos) << bad.err;
}

TEST_F(QuirkRun, WaivedFailuresExitZeroWithTheWaiverInEveryReport) {
  const Json quirk = report(file("quirk.json"));
  const std::set<std::string> failed = ids_with(quirk, {"fail", "error", "inconclusive"});
  ASSERT_FALSE(failed.empty());
  std::string waivers = "# accepted for this test\n";
  for (const auto& id : failed)
    waivers += id + "  until=2999-12-31  the reference defect " + id + "\n";
  const std::set<std::string> passed = ids_with(quirk, {"pass"});
  ASSERT_GE(passed.size(), 2u);
  const std::string unused = *passed.begin(), expired = *std::next(passed.begin());
  waivers += unused + "  passes anyway\n";
  waivers += expired + "  until=2001-01-01  long expired\n";
  write(file("waivers.txt"), waivers);
  TempDir out;
  const auto r = run_roceconf({"run", "--quirk", "psn-gap-ack", "--seed", "3", "--waivers",
                               file("waivers.txt"), "--out", out.file("r")},
                              out);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = report(out.file("r/report.json"));
  const Json& cert = j["certificate"];
  EXPECT_EQ(cert["counts"]["waived"], failed.size());
  EXPECT_EQ(cert["counts"]["blocking"], 0);
  const std::string headline = cert["headline"];
  EXPECT_TRUE(headline == "CONFORMANT" || headline == "INSUFFICIENT COVERAGE") << headline;
  EXPECT_NE(cert["line"].get<std::string>().find(fmt::format(", {} waived", failed.size())),
            std::string::npos)
      << cert["line"];
  // Each waived case keeps its real verdict beside the reason.
  for (const auto& c : j["cases"]) {
    if (!failed.contains(c["id"])) continue;
    EXPECT_EQ(c["grade"], "waived");
    EXPECT_NE(c["verdict"], "pass");
    EXPECT_EQ(c["waiver"]["reason"], "the reference defect " + c["id"].get<std::string>());
  }
  // Every waiver is reported with what became of it.
  std::map<std::string, std::string> status;
  for (const auto& w : cert["waivers"]) status[w["id"]] = w["status"];
  EXPECT_EQ(status[unused], "unused");
  EXPECT_EQ(status[expired], "expired");
  for (const auto& id : failed) EXPECT_EQ(status[id], "applied") << id;

  const std::string some = *failed.begin();
  const std::string html = slurp(out.file("r/report.html"));
  EXPECT_NE(html.find("the reference defect " + some), std::string::npos);
  EXPECT_NE(html.find("How the verdict is decided"), std::string::npos);
  EXPECT_NE(html.find(fmt::format(", {} waived", failed.size())), std::string::npos);
  const std::string junit = slurp(out.file("r/junit.xml"));
  EXPECT_NE(junit.find("<skipped message=\"waived ("), std::string::npos);
  EXPECT_NE(junit.find("the reference defect " + some), std::string::npos);
  EXPECT_NE(junit.find("name=\"waiver.reason\""), std::string::npos);
  // The terminal lists the waivers, applied or not.
  EXPECT_NE(r.out.find("\nWaivers:\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(expired + " expired on 2001-01-01"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(unused + " unused: the case's verdict is pass"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  " + some + " applied to "), std::string::npos) << r.out;
}

TEST_F(QuirkRun, AnExpiredWaiverIsNotApplied) {
  const std::set<std::string> failed =
      ids_with(report(file("quirk.json")), {"fail", "error", "inconclusive"});
  ASSERT_FALSE(failed.empty());
  write(file("expired.txt"), *failed.begin() + " until=2020-01-01 too late\n");
  const auto r =
      run_roceconf({"run", "--quiet", "--quirk", "psn-gap-ack", "--filter", *failed.begin(),
                    "--waivers", file("expired.txt"), "--json", file("expired.json")},
                   *dir_);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json j = report(file("expired.json"));
  EXPECT_EQ(j["certificate"]["waivers"][0]["status"], "expired");
  EXPECT_EQ(j["cases"][0]["grade"], "blocking");
}

TEST(Certificate, WaiverFileMistakesAreOneLineNamingFileAndLine) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"psn/no-such-case  reason\n", ":1: unknown case id 'psn/no-such-case'"},
      {"# fine\npsn/gap-naks-once\n", ":2: the waiver of 'psn/gap-naks-once' has no reason"},
      {"psn/gap-naks-once until=2027-13-01 why\n", ":1: bad date '2027-13-01'"},
  };
  for (const auto& [text, message] : bad) {
    write(dir.file("w.txt"), text);
    const auto r = run_roceconf({"run", "--waivers", dir.file("w.txt")}, dir);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_NE(r.err.find("w.txt" + message), std::string::npos) << r.err;
  }
  const auto missing = run_roceconf({"run", "--waivers", dir.file("none.txt")}, dir);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err_lines().size(), 1u);
}

// The cases that passed in A and fail, error or are inconclusive in B.
std::set<std::string> regressions(const Json& a, const Json& b) {
  std::map<std::string, std::string> before;
  for (const auto& c : a["cases"]) before[c["id"]] = c["verdict"];
  std::set<std::string> out;
  for (const auto& c : b["cases"]) {
    const std::string v = c["verdict"];
    if (before[c["id"]] == "pass" && (v == "fail" || v == "error" || v == "inconclusive"))
      out.insert(c["id"]);
  }
  return out;
}

TEST_F(QuirkRun, CompareListsExactlyTheRegressions) {
  const std::set<std::string> expected =
      regressions(report(file("clean.json")), report(file("quirk.json")));
  ASSERT_FALSE(expected.empty());
  const auto r = run_roceconf(
      {"compare", file("clean.json"), file("quirk.json"), "--json", file("cmp.json")}, *dir_);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::set<std::string> listed;
  const std::vector<std::string> lines = r.out_lines();
  std::size_t first_other = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.starts_with("regressed ")) {
      EXPECT_LT(i, first_other) << "regressions come first";
      std::istringstream words(line.substr(10));
      std::string id;
      words >> id;
      listed.insert(id);
    } else if (first_other == lines.size()) {
      first_other = i;
    }
  }
  EXPECT_EQ(listed, expected);
  const Json cmp = report(file("cmp.json"));
  EXPECT_EQ(cmp["summary"]["regressed"], expected.size());
  std::set<std::string> from_json;
  for (const auto& c : cmp["cases"])
    if (c["change"] == "regressed") from_json.insert(c["id"]);
  EXPECT_EQ(from_json, expected);
  EXPECT_NE(r.out.find(fmt::format("compare: {} regressed, 0 fixed", expected.size())),
            std::string::npos)
      << r.out;

  // The other way round they are fixed, and nothing regressed.
  const auto back = run_roceconf({"compare", file("quirk.json"), file("clean.json")}, *dir_);
  EXPECT_EQ(back.exit_code, 0) << back.err;
  EXPECT_NE(back.out.find(fmt::format("compare: 0 regressed, {} fixed", expected.size())),
            std::string::npos)
      << back.out;
  const auto same = run_roceconf({"compare", file("clean.json"), file("clean.json")}, *dir_);
  EXPECT_EQ(same.exit_code, 0);
}

TEST_F(QuirkRun, CompareAgainstExpectedVerdicts) {
  // Expected verdicts as lab/rxe keeps them: the quirk run's, one failure allowed to pass.
  const Json quirk = report(file("quirk.json"));
  const std::set<std::string> failed = ids_with(quirk, {"fail", "error", "inconclusive"});
  ASSERT_FALSE(failed.empty());
  const std::string either = *failed.begin();
  std::string text = "# expected\n";
  for (const auto& c : quirk["cases"])
    text += c["id"].get<std::string>() + " " + c["verdict"].get<std::string>() +
            (c["id"] == either ? "|pass" : "") + "  # why\n";
  write(file("expected.txt"), text);
  auto r = run_roceconf({"compare", "--strict", file("expected.txt"), file("quirk.json")}, *dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  r = run_roceconf({"compare", "--strict", file("expected.txt"), file("clean.json")}, *dir_);
  EXPECT_EQ(r.exit_code, failed.size() > 1 ? 1 : 0) << r.out;
  EXPECT_NE(r.out.find(fmt::format("compare: 0 regressed, {} fixed", failed.size() - 1)),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find(either), std::string::npos) << r.out;  // pass was allowed
  // The JSON form.
  Json expected;
  for (const auto& c : quirk["cases"])
    expected["verdicts"][c["id"].get<std::string>()] = c["verdict"];
  write(file("expected.json"), expected.dump());
  r = run_roceconf({"compare", "--strict", file("expected.json"), file("quirk.json")}, *dir_);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(Certificate, CompareRejectsBadInputWithOneLine) {
  TempDir dir;
  write(dir.file("bad.json"), "{\"cases\": 3}");
  write(dir.file("bad.txt"), "psn/a passed\n");
  write(dir.file("ok.txt"), "psn/a pass\n");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"compare", dir.file("missing.json"), dir.file("ok.txt")},
           {"compare", dir.file("bad.json"), dir.file("ok.txt")},
           {"compare", dir.file("ok.txt"), dir.file("bad.txt")},
           {"compare", dir.file("ok.txt")}}) {
    const auto r = run_roceconf(args, dir);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err_lines().size(), 1u) << r.err;
  }
}

TEST_F(QuirkRun, RerunFailedRunsExactlyTheFailedCases) {
  const std::set<std::string> failed =
      ids_with(report(file("quirk.json")), {"fail", "error", "inconclusive"});
  const auto r = run_roceconf({"run", "--quiet", "--quirk", "psn-gap-ack", "--rerun-failed",
                               file("quirk.json"), "--json", file("rerun.json")},
                              *dir_);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json j = report(file("rerun.json"));
  std::set<std::string> ran;
  for (const auto& c : j["cases"]) ran.insert(c["id"]);
  EXPECT_EQ(ran, failed);
  EXPECT_EQ(j["certificate"]["headline"], "NOT CONFORMANT");
  EXPECT_EQ(j["rerun_of"], file("quirk.json"));
  // Without the defect they pass; the headline still says it is not a certificate.
  const auto fixed = run_roceconf(
      {"run", "--rerun-failed", file("quirk.json"), "--json", file("rerun-clean.json")}, *dir_);
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(report(file("rerun-clean.json"))["certificate"]["headline"], "INCOMPLETE");
  // Nothing to rerun, or not a report: usage errors.
  for (const auto& bad : {file("clean.json"), file("missing.json")}) {
    const auto e = run_roceconf({"run", "--rerun-failed", bad}, *dir_);
    EXPECT_EQ(e.exit_code, 2) << e.err;
    EXPECT_EQ(e.err_lines().size(), 1u) << e.err;
  }
}

TEST(Certificate, AnEarlierReportIsNeverOverwrittenSilently) {
  TempDir dir;
  const std::string out = dir.file("reports");
  const std::vector<std::string> args = {"run", "--filter", "psn/gap-naks-once", "--out", out};
  ASSERT_EQ(run_roceconf(args, dir).exit_code, 0);
  const std::string first = slurp(out + "/report.json");
  const auto second = run_roceconf(args, dir);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  ASSERT_TRUE(fs::exists(out + "/previous"));
  std::vector<fs::path> kept;
  for (const auto& e : fs::directory_iterator(out + "/previous")) kept.push_back(e.path());
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(slurp((kept[0] / "report.json").string()), first);
  for (const char* name : {"report.html", "junit.xml", "evidence.pcapng"})
    EXPECT_TRUE(fs::exists(kept[0] / name)) << name;
  EXPECT_NE(second.err.find("previous report was moved to " + kept[0].string()), std::string::npos)
      << second.err;
  // A third run keeps both earlier ones.
  ASSERT_EQ(run_roceconf(args, dir).exit_code, 0);
  EXPECT_EQ(std::distance(fs::directory_iterator(out + "/previous"), fs::directory_iterator()), 2);

  // Explicit paths follow the same rule; --force overwrites.
  const std::vector<std::string> json = {"run", "--filter", "psn/gap-naks-once", "--json",
                                         dir.file("one/r.json")};
  ASSERT_EQ(run_roceconf(json, dir).exit_code, 0);
  ASSERT_EQ(run_roceconf(json, dir).exit_code, 0);
  EXPECT_TRUE(fs::exists(dir.file("one/previous")));
  auto forced = json;
  forced.push_back("--force");
  fs::remove_all(dir.file("one/previous"));
  ASSERT_EQ(run_roceconf(forced, dir).exit_code, 0);
  EXPECT_FALSE(fs::exists(dir.file("one/previous")));
}

std::string sha256sum(const std::string& path) {
  std::FILE* p = popen(("sha256sum '" + path + "'").c_str(), "r");
  if (p == nullptr) return "";
  char buffer[256] = {};
  const std::size_t n = std::fread(buffer, 1, sizeof buffer - 1, p);
  pclose(p);
  return std::string(buffer, n).substr(0, 64);
}

TEST(Certificate, TheReportsCarryTheEvidenceHashAndTheIdentity) {
  TempDir dir;
  const auto r = run_roceconf(
      {"run", "--quiet", "--filter", "psn/*", "--seed", "9", "--out", dir.file("r")}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = report(dir.file("r/report.json"));
  const std::string digest = j["identity"]["evidence"]["sha256"];
  EXPECT_EQ(digest.size(), 64u);
  EXPECT_EQ(digest, sha256sum(dir.file("r/evidence.pcapng")));
  EXPECT_NE(slurp(dir.file("r/report.html")).find(digest), std::string::npos);
  const Json& id = j["identity"];
  EXPECT_EQ(id["seed"], 9);
  EXPECT_NE(id["command_line"].get<std::string>().find("run --quiet --filter 'psn/*' --seed 9"),
            std::string::npos)
      << id["command_line"];
  EXPECT_FALSE(id["tester_host"]["hostname"].get<std::string>().empty());
  EXPECT_FALSE(id["tester_host"]["kernel"].get<std::string>().empty());
  EXPECT_EQ(id["catalogue"]["version"], "2026.12");
  EXPECT_EQ(id["catalogue"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_FALSE(j["version"].get<std::string>().empty());
  // The catalogue digest is the same from run to run.
  const auto again = run_roceconf(
      {"run", "--quiet", "--filter", "cm/tid-echoed", "--json", dir.file("again.json")}, dir);
  ASSERT_EQ(again.exit_code, 0);
  EXPECT_EQ(report(dir.file("again.json"))["identity"]["catalogue"]["sha256"],
            id["catalogue"]["sha256"]);
}

}  // namespace
}  // namespace roceconf::test
