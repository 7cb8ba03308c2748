// The device host's kernel log as the kernel_log op reads it: /dev/kmsg records
// ("prio,seq,usec,flags[,...];text" then " KEY=value" dictionary lines), their monotonic stamps
// mapped to Unix time, the lines of a window kept (the newest, when there are too many).
#pragma once

#include <cstdint>
#include <deque>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace roceconf::agent {

struct KmsgRecord {
  std::uint32_t priority = 0;  // syslog level (prio & 7)
  std::uint32_t facility = 0;  // prio >> 3
  std::uint64_t seq = 0;
  std::uint64_t usec = 0;  // CLOCK_MONOTONIC at the record, microseconds
  std::string text;        // as the kernel escaped it (\xNN for unprintable bytes)
};

// One record's first line (without the newline). The error says what is wrong with it.
std::expected<KmsgRecord, std::string> parse_kmsg_record(std::string_view line);

struct KmsgWindow {
  std::int64_t since_unix_ns = 0;
  std::int64_t until_unix_ns = INT64_MAX;
  std::uint32_t max_lines = 200;
};

struct KmsgLine {
  std::int64_t unix_ns = 0;
  KmsgRecord record;
};

struct KmsgSelection {
  std::deque<KmsgLine> lines;   // oldest first
  std::uint64_t dropped = 0;    // in the window, left out for max_lines (the oldest)
  std::uint64_t malformed = 0;  // lines that were not records
  std::string first_malformed;  // why the first of them was not one
};

// Takes records from text that may hold several (a file of them, or one read of /dev/kmsg):
// complete lines only; what follows the last newline is left in `pending` for the next chunk.
// Dictionary lines (starting with a space) are skipped. `monotonic_to_unix_ns` maps a record's
// stamp to the host's Unix time (kmsg_clock()).
class KmsgSelector {
 public:
  KmsgSelector(KmsgWindow window, std::int64_t monotonic_to_unix_ns)
      : window_(window), offset_(monotonic_to_unix_ns) {}
  void feed(std::string_view chunk);
  void finish();  // a last line without its newline
  KmsgSelection take() { return std::move(selection_); }

 private:
  void line(std::string_view line);

  KmsgWindow window_;
  std::int64_t offset_;
  std::string pending_;
  KmsgSelection selection_;
};

// CLOCK_REALTIME - CLOCK_MONOTONIC now, nanoseconds.
std::int64_t monotonic_to_unix_offset_ns();

// The records are stamped with the printk clock (local_clock(), from sched_clock), which is not
// CLOCK_MONOTONIC: the two start at different moments of boot and tick from different sources
// (15 ms apart on the rxe lab's guest). The scheduler's debug header prints both at one instant
// ("ktime" and "cpu_clk", ms with six decimals of ns): their difference maps a stamp onto
// CLOCK_MONOTONIC. Nullopt when the text has not both.
std::optional<std::int64_t> monotonic_minus_printk_ns(std::string_view sched_debug_header);

// What to add to a record's stamp (ns) for the host's Unix time, and how it was found:
// "sched_debug" (the printk clock measured against CLOCK_MONOTONIC) or "monotonic" (taken as
// CLOCK_MONOTONIC: without the scheduler's debug file, exact only where the two agree).
struct KmsgClock {
  std::int64_t to_unix_ns = 0;
  std::string method;
};
KmsgClock kmsg_clock();

// Reads every record `path` holds (/dev/kmsg: non-blocking, from the oldest the ring keeps) and
// selects the window's, stamps mapped by `stamp_to_unix_ns` (kmsg_clock()). The error is errno and
// a line saying what failed.
struct KmsgError {
  int error = 0;
  std::string message;
};
std::expected<KmsgSelection, KmsgError> read_kernel_log(const std::string& path,
                                                        const KmsgWindow& window,
                                                        std::int64_t stamp_to_unix_ns);

}  // namespace roceconf::agent
