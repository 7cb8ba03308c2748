// `roceconf fleet merge REPORT.json... [--html FILE] [--json FILE]`: many devices' JSON reports
// merged into one fleet report (reports/fleet_report.h): a matrix of case x device, a summary
// per area and device, the cases where the devices disagree first, and the devices that failed
// their set-up. Exit 0 when every device ran and its certificate passes, 1 otherwise, 2 on bad
// input (a missing file, a file that is not a roceconf report).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace roceconf::cli {

struct FleetMergeArgs {
  std::vector<std::string> reports;
  std::optional<std::string> html, json;
  bool quiet = false;
};

int run_fleet_merge(const FleetMergeArgs& args);

void add_fleet_command(CLI::App& app, std::function<int()>& run);

}  // namespace roceconf::cli
