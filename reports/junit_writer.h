// The JUnit XML report for CI: one <testsuite> per area (name = the area), one <testcase
// classname="roceconf.AREA" name="ID"> per case. fail -> <failure>, error -> <error
// type="error">, inconclusive -> <error type="inconclusive"> (CI must not count it as a pass),
// skip -> <skipped>. Each suite's <properties> name the target.
#pragma once

#include <string>

#include "reports/result.h"

namespace roceconf::report {

std::string to_junit_xml(const RunResult& run);

}  // namespace roceconf::report
