#include "suite/engine/profile.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "dissector/address_text.h"

namespace roceconf::engine {
namespace {

constexpr std::array<std::string_view, 30> kKeys = {
    "interface",     "target_mac",     "target_ip",
    "tester_mac",    "tester_ip",      "target_ip6",
    "tester_ip6",    "service_port",   "udp_port",
    "netns",         "agent",          "agent_secret_file",
    "pmtu",          "capabilities",   "device_name",
    "vendor_id",     "vendor_part_id", "firmware",
    "node_guid",     "driver",         "kernel",
    "rdma_core",     "vlan",           "pcp",
    "dscp",          "cnp_scope",      "cnp_interval_us",
    "cc_monitor_us", "cc_recovery_us", "cc_ecn"};
constexpr std::array<std::uint32_t, 5> kPmtus = {256, 512, 1024, 2048, 4096};

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

std::optional<std::uint32_t> parse_number(std::string_view text) {
  std::uint32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// A 32-bit identifier as ibv_devinfo shows it: "0x02c9" (hex) or "4125" (decimal).
std::optional<std::uint32_t> parse_id(std::string_view text) {
  int base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    text.remove_prefix(2);
    base = 16;
  }
  std::uint32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<std::uint16_t> parse_port(std::string_view text) {
  const auto n = parse_number(text);
  if (!n || *n == 0 || *n > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(*n);
}

// Linux interface names: 1-15 bytes, no '/', ':' or whitespace, not "." or "..".
bool valid_interface(std::string_view name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '/' || c == ':' || c == ' ' || c == '\t' || static_cast<unsigned char>(c) < 0x21;
  });
}

// HOST:PORT, HOST a name, an IPv4 address or a bracketed IPv6 address.
bool valid_agent(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view host = text.substr(0, colon);
  if (host.find(':') != std::string_view::npos && !(host.front() == '[' && host.back() == ']'))
    return false;
  return parse_port(text.substr(colon + 1)).has_value();
}

std::expected<Capabilities, std::string> parse_capabilities(std::string_view text) {
  Capabilities caps{false, false};
  if (text.empty() || text == "none") return caps;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    if (item == "responder") {
      caps.responder = true;
    } else if (item == "control") {
      caps.control = true;
    } else if (item == "congestion-management" || item == "cc") {
      caps.congestion_management = true;
    } else {
      return std::unexpected(fmt::format(
          "unknown capability '{}' (known: responder, control, congestion-management (or cc); or "
          "'none')",
          item));
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return caps;
}

std::string mac_form(std::string_view key, std::string_view value) {
  return fmt::format("{} '{}' is not a MAC address (write it as aa:bb:cc:dd:ee:ff)", key, value);
}
std::string ip_form(std::string_view key, std::string_view value) {
  return fmt::format("{} '{}' is not an IPv4 address (write it as a.b.c.d, e.g. 192.0.2.2)", key,
                     value);
}
std::string ip6_form(std::string_view key, std::string_view value) {
  return fmt::format(
      "{} '{}' is not an IPv6 address (write it as RFC 4291 text, e.g. 2001:db8::2; an IPv4 "
      "address goes to {})",
      key, value, key == "target_ip6" ? "target_ip" : "tester_ip");
}
std::string port_form(std::string_view key, std::string_view value) {
  return fmt::format("{} '{}' is not a port number (1 to 65535)", key, value);
}

// One key's value into the profile; the error says what is wrong, without the location.
std::expected<void, std::string> set_key(Profile& p, std::string_view key, std::string_view value) {
  if (key == "interface") {
    if (!valid_interface(value))
      return std::unexpected(fmt::format(
          "interface '{}' is not an interface name (1 to 15 characters; see `ip link`)", value));
    p.interface = value;
  } else if (key == "target_mac" || key == "tester_mac") {
    const auto mac = parse_mac(value);
    if (!mac) return std::unexpected(mac_form(key, value));
    (key == "target_mac" ? p.target_mac : p.tester_mac) = *mac;
  } else if (key == "target_ip" || key == "tester_ip") {
    const auto ip = parse_ipv4(value);
    if (!ip) return std::unexpected(ip_form(key, value));
    (key == "target_ip" ? p.target_ip : p.tester_ip) = *ip;
  } else if (key == "target_ip6" || key == "tester_ip6") {
    const auto ip = parse_ipv6(value);
    if (!ip || gid_is_ipv4_mapped(*ip)) return std::unexpected(ip6_form(key, value));
    (key == "target_ip6" ? p.target_ip6 : p.tester_ip6) = *ip;
  } else if (key == "service_port" || key == "udp_port") {
    const auto port = parse_port(value);
    if (!port) return std::unexpected(port_form(key, value));
    (key == "service_port" ? p.service_port : p.udp_port) = *port;
  } else if (key == "netns") {
    p.netns = value;
  } else if (key == "agent") {
    if (!value.empty() && !valid_agent(value))
      return std::unexpected(fmt::format(
          "agent '{}' is not HOST:PORT (e.g. dut.example:7472 or [2001:db8::1]:7472)", value));
    p.agent = value;
  } else if (key == "agent_secret_file") {
    p.agent_secret_file = value;
  } else if (key == "vendor_id" || key == "vendor_part_id") {
    const auto n = parse_id(value);
    if (!n)
      return std::unexpected(fmt::format(
          "{} '{}' is not a number (write it as ibv_devinfo shows it, e.g. 0x02c9 or 4125)", key,
          value));
    if (key == "vendor_id")
      p.identity.vendor_id = fmt::format("{:#06x}", *n);
    else
      p.identity.vendor_part_id = std::to_string(*n);
  } else if (key == "node_guid") {
    auto guid = normalize_node_guid(value);
    if (!guid)
      return std::unexpected(
          fmt::format("node_guid '{}' is not a GUID (write it as ibv_devinfo shows it, e.g. "
                      "0c42:a103:0002:0003, or 0x0c42a10300020003)",
                      value));
    p.identity.node_guid = *guid;
  } else if (key == "device_name") {
    p.identity.name = value;
  } else if (key == "firmware") {
    p.identity.fw_ver = value;
  } else if (key == "driver") {
    p.identity.driver = value;
  } else if (key == "kernel") {
    p.identity.kernel = value;
  } else if (key == "rdma_core") {
    p.identity.rdma_core = value;
  } else if (key == "pmtu") {
    const auto n = parse_number(value);
    if (!n || std::find(kPmtus.begin(), kPmtus.end(), *n) == kPmtus.end())
      return std::unexpected(
          fmt::format("pmtu '{}' is not a path MTU (256, 512, 1024, 2048 or 4096)", value));
    p.pmtu = *n;
  } else if (key == "vlan" || key == "pcp" || key == "dscp") {
    // 802.1Q reserves VLAN IDs 0 (a priority tag alone) and 4095.
    const auto [what, high] = key == "vlan"  ? std::pair{"VLAN ID", 4094u}
                              : key == "pcp" ? std::pair{"priority", 7u}
                                             : std::pair{"DSCP", 63u};
    const std::uint32_t low = key == "vlan" ? 1 : 0;
    const auto n = parse_number(value);
    if (!n || *n < low || *n > high)
      return std::unexpected(
          fmt::format("{} '{}' is not a {} ({} to {})", key, value, what, low, high));
    if (key == "vlan") p.vlan = static_cast<std::uint16_t>(*n);
    if (key == "pcp") p.pcp = static_cast<std::uint8_t>(*n);
    if (key == "dscp") p.dscp = static_cast<std::uint8_t>(*n);
  } else if (key == "cnp_scope") {
    auto scope = parse_cnp_scope(value);
    if (!scope)
      return std::unexpected(fmt::format("cnp_scope '{}' is not qp, ip-pair or port", value));
    p.congestion.cnp_scope = *scope;
  } else if (key == "cc_ecn") {
    const auto n = parse_number(value);
    if (value != "any" && (!n || *n > 2))
      return std::unexpected(fmt::format(
          "cc_ecn '{}' is not the ECN the device's packets carry (0, 1, 2 or any)", value));
    p.congestion.ecn =
        value == "any" ? std::nullopt : std::optional<std::uint8_t>(static_cast<std::uint8_t>(*n));
  } else if (key == "cnp_interval_us" || key == "cc_monitor_us" || key == "cc_recovery_us") {
    const auto n = parse_number(value);
    if (!n || *n > 10'000'000 || (*n == 0 && key != "cnp_interval_us"))
      return std::unexpected(fmt::format("{} '{}' is not a time in microseconds ({} to 10000000)",
                                         key, value, key == "cnp_interval_us" ? 0 : 1));
    if (key == "cnp_interval_us") p.congestion.cnp_interval_us = *n;
    if (key == "cc_monitor_us") p.congestion.monitor_us = *n;
    if (key == "cc_recovery_us") p.congestion.recovery_us = *n;
  } else if (key == "capabilities") {
    auto caps = parse_capabilities(value);
    if (!caps) return std::unexpected(caps.error());
    p.capabilities = *caps;
  }
  return {};
}

// Keys whose value may be empty: empty means unset (or no capabilities).
bool may_be_empty(std::string_view key) {
  return key == "netns" || key == "agent" || key == "capabilities" || key == "agent_secret_file";
}

bool is_broadcast(const MacAddress& mac) {
  return std::all_of(mac.begin(), mac.end(), [](std::uint8_t b) { return b == 0xFF; });
}
bool is_zero(const MacAddress& mac) {
  return std::all_of(mac.begin(), mac.end(), [](std::uint8_t b) { return b == 0; });
}
bool is_multicast(const MacAddress& mac) {
  return (mac[0] & 0x01) != 0;
}

// Why `ip` cannot be a single device's address, or empty when it can.
std::string_view not_unicast(const Ipv4Address& ip) {
  if (ip == Ipv4Address{255, 255, 255, 255}) return "the broadcast address";
  if (ip[0] == 0) return "not a host address (0.0.0.0/8)";
  if (ip[0] == 127) return "a loopback address";
  if (ip[0] >= 224 && ip[0] <= 239) return "a multicast address";
  if (ip[0] >= 240) return "a reserved address (240.0.0.0/4)";
  return {};
}

// The same for an IPv6 address (RFC 4291 2.5, 2.7).
std::string_view not_unicast(const Ipv6Address& ip) {
  if (std::all_of(ip.begin(), ip.end() - 1, [](std::uint8_t b) { return b == 0; }))
    return ip[15] == 1 ? "the loopback address" : "not a host address (::)";
  if (ip[0] == 0xFF) return "a multicast address";
  return {};
}

}  // namespace

std::string_view cnp_scope_name(CnpScope scope) {
  switch (scope) {
    case CnpScope::kQp:
      return "qp";
    case CnpScope::kIpPair:
      return "ip-pair";
    case CnpScope::kPort:
      return "port";
  }
  return "qp";
}

std::optional<CnpScope> parse_cnp_scope(std::string_view text) {
  for (CnpScope s : {CnpScope::kQp, CnpScope::kIpPair, CnpScope::kPort})
    if (cnp_scope_name(s) == text) return s;
  return std::nullopt;
}

std::optional<std::string> normalize_node_guid(std::string_view text) {
  std::string hex;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    text.remove_prefix(2);
    hex = text;
  } else if (text.size() == 19) {
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (i % 5 == 4) {
        if (text[i] != ':') return std::nullopt;
      } else {
        hex += text[i];
      }
    }
  } else {
    hex = text;
  }
  if (hex.empty() || hex.size() > 16) return std::nullopt;
  for (char& c : hex) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  hex.insert(0, 16 - hex.size(), '0');
  return fmt::format("{}:{}:{}:{}", hex.substr(0, 4), hex.substr(4, 4), hex.substr(8, 4),
                     hex.substr(12, 4));
}

