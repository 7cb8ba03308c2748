// The case language: parsing, its errors, and every built-in script.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include "cases/builtin.h"

#include "suite/engine/reference_target.h"
#include "suite/engine/runner.h"
#include "suite/engine/script.h"

namespace roceconf::engine {
namespace {

constexpr const char* kScript = R"(// The title, on
// two lines. More about it.
clause: 9.7.5.1 C9-97; 9.7.5.2
rule: one NAK per PSN gap
checked: Linux rxe check_psn; unchecked: C9-97
level: MUST
needs: responder, control
connect c pmtu=1024
send c SEND_ONLY psn=3 ackreq=1 len=64   // a comment
+0...4rtt expect c NAK psn=1 syndrome=psn_seq_err ... eventually
+10ms...2s expect nothing from c
)";

TEST(Script, ParsesHeaderAndSteps) {
  auto s = parse_script("cases/psn/x.rcase", kScript);
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->title, "The title, on two lines");
  EXPECT_EQ(s->description, "More about it.");
  EXPECT_EQ(s->citation, "9.7.5.1 C9-97; 9.7.5.2");
  EXPECT_EQ(s->rule, "one NAK per PSN gap");
  EXPECT_EQ(s->checked, "Linux rxe check_psn; unchecked: C9-97");
  EXPECT_EQ(s->release, "");  // the catalogue's
  EXPECT_EQ(s->requirement, "MUST");
  EXPECT_EQ(s->needs, (std::vector<std::string>{"responder", "control"}));
  ASSERT_EQ(s->steps.size(), 4u);
  EXPECT_TRUE(std::holds_alternative<step::Connect>(s->steps[0].action));
  const auto& send = s->steps[1];
  EXPECT_EQ(send.line, 9);
  const auto* sent = std::get_if<step::Send>(&send.action);
  ASSERT_NE(sent, nullptr);
  EXPECT_EQ(sent->conn, "c");
  EXPECT_EQ(sent->op, "SEND_ONLY");
  EXPECT_EQ(sent->kind, step::Send::Kind::kPacket);
  EXPECT_EQ(sent->opcode, 0x04);  // RC SEND_ONLY
  EXPECT_EQ(*sent->fields.find("psn"), "3");
  EXPECT_EQ(send.text, "send c SEND_ONLY psn=3 ackreq=1 len=64");
  const auto& expect = s->steps[2];
  ASSERT_TRUE(expect.window && expect.window->rtts);
  EXPECT_EQ(*expect.window->rtts, 4);
  const auto* e = std::get_if<step::Expect>(&expect.action);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->mode, CaseContext::ExpectMode::kEventually);
  ASSERT_EQ(e->alternatives.size(), 1u);
  EXPECT_EQ(e->alternatives[0].kind, "NAK");
  const auto& nothing = s->steps[3];
  EXPECT_EQ(nothing.at->ns, 10'000'000);
  EXPECT_EQ(nothing.window->ns, 2'000'000'000);
  const auto* n = std::get_if<step::ExpectNothing>(&nothing.action);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->conn, "c");
}

TEST(Script, LoadedCaseCarriesCitationReleaseAndClauseLine) {
  const CaseDef def = load_script("cases/psn/x.rcase", kScript);
  EXPECT_EQ(def.citation, "9.7.5.1 C9-97; 9.7.5.2");
  EXPECT_EQ(def.release, kCatalogueRelease);
  EXPECT_EQ(def.clause,
            "9.7.5.1 C9-97; 9.7.5.2 (IBA Vol 1 Release 1.2.1 + Annex A17): one NAK per PSN gap");
  const CaseDef own = load_script("cases/psn/y.rcase",
                                  "clause: 3.2.1.2\nrelease: RFC 1122\nlevel: MUST\nconnect c\n");
  EXPECT_EQ(own.release, "RFC 1122");
  EXPECT_EQ(own.clause, "3.2.1.2 (RFC 1122)");
}

TEST(Script, ClauseLineHoldsNumbersOnly) {
  // The paraphrase belongs on the rule: line, so a report can quote the citation alone.
  for (const char* clause : {"IBA Vol 1 9.7.5.1.2 (C9-97, C9-98)", "ch. 9", "9.6: BTH checks"}) {
    auto s = parse_script("cases/a/b.rcase",
                          std::string("clause: ") + clause + "\nlevel: MUST\nconnect c\n");
    ASSERT_FALSE(s) << clause;
    EXPECT_NE(s.error().find("rule:"), std::string::npos) << s.error();
  }
}

