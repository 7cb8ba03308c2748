// The reference target as a separate process: `roceconf target` in its own network namespace,
// on one end of a veth pair the run creates (veth_lab.h), with the tester's raw socket on the
// other end and the control API over a UNIX socket. The same NIC as the in-process target, but
// on a real wire with real time. Whatever happens, the destructor leaves no process, namespace
// or file behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/port/raw_socket_port.h"
#include "dissector/udp.h"
#include "suite/engine/control_client.h"
#include "suite/engine/target.h"
#include "suite/engine/veth_lab.h"

namespace roceconf::engine {

struct DaemonTargetOptions {
  std::vector<std::string> quirks;  // --quirk NAME each
  std::uint16_t udp_port = Udp::kRocePort;
  std::uint16_t service_port = 7471;  // the responder's rdma_cm TCP port (--listen)
  int mtu = 9000;                     // the veth pair's
  // The roceconf executable; empty: this process's own (/proc/self/exe), right when the engine
  // runs inside the roceconf CLI. Anything else (tests, Python) passes the path.
  std::string roceconf_binary;
  std::chrono::milliseconds startup_timeout{10000};
  std::string lab_prefix;        // empty: VethLab's default
  bool stock_responder = false;  // the daemon's responder acts as a stock `rping -s`
  // A tagged lab (VethLabOptions::vlan, pcp): the daemon behind the lab's 802.1Q access port,
  // the tester's frames tagged (marking()).
  std::optional<std::uint16_t> lab_vlan;
  std::uint8_t lab_pcp = 0;
};

class DaemonTarget final : public Target {
 public:
  // Creates the lab, starts the daemon and waits until it answers `hello` (protocol 1). The
  // daemon gets SIGTERM if the thread that started it dies, so a crashed run leaves no process.
  static std::expected<std::unique_ptr<DaemonTarget>, std::string> start(
      const DaemonTargetOptions& options = {});

  ~DaemonTarget() override;
  DaemonTarget(const DaemonTarget&) = delete;
  DaemonTarget& operator=(const DaemonTarget&) = delete;

  std::string_view kind() const override { return "daemon"; }
  std::string describe() const override;
  // From the daemon's hello (name, node_guid, quirks) and this build (fw_ver); source
  // "built-in": the daemon is this roceconf.
  std::vector<std::pair<std::string, std::string>> identity() const override;
  Capabilities capabilities() const override { return {true, true}; }
  roceconf::Port& port() override { return *port_; }
  Endpoint tester() const override;
  Endpoint device() const override;
  std::uint16_t service_port() const override { return options_.service_port; }
  Marking marking() const override { return {options_.lab_vlan, options_.lab_pcp, 0}; }
  std::expected<nlohmann::json, std::string> control(const nlohmann::json& request) override;
  std::expected<void, std::string> reset() override;

  const VethLab& lab() const { return *lab_; }
  pid_t pid() const { return pid_; }
  const nlohmann::json& hello() const { return hello_; }  // the answer at startup
  std::string log_path() const;                           // the daemon's stdout and stderr
  std::string control_path() const;

 private:
  DaemonTarget() = default;
  bool daemon_running();
  std::string last_log_line() const;
  std::string exited_message() const;
  void stop_daemon();

  DaemonTargetOptions options_;
  std::string dir_;  // private temporary directory: control socket and log
  std::unique_ptr<VethLab> lab_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_status_ = -1;  // once reaped: exit code, or 128 + signal
  std::unique_ptr<ControlClient> client_;
  std::unique_ptr<RawSocketPort> port_;
  nlohmann::json hello_;
};

}  // namespace roceconf::engine
