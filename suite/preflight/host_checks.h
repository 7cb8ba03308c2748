// The tester host's preflight (`roceconf doctor`, and `run --target raw` before any case): what on
// this host silently breaks a raw run (suite/engine/TESTER_HOST.md). Each check is one line, ok,
// warning or error, and a problem carries the exact command that fixes it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/engine/profile.h"

namespace roceconf::preflight {

enum class Level { ok, warning, error };

struct Check {
  std::string name;  // "rdma-device", "mtu", ...
  Level level = Level::ok;
  std::string message;
  std::string fix;  // the command that fixes it; empty when ok
};

// How the checks see the host: a command's standard output (nullopt when it could not run) and a
// file's text. Tests replace it; the default runs in the profile's network namespace.
struct HostView {
  std::function<std::optional<std::string>(const std::string& command)> run;
  std::function<std::optional<std::string>(const std::string& path)> read;
  bool net_raw = false;  // CAP_NET_RAW in our effective set
};

HostView system_view(const std::string& netns);

std::vector<Check> check_host(const engine::Profile& profile, const HostView& host);

// 0 all ok, 1 a warning, 2 an error.
int exit_status(const std::vector<Check>& checks);
std::string_view level_name(Level level);
std::string format_line(const Check& check);
nlohmann::json to_json(const std::vector<Check>& checks);

}  // namespace roceconf::preflight
