#include "reports/terminal.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "reports/test/sample_run.h"

namespace roceconf::report {
namespace {

TEST(Terminal, ProgressBar) {
  EXPECT_EQ(progress_bar(37, 120, "psn/gap-naks-once", 10),
            "[===>      ] 37/120 psn/gap-naks-once");
  EXPECT_EQ(progress_bar(0, 120, "a/b", 10), "[          ] 0/120 a/b");
  EXPECT_EQ(progress_bar(120, 120, "", 10), "[==========] 120/120");
  EXPECT_EQ(progress_bar(0, 0, "", 4), "[    ] 0/0");
  EXPECT_EQ(progress_bar(5, 10, "x\ny", 4), "[==> ] 5/10 x y");
}

TEST(Terminal, CaseLine) {
  const RunResult run = test::sample_run();
  EXPECT_EQ(case_line(run.cases[0], 1, 120), "[  1/120] PASS psn/in-order-acks");
  EXPECT_EQ(case_line(run.cases[1], 37, 120),
            "[ 37/120] FAIL psn/gap-naks-once: expected one NAK <PSN sequence error>, got an ACK");
  EXPECT_EQ(case_line(run.cases[1], 2, 5, true).find("\x1b[1;31mFAIL\x1b[0m"), 6u);
}

TEST(Terminal, SummaryText) {
  const std::string text = summary_text(test::sample_run());
  EXPECT_EQ(text.substr(0, text.find("\n\n")),
            "area  pass  fail  skip error inconc  total\n"
            "psn      1     1     0     0      0      2\n"
            "cq       0     0     1     0      0      1\n"
            "cm       0     0     0     1      1      2\n"
            "all      1     1     1     1      1      5")
      << text;
  EXPECT_NE(
      text.find("Blocking (MUST, not waived):\n"
                "  FAIL psn/gap-naks-once: expected one NAK <PSN sequence error>, got an ACK\n"
                "      step: psn/gap-naks-once.rcase:9 expect c NAK psn=1\n"
                "      bth.psn expected 0x000010 vs actual 0x000011\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("  ERROR cm/rej-reason: control socket closed\n"), std::string::npos);
  EXPECT_NE(text.find("  INCONCLUSIVE cm/mra: round trip too noisy"), std::string::npos);
  EXPECT_EQ(text.find("cq/overflow"), std::string::npos);  // a skip is not a problem
  EXPECT_NE(text.find("\nNOT CONFORMANT: 4 of 5 graded (1 pass, 3 blocking), 1 skipped — "
                      "catalogue 2026.12 (sha256 aaaaaaaa), IBA Vol 1 Release 1.2.1 + Annex A17\n"
                      "target reference: in-process reference NIC, quirks: psn-gap-ack\n"
                      "device roceconf reference NIC, fw_ver 0.1.0, quirks psn-gap-ack "
                      "(built-in)\n"
                      "5 of 5 cases run in 1.23 s, seed 7\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(summary_text(test::sample_run(), true).find("\x1b[1;31mNOT CONFORMANT"),
            std::string::npos);
}

TEST(Terminal, SummaryOfCleanAndInterruptedRuns) {
  RunResult run = test::sample_run();
  run.cases = {run.cases[0]};
  run.catalogue.cases = 1;
  run.catalogue.must_cases = 1;
  EXPECT_NE(summary_text(run).find("\nCONFORMANT: 1 of 1 graded (1 pass), 0 skipped"),
            std::string::npos);
  EXPECT_EQ(summary_text(run).find("Blocking"), std::string::npos);
  run.interrupted = true;
  EXPECT_NE(summary_text(run).find(
                "\nINCOMPLETE: no certificate: interrupted after 1 of 1 catalogue cases; "),
            std::string::npos)
      << summary_text(run);
  EXPECT_NE(summary_text(run).find("(interrupted)"), std::string::npos);
}

TEST(Terminal, FindingsAndWaiversAreListedNeverSilent) {
  RunResult run = test::sample_run();
  run.cases[1].requirement = "SHOULD";  // the failure becomes a finding
  run.waivers = {{"cm/mra", "", "timer out of reach", "w.txt:1"},
                 {"cm/rej-reason", "2000-01-01", "too old", "w.txt:2"},
                 {"psn/in-order-acks", "", "never needed", "w.txt:3"}};
  const std::string text = summary_text(run);
  EXPECT_NE(text.find("Findings (SHOULD or MAY: reported, not blocking):\n"
                      "  FAIL psn/gap-naks-once (SHOULD): "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Waived (real verdict kept, not blocking):\n"
                      "  INCONCLUSIVE cm/mra: round trip too noisy to judge the timer\n"
                      "      waived: timer out of reach [w.txt:1]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Waivers:\n"
                      "  cm/mra applied to inconclusive: timer out of reach [w.txt:1]\n"
                      "  cm/rej-reason expired on 2000-01-01: not applied, the case's verdict "
                      "error counts: too old [w.txt:2]\n"
                      "  psn/in-order-acks unused: the case's verdict is pass: never needed "
                      "[w.txt:3]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("NOT CONFORMANT: 3 of 5 graded (1 pass, 1 blocking, 1 SHOULD finding), 1 "
                      "skipped, 1 waived"),
            std::string::npos)
      << text;
}

std::string captured(bool tty, const RunResult& run) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  {
    Progress progress(out, static_cast<int>(run.cases.size()), tty);
    for (const CaseResult& c : run.cases) {
      progress.begin(c.id);
      progress.end(c);
    }
  }
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

TEST(Terminal, ProgressPlainIsOneLinePerCase) {
  const std::string text = captured(false, test::sample_run());
  EXPECT_EQ(text,
            "[1/5] PASS psn/in-order-acks\n"
            "[2/5] FAIL psn/gap-naks-once: expected one NAK <PSN sequence error>, got an ACK\n"
            "[3/5] SKIP cq/overflow: needs control: the target has no control API\n"
            "[4/5] ERROR cm/rej-reason: control socket closed\n"
            "[5/5] INCONCLUSIVE cm/mra: round trip too noisy to judge the timer\n");
}

TEST(Terminal, ProgressOnATerminalRewritesInPlace) {
  const std::string text = captured(true, test::sample_run());
  EXPECT_NE(text.find("\r[                    ] 0/5 psn/in-order-acks\x1b[K"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\r[====>               ] 1/5 psn/gap-naks-once\x1b[K"), std::string::npos);
  // The failure stays as a line of its own; passes do not.
  EXPECT_NE(text.find("\r\x1b[K[2/5] \x1b[1;31mFAIL\x1b[0m psn/gap-naks-once"), std::string::npos);
  EXPECT_EQ(text.find("PASS"), std::string::npos);
  // Finished: the bar is cleared.
  EXPECT_EQ(text.substr(text.size() - 4), "\r\x1b[K");
}

}  // namespace
}  // namespace roceconf::report
