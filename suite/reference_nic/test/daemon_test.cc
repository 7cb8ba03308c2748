// `roceconf target` as a user runs it: one-line errors for what a user can get wrong, and (as
// root) the daemon on a veth pair between two network namespaces (scripts/netns-pair.sh),
// driven over its control socket, fed garbage frames from the other namespace, answering an
// rdma_cm REQ with the responder convention, and stopping cleanly on SIGTERM; and an
// in-process NIC moving data to it over the veth. Every wait has a
// deadline; the child is killed and the namespaces removed whatever happens.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/port/raw_socket_port.h"
#include "control/rcnf_private_data.h"
#include "dissector/address_text.h"
#include "dissector/mad/rdma_cm.h"
#include "suite/reference_nic/cm_agent.h"
#include "suite/reference_nic/nic.h"
#include "suite/reference_nic/test/line_client.h"
#include "suite/reference_nic/test/peer_frames.h"

extern char** environ;

namespace roceconf::target {
namespace {

namespace fs = std::filesystem;
using control::RcnfPrivateData;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "rcnf-daemon-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// A child process with stdout/stderr in files; SIGKILLed if still running at destruction.
class Child {
 public:
  Child(std::vector<std::string> args, const TempDir& dir)
      : out_(dir.file("stdout")), err_(dir.file("stderr")) {
    args.insert(args.begin(), ROCECONF_BINARY);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
      ADD_FAILURE() << "cannot run " << ROCECONF_BINARY;
      pid_ = -1;
      exited_ = true;
    }
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Child() {
    if (running()) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  bool running() {
    if (pid_ <= 0 || exited_) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) record(status);
    return !exited_;
  }
  // The exit code once it exited within `timeout`; -1 after a signal, nullopt if still running.
  std::optional<int> wait(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (running() && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!exited_) return std::nullopt;
    return code_;
  }
  void signal(int sig) { kill(pid_, sig); }
  std::string out() const { return slurp(out_); }
  std::string err() const { return slurp(err_); }

