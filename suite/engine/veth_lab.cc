#include "suite/engine/veth_lab.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/port/raw_socket_port.h"
#include "dissector/address_text.h"

extern char** environ;

namespace roceconf::engine {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr auto kCommandTimeout = std::chrono::seconds(10);
constexpr auto kCarrierTimeout = std::chrono::seconds(2);
constexpr char kNetnsDir[] = "/var/run/netns";  // where `ip netns` keeps its names
constexpr std::size_t kMaxPrefix = 12;          // PREFIX-va in IFNAMSIZ - 1 = 15 characters

struct Output {
  int status = -1;  // exit status, -1 after a signal
  std::string out;
  std::string err;
};

// `ip` from PATH, or from the sbin directories a user's PATH often lacks.
std::optional<std::string> find_ip() {
  std::string dirs = "/usr/sbin:/sbin:/usr/bin:/bin";
  if (const char* path = std::getenv("PATH"); path && *path) dirs = std::string(path) + ":" + dirs;
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    if (!dir.empty()) {
      const std::string candidate = dir + "/ip";
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    start = end + 1;
  }
  return std::nullopt;
}

std::string first_line(std::string text) {
  if (const auto end = text.find('\n'); end != std::string::npos) text.resize(end);
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

// Runs `ip ARGS...` and collects its output; the error is about running it at all.
std::expected<Output, std::string> run_ip(const std::vector<std::string>& args) {
  static const std::optional<std::string> ip = find_ip();
  if (!ip)
    return std::unexpected(
        "the daemon target needs iproute2's `ip` command (apt-get install iproute2)");
  std::vector<std::string> words{*ip};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  int out[2];
  int err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return std::unexpected(fmt::format("pipe: {}", strerror(errno)));
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return std::unexpected(fmt::format("pipe: {}", strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, ip->c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  if (spawned != 0) {
    close(out[0]);
    close(err[0]);
    return std::unexpected(fmt::format("cannot run {}: {}", *ip, strerror(spawned)));
  }

  Output result;
  const auto deadline = SteadyClock::now() + kCommandTimeout;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  bool timed_out = false;
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now())
            .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(left)) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char chunk[4096];
      const ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
      if (n > 0) {
        sinks[i]->append(chunk, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& p : fds)
    if (p.fd >= 0) close(p.fd);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return std::unexpected(fmt::format("`ip {}` did not finish within {} s", fmt::join(args, " "),
                                       kCommandTimeout.count()));
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool permission_problem(const std::string& err) {
  return err.find("Operation not permitted") != std::string::npos ||
         err.find("Permission denied") != std::string::npos;
}

// `ip ARGS...` that must succeed; the error is one line naming the command and ip's complaint.
std::expected<std::string, std::string> ip(const std::vector<std::string>& args) {
  auto ran = run_ip(args);
  if (!ran) return std::unexpected(ran.error());
  if (ran->status == 0) return std::move(ran->out);
  if (permission_problem(ran->err)) return std::unexpected(std::string(kDaemonNeedsRoot));
  const std::string why = first_line(ran->err);
  return std::unexpected(
      fmt::format("`ip {}` failed: {}", fmt::join(args, " "),
                  why.empty() ? "exit status " + std::to_string(ran->status) : why));
}

bool netns_exists(const std::string& name) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::path(kNetnsDir) / name, ec);
}

std::string default_prefix() {
  static std::atomic<unsigned> labs{0};
  const unsigned n = labs.fetch_add(1);
  std::string prefix = fmt::format("rcnf{}", getpid());
  // Further labs of this process: a letter suffix, which no pid (all digits) can produce.
  for (unsigned k = n; k > 0; k /= 26) prefix += static_cast<char>('a' + (k - 1) % 26);
  return prefix;
}

bool valid_prefix(const std::string& prefix) {
  if (prefix.empty() || prefix.size() > kMaxPrefix) return false;
  for (const char c : prefix)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

struct LinkInfo {
  MacAddress mac{};
  int mtu = 0;
  std::string operstate;
};

std::expected<LinkInfo, std::string> link_info(const VethSide& side) {
  auto text = ip({"-n", side.netns, "-j", "link", "show", "dev", side.interface});
  if (!text) return std::unexpected(text.error());
  const auto parsed = nlohmann::json::parse(*text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_array() || parsed.empty() || !parsed[0].is_object())
    return std::unexpected(
        fmt::format("`ip -n {} -j link show dev {}` gave no link", side.netns, side.interface));
  const nlohmann::json& link = parsed[0];
  LinkInfo info;
  const auto mac = parse_mac(link.value("address", ""));
  if (!mac)
    return std::unexpected(
        fmt::format("no MAC address for {} in namespace {}", side.interface, side.netns));
  info.mac = *mac;
  info.mtu = link.value("mtu", 0);
  info.operstate = link.value("operstate", "");
  return info;
}

// Is a process inside the namespace bound at `path` (its daemon, a shell)?
bool namespace_in_use(const std::filesystem::path& path) {
  struct stat ns {};
  if (stat(path.c_str(), &ns) != 0) return false;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    struct stat net {};
    if (stat((entry.path() / "ns/net").c_str(), &net) == 0 && net.st_dev == ns.st_dev &&
        net.st_ino == ns.st_ino)
      return true;
  }
  return false;
}

bool process_alive(pid_t pid) {
  return kill(pid, 0) == 0 || errno == EPERM;
}

}  // namespace

std::optional<pid_t> lab_namespace_owner(std::string_view name) {
  // rcnf<PID>[a-z]*-a|b, exactly as default_prefix() makes them.
  if (!name.starts_with("rcnf") || name.size() < 7) return std::nullopt;
  if (!name.ends_with("-a") && !name.ends_with("-b")) return std::nullopt;
  std::string_view middle = name.substr(4, name.size() - 6);
  std::size_t digits = 0;
  while (digits < middle.size() && std::isdigit(static_cast<unsigned char>(middle[digits])))
    ++digits;
  if (digits == 0 || digits > 9 || middle[0] == '0') return std::nullopt;
  for (const char c : middle.substr(digits))
    if (c < 'a' || c > 'z') return std::nullopt;
  return static_cast<pid_t>(std::stol(std::string(middle.substr(0, digits))));
}

std::expected<std::vector<std::string>, std::string> sweep_stale_labs() {
  std::vector<std::string> deleted;
  std::expected<std::vector<std::string>, std::string> result;
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kNetnsDir, ec))
    names.push_back(entry.path().filename().string());
  for (const std::string& name : names) {
    const auto owner = lab_namespace_owner(name);
    if (!owner || process_alive(*owner)) continue;
    // A PID from another PID namespace, or a daemon that outlived its run: still in use.
    if (namespace_in_use(std::filesystem::path(kNetnsDir) / name)) continue;
    if (auto gone = ip({"netns", "delete", name}); !gone) {
      if (result) result = std::unexpected(gone.error());
      continue;
    }
    deleted.push_back(name);
  }
  if (!result) return result;
  return deleted;
}

