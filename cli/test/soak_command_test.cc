// `roceconf soak` as a user runs it: a clean bounded soak exits 0 with JSON Lines snapshots; a
// data-path defect ends in exit 1 and a reproducer that `roceconf run --cases` runs and FAILs
// with the defect and passes without it; a soak without a bound is one line and exit 2.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/test/run_binary.h"

namespace roceconf::test {
namespace {

TEST(SoakCommand, CleanSoakExitsZeroWithSnapshots) {
  TempDir dir;
  const auto r = run_roceconf({"soak", "--ops", "2000", "--quiet", "--snapshot-every", "0",
                               "--snapshots", dir.file("s.jsonl")},
                              dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("divergences: 0"), std::string::npos) << r.out;
  std::istringstream in(slurp(dir.file("s.jsonl")));
  int lines = 0;
  nlohmann::json last;
  for (std::string l; std::getline(in, l); ++lines) last = nlohmann::json::parse(l);
  EXPECT_GE(lines, 2);
  EXPECT_TRUE(last.value("final", false));
  EXPECT_GE(last.value("ops", 0), 2000);
}

TEST(SoakCommand, DefectEndsInAReproducerThatRunAccepts) {
  TempDir dir;
  const std::string repro = dir.file("repro.rcase");
  const auto r = run_roceconf({"soak", "--ops", "20000", "--quiet", "--quirk", "dup-reexecute",
                               "--snapshots", dir.file("s.jsonl"), "--reproducer", repro},
                              dir);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("alone it FAILs"), std::string::npos) << r.out;
  const auto failing = run_roceconf({"run", "--cases", repro, "--filter", "scripts/*", "--quirk",
                                     "dup-reexecute", "--quiet", "--out", dir.file("a")},
                                    dir);
  EXPECT_EQ(failing.exit_code, 1) << failing.out << failing.err;
  const auto passing = run_roceconf(
      {"run", "--cases", repro, "--filter", "scripts/*", "--quiet", "--out", dir.file("b")}, dir);
  EXPECT_EQ(passing.exit_code, 0) << passing.out << passing.err << slurp(repro);
}

TEST(SoakCommand, NoBoundIsOneLineAndExitTwo) {
  TempDir dir;
  const auto r = run_roceconf({"soak"}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("--duration"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace roceconf::test
