// JSON-lines framing: lines cut at "\n" (a "\r" before it dropped, blank lines skipped), a line
// split across reads joined, the unterminated last line taken at the end, and a line past the
// limit, complete or not, an overflow.
#include "control/lines.h"

#include <gtest/gtest.h>

namespace roceconf::control {
namespace {

TEST(LineReader, CutsLinesAcrossReadsAndSkipsBlankOnes) {
  LineReader r(64);
  r.append("{\"op\":\"hel");
  EXPECT_FALSE(r.next());
  r.append("lo\"}\r\n\n  \t\n{\"op\":\"quirks\"}\n{\"op\"");
  EXPECT_EQ(r.next(), "{\"op\":\"hello\"}");
  EXPECT_EQ(r.next(), "{\"op\":\"quirks\"}");
  EXPECT_FALSE(r.next());
  EXPECT_EQ(r.buffered(), 5u);
  EXPECT_EQ(r.rest(), "{\"op\"");
  EXPECT_EQ(r.buffered(), 0u);
  EXPECT_FALSE(r.rest()) << "nothing is left after rest()";
}

TEST(LineReader, ALineLongerThanTheLimitOverflowsCompleteOrNot) {
  LineReader complete(8);
  complete.append("123456789\n{}\n");
  EXPECT_FALSE(complete.next());
  EXPECT_TRUE(complete.overflowed());
  EXPECT_FALSE(complete.next()) << "nothing is read past an overflow";

  LineReader partial(8);
  partial.append("12345678");
  EXPECT_FALSE(partial.next());
  EXPECT_FALSE(partial.overflowed()) << "exactly the limit is allowed";
  partial.append("9");
  EXPECT_FALSE(partial.next());
  EXPECT_TRUE(partial.overflowed());
  EXPECT_FALSE(partial.rest());

  LineReader exact(8);
  exact.append("12345678\n");
  EXPECT_EQ(exact.next(), "12345678");
}

TEST(Lines, ErrorLineIsOneJsonLineWithOrWithoutErrno) {
  const std::string plain = error_line("too many control clients");
  ASSERT_EQ(plain.back(), '\n');
  const auto j = nlohmann::json::parse(plain);
  EXPECT_TRUE(j["id"].is_null());
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["error"], "too many control clients");
  EXPECT_FALSE(j.contains("errno"));

  const auto e = nlohmann::json::parse(error_line("a \"quoted\" line", "E2BIG"));
  EXPECT_EQ(e["errno"], "E2BIG");
  EXPECT_EQ(e["error"], "E2BIG: a \"quoted\" line");
  EXPECT_EQ(error_line("x").find('\n'), error_line("x").size() - 1) << "one line";
}

TEST(Lines, DumpLineReplacesInvalidUtf8) {
  const nlohmann::json j = {{"error", std::string("bad \xff byte")}};
  EXPECT_NO_THROW((void)dump_line(j));
  EXPECT_EQ(dump_line(j).find('\n'), std::string::npos);
}

}  // namespace
}  // namespace roceconf::control
