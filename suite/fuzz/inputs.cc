#include "suite/fuzz/inputs.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "dissector/field_table.h"
#include "dissector/opcode.h"
#include "dissector/packet.h"

namespace roceconf::fuzz {

namespace {

constexpr std::uint32_t kPmtu = 1024;       // the victim connection's path MTU (Fuzzer sets it)
constexpr std::size_t kMadBytes = 8 + 256;  // DETH and the MAD: a CM frame's transport

// Bytes of the extension headers an opcode calls for, in wire order (IBA 9.2-9.3).
std::vector<std::size_t> header_sizes(std::uint16_t headers) {
  static constexpr std::pair<std::uint16_t, std::size_t> kSizes[] = {
      {hdr::kRdeth, 4}, {hdr::kDeth, 8},       {hdr::kXrceth, 4},  {hdr::kFeth, 4},
      {hdr::kReth, 16}, {hdr::kAtomicEth, 28}, {hdr::kAeth, 4},    {hdr::kAtomicAckEth, 8},
      {hdr::kImmDt, 4}, {hdr::kIeth, 4},       {hdr::kCnpBody, 16}};
  std::vector<std::size_t> out;
  for (const auto& [bit, size] : kSizes)
    if (headers & bit) out.push_back(size);
  return out;
}

// The layers of the field table an opcode's frame has (besides Ethernet and the addresses).
std::vector<std::string_view> layers_of(std::uint16_t headers) {
  std::vector<std::string_view> out = {"ipv4", "udp", "bth"};
  static constexpr std::pair<std::uint16_t, std::string_view> kLayers[] = {
      {hdr::kRdeth, "rdeth"},   {hdr::kDeth, "deth"},
      {hdr::kXrceth, "xrceth"}, {hdr::kFeth, "feth"},
      {hdr::kReth, "reth"},     {hdr::kAtomicEth, "atomiceth"},
      {hdr::kAeth, "aeth"},     {hdr::kAtomicAckEth, "atomicacketh"},
      {hdr::kImmDt, "immdt"},   {hdr::kIeth, "ieth"}};
  for (const auto& [bit, layer] : kLayers)
    if (headers & bit) out.push_back(layer);
  return out;
}

// Fields a mutation may set: numbers and flags a case can set, but not those that take the
// frame off RoCEv2 altogether (a non-UDP protocol) or that the builder derives from others.
bool mutable_field(const FieldDef& f) {
  if (!f.set || (f.type != FieldType::kUnsigned && f.type != FieldType::kBool)) return false;
  static const std::set<std::string_view> kSkip = {"ipv4.proto", "udp.dport",  "ipv4.chksum",
                                                   "icrc.value", "vcrc.value", "bth.padcount"};
  return !kSkip.contains(f.key());
}

std::string hex(std::uint64_t v) {
  return fmt::format("{:#x}", v);
}

template <typename T>
const T& pick(const std::vector<T>& v, std::mt19937_64& r) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(r)];
}

std::uint64_t below(std::uint64_t n, std::mt19937_64& r) {  // [0, n)
  return n == 0 ? 0 : std::uniform_int_distribution<std::uint64_t>(0, n - 1)(r);
}

bool chance(double p, std::mt19937_64& r) {
  return std::bernoulli_distribution(p)(r);
}

