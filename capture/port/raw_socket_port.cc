#include "capture/port/raw_socket_port.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

#include "capture/port/roce_filter.h"

namespace roceconf {
namespace {

constexpr std::size_t kBufferSize = 256 * 1024;  // beyond any MTU, GRO'd frames included
constexpr TimeNs kSendStallNs = 1'000'000'000;   // how long a full transmit queue may block send
constexpr char kCapNetRaw[] =
    "raw sockets need CAP_NET_RAW: run as root or `setcap cap_net_raw+ep build/roceconf`";

PortError error(PortErrorCode code, std::string message) {
  return {code, std::move(message)};
}

// One line for a failed call on interface `ifname`, with the remedy where there is one; `ip` is
// the command that reaches the interface ("ip", or "ip -n NS" inside a namespace).
PortError socket_error(const std::string& ifname, const std::string& ip, const char* what, int err,
                       std::size_t size = 0) {
  switch (err) {
    case EPERM:
    case EACCES:
      return error(PortErrorCode::kPermission, kCapNetRaw);
    case ENETDOWN:
      return error(PortErrorCode::kIo, "interface '" + ifname + "' is down (bring it up with `" +
                                           ip + " link set " + ifname + " up`)");
    case ENODEV:
    case ENXIO:
      return error(PortErrorCode::kNotFound,
                   "interface '" + ifname + "' has gone away (see `" + ip + " link`)");
    case EMSGSIZE:
      return error(PortErrorCode::kIo, "frame of " + std::to_string(size) +
                                           " bytes is larger than the MTU of '" + ifname +
                                           "' (see `" + ip + " link show " + ifname + "`)");
    default:
      return error(PortErrorCode::kIo,
                   std::string(what) + " on '" + ifname + "' failed: " + std::strerror(err));
  }
}

std::string ip_command(const std::string& netns) {
  return netns.empty() ? "ip" : "ip -n " + netns;
}

timespec to_timespec(TimeNs ns) {
  return {static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

// Waits up to `timeout_ns` for `events` on `fd`; false on timeout.
std::expected<bool, int> wait_fd(int fd, short events, TimeNs timeout_ns) {
  pollfd p{fd, events, 0};
  // Capped so that a far deadline cannot overflow time_t arithmetic in the kernel.
  const timespec ts = to_timespec(std::min<TimeNs>(timeout_ns, 3600'000'000'000));
  const int n = ppoll(&p, 1, &ts, nullptr);
  if (n < 0) return errno == EINTR ? std::expected<bool, int>(false) : std::unexpected(errno);
  return n > 0;
}

std::expected<std::unique_ptr<RawSocketPort>, PortError> open_here(const RawSocketOptions& o,
                                                                   auto make) {
  const std::string& ifname = o.interface;
  const std::string ip = ip_command(o.netns);
  const unsigned ifindex = ifname.size() < IFNAMSIZ ? if_nametoindex(ifname.c_str()) : 0;
  if (ifindex == 0) {
    if (!o.netns.empty())
      return std::unexpected(error(PortErrorCode::kNotFound,
                                   "interface '" + ifname + "' not found in network namespace '" +
                                       o.netns + "' (see `ip -n " + o.netns + " link`)"));
    return std::unexpected(
        error(PortErrorCode::kNotFound, "interface '" + ifname + "' not found (see `ip link`)"));
  }

  std::vector<BpfInstruction> program;
  if (!o.no_filter) {
    auto compiled = compile_filter(roce_filter_expression(o.udp_port));
    if (!compiled) return std::unexpected(compiled.error());
    program = std::move(*compiled);
  }

  // Protocol 0 receives nothing until bind(): the filter is in place before the first frame.
  const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::unexpected(socket_error(ifname, ip, "socket(AF_PACKET)", errno));
  auto fail = [fd, &ifname, &ip](const char* what) {
    const int err = errno;
    ::close(fd);
    return std::unexpected(socket_error(ifname, ip, what, err));
  };

  if (!program.empty()) {
    std::vector<sock_filter> filter(program.size());
    for (std::size_t i = 0; i < program.size(); ++i)
      filter[i] = {program[i].code, program[i].jt, program[i].jf, program[i].k};
    sock_fprog fprog{static_cast<unsigned short>(filter.size()), filter.data()};
    if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof fprog) != 0)
      return fail("SO_ATTACH_FILTER");
  }
  const int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0)
    return fail("SO_TIMESTAMPNS");
  // Linux 4.20+; older kernels leave it to receive(), which skips PACKET_OUTGOING frames.
  const bool ignores_outgoing =
      setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) == 0;
  // The kernel takes the 802.1Q tag off before the socket sees the frame; the auxiliary data
  // gives it back (receive() puts it into the frame again).
  if (setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof one) != 0)
    return fail("PACKET_AUXDATA");
  // Room for bursts (silently capped at net.core.rmem_max).
  const int rcvbuf = 4 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);

  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(ETH_P_ALL);
  addr.sll_ifindex = static_cast<int>(ifindex);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) return fail("bind");
  // Binding to an interface that is down queues ENETDOWN on the socket; receive() reports the
  // state when it matters, so clear it here.
  int pending = 0;
  socklen_t pending_len = sizeof pending;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &pending, &pending_len);

  MacAddress mac{};
  ifreq req{};
  std::memcpy(req.ifr_name, ifname.c_str(), ifname.size() + 1);
  if (ioctl(fd, SIOCGIFHWADDR, &req) == 0) std::memcpy(mac.data(), req.ifr_hwaddr.sa_data, 6);

  return make(fd, static_cast<int>(ifindex), mac, ignores_outgoing);
}

}  // namespace

