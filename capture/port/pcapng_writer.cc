#include "capture/port/pcapng_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace roceconf {
namespace {

// Block types and option codes (draft-ietf-opsawg-pcapng §4, §3.5).
constexpr std::uint32_t kSectionHeader = 0x0A0D0D0A;
constexpr std::uint32_t kInterfaceDescription = 1;
constexpr std::uint32_t kEnhancedPacket = 6;
constexpr std::uint32_t kByteOrderMagic = 0x1A2B3C4D;
constexpr std::uint16_t kOptEnd = 0;
constexpr std::uint16_t kOptComment = 1;
constexpr std::uint16_t kShbUserAppl = 4;
constexpr std::uint16_t kIfName = 2;
constexpr std::uint16_t kIfTsresol = 9;
constexpr std::uint16_t kEpbFlags = 2;
constexpr std::size_t kWriteThreshold = 1 << 20;  // buffered bytes before a write(2)

void put16(std::vector<std::uint8_t>& b, std::uint16_t v) {
  b.push_back(static_cast<std::uint8_t>(v));
  b.push_back(static_cast<std::uint8_t>(v >> 8));
}
void put32(std::vector<std::uint8_t>& b, std::uint32_t v) {
  put16(b, static_cast<std::uint16_t>(v));
  put16(b, static_cast<std::uint16_t>(v >> 16));
}
void pad32(std::vector<std::uint8_t>& b) {
  while (b.size() % 4 != 0) b.push_back(0);
}
void put_bytes(std::vector<std::uint8_t>& b, Bytes data) {
  b.insert(b.end(), data.begin(), data.end());
  pad32(b);
}
void put_option(std::vector<std::uint8_t>& b, std::uint16_t code, Bytes value) {
  put16(b, code);
  put16(b, static_cast<std::uint16_t>(value.size()));
  put_bytes(b, value);
}
void put_option(std::vector<std::uint8_t>& b, std::uint16_t code, std::string_view value) {
  put_option(b, code, Bytes(reinterpret_cast<const std::uint8_t*>(value.data()), value.size()));
}
void put_end_of_options(std::vector<std::uint8_t>& b) {
  put16(b, kOptEnd);
  put16(b, 0);
}

// Starts a block; returns its offset for end_block().
std::size_t begin_block(std::vector<std::uint8_t>& b, std::uint32_t type) {
  const std::size_t start = b.size();
  put32(b, type);
  put32(b, 0);  // total length, patched by end_block()
  return start;
}
void end_block(std::vector<std::uint8_t>& b, std::size_t start) {
  pad32(b);
  const auto total = static_cast<std::uint32_t>(b.size() - start + 4);
  put32(b, total);  // repeated at the end so readers can walk backwards
  for (int i = 0; i < 4; ++i) b[start + 4 + i] = static_cast<std::uint8_t>(total >> (8 * i));
}

// An option value is at most 65535 bytes; cut a longer comment on a UTF-8 character boundary.
std::string_view clip_utf8(std::string_view s) {
  if (s.size() <= 0xFFFF) return s;
  std::size_t n = 0xFFFF;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

int write_all(int fd, const std::uint8_t* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

// Copies all of `from` into `to` (both at offset 0); copy_file_range shares extents where the
// file system can.
int copy_file(int from, int to) {
  loff_t in = 0;
  for (;;) {
    const ssize_t n = copy_file_range(from, &in, to, nullptr, 1 << 30, 0);
    if (n == 0) return 0;
    if (n > 0) continue;
    if (errno == EINTR) continue;
    if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP) return errno;
    break;  // not supported here: plain copy from where it stopped
  }
  std::vector<std::uint8_t> chunk(1 << 16);
  for (;;) {
    const ssize_t n = pread(from, chunk.data(), chunk.size(), in);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return 0;
    if (const int err = write_all(to, chunk.data(), static_cast<std::size_t>(n))) return err;
    in += n;
  }
}

PortError open_error(const std::string& path, int err) {
  if (err == ENOENT)
    return {PortErrorCode::kNotFound,
            "cannot create '" + path + "': directory '" + directory_of(path) + "' does not exist"};
  if (err == EACCES || err == EPERM || err == EROFS)
    return {PortErrorCode::kPermission,
            "cannot create '" + path + "': " + std::strerror(err) + " (choose another directory)"};
  return {PortErrorCode::kIo, "cannot create '" + path + "': " + std::strerror(err)};
}

}  // namespace

PcapngWriter::PcapngWriter(int fd, std::string path, std::uint32_t interfaces,
                           std::uint32_t snaplen)
    : fd_(fd), path_(std::move(path)), interfaces_(interfaces), snaplen_(snaplen) {}

PcapngWriter::PcapngWriter(PcapngWriter&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      interfaces_(other.interfaces_),
      snaplen_(other.snaplen_),
      packets_(other.packets_),
      buffer_(std::move(other.buffer_)) {}

PcapngWriter& PcapngWriter::operator=(PcapngWriter&& other) noexcept {
  if (this != &other) {
    (void)close();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    interfaces_ = other.interfaces_;
    snaplen_ = other.snaplen_;
    packets_ = other.packets_;
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

PcapngWriter::~PcapngWriter() {
  (void)close();
}

std::expected<PcapngWriter, PortError> PcapngWriter::create(const std::string& path,
                                                            PcapngOptions options) {
  if (options.interfaces.empty()) options.interfaces.emplace_back("roceconf");
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return std::unexpected(open_error(tmp, errno));
  PcapngWriter writer(fd, path, static_cast<std::uint32_t>(options.interfaces.size()),
                      options.snaplen);

  std::vector<std::uint8_t>& b = writer.buffer_;
  std::size_t start = begin_block(b, kSectionHeader);
  put32(b, kByteOrderMagic);
  put16(b, 1);           // major version
  put16(b, 0);           // minor version
  put32(b, 0xFFFFFFFF);  // section length: unknown (-1)
  put32(b, 0xFFFFFFFF);
  put_option(b, kShbUserAppl, options.application);
  put_end_of_options(b);
  end_block(b, start);

  for (const std::string& name : options.interfaces) {
    start = begin_block(b, kInterfaceDescription);
    put16(b, static_cast<std::uint16_t>(options.link));
    put16(b, 0);  // reserved
    put32(b, options.snaplen);
    put_option(b, kIfName, name);
    const std::uint8_t nanoseconds = 9;  // if_tsresol: 10^-9 s
    put_option(b, kIfTsresol, Bytes(&nanoseconds, 1));
    put_end_of_options(b);
    end_block(b, start);
  }
  return writer;
}

PortError PcapngWriter::io_error(const std::string& what, int err) const {
  if (err == ENOSPC || err == EDQUOT)
    return {PortErrorCode::kIo, what + " '" + path_ + "': disk full (free space and rerun)"};
  return {PortErrorCode::kIo, what + " '" + path_ + "': " + std::strerror(err)};
}

std::expected<void, PortError> PcapngWriter::write(const PcapngRecord& r) {
  if (fd_ < 0)
    return std::unexpected(
        PortError{PortErrorCode::kClosed, "pcapng writer for '" + path_ + "' is closed"});
  if (r.interface >= interfaces_)
    return std::unexpected(PortError{PortErrorCode::kNotFound,
                                     "pcapng interface " + std::to_string(r.interface) +
                                         " not declared (the writer has " +
                                         std::to_string(interfaces_) + "; add it to the options)"});
  const std::size_t captured = std::min<std::size_t>(r.frame.size(), snaplen_);
  const auto original =
      static_cast<std::uint32_t>(std::max<std::size_t>(r.original_length, r.frame.size()));
  const auto ts = static_cast<std::uint64_t>(std::max<std::int64_t>(r.unix_ns, 0));

  std::vector<std::uint8_t>& b = buffer_;
  const std::size_t start = begin_block(b, kEnhancedPacket);
  put32(b, r.interface);
  put32(b, static_cast<std::uint32_t>(ts >> 32));
  put32(b, static_cast<std::uint32_t>(ts));
  put32(b, static_cast<std::uint32_t>(captured));
  put32(b, original);
  put_bytes(b, r.frame.first(captured));
  const bool has_options = !r.comment.empty() || r.direction != PacketDirection::kUnknown;
  if (!r.comment.empty()) put_option(b, kOptComment, clip_utf8(r.comment));
  if (r.direction != PacketDirection::kUnknown) {
    std::vector<std::uint8_t> flags;
    put32(flags, r.direction == PacketDirection::kInbound ? 1u : 2u);  // bits 0-1: direction
    put_option(b, kEpbFlags, flags);
  }
  if (has_options) put_end_of_options(b);
  end_block(b, start);
  ++packets_;

  if (buffer_.size() >= kWriteThreshold) return write_out();
  return {};
}

std::expected<void, PortError> PcapngWriter::write_out() {
  if (const int err = write_all(fd_, buffer_.data(), buffer_.size()))
    return std::unexpected(io_error("cannot write", err));
  buffer_.clear();
  return {};
}

// Makes the working file durable and renames it to path_; fd_ then refers to path_.
std::expected<void, PortError> PcapngWriter::publish() {
  if (auto written = write_out(); !written) return written;
  if (fsync(fd_) != 0) return std::unexpected(io_error("cannot sync", errno));
  const std::string tmp = path_ + ".tmp";
  if (rename(tmp.c_str(), path_.c_str()) != 0)
    return std::unexpected(io_error("cannot rename '" + tmp + "' to", errno));
  // The rename itself is durable only once the directory is.
  const int dir = ::open(directory_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    fsync(dir);
    ::close(dir);
  }
  return {};
}

std::expected<void, PortError> PcapngWriter::flush() {
  if (fd_ < 0)
    return std::unexpected(
        PortError{PortErrorCode::kClosed, "pcapng writer for '" + path_ + "' is closed"});
  if (auto published = publish(); !published) return published;
  // Later blocks go to a fresh working copy, so `path` stays valid until the next publish.
  const std::string tmp = path_ + ".tmp";
  const int next = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (next < 0) return std::unexpected(open_error(tmp, errno));
  if (const int err = copy_file(fd_, next)) {
    ::close(next);
    return std::unexpected(io_error("cannot copy", err));
  }
  ::close(fd_);
  fd_ = next;
  return {};
}

std::expected<void, PortError> PcapngWriter::close() {
  if (fd_ < 0) return {};
  auto published = publish();
  ::close(fd_);
  fd_ = -1;
  return published;
}

}  // namespace roceconf
