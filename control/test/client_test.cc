// The typed client over a transport: a refusal keeps the target's errno, text and bad_wr; a lost
// request and an unreadable response are errors of their own kinds; the handshake passes a real
// control gate (auth.h) with the secret, and says why without it.
#include "control/client.h"

#include <gtest/gtest.h>

#include <vector>

#include "control/auth.h"

namespace roceconf::control {
namespace {

using nlohmann::json;

// A transport that records the requests and answers from a list.
struct Scripted {
  std::vector<json> sent;
  std::vector<std::expected<json, std::string>> answers;
  Transport transport() {
    return [this](const json& r) -> std::expected<json, std::string> {
      sent.push_back(r);
      auto next = answers.front();
      answers.erase(answers.begin());
      return next;
    };
  }
};

TEST(Client, SendsTheCodecsRequestAndReadsItsReply) {
  Scripted s;
  s.answers = {json{{"ok", true}, {"cq", 3}, {"depth", 8}, {"requested", 5}}};
  Client c(s.transport());
  const auto cq = c.create_cq(5);
  ASSERT_TRUE(cq) << cq.error().message;
  EXPECT_EQ(cq->cq, 3u);
  EXPECT_EQ(cq->depth, 8u);
  EXPECT_EQ(cq->requested, 5u);
  EXPECT_EQ(s.sent.at(0), (json{{"op", "create_cq"}, {"depth", 5}}));
}

TEST(Client, ARefusalKeepsErrnoTextAndBadWr) {
  Scripted s;
  s.answers = {json{{"ok", false},
                    {"errno", "ENOMEM"},
                    {"error", "ENOMEM: post_send: QP 17: WR 1 not posted"},
                    {"bad_wr", 1}}};
  Client c(s.transport());
  const auto posted = c.post_send(17, {SendWr{}, SendWr{}});
  ASSERT_FALSE(posted);
  EXPECT_EQ(posted.error().kind, Error::Kind::kRefused);
  EXPECT_EQ(posted.error().errno_name, "ENOMEM");
  EXPECT_EQ(posted.error().message, "ENOMEM: post_send: QP 17: WR 1 not posted");
  EXPECT_EQ(posted.error().bad_wr, 1u);
}

TEST(Client, TransportAndMalformedResponsesAreTheirOwnKinds) {
  Scripted s;
  s.answers = {std::unexpected(std::string("control socket x: closed by the target")),
               json{{"ok", true}, {"wc", "none"}}, json::array()};
  Client c(s.transport());
  const auto lost = c.alloc_pd();
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().kind, Error::Kind::kTransport);
  EXPECT_EQ(lost.error().message, "control socket x: closed by the target");
  const auto odd = c.poll_cq(1);
  ASSERT_FALSE(odd);
  EXPECT_EQ(odd.error().kind, Error::Kind::kMalformed);
  EXPECT_NE(odd.error().message.find("poll_cq.wc"), std::string::npos) << odd.error().message;
  const auto not_object = c.quirks();
  ASSERT_FALSE(not_object);
  EXPECT_EQ(not_object.error().kind, Error::Kind::kMalformed);
}

// A server behind the real gate: lines the gate does not answer get a full hello.
Transport gated(ControlGate& gate, int& passed) {
  return [&gate, &passed](const json& r) -> std::expected<json, std::string> {
    if (auto answer = gate.screen(r.dump())) return json::parse(answer->line);
    ++passed;
    return json{{"ok", true}, {"target", "test"}, {"protocol", 1}, {"ops", {"hello"}}};
  };
}

TEST(Client, HandshakeAuthenticatesThroughTheGate) {
  const std::string secret = "0123456789abcdef0123456789abcdef";
  ControlGate gate(secret, "test server");
  int passed = 0;
  Client c(gated(gate, passed));
  const auto hello = c.handshake(secret);
  ASSERT_TRUE(hello) << hello.error().message;
  EXPECT_TRUE(gate.authenticated());
  EXPECT_EQ(hello->ops, std::vector<std::string>{"hello"});
  EXPECT_FALSE(hello->auth);
  EXPECT_EQ(passed, 1) << "only the hello after auth reaches the API";

  ControlGate other(secret, "test server");
  Client without(gated(other, passed));
  const auto refused = without.handshake(std::nullopt);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("requires a secret"), std::string::npos);
  EXPECT_FALSE(other.authenticated());

  ControlGate third(secret, "test server");
  Client wrong(gated(third, passed));
  const auto bad = wrong.handshake(std::string("another secret, also long enough"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().errno_name, "EACCES");
  EXPECT_EQ(passed, 1);
}

TEST(Client, HandshakeWithoutAGateIsOneHello) {
  ControlGate open_gate("", "test server");
  int passed = 0;
  Client c(gated(open_gate, passed));
  const auto hello = c.handshake(std::nullopt);
  ASSERT_TRUE(hello) << hello.error().message;
  EXPECT_EQ(hello->target, "test");
  EXPECT_EQ(passed, 1);
}

}  // namespace
}  // namespace roceconf::control