std::expected<Profile, std::string> parse_profile(std::string_view text, std::string_view source) {
  Profile p;
  p.source = source;
  std::map<std::string, int, std::less<>> seen;  // key -> line
  int number = 0;
  while (!text.empty()) {
    ++number;
    const auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (const auto hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    auto at = [&](const std::string& what) {
      return std::unexpected(fmt::format("{}:{}: {}", source, number, what));
    };

    const auto equals = line.find('=');
    if (equals == std::string_view::npos)
      return at(fmt::format("expected 'key = value', got '{}'", line));
    const std::string_view key = trim(line.substr(0, equals));
    const std::string_view value = trim(line.substr(equals + 1));
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
      return at(fmt::format("unknown key '{}' (known: {})", key, fmt::join(kKeys, ", ")));
    if (const auto first = seen.find(key); first != seen.end())
      return at(fmt::format("'{}' is set twice (first on line {}): keep one", key, first->second));
    seen.emplace(std::string(key), number);
    if (value.empty() && !may_be_empty(key)) return at(fmt::format("'{}' needs a value", key));
    if (auto set = set_key(p, key, value); !set) return at(set.error());
  }
  return p;
}

std::expected<Profile, std::string> load_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::unexpected(
        fmt::format("cannot read profile {}: no such file or no permission "
                    "(see suite/engine/PROFILE.md for its format)",
                    path));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_profile(text.str(), path);
}

