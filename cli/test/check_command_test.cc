// `roceconf run --check`: scripts checked at load, the first error as file:line, exit 2, and
// nothing sent (no target opened, no report written).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli/test/run_binary.h"

namespace roceconf::test {
namespace {

constexpr const char* kHead =
    "// A case under test.\nclause: 9.7.5.1\nrule: r\nchecked: unchecked\nlevel: MUST\n"
    "needs: responder\nconnect c\n";  // the steps below start on line 8

std::string write_script(const TempDir& dir, const std::string& name, const std::string& steps) {
  const std::string path = dir.file(name);
  std::ofstream(path) << kHead << steps;
  return path;
}

// The script's one error through the CLI: exit 2, one line on stderr naming file:line.
void expect_error(const std::string& steps, int line, const std::string& says) {
  TempDir dir;
  const std::string path = write_script(dir, "bad.rcase", steps);
  const auto r = run_roceconf({"run", "--check", path}, dir);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  const std::string want = path + ":" + std::to_string(line) + ": ";
  EXPECT_TRUE(r.err.starts_with(want)) << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(CheckCommand, UnknownVerb) {
  expect_error("send c SEND_ONLY psn=0 ackreq=1\nexpcet c ACK psn=0\n", 9, "unknown step 'expcet'");
}

TEST(CheckCommand, UnknownField) {
  expect_error("send c SEND_ONLY psn=0 ackreqq=1\n", 8, "ackreqq");
  expect_error("open d recv=4 recv_size=64\n", 8, "unknown field 'recv_size'");
}

TEST(CheckCommand, BadValue) {
  expect_error("send c SEND_ONLY psn=0\n+0...1rtt expect c ACK psn=0\nconnect d pmtu=1000\n", 10,
               "pmtu: 1000 is not 256, 512, 1024, 2048 or 4096");
}

TEST(CheckCommand, UnknownOpcode) {
  expect_error("send c SEND_ONCE psn=0\n", 8, "unknown opcode 'SEND_ONCE'");
}

TEST(CheckCommand, ExpectOnAConnectionNeverMade) {
  expect_error("send c SEND_ONLY psn=0 ackreq=1\nexpect d ACK psn=0\n", 9,
               "'expect' names connection 'd', which no earlier step made");
  expect_error("send e SEND_ONLY psn=0\n", 8, "'send' names connection 'e'");
}

TEST(CheckCommand, TheCatalogueChecksClean) {
  TempDir dir;
  const auto r = run_roceconf({"run", "--check"}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("OK: ")) << r.out;
  EXPECT_TRUE(r.out.ends_with(" scripts\n")) << r.out;
  EXPECT_GE(std::stoi(r.out.substr(4)), 60) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(CheckCommand, GoodFilesPass) {
  TempDir dir;
  const std::string a = write_script(dir, "a.rcase", "send c SEND_ONLY psn=0 ackreq=1\n");
  const std::string b = write_script(dir, "b.rcase", "+0...4rtt expect nothing from c\n");
  const auto r = run_roceconf({"run", "--check", a, b}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "OK: 2 scripts\n");
}

// Nothing is sent: --check opens no target (a raw target on an interface that does not exist
// would be a set-up error) and writes no report.
TEST(CheckCommand, OpensNoTargetAndWritesNothing) {
  TempDir dir;
  const std::string good = write_script(dir, "good.rcase", "send c SEND_ONLY psn=0\n");
  const std::string bad = write_script(dir, "bad.rcase", "send c SEND_ONLY psn=0\nfrob c\n");
  const std::vector<std::string> target = {"--target",   "raw",   "--interface",
                                           "rcnf-none0", "--out", dir.file("out")};
  auto args = std::vector<std::string>{"run", "--check", good};
  args.insert(args.end(), target.begin(), target.end());
  auto r = run_roceconf(args, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "OK: 1 scripts\n");
  args = {"run", "--check", bad};
  args.insert(args.end(), target.begin(), target.end());
  r = run_roceconf(args, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.err.starts_with(bad + ":9: unknown step 'frob'")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out")));
}

TEST(CheckCommand, AFileThatCannotBeReadIsAUsageError) {
  TempDir dir;
  const auto r = run_roceconf({"run", "--check", dir.file("missing.rcase")}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.err.starts_with("roceconf: error: --check: cannot read ")) << r.err;
}

}  // namespace
}  // namespace roceconf::test