// The tagged lab's 802.1Q access port: one thread a direction between the tagged wire and the
// target's untagged link. The raw sockets put back the tags Linux takes off received frames.
struct VethLab::AccessPort {
  std::unique_ptr<RawSocketPort> wire;   // PREFIX-vb: tagged
  std::unique_ptr<RawSocketPort> inner;  // PREFIX-vp: untagged, the target's link
  std::uint16_t tci = 0;
  std::uint16_t vid = 0;
  std::atomic<bool> stop{false};
  std::thread down, up;

  static std::expected<std::unique_ptr<AccessPort>, std::string> start(const std::string& netns,
                                                                       const std::string& wire_if,
                                                                       const std::string& inner_if,
                                                                       std::uint16_t vid,
                                                                       std::uint8_t pcp) {
    auto port = std::make_unique<AccessPort>();
    for (auto [name, socket] :
         {std::pair{wire_if, &port->wire}, std::pair{inner_if, &port->inner}}) {
      auto opened = RawSocketPort::open({.interface = name, .netns = netns, .no_filter = true});
      if (!opened)
        return std::unexpected(
            fmt::format("the lab's VLAN port on {}: {}", name, opened.error().message));
      *socket = std::move(*opened);
    }
    port->vid = vid;
    port->tci = static_cast<std::uint16_t>(pcp << 13 | vid);
    port->down = std::thread([p = port.get()] { p->relay(*p->wire, *p->inner, true); });
    port->up = std::thread([p = port.get()] { p->relay(*p->inner, *p->wire, false); });
    return port;
  }

