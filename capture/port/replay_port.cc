#include "capture/port/replay_port.h"

#include <pcap/pcap.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "capture/pcap_reader.h"

namespace roceconf {

ReplayPort::ReplayPort(pcap* handle, std::string path, LinkType link)
    : handle_(handle), path_(std::move(path)), name_("replay:" + path_), link_(link) {}

ReplayPort::~ReplayPort() {
  if (handle_) pcap_close(handle_);
}

std::expected<std::unique_ptr<ReplayPort>, PortError> ReplayPort::open(const std::string& path) {
  // libpcap folds every open failure into one string; stat() tells the cases apart.
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == EACCES)
      return std::unexpected(
          PortError{PortErrorCode::kPermission,
                    "cannot read capture file '" + path + "': permission denied"});
    return std::unexpected(
        PortError{PortErrorCode::kNotFound, "capture file '" + path + "' not found"});
  }
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* handle =
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (!handle) {
    const PortErrorCode code =
        std::strstr(errbuf, "ermission") ? PortErrorCode::kPermission : PortErrorCode::kIo;
    return std::unexpected(PortError{
        code, "cannot replay '" + path + "': " + errbuf + " (expected a pcap or pcapng file)"});
  }
  const int dlt = pcap_datalink(handle);
  const auto link = link_type_from_dlt(dlt);
  if (!link) {
    const char* dlt_name = pcap_datalink_val_to_name(dlt);
    pcap_close(handle);
    return std::unexpected(
        PortError{PortErrorCode::kIo, "cannot replay '" + path + "': link type " +
                                          (dlt_name ? dlt_name : std::to_string(dlt)) +
                                          " carries no RoCE (capture on an Ethernet interface)"});
  }
  std::unique_ptr<ReplayPort> port(new ReplayPort(handle, path, *link));
  port->read_ahead();
  if (port->next_) port->clock_.advance_to(port->next_->time_ns);
  return port;
}

void ReplayPort::read_ahead() {
  next_.reset();
  if (!handle_ || error_) return;
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  const int rc = pcap_next_ex(handle_, &header, &data);
  if (rc == 1) {
    const std::int64_t t =
        std::int64_t{header->ts.tv_sec} * 1'000'000'000 + header->ts.tv_usec;  // ns precision
    next_ = ReceivedFrame{{data, data + header->caplen}, t, t};
  } else if (rc == PCAP_ERROR) {
    error_ =
        PortError{PortErrorCode::kIo, "cannot replay '" + path_ + "': " + pcap_geterr(handle_)};
  }
}

std::expected<void, PortError> ReplayPort::send(Bytes frame) {
  sent_.push_back({{frame.begin(), frame.end()}, clock_.now_ns()});
  return {};
}

std::expected<std::optional<ReceivedFrame>, PortError> ReplayPort::receive(TimeNs deadline) {
  if (next_ && next_->time_ns <= deadline) {
    clock_.advance_to(next_->time_ns);  // a frame stamped in the past leaves the clock alone
    ReceivedFrame frame = std::move(*next_);
    read_ahead();
    return frame;
  }
  if (!next_ && error_) {
    PortError e = *error_;
    return std::unexpected(std::move(e));
  }
  if (deadline != kForever) clock_.advance_to(deadline);
  return std::nullopt;
}

}  // namespace roceconf