// A boundary or out-of-range value for `f`: 0, 1, its largest, one below, the top bit, a value
// no name is given to (a reserved one) when the field has names, or any value.
std::string field_value(const FieldDef& f, std::mt19937_64& r) {
  const std::uint64_t max = f.max();
  if (f.type == FieldType::kBool) return chance(0.5, r) ? "1" : "0";
  if (f.key() == "bth.opcode") {
    // Opcodes the spec leaves reserved, the manufacturer range, or another service's.
    std::vector<std::uint64_t> reserved, others;
    for (int op = 0; op < 256; ++op) {
      const OpcodeInfo& i = opcode_info(static_cast<std::uint8_t>(op));
      (!i.valid || i.service == Service::kManufacturer ? reserved : others).push_back(op);
    }
    return hex(chance(0.7, r) ? pick(reserved, r) : pick(others, r));
  }
  if (f.key() == "ipv4.ihl") return std::to_string(5 + below(11, r));  // the builder adds options
  if (!f.values.empty() && chance(0.5, r)) {
    if (chance(0.5, r)) return hex(f.values[below(f.values.size(), r)].value);
    for (int tries = 0; tries < 16; ++tries) {
      const std::uint64_t v = below(max == ~0ull ? max : max + 1, r);
      if (f.value_name(v).empty()) return hex(v);
    }
  }
  switch (below(7, r)) {
    case 0:
      return "0";
    case 1:
      return "1";
    case 2:
      return hex(max);
    case 3:
      return hex(max - 1);
    case 4:
      return hex(max / 2 + 1);  // the top bit alone
    case 5:
      return hex(max - below(16, r));
    default:
      return hex(below(max == ~0ull ? max : max + 1, r));
  }
}

// Where a cut of the transport (the bytes after the BTH) is interesting: at each header
// boundary, one byte either side, halfway through a header, and around the payload's end.
std::vector<std::size_t> cut_points(const Template& t) {
  std::vector<std::size_t> out = {0, 1, 2};
  std::size_t at = 0;
  const auto sizes = t.kind == Template::Kind::kCm ? std::vector<std::size_t>{8, 24, 232}
                                                   : header_sizes(opcode_info(t.opcode).headers);
  for (const std::size_t s : sizes) {
    out.push_back(at + s / 2);
    at += s;
    out.push_back(at - 1);
    out.push_back(at);
    out.push_back(at + 1);
  }
  const std::size_t end = t.kind == Template::Kind::kCm ? kMadBytes : at + t.len;
  for (const std::size_t e : {end - std::min<std::size_t>(end, 1), end + 1, end + 4, end + 64})
    out.push_back(e);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string op_text(std::uint8_t opcode) {
  const OpcodeInfo& i = opcode_info(opcode);
  if (!i.valid || i.service == Service::kManufacturer) return hex(opcode);
  return std::string(i.service == Service::kRc ? i.op_name : i.name);
}

}  // namespace

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::kEstablished:
      return "established";
    case Phase::kBeforeRtu:
      return "before-rtu";
    case Phase::kMidMessage:
      return "mid-message";
    case Phase::kAfterNak:
      return "after-nak";
    case Phase::kAfterDreq:
      return "after-dreq";
    case Phase::kRequester:
      return "requester";
  }
  return "?";
}

std::string Input::op() const {
  return seed.kind == Template::Kind::kCm ? seed.cm : op_text(seed.opcode);
}

std::string Input::keys() const {
  std::string out = op();
  const bool has_len =
      std::any_of(changes.begin(), changes.end(), [](const Change& c) { return c.first == "len"; });
  const OpcodeInfo& info = opcode_info(seed.opcode);
  if (seed.kind != Template::Kind::kCm && !has_len && seed.len &&
      info.payload != PayloadRule::kNoPayload)
    out += fmt::format(" len={}", seed.len);
  if (seed.kind != Template::Kind::kCm && info.kind == OpKind::kReadRequest &&
      std::none_of(changes.begin(), changes.end(),
                   [](const Change& c) { return c.first == "reth.dmalen"; }))
    out += fmt::format(" reth.dmalen={}", seed.len);
  for (const auto& [k, v] : changes) out += fmt::format(" {}={}", k, v);
  return out;
}

bool Input::bad_icrc() const {
  return std::any_of(changes.begin(), changes.end(),
                     [](const Change& c) { return c.first == "icrc" && c.second == "bad"; });
}

// ---- seeds --------------------------------------------------------------------------------

bool Corpus::add(Template t) {
  // One seed per opcode (or CM message) and length class: 0, short, up to the path MTU, more.
  const auto length_class = [](std::uint32_t n) {
    return n == 0 ? 0 : n < 64 ? 1 : n <= kPmtu ? 2 : 3;
  };
  for (const auto& s : seeds_)
    if (s.kind == t.kind && s.opcode == t.opcode && s.cm == t.cm &&
        length_class(s.len) == length_class(t.len))
      return false;
  seeds_.push_back(std::move(t));
  return true;
}