void restore_vlan_tag(std::vector<std::uint8_t>& frame, std::uint16_t tpid, std::uint16_t tci) {
  constexpr std::size_t kMacs = 12;  // the tag goes after the destination and source MACs
  if (frame.size() < kMacs) return;
  const std::uint8_t tag[4] = {static_cast<std::uint8_t>(tpid >> 8),
                               static_cast<std::uint8_t>(tpid), static_cast<std::uint8_t>(tci >> 8),
                               static_cast<std::uint8_t>(tci)};
  frame.insert(frame.begin() + kMacs, std::begin(tag), std::end(tag));
}

namespace {

// The path of a namespace given by name (as `ip netns` creates them) or by path.
std::string netns_path(const std::string& netns) {
  return netns.starts_with('/') ? netns : "/run/netns/" + netns;
}

}  // namespace

RawSocketPort::RawSocketPort(int fd, int ifindex, MacAddress mac, std::string interface)
    : fd_(fd),
      ifindex_(ifindex),
      mac_(mac),
      interface_(std::move(interface)),
      buffer_(kBufferSize) {}

RawSocketPort::~RawSocketPort() {
  if (fd_ >= 0) ::close(fd_);
}

std::expected<std::unique_ptr<RawSocketPort>, PortError> RawSocketPort::open(
    const RawSocketOptions& options) {
  const auto make = [&options](int fd, int ifindex, MacAddress mac, bool ignores_outgoing) {
    std::unique_ptr<RawSocketPort> port(new RawSocketPort(fd, ifindex, mac, options.interface));
    port->kernel_ignores_outgoing_ = ignores_outgoing;
    port->ip_command_ = ip_command(options.netns);
    port->name_ =
        options.netns.empty() ? options.interface : options.interface + "@" + options.netns;
    return port;
  };
  if (options.netns.empty()) return open_here(options, make);

  // A socket belongs to the namespace it was created in, for life. Create it on a short-lived
  // thread that has entered the namespace (setns affects the calling thread only), so the rest
  // of the process never leaves its own.
  std::expected<std::unique_ptr<RawSocketPort>, PortError> result =
      std::unexpected(error(PortErrorCode::kIo, "unreachable"));
  std::thread opener([&] {
    const std::string path = netns_path(options.netns);
    const int ns = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0) {
      const int err = errno;
      if (err == EACCES || err == EPERM)
        result = std::unexpected(
            error(PortErrorCode::kPermission,
                  "cannot open network namespace '" + options.netns + "': run as root"));
      else
        result = std::unexpected(
            error(PortErrorCode::kNotFound,
                  "network namespace '" + options.netns +
                      "' not found (see `ip netns list`; scripts/netns-pair.sh up creates one)"));
      return;
    }
    const int rc = setns(ns, CLONE_NEWNET);
    const int err = errno;
    ::close(ns);
    if (rc != 0) {
      result = std::unexpected(
          err == EPERM
              ? error(PortErrorCode::kPermission, "entering network namespace '" + options.netns +
                                                      "' needs CAP_SYS_ADMIN: run as root")
              : error(PortErrorCode::kIo,
                      "setns('" + options.netns + "') failed: " + std::strerror(err)));
      return;
    }
    result = open_here(options, make);
  });
  opener.join();
  return result;
}

