// What the engine talks to: a device under test reached through a Port, with what it can do.
// Implementations: the in-process reference target (reference_target.h), the reference daemon
// on a veth pair the run creates (daemon_target.h), and a real device through an interface
// (raw_target.h). A case asks for capabilities; a target that lacks one makes the case SKIP.
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "capture/port/port.h"
#include "dissector/eth.h"
#include "dissector/ip.h"

namespace roceconf::engine {

// One side's addresses on the wire: the IPv4 address (its GID is ::ffff:a.b.c.d) and, when the
// side has one, an IPv6 address, itself a RoCEv2 GID (Annex A17.4.5.1). A case connects over
// the IPv4 GIDs unless it asks for the IPv6 ones (`gid=ipv6`).
struct Endpoint {
  MacAddress mac{};
  Ipv4Address ip{};
  std::optional<Ipv6Address> ip6{};
};

// How the SKIP reason of a case that needs the RCNF convention starts when the target's
// responder has none (Target::no_convention()); the run summary counts them by it.
inline constexpr std::string_view kNoConventionSkip = "no responder convention";

// How a device that runs congestion management paces its CNPs and reacts to them (Annex A17
// leaves both to the implementation): a raw profile's cnp_scope, cnp_interval_us,
// cc_monitor_us and cc_recovery_us (PROFILE.md); the reference target declares its own.
enum class CnpScope : std::uint8_t { kQp, kIpPair, kPort };
std::string_view cnp_scope_name(CnpScope scope);  // "qp", "ip-pair", "port"
std::optional<CnpScope> parse_cnp_scope(std::string_view text);

struct CongestionProfile {
  // At most one CNP per scope (a QP, a pair of IP addresses, the port) per interval.
  CnpScope cnp_scope = CnpScope::kQp;
  std::uint32_t cnp_interval_us = 50;
  // After a CNP the reaction point's rate must have fallen within the monitor period, and a
  // QP that gets no more CNPs must be back near its old rate within the recovery time.
  std::uint32_t monitor_us = 100;
  std::uint32_t recovery_us = 10000;
  // The ECN codepoint the device's own packets carry (a raw profile's cc_ecn, 0-2); unset: any
  // ECT (header/sent-framing grades it).
  std::optional<std::uint8_t> ecn;
};

struct Capabilities {
  // A responder application following the RCNF REP convention listens on service_port
  // (suite/reference_nic/RESPONDER_CONVENTION.md): wire-only cases can connect and move data.
  bool responder = false;
  // The control API (control/CONTROL_API.md): create QPs/CQs/MRs, post, poll, query,
  // counters. Cases that need it SKIP without it.
  bool control = false;
  // The largest path MTU the link to the target carries (a raw profile's `pmtu`); cases asking
  // for more SKIP.
  std::uint32_t max_pmtu = 4096;
  // RoCEv2 congestion management (a raw profile's `congestion-management` or `cc`): the device
  // may mark ECT/CE and set FECN/BECN; without it ECN must be 00 (CA17-5). The `cc` cases
  // (CNPs, rate reaction) need it and SKIP without it.
  bool congestion_management = false;
  CongestionProfile congestion{};
};

// How the tester marks its frames (a raw profile's vlan, pcp, dscp): an 802.1Q tag when `vlan`
// is set, and the IPv4 DSCP.
struct Marking {
  std::optional<std::uint16_t> vlan;
  std::uint8_t pcp = 0;
  std::uint8_t dscp = 0;
};

class Target {
 public:
  virtual ~Target() = default;

  virtual std::string_view kind() const = 0;  // "reference", "daemon", "raw"
  virtual std::string describe() const = 0;   // one line for reports
  virtual Capabilities capabilities() const = 0;

  // What the reports certify, as ordered key/value pairs: "name", "vendor_id",
  // "vendor_part_id", "fw_ver", "node_guid", "driver", "kernel", "rdma_core", "source" (where
  // the values came from: "agent hello", "profile", "built-in"). Empty values are left out.
  virtual std::vector<std::pair<std::string, std::string>> identity() const { return {}; }

  // The tester's port: frames sent here reach the target, its frames arrive here.
  virtual roceconf::Port& port() = 0;
  virtual Endpoint tester() const = 0;
  virtual Endpoint device() const = 0;
  virtual std::uint16_t service_port() const = 0;  // RCNF responder's rdma_cm TCP port
  virtual Marking marking() const { return {}; }   // untagged, DSCP 0 unless a profile says

  // One control-API request and its response (CONTROL_API.md). The error is a transport
  // failure (socket closed, no control capability), not a verbs error (that is ok=false).
  virtual std::expected<nlohmann::json, std::string> control(const nlohmann::json& request) = 0;

  // Called between cases. The in-process target and the daemon start a fresh NIC (cases are
  // isolated); an agent frees its session's resources; every remote target lets in-flight
  // traffic settle and drains the port.
  virtual std::expected<void, std::string> reset() = 0;

  // What a run learns of the responder on service_port from its REPs. A listener that is not
  // the RCNF convention's (a stock `rping -s`) answers the first REP of the run without a valid
  // block: from then on cases that need the convention SKIP instead of failing for want of
  // receive buffers and a region (RESPONDER_CONVENTION.md). A block once seen keeps the
  // convention: a later REP without one is the responder's failure, not a stock listener.
  void saw_rep(bool has_rcnf_block, std::string_view why_not) {
    if (has_rcnf_block) {
      convention_seen_ = true;
    } else if (!convention_seen_ && no_convention_.empty()) {
      no_convention_ = why_not.empty() ? std::string("no RCNF block") : std::string(why_not);
    }
  }
  // Empty while the convention holds (or nothing is known yet); else why it does not.
  const std::string& no_convention() const { return no_convention_; }

  // The run may send input meant to crash or wedge the device (`--destructive`): the cases
  // that need "destructive" (area robust) run only then, and SKIP otherwise.
  void set_destructive(bool on) { destructive_ = on; }
  bool destructive() const { return destructive_; }

 private:
  bool destructive_ = false;
  bool convention_seen_ = false;
  std::string no_convention_;
};

}  // namespace roceconf::engine
