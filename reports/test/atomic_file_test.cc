#include "reports/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "reports/test/test_util.h"

namespace roceconf::report {
namespace {

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AtomicFile, WritesAndReplacesLeavingNoTemporaryFile) {
  test::TempDir dir;
  const std::string path = dir.file("report.json");
  ASSERT_TRUE(write_file_atomic(path, "first version, rather long\n"));
  EXPECT_EQ(test::read_file(path), "first version, rather long\n");
  ASSERT_TRUE(write_file_atomic(path, "second\n"));
  EXPECT_EQ(test::read_file(path), "second\n");
  ASSERT_TRUE(write_file_atomic(path, ""));
  EXPECT_EQ(test::read_file(path), "");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"report.json"});
}

TEST(AtomicFile, ModeFollowsTheUmask) {
  test::TempDir dir;
  const std::string path = dir.file("r.html");
  const mode_t old = umask(022);
  const auto written = write_file_atomic(path, "x");
  umask(old);
  ASSERT_TRUE(written);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(AtomicFile, RelativePathInTheCurrentDirectory) {
  test::TempDir dir;
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const auto written = write_file_atomic("plain.txt", "here");
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(written) << written.error();
  EXPECT_EQ(test::read_file(dir.file("plain.txt")), "here");
}

TEST(AtomicFile, ErrorsNameThePathAndWhatToDo) {
  test::TempDir dir;
  const std::string missing = dir.file("no/such/dir/report.xml");
  const auto written = write_file_atomic(missing, "x");
  ASSERT_FALSE(written);
  EXPECT_NE(written.error().find(missing), std::string::npos) << written.error();
  EXPECT_NE(written.error().find("create the directory"), std::string::npos) << written.error();
  EXPECT_EQ(written.error().find('\n'), std::string::npos);

  // Renaming over a directory fails; the temporary file is cleaned up.
  std::filesystem::create_directory(dir.file("taken"));
  std::filesystem::create_directory(dir.file("taken/inner"));
  const auto over_dir = write_file_atomic(dir.file("taken"), "x");
  ASSERT_FALSE(over_dir);
  EXPECT_NE(over_dir.error().find(dir.file("taken")), std::string::npos);
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"taken"});
  EXPECT_FALSE(write_file_atomic("", "x"));
}

}  // namespace
}  // namespace roceconf::report
