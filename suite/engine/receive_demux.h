// Which of the case's connections a frame from the target belongs to, and the frames that
// arrived for one connection while a step waited on another, kept in arrival order for later
// steps. CM MADs are routed by communication ID (either side's), a target's first REQ by the
// comm ID cm_connect answered or the service ID asked for, then by TID; transport packets by
// destination QP.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/port/port.h"
#include "dissector/analysis/sent_framing.h"
#include "dissector/packet.h"
#include "suite/engine/connection.h"
#include "suite/engine/evidence_recorder.h"

namespace roceconf::engine {

// A frame the tester received, decoded (the packet views `bytes`).
struct Received {
  std::vector<std::uint8_t> bytes;
  TimeNs time = 0;
  Packet packet;
};

// The case's connections, by name.
using ConnectionTable = std::map<std::string, std::unique_ptr<Connection>>;

// A connection the tester accepts (the CM passive side): what routes the target's REQ to it,
// and how far the exchange got (what close_all must undo).
struct PassiveSide {
  std::uint64_t service_id = 0;
  std::optional<std::uint32_t> target_comm_id;  // from cm_connect, when it says
  bool req_seen = false;
  bool rep_sent = false;
  bool rej_sent = false;
};
using PassiveTable = std::map<std::string, PassiveSide>;  // by connection name

// Which of a connection's frames a reader wants. CNPs are not ordered against the ACKs and
// responses of the connection (Annex A17 says nothing of it), so an `expect c ACK` passes over
// them and an `expect c CNP` over everything else; both keep what they pass over.
enum class Stream : std::uint8_t { kAll, kCnps, kNotCnps };

class ReceiveDemux {
 public:
  // Reads from `port`; every RoCE frame read is recorded in `evidence`. The tables are the
  // case's, read at each lookup.
  ReceiveDemux(Port& port, EvidenceRecorder& evidence, const ConnectionTable& connections,
               const PassiveTable& passive);

  // The connection `p` belongs to; null for none (or not RoCE).
  Connection* owner_of(const Packet& p) const;

  // What every frame the target sends is graded against (sent_framing.h): the addresses and
  // whether congestion management is declared. `ipv6` is the same with the IPv6 GIDs (unset
  // when either side has no IPv6 address): for frames of a connection over IPv6, and for frames
  // of no connection that arrive over IPv6. A frame's connection adds the AV it asked for; the
  // findings go onto the frame's event. Nothing is graded until this is set.
  void set_framing(SentFramingExpect base, std::optional<SentFramingExpect> ipv6 = std::nullopt) {
    framing_ = std::move(base);
    framing6_ = std::move(ipv6);
  }

  // The next frame for `c` (any RoCE frame when null) by `deadline`: first those kept earlier
  // (unless `kept` is false), then from the port. Frames for other connections are kept; frames
  // no connection owns are dropped (they stay on the timeline). Non-RoCE frames (ARP, IPv6
  // neighbour discovery on a real link) are skipped unrecorded. ERRORs the case when the port
  // fails.
  std::optional<Received> next_for(Connection* c, TimeNs deadline, bool kept = true,
                                   Stream stream = Stream::kAll);
  // Keeps every frame arriving by `deadline`, owned or not, behind those kept already.
  void keep_until(TimeNs deadline);
  std::size_t kept() const { return kept_.size(); }
  void clear() { kept_.clear(); }

 private:
  struct Kept {
    Received frame;
    Connection* owner = nullptr;
  };
  Port& port_;
  EvidenceRecorder& evidence_;
  const ConnectionTable& connections_;
  const PassiveTable& passive_;
  std::deque<Kept> kept_;
  std::optional<SentFramingExpect> framing_;
  std::optional<SentFramingExpect> framing6_;
};

}  // namespace roceconf::engine
