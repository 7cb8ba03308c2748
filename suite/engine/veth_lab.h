// A private wire for the reference daemon: two network namespaces joined by a veth pair, made
// with iproute2's `ip` (run directly, no shell). Side a is the tester (192.0.2.1/24), side b the
// target (192.0.2.2/24); TEST-NET-1 addresses only, so nothing can leak to a real network. The
// lab removes everything it made when destroyed, and on creation removes what an earlier run
// with the same prefix left behind.
#pragma once

#include <expected>
#include <memory>
#include <string>

#include "dissector/eth.h"
#include "dissector/ip.h"

namespace roceconf::engine {

struct VethLabOptions {
  // 1-12 letters, digits or '_' (PREFIX-va must fit IFNAMSIZ). Empty: "rcnf<pid>", with a
  // letter appended for each further lab of the same process.
  std::string prefix;
  // Both ends. 9000 leaves room for a 4096-byte path MTU.
  int mtu = 9000;
};

struct VethSide {
  std::string netns;      // PREFIX-a / PREFIX-b
  std::string interface;  // PREFIX-va / PREFIX-vb
  MacAddress mac{};
  Ipv4Address ip{};
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
  std::string describe() const;

 private:
  VethLab() = default;

  std::string prefix_;
  VethSide a_;
  VethSide b_;
  int mtu_ = 0;
  bool up_ = false;
};

// The message for a missing privilege.
inline constexpr char kDaemonNeedsRoot[] =
    "the daemon target needs root (network namespaces); run as root or use --target reference";

}  // namespace roceconf::engine
