// What a run prints while it goes: a progress bar rewritten in place on a terminal, or one plain
// line per case when the output is a file or a pipe (CI logs), and the closing summary.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "reports/result.h"

namespace roceconf::report {

// "[=====>    ] 37/120 psn/gap-naks-once": `done` of `total` cases finished, `id` running.
std::string progress_bar(int done, int total, std::string_view id, int bar_width = 20);

// "[ 37/120] FAIL psn/gap-naks-once: reason" (no reason on a pass).
std::string case_line(const CaseResult& result, int index, int total, bool color = false);

// The table by area (area pass fail skip error inconc total, then "all"); the blocking cases,
// the findings and the waived cases with their reason, failed step and first diffs; every
// waiver and what became of it; then the certificate's headline line (certify()), the target,
// the device, and how many cases ran in how long with which seed.
std::string summary_text(const RunResult& run, bool color = false);

bool is_terminal(std::FILE* stream);

// Progress on `out`. On a terminal the bar is redrawn in place with \r and cases that did not
// pass stay above it as lines of their own; otherwise each case prints one line when it ends.
class Progress {
 public:
  Progress(std::FILE* out, int total) : Progress(out, total, is_terminal(out)) {}
  Progress(std::FILE* out, int total, bool tty);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { finish(); }

  void begin(std::string_view id);
  void end(const CaseResult& result);
  // Removes the bar from a terminal. Idempotent.
  void finish();

 private:
  void draw(std::string_view id);
  void clear();

  std::FILE* out_;
  int total_;
  bool tty_;
  int done_ = 0;
  bool drawn_ = false;
};

}  // namespace roceconf::report
