// `roceconf doctor`: the tester host's preflight for a raw run (suite/engine/TESTER_HOST.md).
// One line per check, ok, warning or error, each problem with the command that fixes it; exit 0
// (all ok), 1 (warnings) or 2 (errors, or a profile that does not load).
#pragma once

#include <expected>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace roceconf::cli {

struct RunArgs;

void add_doctor_command(CLI::App& app, std::function<int()>& run);

// `run --target raw` before any case: the checks as the report records them (check, "level:
// message"), or one line naming the first error, its fix and --skip-preflight. With
// --skip-preflight: {"skipped", ...}. A profile that does not load gives no checks here (opening
// the target reports it).
std::expected<std::vector<std::pair<std::string, std::string>>, std::string> run_preflight(
    const RunArgs& args);

}  // namespace roceconf::cli
