// libFuzzer target for the MAD/CM codec alone (decode_mad on arbitrary bytes): every field and
// finding is read, and the MAD is re-encoded and decoded again. A 256-byte MAD must re-encode
// byte for byte (cm.h: every bit, reserved ones included, is a field), and a clean one must
// stay clean.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <variant>

#include "dissector/fuzz/touch_sink.h"
#include "dissector/mad/mad.h"

namespace {

using namespace roceconf;

using fuzz::TouchSink;

void touch(TouchSink& sink, const Mad& mad, const Findings& findings) {
  visit_mad_fields(mad, sink);
  sink.mix(mad.data);
  sink.touch(findings);
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "mad_fuzzer: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Bytes input(data, size);
  TouchSink sink;
  Findings findings;
  const std::optional<Mad> mad = decode_mad(input, 0, findings);
  if (!mad) return 0;
  touch(sink, *mad, findings);

  std::array<std::uint8_t, kMadSize> out;
  encode_mad(*mad, out);
  if (size == kMadSize && !std::equal(out.begin(), out.end(), input.begin()))
    fail("a 256-byte MAD did not re-encode byte for byte");
  Findings again_findings;
  const std::optional<Mad> again = decode_mad(out, 0, again_findings);
  if (!again) fail("an encoded MAD does not decode");
  touch(sink, *again, again_findings);
  if (findings.empty() && !again_findings.empty())
    fail("a clean MAD has findings after re-encoding");

  volatile std::uint64_t keep = sink.sum();
  (void)keep;
  return 0;
}
