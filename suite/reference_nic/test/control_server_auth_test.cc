// The reference daemon's socket server behind the control gate (control/auth.h): an
// unauthenticated client's lines never reach the handler, a wrong MAC ends the connection.
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "control/auth.h"
#include "suite/reference_nic/control_server.h"
#include "suite/reference_nic/test/line_client.h"

namespace roceconf::target {
namespace {

namespace fs = std::filesystem;
using control::auth_mac;
using nlohmann::json;

constexpr char kSecret[] = "0123456789abcdef0123456789abcdef";

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "rcnf-auth-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

// The reference daemon's socket server with a secret: the handler sees no line before auth.
TEST(ControlAuth, SocketServerHandsNothingToItsHandlerBeforeAuth) {
  TempDir dir;
  const std::string path = dir.file("ctl.sock");
  std::atomic<int> handled{0};
  auto opened = ControlServer::open(
      path,
      [&](std::string_view line) {
        ++handled;
        return json{{"ok", true}, {"seen", std::string(line)}}.dump();
      },
      kSecret);
  ASSERT_TRUE(opened) << opened.error();
  std::atomic<bool> stop{false};
  std::thread loop([&] {
    std::vector<pollfd> fds;
    while (!stop) {
      fds.clear();
      (*opened)->add_poll_fds(fds);
      if (poll(fds.data(), fds.size(), 10) > 0) (*opened)->dispatch(fds);
    }
  });

  {
    test::LineClient wrong(path);
    ASSERT_TRUE(wrong.send_all("{\"op\":\"alloc_pd\"}\n{\"op\":\"hello\"}\n"));
    EXPECT_EQ(json::parse(*wrong.line())["errno"], "EACCES");
    EXPECT_TRUE(json::parse(*wrong.line())["auth"].contains("nonce"));
    ASSERT_TRUE(wrong.send_all("{\"op\":\"auth\",\"mac\":\"" + std::string(64, 'a') +
                               "\"}\n{\"op\":\"alloc_pd\"}\n"));
    EXPECT_EQ(json::parse(*wrong.line())["errno"], "EACCES");
    EXPECT_FALSE(wrong.line()) << "closed after the wrong MAC; the next line is never answered";
  }
  EXPECT_EQ(handled, 0);

  test::LineClient right(path);
  ASSERT_TRUE(right.send_all("{\"op\":\"hello\"}\n"));
  const std::string nonce = json::parse(*right.line())["auth"]["nonce"];
  ASSERT_TRUE(right.send_all(json{{"op", "auth"}, {"mac", auth_mac(kSecret, nonce)}}.dump() +
                             "\n{\"op\":\"alloc_pd\"}\n"));
  EXPECT_TRUE(json::parse(*right.line())["ok"]);
  EXPECT_EQ(json::parse(*right.line())["seen"], "{\"op\":\"alloc_pd\"}");
  EXPECT_EQ(handled, 1);
  stop = true;
  loop.join();
}

}  // namespace
}  // namespace roceconf::target
