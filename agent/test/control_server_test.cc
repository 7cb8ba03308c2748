// The control socket on loopback: answers in order, survives garbage, refuses an endless line
// and closes that connection, and keeps serving other controllers. With a secret: a controller
// that does not authenticate, or proves the wrong secret, never gets a session (the only thing
// that opens the device and calls verbs); the right secret does. A wildcard address without a
// secret is refused.
#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/control_server.h"
#include "control/auth.h"

namespace roceconf::agent {
namespace {

using nlohmann::json;

constexpr char kSecret[] = "a secret of more than 16 bytes";

class ServerLoop {
 public:
  explicit ServerLoop(std::string secret = {},
                      std::chrono::milliseconds auth_timeout = ControlServer::kAuthTimeout) {
    auto s = ControlServer::listen("127.0.0.1:0", {.device = "roceconf-no-such-device", .port = 1});
    EXPECT_FALSE(s) << "port 0 is refused by the HOST:PORT form";
    for (std::uint16_t port = 47700; port < 47800 && !server_; ++port) {
      auto t = ControlServer::listen(fmt::format("127.0.0.1:{}", port),
                                     {.device = "roceconf-no-such-device", .port = 1}, secret);
      if (t) {
        server_ = std::move(*t);
        port_ = port;
      }
    }
    if (server_) server_->set_auth_timeout(auth_timeout);
    thread_ = std::thread([this] {
      while (!stop_) {
        std::vector<pollfd> fds{{server_->listen_fd(), POLLIN, 0}};
        server_->for_each_client([&](int fd) { fds.push_back({fd, POLLIN, 0}); });
        const int n = poll(fds.data(), fds.size(), 20);
        server_->expire_unauthenticated(std::chrono::steady_clock::now());
        if (n <= 0) continue;
        if (fds[0].revents) server_->on_accept();
        for (std::size_t i = 1; i < fds.size(); ++i)
          if (fds[i].revents) server_->on_readable(fds[i].fd);
      }
    });
  }
  ~ServerLoop() {
    stop_ = true;
    thread_.join();
  }
  int connect_client() const {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port_);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
  }
  bool ready() const { return server_ != nullptr; }
  std::uint64_t sessions_opened() const { return server_->sessions_opened(); }

