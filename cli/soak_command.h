// `roceconf soak`: random concurrent traffic against a target with an oracle, periodic
// snapshots to JSON Lines, and on the first divergence a shrunk reproducer script
// (suite/soak/soak.h).
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace roceconf::cli {

// Exit status: 0 when the soak ran to its bound without a divergence, 1 when it found one (the
// reproducer is written) or was interrupted (the snapshots hold what ran), 2 for usage and
// set-up errors.
void add_soak_command(CLI::App& app, std::function<int()>& run);

}  // namespace roceconf::cli
