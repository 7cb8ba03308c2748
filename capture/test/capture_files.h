// Test helper: writes small capture files (pcap through libpcap, pcapng byte by byte) into a
// temporary folder, so tests never depend on files they did not make.
#pragma once

#include <pcap/pcap.h>
#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace roceconf::test {

struct TestFrame {
  std::vector<std::uint8_t> bytes;
  std::uint64_t time_ns = 0;
  std::uint32_t orig_length = 0;  // 0: the captured length
};

// A fresh folder under /tmp, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "roceconf-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// pcap with nanosecond (default) or microsecond timestamps, written by libpcap itself.
inline bool write_pcap(const std::string& path, int dlt, const std::vector<TestFrame>& frames,
                       bool nano = true) {
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(
      dlt, 262144, nano ? PCAP_TSTAMP_PRECISION_NANO : PCAP_TSTAMP_PRECISION_MICRO);
  if (dead == nullptr) return false;
  pcap_dumper_t* dumper = pcap_dump_open(dead, path.c_str());
  if (dumper == nullptr) {
    pcap_close(dead);
    return false;
  }
  for (const TestFrame& f : frames) {
    pcap_pkthdr h{};
    const std::uint64_t unit = nano ? 1 : 1000;
    h.ts.tv_sec = static_cast<time_t>(f.time_ns / 1'000'000'000u);
    h.ts.tv_usec = static_cast<suseconds_t>((f.time_ns % 1'000'000'000u) / unit);
    h.caplen = static_cast<bpf_u_int32>(f.bytes.size());
    h.len = f.orig_length ? f.orig_length : h.caplen;
    pcap_dump(reinterpret_cast<u_char*>(dumper), &h, f.bytes.data());
  }
  pcap_dump_close(dumper);
  pcap_close(dead);
  return true;
}

namespace internal {
inline void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
inline void put16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v));
  out.push_back(static_cast<std::uint8_t>(v >> 8));
}
}  // namespace internal

// pcapng (little-endian): one section, one interface with if_tsresol = 9 (nanoseconds), one
// Enhanced Packet Block per frame.
inline std::vector<std::uint8_t> pcapng_bytes(std::uint16_t linktype,
                                              const std::vector<TestFrame>& frames) {
  using internal::put16;
  using internal::put32;
  std::vector<std::uint8_t> out;
  put32(out, 0x0A0D0D0A);  // Section Header Block
  put32(out, 28);
  put32(out, 0x1A2B3C4D);
  put16(out, 1);
  put16(out, 0);
  put32(out, 0xFFFFFFFF);  // section length unknown
  put32(out, 0xFFFFFFFF);
  put32(out, 28);
  put32(out, 1);  // Interface Description Block
  put32(out, 32);
  put16(out, linktype);
  put16(out, 0);
  put32(out, 262144);
  put16(out, 9);  // if_tsresol
  put16(out, 1);
  put32(out, 9);  // 10^-9, padded to 4 bytes
  put32(out, 0);  // opt_endofopt
  put32(out, 32);
  for (const TestFrame& f : frames) {
    const auto cap = static_cast<std::uint32_t>(f.bytes.size());
    const std::uint32_t padded = (cap + 3) & ~3u;
    put32(out, 6);  // Enhanced Packet Block
    put32(out, 32 + padded);
    put32(out, 0);
    put32(out, static_cast<std::uint32_t>(f.time_ns >> 32));
    put32(out, static_cast<std::uint32_t>(f.time_ns));
    put32(out, cap);
    put32(out, f.orig_length ? f.orig_length : cap);
    out.insert(out.end(), f.bytes.begin(), f.bytes.end());
    out.resize(out.size() + (padded - cap), 0);
    put32(out, 32 + padded);
  }
  return out;
}

inline bool write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

inline std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace roceconf::test