 private:
  std::unique_ptr<ControlServer> server_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

void send_text(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// Reads lines until `count` arrived or the peer closed.
std::vector<std::string> read_lines(int fd, std::size_t count) {
  std::vector<std::string> lines;
  std::string buffer;
  char chunk[4096];
  while (lines.size() < count) {
    const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(n));
    for (std::size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
      lines.push_back(buffer.substr(0, nl));
      buffer.erase(0, nl + 1);
    }
  }
  return lines;
}

// A socket closed with our unread bytes still queued at the server reports ECONNRESET instead of
// end-of-file: both mean the server closed the connection.
bool closed_by_peer(int fd) {
  char c;
  const ssize_t n = recv(fd, &c, 1, 0);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

TEST(AgentControlServer, AnswersEveryLineInOrder) {
  ServerLoop loop;
  ASSERT_TRUE(loop.ready());
  const int fd = loop.connect_client();
  send_text(fd, "{\"id\":1,\"op\":\"hello\"}\n\nnot json\n{\"id\":2,\"op\":\"nope\"}\r\n");
  const auto lines = read_lines(fd, 3);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(json::parse(lines[0])["id"], 1);
  EXPECT_EQ(json::parse(lines[0])["errno"], "ENODEV");
  EXPECT_TRUE(json::parse(lines[1])["id"].is_null());
  EXPECT_EQ(json::parse(lines[2])["id"], 2);
  close(fd);
}

TEST(AgentControlServer, EndlessLineIsRefusedAndClosed) {
  ServerLoop loop;
  ASSERT_TRUE(loop.ready());
  const int fd = loop.connect_client();
  const int other = loop.connect_client();
  send_text(fd, std::string(ControlServer::kMaxLine + 100, 'x'));
  const auto lines = read_lines(fd, 2);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(json::parse(lines[0])["errno"], "E2BIG");
  EXPECT_TRUE(closed_by_peer(fd)) << "the connection is closed";
  send_text(other, "{\"id\":5,\"op\":\"quirks\"}\n");
  const auto answer = read_lines(other, 1);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_TRUE(json::parse(answer[0])["ok"].get<bool>());
  close(fd);
  close(other);
}

// A complete line past the limit is refused like an endless one (control/lines.h, the
// reference daemon's rule too).
TEST(AgentControlServer, CompleteLineLongerThanTheLimitIsRefused) {
  ServerLoop loop;
  ASSERT_TRUE(loop.ready());
  const int fd = loop.connect_client();
  send_text(fd, std::string(ControlServer::kMaxLine + 1, ' ') + "\n{\"id\":1,\"op\":\"quirks\"}\n");
  const auto lines = read_lines(fd, 2);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(json::parse(lines[0])["errno"], "E2BIG");
  EXPECT_TRUE(closed_by_peer(fd)) << "the connection is closed";
  close(fd);
}

// Sends hello and returns the nonce its answer carries ("" when none came).
std::string hello_nonce(int fd) {
  send_text(fd, "{\"id\":1,\"op\":\"hello\"}\n");
  const auto hello = read_lines(fd, 1);
  if (hello.size() != 1) return "";
  return json::parse(hello[0])["auth"].value("nonce", std::string());
}

TEST(AgentControlServer, WithoutTheSecretNothingReachesTheDevice) {
  ServerLoop loop(kSecret);
  ASSERT_TRUE(loop.ready());
  const int fd = loop.connect_client();
  send_text(fd, "{\"id\":1,\"op\":\"alloc_pd\"}\n{\"id\":2,\"op\":\"hello\"}\n");
  const auto lines = read_lines(fd, 2);
  ASSERT_EQ(lines.size(), 2u);
  const json refused = json::parse(lines[0]);
  EXPECT_FALSE(refused["ok"]);
  EXPECT_EQ(refused["errno"], "EACCES");
  EXPECT_NE(refused["error"].get<std::string>().find("authenticate first"), std::string::npos);
  const json hello = json::parse(lines[1]);
  EXPECT_TRUE(hello["ok"]);
  EXPECT_EQ(hello["auth"]["method"], "hmac-sha256");
  EXPECT_FALSE(hello.contains("device")) << "the device is not opened to answer it";
  EXPECT_EQ(loop.sessions_opened(), 0u);
  close(fd);
}

TEST(AgentControlServer, WrongSecretIsRefusedAndClosedBeforeAnySession) {
  ServerLoop loop(kSecret);
  ASSERT_TRUE(loop.ready());
  const int fd = loop.connect_client();
  const std::string nonce = hello_nonce(fd);
  ASSERT_FALSE(nonce.empty());
  send_text(fd, json{{"id", 2},
                     {"op", "auth"},
                     {"mac", control::auth_mac("another secret, also long", nonce)}}
                        .dump() +
                    "\n");
  const auto answer = read_lines(fd, 1);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_EQ(json::parse(answer[0])["errno"], "EACCES");
  EXPECT_NE(json::parse(answer[0])["error"].get<std::string>().find("wrong MAC"),
            std::string::npos);
  EXPECT_TRUE(closed_by_peer(fd)) << "the connection is closed after a wrong MAC";
  EXPECT_EQ(loop.sessions_opened(), 0u) << "no session: the device was never opened";
  close(fd);
}

TEST(AgentControlServer, RightSecretOpensTheSession) {
  ServerLoop loop(kSecret);
  ASSERT_TRUE(loop.ready());
  const int fd = loop.connect_client();
  const std::string nonce = hello_nonce(fd);
  ASSERT_FALSE(nonce.empty());
  send_text(fd, json{{"id", 2}, {"op", "auth"}, {"mac", control::auth_mac(kSecret, nonce)}}.dump() +
                    "\n{\"id\":3,\"op\":\"hello\"}\n");
  const auto lines = read_lines(fd, 2);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(json::parse(lines[0])["ok"]) << lines[0];
  // This host has no RDMA device: the request reached the session, which says so.
  EXPECT_EQ(json::parse(lines[1])["id"], 3);
  EXPECT_EQ(json::parse(lines[1])["errno"], "ENODEV") << lines[1];
  EXPECT_EQ(loop.sessions_opened(), 1u);
  close(fd);
}

TEST(AgentControlServer, AnUnauthenticatedConnectionIsClosedAfterTheAuthTimeout) {
  ServerLoop loop(kSecret, std::chrono::milliseconds(200));
  ASSERT_TRUE(loop.ready());
  const int fd = loop.connect_client();
  send_text(fd, "{\"id\":1,\"op\":\"hello\"}\n");  // a hello alone does not authenticate
  const auto lines = read_lines(fd, 2);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(json::parse(lines[0])["ok"]);
  EXPECT_EQ(json::parse(lines[1])["errno"], "ETIMEDOUT") << lines[1];
  EXPECT_TRUE(closed_by_peer(fd)) << "the slot is given back";
  EXPECT_EQ(loop.sessions_opened(), 0u);
  close(fd);
}

TEST(AgentControlServer, WithoutASecretAWildcardAddressIsRefused) {
  for (const char* address : {"0.0.0.0:47799", "[::]:47799", "0:47799"}) {
    const auto s = ControlServer::listen(address, {.device = "x", .port = 1});
    ASSERT_FALSE(s) << address;
    EXPECT_NE(s.error().find("without a secret: give --secret-file"), std::string::npos)
        << s.error();
  }
  const auto empty_host = ControlServer::listen(":47799", {.device = "x", .port = 1});
  ASSERT_FALSE(empty_host);
  EXPECT_NE(empty_host.error().find("write HOST:PORT"), std::string::npos);
}

}  // namespace
}  // namespace roceconf::agent
