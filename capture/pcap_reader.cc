#include "capture/pcap_reader.h"

#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio_ext.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace roceconf {

namespace {

// libpcap phrases that we reword: they name neither the file nor what went wrong plainly.
constexpr std::size_t kReadBufferSize = 1 << 20;
constexpr std::size_t kMappedBufferSize = 64 << 10;

constexpr std::string_view kUnknownFormat = "unknown file format";
constexpr std::string_view kTruncatedPrefixes[] = {"truncated dump file; ",
                                                   "truncated pcapng dump file; "};

std::string open_error(const std::string& path, std::string_view why) {
  if (why == kUnknownFormat)
    return fmt::format("'{}' is not a pcap or pcapng capture (bad magic)", path);
  for (std::string_view prefix : kTruncatedPrefixes)
    if (why.starts_with(prefix))
      return fmt::format("'{}' is truncated inside its file header ({})", path,
                         why.substr(prefix.size()));
  return fmt::format("'{}' is not a readable capture: {}", path, why);
}

std::string read_error(const std::string& path, std::uint64_t frames, std::string_view why) {
  for (std::string_view prefix : kTruncatedPrefixes)
    if (why.starts_with(prefix))
      return fmt::format("'{}' is truncated after frame {}: {}", path, frames,
                         why.substr(prefix.size()));
  return fmt::format("'{}' is corrupt after frame {}: {}", path, frames, why);
}

// A regular file is mapped and handed to libpcap as an unbuffered cookie stream: each of
// libpcap's freads becomes one memcpy from the page cache into its record buffer, instead of a
// read() into a stdio buffer and a second copy out of it.
//
// Only a window of the mapping is resident: pages are faulted in a window ahead of the reader
// (MADV_POPULATE_READ, one call per window rather than a fault per page) and given back once
// read (MADV_DONTNEED), so the resident set stays a few windows whatever the file's size.
struct MappedFile {
  const char* data = nullptr;
  std::size_t size = 0;
  std::size_t pos = 0;
  std::size_t populated = 0;  // [0, populated) has been asked in
  std::size_t released = 0;   // [0, released) has been given back
};

constexpr std::size_t kMapWindow = 8 << 20;
constexpr int kMadvPopulateRead = 22;  // MADV_POPULATE_READ (Linux 5.14); older kernels: EINVAL

void map_advance(MappedFile& m) {
  if (m.pos + kMapWindow > m.populated && m.populated < m.size) {
    const std::size_t end = std::min(m.size, m.populated + 2 * kMapWindow);
    ::madvise(const_cast<char*>(m.data) + m.populated, end - m.populated, kMadvPopulateRead);
    m.populated = end;
  }
  // Give back whole windows behind the reader (page-aligned: data is, windows are multiples).
  if (m.pos >= m.released + 2 * kMapWindow) {
    const std::size_t upto = (m.pos - kMapWindow) / kMapWindow * kMapWindow;
    ::madvise(const_cast<char*>(m.data) + m.released, upto - m.released, MADV_DONTNEED);
    m.released = upto;
  }
}

ssize_t mapped_read(void* cookie, char* buf, std::size_t n) {
  auto* m = static_cast<MappedFile*>(cookie);
  map_advance(*m);
  const std::size_t take = std::min(n, m->size - m->pos);
  std::memcpy(buf, m->data + m->pos, take);
  m->pos += take;
  return static_cast<ssize_t>(take);
}

int mapped_close(void* cookie) {
  auto* m = static_cast<MappedFile*>(cookie);
  ::munmap(const_cast<char*>(m->data), m->size);
  delete m;
  return 0;
}

// nullptr when the file cannot be mapped (not a regular file, mmap refused): the caller falls
// back to a plain stdio stream.
std::FILE* open_mapped(const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode) || st.st_size <= 0) return nullptr;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  const auto size = static_cast<std::size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return nullptr;
  ::madvise(map, size, MADV_SEQUENTIAL);
  auto* m = new MappedFile{static_cast<const char*>(map), size, 0};
  std::FILE* file = ::fopencookie(m, "rb", {mapped_read, nullptr, nullptr, mapped_close});
  if (file == nullptr) {
    mapped_close(m);
    return nullptr;
  }
  std::setvbuf(file, nullptr, _IOFBF, kMappedBufferSize);
  return file;
}

std::string link_type_name(int dlt) {
  const char* name = pcap_datalink_val_to_name(dlt);
  return name ? std::string(name) : fmt::format("DLT {}", dlt);
}

}  // namespace

