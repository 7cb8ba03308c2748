// `roceconf fuzz`: hostile wire input against a target (suite/fuzz/README.md).
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace roceconf::cli {

// Exit status: 0 when the bound was reached without a finding, 1 when something was found (each
// class's shrunk reproducer is written) or the run was interrupted, 2 for usage and set-up
// errors.
void add_fuzz_command(CLI::App& app, std::function<int()>& run);

}  // namespace roceconf::cli
