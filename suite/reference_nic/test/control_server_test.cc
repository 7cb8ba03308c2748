// The control socket: JSON lines over a UNIX stream socket with several clients, garbage lines,
// over-long lines, half-closed and vanished clients, and the socket file's life. The server runs
// its poll loop on a thread of its own; clients block with timeouts, so every wait is bounded.
#include "suite/reference_nic/control_server.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "suite/reference_nic/control_api.h"
#include "suite/reference_nic/test/line_client.h"

namespace roceconf::target {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "rcnf-ctl-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

using Client = test::LineClient;

// Runs a ControlServer's loop on a thread until destroyed.
class Serving {
 public:
  explicit Serving(std::unique_ptr<ControlServer> server) : server_(std::move(server)) {
    thread_ = std::thread([this] {
      std::vector<pollfd> fds;
      while (!stop_) {
        fds.clear();
        server_->add_poll_fds(fds);
        if (poll(fds.data(), fds.size(), 10) > 0) server_->dispatch(fds);
        clients_ = server_->client_count();
      }
    });
  }
  ~Serving() {
    stop_ = true;
    thread_.join();
  }
  std::size_t clients() const { return clients_; }

 private:
  std::unique_ptr<ControlServer> server_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> clients_{0};
  std::thread thread_;
};

std::unique_ptr<ControlServer> open_echo(const std::string& path) {
  auto server =
      ControlServer::open(path, [](std::string_view line) { return "echo:" + std::string(line); });
  EXPECT_TRUE(server) << server.error();
  return server ? std::move(*server) : nullptr;
}

TEST(ControlServer, AnswersEachLineInOrderAcrossWrites) {
  TempDir dir;
  const std::string path = dir.file("ctl.sock");
  Serving serving(open_echo(path));
  Client c(path);
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send_all("one\ntwo\r\n\n   \nthr"));
  EXPECT_EQ(c.line(), "echo:one");
  EXPECT_EQ(c.line(), "echo:two");  // CR of CRLF dropped, blank lines skipped
  ASSERT_TRUE(c.send_all("ee\n"));
  EXPECT_EQ(c.line(), "echo:three");
}

TEST(ControlServer, ServesSeveralClientsIndependently) {
  TempDir dir;
  const std::string path = dir.file("ctl.sock");
  Serving serving(open_echo(path));
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 8; ++i) clients.push_back(std::make_unique<Client>(path));
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < clients.size(); ++i)
      ASSERT_TRUE(clients[i]->send_all(fmt::format("c{}r{}\n", i, round)));
  }
  for (std::size_t i = 0; i < clients.size(); ++i)
    for (int round = 0; round < 3; ++round)
      EXPECT_EQ(clients[i]->line(), fmt::format("echo:c{}r{}", i, round));
  // One client vanishing mid-line leaves the others served.
  ASSERT_TRUE(clients[3]->send_all("half a requ"));
  clients[3].reset();
  EXPECT_TRUE(clients[4]->send_all("still\n"));
  EXPECT_EQ(clients[4]->line(), "echo:still");
}

TEST(ControlServer, OverLongLineGetsAnErrorAndTheConnectionCloses) {
  TempDir dir;
  const std::string path = dir.file("ctl.sock");
  Serving serving(open_echo(path));
  Client other(path);
  Client c(path);
  // The server stops reading at the limit, so the rest of the write may fail: that is fine.
  (void)c.send_all(std::string(ControlServer::kMaxLine + 4096, 'x'));
  const auto error = c.line();
  ASSERT_TRUE(error);
  const auto j = nlohmann::json::parse(*error);
  EXPECT_EQ(j["ok"], false);
  EXPECT_NE(j["error"].get<std::string>().find("longer than 1048576 bytes"), std::string::npos);
  EXPECT_TRUE(c.closed_by_server());
  // A line just within the limit is fine, for another client.
  ASSERT_TRUE(other.send_all(std::string(ControlServer::kMaxLine, 'y') + "\n"));
  const auto echoed = other.line();
  ASSERT_TRUE(echoed);
  EXPECT_EQ(echoed->size(), ControlServer::kMaxLine + 5);
}

