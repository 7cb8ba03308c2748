// The raw target profile: how the suite reaches a real device through one of this host's
// interfaces (PROFILE.md). A small text file of `key = value` lines, overridden by command-line
// flags, then validated. The safety rule lives here: the tester only ever sends to one unicast
// MAC and one unicast IPv4 address (and one unicast IPv6 address, if given), the configured
// target.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "dissector/eth.h"
#include "dissector/ip.h"
#include "dissector/udp.h"
#include "suite/engine/target.h"

namespace roceconf::engine {

// What the profile says the device is (PROFILE.md, "Identity"), in the reports' forms: vendor_id
// "0x02c9", vendor_part_id decimal, node_guid "0c42:a103:0002:0003" (as ibv_devinfo shows them).
// With an agent these are expectations the agent's hello must match; without one, the identity.
struct ProfileIdentity {
  std::string name;  // the ibv device (mlx5_0)
  std::string vendor_id;
  std::string vendor_part_id;
  std::string fw_ver;
  std::string node_guid;
  std::string driver;
  std::string kernel;
  std::string rdma_core;
  bool empty() const {
    return name.empty() && vendor_id.empty() && vendor_part_id.empty() && fw_ver.empty() &&
           node_guid.empty() && driver.empty() && kernel.empty() && rdma_core.empty();
  }
};

struct Profile {
  std::string source = "<profile>";  // the file, for messages
  std::string interface;
  std::optional<MacAddress> target_mac;
  std::optional<Ipv4Address> target_ip;
  std::optional<MacAddress> tester_mac;  // unset: the interface's
  std::optional<Ipv4Address> tester_ip;
  // IPv6 addresses (RoCEv2 GIDs) of both sides; the IPv6 cases need both and SKIP otherwise.
  std::optional<Ipv6Address> target_ip6;
  std::optional<Ipv6Address> tester_ip6;
  std::uint16_t service_port = 7471;
  std::uint16_t udp_port = Udp::kRocePort;
  std::string netns;  // the interface's network namespace; empty: ours
  std::string agent;  // HOST:PORT of roceconf-agent's control API; empty: none
  // The file with the secret the agent asks for (CONTROL_API.md); empty: $ROCECONF_AGENT_SECRET.
  std::string agent_secret_file;
  std::uint32_t pmtu = 1024;  // the largest path MTU cases may negotiate
  // The tester's 802.1Q tag (VLAN ID 1-4094, priority 0-7) and IPv4 DSCP (0-63); no vlan: untagged.
  std::optional<std::uint16_t> vlan;
  std::optional<std::uint8_t> pcp;
  std::uint8_t dscp = 0;
  Capabilities capabilities{true, false};
  // With `cc` in capabilities: how the device paces CNPs and reacts to them.
  CongestionProfile congestion;
  ProfileIdentity identity;
};

// A node GUID as "0x0c42a10300020003", "0c42a10300020003" or "0c42:a103:0002:0003", in the last
// form; nullopt when it is none of them.
std::optional<std::string> normalize_node_guid(std::string_view text);

// Parses a profile's text; `source` names it in errors ("FILE:LINE: what, and what to do").
std::expected<Profile, std::string> parse_profile(std::string_view text,
                                                  std::string_view source = "<profile>");
std::expected<Profile, std::string> load_profile(const std::string& path);

// Command-line flags that take precedence over the file (--interface, --target-mac, ...).
struct ProfileOverrides {
  std::optional<std::string> interface;
  std::optional<std::string> target_mac;
  std::optional<std::string> target_ip;
  std::optional<std::string> tester_mac;
  std::optional<std::string> tester_ip;
  std::optional<std::uint16_t> service_port;
  std::optional<std::string> agent;  // HOST:PORT
};

// Errors name the flag and the form it needs.
std::expected<void, std::string> apply_overrides(Profile& profile,
                                                 const ProfileOverrides& overrides);

// Everything required is present and the target is one unicast station; the first problem
// found, one line.
std::expected<void, std::string> validate(const Profile& profile);

// The smallest interface MTU that carries a RoCEv2/IPv4 packet of `pmtu` payload bytes with
// the largest header stack (IPv4, UDP, BTH, RETH, ImmDt, ICRC).
constexpr int interface_mtu_for(std::uint32_t pmtu) {
  return static_cast<int>(pmtu) + 64;
}

}  // namespace roceconf::engine
