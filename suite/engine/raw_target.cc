#include "suite/engine/raw_target.h"

#include <net/if.h>
#include <sys/ioctl.h>

#include <cstring>

#include <fmt/format.h>

#include "capture/port/raw_socket_port.h"
#include "control/auth.h"
#include "control/ops.h"
#include "dissector/address_text.h"

namespace roceconf::engine {
namespace {

constexpr std::size_t kEthHeader = 14;
constexpr std::size_t kVlanTag = 4;
constexpr std::uint16_t kEtherIpv4 = 0x0800;
constexpr std::uint16_t kEtherIpv6 = 0x86DD;
constexpr std::size_t kIpv6Destination = 24;  // offset in the IPv6 header
constexpr std::uint16_t kEtherVlan = 0x8100;
constexpr std::uint16_t kEtherQinQ = 0x88A8;
constexpr std::size_t kIpv4Destination = 16;  // offset in the IPv4 header

std::uint16_t be16(Bytes b, std::size_t at) {
  return static_cast<std::uint16_t>(b[at] << 8 | b[at + 1]);
}

PortError refuse(std::string why) {
  return {PortErrorCode::kPermission, "egress guard: frame not sent: " + std::move(why)};
}

}  // namespace

EgressGuardPort::EgressGuardPort(std::unique_ptr<Port> inner, const MacAddress& mac,
                                 const Ipv4Address& ip, std::optional<std::uint16_t> vlan,
                                 std::optional<Ipv6Address> ip6)
    : inner_(std::move(inner)), mac_(mac), ip_(ip), vlan_(vlan), ip6_(ip6) {}

std::expected<void, PortError> EgressGuardPort::send(Bytes frame) {
  if (frame.size() < kEthHeader)
    return std::unexpected(refuse(fmt::format("{} bytes is no Ethernet frame", frame.size())));
  MacAddress dst;
  std::memcpy(dst.data(), frame.data(), dst.size());
  if (dst != mac_)
    return std::unexpected(refuse(fmt::format("Ethernet destination {} is not the target's {}",
                                              format_mac(dst), format_mac(mac_))));
  std::size_t at = 12;
  std::uint16_t type = be16(frame, at);
  // On a VLAN the target is reached on that VLAN only: another ID is another network.
  if (vlan_) {
    if (type != kEtherVlan || frame.size() < at + kVlanTag)
      return std::unexpected(refuse(fmt::format("untagged: the target is on VLAN {}", *vlan_)));
    if (const std::uint16_t vid = be16(frame, at + 2) & 0x0FFF; vid != *vlan_)
      return std::unexpected(
          refuse(fmt::format("VLAN {} is not the target's VLAN {}", vid, *vlan_)));
  }
  while ((type == kEtherVlan || type == kEtherQinQ) && frame.size() >= at + kVlanTag + 2) {
    at += kVlanTag;
    type = be16(frame, at);
  }
  const std::size_t ip_start = at + 2;
  if (type == kEtherIpv6 && ip6_) {
    if (frame.size() < ip_start + kIpv6Destination + 16)
      return std::unexpected(refuse("IPv6 header cut short before its destination address"));
    Ipv6Address ip6;
    std::memcpy(ip6.data(), frame.data() + ip_start + kIpv6Destination, ip6.size());
    if (ip6 != *ip6_)
      return std::unexpected(refuse(fmt::format("IPv6 destination {} is not the target's {}",
                                                format_gid(ip6), format_gid(*ip6_))));
    return inner_->send(frame);
  }
  if (type != kEtherIpv4)
    return std::unexpected(refuse(
        fmt::format("ethertype {:#06x} is not IPv4{}: only RoCEv2 over IP to the target is sent",
                    type, ip6_ ? " or IPv6" : " (the profile gives the target no target_ip6)")));
  if (frame.size() < ip_start + kIpv4Destination + 4)
    return std::unexpected(refuse("IPv4 header cut short before its destination address"));
  Ipv4Address ip;
  std::memcpy(ip.data(), frame.data() + ip_start + kIpv4Destination, ip.size());
  if (ip != ip_)
    return std::unexpected(refuse(fmt::format("IPv4 destination {} is not the target's {}",
                                              format_ipv4(ip), format_ipv4(ip_))));
  return inner_->send(frame);
}

std::expected<std::size_t, std::string> settle_and_drain(Port& port, TimeNs quiet, TimeNs bound) {
  Clock& clock = port.clock();
  const TimeNs give_up = add_saturating(clock.now_ns(), bound);
  std::size_t dropped = 0;
  for (;;) {
    const TimeNs deadline = std::min(add_saturating(clock.now_ns(), quiet), give_up);
    auto frame = port.receive(deadline);
    if (!frame) return std::unexpected(frame.error().message);
    if (!*frame || clock.now_ns() >= give_up) return dropped;
    ++dropped;
  }
}

namespace {

std::string text_of(const nlohmann::json& device, std::string_view key) {
  const auto it = device.find(key);
  if (it == device.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  return {};
}

std::string number_of(const nlohmann::json& device, std::string_view key, bool hex) {
  const auto it = device.find(key);
  if (it == device.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) return {};
  const auto n = it->get<std::uint64_t>();
  return hex ? fmt::format("{:#06x}", n) : std::to_string(n);
}

// The hello's identity fields, in the report's order and forms, and the profile's name for each.
struct IdentityField {
  std::string_view key;
  std::string_view profile_key;
  std::string ProfileIdentity::*expected;
};
constexpr IdentityField kIdentityFields[] = {
    {"name", "device_name", &ProfileIdentity::name},
    {"vendor_id", "vendor_id", &ProfileIdentity::vendor_id},
    {"vendor_part_id", "vendor_part_id", &ProfileIdentity::vendor_part_id},
    {"fw_ver", "firmware", &ProfileIdentity::fw_ver},
    {"node_guid", "node_guid", &ProfileIdentity::node_guid},
    {"driver", "driver", &ProfileIdentity::driver},
    {"kernel", "kernel", &ProfileIdentity::kernel},
    {"rdma_core", "rdma_core", &ProfileIdentity::rdma_core}};

std::string from_hello(const nlohmann::json& hello, std::string_view key) {
  const auto device = hello.find("device");
  if (device == hello.end() || !device->is_object()) return {};
  if (key == "vendor_id") return number_of(*device, key, true);
  if (key == "vendor_part_id") return number_of(*device, key, false);
  if (key == "node_guid") return normalize_node_guid(text_of(*device, key)).value_or("");
  return text_of(*device, key);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> device_identity(const Profile& profile,
                                                                 const nlohmann::json* hello) {
  std::vector<std::pair<std::string, std::string>> out;
  bool from_agent = false, from_profile = false;
  for (const IdentityField& f : kIdentityFields) {
    std::string value = hello ? from_hello(*hello, f.key) : std::string();
    if (!value.empty()) {
      from_agent = true;
    } else if (!(profile.identity.*f.expected).empty()) {
      value = profile.identity.*f.expected;
      from_profile = true;
    }
    if (!value.empty()) out.emplace_back(f.key, std::move(value));
  }
  if (out.empty()) return out;
  out.emplace_back("source", from_agent && from_profile ? "agent hello, profile"
                             : from_agent               ? "agent hello"
                                                        : "profile");
  return out;
}

std::expected<void, std::string> check_identity(const Profile& profile,
                                                const nlohmann::json& hello) {
  for (const IdentityField& f : kIdentityFields) {
    const std::string& expected = profile.identity.*f.expected;
    const std::string got = from_hello(hello, f.key);
    if (expected.empty() || got.empty() || expected == got) continue;
    return std::unexpected(fmt::format(
        "{}: {} '{}' is not the device's: the agent at {} reports {} '{}' (is it the device "
        "the profile describes? correct the profile or --device of roceconf-agent)",
        profile.source, f.profile_key, expected, profile.agent, f.key, got));
  }
  return {};
}

std::expected<std::unique_ptr<RawTarget>, std::string> RawTarget::open(const Profile& profile) {
  if (auto valid = validate(profile); !valid) return std::unexpected(valid.error());
  RawSocketOptions options;
  options.interface = profile.interface;
  options.udp_port = profile.udp_port;
  options.netns = profile.netns;
  auto port = RawSocketPort::open(options);
  if (!port) return std::unexpected(port.error().message);

  std::unique_ptr<RawTarget> t(new RawTarget());
  t->profile_ = profile;
  // The socket lives in the interface's namespace, so the name resolves there.
  ifreq req{};
  std::memcpy(req.ifr_name, profile.interface.c_str(), profile.interface.size() + 1);
  if (ioctl((*port)->fd(), SIOCGIFMTU, &req) == 0) t->interface_mtu_ = req.ifr_mtu;
  if (t->interface_mtu_ > 0 && t->interface_mtu_ < interface_mtu_for(profile.pmtu)) {
    return std::unexpected(fmt::format(
        "{}: pmtu {} needs an MTU of at least {} on {} (it has {}): lower pmtu or raise the MTU",
        profile.source, profile.pmtu, interface_mtu_for(profile.pmtu), profile.interface,
        t->interface_mtu_));
  }
  t->tester_ = {profile.tester_mac.value_or((*port)->mac()), *profile.tester_ip,
                profile.tester_ip6};
  t->guard_ = std::make_unique<EgressGuardPort>(
      std::move(*port), *profile.target_mac, *profile.target_ip, profile.vlan, profile.target_ip6);
  if (!profile.agent.empty()) {
    auto secret = control::find_secret(profile.agent_secret_file);
    if (!secret) return std::unexpected(fmt::format("{}: {}", profile.source, secret.error()));
    t->secret_ = std::move(*secret);
    if (auto connected = t->connect_agent(); !connected) return std::unexpected(connected.error());
    if (auto same = check_identity(profile, t->agent_hello_); !same)
      return std::unexpected(same.error());
  }
  return t;
}

std::expected<void, std::string> RawTarget::connect_agent() {
  agent_.reset();
  auto client = ControlClient::connect_tcp(profile_.agent);
  if (!client) return std::unexpected(client.error());
  auto hello = (*client)->handshake(secret_);
  if (!hello) return std::unexpected(hello.error());
  if (!hello->value("ok", false))
    return std::unexpected(fmt::format("agent {}: hello failed: {}", profile_.agent,
                                       hello->value("error", std::string("(no error text)"))));
  if (hello->value("protocol", 0) != control::kProtocolVersion)
    return std::unexpected(fmt::format(
        "agent {} speaks control protocol {}, this roceconf speaks {}: use matching versions",
        profile_.agent, hello->value("protocol", 0), control::kProtocolVersion));
  agent_hello_ = std::move(*hello);
  agent_ = std::move(*client);
  return {};
}

std::string RawTarget::describe() const {
  return fmt::format(
      "raw target {} {} via {}{}{} (MTU {}, pmtu {}), tester {} {}, responder {} on port {}{}",
      format_mac(*profile_.target_mac),
      format_ipv4(*profile_.target_ip) +
          (profile_.target_ip6 ? " " + format_gid(*profile_.target_ip6) : std::string()),
      profile_.interface, profile_.netns.empty() ? "" : " in netns " + profile_.netns,
      (profile_.vlan ? fmt::format(" VLAN {} priority {}", *profile_.vlan, profile_.pcp.value_or(0))
                     : std::string()) +
          (profile_.dscp ? fmt::format(" DSCP {}", profile_.dscp) : std::string()),
      interface_mtu_, profile_.pmtu, format_mac(tester_.mac), format_ipv4(tester_.ip),
      profile_.capabilities.responder ? "yes" : "no", profile_.service_port,
      agent_ ? fmt::format(", agent {} ({})", profile_.agent,
                           agent_hello_.value("target", std::string("?")))
             : std::string());
}

std::expected<nlohmann::json, std::string> RawTarget::control(const nlohmann::json& request) {
  if (profile_.agent.empty())
    return std::unexpected(std::string("the raw target has no control API (needs the DUT agent)"));
  if (!agent_) {
    if (auto connected = connect_agent(); !connected) return std::unexpected(connected.error());
  }
  return agent_->request(request);
}

std::expected<void, std::string> RawTarget::reset() {
  auto drained = settle_and_drain(guard_->inner());
  if (!drained) return std::unexpected(drained.error());
  if (profile_.agent.empty()) return {};
  // The agent frees the session's resources on `reset`; a session that cannot (a lost
  // connection, an older agent) is replaced by a new one, which starts as fresh.
  if (agent_) {
    auto answer = agent_->request(nlohmann::json{{"op", "reset"}});
    if (answer && answer->value("ok", false)) return {};
  }
  return connect_agent();
}

}  // namespace roceconf::engine
