// Frames for the analysis tests: built as Packets, encoded to bytes and decoded back, so the
// analyzer sees exactly what it would see from a capture. Two hosts A (192.0.2.1, QP kQpA)
// and B (192.0.2.2, QP kQpB); A usually requests, B responds.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "dissector/analysis/stream_analyzer.h"
#include "dissector/packet.h"

namespace roceconf::analysis::test {

inline constexpr std::uint32_t kQpA = 0x000011;
inline constexpr std::uint32_t kQpB = 0x000022;

inline const std::uint8_t* pattern() {
  static const auto bytes = [] {
    std::array<std::uint8_t, 8192> b{};
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(i * 31 + 7);
    return b;
  }();
  return bytes.data();
}

// An RoCEv2/IPv4 packet from A to B (or B to A) with the given BTH fields.
inline Packet base(bool from_a, std::uint8_t opcode, std::uint32_t dqpn, std::uint32_t psn) {
  Packet p;
  p.eth = Ethernet{};
  Ipv4 ip;
  ip.src = from_a ? Ipv4Address{192, 0, 2, 1} : Ipv4Address{192, 0, 2, 2};
  ip.dst = from_a ? Ipv4Address{192, 0, 2, 2} : Ipv4Address{192, 0, 2, 1};
  p.ipv4 = ip;
  p.udp = Udp{};
  Bth b;
  b.opcode = opcode;
  b.dqpn = dqpn;
  b.psn = psn;
  p.bth = b;
  return p;
}

// A request from A to B's QP (or B to A's), `length` payload bytes.
inline Packet request(std::uint8_t opcode, std::uint32_t psn, std::uint32_t length = 0,
                      bool from_a = true) {
  Packet p = base(from_a, opcode, from_a ? kQpB : kQpA, psn);
  const OpcodeInfo& op = opcode_info(opcode);
  if (op.headers & hdr::kReth) p.reth = Reth{0x1000, 0x1234, length};
  if (length != 0 && op.kind != OpKind::kReadRequest) p.payload = Bytes(pattern(), length);
  return p;
}

inline Packet read_request(std::uint32_t psn, std::uint32_t dmalen) {
  Packet p = base(true, opcode::kRcReadRequest, kQpB, psn);
  p.reth = Reth{0x1000, 0x1234, dmalen};
  return p;
}

// A response from B to A's QP (or A to B's).
inline Packet ack(std::uint32_t psn, std::uint32_t msn, std::uint8_t syndrome = 0x1F,
                  bool from_b = true) {
  Packet p = base(!from_b, opcode::kRcAck, from_b ? kQpA : kQpB, psn);
  p.aeth = Aeth{syndrome, msn};
  return p;
}

inline Packet read_response(std::uint8_t opcode, std::uint32_t psn, std::uint32_t length,
                            std::uint32_t msn) {
  Packet p = base(false, opcode, kQpA, psn);
  if (opcode != opcode::kRcReadResponseMiddle) p.aeth = Aeth{0x1F, msn};
  if (length != 0) p.payload = Bytes(pattern(), length);
  return p;
}

// A CM MAD on QP1.
inline Packet cm(bool from_a, const CmMessage& msg, std::uint64_t tid) {
  Packet p = base(from_a, opcode::kUdSendOnly, 1, 0);
  p.deth = Deth{kGsiQkey, 0, 1};
  Mad m;
  m.header.tid = tid;
  m.cm = msg;
  p.mad = m;
  return p;
}

// Feeds frames 1, 2, ... one microsecond apart.
class Stream {
 public:
  explicit Stream(AnalyzerOptions options = {}) : analyzer(options) {}

  const FrameAnalysis& send(const Packet& p) {
    encode_into(bytes_, p);
    const Packet decoded = decode(bytes_);
    EXPECT_TRUE(decoded.bth.has_value());
    time_ns += 1000;
    return analyzer.add(frame++, time_ns, decoded);
  }
  const FrameAnalysis& at(std::uint64_t n) const {
    const FrameAnalysis* r = analyzer.result(n);
    EXPECT_NE(r, nullptr) << "frame " << n;
    static const FrameAnalysis kEmpty;
    return r != nullptr ? *r : kEmpty;
  }

  StreamAnalyzer analyzer;
  std::uint64_t frame = 1;
  std::int64_t time_ns = 0;

 private:
  std::vector<std::uint8_t> bytes_;
};

// Flags of at least warning severity, by name, for "nothing went wrong" checks.
inline std::vector<std::string> problems(const FrameAnalysis& fa) {
  std::vector<std::string> out;
  for (const Flag& f : fa.flags)
    if (f.severity() != Severity::kNote) out.emplace_back(f.name());
  return out;
}

}  // namespace roceconf::analysis::test
