// The case language: parsing, its errors, and every built-in script.
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
clause: IBA Vol 1 9.7.5.1.2 (C9-97)
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
  EXPECT_EQ(s->clause, "IBA Vol 1 9.7.5.1.2 (C9-97)");
  EXPECT_EQ(s->requirement, "MUST");
  EXPECT_EQ(s->needs, (std::vector<std::string>{"responder", "control"}));
  ASSERT_EQ(s->statements.size(), 4u);
  const auto& send = s->statements[1];
  EXPECT_EQ(send.line, 7);
  EXPECT_EQ(send.words, (std::vector<std::string>{"send", "c", "SEND_ONLY"}));
  EXPECT_EQ(*send.fields.find("psn"), "3");
  EXPECT_EQ(send.text, "send c SEND_ONLY psn=3 ackreq=1 len=64");
  const auto& expect = s->statements[2];
  ASSERT_TRUE(expect.window && expect.window->rtts);
  EXPECT_EQ(*expect.window->rtts, 4);
  EXPECT_EQ(expect.flags, (std::vector<std::string>{"eventually"}));
  const auto& nothing = s->statements[3];
  EXPECT_EQ(nothing.at->ns, 10'000'000);
  EXPECT_EQ(nothing.window->ns, 2'000'000'000);
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
  auto s = parse_script("cases/a/b.rcase", "clause: x\nlevel: MUST\n+5parsecs send c X\n");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("cases/a/b.rcase:3"), std::string::npos) << s.error();
  EXPECT_FALSE(parse_script("f", "level: MUST\nconnect c\n"));              // no clause
  EXPECT_FALSE(parse_script("f", "clause: x\nlevel: OFTEN\nconnect c\n"));  // bad level
  EXPECT_FALSE(parse_script("f", "clause: x\nlevel: MUST\n"));              // no steps
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
    EXPECT_TRUE(c.requirement == "MUST" || c.requirement == "SHOULD" || c.requirement == "MAY");
    EXPECT_TRUE(ids.insert(c.id).second) << "duplicate id";
    EXPECT_EQ(c.id.substr(0, c.id.find('/')), c.area);
  }
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