 private:
  void record(int status) {
    exited_ = true;
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string out_;
  std::string err_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int code_ = -1;
};

// A command the user gets wrong: exit status 2 and exactly one "roceconf: error: " line.
void expect_one_line_error(const std::vector<std::string>& args, const std::string& fragment) {
  TempDir dir;
  std::vector<std::string> full = args;
  full.push_back("--control");
  full.push_back(dir.file("ctl.sock"));
  Child child(full, dir);
  const auto code = child.wait(std::chrono::seconds(10));
  ASSERT_TRUE(code) << "still running: " << fmt::format("{}", fmt::join(args, " "));
  EXPECT_EQ(*code, 2) << child.err();
  const auto lines = lines_of(child.err());
  ASSERT_EQ(lines.size(), 1u) << child.err();
  EXPECT_EQ(lines[0].rfind("roceconf: error: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(fragment), std::string::npos) << lines[0];
  EXPECT_EQ(child.out(), "");
}

TEST(TargetCommand, UserErrorsAreOneLineWithStatus2) {
  expect_one_line_error({"target", "--interface", "lo", "--ip", "192.0.2.2", "--mac", "zz"},
                        "--mac 'zz' is not a MAC address");
  expect_one_line_error({"target", "--interface", "lo", "--ip", "192.0.2.256"},
                        "--ip '192.0.2.256' is not an IPv4 address");
  expect_one_line_error(
      {"target", "--interface", "lo", "--ip", "192.0.2.2", "--quirk", "no-such-quirk"},
      "unknown quirk 'no-such-quirk' (known: psn-gap-ack");
  // Missing interface as root; missing privilege otherwise: both are the user's to fix.
  expect_one_line_error({"target", "--interface", "rcnf-nosuch0", "--ip", "192.0.2.2"},
                        geteuid() == 0 ? "rcnf-nosuch0" : "CAP_NET_RAW");
  expect_one_line_error({"target", "--ip", "192.0.2.2"}, "--interface is required");
}

// scripts/netns-pair.sh up/down around a test: side a is the tester, side b the daemon.
class NetnsPair {
 public:
  explicit NetnsPair(std::string prefix) : prefix_(std::move(prefix)) {
    const std::string cmd =
        fmt::format("{}/scripts/netns-pair.sh up {} 2>&1", ROCECONF_SOURCE_DIR, prefix_);
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return;
    char buffer[512];
    while (fgets(buffer, sizeof buffer, p)) output_ += buffer;
    up_ = pclose(p) == 0;
    // "b netns=P-b if=P-vb mac=aa:bb:cc:dd:ee:ff ip=192.0.2.2/24 mtu=1500"
    for (const std::string& line : lines_of(output_)) {
      const auto at = line.find("mac=");
      if (line.starts_with("b ") && at != std::string::npos)
        mac_b_ = parse_mac(line.substr(at + 4, 17)).value_or(MacAddress{});
    }
  }
  ~NetnsPair() {
    const std::string cmd = fmt::format("{}/scripts/netns-pair.sh down {} >/dev/null 2>&1",
                                        ROCECONF_SOURCE_DIR, prefix_);
    [[maybe_unused]] const int rc = std::system(cmd.c_str());
  }
  bool up() const { return up_; }
  const std::string& output() const { return output_; }
  std::string ns(char side) const { return fmt::format("{}-{}", prefix_, side); }
  std::string interface(char side) const { return fmt::format("{}-v{}", prefix_, side); }
  const MacAddress& mac_b() const { return mac_b_; }

 private:
  std::string prefix_;
  std::string output_;
  bool up_ = false;
  MacAddress mac_b_{};
};

json ask(test::LineClient& client, const json& request) {
  const auto line = client.ask(request.dump());
  if (!line) return json{{"ok", false}, {"error", "no answer from the daemon"}};
  return json::parse(*line);
}

// Frames that reach the daemon's decoder (they pass its RoCE filter: UDP port 4791) but carry
// garbage: random bytes after the UDP header, truncations, bad ICRCs, reserved opcodes, unknown
// QPs, TVer != 0.
std::vector<std::vector<std::uint8_t>> garbage_frames(const MacAddress& mac, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  const Ipv4Address ip{192, 0, 2, 2};
  std::vector<std::vector<std::uint8_t>> out;
  Packet send = test::peer_packet(mac, ip, opcode::kRcSendOnly, 0xABCDE, 5);
  const std::vector<std::uint8_t> payload(64, 0x5A);
  send.payload = payload;
  const std::vector<std::uint8_t> valid = encode(send);
  for (int i = 0; i < 100; ++i) {
    std::vector<std::uint8_t> f = valid;
    for (std::size_t b = 42; b < f.size(); ++b) f[b] = static_cast<std::uint8_t>(rng());
    f.resize(42 + rng() % (f.size() - 42 + 200), 0xEE);
    out.push_back(f);
  }
  for (std::size_t n = 14; n < valid.size(); n += 7)
    out.push_back({valid.begin(), valid.begin() + static_cast<std::ptrdiff_t>(n)});
  Packet reserved = send;
  reserved.bth->opcode = 0x1F;
  out.push_back(encode(reserved));
  Packet tver = send;
  tver.bth->version = 3;
  out.push_back(encode(tver));
  // Last, two well-formed frames the counters name: once they are counted, all came through.
  std::vector<std::uint8_t> bad_icrc = valid;
  bad_icrc.back() ^= 0xFF;
  out.push_back(bad_icrc);
  out.push_back(valid);  // to a QP that does not exist
  return out;
}

TEST(TargetDaemon, OnVethPairServesControlSurvivesGarbageAndStopsOnSigterm) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root: network namespaces (CAP_SYS_ADMIN, CAP_NET_ADMIN) and raw "
                    "sockets (CAP_NET_RAW)";
  NetnsPair pair(fmt::format("rcd{}", getpid() % 100000));
  if (!pair.up()) GTEST_SKIP() << "cannot create network namespaces here: " << pair.output();
  TempDir dir;
  const std::string control = dir.file("x.sock");
  Child daemon({"target", "--netns", pair.ns('b'), "--interface", pair.interface('b'), "--ip",
                "192.0.2.2", "--listen", "7471", "--control", control},
               dir);

  // Ready once the control socket answers.
  std::unique_ptr<test::LineClient> client;
  const auto ready_by = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < ready_by && daemon.running()) {
    client = std::make_unique<test::LineClient>(control);
    if (client->connected()) break;
    client.reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(client) << "daemon not ready; stderr: " << daemon.err();
  EXPECT_NE(daemon.out().find("control socket " + control), std::string::npos) << daemon.out();

  const json hello = ask(*client, {{"id", 1}, {"op", "hello"}});
  ASSERT_EQ(hello["ok"], true) << hello;
  EXPECT_EQ(hello["port"]["ipv4"], "192.0.2.2");
  EXPECT_EQ(hello["port"]["mac"], format_mac(pair.mac_b())) << "--mac defaults to the interface's";
  const json pd = ask(*client, {{"id", 2}, {"op", "alloc_pd"}});
  ASSERT_EQ(pd["ok"], true) << pd;
  const json cq = ask(*client, {{"id", 3}, {"op", "create_cq"}, {"depth", 8}});
  ASSERT_EQ(cq["ok"], true) << cq;
  const json qp = ask(*client, {{"id", 4},
                                {"op", "create_qp"},
                                {"qp_type", "RC"},
                                {"pd", pd["pd"]},
                                {"send_cq", cq["cq"]},
                                {"recv_cq", cq["cq"]},
                                {"cap", {{"max_send_wr", 4}, {"max_recv_wr", 4}}}});
  ASSERT_EQ(qp["ok"], true) << qp;
  EXPECT_EQ(
      ask(*client, {{"id", 5}, {"op", "query_qp"}, {"qp_num", qp["qp_num"]}})["attr"]["qp_state"],
      "RESET");
  EXPECT_EQ(ask(*client, {{"id", 6}, {"op", "destroy_cq"}, {"cq", 99}})["errno"], "ENOENT");
  // Garbage on the control socket gets an error line; the connection stays usable.
  const auto garbage = client->ask("this is not json");
  ASSERT_TRUE(garbage);
  EXPECT_NE(garbage->find("malformed JSON"), std::string::npos) << *garbage;

  // The tester's side of the wire.
  RawSocketOptions options;
  options.interface = pair.interface('a');
  options.netns = pair.ns('a');
  auto port = RawSocketPort::open(options);
  ASSERT_TRUE(port) << port.error().message;
  const auto frames = garbage_frames(pair.mac_b(), 7);
  for (const auto& f : frames) ASSERT_TRUE((*port)->send(f)) << "send failed";

  // Still alive: it answers on the control socket, and the counters saw the garbage through.
  const auto counted_by = Clock::now() + std::chrono::seconds(5);
  json counters;
  for (;;) {
    counters = ask(*client, {{"id", 7}, {"op", "counters"}});
    ASSERT_EQ(counters["ok"], true) << counters << daemon.err();
    if (counters["counters"]["unknown_qp"] >= 1 || Clock::now() > counted_by) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GE(counters["counters"]["unknown_qp"], 1) << counters;
  EXPECT_GE(counters["counters"]["icrc_error"], 1) << counters;
  EXPECT_GE(counters["counters"]["rx_packets"], 4) << counters;
  ASSERT_TRUE(daemon.running()) << daemon.err();

  // The responder answers an rdma_cm REQ for port 7471 with the RCNF private data.
  std::array<std::uint8_t, kReqPrivateDataSize> req_private{};
  const CmReq req = test::rdma_cm_req({192, 0, 2, 2}, 7471, 0x4242, 0x77, 0x100, req_private);
  Packet req_frame = test::peer_mad(pair.mac_b(), {192, 0, 2, 2}, req, 0x5151);
  req_frame.eth->src = (*port)->mac();
  ASSERT_TRUE((*port)->send(encode(req_frame)));
  std::optional<RcnfPrivateData> announced;
  const auto rep_by = (*port)->clock().now_ns() + 3'000'000'000;
  while (!announced) {
    auto frame = (*port)->receive(rep_by);
    ASSERT_TRUE(frame) << frame.error().message;
    ASSERT_TRUE(*frame) << "no REP within 3 s";
    const Packet p = decode((*frame)->data);
    if (!p.mad || !p.mad->cm) continue;
    const auto* rep = std::get_if<CmRep>(&*p.mad->cm);
    if (!rep) continue;
    const auto data = RcnfPrivateData::decode(rep->private_data);
    ASSERT_TRUE(data) << data.error();
    announced = *data;
  }
  EXPECT_EQ(announced->region_length, 64u * 1024);
  EXPECT_EQ(announced->recv_depth, 16u);

  EXPECT_EQ(ask(*client, {{"id", 8}, {"op", "hello"}})["ok"], true);
  client.reset();

  // SIGTERM: a clean exit that removes the socket.
  daemon.signal(SIGTERM);
  const auto code = daemon.wait(std::chrono::seconds(5));
  ASSERT_TRUE(code) << "still running 5 s after SIGTERM";
  EXPECT_EQ(*code, 0) << daemon.err();
  EXPECT_FALSE(fs::exists(control));
}

// Two NICs over a real veth pair: an in-process reference NIC on a raw socket in namespace a
// connects through its CM agent to the daemon's responder application in namespace b and moves
// data with SEND, RDMA WRITE, RDMA READ and FETCH_ADD.
TEST(TargetDaemon, InProcessNicMovesDataToTheDaemonOverVeth) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root: network namespaces (CAP_SYS_ADMIN, CAP_NET_ADMIN) and raw "
                    "sockets (CAP_NET_RAW)";
  NetnsPair pair(fmt::format("rcm{}", getpid() % 100000));
  if (!pair.up()) GTEST_SKIP() << "cannot create network namespaces here: " << pair.output();
  TempDir dir;
  const std::string control = dir.file("m.sock");
  Child daemon({"target", "--netns", pair.ns('b'), "--interface", pair.interface('b'), "--ip",
                "192.0.2.2", "--listen", "7471", "--control", control},
               dir);
  const auto ready_by = Clock::now() + std::chrono::seconds(10);
  bool ready = false;
  while (!ready && Clock::now() < ready_by && daemon.running()) {
    ready = test::LineClient(control).connected();
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(ready) << "daemon not ready; stderr: " << daemon.err();

  RawSocketOptions options;
  options.interface = pair.interface('a');
  options.netns = pair.ns('a');
  auto port = RawSocketPort::open(options);
  ASSERT_TRUE(port) << port.error().message;
  NicConfig config;
  config.device.port.mac = (*port)->mac();
  config.ipv4 = {192, 0, 2, 1};
  std::deque<std::vector<std::uint8_t>> outbox;  // the sink must not re-enter the NIC
  Nic nic(config,
          [&](std::span<const std::uint8_t> f) { outbox.emplace_back(f.begin(), f.end()); });
  auto now = [&] { return static_cast<std::uint64_t>((*port)->clock().now_ns()); };
  // Runs the NIC on the port until `done` or 5 s pass.
  auto run_until = [&](const std::function<bool()>& done) {
    const std::uint64_t give_up = now() + 5'000'000'000ull;
    while (!done() && now() < give_up) {
      while (!outbox.empty()) {
        ASSERT_TRUE((*port)->send(outbox.front()));
        outbox.pop_front();
      }
      auto frame = (*port)->receive(static_cast<TimeNs>(now() + 1'000'000));
      ASSERT_TRUE(frame) << frame.error().message;
      if (*frame) nic.receive((*frame)->data, now());
      nic.tick(now());
    }
  };

  Device& d = nic.device();
  const std::uint32_t pd = *d.alloc_pd();
  const std::uint32_t cq = (*d.create_cq(64))->handle();
  QpInit init;
  init.pd = pd;
  init.send_cq = init.recv_cq = cq;
  init.cap.max_send_wr = 16;
  init.cap.max_recv_wr = 16;
  init.sq_sig_all = true;
  const std::uint32_t qpn = (*d.create_qp(init))->qp_num();
  MrInit m;
  m.pd = pd;
  m.length = 16384;
  m.access = access::kLocalWrite;
  Mr* mr = *d.reg_mr(m);

  std::optional<CmRep> rep;
  std::vector<std::uint8_t> rep_private;  // the REP views its frame only during the callback
  std::optional<std::uint16_t> rejected;
  ConnectParams params;
  params.service_id = rdma_cm_service_id(rdma_cm_ps::kTcp, 7471);
  params.peer.dgid = gid_from_ipv4({192, 0, 2, 2});
  params.peer.dmac = pair.mac_b();
  params.qp_num = qpn;
  ConnectCallbacks callbacks;
  callbacks.established = [&](std::uint32_t, const CmRep& r) {
    rep = r;
    rep_private.assign(r.private_data.begin(), r.private_data.end());
  };
  callbacks.rejected = [&](std::uint16_t reason) { rejected = reason; };
  nic.tick(now());
  ASSERT_TRUE(nic.cm().connect(params, callbacks));
  run_until([&] { return rep.has_value() || rejected.has_value(); });
  ASSERT_FALSE(rejected) << "REJ reason " << *rejected;
  ASSERT_TRUE(rep) << "no REP from the daemon; stderr: " << daemon.err();
  const auto remote = RcnfPrivateData::decode(rep_private);
  ASSERT_TRUE(remote) << remote.error();

  auto bytes = mr->bytes();
  for (std::size_t i = 0; i < 4096; ++i) bytes[i] = static_cast<std::uint8_t>(i * 13 + 1);
  std::vector<SendWr> wrs(4);
  wrs[0].wr_id = 1;
  wrs[0].opcode = WrOpcode::kSend;
  wrs[0].sg_list = {Sge{mr->addr(), 1500, mr->lkey()}};
  wrs[1].wr_id = 2;
  wrs[1].opcode = WrOpcode::kRdmaWrite;
  wrs[1].sg_list = {Sge{mr->addr(), 4096, mr->lkey()}};
  wrs[1].rdma = {remote->region_va, remote->rkey};
  wrs[2].wr_id = 3;
  wrs[2].opcode = WrOpcode::kRdmaRead;
  wrs[2].sg_list = {Sge{mr->addr() + 8192, 4096, mr->lkey()}};
  wrs[2].rdma = {remote->region_va, remote->rkey};
  wrs[3].wr_id = 4;
  wrs[3].opcode = WrOpcode::kAtomicFetchAndAdd;
  wrs[3].sg_list = {Sge{mr->addr() + 12288, 8, mr->lkey()}};
  wrs[3].atomic = {remote->region_va + 8192, 3, 0, remote->rkey};
  ASSERT_TRUE(nic.post_send(qpn, wrs));
  std::vector<Cqe> cqes;
  run_until([&] {
    const auto polled = d.poll_cq(cq, 16);
    if (polled) cqes.insert(cqes.end(), polled->begin(), polled->end());
    return cqes.size() >= 4;
  });
  ASSERT_EQ(cqes.size(), 4u) << "daemon stderr: " << daemon.err();
  for (const Cqe& c : cqes) EXPECT_EQ(c.status, WcStatus::kSuccess) << "wr " << c.wr_id;
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.begin() + 4096, bytes.begin() + 8192));
  ASSERT_TRUE(daemon.running()) << daemon.err();
}

}  // namespace
}  // namespace roceconf::target
