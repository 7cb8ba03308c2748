// Synthetic RoCE traffic for benchmarks, fuzz seeds and tests. A dozen concurrent connections
// over RoCEv2 (IPv4 and IPv6, some 802.1Q-tagged), RoCEv1 and native IB each set up with CM
// (REQ/REP/RTU, SIDR for UD), exchange RC/UC/UD messages segmented by their path MTU with the
// ACKs, read and atomic responses, RNR and sequence-error NAKs with retransmission, and CNPs
// after ECN marks that such traffic carries, then disconnect (DREQ/DREP) and are replaced.
// Output depends only on the seed: std::mt19937_64's raw output is specified by the standard,
// and no std:: distribution (whose results differ between libraries) is used.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "dissector/bytes.h"
#include "dissector/packet.h"

namespace roceconf {

class TrafficGenerator {
 public:
  explicit TrafficGenerator(std::uint64_t seed);
  ~TrafficGenerator();
  TrafficGenerator(TrafficGenerator&&) noexcept;
  TrafficGenerator& operator=(TrafficGenerator&&) noexcept;

  // The next frame on the wire; `*link` (when not null) receives its link type: kEthernet for
  // RoCE, kInfiniBand for native IB (LRH first, VCRC last).
  std::vector<std::uint8_t> next(LinkType* link);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Ways to break a valid frame; each makes decode() report at least one finding.
enum class Mutation : std::uint8_t {
  kTruncate,        // cut short anywhere
  kBadIcrc,         // one bit flipped in the ICRC or in the payload it covers
  kBadLength,       // IP, UDP, GRH or LRH length off by a few bytes
  kBadPad,          // pad count disagreeing with the payload
  kTver,            // BTH transport version 1..15
  kReservedOpcode,  // a reserved opcode in place of the real one
};
inline constexpr std::array<Mutation, 6> kAllMutations = {
    Mutation::kTruncate,  Mutation::kBadIcrc, Mutation::kTver,
    Mutation::kBadLength, Mutation::kBadPad,  Mutation::kReservedOpcode};

std::string_view mutation_name(Mutation mutation);  // "truncate", "bad-icrc", ...

// A malformed copy of `frame`, a valid Ethernet, raw-IP or InfiniBand frame such as next()
// returns. Everything but the defect is kept consistent (lengths, checksums, ICRC and VCRC are
// recomputed) so that the defect alone is what a decoder sees. Frames without a BTH can only be
// truncated.
std::vector<std::uint8_t> mutate(Bytes frame, LinkType link, Mutation mutation,
                                 std::mt19937_64& rng);
// Same, with a mutation picked by `rng`.
std::vector<std::uint8_t> mutate(Bytes frame, LinkType link, std::mt19937_64& rng);

// Writes the first `n_frames` Ethernet frames of TrafficGenerator(seed) to a pcap file
// (LINKTYPE_ETHERNET; native-IB frames are skipped), timestamped as on a 100 Gb/s link.
// Returns false with a message in `*error` when the file cannot be written.
bool write_pcap(const std::string& path, std::size_t n_frames, std::uint64_t seed,
                std::string* error = nullptr);

}  // namespace roceconf
