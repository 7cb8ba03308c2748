#include "suite/engine/script_check.h"

#include <algorithm>
#include <cctype>
#include <span>

#include <fmt/format.h>

#include "control/verbs_names.h"
#include "dissector/mad/cm.h"
#include "suite/engine/frame_builder.h"
#include "suite/engine/matcher.h"

namespace roceconf::engine {

namespace {

using Fail = std::unexpected<std::string>;

enum class Type : std::uint8_t {
  kNumber,    // up to Key::max
  kMtu,       // 256, 512, 1024, 2048 or 4096
  kBool,      // 0/1, yes/no, true/false
  kText,      // anything
  kHex,       // bytes in hex
  kCq,        // a `create cq` name
  kCmState,   // a cm_status state
  kAccess,    // access flag names, comma-separated, or "none"
  kWcStatus,  // ibv_wc status names (`A|B`: any of them)
  kWcOpcode,  // ibv_wc opcode names (`A|B`)
  kWcFlags,   // ibv_wc flag names, comma-separated
  kQpn,       // a number, or the step's connection name (its QP's number)
  kFamily,    // the GIDs a connection runs over: ipv4 or ipv6
  kSendOp,    // a post_send opcode (SEND, RDMA_WRITE, RDMA_READ, ... or a short name: READ)
};

struct Key {
  std::string_view name;
  Type type;
  std::uint64_t max = UINT64_MAX;
};

constexpr std::uint64_t k24 = 0xFFFFFF, k32 = 0xFFFFFFFF;

// The options of the verbs that make a connection or drive the control API (cases/README.md).
constexpr Key kConnect[] = {{"pmtu", Type::kMtu},
                            {"pkey", Type::kNumber, 0xFFFF},
                            {"target_psn", Type::kNumber, k24},
                            {"rtu", Type::kBool},
                            {"gid", Type::kFamily}};
constexpr Key kOpen[] = {{"pmtu", Type::kMtu},
                         {"psn", Type::kNumber, k24},
                         {"target_psn", Type::kNumber, k24},
                         {"pkey_index", Type::kNumber, 0xFFFF},
                         {"recv", Type::kNumber, 0xFFFF},
                         {"recv_len", Type::kNumber, k32},
                         {"region", Type::kNumber, k32},
                         {"cq", Type::kCq},
                         {"access", Type::kAccess},
                         {"min_rnr_timer", Type::kNumber, 31},
                         {"max_dest_rd_atomic", Type::kNumber, 0xFF},
                         {"timeout", Type::kNumber, 31},
                         {"retry_cnt", Type::kNumber, 7},
                         {"rnr_retry", Type::kNumber, 7},
                         {"max_rd_atomic", Type::kNumber, 0xFF},
                         {"type", Type::kText},
                         {"gid", Type::kFamily}};
constexpr Key kAccept[] = {{"rep", Type::kBool},
                           {"pmtu", Type::kMtu},
                           {"pkey", Type::kNumber, 0xFFFF},
                           {"psn", Type::kNumber, k24},
                           {"target_psn", Type::kNumber, k24},
                           {"service_id", Type::kNumber},
                           {"port", Type::kNumber, 0xFFFF},
                           {"recv", Type::kNumber, 0xFFFF},
                           {"recv_len", Type::kNumber, k32},
                           {"region", Type::kNumber, k32}};
// accept's connect.FIELD: the control API's cm_connect fields (suite/reference_nic/CONTROL_API.md).
constexpr Key kCmConnect[] = {{"service_id", Type::kNumber},
                              {"port", Type::kNumber, 0xFFFF},
                              {"dgid", Type::kText},
                              {"dmac", Type::kText},
                              {"path_mtu", Type::kNumber, 4096},
                              {"starting_psn", Type::kNumber, k24},
                              {"responder_resources", Type::kNumber, 0xFF},
                              {"initiator_depth", Type::kNumber, 0xFF},
                              {"retry_count", Type::kNumber, 7},
                              {"rnr_retry_count", Type::kNumber, 7},
                              {"pkey", Type::kNumber, 0xFFFF},
                              {"private_data", Type::kHex},
                              {"cm_response_timeout", Type::kNumber, 31},
                              {"max_cm_retries", Type::kNumber, 15},
                              {"packet_lifetime", Type::kNumber, 31}};
constexpr Key kStatus[] = {{"state", Type::kCmState},
                           {"reason", Type::kNumber, 0xFFFF},
                           {"comm_id", Type::kNumber, k32},
                           {"remote_qpn", Type::kNumber, k24},
                           {"cm_state", Type::kText}};
constexpr Key kCreateCq[] = {{"depth", Type::kNumber, k32}};
constexpr Key kPostRecv[] = {{"count", Type::kNumber, 4096}, {"len", Type::kNumber, k32}};
constexpr Key kPostSend[] = {
    {"len", Type::kNumber, 1u << 20}, {"fill", Type::kNumber, k32},   {"wr_id", Type::kNumber},
    {"imm", Type::kNumber, k32},      {"solicited", Type::kBool},     {"op", Type::kSendOp},
    {"count", Type::kNumber, 64},     {"signaled", Type::kBool},      {"va", Type::kNumber},
    {"rkey", Type::kNumber, k32},     {"offset", Type::kNumber, k32}, {"add", Type::kNumber},
    {"compare", Type::kNumber},       {"swap", Type::kNumber}};
constexpr Key kRead[] = {{"offset", Type::kNumber},
                         {"len", Type::kNumber, 1u << 20},
                         {"fill", Type::kNumber, k32},
                         {"data", Type::kHex}};
constexpr Key kWrite[] = {
    {"offset", Type::kNumber}, {"len", Type::kNumber, 1u << 20}, {"fill", Type::kNumber, k32}};
// poll: ibv_wc fields as the control API gives them.
constexpr Key kCompletion[] = {{"cq", Type::kCq},
                               {"wr_id", Type::kNumber},
                               {"status", Type::kWcStatus},
                               {"opcode", Type::kWcOpcode},
                               {"vendor_err", Type::kNumber, k32},
                               {"byte_len", Type::kNumber, k32},
                               {"imm_data", Type::kNumber, k32},
                               {"qp_num", Type::kQpn},
                               {"src_qp", Type::kQpn},
                               {"pkey_index", Type::kNumber, 0xFFFF},
                               {"slid", Type::kNumber, 0xFFFF},
                               {"sl", Type::kNumber, 15},
                               {"dlid_path_bits", Type::kNumber, 0xFF},
                               {"wc_flags", Type::kWcFlags}};

constexpr std::string_view kCmStates[] = {"connecting", "established",   "rejected",
                                          "timed_out",  "disconnecting", "disconnected"};

std::string names(std::span<const Key> keys) {
  std::string out;
  for (const auto& k : keys) out += fmt::format("{}{}", out.empty() ? "" : ", ", k.name);
  return out;
}

// Each part of a list ("A,B" or "A|B") passes `ok`.
template <typename F>
bool each(std::string_view value, char separator, F ok) {
  if (value.empty()) return false;
  for (;;) {
    const auto at = value.find(separator);
    if (!ok(value.substr(0, at))) return false;
    if (at == std::string_view::npos) return true;
    value.remove_prefix(at + 1);
  }
}

std::expected<void, std::string> check_value(const Key& k, std::string_view value,
                                             std::string_view conn,
                                             const std::set<std::string>& cqs, bool check_cqs) {
  if (value.starts_with('@')) return {};  // a connection's value (checked where parsed)
  const auto number = [&](std::uint64_t max) -> std::expected<void, std::string> {
    auto n = parse_uint(value);
    if (!n) return Fail(fmt::format("{}: {}", k.name, n.error()));
    if (*n > max) return Fail(fmt::format("{}: {} is more than {:#x}", k.name, value, max));
    return {};
  };
  switch (k.type) {
    case Type::kNumber:
      return number(k.max);
    case Type::kMtu: {
      auto n = parse_uint(value);
      if (!n || (*n != 256 && *n != 512 && *n != 1024 && *n != 2048 && *n != 4096))
        return Fail(fmt::format("{}: {} is not 256, 512, 1024, 2048 or 4096", k.name, value));
      return {};
    }
    case Type::kBool:
      if (value == "0" || value == "1" || value == "yes" || value == "no" || value == "true" ||
          value == "false")
        return {};
      return Fail(fmt::format("{}: '{}' is not 0 or 1", k.name, value));
    case Type::kText:
      if (value.empty()) return Fail(fmt::format("{}: give a value", k.name));
      return {};
    case Type::kFamily:
      if (value == "ipv4" || value == "ipv6") return {};
      return Fail(fmt::format("{}: '{}' is not ipv4 or ipv6", k.name, value));
    case Type::kSendOp:
      if (send_op_name(value)) return {};
      return Fail(fmt::format(
          "{}: '{}' is not a send opcode (SEND, SEND_WITH_IMM, RDMA_WRITE, "
          "RDMA_WRITE_WITH_IMM, RDMA_READ, ATOMIC_FETCH_AND_ADD, ATOMIC_CMP_AND_SWP; or WRITE, "
          "WRITE_WITH_IMM, READ, FETCH_ADD, CMP_SWAP)",
          k.name, value));
    case Type::kHex:
      if (value.size() % 2 == 0 && std::ranges::all_of(value, [](char ch) {
            return std::isxdigit(static_cast<unsigned char>(ch)) != 0;
          }))
        return {};
      return Fail(fmt::format("{}: '{}' is not bytes in hex", k.name, value));
    case Type::kCq:
      if (!check_cqs || cqs.contains(std::string(value))) return {};
      return Fail(fmt::format("{}: no earlier 'create cq as {}'", k.name, value));
    case Type::kCmState:
      if (std::ranges::find(kCmStates, value) != std::end(kCmStates)) return {};
      return Fail(fmt::format(
          "{}: '{}' is not a cm_status state (connecting, established, rejected, timed_out, "
          "disconnecting, disconnected)",
          k.name, value));
    case Type::kAccess:
      if (value == "none" || parse_uint(value) || each(value, ',', [](std::string_view f) {
            return f == "none" ||
                   control::verbs::value_of(control::verbs::kAccessFlags, f).has_value();
          }))
        return {};
      return Fail(fmt::format(
          "{}: '{}' is not a list of LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC", k.name,
          value));
    case Type::kWcStatus:
      if (each(value, '|', [](std::string_view s) {
            return control::verbs::value_of(control::verbs::kWcStatus, s).has_value() ||
                   parse_uint(s).has_value();
          }))
        return {};
      return Fail(fmt::format("{}: '{}' is not a completion status (SUCCESS, WR_FLUSH_ERR, ...)",
                              k.name, value));
    case Type::kWcOpcode:
      if (each(value, '|', [](std::string_view s) {
            return control::verbs::value_of(control::verbs::kWcOpcode, s).has_value() ||
                   parse_uint(s).has_value();
          }))
        return {};
      return Fail(fmt::format("{}: '{}' is not a completion opcode (SEND, RECV, RDMA_READ, ...)",
                              k.name, value));
    case Type::kWcFlags:
      if (value.empty() || each(value, ',', [](std::string_view f) {
            return control::verbs::value_of(control::verbs::kWcFlags, f).has_value();
          }))
        return {};
      return Fail(fmt::format("{}: '{}' is not a list of GRH, WITH_IMM, IP_CSUM_OK, WITH_INV",
                              k.name, value));
    case Type::kQpn:
      if (value == conn) return {};
      return number(k24);
  }
  return {};
}

std::expected<void, std::string> check_keys(std::string_view verb, std::span<const Key> keys,
                                            const Assignment& item, std::string_view conn,
                                            const std::set<std::string>& cqs, bool check_cqs) {
  for (const auto& k : keys)
    if (k.name == item.key) return check_value(k, item.value, conn, cqs, check_cqs);
  return Fail(fmt::format("{}: unknown field '{}' ({})", verb, item.key, names(keys)));
}

// A default message of a kind the tester sends, to try CM fields on.
std::optional<CmMessage> cm_message(std::string_view kind) {
  if (kind == "REQ") return CmReq{};
  if (kind == "REP") return CmRep{};
  if (kind == "RTU") return CmRtu{};
  if (kind == "DREQ") return CmDreq{};
  if (kind == "DREP") return CmDrep{};
  if (kind == "MRA") return CmMra{};
  if (kind == "REJ") return CmRej{};
  if (kind == "LAP") return CmLap{};
  if (kind == "ClassPortInfo") return ClassPortInfo{};
  return std::nullopt;
}

// The MAD header keys a CM send takes; message fields are the CM field table's (set_cm_field).
constexpr Key kMadHeader[] = {{"tid", Type::kNumber},
                              {"class_version", Type::kNumber, 0xFF},
                              {"base_version", Type::kNumber, 0xFF},
                              {"method", Type::kNumber, 0xFF},
                              {"qkey", Type::kNumber, k32},
                              {"bth.pkey", Type::kNumber, 0xFFFF}};
std::expected<void, std::string> check_cm_field(std::string_view kind, CmMessage& m,
                                                const Assignment& item) {
  static const std::set<std::string> no_cqs;
  for (const auto& k : kMadHeader)
    if (k.name == item.key) return check_value(k, item.value, "", no_cqs, false);
  if (!set_cm_field(m, item.key, item.value)) {
    // Tell a bad value from an unknown field: the value 0 of a known field is taken.
    CmMessage probe = m;
    if (set_cm_field(probe, item.key, "0"))
      return Fail(fmt::format("{}: '{}' is not a number", item.key, item.value));
    return Fail(fmt::format("{}: unknown field '{}'", kind, item.key));
  }
  return {};
}

}  // namespace

std::expected<void, std::string> check_cm_send(std::string_view message, const Assignments& a) {
  auto m = cm_message(message);
  if (!m)
    return Fail(fmt::format(
        "the tester does not send CM message '{}' (REQ, REP, RTU, DREQ, DREP, MRA, REJ, LAP, "
        "ClassPortInfo)",
        message));
  for (const auto& item : a.items()) {
    if (item.key == "icrc") {
      if (item.value != "bad") return Fail("icrc: a CM message takes icrc=bad only");
      continue;
    }
    if (item.key == "cut") {
      auto n = parse_uint(item.value);
      if (!n || *n > 0xFFFF) return Fail("cut: a byte count up to 65535");
      continue;
    }
    if (!item.value.starts_with('@'))
      if (auto ok = check_cm_field(message, *m, item); !ok) return ok;
  }
  return {};
}

std::expected<void, std::string> check_options(std::string_view verb, const Assignments& a,
                                               const std::set<std::string>& cqs, bool check_cqs) {
  std::span<const Key> keys;
  if (verb == "connect") keys = kConnect;
  if (verb == "open") keys = kOpen;
  if (verb == "accept") keys = kAccept;
  if (verb == "status") keys = kStatus;
  if (verb == "create cq") keys = kCreateCq;
  if (verb == "post recv") keys = kPostRecv;
  if (verb == "post send") keys = kPostSend;
  if (verb == "read") keys = kRead;
  if (verb == "write") keys = kWrite;
  CmMessage req = CmReq{}, rep = CmRep{};
  for (const auto& item : a.items()) {
    const auto own = std::ranges::find(keys, item.key, &Key::name);
    if (own != keys.end()) {
      if (auto ok = check_value(*own, item.value, "", cqs, check_cqs); !ok) return ok;
      continue;
    }
    if (verb == "connect" && item.key == "psn")
      return Fail(
          "psn: with CM the target chooses the PSN the tester sends from (REP Starting PSN); "
          "use target_psn= for the REQ's, or open (control) to choose both");
    // connect: other keys set REQ fields.
    if (verb == "connect") {
      if (item.value.starts_with('@')) continue;
      if (auto ok = check_cm_field("REQ", req, item); !ok)
        return Fail(fmt::format("{} (connect takes {} and REQ fields)", ok.error(), names(keys)));
      continue;
    }
    // accept: connect.FIELD (cm_connect), req.FIELD (the target's REQ must have it), REP fields.
    if (verb == "accept") {
      if (item.key.starts_with("connect.")) {
        const Assignment field{item.key.substr(8), item.value};
        if (auto ok = check_keys("accept connect.", kCmConnect, field, "", cqs, false); !ok)
          return ok;
      } else if (item.key.starts_with("req.")) {
        Assignments want;
        want.set(item.key.substr(4), item.value);
        if (auto ok = check_expectation({"REQ", with_references_as_numbers(want)}); !ok)
          return Fail(fmt::format("{}: {}", item.key, ok.error()));
      } else if (!item.value.starts_with('@')) {
        if (auto ok = check_cm_field("REP", rep, item); !ok)
          return Fail(fmt::format("{} (accept takes {}, connect.FIELD, req.FIELD and REP fields)",
                                  ok.error(), names(keys)));
      }
      continue;
    }
    return Fail(fmt::format("{}: unknown field '{}' ({})", verb, item.key,
                            keys.empty() ? "none" : names(keys)));
  }
  return {};
}

std::expected<void, std::string> check_completion(const std::string& conn, const Assignments& a,
                                                  const std::set<std::string>& cqs,
                                                  bool check_cqs) {
  for (const auto& item : a.items())
    if (auto ok = check_keys("poll", kCompletion, item, conn, cqs, check_cqs); !ok) return ok;
  return {};
}

std::expected<void, std::string> check_qp_attributes(const std::string& conn, const Assignments& a,
                                                     bool modify) {
  static const std::set<std::string> no_cqs;
  const std::string_view verb = modify ? "modify" : "query";
  for (const auto& [key, value] : a.items()) {
    if (modify && key == "expect") {
      const bool errno_name =
          value.size() > 1 && value[0] == 'E' && std::ranges::all_of(value, [](char ch) {
            return std::isupper(static_cast<unsigned char>(ch)) ||
                   std::isdigit(static_cast<unsigned char>(ch));
          });
      if (value != "ok" && !errno_name)
        return Fail(fmt::format("expect: '{}' is not ok or an errno name (EINVAL)", value));
      continue;
    }
    // ibv_qp_attr field names (lower case): the control API's vocabulary.
    const bool lower = std::ranges::none_of(
        key, [](char ch) { return std::isupper(static_cast<unsigned char>(ch)) != 0; });
    if (!lower || !control::verbs::attr_mask_bit(key))
      return Fail(fmt::format(
          "{}: unknown QP attribute '{}' (qp_state, path_mtu, sq_psn, rq_psn, qp_access_flags, "
          "timeout, retry_cnt, rnr_retry, ...){}",
          verb, key, modify ? " or expect=" : ""));
    if (value.starts_with('@')) continue;
    if (key == "qp_state" || key == "cur_qp_state") {
      if (!control::verbs::value_of(control::verbs::kQpState, value))
        return Fail(fmt::format("{}: '{}' is not a QP state (RESET, INIT, RTR, RTS, SQD, SQE, ERR)",
                                key, value));
    } else if (key == "qp_access_flags") {
      if (auto ok = check_value({"qp_access_flags", Type::kAccess}, value, conn, no_cqs, false);
          !ok)
        return ok;
    } else if (key == "path_mig_state") {
      if (!control::verbs::value_of(control::verbs::kMigState, value))
        return Fail(fmt::format("{}: '{}' is not MIGRATED, REARM or ARMED", key, value));
    } else if (key == "ah_attr" || key == "alt_ah_attr" || key == "cap") {
      // objects: a query compares their JSON text; a case line cannot give modify one
      if (modify)
        return Fail(fmt::format("{}: an object, which modify does not set from a case line", key));
    } else if (key == "dest_qp_num") {
      if (auto ok = check_value({"dest_qp_num", Type::kQpn}, value, conn, no_cqs, false); !ok)
        return ok;
    } else if (auto ok = check_value({key, Type::kNumber, k32}, value, conn, no_cqs, false); !ok) {
      return ok;
    }
  }
  return {};
}

std::optional<std::string_view> send_op_name(std::string_view op) {
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"SEND", "SEND"},
      {"SEND_WITH_IMM", "SEND_WITH_IMM"},
      {"RDMA_WRITE", "RDMA_WRITE"},
      {"WRITE", "RDMA_WRITE"},
      {"RDMA_WRITE_WITH_IMM", "RDMA_WRITE_WITH_IMM"},
      {"WRITE_WITH_IMM", "RDMA_WRITE_WITH_IMM"},
      {"RDMA_READ", "RDMA_READ"},
      {"READ", "RDMA_READ"},
      {"ATOMIC_FETCH_AND_ADD", "ATOMIC_FETCH_AND_ADD"},
      {"FETCH_ADD", "ATOMIC_FETCH_AND_ADD"},
      {"ATOMIC_CMP_AND_SWP", "ATOMIC_CMP_AND_SWP"},
      {"CMP_SWAP", "ATOMIC_CMP_AND_SWP"}};
  for (const auto& [name, api] : kNames)
    if (name == op) return api;
  return std::nullopt;
}

