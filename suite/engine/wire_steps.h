// The case steps on the wire: a frame sent (recorded with the decoder's summary of what
// actually went out), and what the target sends back: expect (one of some alternatives),
// expect nothing, collect, wait. A match is handed to the connection's bookkeeping (`on_match`:
// the CM state a REP or DREP moves, the last MSN seen) before the step returns.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "capture/port/port.h"
#include "suite/engine/connection.h"
#include "suite/engine/evidence_recorder.h"
#include "suite/engine/frame_builder.h"
#include "suite/engine/matcher.h"
#include "suite/engine/receive_demux.h"
#include "suite/engine/target.h"

namespace roceconf::engine {

// The tester's and the target's addresses, as the frame builders take them.
Addresses tester_addresses(const Target& target);

// What an expect passes over before its match: nothing (kNext), any packet for the connection
// (kEventually), or ACKs of PSNs before the expected one (kAfterEarlierAcks: a responder may
// acknowledge each packet of a message or coalesce, so either is accepted).
enum class ExpectMode : std::uint8_t { kNext, kEventually, kAfterEarlierAcks };

class WireSteps {
 public:
  using OnMatch = std::function<void(Connection*, const Packet&)>;
  WireSteps(Port& port, EvidenceRecorder& evidence, ReceiveDemux& demux);

  void set_on_match(OnMatch on_match) { on_match_ = std::move(on_match); }
  // Called with each packet an expect does not accept, before it fails; may end the case
  // itself (a packet that says the set-up, not the device, is at fault).
  void set_on_mismatch(OnMatch on_mismatch) { on_mismatch_ = std::move(on_mismatch); }
  TimeNs now() { return port_.clock().now_ns(); }

  // Sends `frame`, recorded as `text` and the decoder's summary.
  void transmit(std::vector<std::uint8_t> frame, std::string text);

  // The next packet for `c` (any RoCE packet when null) must match one of `alternatives` within
  // `window`, passing over what `mode` allows. FAILs otherwise; ERRORs when an expectation is
  // itself wrong.
  Received expect(Connection* c, const std::vector<Expectation>& alternatives, TimeNs window,
                  ExpectMode mode);
  // No packet for `c` (none at all when null) within `window`.
  void expect_nothing(Connection* c, TimeNs window);
  // Packets for `c` that arrive within `window` (collects, never fails).
  std::vector<Received> collect(Connection* c, TimeNs window);
  // Waits `duration`, keeping what arrives for later expects.
  void wait(TimeNs duration);

 private:
  Port& port_;
  EvidenceRecorder& evidence_;
  ReceiveDemux& demux_;
  OnMatch on_match_;
  OnMatch on_mismatch_;
};

}  // namespace roceconf::engine
