#include "cli/target_command.h"

#include <charconv>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string_view>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/decode_command.h"
#include "dissector/address_text.h"
#include "suite/reference_nic/daemon.h"

namespace roceconf::cli {

namespace {

constexpr int kExitFailure = 1;

int error(int status, std::string_view message) {
  std::string line(message);
  std::replace(line.begin(), line.end(), '\n', ' ');
  fmt::print(stderr, "roceconf: error: {}\n", line);
  return status;
}

}  // namespace

int run_target(const TargetArgs& args) {
  using namespace roceconf::target;
  DaemonOptions options;
  options.interface = args.interface;
  options.netns = args.netns;
  options.udp_port = args.udp_port;
  options.control_path = args.control;
  if (!args.mac.empty()) {
    options.mac = parse_mac(args.mac);
    if (!options.mac)
      return error(kExitUsage,
                   fmt::format("--mac '{}' is not a MAC address (aa:bb:cc:dd:ee:ff)", args.mac));
  }
  const auto ip = parse_ipv4(args.ip);
  if (!ip)
    return error(
        kExitUsage,
        fmt::format("--ip '{}' is not an IPv4 address (a.b.c.d, e.g. 192.0.2.2)", args.ip));
  options.ipv4 = *ip;
  if (!args.ip6.empty()) {
    const auto ip6 = parse_ipv6(args.ip6);
    if (!ip6 || gid_is_ipv4_mapped(*ip6))
      return error(kExitUsage, fmt::format("--ip6 '{}' is not an IPv6 address (e.g. 2001:db8::2; "
                                           "an IPv4 address goes to --ip)",
                                           args.ip6));
    options.ipv6 = *ip6;
  }
  for (const std::string& name : args.quirks) {
    if (auto enabled = options.quirks.enable(name); !enabled)
      return error(kExitUsage, fmt::format("--quirk: {}", enabled.error()));
  }
  for (const std::string& text : args.pkeys) {
    std::uint64_t v = 0;
    const bool hex = text.starts_with("0x") || text.starts_with("0X");
    const char* begin = text.data() + (hex ? 2 : 0);
    const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), v, hex ? 16 : 10);
    if (ec != std::errc() || end != text.data() + text.size() || v > 0xFFFF || (v & 0x7FFF) == 0)
      return error(
          kExitUsage,
          fmt::format("--pkey '{}' is not a valid P_Key (0x0001..0xFFFF, e.g. 0x9234)", text));
    options.pkeys.push_back(static_cast<std::uint16_t>(v));
  }
  if (args.listen) {
    ResponderAppConfig app;
    app.port = *args.listen;
    app.region_size = args.region_size;
    app.recv_depth = args.recv_depth;
    app.recv_buffer_size = args.recv_size;
    if (args.stock_responder) app = ResponderAppConfig::stock(*args.listen);
    options.responder = app;
  }

  auto daemon = Daemon::open(options);
  if (!daemon)
    return error(daemon.error().usage ? kExitUsage : kExitFailure, daemon.error().message);
  fmt::print("{}\n", (*daemon)->describe());
  std::fflush(stdout);
  const auto ran = (*daemon)->run();
  if (!ran) return error(ran.error().usage ? kExitUsage : kExitFailure, ran.error().message);
  return kExitOk;
}

void add_target_command(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<TargetArgs>();
  CLI::App* cmd = app.add_subcommand(
      "target",
      "Run the reference RoCEv2 NIC on an interface (raw socket), controlled over a UNIX socket "
      "speaking JSON lines, until SIGINT or SIGTERM");
  cmd->add_option("--interface", args->interface, "interface to bind the raw socket to")
      ->required();
  cmd->add_option("--netns", args->netns,
                  "network namespace of the interface (a name from `ip netns`, or a path)");
  cmd->add_option("--mac", args->mac, "the NIC's MAC address (default: the interface's)");
  cmd->add_option("--ip", args->ip, "the NIC's IPv4 address (its RoCEv2 GID is ::ffff:IP)")
      ->required();
  cmd->add_option("--ip6", args->ip6,
                  "the NIC's IPv6 address, a second RoCEv2 GID (default: none; the link-local "
                  "GID 0 only)");
  cmd->add_option("--udp-port", args->udp_port, "UDP destination port of RoCEv2")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  cmd->add_option("--quirk", args->quirks,
                  "switch on a defect by name (repeatable; an unknown name lists them all)");
  cmd->add_option("--pkey", args->pkeys,
                  "add a P_Key to the table after 0xFFFF (repeatable; 0x8000 bit = full member)");
  cmd->add_option("--listen", args->listen,
                  "run the built-in responder: accept rdma_cm connections on this TCP port "
                  "(see suite/reference_nic/RESPONDER_CONVENTION.md)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--region-size", args->region_size,
                  "responder: bytes of the memory region exposed per connection")
      ->check(CLI::Range(1u, 1u << 30))
      ->capture_default_str();
  cmd->add_option("--recv-depth", args->recv_depth,
                  "responder: receive WQEs kept posted per connection")
      ->check(CLI::Range(1, 16384))
      ->capture_default_str();
  cmd->add_option("--recv-size", args->recv_size, "responder: bytes per receive buffer")
      ->check(CLI::Range(1u, 1u << 24))
      ->capture_default_str();
  cmd->add_flag("--stock-responder", args->stock_responder,
                "responder: act as a stock `rping -s` listener (no RCNF block in the REP, one "
                "receive of 16 bytes), to see what a run against a device without the convention "
                "grades");
  cmd->add_option("--control", args->control,
                  "control socket path (default: $XDG_RUNTIME_DIR/roceconf-target.sock, else "
                  "/run/roceconf-target.sock)");
  cmd->callback([args, &run] { run = [args] { return run_target(*args); }; });
}

}  // namespace roceconf::cli
