// A Port that plays a pcap or pcapng file as the frames it receives, for offline regression of
// captured traffic. Its clock is virtual and follows the file: receive() returns the next frame
// when its timestamp is not after the deadline (moving the clock to that timestamp), and
// otherwise moves the clock to the deadline and returns nullopt, so silence windows in the
// capture are judged as they happened. send() only records the frame.
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/port/clock.h"
#include "capture/port/port.h"
#include "dissector/packet.h"

struct pcap;

namespace roceconf {

struct SentFrame {
  std::vector<std::uint8_t> data = {};
  TimeNs time_ns = 0;  // the replay clock when it was sent
};

class ReplayPort final : public Port {
 public:
  // Errors: kNotFound (no such file), kPermission (unreadable), kIo (not a capture, or a link
  // type other than Ethernet, raw IP, Linux cooked or InfiniBand).
  static std::expected<std::unique_ptr<ReplayPort>, PortError> open(const std::string& path);

  ~ReplayPort() override;
  ReplayPort(const ReplayPort&) = delete;
  ReplayPort& operator=(const ReplayPort&) = delete;

  std::expected<void, PortError> send(Bytes frame) override;
  // A corrupt record is reported once the frames before it have been returned.
  std::expected<std::optional<ReceivedFrame>, PortError> receive(TimeNs deadline) override;
  std::string_view name() const override { return name_; }
  // Starts at the first frame's timestamp (0 for an empty file); unix_ns(t) == t.
  Clock& clock() override { return clock_; }

  LinkType link_type() const { return link_; }
  const std::vector<SentFrame>& sent() const { return sent_; }
  bool at_end() const { return !next_ && !error_; }

 private:
  ReplayPort(pcap* handle, std::string path, LinkType link);
  void read_ahead();

  pcap* handle_ = nullptr;
  std::string path_;
  std::string name_;
  LinkType link_;
  VirtualClock clock_{0, VirtualClock::Mode::kManual};
  std::optional<ReceivedFrame> next_;  // the frame receive() returns next
  std::optional<PortError> error_;     // reported after next_
  std::vector<SentFrame> sent_;
};

}  // namespace roceconf
