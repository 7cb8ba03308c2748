#include "suite/engine/matcher.h"

#include <map>

#include <fmt/format.h>

#include "dissector/analysis/psn.h"
#include "dissector/field_table.h"
#include "dissector/names.h"
#include "dissector/summary.h"
#include "suite/engine/frame_builder.h"

namespace roceconf::engine {

namespace {

constexpr std::string_view kCmKinds[] = {"REQ",      "MRA",  "REJ",  "REP",
                                         "RTU",      "DREQ", "DREP", "SIDR_REQ",
                                         "SIDR_REP", "LAP",  "APR",  "ClassPortInfo"};

// Every decoded field as text and, where numeric, as a number.
class FieldTable final : public FieldSink {
 public:
  struct Value {
    std::string text;
    std::optional<std::uint64_t> number;
  };
  void field(std::string_view layer, std::string_view name, const FieldValue& value) override {
    Value v;
    if (const auto* u = std::get_if<std::uint64_t>(&value)) {
      v.number = *u;
      v.text = fmt::format("{:#x}", *u);
    } else if (const auto* b = std::get_if<bool>(&value)) {
      v.number = *b ? 1 : 0;
      v.text = *b ? "true" : "false";
    } else if (const auto* s = std::get_if<std::string_view>(&value)) {
      v.text = std::string(*s);
    } else if (const auto* a = std::get_if<Address>(&value)) {
      v.text = format_address(a->bytes);
    } else if (const auto* bytes = std::get_if<Bytes>(&value)) {
      for (auto byte : *bytes) v.text += fmt::format("{:02x}", byte);
    }
    fields.try_emplace(fmt::format("{}.{}", layer, name), std::move(v));
  }
  std::map<std::string, Value, std::less<>> fields;
};

std::string hex24(std::uint32_t v) {
  return fmt::format("{:#08x}", v);
}

std::string syndrome_text(std::uint8_t s) {
  return fmt::format("{:#04x} ({})", s, syndrome_name(s));
}

std::optional<std::uint8_t> nak_code(std::string_view name) {
  static const std::map<std::string_view, std::uint8_t> kCodes = {
      {"psn_seq_err", syndrome::kNakPsnSeqError},
      {"seq_err", syndrome::kNakPsnSeqError},
      {"inv_req", syndrome::kNakInvalidRequest},
      {"invalid_request", syndrome::kNakInvalidRequest},
      {"rem_acc_err", syndrome::kNakRemoteAccess},
      {"rem_access", syndrome::kNakRemoteAccess},
      {"rem_op_err", syndrome::kNakRemoteOperational},
      {"rem_op", syndrome::kNakRemoteOperational},
      {"inv_rd_req", syndrome::kNakInvalidRdRequest},
  };
  const auto it = kCodes.find(name);
  if (it == kCodes.end()) return std::nullopt;
  return it->second;
}

bool is_read_response(std::uint8_t op) {
  return op >= opcode::kRcReadResponseFirst && op <= opcode::kRcReadResponseOnly;
}

// The value text a field shows in a diff: hex where the table says so, names, addresses.
std::string field_text(const FieldDef& f, const FieldValue& v) {
  if (const auto* u = std::get_if<std::uint64_t>(&v)) {
    const std::string_view name = f.value_name(*u);
    std::string out = f.hex ? fmt::format("{:#x}", *u) : std::to_string(*u);
    if (!name.empty()) out += fmt::format(" ({})", name);
    return out;
  }
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "1" : "0";
  if (const auto* s = std::get_if<std::string_view>(&v)) return std::string(*s);
  if (const auto* a = std::get_if<Address>(&v)) return format_address(a->bytes);
  std::string out;
  for (auto byte : std::get<Bytes>(v)) out += fmt::format("{:02x}", byte);
  return out;
}

// Parses what an expectation wants of `f`: a number (or a value name, or true/false) for
// numeric fields, the text otherwise.
std::expected<std::optional<std::uint64_t>, std::string> wanted_number(const FieldDef& f,
                                                                       std::string_view key,
                                                                       std::string_view value) {
  if (f.type != FieldType::kUnsigned && f.type != FieldType::kBool)
    return std::optional<std::uint64_t>{};
  if (auto n = parse_uint(value)) return std::optional<std::uint64_t>{*n};
  if (value == "true" || value == "false") return std::optional<std::uint64_t>{value == "true"};
  if (auto named = f.value_of(value)) return std::optional<std::uint64_t>{*named};
  return std::unexpected(fmt::format("{}: '{}' is not a number{}", key, value,
                                     f.values.empty() ? "" : " or a value name of " + f.key()));
}

// The diff of one field, nullopt when it matches. The first of `defs` the packet carries is
// compared (an alias may name alternative layers).
std::expected<std::optional<report::FieldDiff>, std::string> compare_field(
    const Packet& p, const std::vector<const FieldDef*>& defs, std::string_view key,
    std::string_view value) {
  const FieldDef& first = *defs.front();
  for (const FieldDef* f : defs) {
    const auto actual = f->get(p, 0);
    if (!actual) continue;
    auto want = wanted_number(*f, key, value);
    if (!want) return std::unexpected(want.error());
    std::optional<std::uint64_t> have;
    if (const auto* u = std::get_if<std::uint64_t>(&*actual)) have = *u;
    if (const auto* b = std::get_if<bool>(&*actual)) have = *b ? 1 : 0;
    if (*want && have) {
      if (**want == *have) return std::optional<report::FieldDiff>{};
      return report::FieldDiff{f->key(), field_text(*f, FieldValue{**want}),
                               field_text(*f, *actual)};
    }
    const std::string text = field_text(*f, *actual);
    if (text == value) return std::optional<report::FieldDiff>{};
    return report::FieldDiff{f->key(), std::string(value), text};
  }
  if (auto want = wanted_number(first, key, value); !want) return std::unexpected(want.error());
  return report::FieldDiff{first.key(), std::string(value), "(absent)"};
}

}  // namespace

bool is_cm_kind(std::string_view kind) {
  for (auto k : kCmKinds)
    if (k == kind) return true;
  return false;
}

bool acknowledges_earlier(const Packet& p, const Connection* c, const Expectation& e) {
  if (!p.bth || p.bth->opcode != opcode::kRcAck || !p.aeth ||
      aeth_type(p.aeth->syndrome) != AethType::kAck)
    return false;
  const std::string* value = e.fields.find("psn");
  if (!value) return false;
  auto rel = parse_int(*value);
  if (!rel) return false;
  const std::uint32_t want = psn::add(c ? c->local_psn0 : 0, *rel);
  return psn::diff(p.bth->psn, want) < 0;
}

std::expected<std::vector<report::FieldDiff>, std::string> match(const Packet& p,
                                                                 const Connection* c,
                                                                 const Expectation& e) {
  std::vector<report::FieldDiff> diffs;
  const auto* bth = p.bth ? &*p.bth : nullptr;
  const std::uint8_t op = bth ? bth->opcode : 0xFF;
  const std::string actual_op = bth ? std::string(opcode_info(op).name) : std::string("(no BTH)");
  const bool is_ack = bth && op == opcode::kRcAck && p.aeth;
  const std::string cm_msg =
      p.mad && p.mad->cm ? std::string(cm_message_name(*p.mad->cm)) : std::string();

  // The kind.
  const std::string& kind = e.kind;
  if (kind == "ACK" || kind == "NAK" || kind == "RNR") {
    const AethType want = kind == "ACK"   ? AethType::kAck
                          : kind == "RNR" ? AethType::kRnrNak
                                          : AethType::kNak;
    if (!is_ack) {
      diffs.push_back({"bth.opcode", "RC_ACKNOWLEDGE (" + kind + ")",
                       cm_msg.empty() ? actual_op : "CM " + cm_msg});
    } else if (aeth_type(p.aeth->syndrome) != want) {
      diffs.push_back({"aeth.syndrome", kind, syndrome_text(p.aeth->syndrome)});
    }
  } else if (kind == "READ_RESPONSE" || kind == "RDMA_READ_RESPONSE") {
    if (!bth || !is_read_response(op))
      diffs.push_back({"bth.opcode", "RC_RDMA_READ_RESPONSE_*", actual_op});
  } else if (kind == "ATOMIC_ACK" || kind == "ATOMIC_ACKNOWLEDGE") {
    if (op != opcode::kRcAtomicAck)
      diffs.push_back({"bth.opcode", "RC_ATOMIC_ACKNOWLEDGE", actual_op});
  } else if (is_cm_kind(kind)) {
    if (cm_msg != kind) diffs.push_back({"cm.msg", kind, cm_msg.empty() ? actual_op : cm_msg});
  } else if (kind == "any" || kind == "*") {
  } else {
    std::string name = kind;
    if (name.starts_with("READ_RESPONSE")) name = "RDMA_" + name;
    auto want = request_opcode(name);
    if (!want) return std::unexpected(fmt::format("unknown packet kind '{}'", kind));
    if (op != *want)
      diffs.push_back({"bth.opcode", std::string(opcode_info(*want).name), actual_op});
    // A CNP's 16 bytes after the BTH are reserved: a CNP expectation requires them zero.
    if (op == *want && op == opcode::kCnp)
      for (const Finding& f : p.findings)
        if (f.layer == Layer::kCnp) diffs.push_back({"cnp.reserved", "16 zero bytes", f.message});
  }
  if (!diffs.empty()) return diffs;  // fields of another kind would only add noise

  const bool target_request = bth && opcode_info(op).is_request;
  for (const auto& [key, value] : e.fields.items()) {
    if (value == "...") {
      const auto defs = find_fields(key);
      if (defs.empty())
        return std::unexpected(fmt::format("unknown field '{}' in an expectation", key));
      if (std::ranges::none_of(defs, [&](const FieldDef* f) { return f->get(p, 0).has_value(); }))
        diffs.push_back({defs.front()->key(), "present", "absent"});
      continue;
    }
    if (key == "psn") {
      if (!bth) return std::unexpected("psn: the packet has no BTH");
      auto rel = parse_int(value);
      if (!rel) return std::unexpected("psn: " + rel.error());
      const std::uint32_t base = c ? (target_request ? c->remote_psn0 : c->local_psn0) : 0;
      const std::uint32_t want = psn::add(base, *rel);
      if (bth->psn != want)
        diffs.push_back({"bth.psn", fmt::format("{} (+{})", hex24(want), value),
                         fmt::format("{} ({:+})", hex24(bth->psn), psn::diff(bth->psn, base))});
      continue;
    }
    if (key == "syndrome") {
      if (!p.aeth) {
        diffs.push_back({"aeth.syndrome", value, "(no AETH)"});
        continue;
      }
      const std::uint8_t s = p.aeth->syndrome;
      if (value == "ack") {
        if (aeth_type(s) != AethType::kAck)
          diffs.push_back({"aeth.syndrome", "ACK", syndrome_text(s)});
      } else if (value == "rnr") {
        if (aeth_type(s) != AethType::kRnrNak)
          diffs.push_back({"aeth.syndrome", "RNR NAK", syndrome_text(s)});
      } else if (auto code = nak_code(value)) {
        if (s != *code) diffs.push_back({"aeth.syndrome", syndrome_text(*code), syndrome_text(s)});
      } else {
        auto n = parse_uint(value);
        if (!n)
          return std::unexpected(
              fmt::format("syndrome: '{}' is not ack, rnr, psn_seq_err, "
                          "inv_req, rem_acc_err, rem_op_err or a number",
                          value));
        if (s != *n)
          diffs.push_back(
              {"aeth.syndrome", syndrome_text(static_cast<std::uint8_t>(*n)), syndrome_text(s)});
      }
      continue;
    }
    if (key == "msn") {
      if (!p.aeth) {
        diffs.push_back({"aeth.msn", value, "(no AETH)"});
        continue;
      }
      std::uint32_t want = 0;
      if (value.starts_with('+')) {
        auto n = parse_int(value);
        if (!n) return std::unexpected("msn: " + n.error());
        want = psn::add(c && c->last_msn ? *c->last_msn : 0, *n);
      } else {
        auto n = parse_uint(value);
        if (!n) return std::unexpected("msn: " + n.error());
        want = static_cast<std::uint32_t>(*n);
      }
      if (p.aeth->msn != want)
        diffs.push_back(
            {"aeth.msn", fmt::format("{} ({})", want, value), std::to_string(p.aeth->msn)});
      continue;
    }
    if (key == "rnr_timer" || key == "credits") {
      if (!p.aeth) {
        diffs.push_back({"aeth." + key, value, "(no AETH)"});
        continue;
      }
      auto n = parse_uint(value);
      if (!n) return std::unexpected(key + ": " + n.error());
      const std::uint8_t v = aeth_value(p.aeth->syndrome);
      if (v != *n) diffs.push_back({"aeth." + key, std::to_string(*n), std::to_string(v)});
      continue;
    }
    if (key == "len") {
      auto n = parse_uint(value);
      if (!n) return std::unexpected("len: " + n.error());
      if (p.payload.size() != *n)
        diffs.push_back({"payload.length", std::to_string(*n), std::to_string(p.payload.size())});
      continue;
    }
    if (key == "fill" || key == "data") {
      std::vector<std::uint8_t> want;
      if (key == "fill") {
        auto n = parse_uint(value);
        if (!n) return std::unexpected("fill: " + n.error());
        want = fill_pattern(static_cast<std::uint32_t>(*n), p.payload.size());
      } else {
        std::string_view hex = value;
        if (hex.starts_with("0x")) hex.remove_prefix(2);
        for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
          auto b = parse_uint("0x" + std::string(hex.substr(i, 2)));
          if (!b) return std::unexpected("data: not hex");
          want.push_back(static_cast<std::uint8_t>(*b));
        }
      }
      if (!std::equal(want.begin(), want.end(), p.payload.begin(), p.payload.end())) {
        std::size_t at = 0;
        while (at < want.size() && at < p.payload.size() && want[at] == p.payload[at]) ++at;
        diffs.push_back(
            {"payload", fmt::format("{} bytes of {}={}", want.size(), key, value),
             fmt::format("{} bytes, first difference at byte {}", p.payload.size(), at)});
      }
      continue;
    }
    if (key == "icrc") {
      const bool ok = p.icrc && p.icrc->ok();
      if ((value == "good") != ok)
        diffs.push_back({"icrc.ok", value == "good" ? "true" : "false", ok ? "true" : "false"});
      continue;
    }
    // Any field of the field table, by key or alias.
    const auto defs = find_fields(key);
    if (defs.empty())
      return std::unexpected(fmt::format("unknown field '{}' in an expectation", key));
    auto diff = compare_field(p, defs, key, value);
    if (!diff) return std::unexpected(diff.error());
    if (*diff) diffs.push_back(std::move(**diff));
  }
  return diffs;
}

