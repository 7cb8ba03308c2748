#include "suite/engine/daemon_target.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "control/codec.h"
#include "control/ops.h"
#include "dissector/address_text.h"
#include "suite/engine/raw_target.h"

namespace roceconf::engine {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kProtocol = control::kProtocolVersion;
constexpr milliseconds kConnectSlice{50};  // between checks that the daemon still runs
constexpr milliseconds kStopGrace{2000};   // after SIGTERM, before SIGKILL
constexpr milliseconds kExitGrace{200};    // to collect the exit behind a failed request

std::string self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

std::string status_text(int status) {
  if (status < 0) return "exit status unknown";
  if (status >= 128) return fmt::format("killed by signal {}", status - 128);
  return fmt::format("exit status {}", status);
}

}  // namespace

std::expected<std::unique_ptr<DaemonTarget>, std::string> DaemonTarget::start(
    const DaemonTargetOptions& options) {
  std::unique_ptr<DaemonTarget> t(new DaemonTarget());  // its destructor undoes a partial start
  t->options_ = options;
  std::string binary =
      options.roceconf_binary.empty() ? self_executable() : options.roceconf_binary;
  if (binary.empty() || access(binary.c_str(), X_OK) != 0)
    return std::unexpected(fmt::format(
        "the roceconf executable '{}' to run the daemon target is missing or not executable",
        binary));

  std::error_code ec;
  std::string pattern = (fs::temp_directory_path(ec) / "roceconf-daemon-XXXXXX").string();
  if (ec || !mkdtemp(pattern.data()))
    return std::unexpected(
        fmt::format("cannot create a temporary directory {}: {}", pattern, strerror(errno)));
  t->dir_ = pattern;

  VethLabOptions lab_options;
  lab_options.prefix = options.lab_prefix;
  lab_options.mtu = options.mtu;
  lab_options.vlan = options.lab_vlan;
  lab_options.pcp = options.lab_pcp;
  auto lab = VethLab::create(lab_options);
  if (!lab) return std::unexpected(lab.error());
  t->lab_ = std::move(*lab);

  // Everything the child needs is made before fork(): after it, only async-signal-safe calls.
  std::vector<std::string> words = {binary,        "target",
                                    "--interface", t->lab_->target().interface,
                                    "--netns",     t->lab_->target().netns,
                                    "--ip",        format_ipv4(t->lab_->target().ip),
                                    "--ip6",       format_gid(t->lab_->target().ip6),
                                    "--udp-port",  std::to_string(options.udp_port),
                                    "--listen",    std::to_string(options.service_port),
                                    "--control",   t->control_path()};
  for (const std::string& q : options.quirks) {
    words.push_back("--quirk");
    words.push_back(q);
  }
  if (options.stock_responder) words.push_back("--stock-responder");
  // The reference P_Key table: partition 0x1234 as a full and a limited member.
  for (const char* pkey : {"0x9234", "0x1234"}) {
    words.push_back("--pkey");
    words.push_back(pkey);
  }
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const int log = ::open(t->log_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log < 0 || null < 0) {
    const int err = errno;
    if (log >= 0) ::close(log);
    if (null >= 0) ::close(null);
    return std::unexpected(fmt::format("cannot open {}: {}", t->log_path(), strerror(err)));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Dies with its parent (thread, strictly), so a crashed run leaves no daemon behind.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (const int sig : {SIGTERM, SIGINT, SIGPIPE}) sigaction(sig, &dfl, nullptr);
    dup2(null, STDIN_FILENO);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    execv(argv[0], argv.data());
    static constexpr char kExecFailed[] = "roceconf: error: exec of the daemon failed\n";
    [[maybe_unused]] const ssize_t n = write(STDERR_FILENO, kExecFailed, sizeof kExecFailed - 1);
    _exit(127);
  }
  const int fork_errno = errno;
  ::close(log);
  ::close(null);
  if (pid < 0) return std::unexpected(fmt::format("fork: {}", strerror(fork_errno)));
  t->pid_ = pid;

  // Ready once the control socket answers hello.
  const auto deadline = SteadyClock::now() + options.startup_timeout;
  while (!t->client_) {
    if (!t->daemon_running()) return std::unexpected(t->exited_message());
    auto client = ControlClient::connect(t->control_path(), kConnectSlice);
    if (client) {
      t->client_ = std::move(*client);
    } else if (SteadyClock::now() >= deadline) {
      return std::unexpected(
          fmt::format("the reference daemon did not open its control socket within {} ms (log: {})",
                      options.startup_timeout.count(), t->last_log_line()));
    }
  }
  const auto left = std::max(
      std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now()), milliseconds(1000));
  auto hello = t->client_->request(control::encode(control::Hello{}), left);
  if (!hello) return std::unexpected(hello.error());
  const nlohmann::json& answer = *hello;
  if (answer.value("ok", nlohmann::json()) != true)
    return std::unexpected(fmt::format("the reference daemon refused hello: {}", answer.dump()));
  if (answer.value("protocol", nlohmann::json()) != kProtocol)
    return std::unexpected(
        fmt::format("the reference daemon speaks control protocol {}; this "
                    "suite needs {} (is '{}' the same build?)",
                    answer.value("protocol", nlohmann::json()).dump(), kProtocol, binary));
  t->hello_ = std::move(*hello);

  RawSocketOptions port_options;
  port_options.interface = t->lab_->tester().interface;
  port_options.netns = t->lab_->tester().netns;
  port_options.udp_port = options.udp_port;
  auto port = RawSocketPort::open(port_options);
  if (!port) return std::unexpected(port.error().message);
  t->port_ = std::move(*port);
  return t;
}

