// `roceconf target --interface IF --ip A [--mac M] [--netns NS] [--quirk NAME ...]
// [--listen PORT] [--control PATH]`: runs the reference NIC as a daemon on a raw socket, with
// the control API on a UNIX socket, until SIGINT or SIGTERM.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dissector/udp.h"

namespace CLI {
class App;
}

namespace roceconf::cli {

struct TargetArgs {
  std::string interface;
  std::string netns;
  std::string mac;  // empty: the interface's
  std::string ip;
  std::string ip6;  // empty: no IPv6 GID
  std::uint16_t udp_port = Udp::kRocePort;
  std::vector<std::string> quirks;
  std::vector<std::string> pkeys;  // P_Key table entries after 0xFFFF
  std::optional<std::uint16_t> listen;
  std::uint32_t region_size = 64 * 1024;
  std::uint32_t recv_depth = 16;
  std::uint32_t recv_size = 4096;
  bool stock_responder = false;  // ResponderAppConfig::stock
  std::string control;           // empty: the default path
};

// Runs the daemon; stdout gets one line when it is ready, stderr at most one
// "roceconf: error: ..." line. Exit 0 after SIGINT/SIGTERM, 2 for user errors, 1 otherwise.
int run_target(const TargetArgs& args);

// Registers `target` on `app`; when the user picks it, `run` is set to the command to execute.
void add_target_command(CLI::App& app, std::function<int()>& run);

}  // namespace roceconf::cli
