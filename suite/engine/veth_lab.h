// A private wire for the reference daemon: two network namespaces joined by a veth pair, made
// with iproute2's `ip` (run directly, no shell). Side a is the tester (192.0.2.1/24 and
// 2001:db8::1/64), side b the target (192.0.2.2/24, 2001:db8::2/64); TEST-NET-1 and the IPv6
// documentation prefix only, so nothing can leak to a real network. The
// lab removes everything it made when destroyed, and on creation removes what an earlier run
// with the same prefix left behind, and the labs of runs that died (sweep_stale_labs).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dissector/eth.h"
#include "dissector/ip.h"

namespace roceconf::engine {

struct VethLabOptions {
  // 1-12 letters, digits or '_' (PREFIX-va must fit IFNAMSIZ). Empty: "rcnf<pid>", with a
  // letter appended for each further lab of the same process.
  std::string prefix;
  // Both ends. 9000 leaves room for a 4096-byte path MTU.
  int mtu = 9000;
  // A tagged lab: side b's wire (PREFIX-vb) carries VLAN `vlan` only, and the target's address is
  // on PREFIX-vq, an untagged veth pair (PREFIX-vq <-> PREFIX-vp) inside namespace b. Between
  // PREFIX-vb and PREFIX-vp the lab runs an 802.1Q access port in user space, as a switch port or a
  // Linux VLAN sub-interface with an egress-qos-map would: it takes tag `vlan` off what arrives
  // (other frames are dropped) and tags what leaves with `vlan` at priority `pcp`. Side a stays
  // untagged: a tester there tags its own frames (a raw profile's vlan and pcp). In user space
  // so that it works on kernels without 802.1Q devices or bridges.
  std::optional<std::uint16_t> vlan;
  std::uint8_t pcp = 0;
};

struct VethSide {
  std::string netns;      // PREFIX-a / PREFIX-b
  std::string interface;  // PREFIX-va / PREFIX-vb (PREFIX-vq on a tagged lab's side b)
  MacAddress mac{};
  Ipv4Address ip{};
  Ipv6Address ip6{};  // 2001:db8::1 / ::2 (documentation prefix), added without DAD
};

class VethLab {
 public:
  // The error is one line; without the privilege it is the one the CLI shows for
  // `--target daemon`.
  static std::expected<std::unique_ptr<VethLab>, std::string> create(
      const VethLabOptions& options = {});

  ~VethLab();  // teardown(), errors ignored
  VethLab(const VethLab&) = delete;
  VethLab& operator=(const VethLab&) = delete;

  // Deletes both namespaces (and with them the veth pair). Idempotent.
  std::expected<void, std::string> teardown();

  const std::string& prefix() const { return prefix_; }
  const VethSide& tester() const { return a_; }
  const VethSide& target() const { return b_; }
  int mtu() const { return mtu_; }
  const std::optional<std::uint16_t>& vlan() const { return vlan_; }
  std::string describe() const;

 private:
  VethLab() = default;

  std::string prefix_;
  VethSide a_;
  VethSide b_;
  int mtu_ = 0;
  std::optional<std::uint16_t> vlan_;
  std::uint8_t pcp_ = 0;
  bool up_ = false;
  struct AccessPort;  // the tagged lab's 802.1Q port (veth_lab.cc)
  std::unique_ptr<AccessPort> access_;
};

// The run a lab namespace belongs to: PID for the names a default lab gets, rcnf<PID>-a and
// -b (rcnf<PID><letters>-a/-b for a process's further labs); nullopt for any other name.
std::optional<pid_t> lab_namespace_owner(std::string_view netns);

// Deletes the namespaces of labs whose run is gone: names lab_namespace_owner() knows, whose
// PID is no live process and which no process is inside. Any other namespace is never touched.
// Returns the names deleted; the error is the first deletion that failed.
std::expected<std::vector<std::string>, std::string> sweep_stale_labs();

// The message for a missing privilege.
inline constexpr char kDaemonNeedsRoot[] =
    "the daemon target needs root (network namespaces); run as root or use --target reference";

}  // namespace roceconf::engine