TEST(ControlServer, LastLineWithoutNewlineIsAnsweredAtHalfClose) {
  TempDir dir;
  const std::string path = dir.file("ctl.sock");
  Serving serving(open_echo(path));
  Client c(path);
  ASSERT_TRUE(c.send_all("a\nlast"));
  c.shutdown_write();
  EXPECT_EQ(c.line(), "echo:a");
  EXPECT_EQ(c.line(), "echo:last");
  EXPECT_TRUE(c.closed_by_server());
}

TEST(ControlServer, TooManyClientsAreTurnedAway) {
  TempDir dir;
  const std::string path = dir.file("ctl.sock");
  Serving serving(open_echo(path));
  std::vector<std::unique_ptr<Client>> clients;
  for (std::size_t i = 0; i < ControlServer::kMaxClients; ++i) {
    clients.push_back(std::make_unique<Client>(path));
    ASSERT_TRUE(clients.back()->send_all("hi\n"));
    ASSERT_EQ(clients.back()->line(), "echo:hi");  // accepted before the next one comes
  }
  Client extra(path);
  const auto error = extra.line();
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("too many control clients"), std::string::npos);
  EXPECT_TRUE(extra.closed_by_server());
}

TEST(ControlServer, GarbageGetsErrorLinesFromTheApi) {
  TempDir dir;
  const std::string path = dir.file("ctl.sock");
  Nic nic(NicConfig{}, [](std::span<const std::uint8_t>) {});
  ControlApi api(nic);
  auto server =
      ControlServer::open(path, [&](std::string_view line) { return api.handle_line(line); });
  ASSERT_TRUE(server) << server.error();
  Serving serving(std::move(*server));
  Client c(path);
  ASSERT_TRUE(c.send_all("garbage\n{\"op\":\n\x01\x02\xff\n{\"id\":3,\"op\":\"alloc_pd\"}\n"));
  for (int i = 0; i < 3; ++i) {
    const auto l = c.line();
    ASSERT_TRUE(l);
    const auto j = nlohmann::json::parse(*l);
    EXPECT_EQ(j["ok"], false) << *l;
    EXPECT_NE(j["error"].get<std::string>().find("malformed JSON"), std::string::npos) << *l;
  }
  const auto l = c.line();
  ASSERT_TRUE(l);
  EXPECT_EQ(nlohmann::json::parse(*l), nlohmann::json::parse(R"({"id":3,"ok":true,"pd":1})"));
}

TEST(ControlServer, SocketFileLife) {
  TempDir dir;
  const std::string path = dir.file("ctl.sock");
  {
    auto server = open_echo(path);
    ASSERT_TRUE(server);
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    // A second server on a live socket is refused.
    const auto second = ControlServer::open(path, [](std::string_view) { return std::string(); });
    ASSERT_FALSE(second);
    EXPECT_NE(second.error().find("in use by another roceconf target"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(path)) << "the socket file is removed on close";

  // A stale socket file (its server died without cleaning up) is replaced.
  {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    close(fd);
  }
  EXPECT_TRUE(open_echo(path));

  // A regular file is never removed, and a path too long for sun_path is refused.
  const std::string file = dir.file("not-a-socket");
  std::ofstream(file) << "keep me";
  const auto on_file = ControlServer::open(file, [](std::string_view) { return std::string(); });
  ASSERT_FALSE(on_file);
  EXPECT_NE(on_file.error().find("is not a socket"), std::string::npos);
  EXPECT_TRUE(fs::exists(file));
  const auto too_long =
      ControlServer::open(dir.file(std::string(120, 'x')), [](std::string_view) { return ""; });
  ASSERT_FALSE(too_long);
  EXPECT_NE(too_long.error().find("longer than"), std::string::npos);
}

TEST(ControlServer, DefaultPathFollowsXdgRuntimeDir) {
  const char* old = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = old ? old : "";
  setenv("XDG_RUNTIME_DIR", "/run/user/1234", 1);
  EXPECT_EQ(default_control_path(), "/run/user/1234/roceconf-target.sock");
  unsetenv("XDG_RUNTIME_DIR");
  EXPECT_EQ(default_control_path(), "/run/roceconf-target.sock");
  if (old) setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
}

}  // namespace
}  // namespace roceconf::target
