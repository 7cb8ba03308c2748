// Over 600 lines: the QP state machine and every modify_qp attribute check in one place.
#include "suite/reference_nic/qp.h"

#include <algorithm>
#include <array>
#include <bit>
#include <utility>

namespace roceconf::target {
namespace {

using namespace qp_attr;

namespace verbs = control::verbs;

// The names are the control API's (control/verbs_names.h); the enums here carry the same values.
constexpr QpAttrMask kAllMaskBits = (1u << verbs::kQpAttrMask.size()) - 1;
static_assert(verbs::kQpAttrMask[19].bit == kCap && verbs::kQpAttrMask.back().bit == kDestQpn);
static_assert(verbs::kQpState.size() == static_cast<std::size_t>(QpState::kErr) + 1);
constexpr std::size_t kWrOpcodeCount = verbs::kWrOpcode.size();
static_assert(kWrOpcodeCount == static_cast<std::size_t>(WrOpcode::kSendWithInv) + 1);

constexpr std::uint32_t k24Bits = 0xFFFFFF;
constexpr std::uint32_t kKnownSendFlags =
    send_flag::kFence | send_flag::kSignaled | send_flag::kSolicited | send_flag::kInline;

bool is_datagram(QpType t) {
  return t == QpType::kUd || t == QpType::kGsi;
}

// What RTR→RTS, RTS→RTS and SQD→RTS accept beside their required attributes.
QpAttrMask to_rts_optional(QpType t) {
  if (is_datagram(t)) return kCurState | kQkey;
  const QpAttrMask uc = kCurState | kAltPath | kAccessFlags | kPathMigState;
  return t == QpType::kRc ? uc | kMinRnrTimer : uc;
}

// RESET→INIT requires these; INIT→INIT may change them.
QpAttrMask init_attrs(QpType t) {
  switch (t) {
    case QpType::kGsi:
      return kPkeyIndex | kQkey;  // QP1's port is fixed
    case QpType::kUd:
      return kPkeyIndex | kPort | kQkey;
    case QpType::kRc:
    case QpType::kUc:
      return kPkeyIndex | kPort | kAccessFlags;
  }
  return 0;
}

std::string state_list(const std::vector<QpState>& states) {
  std::string out;
  for (QpState s : states) {
    if (!out.empty()) out += ", ";
    out += qp_state_name(s);
  }
  return out;
}

bool valid_state(QpState s) {
  return static_cast<std::uint8_t>(s) <= 6;
}

}  // namespace

std::string_view qp_type_name(QpType type) {
  return verbs::name_of(verbs::kQpType, static_cast<std::uint32_t>(type)).value_or("?");
}

std::optional<QpType> qp_type_from_name(std::string_view name) {
  const auto v = verbs::value_of(verbs::kQpType, name);
  return v ? std::optional<QpType>(static_cast<QpType>(*v)) : std::nullopt;
}

std::string_view qp_state_name(QpState state) {
  return verbs::name_of(verbs::kQpState, static_cast<std::uint32_t>(state)).value_or("?");
}

std::optional<QpState> qp_state_from_name(std::string_view name) {
  const auto v = verbs::value_of(verbs::kQpState, name);
  return v ? std::optional<QpState>(static_cast<QpState>(*v)) : std::nullopt;
}

std::string qp_attr_mask_names(QpAttrMask mask) {
  std::string out;
  for (const verbs::AttrName& m : verbs::kQpAttrMask) {
    if (!(mask & m.bit)) continue;
    if (!out.empty()) out += ", ";
    out += m.name;
  }
  if (const QpAttrMask unknown = mask & ~kAllMaskBits) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{:#x}", unknown);
  }
  return out;
}

std::optional<QpAttrMask> qp_attr_mask_from_name(std::string_view name) {
  return verbs::attr_mask_bit(name);
}

std::uint32_t rdma_calc_flow_label(std::uint32_t lqpn, std::uint32_t rqpn) {
  // Symmetric in the two QPNs, so both ends of a connection derive the same label.
  std::uint64_t v = std::uint64_t{lqpn} * rqpn;
  v ^= v >> 20;
  v ^= v >> 40;
  return static_cast<std::uint32_t>(v & 0xFFFFF);
}

std::uint16_t rdma_flow_label_to_udp_sport(std::uint32_t flow_label) {
  std::uint32_t lo = flow_label & 0x3FFF;
  lo ^= (flow_label & 0xFC000) >> 14;
  return static_cast<std::uint16_t>(lo | 0xC000);
}

std::optional<TransitionRule> qp_transition(QpType type, QpState from, QpState to) {
  using S = QpState;
  if (!valid_state(from) || !valid_state(to)) return std::nullopt;
  // Any state may be reset or put in error, with no other attribute.
  if (to == S::kReset || to == S::kErr) return TransitionRule{};
  const bool rc = type == QpType::kRc;
  switch (from) {
    case S::kReset:
      if (to == S::kInit) return TransitionRule{init_attrs(type), 0};
      break;
    case S::kInit:
      if (to == S::kInit) return TransitionRule{0, init_attrs(type)};
      if (to == S::kRtr) {
        if (is_datagram(type)) return TransitionRule{0, kPkeyIndex | kQkey};
        QpAttrMask req = kAv | kPathMtu | kDestQpn | kRqPsn;
        if (rc) req |= kMaxDestRdAtomic | kMinRnrTimer;  // the responder's resources
        return TransitionRule{req, kAltPath | kAccessFlags | kPkeyIndex};
      }
      break;
    case S::kRtr:
      if (to == S::kRts) {
        // RC adds what the requester needs to retransmit and to issue READ/atomics.
        const QpAttrMask req =
            rc ? kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic : kSqPsn;
        return TransitionRule{req, to_rts_optional(type)};
      }
      break;
    case S::kRts:
      if (to == S::kRts) return TransitionRule{0, to_rts_optional(type)};
      if (to == S::kSqd) return TransitionRule{0, kEnSqdAsyncNotify};
      break;
    case S::kSqd:
      if (to == S::kRts) return TransitionRule{0, to_rts_optional(type)};
      if (to == S::kSqd) {
        // A drained send queue is the one moment the path and the retry policy may change.
        if (is_datagram(type)) return TransitionRule{0, kPkeyIndex | kQkey};
        const QpAttrMask uc = kAv | kAltPath | kAccessFlags | kPkeyIndex | kPathMigState;
        if (!rc) return TransitionRule{0, uc};
        return TransitionRule{0, uc | kPort | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic |
                                     kMaxDestRdAtomic | kMinRnrTimer};
      }
      break;
    case S::kSqe:
      if (to == S::kRts) {
        if (is_datagram(type)) return TransitionRule{0, kCurState | kQkey};
        return TransitionRule{0, type == QpType::kUc ? kCurState | kAccessFlags : 0};
      }
      break;
    case S::kErr:
      break;
  }
  return std::nullopt;
}

std::vector<QpState> qp_next_states(QpType type, QpState from) {
  std::vector<QpState> out;
  for (std::uint8_t s = 0; s <= 6; ++s) {
    if (qp_transition(type, from, static_cast<QpState>(s))) out.push_back(static_cast<QpState>(s));
  }
  return out;
}

std::string_view wr_opcode_name(WrOpcode opcode) {
  return verbs::name_of(verbs::kWrOpcode, static_cast<std::uint32_t>(opcode)).value_or("UNKNOWN");
}

std::optional<WrOpcode> wr_opcode_from_name(std::string_view name) {
  const auto v = verbs::value_of(verbs::kWrOpcode, name);
  return v ? std::optional<WrOpcode>(static_cast<WrOpcode>(*v)) : std::nullopt;
}

WcOpcode wc_opcode_of(WrOpcode opcode) {
  switch (opcode) {
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm:
      return WcOpcode::kRdmaWrite;
    case WrOpcode::kSend:
    case WrOpcode::kSendWithImm:
    case WrOpcode::kSendWithInv:
      return WcOpcode::kSend;
    case WrOpcode::kRdmaRead:
      return WcOpcode::kRdmaRead;
    case WrOpcode::kAtomicCmpAndSwp:
      return WcOpcode::kCompSwap;
    case WrOpcode::kAtomicFetchAndAdd:
      return WcOpcode::kFetchAdd;
    case WrOpcode::kLocalInv:
      return WcOpcode::kLocalInv;
    case WrOpcode::kBindMw:
      return WcOpcode::kBindMw;
  }
  return WcOpcode::kSend;
}

std::uint64_t SendWr::length() const {
  if (send_flags & send_flag::kInline) return inline_data.size();
  std::uint64_t n = 0;
  for (const Sge& s : sg_list) n += s.length;
  return n;
}

// ---- Qp --------------------------------------------------------------------------------------

Qp::Qp(std::uint32_t qp_num, const QpInit& init, Cq& send_cq, Cq& recv_cq, Env env)
    : qp_num_(qp_num), init_(init), send_cq_(send_cq), recv_cq_(recv_cq), env_(env) {}

VerbsResult<void> Qp::validate_init(const QpInit& init, const QpLimits& limits) {
  if (!qp_type_from_name(qp_type_name(init.qp_type))) {
    return verbs_error(VerbsStatus::kInval, "create_qp: qp_type {} is not RC, UC, UD or GSI",
                       static_cast<int>(init.qp_type));
  }
  const QpCap& c = init.cap;
  if (c.max_send_wr > limits.max_qp_wr || c.max_recv_wr > limits.max_qp_wr) {
    return verbs_error(VerbsStatus::kInval,
                       "create_qp: max_send_wr {} / max_recv_wr {}: the limit is max_qp_wr {}",
                       c.max_send_wr, c.max_recv_wr, limits.max_qp_wr);
  }
  if (c.max_send_sge > limits.max_sge || c.max_recv_sge > limits.max_sge) {
    return verbs_error(VerbsStatus::kInval,
                       "create_qp: max_send_sge {} / max_recv_sge {}: the limit is max_sge {}",
                       c.max_send_sge, c.max_recv_sge, limits.max_sge);
  }
  if (c.max_inline_data > limits.max_inline_data) {
    return verbs_error(VerbsStatus::kInval, "create_qp: max_inline_data {} is above {}",
                       c.max_inline_data, limits.max_inline_data);
  }
  return {};
}

VerbsResult<void> Qp::modify(const QpAttr& attr, QpAttrMask mask) {
  const QpState cur = attr_.qp_state;
  if (mask & ~kAllMaskBits) {
    return verbs_error(VerbsStatus::kInval, "modify_qp: unknown attribute mask bits {:#x}",
                       mask & ~kAllMaskBits);
  }
  if ((mask & kState) && !valid_state(attr.qp_state)) {
    return verbs_error(VerbsStatus::kInval, "modify_qp: qp_state {} is not a QP state",
                       static_cast<int>(attr.qp_state));
  }
  const QpState next = (mask & kState) ? attr.qp_state : cur;
  auto rule = qp_transition(init_.qp_type, cur, next);
  if (!rule && env_.accept_reset_to_rts && cur == QpState::kReset && next == QpState::kRts)
    rule = TransitionRule{0, kAllMaskBits & ~kState};
  if (!rule) {
    return verbs_error(VerbsStatus::kInval,
                       "modify_qp: {}→{} is not a legal transition (legal from {}: {})",
                       qp_state_name(cur), qp_state_name(next), qp_state_name(cur),
                       state_list(qp_next_states(init_.qp_type, cur)));
  }
  if (const QpAttrMask missing = rule->required & ~mask) {
    return verbs_error(VerbsStatus::kInval,
                       "modify_qp: {}→{} ({}) is missing required attribute{} {} (required: {})",
                       qp_state_name(cur), qp_state_name(next), qp_type_name(init_.qp_type),
                       std::popcount(missing) > 1 ? "s" : "", qp_attr_mask_names(missing),
                       qp_attr_mask_names(rule->required));
  }
  if (const QpAttrMask extra = mask & ~(rule->required | rule->optional | kState)) {
    const QpAttrMask accepted = rule->required | rule->optional;
    return verbs_error(VerbsStatus::kInval,
                       "modify_qp: {}→{} ({}) does not accept attribute{} {} (accepted: {})",
                       qp_state_name(cur), qp_state_name(next), qp_type_name(init_.qp_type),
                       std::popcount(extra) > 1 ? "s" : "", qp_attr_mask_names(extra),
                       accepted ? qp_attr_mask_names(accepted) : "none");
  }
  if (auto ok = check_values(attr, mask); !ok) return ok;

  if (next == QpState::kReset) {
    reset();
    return {};
  }
  apply(attr, mask);
  attr_.qp_state = next;
  if (next == QpState::kErr && cur != QpState::kErr) {
    flush_send_queue();
    flush_recv_queue();
  } else if (next == QpState::kSqd && cur == QpState::kRts) {
    attr_.sq_draining = true;
    maybe_drained();
  } else if (next == QpState::kRts) {
    attr_.sq_draining = false;
  }
  return {};
}

VerbsResult<void> Qp::check_values(const QpAttr& a, QpAttrMask mask) const {
  const Port* port = env_.port;
  const QpLimits* lim = env_.limits;
  if ((mask & kCurState) && a.cur_qp_state != attr_.qp_state) {
    return verbs_error(VerbsStatus::kInval, "modify_qp: cur_qp_state is {} but the QP is in {}",
                       qp_state_name(a.cur_qp_state), qp_state_name(attr_.qp_state));
  }
  if (mask & kAltPath) {
    // As the Linux core: alternate paths and APM exist on InfiniBand only.
    return verbs_error(VerbsStatus::kInval, "modify_qp: ALT_PATH: RoCE has no alternate paths");
  }
  if ((mask & kPkeyIndex) && port && a.pkey_index >= port->pkey_table.size()) {
    return verbs_error(VerbsStatus::kInval,
                       "modify_qp: pkey_index {} is outside the P_Key table ({} entries)",
                       a.pkey_index, port->pkey_table.size());
  }
  if ((mask & kPort) && port && a.port_num != port->attr.port_num) {
    return verbs_error(VerbsStatus::kInval, "modify_qp: port_num {}: the device has port {} only",
                       a.port_num, port->attr.port_num);
  }
  if ((mask & kAccessFlags) && (a.qp_access_flags & ~access::kAll)) {
    return verbs_error(VerbsStatus::kInval, "modify_qp: unknown qp_access_flags {:#x}",
                       a.qp_access_flags & ~access::kAll);
  }
  if (mask & kAv) {
    const AddressVector& av = a.ah_attr;
    if (port && !port->gid_table.at(av.sgid_index)) {
      return verbs_error(VerbsStatus::kInval,
                         "modify_qp: ah_attr.sgid_index {} names no GID in the GID table",
                         av.sgid_index);
    }
    if (port && av.port_num != port->attr.port_num) {
      return verbs_error(VerbsStatus::kInval,
                         "modify_qp: ah_attr.port_num {}: the device has port {} only", av.port_num,
                         port->attr.port_num);
    }
    if (av.flow_label > 0xFFFFF) {
      return verbs_error(VerbsStatus::kInval,
                         "modify_qp: ah_attr.flow_label {:#x} is above 20 bits", av.flow_label);
    }
  }
  if (mask & kPathMtu) {
    const auto v = static_cast<std::uint8_t>(a.path_mtu);
    if (!path_mtu_valid(v)) {
      return verbs_error(VerbsStatus::kInval,
                         "modify_qp: path_mtu {} is not a path MTU (1=256 2=512 3=1024 4=2048 "
                         "5=4096)",
                         v);
    }
    if (port && v > static_cast<std::uint8_t>(port->attr.max_mtu)) {
      return verbs_error(VerbsStatus::kInval, "modify_qp: path_mtu {} is above the port's {}",
                         target::path_mtu_bytes(a.path_mtu),
                         target::path_mtu_bytes(port->attr.max_mtu));
    }
  }
  const auto at_most = [](QpAttrMask m, QpAttrMask bit, unsigned v, unsigned max,
                          std::string_view name) -> VerbsResult<void> {
    if ((m & bit) && v > max) {
      return verbs_error(VerbsStatus::kInval, "modify_qp: {} {} is above {}", name, v, max);
    }
    return {};
  };
  for (auto r : {at_most(mask, kTimeout, a.timeout, 31, "timeout"),
                 at_most(mask, kRetryCnt, a.retry_cnt, 7, "retry_cnt"),
                 at_most(mask, kRnrRetry, a.rnr_retry, 7, "rnr_retry"),
                 at_most(mask, kMinRnrTimer, a.min_rnr_timer, 31, "min_rnr_timer"),
                 at_most(mask, kRqPsn, a.rq_psn, k24Bits, "rq_psn"),
                 at_most(mask, kSqPsn, a.sq_psn, k24Bits, "sq_psn"),
                 at_most(mask, kDestQpn, a.dest_qp_num, k24Bits, "dest_qp_num"),
                 at_most(mask, kPathMigState, static_cast<unsigned>(a.path_mig_state), 2,
                         "path_mig_state")}) {
    if (!r) return r;
  }
  if (lim) {
    if ((mask & kMaxQpRdAtomic) && a.max_rd_atomic > lim->max_qp_init_rd_atom) {
      return verbs_error(VerbsStatus::kInval,
                         "modify_qp: max_rd_atomic {} is above max_qp_init_rd_atom {}",
                         a.max_rd_atomic, lim->max_qp_init_rd_atom);
    }
    if ((mask & kMaxDestRdAtomic) && a.max_dest_rd_atomic > lim->max_qp_rd_atom) {
      return verbs_error(VerbsStatus::kInval,
                         "modify_qp: max_dest_rd_atomic {} is above max_qp_rd_atom {}",
                         a.max_dest_rd_atomic, lim->max_qp_rd_atom);
    }
  }
  return {};
}

void Qp::apply(const QpAttr& a, QpAttrMask mask) {
  if (mask & kEnSqdAsyncNotify) attr_.en_sqd_async_notify = a.en_sqd_async_notify;
  if (mask & kAccessFlags) attr_.qp_access_flags = a.qp_access_flags;
  if (mask & kPkeyIndex) attr_.pkey_index = a.pkey_index;
  if (mask & kPort) attr_.port_num = a.port_num;
  if (mask & kQkey) attr_.qkey = a.qkey;
  if (mask & kPathMtu) attr_.path_mtu = a.path_mtu;
  if (mask & kTimeout) attr_.timeout = a.timeout;
  if (mask & kRetryCnt) attr_.retry_cnt = a.retry_cnt;
  if (mask & kRnrRetry) attr_.rnr_retry = a.rnr_retry;
  if (mask & kRqPsn) attr_.rq_psn = a.rq_psn;
  if (mask & kMaxQpRdAtomic) attr_.max_rd_atomic = a.max_rd_atomic;
  if (mask & kMinRnrTimer) attr_.min_rnr_timer = a.min_rnr_timer;
  if (mask & kSqPsn) attr_.sq_psn = a.sq_psn;
  if (mask & kMaxDestRdAtomic) attr_.max_dest_rd_atomic = a.max_dest_rd_atomic;
  if (mask & kPathMigState) attr_.path_mig_state = a.path_mig_state;
  if (mask & kDestQpn) attr_.dest_qp_num = a.dest_qp_num;
  if (mask & kAv) {
    attr_.ah_attr = a.ah_attr;
    // Fix the UDP source port now, so every packet of the connection uses the same one.
    if (attr_.ah_attr.udp_sport == 0) {
      const std::uint32_t fl = attr_.ah_attr.flow_label
                                   ? attr_.ah_attr.flow_label
                                   : rdma_calc_flow_label(qp_num_, attr_.dest_qp_num);
      attr_.ah_attr.udp_sport = rdma_flow_label_to_udp_sport(fl);
    }
  }
}

QpAttr Qp::query() const {
  QpAttr q = attr_;
  q.cur_qp_state = q.qp_state;
  q.cap = init_.cap;
  return q;
}

std::optional<std::uint16_t> Qp::pkey() const {
  if (!env_.port) return std::nullopt;
  return env_.port->pkey_table.at(attr_.pkey_index);
}

bool Qp::can_receive() const {
  const QpState s = attr_.qp_state;
  return s == QpState::kRtr || s == QpState::kRts || s == QpState::kSqd || s == QpState::kSqe;
}

VerbsResult<void> Qp::check_send_wr(const SendWr& wr) const {
  const QpType t = init_.qp_type;
  const auto op = static_cast<std::size_t>(wr.opcode);
  if (op >= kWrOpcodeCount) {
    return verbs_error(VerbsStatus::kInval, "opcode {} is not a send opcode", op);
  }
  const bool send = wr.opcode == WrOpcode::kSend || wr.opcode == WrOpcode::kSendWithImm;
  const bool write = wr.opcode == WrOpcode::kRdmaWrite || wr.opcode == WrOpcode::kRdmaWriteWithImm;
  const bool atomic =
      wr.opcode == WrOpcode::kAtomicCmpAndSwp || wr.opcode == WrOpcode::kAtomicFetchAndAdd;
  // UD carries SENDs only; UC adds WRITEs; READ, atomics and invalidate are RC only (the
  // opcode table, spec-facts §3.2). Binds and local invalidation need a connected QP.
  const bool local = is_local_op(wr.opcode);
  const bool allowed = t == QpType::kRc || send || (t == QpType::kUc && (write || local));
  if (!allowed) {
    return verbs_error(VerbsStatus::kInval, "{} is not available on {} QPs",
                       wr_opcode_name(wr.opcode), qp_type_name(t));
  }
  if (wr.send_flags & ~kKnownSendFlags) {
    return verbs_error(VerbsStatus::kInval, "unknown send_flags {:#x}",
                       wr.send_flags & ~kKnownSendFlags);
  }
  if (wr.sg_list.size() > init_.cap.max_send_sge) {
    return verbs_error(VerbsStatus::kInval, "{} SGEs, max_send_sge is {}", wr.sg_list.size(),
                       init_.cap.max_send_sge);
  }
  if (wr.send_flags & send_flag::kInline) {
    if (!send && !write && wr.opcode != WrOpcode::kSendWithInv) {
      return verbs_error(VerbsStatus::kInval, "INLINE applies to SEND and RDMA_WRITE only");
    }
    if (wr.inline_data.size() > init_.cap.max_inline_data) {
      return verbs_error(VerbsStatus::kInval, "{} inline bytes, max_inline_data is {}",
                         wr.inline_data.size(), init_.cap.max_inline_data);
    }
  }
  if (atomic) {
    if (wr.length() != 8) {
      return verbs_error(VerbsStatus::kInval, "{} needs 8 bytes of local buffer, not {}",
                         wr_opcode_name(wr.opcode), wr.length());
    }
    if (wr.atomic.remote_addr % 8 != 0) {
      return verbs_error(VerbsStatus::kInval, "atomic remote_addr {:#x} is not 8-byte aligned",
                         wr.atomic.remote_addr);
    }
  }
  if (is_datagram(t)) {
    if (wr.ud.remote_qpn > k24Bits) {
      return verbs_error(VerbsStatus::kInval, "ud.remote_qpn {:#x} is above 24 bits",
                         wr.ud.remote_qpn);
    }
    if (env_.port && !env_.port->gid_table.at(wr.ud.ah.sgid_index)) {
      return verbs_error(VerbsStatus::kInval, "ud.ah.sgid_index {} names no GID",
                         wr.ud.ah.sgid_index);
    }
  }
  return {};
}

PostResult Qp::post_send(std::span<const SendWr> wrs) {
  const QpState s = attr_.qp_state;
  if ((s == QpState::kReset || s == QpState::kInit || s == QpState::kRtr) &&
      !env_.accept_post_before_ready) {
    return std::unexpected(PostError{
        0, VerbsError{VerbsStatus::kInval,
                      fmt::format("post_send: QP {:#x} is in {}; send WRs need RTS (or SQD, SQE, "
                                  "ERR)",
                                  qp_num_, qp_state_name(s))}});
  }
  const std::uint64_t doorbell = next_doorbell_++;
  for (std::size_t i = 0; i < wrs.size(); ++i) {
    const SendWr& wr = wrs[i];
    auto fail = [&](VerbsStatus st, std::string why) {
      return std::unexpected(PostError{
          i, VerbsError{st, fmt::format("post_send: WR {} (wr_id {:#x}): {}", i, wr.wr_id, why)}});
    };
    if (auto ok = check_send_wr(wr); !ok) return fail(ok.error().status, ok.error().message);
    SendWqe wqe{wr, next_seq_++, doorbell, false};
    // SQE and ERR accept WRs and flush them at once (IBA: they complete in error).
    if (s == QpState::kErr || s == QpState::kSqe) {
      flush_send(wqe);
      continue;
    }
    if (sq_.size() >= init_.cap.max_send_wr) {
      return fail(VerbsStatus::kNoMem,
                  fmt::format("the send queue is full (max_send_wr {})", init_.cap.max_send_wr));
    }
    sq_.push_back(std::move(wqe));
  }
  return {};
}

PostResult Qp::post_recv(std::span<const RecvWr> wrs) {
  const QpState s = attr_.qp_state;
  if (s == QpState::kReset && !env_.accept_post_before_ready) {
    return std::unexpected(PostError{
        0, VerbsError{VerbsStatus::kInval,
                      fmt::format("post_recv: QP {:#x} is in RESET; receive WRs need INIT or later",
                                  qp_num_)}});
  }
  const std::uint64_t doorbell = next_doorbell_++;
  for (std::size_t i = 0; i < wrs.size(); ++i) {
    const RecvWr& wr = wrs[i];
    auto fail = [&](VerbsStatus st, std::string why) {
      return std::unexpected(PostError{
          i, VerbsError{st, fmt::format("post_recv: WR {} (wr_id {:#x}): {}", i, wr.wr_id, why)}});
    };
    if (wr.sg_list.size() > init_.cap.max_recv_sge) {
      return fail(VerbsStatus::kInval, fmt::format("{} SGEs, max_recv_sge is {}", wr.sg_list.size(),
                                                   init_.cap.max_recv_sge));
    }
    RecvWqe wqe{wr, next_seq_++, doorbell};
    if (s == QpState::kErr) {
      flush_recv(wqe);
      continue;
    }
    if (rq_.size() >= init_.cap.max_recv_wr) {
      return fail(VerbsStatus::kNoMem,
                  fmt::format("the receive queue is full (max_recv_wr {})", init_.cap.max_recv_wr));
    }
    rq_.push_back(std::move(wqe));
  }
  return {};
}

std::optional<RecvWqe> Qp::take_recv() {
  if (rq_.empty()) return std::nullopt;
  RecvWqe w = std::move(rq_.front());
  rq_.pop_front();
  return w;
}

std::optional<SendWqe> Qp::complete_send(WcStatus status, std::uint32_t byte_len,
                                         std::uint32_t vendor_err) {
  if (sq_.empty()) return std::nullopt;
  SendWqe w = std::move(sq_.front());
  sq_.pop_front();
  // Unsignaled WQEs complete silently; an error always produces a CQE (as rxe and verbs do).
  const bool signaled =
      init_.sq_sig_all || (w.wr.send_flags & send_flag::kSignaled) || status != WcStatus::kSuccess;
  if (signaled) {
    Cqe c;
    c.wr_id = w.wr.wr_id;
    c.status = status;
    c.opcode = wc_opcode_of(w.wr.opcode);
    c.vendor_err = vendor_err;
    c.byte_len = byte_len;
    c.qp_num = qp_num_;
    // A CQ overrun is a requester class F error (C9-218): the QP goes to Error.
    if (send_cq_.push(c) == Cq::PushResult::kOverflow && !env_.overflow_keeps_qp) {
      enter_error(AsyncEventType::kQpFatal);
      return w;
    }
  }
  maybe_drained();
  return w;
}

void Qp::complete_recv(const RecvWqe& wqe, Cqe cqe, bool solicited) {
  cqe.wr_id = wqe.wr.wr_id;
  cqe.qp_num = qp_num_;
  recv_cq_.push(cqe, solicited);
}

void Qp::enter_error(std::optional<AsyncEventType> event) {
  if (attr_.qp_state != QpState::kErr) {
    attr_.qp_state = QpState::kErr;
    attr_.sq_draining = false;
    flush_send_queue();
    flush_recv_queue();
  }
  if (event) raise(*event);
}

void Qp::enter_sqe() {
  // RC has no SQE: a send error there breaks the connection.
  if (init_.qp_type == QpType::kRc) return enter_error(AsyncEventType::kQpFatal);
  if (attr_.qp_state == QpState::kErr || attr_.qp_state == QpState::kReset) return;
  attr_.qp_state = QpState::kSqe;
  attr_.sq_draining = false;
  flush_send_queue();
}

void Qp::raise(AsyncEventType type) {
  if (env_.events) env_.events->push(AsyncEvent{type, qp_num_});
}

void Qp::flush_send(const SendWqe& wqe) {
  Cqe c;
  c.wr_id = wqe.wr.wr_id;
  c.status = WcStatus::kWrFlushErr;
  c.opcode = wc_opcode_of(wqe.wr.opcode);
  c.qp_num = qp_num_;
  send_cq_.push(c);
}

void Qp::flush_recv(const RecvWqe& wqe) {
  Cqe c;
  c.wr_id = wqe.wr.wr_id;
  c.status = WcStatus::kWrFlushErr;
  c.opcode = WcOpcode::kRecv;
  c.qp_num = qp_num_;
  recv_cq_.push(c, true);
}

void Qp::flush_send_queue() {
  // In post order, each WR its own completion.
  for (const SendWqe& w : sq_) flush_send(w);
  sq_.clear();
}

void Qp::flush_recv_queue() {
  for (const RecvWqe& w : rq_) flush_recv(w);
  rq_.clear();
}

void Qp::maybe_drained() {
  if (attr_.qp_state != QpState::kSqd || !attr_.sq_draining) return;
  if (std::any_of(sq_.begin(), sq_.end(), [](const SendWqe& w) { return w.started; })) return;
  attr_.sq_draining = false;
  if (attr_.en_sqd_async_notify) raise(AsyncEventType::kSqDrained);
}

void Qp::reset() {
  // RESET empties both queues without completions and drops this QP's CQEs (IBA: a reset QP
  // holds no work; mlx5 cleans the CQs the same way).
  sq_.clear();
  rq_.clear();
  send_cq_.purge_qp(qp_num_);
  if (&recv_cq_ != &send_cq_) recv_cq_.purge_qp(qp_num_);
  attr_ = QpAttr{};
}

}  // namespace roceconf::target
