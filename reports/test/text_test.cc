#include "reports/text.h"

#include <gtest/gtest.h>

#include "reports/test/sample_run.h"

namespace roceconf::report {
namespace {

TEST(Text, SanitizeKeepsValidUtf8AndReplacesTheRest) {
  EXPECT_EQ(sanitize_utf8("µs ✓ a\tb\nc"), "µs ✓ a\tb\nc");
  EXPECT_EQ(sanitize_utf8(std::string("a\x01"
                                      "b",
                                      3)),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(sanitize_utf8(std::string("\0", 1)), "\xEF\xBF\xBD");
  EXPECT_EQ(sanitize_utf8("\xff"), "\xEF\xBF\xBD");
  EXPECT_EQ(sanitize_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");      // overlong '/'
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD");              // surrogate
  EXPECT_EQ(sanitize_utf8("\xEF\xBF\xBF"), "\xEF\xBF\xBD");              // U+FFFF
  EXPECT_EQ(sanitize_utf8("ab\xE2\x9C"), "ab\xEF\xBF\xBD\xEF\xBF\xBD");  // cut short
}

TEST(Text, XmlEscape) {
  EXPECT_EQ(xml_escape("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(xml_escape("a\nb\tc"), "a\nb\tc");
  EXPECT_EQ(xml_escape("a\nb\tc", true), "a&#10;b&#9;c");
  EXPECT_EQ(xml_escape("\x1b[31m"), "\xEF\xBF\xBD[31m");
}

TEST(Text, OneLine) {
  EXPECT_EQ(one_line("a\nb\x1b"
                     "c\x7f"),
            "a b c ");
}

TEST(Text, Iso8601) {
  EXPECT_EQ(iso8601_utc(test::kT0), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(iso8601_utc(test::kT0, false), "2023-11-14T22:13:20Z");
  EXPECT_EQ(iso8601_utc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(iso8601_utc(-1), "1969-12-31T23:59:59.999Z");
}

TEST(Text, HexAndDiff) {
  const std::uint8_t bytes[] = {0x00, 0xab, 0x10};
  EXPECT_EQ(hex_string(bytes), "00ab10");
  EXPECT_EQ(diff_text({"bth.psn", "0x000010", "0x000011"}),
            "bth.psn expected 0x000010 vs actual 0x000011");
}

TEST(Text, EventsInTimeOrderAreStable) {
  CaseResult c;
  c.events = {test::event(5, EventKind::kNote, "", "b"), test::event(1, EventKind::kNote, "", "a"),
              test::event(5, EventKind::kNote, "", "c")};
  std::string order;
  for (const Event* e : events_in_time_order(c)) order += e->text;
  EXPECT_EQ(order, "abc");
}

}  // namespace
}  // namespace roceconf::report
