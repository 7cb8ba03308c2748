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

#include "dissector/fuzz/touch_sink.h"
#include "dissector/packet.h"

namespace {

using namespace roceconf;

using fuzz::TouchSink;

void touch(TouchSink& sink, const Packet& p) {
  visit_fields(p, sink);
  sink.mix(p.payload);
  sink.touch(p.findings);
}

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
    touch(sink, p);

    // Other link headers (SLL, ERF) are not written back: their packets re-encode as Ethernet.
    EncodeOptions options;
    options.link = link == LinkType::kRaw ? LinkType::kRaw : LinkType::kEthernet;
    encode_into(out, p, options);
    const LinkType out_link = p.lrh ? LinkType::kInfiniBand : options.link;
    decode_into(q, out, out_link);
    touch(sink, q);

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