TEST(Script, ExpectAlternativesAndFlags) {
  auto s = parse_script("f",
                        "clause: x\nlevel: MUST\nconnect c\n"
                        "expect c ACK psn=0 syndrome=ack or NAK psn=1 syndrome=psn_seq_err\n"
                        "expect c ACK psn=4 after-earlier-acks\n");
  ASSERT_TRUE(s) << s.error();
  const auto& alt = std::get<step::Expect>(s->steps[1].action);
  ASSERT_EQ(alt.alternatives.size(), 2u);
  EXPECT_EQ(alt.alternatives[0].kind, "ACK");
  EXPECT_EQ(*alt.alternatives[0].fields.find("psn"), "0");  // the first's fields stay its own
  EXPECT_EQ(alt.alternatives[1].kind, "NAK");
  EXPECT_EQ(*alt.alternatives[1].fields.find("psn"), "1");
  EXPECT_EQ(std::get<step::Expect>(s->steps[2].action).mode,
            CaseContext::ExpectMode::kAfterEarlierAcks);
  EXPECT_FALSE(parse_script("f", "clause: x\nlevel: MUST\nexpect c ACK psn=0 or\n"));
  EXPECT_FALSE(parse_script("f", "clause: x\nlevel: MUST\nsend c SEND_ONLY or READ\n"));
  EXPECT_FALSE(parse_script("f", "clause: x\nlevel: MUST\nexpect c ACK or psn=1\n"));
}

// What the alternatives accept, against the reference target: its ACK of an AckReq FIRST comes
// before the ACK of the LAST, which `after-earlier-acks` passes over and a plain expect does not.
TEST(Script, AlternativesAndEarlierAcksAgainstTheReference) {
  auto target = ReferenceTarget::create({});
  ASSERT_TRUE(target);
  const auto run = [&](const std::string& steps) {
    const CaseDef def =
        load_script("cases/t/x.rcase",
                    "clause: x\nlevel: MUST\nneeds: responder\nconnect c pmtu=1024\n" + steps);
    return run_case(**target, def, Timing{}, 1);
  };
  const std::string message =
      "send c SEND_FIRST psn=0 ackreq=1 len=1024\nsend c SEND_MIDDLE psn=1 len=1024\n"
      "send c SEND_LAST psn=2 ackreq=1 len=16\n";
  auto r = run(message + "expect c ACK psn=2 syndrome=ack after-earlier-acks\n");
  EXPECT_EQ(r.verdict, report::Verdict::kPass) << r.reason;
  r = run(message + "expect c ACK psn=2 syndrome=ack\n");
  EXPECT_EQ(r.verdict, report::Verdict::kFail);  // the FIRST's ACK came first
  // The ACK of PSN 0 is passed over, that of PSN 2 (a later one) is not: not `eventually`.
  r = run(message + "expect c ACK psn=1 syndrome=ack after-earlier-acks\n");
  EXPECT_EQ(r.verdict, report::Verdict::kFail);
  // A gap: the NAK is one of the alternatives; an ACK alone would not do.
  const std::string gap = "send c SEND_ONLY psn=3 ackreq=1 len=16\n";
  r = run(gap + "expect c ACK psn=0 or NAK psn=0 syndrome=psn_seq_err\n");
  EXPECT_EQ(r.verdict, report::Verdict::kPass) << r.reason;
  r = run(gap + "expect c ACK psn=0 or ACK psn=3\n");
  EXPECT_EQ(r.verdict, report::Verdict::kFail);
}

TEST(Script, PollAcceptsAnyOfTheValuesGiven) {
  auto target = ReferenceTarget::create({});
  ASSERT_TRUE(target);
  const auto run = [&](const std::string& status) {
    const CaseDef def =
        load_script("cases/t/x.rcase",
                    "clause: x\nlevel: MUST\nneeds: control\nopen c recv=1\nmodify c qp_state=ERR\n"
                    "poll c status=" +
                        status + " qp_num=c\n");
    return run_case(**target, def, Timing{}, 1);
  };
  EXPECT_EQ(run("WR_FLUSH_ERR").verdict, report::Verdict::kPass);
  EXPECT_EQ(run("REM_ACCESS_ERR|WR_FLUSH_ERR").verdict, report::Verdict::kPass);
  EXPECT_EQ(run("REM_ACCESS_ERR|SUCCESS").verdict, report::Verdict::kFail);
}

