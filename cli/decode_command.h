// `roceconf decode FILE`: prints each frame of a pcap/pcapng capture as a one-line summary
// (default), as JSON Lines (--json), totals and decode speed (--stats), or per request channel
// what the PSN analysis saw and whether the capture can grade the responder (--connections), or
// one capture per connection (--split-by-connection DIR, cli/split_command.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "dissector/udp.h"

namespace CLI {
class App;
}

namespace roceconf::cli {

struct DecodeArgs {
  std::string file;
  bool json = false;
  bool stats = false;
  bool connections = false;
  std::string split_dir;  // --split-by-connection: write one capture per connection here
  std::uint16_t udp_port = Udp::kRocePort;
  bool no_icrc = false;
};

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;  // bad arguments, unreadable or corrupt input

// Runs the command; stdout gets the output, stderr at most one "roceconf: error: ..." line.
int run_decode(const DecodeArgs& args);

// Registers `decode` on `app`; when the user picks it, `run` is set to the command to execute.
void add_decode_command(CLI::App& app, std::function<int()>& run);

}  // namespace roceconf::cli