WireClock wire_clock(const CaptureFrame& frame, LinkType link) {
  WireClock c{static_cast<std::int64_t>(frame.time_ns), frame.orig_length};
  if (link != LinkType::kErf || frame.data.size() < 16) return c;
  const std::uint8_t* h = frame.data.data();
  std::uint64_t ts = 0;  // little-endian 32.32 fixed-point seconds
  for (int i = 7; i >= 0; --i) ts = (ts << 8) | h[i];
  const std::uint64_t fraction = ((ts & 0xFFFFFFFFu) * 1000000000u + 0x80000000u) >> 32;
  c.time_ns = static_cast<std::int64_t>((ts >> 32) * 1000000000u + fraction);
  c.length = static_cast<std::uint32_t>(h[14] << 8 | h[15]);
  return c;
}

std::optional<LinkType> link_type_from_dlt(int dlt) {
  switch (dlt) {
    case DLT_EN10MB:
      return LinkType::kEthernet;
    case DLT_RAW:
    case DLT_IPV4:
    case DLT_IPV6:
      return LinkType::kRaw;  // the decoder tells IPv4 from IPv6 by the version nibble
    case DLT_LINUX_SLL:
      return LinkType::kLinuxSll;
    case DLT_LINUX_SLL2:
      return LinkType::kLinuxSll2;
    case DLT_ERF:
      return LinkType::kErf;
    case DLT_INFINIBAND:
      return LinkType::kInfiniBand;
    default:
      return std::nullopt;
  }
}

std::expected<PcapReader, std::string> PcapReader::open(const std::string& path) {
  // fopen ourselves: libpcap's own message for a missing file does not say "cannot open".
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return std::unexpected(fmt::format("cannot open '{}': {}", path, std::strerror(EISDIR)));
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr)
    return std::unexpected(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  if (st.st_size == 0) {
    std::fclose(file);
    return std::unexpected(fmt::format("'{}' is empty, not a pcap or pcapng capture", path));
  }
  if (std::FILE* mapped = open_mapped(path, st)) {
    std::fclose(file);
    file = mapped;
  } else {
    // libpcap freads each record header and body separately: a large buffer saves most
    // syscalls.
    std::setvbuf(file, nullptr, _IOFBF, kReadBufferSize);
  }
  // Only this reader touches the stream: spare libpcap's two freads per record the stdio lock.
  ::__fsetlocking(file, FSETLOCKING_BYCALLER);

  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* handle =
      pcap_fopen_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (handle == nullptr) {
    std::fclose(file);  // on failure libpcap leaves the stream to us
    return std::unexpected(open_error(path, errbuf));
  }
  const int dlt = pcap_datalink(handle);
  const std::optional<LinkType> link = link_type_from_dlt(dlt);
  if (!link) {
    pcap_close(handle);
    return std::unexpected(fmt::format(
        "'{}' has link type {} ({}), which roceconf cannot decode; capture on an Ethernet or "
        "InfiniBand interface, or as raw IP, Linux cooked (SLL/SLL2) or ERF",
        path, link_type_name(dlt), dlt));
  }
  return PcapReader(handle, path, *link, dlt, pcap_snapshot(handle));
}

PcapReader::PcapReader(PcapReader&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      path_(std::move(other.path_)),
      link_(other.link_),
      dlt_(other.dlt_),
      snapshot_(other.snapshot_),
      frames_(other.frames_) {}

PcapReader& PcapReader::operator=(PcapReader&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) pcap_close(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
    link_ = other.link_;
    dlt_ = other.dlt_;
    snapshot_ = other.snapshot_;
    frames_ = other.frames_;
  }
  return *this;
}

PcapReader::~PcapReader() {
  if (handle_ != nullptr) pcap_close(handle_);
}

std::expected<std::optional<CaptureFrame>, std::string> PcapReader::next() {
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  switch (pcap_next_ex(handle_, &header, &data)) {
    case 1:
      break;
    case PCAP_ERROR_BREAK:
      return std::optional<CaptureFrame>{};
    default:
      return std::unexpected(read_error(path_, frames_, pcap_geterr(handle_)));
  }
  ++frames_;
  // Unsigned arithmetic: a nonsense pcapng timestamp wraps instead of overflowing.
  const std::uint64_t ns = static_cast<std::uint64_t>(header->ts.tv_sec) * 1'000'000'000u +
                           static_cast<std::uint64_t>(header->ts.tv_usec);
  return CaptureFrame{Bytes(data, header->caplen), ns, header->len};
}

}  // namespace roceconf