TEST(Script, TitleIsTheFirstSentence) {
  const auto title = [](const std::string& head) {
    auto s = parse_script("f", head + "clause: x\nlevel: MUST\nconnect c\n");
    return s ? s->title + "|" + s->description : s.error();
  };
  EXPECT_EQ(title("// One line title\n// Then a description.\n"),
            "One line title|Then a description.");
  EXPECT_EQ(title("// A title that runs\n// over two lines. And more.\n"),
            "A title that runs over two lines|And more.");
  EXPECT_EQ(title("// Just a title\n"), "Just a title|");
  EXPECT_EQ(title("// The target answers with its\n// QP number. Then more.\n"),
            "The target answers with its QP number|Then more.");
  EXPECT_EQ(title("// REP and REJ carry the REQ's,\n// DREP the DREQ's. More.\n"),
            "REP and REJ carry the REQ's, DREP the DREQ's|More.");
}

TEST(Script, ErrorsNameFileAndLine) {
  auto s = parse_script("cases/a/b.rcase", "clause: x\nlevel: MUST\n+5parsecs new c\n");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("cases/a/b.rcase:3"), std::string::npos) << s.error();
  EXPECT_FALSE(parse_script("f", "level: MUST\nconnect c\n"));              // no clause
  EXPECT_FALSE(parse_script("f", "clause: x\nlevel: OFTEN\nconnect c\n"));  // bad level
  EXPECT_FALSE(parse_script("f", "clause: x\nlevel: MUST\n"));              // no steps
}

TEST(Script, DurationsOutOfRangeAreRefused) {
  // Found by the script fuzzer: a huge duration overflowed the nanosecond count.
  for (const char* d : {"2e54s", "infms", "nanus", "1e7rtt", "3601s"}) {
    auto s = parse_script("f", fmt::format("clause: x\nlevel: MUST\n+{} new c\n", d));
    ASSERT_FALSE(s) << d;
    EXPECT_NE(s.error().find(d), std::string::npos) << s.error();
  }
  EXPECT_TRUE(parse_script("f", "clause: x\nlevel: MUST\n+3600s new c\n"));
}

TEST(Script, BrokenScriptBecomesAnErroringCase) {
  const CaseDef def = load_script("cases/psn/broken.rcase", "nonsense");
  EXPECT_EQ(def.id, "psn/broken");
  EXPECT_EQ(def.area, "psn");
  EXPECT_EQ(def.title, "(does not parse)");
}

TEST(Catalogue, EveryBuiltinCaseParsesAndIsComplete) {
  const auto& cat = cases::builtin_catalogue();
  EXPECT_GE(cat.cases().size(), 60u);
  std::set<std::string> ids;
  for (const auto& c : cat.cases()) {
    SCOPED_TRACE(c.id);
    EXPECT_NE(c.title, "(does not parse)");
    EXPECT_FALSE(c.title.empty());
    EXPECT_FALSE(c.clause.empty());
    EXPECT_FALSE(c.citation.empty());
    EXPECT_FALSE(c.rule.empty());
    EXPECT_FALSE(c.checked.empty());
    // A clause of another document (IEEE 802.1Q) comes with that document's release.
    if (c.citation.starts_with("IEEE "))
      EXPECT_TRUE(c.release.starts_with("IEEE Std ")) << c.release;
    else
      EXPECT_EQ(c.release, kCatalogueRelease);
    EXPECT_TRUE(c.requirement == "MUST" || c.requirement == "SHOULD" || c.requirement == "MAY");
    EXPECT_TRUE(ids.insert(c.id).second) << "duplicate id";
    EXPECT_EQ(c.id.substr(0, c.id.find('/')), c.area);
  }
}

