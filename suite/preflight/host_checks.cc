#include "suite/preflight/host_checks.h"

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "dissector/address_text.h"

namespace roceconf::preflight {
namespace {

std::optional<std::string> run_command(const std::string& command) {
  std::FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  int status = ::pclose(pipe);
  if (status != 0) return std::nullopt;
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

bool has_net_raw() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    unsigned long long caps = std::strtoull(line.c_str() + 7, nullptr, 16);
    return (caps >> 13) & 1;  // CAP_NET_RAW
  }
  return false;
}

Check ok(std::string name, std::string message) {
  return {std::move(name), Level::ok, std::move(message), {}};
}

// `ethtool -k` prints "feature: on" (or "on [fixed]").
std::optional<bool> feature_on(const std::string& text, const std::string& feature) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(feature + ":", 0) != 0) continue;
    return line.find(": on") != std::string::npos;
  }
  return std::nullopt;
}

}  // namespace

HostView system_view(const std::string& netns) {
  std::string prefix = netns.empty() ? std::string() : fmt::format("ip netns exec {} ", netns);
  HostView view;
  view.run = [prefix](const std::string& command) { return run_command(prefix + command); };
  // sysfs shows the namespace that mounted it: read it through the namespace's own mount.
  view.read = [prefix](const std::string& path) -> std::optional<std::string> {
    if (prefix.empty()) {
      std::ifstream in(path);
      if (!in) return std::nullopt;
      std::stringstream s;
      s << in.rdbuf();
      return s.str();
    }
    return run_command(prefix + "cat " + path);
  };
  view.net_raw = has_net_raw();
  return view;
}