DaemonTarget::~DaemonTarget() {
  client_.reset();
  port_.reset();
  stop_daemon();
  lab_.reset();
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

void DaemonTarget::stop_daemon() {
  if (pid_ <= 0 || !daemon_running()) return;
  kill(pid_, SIGTERM);
  const auto give_up = SteadyClock::now() + kStopGrace;
  while (daemon_running() && SteadyClock::now() < give_up)
    std::this_thread::sleep_for(milliseconds(5));
  if (!daemon_running()) return;
  kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  exit_status_ = 128 + SIGKILL;
}

bool DaemonTarget::daemon_running() {
  if (pid_ <= 0 || reaped_) return false;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  reaped_ = true;
  if (r == pid_) exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return false;
}

std::string DaemonTarget::log_path() const {
  return (fs::path(dir_) / "daemon.log").string();
}
std::string DaemonTarget::control_path() const {
  return (fs::path(dir_) / "control.sock").string();
}

std::string DaemonTarget::last_log_line() const {
  std::ifstream in(log_path());
  std::string line;
  std::string last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last.empty() ? "(empty)" : last;
}

std::string DaemonTarget::exited_message() const {
  return fmt::format("the reference daemon exited ({}): {}", status_text(exit_status_),
                     last_log_line());
}

Endpoint DaemonTarget::tester() const {
  return {lab_->tester().mac, lab_->tester().ip, lab_->tester().ip6};
}
Endpoint DaemonTarget::device() const {
  return {lab_->target().mac, lab_->target().ip, lab_->target().ip6};
}

std::string DaemonTarget::describe() const {
  std::string quirks =
      options_.quirks.empty() ? "none" : fmt::format("{}", fmt::join(options_.quirks, ","));
  return fmt::format("reference daemon (pid {}) on {}, {}responder on port {}, quirks {}", pid_,
                     lab_->describe(), options_.stock_responder ? "stock " : "",
                     options_.service_port, quirks);
}

std::vector<std::pair<std::string, std::string>> DaemonTarget::identity() const {
#ifndef ROCECONF_VERSION
#define ROCECONF_VERSION ""
#endif
  const auto text = [&](const nlohmann::json& j) -> std::string {
    return j.is_string() ? j.get<std::string>() : std::string();
  };
  std::string name = text(hello_.value("target", nlohmann::json()));
  std::vector<std::pair<std::string, std::string>> out = {
      {"name", name.empty() ? "roceconf reference NIC" : name}};
  if (*ROCECONF_VERSION) out.emplace_back("fw_ver", ROCECONF_VERSION);
  if (hello_.contains("device") && hello_["device"].is_object())
    if (std::string guid = text(hello_["device"].value("node_guid", nlohmann::json()));
        !guid.empty())
      out.emplace_back("node_guid", guid);
  out.emplace_back("quirks", options_.quirks.empty()
                                 ? std::string("none")
                                 : fmt::format("{}", fmt::join(options_.quirks, ",")));
  out.emplace_back("source", "built-in");
  return out;
}

std::expected<nlohmann::json, std::string> DaemonTarget::control(const nlohmann::json& request) {
  auto response = client_->request(request);
  if (!response) {
    // A closed socket comes a moment before the exit can be collected.
    const auto give_up = SteadyClock::now() + kExitGrace;
    while (daemon_running() && SteadyClock::now() < give_up)
      std::this_thread::sleep_for(milliseconds(2));
    if (!daemon_running()) return std::unexpected(response.error() + "; " + exited_message());
  }
  return response;
}

std::expected<void, std::string> DaemonTarget::reset() {
  if (!daemon_running()) return std::unexpected(exited_message());
  // A fresh NIC in the daemon, as the in-process target gets before every case: otherwise a
  // connection or QP of one case (or a quirk's leftovers) changes the next case's verdict.
  auto reset = control(nlohmann::json{{"op", "reset"}});
  if (!reset) return std::unexpected(reset.error());
  if (!reset->value("ok", false))
    return std::unexpected("the daemon refused reset: " + reset->value("error", std::string("?")));
  auto drained = settle_and_drain(*port_);
  if (!drained) return std::unexpected(drained.error());
  return {};
}

}  // namespace roceconf::engine
