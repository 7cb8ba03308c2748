// The control socket on loopback: answers in order, survives garbage, refuses an endless line
// and closes that connection, and keeps serving other controllers.
#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/control_server.h"

namespace roceconf::agent {
namespace {

using nlohmann::json;

class ServerLoop {
 public:
  ServerLoop() {
    auto s = ControlServer::listen("127.0.0.1:0", {.device = "roceconf-no-such-device", .port = 1});
    EXPECT_FALSE(s) << "port 0 is refused by the HOST:PORT form";
    for (std::uint16_t port = 47700; port < 47800 && !server_; ++port) {
      auto t = ControlServer::listen(fmt::format("127.0.0.1:{}", port),
                                     {.device = "roceconf-no-such-device", .port = 1});
      if (t) {
        server_ = std::move(*t);
        port_ = port;
      }
    }
    thread_ = std::thread([this] {
      while (!stop_) {
        std::vector<pollfd> fds{{server_->listen_fd(), POLLIN, 0}};
        server_->for_each_client([&](int fd) { fds.push_back({fd, POLLIN, 0}); });
        if (poll(fds.data(), fds.size(), 20) <= 0) continue;
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
  char c;
  EXPECT_EQ(recv(fd, &c, 1, 0), 0) << "the connection is closed";
  send_text(other, "{\"id\":5,\"op\":\"quirks\"}\n");
  const auto answer = read_lines(other, 1);
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_TRUE(json::parse(answer[0])["ok"].get<bool>());
  close(fd);
  close(other);
}

}  // namespace
}  // namespace roceconf::agent
