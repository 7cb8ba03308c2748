// Reads pcap and pcapng capture files through libpcap, frame by frame, with nanosecond
// timestamps. Errors are values: one line saying what is wrong with which file.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>

#include "dissector/bytes.h"
#include "dissector/packet.h"

struct pcap;  // libpcap's pcap_t, kept out of this header

namespace roceconf {

struct CaptureFrame {
  Bytes data;                     // the captured bytes; valid until the next call to next()
  std::uint64_t time_ns = 0;      // since the Unix epoch
  std::uint32_t orig_length = 0;  // length on the wire (>= data.size() when snapped)
};

class PcapReader {
 public:
  // Opens `path` (pcap or pcapng). Fails for a missing or unreadable file, a file that is not a
  // capture, or a link type the dissector cannot decode.
  static std::expected<PcapReader, std::string> open(const std::string& path);

  PcapReader(PcapReader&& other) noexcept;
  PcapReader& operator=(PcapReader&& other) noexcept;
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;
  ~PcapReader();

  // The next frame, nullopt at the end of the file, or an error for a truncated or corrupt
  // record (frames before it were good).
  std::expected<std::optional<CaptureFrame>, std::string> next();

  LinkType link_type() const { return link_; }
  int dlt() const { return dlt_; }            // libpcap's DLT_* value, for writing the same kind
  int snapshot() const { return snapshot_; }  // the file's snapshot length
  std::uint64_t frames_read() const { return frames_; }
  const std::string& path() const { return path_; }

 private:
  PcapReader(pcap* handle, std::string path, LinkType link, int dlt, int snapshot)
      : handle_(handle), path_(std::move(path)), link_(link), dlt_(dlt), snapshot_(snapshot) {}

  pcap* handle_ = nullptr;
  std::string path_;
  LinkType link_ = LinkType::kEthernet;
  int dlt_ = 0;
  int snapshot_ = 0;
  std::uint64_t frames_ = 0;
};

// Maps a libpcap DLT_* value to the dissector's link type; nullopt for link types it cannot
// decode.
std::optional<LinkType> link_type_from_dlt(int dlt);

// When a frame was on the wire, and how long it was there. An ERF record carries its own
// timestamp (finer than the pcap record's) and wire length (without the ERF header), which is
// what Wireshark shows; other link types take the pcap record's.
struct WireClock {
  std::int64_t time_ns = 0;
  std::uint32_t length = 0;
};
WireClock wire_clock(const CaptureFrame& frame, LinkType link);

}  // namespace roceconf
