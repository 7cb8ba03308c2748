// libFuzzer target for the frame codec: each input is decoded as every link type, every field
// and finding is read, and the packet is re-encoded and decoded again. A frame that decodes
// without findings must stay clean through the codec, whose output must then be a fixed point
// (re-encoding its decoding gives the same bytes); malformed frames only must not crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <variant>
#include <vector>

#include "dissector/packet.h"

namespace {

using namespace roceconf;

// Reads every byte of every value, so that ASan catches a view past its frame.
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
  void touch(const Packet& p) {
    visit_fields(p, *this);
    mix(p.payload);
    for (const Finding& f : p.findings) {
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

constexpr LinkType kLinks[] = {LinkType::kEthernet, LinkType::kRaw,        LinkType::kLinuxSll,
                               LinkType::kErf,      LinkType::kInfiniBand, LinkType::kLinuxSll2};

[[noreturn]] void fail(LinkType link, const char* what, const Packet& p) {
  std::fprintf(stderr, "decode_fuzzer: link %d: %s\n", static_cast<int>(link), what);
  for (const Finding& f : p.findings)
    std::fprintf(stderr, "  %.*s: %s\n", static_cast<int>(f.code_name().size()),
                 f.code_name().data(), f.message.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Bytes input(data, size);
  TouchSink sink;
  Packet p;
  Packet q;
  std::vector<std::uint8_t> out;
  std::vector<std::uint8_t> again;
  for (const LinkType link : kLinks) {
    decode_into(p, input, link);
    sink.touch(p);

    // Other link headers (SLL, ERF) are not written back: their packets re-encode as Ethernet.
    EncodeOptions options;
    options.link = link == LinkType::kRaw ? LinkType::kRaw : LinkType::kEthernet;
    encode_into(out, p, options);
    const LinkType out_link = p.lrh ? LinkType::kInfiniBand : options.link;
    decode_into(q, out, out_link);
    sink.touch(q);

    if (p.framing != Framing::kNone && p.findings.empty()) {
      if (!q.findings.empty()) fail(link, "a clean frame has findings after re-encoding", q);
      encode_into(again, q, options);
      if (again != out) fail(link, "re-encoding a re-encoded clean frame changed it", q);
    }
  }
  volatile std::uint64_t keep = sink.sum();
  (void)keep;
  return 0;
}