std::string describe_received(const Packet& p, const Connection* c) {
  if (p.mad && p.mad->cm) {
    std::string out(cm_message_name(*p.mad->cm));
    FieldTable t;
    visit_fields(p, t);
    for (std::string_view k : {"cm.reason", "cm.local_comm_id", "cm.remote_comm_id", "cm.local_qpn",
                               "cm.starting_psn", "mad.tid"})
      if (const auto it = t.fields.find(k); it != t.fields.end())
        out += fmt::format(" {}={}", k, it->second.text);
    return out;
  }
  if (!p.bth) return "not RoCE: " + summarize(p);
  const Bth& b = *p.bth;
  std::string out;
  const bool request = opcode_info(b.opcode).is_request;
  const std::uint32_t base = c ? (request ? c->remote_psn0 : c->local_psn0) : 0;
  if (b.opcode == opcode::kRcAck && p.aeth) {
    const auto t = aeth_type(p.aeth->syndrome);
    out = t == AethType::kAck ? "ACK" : t == AethType::kRnrNak ? "RNR" : "NAK";
  } else {
    out = std::string(opcode_info(b.opcode).name);
    if (out.starts_with("RC_")) out.erase(0, 3);
  }
  out += fmt::format(" psn={}", c ? std::to_string(psn::diff(b.psn, base)) : hex24(b.psn));
  if (p.aeth) out += fmt::format(" syndrome={:#04x} msn={}", p.aeth->syndrome, p.aeth->msn);
  if (!p.payload.empty()) out += fmt::format(" len={}", p.payload.size());
  if (b.pkey != (c ? c->pkey : 0xFFFF)) out += fmt::format(" pkey={:#06x}", b.pkey);
  if (c && b.dqpn != c->local_qpn) out += fmt::format(" dqpn={:#x}", b.dqpn);
  if (p.icrc && !p.icrc->ok()) out += " icrc=bad";
  return out;
}

}  // namespace roceconf::engine