std::vector<Check> check_host(const engine::Profile& profile, const HostView& host) {
  std::vector<Check> out;
  const std::string& ifname = profile.interface;
  const std::string sys = "/sys/class/net/" + ifname;

  out.push_back(host.net_raw
                    ? ok("privilege", "CAP_NET_RAW held")
                    : Check{"privilege", Level::error, "no CAP_NET_RAW: the raw socket cannot open",
                            "sudo setcap cap_net_raw,cap_net_admin+ep $(command -v "
                            "roceconf)  # or run as root"});

  auto mtu_text = host.read(sys + "/mtu");
  if (!mtu_text) {
    out.push_back({"interface", Level::error, fmt::format("no interface '{}' here", ifname),
                   "ip -br link  # and set `interface =` in the profile to one of them"});
    return out;
  }
  out.push_back(ok("interface", fmt::format("{} exists", ifname)));

  // A RoCE engine of the tester's own NIC takes UDP/4791 before the raw socket sees it.
  if (auto ib = host.run("ls " + sys + "/device/infiniband"); ib && !trim(*ib).empty()) {
    std::string dev = trim(*ib);
    if (auto nl = dev.find('\n'); nl != std::string::npos) dev.resize(nl);
    std::string fix = dev.rfind("mlx5", 0) == 0
                          ? fmt::format(
                                "devlink dev param set pci/$(basename $(readlink {}/device)) name "
                                "enable_roce value false cmode driverinit && devlink dev reload "
                                "pci/$(basename $(readlink {}/device))",
                                sys, sys)
                          : fmt::format(
                                "turn RoCE off on {} for the run (the driver's devlink enable_roce "
                                "parameter), or use a port without RDMA",
                                dev);
    out.push_back({"rdma-device", Level::error,
                   fmt::format("{} has RDMA device {}: its RoCE engine takes the DUT's UDP/4791 "
                               "answers",
                               ifname, dev),
                   fix});
  } else {
    out.push_back(ok("rdma-device", fmt::format("{} has no RDMA device of its own", ifname)));
  }

  // Soft-RoCE on the interface consumes UDP/4791 in the kernel.
  if (auto links = host.run("rdma link show")) {
    std::istringstream in(*links);
    std::string line;
    bool found = false;
    while (std::getline(in, line)) {
      // "link rxe0/1 state ACTIVE physical_state LINK_UP netdev veth0"
      auto pos = line.find(" netdev " + ifname);
      if (pos == std::string::npos) continue;
      auto end = pos + 8 + ifname.size();
      if (end < line.size() && line[end] != ' ') continue;
      std::string name = line.substr(5, line.find('/') - 5);
      out.push_back(
          {"rdma-link", Level::error,
           fmt::format("RDMA link {} sits on {}: the kernel consumes UDP/4791", name, ifname),
           fmt::format("rdma link delete {}", name)});
      found = true;
    }
    if (!found) out.push_back(ok("rdma-link", fmt::format("no RDMA link on {}", ifname)));
  } else {
    out.push_back(ok("rdma-link", "no `rdma` tool or no RDMA subsystem: no rxe link possible"));
  }

  // The tester IP owned by the kernel: it answers the DUT's RoCE packets with ICMP.
  if (profile.tester_ip) {
    std::string ip = format_ipv4(*profile.tester_ip);
    auto addrs = host.run("ip -4 -o addr show");
    bool owned = false;
    std::string owner, prefix;
    if (addrs) {
      std::istringstream in(*addrs);
      std::string line;
      while (std::getline(in, line)) {
        if (line.find(" inet " + ip + "/") == std::string::npos) continue;
        owned = true;
        std::istringstream words(line);
        std::string idx, dev, family, cidr;
        words >> idx >> dev >> family >> cidr;
        owner = dev;
        prefix = cidr;
      }
    }
    if (owned)
      out.push_back({"tester-ip", Level::warning,
                     fmt::format("tester IP {} is owned by the kernel ({}): it answers the DUT's "
                                 "RoCE packets with ICMP port unreachable",
                                 ip, owner),
                     fmt::format("ip addr del {} dev {}  # or pick a tester_ip the kernel does "
                                 "not own",
                                 prefix, owner)});
    else
      out.push_back(ok("tester-ip", fmt::format("tester IP {} is not the kernel's", ip)));
  }

  // The kernel's neighbour entry for the target, if it has one, must agree with target_mac.
  if (profile.target_ip && profile.target_mac) {
    std::string ip = format_ipv4(*profile.target_ip);
    std::string mac = format_mac(*profile.target_mac);
    auto neigh = host.run(fmt::format("ip neigh show {} dev {}", ip, ifname));
    auto at = neigh ? neigh->find("lladdr ") : std::string::npos;
    if (at == std::string::npos)
      out.push_back(ok("neighbour", fmt::format("no neighbour entry for {} (the probe asks)", ip)));
    else {
      std::string seen = neigh->substr(at + 7, 17);
      if (seen == mac)
        out.push_back(ok("neighbour", fmt::format("{} is at {}", ip, mac)));
      else
        out.push_back(
            {"neighbour", Level::error,
             fmt::format("{} is at {} in the neighbour table, the profile says {}", ip, seen, mac),
             fmt::format("set `target_mac = {}` in the profile (or check the DUT's "
                         "port)",
                         seen)});
    }
  }

  int mtu = std::atoi(mtu_text->c_str());
  int need = engine::interface_mtu_for(profile.pmtu) + (profile.vlan ? 4 : 0);
  if (mtu < need)
    out.push_back({"mtu", Level::error,
                   fmt::format("{} MTU {} is below {} (pmtu {} plus headers{})", ifname, mtu, need,
                               profile.pmtu, profile.vlan ? " and the VLAN tag" : ""),
                   fmt::format("ip link set dev {} mtu {}", ifname, need)});
  else
    out.push_back(ok("mtu", fmt::format("{} MTU {} carries pmtu {}", ifname, mtu, profile.pmtu)));

  // Offloads that change frames before the raw socket sees them.
  if (auto k = host.run("ethtool -k " + ifname)) {
    std::vector<std::pair<std::string, std::string>> on;  // feature, ethtool -K word
    for (auto [feature, word] :
         std::array<std::pair<const char*, const char*>, 3>{{{"generic-receive-offload", "gro"},
                                                             {"large-receive-offload", "lro"},
                                                             {"rx-vlan-offload", "rxvlan"}}}) {
      auto state = feature_on(*k, feature);
      if (state && *state && k->find(std::string(feature) + ": on [fixed]") == std::string::npos)
        on.emplace_back(feature, word);
    }
    if (on.empty())
      out.push_back(ok("offloads", fmt::format("{}: GRO, LRO and rx-vlan offload off", ifname)));
    else {
      std::string names, words;
      for (auto& [f, w] : on) {
        names += (names.empty() ? "" : ", ") + f;
        words += " " + w + " off";
      }
      out.push_back({"offloads", Level::warning,
                     fmt::format("{}: {} on: frames change before the raw socket", ifname, names),
                     fmt::format("ethtool -K {}{}", ifname, words)});
    }
  } else {
    out.push_back({"offloads", Level::warning,
                   fmt::format("could not read {}'s offloads (no ethtool?)", ifname),
                   "apt-get install ethtool"});
  }
  return out;
}

int exit_status(const std::vector<Check>& checks) {
  int worst = 0;
  for (const auto& c : checks) worst = std::max(worst, static_cast<int>(c.level));
  return worst;
}

std::string_view level_name(Level level) {
  switch (level) {
    case Level::ok:
      return "ok";
    case Level::warning:
      return "warning";
    case Level::error:
      return "error";
  }
  return "?";
}

std::string format_line(const Check& c) {
  std::string line = fmt::format("{:<7} {:<12} {}", level_name(c.level), c.name, c.message);
  if (!c.fix.empty()) line += fmt::format("\n        fix: {}", c.fix);
  return line;
}

nlohmann::json to_json(const std::vector<Check>& checks) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& c : checks)
    list.push_back({{"check", c.name},
                    {"level", level_name(c.level)},
                    {"message", c.message},
                    {"fix", c.fix}});
  return {{"checks", list}, {"status", exit_status(checks)}};
}

}  // namespace roceconf::preflight
