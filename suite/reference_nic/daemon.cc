#include "suite/reference_nic/daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "dissector/address_text.h"

namespace roceconf::target {
namespace {

// Frames taken from the port per wake-up before the loop looks at timers and clients again.
constexpr int kFramesPerWake = 256;

// The running daemon's wake pipe, for the signal handler (which can reach no object).
std::atomic<int> g_wake_fd{-1};

void on_signal(int) {
  const int fd = g_wake_fd.load();
  if (fd >= 0) {
    const int saved = errno;
    [[maybe_unused]] const ssize_t n = write(fd, "s", 1);
    errno = saved;
  }
}

std::uint64_t now_ns(RawSocketPort& port) {
  return static_cast<std::uint64_t>(port.clock().now_ns());
}

}  // namespace

std::expected<std::unique_ptr<Daemon>, DaemonError> Daemon::open(const DaemonOptions& options) {
  std::unique_ptr<Daemon> d(new Daemon());
  d->options_ = options;
  if (d->options_.control_path.empty()) d->options_.control_path = default_control_path();

  RawSocketOptions port_options;
  port_options.interface = options.interface;
  port_options.udp_port = options.udp_port;
  port_options.netns = options.netns;
  auto port = RawSocketPort::open(port_options);
  if (!port) return std::unexpected(DaemonError{true, port.error().message});
  d->port_ = std::move(*port);

  NicConfig config;
  config.device.port.mac = options.mac.value_or(d->port_->mac());
  config.ipv4 = options.ipv4;
  config.ipv6 = options.ipv6;
  config.udp_port = options.udp_port;
  config.quirks = options.quirks;
  for (std::size_t i = 0; i < options.pkeys.size(); ++i)
    if (auto set =
            config.device.port.pkey_table.set(static_cast<std::uint32_t>(i + 1), options.pkeys[i]);
        !set)
      return std::unexpected(DaemonError{true, "--pkey: the P_Key table has 16 entries"});
  d->nic_config_ = std::move(config);
  if (auto built = d->build_nic(); !built) return std::unexpected(DaemonError{true, built.error()});

  Daemon* self = d.get();
  auto control = ControlServer::open(d->options_.control_path,
                                     [self](std::string_view line) { return self->answer(line); });
  if (!control) return std::unexpected(DaemonError{true, control.error()});
  d->control_ = std::move(*control);

  if (pipe2(d->wake_, O_NONBLOCK | O_CLOEXEC) != 0)
    return std::unexpected(DaemonError{false, fmt::format("pipe: {}", std::strerror(errno))});
  return d;
}

std::expected<void, std::string> Daemon::build_nic() {
  // The application's resources go before the NIC that holds them.
  app_.reset();
  api_.reset();
  nic_ = std::make_unique<Nic>(nic_config_,
                               [this](std::span<const std::uint8_t> frame) { send_frame(frame); });
  api_ = std::make_unique<ControlApi>(*nic_);
  if (options_.responder) {
    auto app = ResponderApp::start(*nic_, *options_.responder);
    if (!app) return std::unexpected(app.error());
    app_ = std::move(*app);
  }
  return {};
}

Daemon::~Daemon() {
  // The application's resources go before the NIC that holds them.
  app_.reset();
  control_.reset();
  for (int fd : wake_)
    if (fd >= 0) close(fd);
}

void Daemon::stop() {
  [[maybe_unused]] const ssize_t n = write(wake_[1], "s", 1);
}

std::string Daemon::describe() const {
  const Port& port = nic_->device().port();
  std::string text = fmt::format(
      "roceconf target: interface {} mac {} ip {}{} udp port {}, quirks {}, control socket {}",
      port_->name(), format_mac(port.mac), format_ipv4(options_.ipv4),
      options_.ipv6 ? " ip6 " + format_gid(*options_.ipv6) : std::string(), options_.udp_port,
      nic_->quirks().names(), control_->path());
  if (app_)
    text += fmt::format(", responder on rdma_cm TCP port {} (service ID {:#018x})",
                        app_->config().port, app_->service_id());
  return text;
}

void Daemon::send_frame(Bytes frame) {
  const auto sent = port_->send(frame);
  if (sent) {
    send_failing_ = false;
    return;
  }
  // A lost frame is what a NIC with a full queue does too; say so once per run of failures.
  if (!send_failing_)
    fmt::print(stderr, "roceconf target: warning: frame not sent: {}\n", sent.error().message);
  send_failing_ = true;
}

std::string Daemon::answer(std::string_view line) {
  // Verbs that post work read the NIC's clock: bring it to now first.
  nic_->tick(now_ns(*port_));
  std::string response = api_->handle_line(line);
  if (api_->take_reset_request()) {
    if (auto built = build_nic(); !built) {
      // The old NIC is gone: without a new one the daemon cannot go on.
      port_error_ = DaemonError{false, "reset: " + built.error()};
    }
    return response;
  }
  if (app_) app_->service();
  return response;
}

void Daemon::drain_port() {
  for (int i = 0; i < kFramesPerWake; ++i) {
    auto frame = port_->receive(0);
    if (!frame) {
      port_error_ = DaemonError{false, frame.error().message};
      return;
    }
    if (!*frame) return;
    // The NIC's time must not go backwards: stamp with the loop's clock, not the kernel's.
    nic_->receive((*frame)->data, now_ns(*port_));
    if (app_) app_->service();
  }
}

std::expected<void, DaemonError> Daemon::run() {
  g_wake_fd.store(wake_[1]);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);

  bool stopping = false;
  std::vector<pollfd> fds;
  while (!stopping && !port_error_) {
    const std::uint64_t now = now_ns(*port_);
    auto deadline = nic_->next_deadline();
    if (deadline && *deadline <= now) {
      nic_->tick(now);
      if (app_) app_->service();
      deadline = nic_->next_deadline();
    }
    fds.clear();
    fds.push_back({wake_[0], POLLIN, 0});
    fds.push_back({port_->fd(), POLLIN, 0});
    control_->add_poll_fds(fds);
    timespec timeout{};
    timespec* wait = nullptr;  // no timer pending: sleep until something arrives
    if (deadline) {
      // A timer still due after the tick polls without waiting: clients are served regardless.
      const std::uint64_t left = *deadline > now ? *deadline - now : 0;
      timeout.tv_sec = static_cast<time_t>(left / 1'000'000'000);
      timeout.tv_nsec = static_cast<long>(left % 1'000'000'000);
      wait = &timeout;
    }
    const int ready = ppoll(fds.data(), fds.size(), wait, nullptr);
    if (ready < 0) {
      if (errno == EINTR) continue;
      port_error_ = DaemonError{false, fmt::format("poll: {}", std::strerror(errno))};
      break;
    }
    if (fds[0].revents) {
      char buffer[64];
      while (read(wake_[0], buffer, sizeof buffer) > 0) {
      }
      stopping = true;
    }
    if (fds[1].revents & POLLNVAL) {
      port_error_ = DaemonError{false, fmt::format("the socket on {} was closed", port_->name())};
      break;
    }
    // A socket error (the interface went away) surfaces from the receive as a port error.
    if (fds[1].revents & (POLLIN | POLLERR)) drain_port();
    control_->dispatch(std::span(fds).subspan(2));
  }

  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  g_wake_fd.store(-1);
  if (port_error_) return std::unexpected(*port_error_);
  return {};
}

}  // namespace roceconf::target