std::optional<std::uint8_t> message_opcode(std::string_view op) {
  std::string_view one;
  if (op == "SEND") one = "SEND_ONLY";
  if (op == "RDMA_WRITE" || op == "WRITE") one = "RDMA_WRITE_ONLY";
  if (op == "SEND_WITH_IMM") one = "SEND_ONLY_WITH_IMMEDIATE";
  if (op == "RDMA_WRITE_WITH_IMM") one = "RDMA_WRITE_ONLY_WITH_IMMEDIATE";
  if (one.empty()) return std::nullopt;
  auto code = request_opcode(one);
  return code ? std::optional<std::uint8_t>(*code) : std::nullopt;
}

namespace {

struct ConnectionField {
  std::string_view name;
  std::uint64_t (*get)(const Connection&);
};
constexpr ConnectionField kConnectionFields[] = {
    {"req_tid", [](const Connection& c) -> std::uint64_t { return c.req_tid; }},
    {"local_comm_id", [](const Connection& c) -> std::uint64_t { return c.local_comm_id; }},
    {"remote_comm_id", [](const Connection& c) -> std::uint64_t { return c.remote_comm_id; }},
    {"local_qpn", [](const Connection& c) -> std::uint64_t { return c.local_qpn; }},
    {"remote_qpn", [](const Connection& c) -> std::uint64_t { return c.remote_qpn; }},
    {"service_id", [](const Connection& c) -> std::uint64_t { return c.service_id; }},
    {"local_psn0", [](const Connection& c) -> std::uint64_t { return c.local_psn0; }},
    {"remote_psn0", [](const Connection& c) -> std::uint64_t { return c.remote_psn0; }},
    {"pkey", [](const Connection& c) -> std::uint64_t { return c.pkey; }},
    {"pmtu", [](const Connection& c) -> std::uint64_t { return c.pmtu; }},
};

std::string connection_field_names() {
  std::string out;
  for (const auto& f : kConnectionFields)
    out += fmt::format("{}{}", out.empty() ? "" : ", ", f.name);
  return out;
}

}  // namespace