Corpus Corpus::built_in() {
  Corpus c;
  for (int op = 0; op < 0x20; ++op) {
    const OpcodeInfo& i = opcode_info(static_cast<std::uint8_t>(op));
    if (!i.valid) continue;
    const Template::Kind kind = i.is_request ? Template::Kind::kRequest : Template::Kind::kResponse;
    std::vector<std::uint32_t> lens = {0};
    if (i.payload == PayloadRule::kExactPmtu) lens = {kPmtu};
    if (i.payload == PayloadRule::kUpToPmtu1) lens = {1, 64};
    if (i.payload == PayloadRule::kUpToPmtu0) lens = {0, 16, kPmtu};
    if (i.payload == PayloadRule::kExactly8) lens = {8};
    if (i.kind == OpKind::kReadRequest) lens = {64, 4096};
    for (const std::uint32_t n : lens)
      c.add({kind, static_cast<std::uint8_t>(op), {}, n, "built-in"});
  }
  c.add({Template::Kind::kRequest, opcode::kCnp, {}, 0, "built-in"});
  for (const char* m : {"REQ", "REP", "RTU", "DREQ", "DREP", "MRA", "REJ", "LAP", "ClassPortInfo"})
    c.add({Template::Kind::kCm, 0, m, 0, "built-in"});
  return c;
}

std::size_t Corpus::add_frames(const std::vector<std::pair<Bytes, std::string>>& frames) {
  std::size_t added = 0;
  for (const auto& [bytes, origin] : frames) {
    const Packet p = decode(bytes);
    if (!p.bth || !p.udp) continue;
    Template t;
    t.origin = origin;
    if (p.mad) {
      if (!p.mad->cm) continue;
      t.kind = Template::Kind::kCm;
      t.cm = std::string(cm_message_name(*p.mad->cm));
      if (t.cm != "REQ" && t.cm != "REP" && t.cm != "RTU" && t.cm != "DREQ" && t.cm != "DREP" &&
          t.cm != "MRA" && t.cm != "REJ" && t.cm != "LAP" && t.cm != "ClassPortInfo")
        continue;  // messages the tester does not send (SIDR, APR)
    } else {
      const OpcodeInfo& i = opcode_info(p.bth->opcode);
      if (!i.valid || i.service != Service::kRc) continue;  // the victim is an RC connection
      t.kind = i.is_request ? Template::Kind::kRequest : Template::Kind::kResponse;
      t.opcode = p.bth->opcode;
      t.len = static_cast<std::uint32_t>(p.payload.size());
      if (i.kind == OpKind::kReadRequest && p.reth) t.len = p.reth->dmalen;
      if (i.payload == PayloadRule::kExactPmtu) t.len = kPmtu;  // the victim's MTU, not theirs
      if (t.len > kPmtu && i.payload != PayloadRule::kNoPayload && i.kind != OpKind::kReadRequest)
        t.len = kPmtu;
    }
    added += add(std::move(t));
  }
  return added;
}

// ---- mutation -----------------------------------------------------------------------------

Mutator::Mutator(const Corpus& corpus, bool control, bool cm, std::uint64_t seed)
    : control_(control), cm_(cm), random_(seed) {
  for (const auto& t : corpus.seeds()) {
    if (t.kind == Template::Kind::kCm && !cm) continue;
    (t.kind == Template::Kind::kRequest    ? requests_
     : t.kind == Template::Kind::kResponse ? responses_
                                           : cms_)
        .push_back(t);
  }
}

