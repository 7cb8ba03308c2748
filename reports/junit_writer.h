// The JUnit XML report for CI: one <testsuite> per area (name = the area), one <testcase
// classname="roceconf.AREA" name="ID"> per case. fail -> <failure>, error -> <error
// type="error">, inconclusive -> <error type="inconclusive"> (CI must not count it as a pass),
// skip -> <skipped>; a waived case -> <skipped message="waived (FILE:LINE[, until DATE]): REASON
// (real verdict V: reason)">, counted as skipped. Each <testcase> has properties `verdict` (the
// real one), `grade` (pass, blocking, finding, waived, skipped), `requirement`, and
// `waiver.reason`, `waiver.until`, `waiver.where` when waived. Each suite's <properties> hold
// the certificate (`certificate.headline`, `certificate.line`), the target and device, the
// tester host, catalogue version and digest, seed, command line, profile, evidence SHA-256 and
// every waiver with its status.
#pragma once

#include <string>

#include "reports/result.h"

namespace roceconf::report {

std::string to_junit_xml(const RunResult& run);

}  // namespace roceconf::report
