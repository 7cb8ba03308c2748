// What the fuzzer sends: mutations of real traffic. A seed (Template) is a frame some real
// exchange sent: a request or a response of some opcode and length, or a CM MAD. An input is a
// seed sent at one point of a connection's life (Phase) with a few field changes, each a
// `field=value` of the case language (cases/README.md), drawn from the declared field table:
// boundary and out-of-range values, reserved opcodes and bits, pad counts that disagree with
// the payload, lengths that disagree with the frame, headers cut at their boundaries, wrong and
// right ICRCs. An input is therefore a `send` line, so a finding shrinks to a case script.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dissector/bytes.h"

namespace roceconf::fuzz {

struct Template {
  enum class Kind : std::uint8_t { kRequest, kResponse, kCm };
  Kind kind = Kind::kRequest;
  std::uint8_t opcode = 0;  // the BTH opcode (requests and responses)
  std::string cm;           // kCm: the message ("REQ", "DREQ", "ClassPortInfo", ...)
  std::uint32_t len = 0;    // payload bytes
  std::string origin;       // where it was seen: "catalogue psn/gap-naks-once", "built-in"
};

// Where in the victim connection's life the input arrives.
enum class Phase : std::uint8_t {
  kEstablished,  // connected, idle
  kBeforeRtu,    // REQ and REP exchanged, no RTU yet
  kMidMessage,   // a SEND_FIRST received, the message not finished
  kAfterNak,     // a PSN gap NAKed
  kAfterDreq,    // a DREQ sent
  kRequester,    // the target's QP has a READ outstanding (control): the input is its response
};
std::string_view phase_name(Phase phase);  // "established", "before-rtu", ...

using Change = std::pair<std::string, std::string>;  // field=value

struct Input {
  Template seed;
  std::vector<Change> changes;
  // The `send v ...` line (without `send v`): the op and every key, the seed's length first.
  std::string keys() const;
  std::string op() const;  // the opcode as the case language writes it, or the CM message
  bool bad_icrc() const;
};

// A catalogue of seeds: each kind of frame once (opcode, CM message, length class).
class Corpus {
 public:
  // Every request, response and CM message the tester can send, at a few lengths.
  static Corpus built_in();
  // Adds the RoCEv2 frames among `frames` (Ethernet) that the tester side of a real exchange
  // sent: requests, responses, CM MADs. Returns how many new seeds they gave.
  std::size_t add_frames(const std::vector<std::pair<Bytes, std::string>>& frames);
  const std::vector<Template>& seeds() const { return seeds_; }
  std::size_t size() const { return seeds_.size(); }

 private:
  bool add(Template t);
  std::vector<Template> seeds_;
};

// Draws inputs. `control`: the target has the control API (the requester phase, QPs made
// through it). `cm`: the target has an rdma_cm listener (the CM phases).
class Mutator {
 public:
  Mutator(const Corpus& corpus, bool control, bool cm, std::uint64_t seed);
  // An episode: a phase and 1..max_inputs inputs on the victim connection.
  struct Episode {
    Phase phase = Phase::kEstablished;
    std::vector<Input> inputs;
  };
  Episode next(std::size_t max_inputs);

 private:
  Input mutate(const Template& t);
  std::vector<Change> changes_for(const Template& t);
  std::vector<Template> requests_, responses_, cms_;  // the corpus's seeds, by kind
  bool control_, cm_;
  std::mt19937_64 random_;
};

}  // namespace roceconf::fuzz