std::vector<Change> Mutator::changes_for(const Template& t) {
  std::mt19937_64& r = random_;
  std::vector<Change> out;
  const auto has = [&](std::string_view k) {
    return std::any_of(out.begin(), out.end(), [&](const Change& c) { return c.first == k; });
  };
  const std::size_t n = chance(0.5, r) ? 1 : chance(0.7, r) ? 2 : 3;
  const bool cm = t.kind == Template::Kind::kCm;
  const std::uint16_t headers = cm ? 0 : opcode_info(t.opcode).headers;
  for (int tries = 0; out.size() < n && tries < 32; ++tries) {
    const std::uint64_t what = below(100, r);
    if (what < 12) {
      if (!has("cut")) out.emplace_back("cut", std::to_string(pick(cut_points(t), r)));
    } else if (what < 20) {
      if (!has("icrc")) out.emplace_back("icrc", "bad");
    } else if (what < 28 && !cm) {
      // The pad count against the payload: any count over a payload of 0 to 3 bytes.
      if (!has("bth.padcount")) {
        out.emplace_back("bth.padcount", std::to_string(below(4, r)));
        if (!has("len") && opcode_info(t.opcode).payload != PayloadRule::kNoPayload)
          out.emplace_back("len", std::to_string(below(4, r)));
      }
    } else if (what < 34 && !cm && opcode_info(t.opcode).payload != PayloadRule::kNoPayload) {
      static const std::vector<std::uint32_t> kLens = {0,     1,         3,    4,   kPmtu - 1,
                                                       kPmtu, kPmtu + 1, 4096, 4097};
      if (!has("len")) out.emplace_back("len", std::to_string(pick(kLens, r)));
    } else if (what < 40 && !cm) {
      static const std::vector<std::string> kPsns = {"-1",       "1",        "2",
                                                     "0x7fffff", "0x800000", "0xffffff"};
      if (!has("psn")) out.emplace_back("psn", pick(kPsns, r));
    } else if (what < 46 && !cm) {
      // A length field that disagrees with the frame (the other lengths stay right).
      const std::string k = chance(0.5, r) ? "ip.len" : "udp.len";
      if (!has(k)) {
        static const std::vector<int> kDelta = {-64, -4, -1, 1, 4, 64};
        // The builder writes the value over the frame: a delta from the real length is
        // expressed as an absolute value from the template's size.
        const std::size_t transport = 12 + (cm ? kMadBytes : 0) + t.len + 4;
        std::size_t base = transport + 8 + (k == "ip.len" ? 20 : 0);
        for (const std::size_t s : header_sizes(headers)) base += s;
        const int d = pick(kDelta, r);
        out.emplace_back(k, std::to_string(static_cast<std::size_t>(
                                std::max<long>(0, static_cast<long>(base) + d))));
      }
    } else {
      // A field of the frame from the declared table.
      std::vector<const FieldDef*> fields;
      const std::vector<std::string_view> layers =
          cm ? std::vector<std::string_view>{"cm", "mad", "bth"} : layers_of(headers);
      for (const std::string_view layer : layers)
        for (const FieldDef& f : layer_fields(layer))
          if (mutable_field(f)) fields.push_back(&f);
      if (fields.empty()) continue;
      const FieldDef* f = pick(fields, r);
      const std::string k = cm && f->layer == "mad" ? std::string(f->name) : f->key();
      if (!has(k)) out.emplace_back(k, field_value(*f, r));
    }
  }
  return out;
}

Input Mutator::mutate(const Template& t) {
  Input in;
  in.seed = t;
  in.changes = changes_for(t);
  return in;
}

Mutator::Episode Mutator::next(std::size_t max_inputs) {
  std::mt19937_64& r = random_;
  std::vector<Phase> phases = {Phase::kEstablished, Phase::kMidMessage, Phase::kAfterNak};
  if (cm_) phases.insert(phases.end(), {Phase::kBeforeRtu, Phase::kAfterDreq});
  if (control_ && !responses_.empty()) phases.push_back(Phase::kRequester);
  Episode e;
  e.phase = pick(phases, r);
  const std::size_t n = 1 + below(std::max<std::size_t>(max_inputs, 1), r);
  for (std::size_t i = 0; i < n; ++i) {
    const Template* t = nullptr;
    if (e.phase == Phase::kRequester && chance(0.8, r))
      t = &pick(responses_, r);
    else if (!cms_.empty() && chance(0.2, r))
      t = &pick(cms_, r);
    else if (!responses_.empty() && chance(0.1, r))
      t = &pick(responses_, r);
    else
      t = &pick(requests_, r);
    e.inputs.push_back(mutate(*t));
  }
  return e;
}

}  // namespace roceconf::fuzz