std::expected<void, PortError> RawSocketPort::send(Bytes frame) {
  TimeNs stalled_until = 0;
  for (;;) {
    const ssize_t n = ::send(fd_, frame.data(), frame.size(), 0);
    if (n == static_cast<ssize_t>(frame.size())) return {};
    if (n >= 0)
      return std::unexpected(
          error(PortErrorCode::kIo, "short write on '" + interface_ + "': " + std::to_string(n) +
                                        " of " + std::to_string(frame.size()) + " bytes"));
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EINVAL && frame.size() < Ethernet::kSize)
      return std::unexpected(
          error(PortErrorCode::kIo, "frame of " + std::to_string(frame.size()) +
                                        " bytes is shorter than an Ethernet header"));
    if (err != EAGAIN && err != ENOBUFS)
      return std::unexpected(socket_error(interface_, ip_command_, "send", err, frame.size()));
    // The transmit queue is full: wait for room, but not forever.
    const TimeNs now = clock_.now_ns();
    if (stalled_until == 0) stalled_until = now + kSendStallNs;
    if (now >= stalled_until)
      return std::unexpected(
          error(PortErrorCode::kIo, "transmit queue of '" + interface_ + "' stayed full for 1 s"));
    auto waited = wait_fd(fd_, POLLOUT, std::min<TimeNs>(stalled_until - now, 10'000'000));
    if (!waited)
      return std::unexpected(socket_error(interface_, ip_command_, "poll", waited.error()));
  }
}

std::expected<std::optional<ReceivedFrame>, PortError> RawSocketPort::receive(TimeNs deadline) {
  for (;;) {
    sockaddr_ll from{};
    iovec iov{buffer_.data(), buffer_.size()};
    alignas(cmsghdr) char
        control[CMSG_SPACE(sizeof(timespec)) + CMSG_SPACE(sizeof(tpacket_auxdata)) + 64];
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = recvmsg(fd_, &msg, MSG_DONTWAIT | MSG_TRUNC);
    if (n >= 0) {
      if (!kernel_ignores_outgoing_ && from.sll_pkttype == PACKET_OUTGOING) continue;
      std::int64_t unix = -1;
      std::optional<tpacket_auxdata> aux;
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
          timespec ts;
          std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
          unix = std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
        } else if (c->cmsg_level == SOL_PACKET && c->cmsg_type == PACKET_AUXDATA &&
                   c->cmsg_len >= CMSG_LEN(sizeof(tpacket_auxdata))) {
          aux.emplace();
          std::memcpy(&*aux, CMSG_DATA(c), sizeof *aux);
        }
      }
      ReceivedFrame frame;
      // MSG_TRUNC makes n the length on the wire; keep what fitted.
      frame.data.assign(
          buffer_.begin(),
          buffer_.begin() + std::min<std::size_t>(static_cast<std::size_t>(n), buffer_.size()));
      if (aux && (aux->tp_status & TP_STATUS_VLAN_VALID) != 0)
        restore_vlan_tag(frame.data,
                         (aux->tp_status & TP_STATUS_VLAN_TPID_VALID) != 0
                             ? aux->tp_vlan_tpid
                             : std::uint16_t{ETH_P_8021Q},
                         aux->tp_vlan_tci);
      if (unix < 0) {
        frame.time_ns = clock_.now_ns();
        frame.unix_ns = clock_.unix_ns(frame.time_ns);
      } else {
        frame.unix_ns = unix;
        frame.time_ns = clock_.from_unix_ns(unix);
      }
      return frame;
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err != EAGAIN && err != EWOULDBLOCK)
      return std::unexpected(socket_error(interface_, ip_command_, "recvmsg", err));
    const TimeNs remaining = deadline - clock_.now_ns();
    if (remaining <= 0) return std::nullopt;
    auto ready = wait_fd(fd_, POLLIN, remaining);
    if (!ready)
      return std::unexpected(socket_error(interface_, ip_command_, "poll", ready.error()));
  }
}

}  // namespace roceconf
