// Two Ports joined back to back in memory, for deterministic tests and the in-process reference
// target: what one sends the other receives, in order, at once. A test can impair each
// direction (loss, duplication, reordering) from a seeded random stream, so a run replays
// exactly, and a capture hook sees every frame sent, with what the impairment did to it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "capture/port/clock.h"
#include "capture/port/port.h"

namespace roceconf {

// Per-direction impairment. Each frame draws from a std::mt19937_64 seeded with `seed` and the
// direction, in send order, so the same seed and sends give the same fates on every platform.
struct Impairment {
  double loss = 0;       // probability the frame is dropped
  double reorder = 0;    // probability the frame is held back and delivered after the next one
  double duplicate = 0;  // probability the frame is delivered twice
  std::uint64_t seed = 1;
};

enum class Fate : std::uint8_t {
  kDelivered,
  kDropped,
  kHeld,        // delivered after the next delivered frame in the same direction
  kDuplicated,  // delivered twice in a row
};

std::string_view fate_name(Fate fate);  // "delivered", "dropped", "held", "duplicated"

struct TapEvent {
  std::string_view from = {};  // sending port
  std::string_view to = {};    // receiving port
  Bytes frame = {};            // valid during the call only
  TimeNs time_ns = 0;
  std::int64_t unix_ns = 0;
  Fate fate = Fate::kDelivered;
};

// Called once per frame sent, in send order, under a lock of the pair: it must not send on the
// pair's ports.
using CaptureHook = std::function<void(const TapEvent&)>;

struct MemoryPairOptions {
  std::string name_a = "mem-a";
  std::string name_b = "mem-b";
  std::shared_ptr<Clock> clock = {};  // shared by both ports; a new SteadyClock when null
  CaptureHook capture = {};
  Impairment impairment = {};  // applied to both directions (each with its own random stream)
};

class MemoryPort final : public Port {
 public:
  struct Link;  // the state both ends share
  MemoryPort(std::shared_ptr<Link> link, int side);
  ~MemoryPort() override;
  MemoryPort(const MemoryPort&) = delete;
  MemoryPort& operator=(const MemoryPort&) = delete;

  std::expected<void, PortError> send(Bytes frame) override;
  std::expected<std::optional<ReceivedFrame>, PortError> receive(TimeNs deadline) override;
  std::string_view name() const override;
  Clock& clock() override;

  // Impairs the frames this port sends from now on (the random stream restarts from the seed).
  void set_impairment(const Impairment& impairment);
  // Frames waiting for this port's receive() (held frames not counted).
  std::size_t queued() const;
  // Idempotent. Afterwards this port's calls and the peer's sends fail with kClosed; the peer
  // still receives what was queued before.
  void close();

 private:
  std::shared_ptr<Link> link_;
  int side_;
};

struct MemoryPair {
  std::unique_ptr<MemoryPort> a;
  std::unique_ptr<MemoryPort> b;
};

MemoryPair make_memory_pair(MemoryPairOptions options = {});

}  // namespace roceconf
