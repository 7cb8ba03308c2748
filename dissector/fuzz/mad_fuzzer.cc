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

#include "dissector/mad/mad.h"

namespace {

using namespace roceconf;

class TouchSink : public FieldSink {
 public:
  void field(std::string_view layer, std::string_view name, const FieldValue& value) override {
    mix(layer);
    mix(name);
    std::visit([this](const auto& v) { touch(v); }, value);
  }
  void mix(std::string_view s) {
    for (char c : s) sum_ = sum_ * 31 + static_cast<unsigned char>(c);
  }
  void mix(Bytes b) {
    for (std::uint8_t c : b) sum_ = sum_ * 31 + c;
  }
  void touch(const Mad& mad, const Findings& findings) {
    visit_mad_fields(mad, *this);
    mix(mad.data);
    for (const Finding& f : findings) {
      mix(f.code_name());
      mix(f.message);
      sum_ += f.offset;
    }
  }
  std::uint64_t sum() const { return sum_; }

 private:
  void touch(std::uint64_t v) { sum_ += v; }
  void touch(bool v) { sum_ += v; }
  void touch(std::string_view v) { mix(v); }
  void touch(Bytes v) { mix(v); }
  void touch(const Address& a) { mix(a.bytes); }

  std::uint64_t sum_ = 0;
};

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
  sink.touch(*mad, findings);

  std::array<std::uint8_t, kMadSize> out;
  encode_mad(*mad, out);
  if (size == kMadSize && !std::equal(out.begin(), out.end(), input.begin()))
    fail("a 256-byte MAD did not re-encode byte for byte");
  Findings again_findings;
  const std::optional<Mad> again = decode_mad(out, 0, again_findings);
  if (!again) fail("an encoded MAD does not decode");
  sink.touch(*again, again_findings);
  if (findings.empty() && !again_findings.empty())
    fail("a clean MAD has findings after re-encoding");

  volatile std::uint64_t keep = sink.sum();
  (void)keep;
  return 0;
}
