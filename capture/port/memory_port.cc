#include "capture/port/memory_port.h"

#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <utility>

namespace roceconf {
namespace {

// Uniform in [0, 1) from the generator's raw output: std:: distributions differ between
// standard libraries, the raw mt19937_64 stream does not.
double uniform(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Frames travelling towards one port.
struct Direction {
  std::deque<ReceivedFrame> queue;
  std::optional<ReceivedFrame> held;  // reordered: waits for the next delivered frame
  Impairment impairment;
  bool impaired = false;
  std::mt19937_64 rng;

  void set_impairment(const Impairment& i, int side) {
    impairment = i;
    impaired = i.loss > 0 || i.reorder > 0 || i.duplicate > 0;
    // Distinct streams per direction, so traffic one way never shifts the fates the other way.
    rng.seed(i.seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(side + 1));
  }

  void release_held(TimeNs time_ns, std::int64_t unix_ns) {
    if (!held) return;
    held->time_ns = time_ns;  // it arrives now, later than it was sent
    held->unix_ns = unix_ns;
    queue.push_back(std::move(*held));
    held.reset();
  }

  Fate admit(ReceivedFrame frame) {
    if (!impaired) {
      queue.push_back(std::move(frame));
      return Fate::kDelivered;
    }
    // Three draws per frame whatever happens, so one probability never shifts the others.
    const double u_loss = uniform(rng);
    const double u_reorder = uniform(rng);
    const double u_duplicate = uniform(rng);
    if (u_loss < impairment.loss) return Fate::kDropped;
    if (u_reorder < impairment.reorder) {
      // Two holds in a row: the older frame has waited long enough.
      if (held) release_held(frame.time_ns, frame.unix_ns);
      held = std::move(frame);
      return Fate::kHeld;
    }
    const bool duplicate = u_duplicate < impairment.duplicate;
    const TimeNs time_ns = frame.time_ns;
    const std::int64_t unix_ns = frame.unix_ns;
    if (duplicate) queue.push_back(frame);
    queue.push_back(std::move(frame));
    release_held(time_ns, unix_ns);
    return duplicate ? Fate::kDuplicated : Fate::kDelivered;
  }
};

PortError closed_error(std::string_view port, bool peer) {
  if (peer)
    return {PortErrorCode::kClosed,
            "peer of port '" + std::string(port) +
                "' is closed (the other end of the memory pair was closed or destroyed)"};
  return {PortErrorCode::kClosed,
          "port '" + std::string(port) + "' is closed (open a new pair to continue)"};
}

}  // namespace

struct MemoryPort::Link {
  std::shared_ptr<Clock> clock;
  std::string names[2];
  CaptureHook capture;
  // Held across a send and its hook call, so the hook sees frames in queue order.
  std::mutex hook_mu;
  mutable std::mutex mu;
  Direction to[2];  // to[i]: frames for side i
  bool closed[2] = {false, false};
};

std::string_view fate_name(Fate fate) {
  switch (fate) {
    case Fate::kDelivered:
      return "delivered";
    case Fate::kDropped:
      return "dropped";
    case Fate::kHeld:
      return "held";
    case Fate::kDuplicated:
      return "duplicated";
  }
  return "unknown";
}

MemoryPort::MemoryPort(std::shared_ptr<Link> link, int side)
    : link_(std::move(link)), side_(side) {}

MemoryPort::~MemoryPort() {
  close();
}

std::string_view MemoryPort::name() const {
  return link_->names[side_];
}

Clock& MemoryPort::clock() {
  return *link_->clock;
}

std::expected<void, PortError> MemoryPort::send(Bytes frame) {
  Link& l = *link_;
  const int peer = 1 - side_;
  const TimeNs now = l.clock->now_ns();
  ReceivedFrame copy{{frame.begin(), frame.end()}, now, l.clock->unix_ns(now)};
  {
    std::lock_guard hook_lock(l.hook_mu);
    Fate fate;
    {
      std::lock_guard lock(l.mu);
      if (l.closed[side_]) return std::unexpected(closed_error(l.names[side_], false));
      if (l.closed[peer]) return std::unexpected(closed_error(l.names[side_], true));
      fate = l.to[peer].admit(std::move(copy));
    }
    if (l.capture)
      l.capture(TapEvent{l.names[side_], l.names[peer], frame, now, l.clock->unix_ns(now), fate});
  }
  l.clock->notify();
  return {};
}

std::expected<std::optional<ReceivedFrame>, PortError> MemoryPort::receive(TimeNs deadline) {
  Link& l = *link_;
  Direction& in = l.to[side_];
  const auto ready = [&] {
    std::lock_guard lock(l.mu);
    return !in.queue.empty() || l.closed[0] || l.closed[1];
  };
  for (;;) {
    {
      std::lock_guard lock(l.mu);
      if (l.closed[side_]) return std::unexpected(closed_error(l.names[side_], false));
      if (!in.queue.empty()) {
        ReceivedFrame frame = std::move(in.queue.front());
        in.queue.pop_front();
        return frame;
      }
      if (l.closed[1 - side_]) return std::unexpected(closed_error(l.names[side_], true));
    }
    if (l.clock->now_ns() >= deadline) return std::nullopt;
    l.clock->wait_until(deadline, ready);
  }
}

void MemoryPort::set_impairment(const Impairment& impairment) {
  std::lock_guard lock(link_->mu);
  link_->to[1 - side_].set_impairment(impairment, side_);
}

std::size_t MemoryPort::queued() const {
  std::lock_guard lock(link_->mu);
  return link_->to[side_].queue.size();
}

void MemoryPort::close() {
  {
    std::lock_guard lock(link_->mu);
    if (link_->closed[side_]) return;
    link_->closed[side_] = true;
    // No next frame will come to release a held one: deliver it now rather than lose it.
    Direction& out = link_->to[1 - side_];
    if (out.held) {
      out.queue.push_back(std::move(*out.held));
      out.held.reset();
    }
  }
  link_->clock->notify();
}

MemoryPair make_memory_pair(MemoryPairOptions options) {
  auto link = std::make_shared<MemoryPort::Link>();
  link->clock = options.clock ? std::move(options.clock) : std::make_shared<SteadyClock>();
  link->names[0] = std::move(options.name_a);
  link->names[1] = std::move(options.name_b);
  link->capture = std::move(options.capture);
  link->to[1].set_impairment(options.impairment, 0);
  link->to[0].set_impairment(options.impairment, 1);
  return {std::make_unique<MemoryPort>(link, 0), std::make_unique<MemoryPort>(link, 1)};
}

}  // namespace roceconf