std::expected<void, std::string> check_connection_field(std::string_view field) {
  for (const auto& f : kConnectionFields)
    if (f.name == field) return {};
  return Fail(fmt::format("a connection has no '{}' ({})", field, connection_field_names()));
}

std::expected<std::uint64_t, std::string> connection_field(const Connection& c,
                                                           std::string_view field) {
  for (const auto& f : kConnectionFields)
    if (f.name == field) return f.get(c);
  return Fail(fmt::format("a connection has no '{}' ({})", field, connection_field_names()));
}

std::vector<report::FieldDiff> compare_fields(const FieldLookup& field, const Assignments& want,
                                              std::string_view prefix, const Connection* c) {
  std::vector<report::FieldDiff> diffs;
  for (const auto& [key, value] : want.items()) {
    const std::string name = fmt::format("{}.{}", prefix, key);
    const auto actual = field(key);
    if (!actual) {
      diffs.push_back({name, value, "(absent)"});
      continue;
    }
    std::string expected = value;
    if (c && (key == "qp_num" || key == "dest_qp_num") && value == c->name)
      expected = std::to_string(key == "qp_num" ? c->remote_qpn : c->local_qpn);
    // `status=A|B`: any of the values (where the spec allows more than one).
    bool matched = false;
    for (std::size_t from = 0; !matched && from <= expected.size();) {
      const auto bar = expected.find('|', from);
      const std::string one =
          expected.substr(from, bar == std::string::npos ? std::string::npos : bar - from);
      if (actual->number) {
        auto n = parse_uint(one);
        matched = n && *n == *actual->number;
      } else {
        matched = actual->text == one;
      }
      if (bar == std::string::npos) break;
      from = bar + 1;
    }
    if (!matched) diffs.push_back({name, expected, actual->text});
  }
  return diffs;
}

Assignments with_references_as_numbers(const Assignments& a) {
  Assignments out;
  for (const auto& [key, value] : a.items()) out.set(key, value.starts_with('@') ? "0" : value);
  return out;
}

}  // namespace roceconf::engine