namespace roceconf::engine {

std::expected<void, std::string> check_expectation(const Expectation& e) {
  const std::string& kind = e.kind;
  const bool known_kind = kind == "ACK" || kind == "NAK" || kind == "RNR" ||
                          kind == "READ_RESPONSE" || kind == "RDMA_READ_RESPONSE" ||
                          kind == "ATOMIC_ACK" || kind == "ATOMIC_ACKNOWLEDGE" ||
                          is_cm_kind(kind) || kind == "any" || kind == "*";
  if (!known_kind) {
    std::string name = kind;
    if (name.starts_with("READ_RESPONSE")) name = "RDMA_" + name;
    if (!request_opcode(name))
      return std::unexpected(fmt::format(
          "unknown packet kind '{}' (write ACK, NAK, RNR, READ_RESPONSE, ATOMIC_ACK, a CM "
          "message such as REP, an opcode such as SEND_ONLY, or any)",
          kind));
  }
  for (const auto& [key, value] : e.fields.items()) {
    const auto bad = [&](std::string_view what) -> std::expected<void, std::string> {
      return std::unexpected(fmt::format("{}: '{}' is not {}", key, value, what));
    };
    if (key == "psn") {
      if (!parse_int(value)) return bad("a PSN offset (0, 3, -1)");
    } else if (key == "syndrome") {
      const FieldDef* f = find_field("aeth.syndrome");
      if (value != "ack" && value != "rnr" && !nak_code(value) && !parse_uint(value) &&
          !(f && f->value_of(value)))
        return bad("ack, rnr, psn_seq_err, inv_req, rem_acc_err, rem_op_err or a number");
    } else if (key == "msn") {
      if (value.starts_with('+') ? !parse_int(value) : !parse_uint(value))
        return bad("an MSN or +N");
    } else if (key == "rnr_timer" || key == "credits" || key == "len" || key == "fill") {
      if (!parse_uint(value)) return bad("a number");
    } else if (key == "data") {
      std::string_view hex = value;
      if (hex.starts_with("0x")) hex.remove_prefix(2);
      if (hex.size() % 2 != 0 || hex.find_first_not_of("0123456789abcdefABCDEF") != hex.npos)
        return bad("hex bytes");
    } else if (key == "icrc") {
      if (value != "good" && value != "bad") return bad("good or bad");
    } else if (const auto defs = find_fields(key); !defs.empty()) {
      if (value == "...") continue;
      if (auto want = wanted_number(*defs.front(), key, value); !want)
        return std::unexpected(want.error());
    } else {
      return std::unexpected(fmt::format("unknown field '{}' in an expectation", key));
    }
  }
  return {};
}

}  // namespace roceconf::engine
