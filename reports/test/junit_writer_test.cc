#include "reports/junit_writer.h"

#include <gtest/gtest.h>

#include "reports/test/sample_run.h"
#include "reports/test/test_util.h"

namespace roceconf::report {
namespace {

// Well-formedness through an XML parser: xmllint if installed, else Python's xml.etree.
void expect_well_formed(const std::string& xml) {
  test::TempDir dir;
  const std::string path = dir.file("junit.xml");
  test::write_file(path, xml);
  if (test::have_program("xmllint")) {
    const auto r = test::run("xmllint --noout '" + path + "' 2>&1");
    EXPECT_EQ(r.status, 0) << r.output;
  } else if (test::have_program("python3")) {
    const auto r =
        test::run("python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' '" +
                  path + "' 2>&1");
    EXPECT_EQ(r.status, 0) << r.output;
  } else {
    GTEST_SKIP() << "neither xmllint nor python3 installed";
  }
}

int occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(JunitWriter, WellFormedWithSuitesPerArea) {
  const std::string xml = to_junit_xml(test::sample_run());
  expect_well_formed(xml);
  EXPECT_NE(xml.find("<testsuites name=\"roceconf\" tests=\"5\" failures=\"1\" errors=\"2\" "
                     "skipped=\"1\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testsuite name=\"psn\" tests=\"2\" failures=\"1\" errors=\"0\" "
                     "skipped=\"0\""),
            std::string::npos);
  EXPECT_NE(xml.find("<testsuite name=\"cm\" tests=\"2\" failures=\"0\" errors=\"2\" "
                     "skipped=\"0\""),
            std::string::npos);
  EXPECT_EQ(occurrences(xml, "<testsuite "), 3);
  EXPECT_EQ(occurrences(xml, "<testcase "), 5);
  EXPECT_EQ(occurrences(xml, "<failure "), 1);
  EXPECT_EQ(occurrences(xml, "<error "), 2);
  EXPECT_EQ(occurrences(xml, "<skipped "), 1);
  EXPECT_EQ(occurrences(xml, "\n    <properties>"), 3);    // one per suite
  EXPECT_EQ(occurrences(xml, "\n      <properties>"), 5);  // and one per case
  EXPECT_EQ(occurrences(xml, "name=\"grade\" value=\"blocking\""), 3);
}

TEST(JunitWriter, CaseElements) {
  const std::string xml = to_junit_xml(test::sample_run());
  EXPECT_NE(xml.find("<testcase classname=\"roceconf.psn\" name=\"psn/gap-naks-once\" "
                     "time=\"0.002500\""),
            std::string::npos);
  EXPECT_NE(xml.find("<failure message=\"expected one NAK &lt;PSN sequence error&gt;, got an "
                     "ACK\" type=\"fail\">step: psn/gap-naks-once.rcase:9 expect c NAK psn=1\n"
                     "bth.psn expected 0x000010 vs actual 0x000011\n"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<error message=\"round trip too noisy to judge the timer\" "
                     "type=\"inconclusive\">"),
            std::string::npos);
  EXPECT_NE(xml.find("<error message=\"control socket closed\" type=\"error\">"),
            std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"needs control: the target has no control API\"/>"),
            std::string::npos);
  EXPECT_NE(xml.find("<property name=\"target.kind\" value=\"reference\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<property name=\"target.quirks\" value=\"psn-gap-ack\"/>"),
            std::string::npos);
  // The failing case's timeline text carries the four records.
  EXPECT_NE(xml.find("+300.0us control poll_cq: SUCCESS RECV 64 B"), std::string::npos) << xml;
  EXPECT_NE(xml.find("+315.0us kernel-log rdma_rxe: qp#18 moved to error state [warn]\n"),
            std::string::npos);
  EXPECT_NE(xml.find("+320.0us counter rcv_packets +2 (40 → 42)\n"), std::string::npos);
}

TEST(JunitWriter, CitationAsTestcaseProperties) {
  const std::string xml = to_junit_xml(test::sample_run());
  const std::string pass = xml.substr(xml.find("name=\"psn/in-order-acks\""), std::string::npos);
  const std::string props = pass.substr(0, pass.find("</properties>"));
  EXPECT_NE(props.find("<property name=\"citation\" value=\"9.7.5.1; 9.7.5.1.1 C9-81\"/>"),
            std::string::npos)
      << props;
  EXPECT_NE(props.find("<property name=\"release\" value=\"IBA Vol 1 Release 1.2.1 + Annex "
                       "A17\"/>"),
            std::string::npos);
  EXPECT_NE(props.find("<property name=\"checked\" value=\"pib; unchecked: 9.7.5.1.1, "
                       "C9-81\"/>"),
            std::string::npos);
}

TEST(JunitWriter, AWaivedCaseIsSkippedWithItsReasonAndRealVerdict) {
  RunResult run = test::sample_run();
  run.waivers = {{"cm/mra", "", "timer out of reach", "w.txt:1"}};
  const std::string xml = to_junit_xml(run);
  EXPECT_NE(xml.find("<skipped message=\"waived (w.txt:1): timer out of reach (real verdict "
                     "inconclusive: round trip too noisy to judge the timer)\"/>"),
            std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("type=\"inconclusive\""), std::string::npos);
  EXPECT_NE(xml.find("<property name=\"waiver.reason\" value=\"timer out of reach\"/>"),
            std::string::npos);
  EXPECT_NE(xml.find("<property name=\"certificate.headline\" value=\"NOT CONFORMANT\"/>"),
            std::string::npos);
  EXPECT_NE(xml.find("<property name=\"device.name\" value=\"roceconf reference NIC\"/>"),
            std::string::npos);
  // The waived case counts as skipped: 1 error left, 2 skipped.
  EXPECT_NE(xml.find("tests=\"5\" failures=\"1\" errors=\"1\" skipped=\"2\""), std::string::npos)
      << xml.substr(0, 300);
}

TEST(JunitWriter, EscapesMarkupAndControlCharacters) {
  RunResult run = test::sample_run();
  CaseResult& c = run.cases[1];
  static constexpr char kReason[] = "a \"quoted\" <tag> & \x01\x1b[31m red\x7f and \0 nul";
  c.reason = std::string(kReason, sizeof kReason - 1);
  c.id = "psn/<weird>&'id'";
  c.area = "p&s<n>";
  c.failed_step = "step ]]> with\tcdata end \x02";
  c.diffs[0].actual = "\xff\xfe invalid utf-8";
  c.events[1].text = "text \x03 control";
  run.target_description = "eth0\nline two";
  const std::string xml = to_junit_xml(run);
  expect_well_formed(xml);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_EQ(xml.find('\x1b'), std::string::npos);
  EXPECT_EQ(xml.find(std::string(1, '\0')), std::string::npos);
  EXPECT_NE(xml.find("name=\"p&amp;s&lt;n&gt;\""), std::string::npos);
  EXPECT_NE(xml.find("value=\"eth0&#10;line two\""), std::string::npos);
}

}  // namespace
}  // namespace roceconf::report