std::expected<void, std::string> apply_overrides(Profile& p, const ProfileOverrides& o) {
  struct Item {
    std::string_view flag;
    std::string_view key;
    const std::optional<std::string>* value;
  };
  const Item items[] = {
      {"interface", "interface", &o.interface}, {"target-mac", "target_mac", &o.target_mac},
      {"target-ip", "target_ip", &o.target_ip}, {"tester-mac", "tester_mac", &o.tester_mac},
      {"tester-ip", "tester_ip", &o.tester_ip}, {"agent", "agent", &o.agent}};
  for (const Item& item : items) {
    if (!*item.value) continue;
    const std::string& value = **item.value;
    if (value.empty()) return std::unexpected(fmt::format("--{} needs a value", item.flag));
    if (auto set = set_key(p, item.key, value); !set) {
      // The same message as in a file, with the flag's name in front.
      return std::unexpected(fmt::format("--{}: {}", item.flag, set.error()));
    }
  }
  if (o.service_port) {
    if (*o.service_port == 0)
      return std::unexpected(std::string("--service-port: 0 is not a port number (1 to 65535)"));
    p.service_port = *o.service_port;
  }
  return {};
}

std::expected<void, std::string> validate(const Profile& p) {
  auto fail = [&](const std::string& what) {
    return std::unexpected(fmt::format("{}: {}", p.source, what));
  };
  if (p.interface.empty())
    return fail("no interface: add 'interface = NAME' (see `ip link`) or pass --interface");
  if (!p.target_mac)
    return fail(
        "no target_mac: add 'target_mac = aa:bb:cc:dd:ee:ff' (the device's MAC) or pass "
        "--target-mac");
  if (!p.target_ip)
    return fail(
        "no target_ip: add 'target_ip = a.b.c.d' (the device's IPv4 address) or pass "
        "--target-ip");
  if (!p.tester_ip)
    return fail("no tester_ip: add 'tester_ip = a.b.c.d' (this host's address on " + p.interface +
                ") or pass --tester-ip");

  // The safety rule: frames go to one device, never to a group of stations.
  const MacAddress& mac = *p.target_mac;
  if (is_broadcast(mac))
    return fail(
        "target_mac ff:ff:ff:ff:ff:ff is the broadcast address: the tester sends only "
        "to one device; give the device's own MAC");
  if (is_multicast(mac))
    return fail(
        fmt::format("target_mac {} is a multicast address: the tester sends only to one "
                    "device; give the device's own MAC",
                    format_mac(mac)));
  if (is_zero(mac)) return fail("target_mac 00:00:00:00:00:00 is not a device's MAC");
  if (const auto why = not_unicast(*p.target_ip); !why.empty())
    return fail(
        fmt::format("target_ip {} is {}: the tester sends only to one device; give the "
                    "device's own IPv4 address",
                    format_ipv4(*p.target_ip), why));
  if (p.tester_mac && (is_multicast(*p.tester_mac) || is_zero(*p.tester_mac)))
    return fail(
        fmt::format("tester_mac {} cannot be a source address: give a unicast MAC or "
                    "leave it out (the interface's)",
                    format_mac(*p.tester_mac)));
  if (const auto why = not_unicast(*p.tester_ip); !why.empty())
    return fail(fmt::format("tester_ip {} is {}: give this host's address on {}",
                            format_ipv4(*p.tester_ip), why, p.interface));
  if (*p.tester_ip == *p.target_ip)
    return fail(fmt::format("tester_ip and target_ip are both {}: they must be two hosts",
                            format_ipv4(*p.target_ip)));
  if (p.tester_mac && *p.tester_mac == mac)
    return fail(fmt::format("tester_mac and target_mac are both {}: they must be two stations",
                            format_mac(mac)));

  for (const auto& [key, ip] :
       {std::pair{"target_ip6", &p.target_ip6}, {"tester_ip6", &p.tester_ip6}})
    if (*ip)
      if (const auto why = not_unicast(**ip); !why.empty())
        return fail(fmt::format(
            "{} {} is {}: give {} IPv6 address", key, format_gid(**ip), why,
            std::string_view(key) == "target_ip6" ? "the device's own" : "this host's"));
  if (p.target_ip6 && p.tester_ip6 && *p.target_ip6 == *p.tester_ip6)
    return fail(fmt::format("tester_ip6 and target_ip6 are both {}: they must be two hosts",
                            format_gid(*p.target_ip6)));
  if (p.pcp && !p.vlan)
    return fail(
        "pcp without vlan: the priority travels in the 802.1Q tag; add 'vlan = ID' or remove pcp");
  if (!p.agent_secret_file.empty() && p.agent.empty())
    return fail(
        "agent_secret_file without agent: add 'agent = HOST:PORT' (roceconf-agent --control) or "
        "remove agent_secret_file");
  if (p.capabilities.control && p.agent.empty())
    return fail(
        "capability 'control' needs the DUT agent: add 'agent = HOST:PORT' (roceconf-agent "
        "--control on the DUT host) or pass --agent, or remove 'control' from 'capabilities'");
  return {};
}

}  // namespace roceconf::engine
