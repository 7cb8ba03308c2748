// Writes the sample run's HTML report to argv[1], for the browser check (html_in_chromium.sh).
#include <cstdio>

#include "reports/atomic_file.h"
#include "reports/html_writer.h"
#include "reports/test/sample_run.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: reports_sample_html OUTPUT.html\n");
    return 2;
  }
  using namespace roceconf::report;
  const auto written = write_file_atomic(argv[1], to_html(test::sample_run()));
  if (!written) {
    std::fprintf(stderr, "reports_sample_html: %s\n", written.error().c_str());
    return 1;
  }
  return 0;
}