  ~AccessPort() {
    stop = true;
    if (down.joinable()) down.join();
    if (up.joinable()) up.join();
  }

  void relay(RawSocketPort& from, RawSocketPort& to, bool untag) {
    constexpr std::size_t kMacs = 12;
    while (!stop) {
      auto got = from.receive(from.clock().now_ns() + 50'000'000);
      if (!got || !*got) continue;
      std::vector<std::uint8_t>& f = (*got)->data;
      if (f.size() < kMacs + 4) continue;
      if (untag) {
        // Only this VLAN's frames reach the target, without their tag.
        const bool ours = f[kMacs] == 0x81 && f[kMacs + 1] == 0x00 &&
                          ((f[kMacs + 2] << 8 | f[kMacs + 3]) & 0x0FFF) == vid;
        if (!ours) continue;
        f.erase(f.begin() + kMacs, f.begin() + kMacs + 4);
      } else {
        restore_vlan_tag(f, 0x8100, tci);
      }
      [[maybe_unused]] const auto sent = to.send(f);  // a port drops what it cannot send
    }
  }
};

std::expected<std::unique_ptr<VethLab>, std::string> VethLab::create(
    const VethLabOptions& options) {
  const std::string prefix = options.prefix.empty() ? default_prefix() : options.prefix;
  if (!valid_prefix(prefix))
    return std::unexpected(fmt::format(
        "veth lab prefix '{}' must be 1 to {} letters, digits or '_'", prefix, kMaxPrefix));
  if (options.mtu < 68 || options.mtu > 65535)
    return std::unexpected(fmt::format("veth lab MTU {} is outside 68 to 65535", options.mtu));
  if (options.vlan && (*options.vlan < 1 || *options.vlan > 4094))
    return std::unexpected(fmt::format("veth lab VLAN {} is outside 1 to 4094", *options.vlan));
  if (options.pcp > 7)
    return std::unexpected(fmt::format("veth lab priority {} is outside 0 to 7", options.pcp));
  if (geteuid() != 0) return std::unexpected(std::string(kDaemonNeedsRoot));
  // What crashed runs left; a failure here is no reason not to make this lab.
  [[maybe_unused]] const auto swept = sweep_stale_labs();

  std::unique_ptr<VethLab> lab(new VethLab());
  lab->prefix_ = prefix;
  lab->mtu_ = options.mtu;
  lab->vlan_ = options.vlan;
  lab->pcp_ = options.pcp;
  lab->a_ = {prefix + "-a", prefix + "-va", {}, {192, 0, 2, 1}, *parse_ipv6("2001:db8::1")};
  lab->b_ = {prefix + "-b", prefix + "-vb", {}, {192, 0, 2, 2}, *parse_ipv6("2001:db8::2")};
  // From here on the destructor removes whatever exists under these names, leftovers included.
  lab->up_ = true;
  if (auto removed = lab->teardown(); !removed) return std::unexpected(removed.error());
  lab->up_ = true;

  for (const VethSide* side : {&lab->a_, &lab->b_})
    if (auto added = ip({"netns", "add", side->netns}); !added)
      return std::unexpected(added.error());
  // Made inside the namespaces, so the names never meet the host's interfaces.
  if (auto added = ip({"link", "add", lab->a_.interface, "netns", lab->a_.netns, "type", "veth",
                       "peer", "name", lab->b_.interface, "netns", lab->b_.netns});
      !added)
    return std::unexpected(added.error());

  const std::string mtu = std::to_string(options.mtu);
  for (VethSide* side : {&lab->a_, &lab->b_}) {
    const std::string& ns = side->netns;
    const std::string& dev = side->interface;
    const std::string address = fmt::format("{}/24", format_ipv4(side->ip));
    // No IPv6 link-local address: no DAD, router solicitations or MLD reports on the wire.
    if (auto r = ip({"-n", ns, "link", "set", "dev", dev, "addrgenmode", "none"}); !r)
      return std::unexpected(r.error());
    if (auto r = ip({"-n", ns, "link", "set", "dev", dev, "mtu", mtu}); !r)
      return std::unexpected(
          fmt::format("the veth pair refused MTU {}: {}", options.mtu, r.error()));
    if (auto r = ip({"-n", ns, "link", "set", "dev", "lo", "up"}); !r)
      return std::unexpected(r.error());
    if (auto r = ip({"-n", ns, "link", "set", "dev", dev, "up"}); !r)
      return std::unexpected(r.error());
    if (side == &lab->b_ && options.vlan) {
      // The target's own untagged link, behind the access port (started below).
      const std::string vq = lab->prefix_ + "-vq", vp = lab->prefix_ + "-vp";
      if (auto r = ip({"-n", ns, "link", "add", vq, "type", "veth", "peer", "name", vp}); !r)
        return std::unexpected(r.error());
      for (const std::string& end : {vq, vp})
        for (const std::vector<std::string>& set :
             {std::vector<std::string>{"addrgenmode", "none"}, {"mtu", mtu}, {"up"}}) {
          std::vector<std::string> args = {"-n", ns, "link", "set", "dev", end};
          args.insert(args.end(), set.begin(), set.end());
          if (auto r = ip(args); !r) return std::unexpected(r.error());
        }
      side->interface = vq;
    }
    if (auto r = ip({"-n", ns, "addr", "add", address, "dev", side->interface}); !r)
      return std::unexpected(r.error());
    // The IPv6 GID's address, usable at once: no duplicate address detection on a private wire.
    if (auto r = ip({"-n", ns, "-6", "addr", "add", format_gid(side->ip6) + "/64", "dev",
                     side->interface, "nodad"});
        !r)
      return std::unexpected(r.error());
  }

  // Both ends up: frames sent before the carrier is on would be lost.
  const auto deadline = SteadyClock::now() + kCarrierTimeout;
  for (VethSide* side : {&lab->a_, &lab->b_}) {
    for (;;) {
      auto info = link_info(*side);
      if (!info) return std::unexpected(info.error());
      if (info->mtu != options.mtu)
        return std::unexpected(
            fmt::format("{} has MTU {} after setting {}", side->interface, info->mtu, options.mtu));
      side->mac = info->mac;
      if (info->operstate == "UP") break;
      if (SteadyClock::now() >= deadline)
        return std::unexpected(fmt::format("{} in namespace {} is not up after {} s (state {})",
                                           side->interface, side->netns, kCarrierTimeout.count(),
                                           info->operstate));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (options.vlan) {
    auto port = AccessPort::start(lab->b_.netns, lab->prefix_ + "-vb", lab->prefix_ + "-vp",
                                  *options.vlan, options.pcp);
    if (!port) return std::unexpected(port.error());
    lab->access_ = std::move(*port);
  }
  return lab;
}

VethLab::~VethLab() {
  [[maybe_unused]] const auto ignored = teardown();
}

std::expected<void, std::string> VethLab::teardown() {
  access_.reset();  // its sockets live in namespace b
  if (!up_) return {};
  std::expected<void, std::string> result;
  // Deleting a namespace destroys the veth end inside it, and with it the peer.
  for (const VethSide* side : {&a_, &b_}) {
    if (!netns_exists(side->netns)) continue;
    if (auto deleted = ip({"netns", "delete", side->netns}); !deleted && result)
      result = std::unexpected(deleted.error());
  }
  up_ = !result;  // a failed deletion is tried again by the next call
  return result;
}

std::string VethLab::describe() const {
  return fmt::format("veth {} (netns {}, {}, {}, {}) <-> {} (netns {}, {}, {}, {}), MTU {}{}",
                     a_.interface, a_.netns, format_mac(a_.mac), format_ipv4(a_.ip),
                     format_gid(a_.ip6), b_.interface, b_.netns, format_mac(b_.mac),
                     format_ipv4(b_.ip), format_gid(b_.ip6), mtu_,
                     vlan_ ? fmt::format(", side b on VLAN {} priority {}", *vlan_, pcp_) : "");
}

}  // namespace roceconf::engine
