// `roceconf doctor`: the tester host's preflight for a raw run (suite/engine/TESTER_HOST.md).
// One line per check, ok, warning or error, each problem with the command that fixes it; exit 0
// (all ok), 1 (warnings) or 2 (errors, or a profile that does not load).
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace roceconf::cli {

void add_doctor_command(CLI::App& app, std::function<int()>& run);

}  // namespace roceconf::cli
