// roceconf-gen: writes synthetic RoCE traffic (testing/traffic.h) to a pcap file, or writes the
// fuzzers' seed corpora.
//   roceconf-gen --frames 1000000 --seed 1 --out traffic.pcap
//   roceconf-gen --corpus dissector/fuzz/corpus
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <tuple>

#include "dissector/testing/traffic.h"

namespace {

namespace fs = std::filesystem;
using roceconf::Bytes;
using roceconf::LinkType;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string wire_name(const roceconf::Packet& p) {
  return p.lrh ? (p.grh ? "ib-grh" : "ib") : p.grh ? "v1" : p.ipv6 ? "v2ipv6" : "v2ipv4";
}

bool write_file(const fs::path& path, Bytes bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

// Seed corpora, small on purpose: the smallest frame of each (wire, opcode) and the smallest
// 802.1Q-tagged frame of each wire seen in the first frames of the generator, one mutated copy
// of each, and the MADs of every CM message seen, whole and cut short.
int write_corpus(const fs::path& dir, std::uint64_t seed) {
  constexpr std::size_t kScan = 300'000;
  constexpr std::size_t kMadsPerKind = 2;
  const fs::path decode_dir = dir / "decode";
  const fs::path mad_dir = dir / "mad";
  fs::create_directories(decode_dir);
  fs::create_directories(mad_dir);

  struct Kept {
    std::vector<std::uint8_t> frame;
    LinkType link;
  };
  std::map<std::string, Kept> smallest;
  std::map<std::string, std::vector<std::vector<std::uint8_t>>> mads;
  roceconf::TrafficGenerator gen(seed);
  for (std::size_t i = 0; i < kScan; ++i) {
    LinkType link;
    std::vector<std::uint8_t> frame = gen.next(&link);
    const roceconf::Packet p = roceconf::decode(frame, link);
    const std::string key = p.vlans.empty()
                                ? fmt::format("{}-{}", wire_name(p), lower(p.opcode()->name))
                                : fmt::format("{}-vlan", wire_name(p));
    auto it = smallest.find(key);
    if (it == smallest.end() || frame.size() < it->second.frame.size())
      smallest[key] = Kept{frame, link};
    if (p.mad && p.mad->cm) {
      auto& kind = mads[fmt::format("{}-{:02x}", lower(roceconf::cm_message_name(*p.mad->cm)),
                                    p.mad->header.method)];
      if (kind.size() < kMadsPerKind) kind.emplace_back(p.payload.begin(), p.payload.end());
    }
  }

  std::mt19937_64 rng(seed);
  std::size_t n = 0;
  std::size_t m = 0;
  bool ok = true;
  for (const auto& [key, kept] : smallest) {
    ok &= write_file(decode_dir / fmt::format("{:03}-{}", n, key), kept.frame);
    const auto mutation = roceconf::kAllMutations[n % roceconf::kAllMutations.size()];
    const auto bad = roceconf::mutate(kept.frame, kept.link, mutation, rng);
    ok &= write_file(
        decode_dir / fmt::format("{:03}-{}-{}", n, roceconf::mutation_name(mutation), key), bad);
    ++n;
  }
  for (const auto& [key, list] : mads) {
    for (const auto& mad : list) {
      ok &= write_file(mad_dir / fmt::format("{:03}-{}", m, key), mad);
      // And a short one: the decoder must cope with MADs cut anywhere.
      const Bytes cut = Bytes(mad).first(rng() % mad.size());
      ok &= write_file(mad_dir / fmt::format("{:03}-{}-truncated", m, key), cut);
      ++m;
    }
  }
  if (!ok) {
    fmt::print(stderr, "roceconf-gen: cannot write the corpus under {}\n", dir.string());
    return 1;
  }
  fmt::print("{} frame seeds in {}, {} MAD seeds in {}\n", 2 * n, decode_dir.string(), 2 * m,
             mad_dir.string());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes deterministic synthetic RoCE traffic (RoCEv2/v1, RC/UC/UD, CM) to a pcap"};
  std::size_t frames = 10000;
  std::uint64_t seed = 1;
  std::string out;
  std::string corpus;
  app.add_option("--frames", frames, "Number of frames")->capture_default_str();
  app.add_option("--seed", seed, "Generator seed: same seed, same bytes")->capture_default_str();
  auto* out_opt = app.add_option("--out", out, "pcap file to write");
  app.add_option("--corpus", corpus, "Write fuzz seed corpora into DIR/decode and DIR/mad instead")
      ->excludes(out_opt);
  CLI11_PARSE(app, argc, argv);

  if (!corpus.empty()) return write_corpus(corpus, seed);
  if (out.empty()) {
    fmt::print(stderr, "roceconf-gen: --out or --corpus is required\n");
    return 2;
  }
  std::string error;
  if (!roceconf::write_pcap(out, frames, seed, &error)) {
    fmt::print(stderr, "roceconf-gen: {}\n", error);
    return 1;
  }
  return 0;
}
