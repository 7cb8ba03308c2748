// Writes pcapng (draft-ietf-opsawg-pcapng) with a comment on every packet, which the suite uses
// to tag evidence with the case and step that sent or matched each frame; libpcap cannot write
// per-packet comments, so the blocks are built here: a Section Header Block, one Interface
// Description Block per interface (nanosecond timestamps, if_tsresol 9) and an Enhanced Packet
// Block per frame with opt_comment and epb_flags. Little-endian, 32-bit padded.
//
// The file appears atomically: blocks go to `path.tmp`, which close() renames to `path`.
// flush() publishes what is written so far the same way (then continues on a fresh copy), so a
// run that is killed later still leaves a valid file at `path`. flush() copies the file, so
// call it at checkpoints (after each case), not after every packet.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "capture/port/port.h"
#include "dissector/bytes.h"
#include "dissector/packet.h"

namespace roceconf {

enum class PacketDirection : std::uint8_t { kUnknown, kInbound, kOutbound };

struct PcapngRecord {
  Bytes frame = {};
  std::int64_t unix_ns = 0;                               // nanoseconds since the Unix epoch
  std::string_view comment = {};                          // UTF-8; none when empty
  std::uint32_t interface = 0;                            // index into PcapngOptions::interfaces
  PacketDirection direction = PacketDirection::kUnknown;  // epb_flags, when known
  std::uint32_t original_length = 0;                      // on the wire; 0: frame.size()
};

struct PcapngOptions {
  std::vector<std::string> interfaces = {"roceconf"};  // if_name of each interface
  LinkType link = LinkType::kEthernet;
  std::uint32_t snaplen = 262144;
  std::string application = "roceconf";  // shb_userappl
};

class PcapngWriter {
 public:
  // Creates `path`.tmp. Errors: kNotFound (no such directory), kPermission, kIo.
  static std::expected<PcapngWriter, PortError> create(const std::string& path,
                                                       PcapngOptions options = {});

  PcapngWriter(PcapngWriter&& other) noexcept;
  PcapngWriter& operator=(PcapngWriter&& other) noexcept;
  PcapngWriter(const PcapngWriter&) = delete;
  PcapngWriter& operator=(const PcapngWriter&) = delete;
  ~PcapngWriter();  // close(), errors ignored

  std::expected<void, PortError> write(const PcapngRecord& record);
  // Makes `path` a durable, valid file holding everything written so far.
  std::expected<void, PortError> flush();
  // flush() and finish; later writes fail with kClosed. Idempotent.
  std::expected<void, PortError> close();

  const std::string& path() const { return path_; }
  std::uint64_t packets() const { return packets_; }

 private:
  PcapngWriter(int fd, std::string path, std::uint32_t interfaces, std::uint32_t snaplen);
  std::expected<void, PortError> write_out();
  std::expected<void, PortError> publish();
  PortError io_error(const std::string& what, int err) const;

  int fd_ = -1;  // the working file, path_ + ".tmp"
  std::string path_;
  std::uint32_t interfaces_ = 0;
  std::uint32_t snaplen_ = 0;
  std::uint64_t packets_ = 0;
  std::vector<std::uint8_t> buffer_;  // blocks not yet written to fd_
};

}  // namespace roceconf
