#include "reports/html_writer.h"

#include <gtest/gtest.h>

#include <regex>

#include "reports/test/sample_run.h"

namespace roceconf::report {
namespace {

int occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The text of the element that starts at `open_tag` up to the matching `close_tag` (no nesting
// of the same tag in what we look at).
std::string slice(const std::string& html, const std::string& open_tag,
                  const std::string& close_tag) {
  const std::size_t from = html.find(open_tag);
  if (from == std::string::npos) return {};
  const std::size_t to = html.find(close_tag, from);
  return html.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

TEST(HtmlWriter, HeaderAndSummary) {
  const std::string html = to_html(test::sample_run());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<meta name=\"viewport\""), std::string::npos);
  EXPECT_NE(html.find("in-process reference NIC, quirks: psn-gap-ack"), std::string::npos);
  EXPECT_NE(html.find("2023-11-14T22:13:20Z"), std::string::npos);
  EXPECT_NE(html.find("41.0 µs"), std::string::npos);  // round trip
  EXPECT_NE(html.find("2.0 ms"), std::string::npos);   // silence window
  const std::string summary = slice(html, "<table class=\"summary\"", "</table>");
  ASSERT_FALSE(summary.empty());
  for (const char* header : {"Pass", "Fail", "Skip", "Error", "Inconclusive", "Total"})
    EXPECT_NE(summary.find(header), std::string::npos) << header;
  EXPECT_NE(summary.find(">psn</a></td><td class=\"n\">1</td><td class=\"n\">1</td>"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find(">cq</a>"), std::string::npos);
  EXPECT_NE(summary.find("NOT TESTED"), std::string::npos);  // cq: only a skip
  EXPECT_NE(summary.find(">cm</a>"), std::string::npos);
  EXPECT_NE(summary.find("NOT CONFORMANT"), std::string::npos);
  EXPECT_EQ(overall_verdict(test::sample_run()), "NOT CONFORMANT");
}

TEST(HtmlWriter, FailingCaseOpenWithDiffAndLadder) {
  const std::string html = to_html(test::sample_run());
  const std::string section =
      slice(html, "<section class=\"case c-fail\" id=\"case-psn-gap-naks-once\">", "</section>");
  ASSERT_FALSE(section.empty()) << html;
  EXPECT_NE(section.find("<details open>"), std::string::npos);
  EXPECT_NE(section.find("A PSN gap draws exactly one NAK"), std::string::npos);
  EXPECT_NE(section.find("IBA Vol 1 9.7.5.1.2 (C9-112)"), std::string::npos);
  EXPECT_NE(section.find("MUST"), std::string::npos);
  EXPECT_NE(section.find("badge b-fail\">FAIL"), std::string::npos);
  EXPECT_NE(section.find("expected one NAK &lt;PSN sequence error&gt;, got an ACK"),
            std::string::npos);
  EXPECT_NE(section.find("psn/gap-naks-once.rcase:9 expect c NAK psn=1"), std::string::npos);
  const std::string diff = slice(section, "<table class=\"diff\">", "</table>");
  EXPECT_NE(diff.find("<td><code>bth.psn</code></td><td class=\"expected\">0x000010</td><td "
                      "class=\"actual\">0x000011</td>"),
            std::string::npos)
      << diff;
  EXPECT_NE(section.find("bth.psn expected 0x000010 vs actual 0x000011"), std::string::npos);
  EXPECT_NE(section.find("aeth.syndrome expected 0x60 (NAK PSN sequence error) vs actual 0x1f "
                         "(ACK)"),
            std::string::npos);

  const std::string ladder = slice(section, "<div class=\"ladder\">", "</ol>");
  ASSERT_FALSE(ladder.empty());
  EXPECT_EQ(occurrences(ladder, "<li class=\"ev sent\""), 2);
  EXPECT_EQ(occurrences(ladder, "<li class=\"ev recv\""), 2);
  EXPECT_EQ(occurrences(ladder, "<li class=\"ev ctl\""), 2);
  EXPECT_EQ(occurrences(ladder, "<li class=\"ev failed\""), 1);
  EXPECT_EQ(occurrences(ladder, "<details class=\"hex\">"), 4);
  EXPECT_NE(ladder.find("poll_cq: SUCCESS RECV 64 B"), std::string::npos);
  EXPECT_NE(ladder.find("0000  02 00 00 00 00 02 02 00  00 00 00 01 08 00 45 00"),
            std::string::npos)
      << ladder;
  // Time order with relative times: the expectation at +40 µs comes before the ACK at +55 µs.
  const std::size_t met = ladder.find("+40.0 µs");
  const std::size_t ack = ladder.find("+55.0 µs");
  ASSERT_NE(met, std::string::npos);
  ASSERT_NE(ack, std::string::npos);
  EXPECT_LT(ladder.find("+10.0 µs"), met);
  EXPECT_LT(met, ack);
  EXPECT_LT(ack, ladder.find("+310.0 µs"));
  // The counter change and the kernel line: kinds of their own, on the same clock, named by the
  // legend.
  EXPECT_NE(ladder.find("<li class=\"ev klog\" data-kind=\"kernel-log\"><span "
                        "class=\"t\">+315.0 µs</span>"),
            std::string::npos)
      << ladder;
  EXPECT_NE(ladder.find("<li class=\"ev ctr\" data-kind=\"counter\"><span "
                        "class=\"t\">+320.0 µs</span>"),
            std::string::npos);
  EXPECT_NE(ladder.find("rcv_packets +2 (40 → 42)"), std::string::npos);
  EXPECT_LT(ladder.find("+310.0 µs"), ladder.find("rdma_rxe: qp#18 moved to error state"));
  const std::string legend = slice(ladder, "<div class=\"legend\">", "</div>");
  for (const char* record : {"packets", "control API", "counter changes", "device kernel log"})
    EXPECT_NE(legend.find(record), std::string::npos) << record;
}

TEST(HtmlWriter, CitationRuleAndTraceabilityAppendix) {
  const std::string html = to_html(test::sample_run());
  const std::string section =
      slice(html, "<section class=\"case c-pass ok\" id=\"case-psn-in-order-acks\">", "</section>");
  ASSERT_FALSE(section.empty());
  EXPECT_NE(section.find("<dt>Citation</dt><dd><code>9.7.5.1; 9.7.5.1.1 C9-81</code> <span "
                         "class=\"release\">IBA Vol 1 Release 1.2.1 + Annex A17</span></dd>"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("<dt>Rule</dt><dd>An in-order request with AckReq set is ACKed with its "
                         "own PSN</dd>"),
            std::string::npos);
  const std::string appendix = slice(html, "<h2 id=\"traceability\">", "</table>");
  ASSERT_FALSE(appendix.empty());
  EXPECT_EQ(occurrences(appendix, "<tr><td><a href=\"#case-"), 5);  // every case of the run
  EXPECT_NE(appendix.find("<code>9.7.5.1; 9.7.5.1.1 C9-81</code>"), std::string::npos);
  EXPECT_NE(appendix.find("<td class=\"unchecked\">pib; unchecked: 9.7.5.1.1, C9-81</td>"),
            std::string::npos)
      << appendix;
  // A case without a citation shows its clause text.
  EXPECT_NE(appendix.find("<code>IBA Vol 1 9.7.5.1.2 (C9-112)</code>"), std::string::npos);
}

TEST(HtmlWriter, ComplianceStatementsAppendix) {
  RunResult run = test::sample_run();
  run.cases[0].citation = "9.7.5 C9-105; CA17-33";
  const std::string html = to_html(run);
  const std::string appendix = slice(html, "<h2 id=\"statements\">", "</table>");
  ASSERT_FALSE(appendix.empty());
  EXPECT_NE(appendix.find("2 of 114 are cited by a case of this run; 40 more do not apply"),
            std::string::npos)
      << appendix.substr(0, 600);
  // A covered statement links its case with the verdict; an uncovered one says why.
  const std::string row = slice(appendix, "<tr><td><code>CA17-33</code>", "</tr>");
  EXPECT_NE(row.find("href=\"#" + case_anchor(run.cases[0].id) + "\""), std::string::npos) << row;
  EXPECT_NE(row.find("covered"), std::string::npos);
  const std::string gap = slice(appendix, "<tr><td><code>CA17-42</code>", "</tr>");
  EXPECT_NE(gap.find("class=\"unchecked\">not covered: needs a port running RoCE (v1) and RoCEv2"),
            std::string::npos)
      << gap;
}

TEST(HtmlWriter, PassingCasesCollapsed) {
  const std::string html = to_html(test::sample_run());
  const std::string pass =
      slice(html, "<section class=\"case c-pass ok\" id=\"case-psn-in-order-acks\">", "</section>");
  ASSERT_FALSE(pass.empty());
  EXPECT_NE(pass.find("<details>"), std::string::npos);
  EXPECT_EQ(pass.find("<details open>"), std::string::npos);
  const std::string skip =
      slice(html, "<section class=\"case c-skip ok\" id=\"case-cq-overflow\">", "</section>");
  EXPECT_NE(skip.find("needs control: the target has no control API"), std::string::npos);
  EXPECT_NE(html.find("id=\"case-cm-mra\"><details open>"), std::string::npos);
}

TEST(HtmlWriter, SelfContained) {
  RunResult run = test::sample_run();
  run.cases[0].title = "<script src=\"x.js\"></script>";
  const std::string html = to_html(run);
  for (const char* forbidden :
       {"http://", "https://", "<link", "url(", "@import", "<img", "<iframe"})
    EXPECT_EQ(html.find(forbidden), std::string::npos) << forbidden;
  // No tag loads anything (escaped text may say src=, a tag may not).
  EXPECT_FALSE(std::regex_search(html, std::regex("<[^>]*\\ssrc\\s*=")));
  EXPECT_EQ(occurrences(html, "<script"), 1);  // ours; the title's is escaped
  EXPECT_NE(html.find("&lt;script src=&quot;x.js&quot;&gt;"), std::string::npos);
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  // Every in-page link points at an element of the page.
  const std::regex href("href=\"#([^\"]+)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), href); it != std::sregex_iterator();
       ++it)
    EXPECT_NE(html.find("id=\"" + (*it)[1].str() + "\""), std::string::npos) << (*it)[1];
  EXPECT_EQ(occurrences(html, "href="), occurrences(html, "href=\"#"));
}

TEST(HtmlWriter, LongTimelinesAreCapped) {
  RunResult run;
  CaseResult c = test::failing_case();
  c.events.clear();
  for (int i = 0; i < 5000; ++i)
    c.events.push_back(test::event(i, i % 2 ? EventKind::kReceived : EventKind::kSent, "s:1",
                                   "frame " + std::to_string(i), test::sample_frame(1)));
  run.cases = {c};
  const std::string html = to_html(run, {.max_events_per_case = 400});
  EXPECT_EQ(occurrences(html, "<li class=\"ev sent\"") + occurrences(html, "<li class=\"ev recv\""),
            400);
  EXPECT_NE(html.find("4600 events left out here"), std::string::npos);
  EXPECT_NE(html.find("frame 0<"), std::string::npos);     // the start
  EXPECT_NE(html.find("frame 4999<"), std::string::npos);  // and the end, where failures are
  EXPECT_EQ(html.find("frame 2500<"), std::string::npos);
  EXPECT_LT(html.size(), 1'000'000u);
}

TEST(HtmlWriter, OverallVerdict) {
  RunResult run = test::sample_run();
  run.cases = {run.cases[0], run.cases[2]};  // pass and skip
  run.catalogue.cases = 2;
  run.catalogue.must_cases = 2;
  EXPECT_EQ(overall_verdict(run), "CONFORMANT");
  EXPECT_NE(to_html(run).find(">CONFORMANT<"), std::string::npos);
  EXPECT_EQ(to_html(run).find(">NOT CONFORMANT<"), std::string::npos);
  run.interrupted = true;
  EXPECT_EQ(overall_verdict(run), "INCOMPLETE");
  EXPECT_NE(to_html(run).find("The run was interrupted"), std::string::npos);
  EXPECT_EQ(overall_verdict(RunResult{}), "INCOMPLETE");  // no catalogue: no certificate
  run.interrupted = false;
  run.cases = {test::sample_run().cases[2], test::sample_run().cases[2]};  // only skips
  EXPECT_EQ(overall_verdict(run), "INSUFFICIENT COVERAGE");
  run.cases.push_back(test::sample_run().cases[4]);  // inconclusive
  EXPECT_EQ(overall_verdict(run), "NOT CONFORMANT");
}

TEST(HtmlWriter, HeadlineIdentityWaiversAndTheRule) {
  RunResult run = test::sample_run();
  run.identity.evidence_path = "out/evidence.pcapng";
  run.identity.evidence_sha256 = std::string(64, 'e');
  run.identity.profile_path = "dut.profile";
  run.identity.profile_sha256 = std::string(64, 'f');
  run.waivers = {{"cm/mra", "", "the timer cannot be set <here>", "w.txt:2"},
                 {"psn/in-order-acks", "", "not needed", "w.txt:3"}};
  const std::string html = to_html(run);
  const std::string headline = slice(html, "<div class=\"headline\"", "</div>");
  EXPECT_NE(headline.find(">NOT CONFORMANT<"), std::string::npos) << headline;
  EXPECT_NE(headline.find("3 of 5 graded (1 pass, 2 blocking), 1 skipped, 1 waived — catalogue "
                          "2026.12 (sha256 aaaaaaaa), IBA Vol 1 Release 1.2.1 + Annex A17"),
            std::string::npos)
      << headline;
  EXPECT_NE(headline.find("roceconf reference NIC, fw_ver 0.1.0, quirks psn-gap-ack (built-in)"),
            std::string::npos)
      << headline;
  EXPECT_NE(html.find("sha256 <code class=\"evidence-sha256\">" + std::string(64, 'e')),
            std::string::npos);
  EXPECT_NE(html.find("sha256sum evidence.pcapng"), std::string::npos);
  EXPECT_NE(html.find(std::string(64, 'f')), std::string::npos);
  EXPECT_NE(html.find("roceconf run --quirk psn-gap-ack"), std::string::npos);
  EXPECT_NE(html.find("6.1.0-test"), std::string::npos);
  const std::string waivers = slice(html, "<table class=\"waivers\"", "</table>");
  EXPECT_NE(waivers.find("the timer cannot be set &lt;here&gt;"), std::string::npos) << waivers;
  EXPECT_NE(waivers.find("<td>applied</td><td>inconclusive</td>"), std::string::npos) << waivers;
  EXPECT_NE(waivers.find("<td>unused</td><td>pass</td>"), std::string::npos) << waivers;
  const std::string mra = slice(html, "id=\"case-cm-mra\"", "</section>");
  EXPECT_NE(mra.find("g-waived"), std::string::npos);
  EXPECT_NE(mra.find("the timer cannot be set"), std::string::npos);
  EXPECT_NE(html.find("<h2 id=\"verdict-rule\">How the verdict is decided</h2>"),
            std::string::npos);
  EXPECT_NE(html.find("INSUFFICIENT COVERAGE when fewer than half"), std::string::npos);
}

TEST(HtmlWriter, CaseAnchor) {
  EXPECT_EQ(case_anchor("psn/gap-naks-once"), "case-psn-gap-naks-once");
  EXPECT_EQ(case_anchor("a/b c"), "case-a-b-c");
}

// The security measurements have a section of their own: each figure, its threshold, and
// whether it is a finding; no section without measuring cases.
TEST(HtmlWriter, SecurityMeasurementsSection) {
  RunResult run = test::sample_run();
  EXPECT_EQ(to_html(run).find("Security measurements"), std::string::npos);
  CaseResult c;
  c.id = "sec/qpn-predictability";
  c.area = "sec";
  c.requirement = "SHOULD";
  c.verdict = Verdict::kFail;
  c.measurements = {{"QPN: most common step", "+1 (31 of 31 differences)",
                     "a finding when one step makes half the differences", true},
                    {"QPN: repeats", "0", "a finding above 0", false}};
  run.cases.push_back(c);
  const std::string html = to_html(run);
  const std::string table = slice(html, "<table class=\"security\"", "</table>");
  ASSERT_FALSE(table.empty()) << html;
  EXPECT_NE(html.find("<h2 id=\"security\">Security measurements</h2>"), std::string::npos);
  EXPECT_NE(table.find("href=\"#case-sec-qpn-predictability\""), std::string::npos) << table;
  EXPECT_NE(table.find("<tr class=\"finding\"><td>"), std::string::npos);
  EXPECT_NE(table.find("+1 (31 of 31 differences)"), std::string::npos);
  EXPECT_NE(table.find("a finding when one step makes half the differences"), std::string::npos);
  EXPECT_EQ(occurrences(table, "<tr"), 3);  // the header and the two figures
}

}  // namespace
}  // namespace roceconf::report
