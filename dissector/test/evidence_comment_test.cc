// The evidence comment's one writer and parser (dissector/evidence_comment.h): what the engine
// writes, the Wireshark plugin reads back unchanged.
#include "dissector/evidence_comment.h"

#include <gtest/gtest.h>

namespace roceconf {
namespace {

TEST(EvidenceCommentFormat, WritesTheDocumentedLine) {
  EXPECT_EQ(format_evidence_comment({.case_id = "psn/gap-naks-once",
                                     .step = "cases/psn/gap-naks-once.rcase:9",
                                     .verdict = "fail",
                                     .event = "received",
                                     .note = "RC ACK psn=0x000011 msn=2"}),
            "roceconf case=psn/gap-naks-once step=cases/psn/gap-naks-once.rcase:9 verdict=fail "
            "event=received note=RC ACK psn=0x000011 msn=2");
}

TEST(EvidenceCommentFormat, MarksTheFramesOfTheFailingStep) {
  const std::string c = format_evidence_comment({.case_id = "psn/gap-naks-once",
                                                 .step = "cases/psn/gap-naks-once.rcase:12",
                                                 .verdict = "fail",
                                                 .event = "received",
                                                 .note = "RC ACK psn=0x000000 msn=1",
                                                 .failed_here = true});
  EXPECT_EQ(c,
            "roceconf case=psn/gap-naks-once step=cases/psn/gap-naks-once.rcase:12 verdict=fail "
            "event=received failed=yes note=RC ACK psn=0x000000 msn=1");
  const auto back = parse_evidence_comment(c);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->failed_here);
  EXPECT_EQ(back->note, "RC ACK psn=0x000000 msn=1");
}

TEST(EvidenceCommentFormat, KeepsTokensSplittableAndTheNoteOnOneLine) {
  const std::string c = format_evidence_comment(
      {.case_id = "a b", .step = "", .verdict = "pass", .event = "sent\t", .note = "x\ny"});
  EXPECT_EQ(c, "roceconf case=a_b step=- verdict=pass event=sent_ note=x y");
  const std::string no_note =
      format_evidence_comment({.case_id = "a", .step = "s:1", .verdict = "skip", .event = "sent"});
  EXPECT_EQ(no_note, "roceconf case=a step=s:1 verdict=skip event=sent");
}

TEST(EvidenceCommentFormat, WhatIsWrittenParsesBack) {
  const EvidenceComment in{.case_id = "cm/rej-timeout",
                           .step = "cases/cm/rej.rcase:12",
                           .verdict = "inconclusive",
                           .event = "received",
                           .note = "REJ reason=28 note=inside the note"};
  const std::string text = format_evidence_comment(in);
  const auto out = parse_evidence_comment(text);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->case_id, in.case_id);
  EXPECT_EQ(out->step, in.step);
  EXPECT_EQ(out->verdict, in.verdict);
  EXPECT_EQ(out->event, in.event);
  EXPECT_EQ(out->note, in.note);
}

TEST(EvidenceCommentFormat, ParsesOnlyItsOwnComments) {
  EXPECT_FALSE(parse_evidence_comment("captured on eth0"));
  EXPECT_FALSE(parse_evidence_comment("roceconf"));
  const auto c = parse_evidence_comment("roceconf later=1 case=a junk event=sent");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->case_id, "a");
  EXPECT_EQ(c->event, "sent");
  EXPECT_EQ(c->step, "");
  EXPECT_EQ(c->note, "");
}

}  // namespace
}  // namespace roceconf
