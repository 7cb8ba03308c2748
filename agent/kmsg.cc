#include "agent/kmsg.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

namespace roceconf::agent {

namespace {

// One decimal field of the prefix; `what` names it in the error.
std::expected<std::uint64_t, std::string> number(std::string_view text, std::string_view what) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    return std::unexpected(fmt::format("{} '{}' is not a decimal number", what, text));
  return v;
}

// The text for an error: at most 60 characters of the line.
std::string excerpt(std::string_view line) {
  if (line.size() <= 60) return std::string(line);
  return std::string(line.substr(0, 60)) + "...";
}

}  // namespace

std::expected<KmsgRecord, std::string> parse_kmsg_record(std::string_view line) {
  const auto semi = line.find(';');
  if (semi == std::string_view::npos)
    return std::unexpected(
        fmt::format("not a kmsg record (no ';' after the prefix): '{}'", excerpt(line)));
  std::string_view prefix = line.substr(0, semi);
  std::string_view fields[3];
  for (int i = 0; i < 3; ++i) {
    const auto comma = prefix.find(',');
    if (comma == std::string_view::npos)
      return std::unexpected(fmt::format(
          "not a kmsg record (the prefix needs prio,seq,usec,flags): '{}'", excerpt(line)));
    fields[i] = prefix.substr(0, comma);
    prefix.remove_prefix(comma + 1);
  }
  // What is left is the flags field and, on newer kernels, more comma-separated fields.
  KmsgRecord r;
  const auto prio = number(fields[0], "prio");
  if (!prio) return std::unexpected(prio.error());
  if (*prio > 0xFFFFFFFFu) return std::unexpected(fmt::format("prio {} is out of range", *prio));
  const auto seq = number(fields[1], "seq");
  if (!seq) return std::unexpected(seq.error());
  const auto usec = number(fields[2], "usec");
  if (!usec) return std::unexpected(usec.error());
  // Past this the nanoseconds would not fit the Unix stamp.
  if (*usec > static_cast<std::uint64_t>(INT64_MAX / 1000 / 2))
    return std::unexpected(fmt::format("usec {} is out of range", *usec));
  r.priority = static_cast<std::uint32_t>(*prio & 7);
  r.facility = static_cast<std::uint32_t>(*prio >> 3);
  r.seq = *seq;
  r.usec = *usec;
  r.text = std::string(line.substr(semi + 1));
  return r;
}

void KmsgSelector::feed(std::string_view chunk) {
  pending_.append(chunk);
  std::size_t start = 0;
  for (std::size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1)
    line(std::string_view(pending_).substr(start, nl - start));
  pending_.erase(0, start);
}

void KmsgSelector::finish() {
  if (!pending_.empty()) line(pending_);
  pending_.clear();
}

void KmsgSelector::line(std::string_view text) {
  if (text.empty() || text.front() == ' ') return;  // a dictionary line: SUBSYSTEM=, DEVICE=
  auto record = parse_kmsg_record(text);
  if (!record) {
    if (selection_.malformed++ == 0) selection_.first_malformed = record.error();
    return;
  }
  const std::int64_t unix_ns = static_cast<std::int64_t>(record->usec) * 1000 + offset_;
  if (unix_ns < window_.since_unix_ns || unix_ns > window_.until_unix_ns) return;
  if (window_.max_lines == 0) {
    ++selection_.dropped;
    return;
  }
  if (selection_.lines.size() == window_.max_lines) {
    selection_.lines.pop_front();
    ++selection_.dropped;
  }
  selection_.lines.push_back({unix_ns, std::move(*record)});
}

std::int64_t monotonic_to_unix_offset_ns() {
  timespec real{}, mono{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  return (static_cast<std::int64_t>(real.tv_sec) - mono.tv_sec) * 1'000'000'000 +
         (real.tv_nsec - mono.tv_nsec);
}

std::optional<std::int64_t> monotonic_minus_printk_ns(std::string_view text) {
  // "ktime                                   : 1234.567890"
  const auto field = [&](std::string_view name) -> std::optional<std::int64_t> {
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t nl = std::min(text.find('\n', at), text.size());
      std::string_view line = text.substr(at, nl - at);
      at = nl + 1;
      if (!line.starts_with(name)) continue;
      line.remove_prefix(name.size());
      const auto colon = line.find(':');
      if (colon == std::string_view::npos ||
          line.substr(0, colon).find_first_not_of(' ') != std::string_view::npos)
        continue;
      line.remove_prefix(colon + 1);
      while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      const auto dot = line.find('.');
      if (dot == std::string_view::npos || line.size() - dot - 1 != 6) return std::nullopt;
      const auto ms = number(line.substr(0, dot), name);
      const auto ns = number(line.substr(dot + 1), name);
      if (!ms || !ns || *ms > static_cast<std::uint64_t>(INT64_MAX / 1'000'000 - 1))
        return std::nullopt;
      return static_cast<std::int64_t>(*ms) * 1'000'000 + static_cast<std::int64_t>(*ns);
    }
    return std::nullopt;
  };
  const auto ktime = field("ktime");
  const auto cpu_clk = field("cpu_clk");
  if (!ktime || !cpu_clk) return std::nullopt;
  return *ktime - *cpu_clk;
}

KmsgClock kmsg_clock() {
  // debugfs since 5.13, /proc before.
  for (const char* path : {"/sys/kernel/debug/sched/debug", "/proc/sched_debug"}) {
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char head[2048];
    const ssize_t n = read(fd, head, sizeof head);
    close(fd);
    if (n <= 0) continue;
    const auto offset =
        monotonic_minus_printk_ns(std::string_view(head, static_cast<std::size_t>(n)));
    if (offset) return {*offset + monotonic_to_unix_offset_ns(), "sched_debug"};
  }
  return {monotonic_to_unix_offset_ns(), "monotonic"};
}

std::expected<KmsgSelection, KmsgError> read_kernel_log(const std::string& path,
                                                        const KmsgWindow& window,
                                                        std::int64_t stamp_to_unix_ns) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    return std::unexpected(
        KmsgError{e, fmt::format("kernel_log: cannot open {}: {}", path, std::strerror(e))});
  }
  KmsgSelector selector(window, stamp_to_unix_ns);
  // /dev/kmsg gives one record per read and refuses a buffer too small for it; a record is at
  // most about 8 KiB with its dictionary.
  char buffer[16384];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n > 0) {
      selector.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
      continue;
    }
    if (n == 0) break;  // a regular file's end
    if (errno == EINTR) continue;
    if (errno == EPIPE) continue;  // the ring overwrote the next record: read on from the oldest
    if (errno == EAGAIN) break;    // every record read
    const int e = errno;
    close(fd);
    return std::unexpected(
        KmsgError{e, fmt::format("kernel_log: reading {}: {}", path, std::strerror(e))});
  }
  close(fd);
  selector.finish();
  return selector.take();
}

}  // namespace roceconf::agent
