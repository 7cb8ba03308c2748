// Control-connection authentication: the MAC is HMAC-SHA256 (RFC 4231 vector), the gate lets
// nothing but hello and auth through before a good MAC, a wrong MAC ends the connection, a
// gate without a secret is open; secrets are read from a private file or the environment.
// suite/reference_nic/test/control_server_auth_test.cc checks the daemon's socket server behind the gate.
#include "control/auth.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

namespace roceconf::control {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kSecret[] = "0123456789abcdef0123456789abcdef";

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "rcnf-auth-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text, mode_t mode) const {
    const std::string path = (fs::path(path_) / name).string();
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
    return path;
  }
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

json screened(ControlGate& gate, const std::string& line, bool* close = nullptr) {
  const auto answer = gate.screen(line);
  EXPECT_TRUE(answer) << "the gate answers " << line;
  if (!answer) return {};
  if (close) *close = answer->close;
  return json::parse(answer->line);
}

TEST(ControlAuth, MacIsHmacSha256OverTheNonceText) {
  // RFC 4231, test case 2.
  EXPECT_EQ(auth_mac("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  const std::string nonce = make_nonce();
  EXPECT_EQ(nonce.size(), 2 * kNonceBytes);
  EXPECT_NE(nonce, make_nonce()) << "a fresh nonce each time";
  std::string mac = auth_mac(kSecret, nonce);
  EXPECT_TRUE(auth_mac_matches(kSecret, nonce, mac));
  for (char& c : mac) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_TRUE(auth_mac_matches(kSecret, nonce, mac)) << "hex in either case";
  EXPECT_FALSE(auth_mac_matches("another secret of 32 bytes......", nonce, mac));
  EXPECT_FALSE(auth_mac_matches(kSecret, make_nonce(), mac)) << "bound to its nonce";
  EXPECT_FALSE(auth_mac_matches(kSecret, nonce, mac.substr(0, 63)));
  EXPECT_FALSE(auth_mac_matches(kSecret, nonce, ""));
}

TEST(ControlAuth, GateRefusesEverythingButHelloAndAuthUntilAuthenticated) {
  ControlGate gate(kSecret, "test server");
  EXPECT_TRUE(gate.requires_secret());
  EXPECT_FALSE(gate.authenticated());
  const json hello = screened(gate, R"({"id":1,"op":"hello"})");
  EXPECT_EQ(hello["id"], 1);
  EXPECT_TRUE(hello["ok"]);
  EXPECT_EQ(hello["protocol"], 1);
  EXPECT_EQ(hello["auth"]["method"], "hmac-sha256");
  const std::string nonce = hello["auth"]["nonce"];
  EXPECT_EQ(nonce.size(), 64u);
  EXPECT_FALSE(hello.contains("device")) << "nothing about the device before auth";

  bool close = true;
  const json refused = screened(gate, R"({"id":"x","op":"alloc_pd"})", &close);
  EXPECT_EQ(refused["id"], "x");
  EXPECT_FALSE(refused["ok"]);
  EXPECT_EQ(refused["errno"], "EACCES");
  EXPECT_NE(refused["error"].get<std::string>().find("alloc_pd: authenticate first"),
            std::string::npos);
  EXPECT_FALSE(close) << "an op before auth is refused, the connection stays";
  EXPECT_EQ(screened(gate, "not json", &close)["errno"], "EINVAL");
  EXPECT_FALSE(close);
  EXPECT_EQ(screened(gate, R"({"id":2,"op":"read_mr","handle":1,"length":8})")["errno"], "EACCES");

  const json good = screened(
      gate, json{{"id", 3}, {"op", "auth"}, {"mac", auth_mac(kSecret, nonce)}}.dump(), &close);
  EXPECT_TRUE(good["ok"]) << good.dump();
  EXPECT_FALSE(close);
  EXPECT_TRUE(gate.authenticated());
  EXPECT_FALSE(gate.screen(R"({"id":4,"op":"alloc_pd"})")) << "now the API's";
  EXPECT_FALSE(gate.screen(R"({"id":5,"op":"hello"})")) << "the API's full hello";
  EXPECT_TRUE(screened(gate, R"({"id":6,"op":"auth","mac":"00"})")["ok"])
      << "once through, auth is a no-op";
}

TEST(ControlAuth, WrongOrMalformedMacClosesTheConnection) {
  for (const std::string& auth :
       {std::string(R"({"op":"auth","mac":")") + std::string(64, '0') + "\"}",
        std::string(R"({"op":"auth"})"), std::string(R"({"op":"auth","mac":7})"),
        std::string(R"({"op":"auth","mac":"00","extra":1})")}) {
    ControlGate gate(kSecret, "test server");
    screened(gate, R"({"op":"hello"})");
    bool close = false;
    const json r = screened(gate, auth, &close);
    EXPECT_FALSE(r["ok"]) << auth;
    EXPECT_EQ(r["errno"], "EACCES") << auth;
    EXPECT_TRUE(close) << auth;
    EXPECT_FALSE(gate.authenticated());
  }
  // The MAC of another connection's nonce does not open this one.
  ControlGate first(kSecret, "s"), second(kSecret, "s");
  const std::string nonce = screened(first, R"({"op":"hello"})")["auth"]["nonce"];
  bool close = false;
  EXPECT_FALSE(screened(second, json{{"op", "auth"}, {"mac", auth_mac(kSecret, nonce)}}.dump(),
                        &close)["ok"]);
  EXPECT_TRUE(close);
}

TEST(ControlAuth, GateWithoutSecretIsOpenAndAnswersAuth) {
  ControlGate gate("", "test server");
  EXPECT_FALSE(gate.requires_secret());
  EXPECT_TRUE(gate.authenticated());
  EXPECT_FALSE(gate.screen(R"({"op":"hello"})"));
  EXPECT_FALSE(gate.screen("echo me"));
  EXPECT_TRUE(screened(gate, R"({"id":1,"op":"auth","mac":"ab"})")["ok"]);
}

TEST(ControlAuth, SecretFromAPrivateFileOrTheEnvironment) {
  TempDir dir;
  const auto good = read_secret_file(dir.write("good", std::string(kSecret) + "\n", 0600));
  ASSERT_TRUE(good) << good.error();
  EXPECT_EQ(*good, kSecret) << "the trailing newline is not part of it";
  const std::string shared = dir.write("shared", kSecret, 0644);
  EXPECT_NE(read_secret_file(shared).error().find("chmod 600 " + shared), std::string::npos);
  const auto short_one = read_secret_file(dir.write("short", "abc\n", 0600));
  ASSERT_FALSE(short_one);
  EXPECT_NE(short_one.error().find("at least 16"), std::string::npos) << short_one.error();
  EXPECT_NE(read_secret_file(dir.file("missing")).error().find("No such file"), std::string::npos);

  unsetenv(kSecretEnv);
  const auto none = find_secret("");
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  setenv(kSecretEnv, "from the environment, long enough", 1);
  const auto env = find_secret("");
  ASSERT_TRUE(env && *env);
  EXPECT_EQ(**env, "from the environment, long enough");
  const auto file_first = find_secret(dir.file("good"));
  ASSERT_TRUE(file_first && *file_first);
  EXPECT_EQ(**file_first, kSecret) << "the file wins over the environment";
  setenv(kSecretEnv, "short", 1);
  EXPECT_FALSE(find_secret(""));
  unsetenv(kSecretEnv);
}

}  // namespace
}  // namespace roceconf::control
