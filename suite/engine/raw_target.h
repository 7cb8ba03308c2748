// A real device reached through one of this host's interfaces, described by a profile
// (profile.h, PROFILE.md): the wire, and the control API when the profile names a DUT agent
// (roceconf-agent --control, over TCP). Every frame the tester sends passes
// an egress guard that refuses anything not addressed to the configured target, so a case (or
// a bug) can never put traffic on the network for anyone else.
#pragma once

#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capture/port/port.h"
#include "suite/engine/control_client.h"
#include "suite/engine/profile.h"
#include "suite/engine/target.h"

namespace roceconf::engine {

// A Port that sends only frames to one MAC and one IPv4 address, or the one IPv6 address `ip6`
// when given (through 802.1Q/802.1ad tags), and with `vlan` only frames whose outer tag carries
// that VLAN ID; anything else, RoCEv1 and IPv6 without `ip6` included, is refused with
// kPermission and never sent. Receiving is the inner port's.
class EgressGuardPort final : public Port {
 public:
  EgressGuardPort(std::unique_ptr<Port> inner, const MacAddress& mac, const Ipv4Address& ip,
                  std::optional<std::uint16_t> vlan = std::nullopt,
                  std::optional<Ipv6Address> ip6 = std::nullopt);

  std::expected<void, PortError> send(Bytes frame) override;
  std::expected<std::optional<ReceivedFrame>, PortError> receive(TimeNs deadline) override {
    return inner_->receive(deadline);
  }
  std::string_view name() const override { return inner_->name(); }
  Clock& clock() override { return inner_->clock(); }

  Port& inner() { return *inner_; }

 private:
  std::unique_ptr<Port> inner_;
  MacAddress mac_;
  Ipv4Address ip_;
  std::optional<std::uint16_t> vlan_;
  std::optional<Ipv6Address> ip6_;
};

// Between cases on a remote target: waits until the port has been quiet for `quiet`, receiving
// and dropping what arrives, for at most `bound`. Returns the number of frames dropped.
inline constexpr TimeNs kSettleQuietNs = 2'000'000;
inline constexpr TimeNs kSettleBoundNs = 50'000'000;
std::expected<std::size_t, std::string> settle_and_drain(Port& port, TimeNs quiet = kSettleQuietNs,
                                                         TimeNs bound = kSettleBoundNs);

// The device's identity (Target::identity()): from the agent's hello when there is one, with the
// profile's identity keys filling what the hello lacks; from the profile alone without an agent.
std::vector<std::pair<std::string, std::string>> device_identity(const Profile& profile,
                                                                 const nlohmann::json* hello);
// The profile's identity keys are expectations when an agent answers: the first one the hello
// contradicts, as one line (the run must not certify another device than the one described).
std::expected<void, std::string> check_identity(const Profile& profile,
                                                const nlohmann::json& hello);

class RawTarget final : public Target {
 public:
  // Validates the profile, opens a raw socket on its interface (in its namespace, if any),
  // checks that the interface's MTU carries the profile's pmtu and, with an agent, connects to
  // it (authenticating with agent_secret_file, or $ROCECONF_AGENT_SECRET, when the agent asks),
  // checks that it speaks protocol 1 and that it is the device the profile's identity keys
  // describe.
  static std::expected<std::unique_ptr<RawTarget>, std::string> open(const Profile& profile);

  std::string_view kind() const override { return "raw"; }
  std::string describe() const override;
  std::vector<std::pair<std::string, std::string>> identity() const override {
    return device_identity(profile_, agent_ ? &agent_hello_ : nullptr);
  }
  Capabilities capabilities() const override {
    return {profile_.capabilities.responder, agent_ != nullptr, profile_.pmtu,
            profile_.capabilities.congestion_management, profile_.congestion};
  }
  roceconf::Port& port() override { return *guard_; }
  Endpoint tester() const override { return tester_; }
  Endpoint device() const override {
    return {*profile_.target_mac, *profile_.target_ip, profile_.target_ip6};
  }
  std::uint16_t service_port() const override { return profile_.service_port; }
  Marking marking() const override {
    return {profile_.vlan, profile_.pcp.value_or(0), profile_.dscp};
  }
  std::expected<nlohmann::json, std::string> control(const nlohmann::json& request) override;
  std::expected<void, std::string> reset() override;

  const Profile& profile() const { return profile_; }
  int interface_mtu() const { return interface_mtu_; }
  const nlohmann::json& agent_hello() const { return agent_hello_; }

 private:
  RawTarget() = default;

  Profile profile_;
  Endpoint tester_;
  int interface_mtu_ = 0;
  std::unique_ptr<EgressGuardPort> guard_;
  // The agent's session: reset() sends it `reset` (or starts a new one), so the agent frees
  // whatever the previous case left (QPs, MRs, CQs, PDs) and every case starts clean.
  std::unique_ptr<ControlClient> agent_;
  nlohmann::json agent_hello_;
  std::optional<std::string> secret_;
  std::expected<void, std::string> connect_agent();
};

}  // namespace roceconf::engine
