// Decode, encode and ICRC throughput over ~10k frames of mixed synthetic traffic
// (testing/traffic.h): RoCEv2/v1 and native IB, RC/UC/UD, ACKs, reads, atomics, CNPs and CM.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "dissector/icrc.h"
#include "dissector/packet.h"
#include "dissector/testing/traffic.h"

namespace roceconf {
namespace {

constexpr std::size_t kFrames = 10'000;

struct Corpus {
  std::vector<std::vector<std::uint8_t>> frames;
  std::vector<LinkType> links;
  std::vector<Packet> packets;  // decoded once, for the encode benchmark (views into `frames`)
};

const Corpus& corpus() {
  static const Corpus c = [] {
    Corpus out;
    TrafficGenerator gen(1);
    out.frames.reserve(kFrames);
    for (std::size_t i = 0; i < kFrames; ++i) {
      LinkType link;
      out.frames.push_back(gen.next(&link));
      out.links.push_back(link);
    }
    for (std::size_t i = 0; i < kFrames; ++i)
      out.packets.push_back(decode(out.frames[i], out.links[i]));
    return out;
  }();
  return c;
}

void decode_loop(benchmark::State& state, const DecodeOptions& options) {
  const Corpus& c = corpus();
  Packet p;
  std::size_t i = 0;
  std::int64_t bytes = 0;
  std::int64_t bad = 0;
  for (auto _ : state) {
    decode_into(p, c.frames[i], c.links[i], options);
    bad += p.icrc && !p.icrc->ok();
    bytes += static_cast<std::int64_t>(c.frames[i].size());
    if (++i == c.frames.size()) i = 0;
  }
  benchmark::DoNotOptimize(bad);
  if (bad != 0) state.SkipWithError("generated traffic has bad ICRCs");
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(bytes);
}

void BM_Decode(benchmark::State& state) {
  decode_loop(state, DecodeOptions{});
}
BENCHMARK(BM_Decode);

void BM_DecodeNoIcrc(benchmark::State& state) {
  DecodeOptions options;
  options.check_icrc = false;
  decode_loop(state, options);
}
BENCHMARK(BM_DecodeNoIcrc);

void BM_Encode(benchmark::State& state) {
  const Corpus& c = corpus();
  std::vector<std::uint8_t> out;
  out.reserve(8192);
  std::size_t i = 0;
  std::int64_t bytes = 0;
  for (auto _ : state) {
    encode_into(out, c.packets[i]);
    benchmark::DoNotOptimize(out.data());
    bytes += static_cast<std::int64_t>(out.size());
    if (++i == c.packets.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_Encode);

// ICRC alone over a RoCEv2/IPv4 packet (IPv4 .. pad) with a payload of state.range(0) bytes.
void BM_Icrc(benchmark::State& state) {
  Packet p;
  p.ipv4 = Ipv4{};
  p.udp = Udp{};
  p.bth = Bth{};
  const std::vector<std::uint8_t> payload(static_cast<std::size_t>(state.range(0)), 0xA5);
  p.payload = payload;
  EncodeOptions options;
  options.link = LinkType::kRaw;
  const std::vector<std::uint8_t> frame = encode(p, options);
  const Bytes covered = Bytes(frame).first(frame.size() - 4);
  const std::size_t bth_offset = Ipv4::kSize + Udp::kSize;
  for (auto _ : state) {
    std::uint32_t crc = compute_icrc(covered, IcrcFraming::kRoceV2Ipv4, bth_offset);
    benchmark::DoNotOptimize(crc);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(covered.size()));
}
BENCHMARK(BM_Icrc)->Arg(64)->Arg(1024)->Arg(4096);

}  // namespace
}  // namespace roceconf

BENCHMARK_MAIN();
