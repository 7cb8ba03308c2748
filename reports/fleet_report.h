// The fleet report: many devices' JSON reports (`roceconf run --json`, or the pytest plugin's
// --roceconf-fleet) merged into one, with a matrix of case x device, a summary per area and
// device, and the cases where the devices disagree first. Read from the JSON reports only, so
// reports of other hosts and older runs merge the same way.
#pragma once

#include <expected>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "reports/result.h"

namespace roceconf::report {

// One case on one device, as its report has it.
struct FleetCell {
  std::string verdict;  // pass, fail, skip, error, inconclusive
  std::string grade;    // the certificate's grade (pass, blocking, finding, waived, skipped)
  std::string reason;
  std::string failed_step;
  std::vector<FieldDiff> diffs;
};

struct FleetCase {
  std::string id, area, title, requirement;
  bool disagree = false;  // devices that ran it gave different verdicts
};

struct FleetDevice {
  // The column title: the device's label (pytest plugin) or its name, else the report's file
  // name; made unique across the fleet.
  std::string title;
  // Firmware, driver and quirks when known: "fw 22.36.1010 · mlx5_core".
  std::string version;
  std::string source;  // the report file
  std::string target;  // "reference: reference NIC in process ..."
  std::vector<std::pair<std::string, std::string>> identity;  // the report's device identity
  std::string headline;                                       // "NOT CONFORMANT", ...
  std::string line;                                           // the certificate's line
  int exit_status = 1;                                        // the certificate's
  // Not empty: the device failed its set-up (no route, agent down) and ran no case.
  std::string setup_error;
  std::string catalogue;  // "2026.12 (sha256 1a2b3c4d…)", empty when not recorded
  std::string started;
  double duration_s = 0;
  std::vector<FleetCase> cases;            // as the report lists them (catalogue order)
  std::map<std::string, FleetCell> cells;  // by case id
};

struct Fleet {
  std::string version;  // of the roceconf that merged (set by the caller)
  std::vector<FleetDevice> devices;
  std::vector<FleetCase> cases;            // every case of any device, in catalogue order
  std::vector<std::string> areas;          // in first-appearance order
  std::vector<std::size_t> disagreements;  // indexes into `cases`, in catalogue order
  std::vector<std::string> warnings;       // e.g. the devices ran different catalogues

  // A device's verdict counts over one area (all areas when empty).
  Counts counts(const FleetDevice& device, std::string_view area = {}) const;
  // 0 when every device ran and its certificate's exit status is 0; 1 otherwise.
  int exit_status() const;
};

// One device's report. The error is one line naming the file and what to give instead.
std::expected<FleetDevice, std::string> read_device_report(const std::string& path);
// The same from text already read (`source` names it).
std::expected<FleetDevice, std::string> parse_device_report(const std::string& text,
                                                            const std::string& source);

// The fleet of these devices, in this order; duplicate titles get the report's file name.
Fleet merge_fleet(std::vector<FleetDevice> devices);

// {"tool", "kind": "fleet", "version", "devices": [{"title", "version", "source", "target",
// "identity", "headline", "line", "exit_status", "setup_error", "catalogue", "started",
// "duration_s", "summary", "areas": {AREA: counts}}], "disagreements": [case ids], "cases":
// [{"id", "area", "title", "requirement", "disagree", "results": [per device, in the devices'
// order: null when it did not run there, else {"verdict", "grade", "reason", "failed_step",
// "diffs"}]}], "warnings"}. Counts as in the JSON report.
std::string fleet_to_json(const Fleet& fleet);

// Self-contained HTML: the devices, where they disagree, the summary per area and device, the
// matrix, and each case that did not pass with its reason and diff (linked from its cell).
std::string fleet_to_html(const Fleet& fleet);

// The terminal summary: one line per device, then the cases where they disagree.
std::string fleet_summary_text(const Fleet& fleet, bool color = false);

// The element id of a cell's details: "d<device index>-" + case_anchor(id).
std::string fleet_cell_anchor(std::size_t device, std::string_view case_id);

}  // namespace roceconf::report