// Citations that public sources contradict for IBA Vol 1 Release 1.2.1 must not come back:
// RDMA READ is 9.4.4 (atomics 9.4.5), 9.7.5.1.2 is Coalesced Acknowledge Messages (not the
// one-NAK-per-gap rule), 9.7.6.1 is the requester side (responder ACK generation is 9.7.5.1),
// the payload-vs-PMTU rule is 5.2.13 C5-8 (not "ch. 9"), Modify QP is 11.2.4.2 (11.2.5.x is a
// later release's number).
TEST(Catalogue, NoContradictedCitation) {
  const auto cites = [](const CaseDef& c, std::string_view number) {
    // As a whole number: "9.4.3" but not "9.4.35".
    for (std::size_t at = c.citation.find(number); at != std::string::npos;
         at = c.citation.find(number, at + 1)) {
      const std::size_t end = at + number.size();
      const bool starts = at == 0 || c.citation[at - 1] == ' ' || c.citation[at - 1] == ';';
      const bool ends = end == c.citation.size() || c.citation[end] == ' ' ||
                        c.citation[end] == ';' || c.citation[end] == ',';
      if (starts && ends) return true;
    }
    return false;
  };
  for (const auto& c : cases::builtin_catalogue().cases()) {
    SCOPED_TRACE(c.id);
    EXPECT_FALSE(cites(c, "9.4.3")) << c.citation;
    EXPECT_FALSE(cites(c, "9.7.6.1")) << c.citation;
    EXPECT_EQ(c.citation.find("11.2.5"), std::string::npos) << c.citation;
    EXPECT_EQ(c.citation.find("ch."), std::string::npos) << c.citation;
    if (cites(c, "9.7.5.1.2")) {
      EXPECT_EQ(c.citation.find("C9-97"), std::string::npos) << c.citation;
      EXPECT_NE(c.rule.find("coalesc"), std::string::npos) << "9.7.5.1.2 is coalescing: " << c.rule;
    }
    // The payload-vs-PMTU rule and READ responses cite their sections.
    if (c.area == "mtu") {
      EXPECT_TRUE(cites(c, "5.2.13") || cites(c, "9.4.4")) << c.citation;
    }
  }
  const auto& all = cases::builtin_catalogue().cases();
  const auto find = [&](std::string_view id) {
    for (const auto& c : all)
      if (c.id == id) return &c;
    return static_cast<const CaseDef*>(nullptr);
  };
  ASSERT_NE(find("psn/in-order-ack"), nullptr);
  EXPECT_TRUE(cites(*find("psn/in-order-ack"), "9.7.5.1"));
  ASSERT_NE(find("nak/misaligned-atomic"), nullptr);
  EXPECT_TRUE(cites(*find("nak/misaligned-atomic"), "9.4.5"));
  ASSERT_NE(find("psn/read-consumes-psns"), nullptr);
  EXPECT_TRUE(cites(*find("psn/read-consumes-psns"), "9.4.4"));
}

TEST(Catalogue, GlobSelectsByIdOrArea) {
  EXPECT_TRUE(glob_match("psn/*", "psn/gap-naks-once"));
  EXPECT_TRUE(glob_match("*gap*", "psn/gap-naks-once"));
  EXPECT_TRUE(glob_match("psn/gap-naks-?nce", "psn/gap-naks-once"));
  EXPECT_FALSE(glob_match("cm/*", "psn/gap-naks-once"));
  const auto& cat = cases::builtin_catalogue();
  for (const auto* c : cat.select("psn")) EXPECT_EQ(c->area, "psn");
  EXPECT_EQ(cat.select("").size(), cat.cases().size());
}

}  // namespace
}  // namespace roceconf::engine

namespace roceconf::engine {
namespace {

// Malformed scripts give a parse error or a script, never a crash: a script cut, spliced and
// with bytes flipped, thousands of times; the ones that still parse are run against the
// reference target, where a step that makes no sense is the case's ERROR, not a crash.
TEST(Script, MutatedScriptsNeverCrash) {
  std::mt19937_64 random(42);
  const std::string alphabet = "+.=/:-_ \n\t0123456789xabcdefABCDEF@$|...#rtt ms";
  auto target = ReferenceTarget::create({});
  ASSERT_TRUE(target);
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text =
        "// t\nclause: c\nlevel: MUST\nneeds: responder\nconnect c pmtu=1024\n"
        "+0...4rtt expect c ACK psn=0 syndrome=ack msn=+1 ... eventually\n";
    const int edits = 1 + static_cast<int>(random() % 8);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = text.empty() ? 0 : random() % text.size();
      switch (random() % 4) {
        case 0:
          text.insert(at, 1, alphabet[random() % alphabet.size()]);
          break;
        case 1:
          if (!text.empty()) text.erase(at, 1 + random() % 4);
          break;
        case 2:
          if (!text.empty()) text[at] = static_cast<char>(random());
          break;
        case 3:
          text.insert(at, text.substr(random() % text.size(), random() % 16));
          break;
      }
    }
    if (!parse_script("fuzz.rcase", text)) continue;
    if (++parsed > 300) continue;
    const CaseDef def = load_script("cases/fuzz/x.rcase", text);
    const auto result = run_case(**target, def, Timing{}, static_cast<std::uint64_t>(i));
    EXPECT_FALSE(result.reason.starts_with("internal error")) << result.reason << "\n" << text;
  }
  EXPECT_GT(parsed, 0);  // the mutations are not all fatal
}

}  // namespace
}  // namespace roceconf::engine
