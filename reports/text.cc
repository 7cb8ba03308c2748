#include "reports/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

namespace roceconf::report {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool xml_char(char32_t c) {
  if (c < 0x20) return c == '\t' || c == '\n' || c == '\r';
  if (c >= 0xD800 && c <= 0xDFFF) return false;
  return c != 0xFFFE && c != 0xFFFF && c <= 0x10FFFF;
}

// The length of the well-formed UTF-8 sequence at text[at] and its code point; 0 if malformed.
std::size_t decode_one(std::string_view text, std::size_t at, char32_t& out) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
  const unsigned char lead = b(0);
  std::size_t len = 0;
  char32_t c = 0;
  if (lead < 0x80) {
    out = lead;
    return 1;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2, c = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3, c = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4, c = lead & 0x07;
  } else {
    return 0;
  }
  if (at + len > text.size()) return 0;
  for (std::size_t i = 1; i < len; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
    c = c << 6 | (b(i) & 0x3F);
  }
  // Overlong forms and code points past U+10FFFF.
  if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF))) return 0;
  out = c;
  return len;
}

}  // namespace

std::string sanitize_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    char32_t c = 0;
    const std::size_t len = decode_one(text, at, c);
    if (len == 0) {
      out += kReplacement;
      ++at;
      continue;
    }
    if (xml_char(c))
      out.append(text.substr(at, len));
    else
      out += kReplacement;
    at += len;
  }
  return out;
}

std::string xml_escape(std::string_view text, bool attribute) {
  const std::string clean_text = sanitize_utf8(text);
  std::string out;
  out.reserve(clean_text.size() + clean_text.size() / 8);
  for (const char c : clean_text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        break;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      case '\r':
        out += "&#13;";  // a literal CR would be normalised away even in content
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string one_line(std::string_view text) {
  std::string spaced(text);
  for (char& c : spaced)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = ' ';
  std::string out = sanitize_utf8(spaced);
  // C1 controls (U+0080..U+009F) too: some terminals act on them.
  std::string kept;
  kept.reserve(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto next = i + 1 < out.size() ? static_cast<unsigned char>(out[i + 1]) : 0;
    if (static_cast<unsigned char>(out[i]) == 0xC2 && next >= 0x80 && next <= 0x9F) {
      kept += ' ';
      ++i;
    } else {
      kept += out[i];
    }
  }
  return kept;
}

std::string iso8601_utc(std::int64_t unix_ns, bool with_fraction) {
  std::int64_t seconds = unix_ns / 1'000'000'000;
  std::int64_t rest = unix_ns % 1'000'000'000;
  if (rest < 0) rest += 1'000'000'000, --seconds;
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::string out = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", tm.tm_year + 1900,
                                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  if (with_fraction) out += fmt::format(".{:03}", rest / 1'000'000);
  out += 'Z';
  return out;
}

std::string hex_string(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const std::uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0xF];
  }
  return out;
}

std::string diff_text(const FieldDiff& diff) {
  return fmt::format("{} expected {} vs actual {}", diff.field, diff.expected, diff.actual);
}

std::string_view verdict_label(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "PASS";
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kSkip:
      return "SKIP";
    case Verdict::kError:
      return "ERROR";
    case Verdict::kInconclusive:
      return "INCONCLUSIVE";
  }
  return "ERROR";
}

std::string_view conformance(const Counts& counts, bool interrupted) {
  if (!clean(counts)) return "NOT CONFORMANT";
  if (counts.pass == 0) return "NOT TESTED";
  if (interrupted) return "INCOMPLETE";
  return "CONFORMANT";
}

std::vector<const Event*> events_in_time_order(const CaseResult& result) {
  std::vector<const Event*> out;
  out.reserve(result.events.size());
  for (const Event& e : result.events) out.push_back(&e);
  std::stable_sort(out.begin(), out.end(),
                   [](const Event* a, const Event* b) { return a->unix_ns < b->unix_ns; });
  return out;
}

}  // namespace roceconf::report
