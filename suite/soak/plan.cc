#include "suite/soak/plan.h"

#include <algorithm>
#include <array>

namespace roceconf::soak {

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kInit:
      return "INIT";
    case OpKind::kInitWords:
      return "INIT_WORDS";
    case OpKind::kVerify:
      return "VERIFY";
    case OpKind::kSend:
      return "SEND";
    case OpKind::kSendImm:
      return "SEND_IMM";
    case OpKind::kWrite:
      return "WRITE";
    case OpKind::kWriteImm:
      return "WRITE_IMM";
    case OpKind::kRead:
      return "READ";
    case OpKind::kFetchAdd:
      return "FETCH_ADD";
    case OpKind::kCmpSwap:
      return "CMP_SWAP";
    case OpKind::kDupLast:
      return "DUP_LAST";
    case OpKind::kDupOld:
      return "DUP_OLD";
    case OpKind::kGap:
      return "GAP";
    case OpKind::kTargetSend:
      return "TARGET_SEND";
    case OpKind::kTargetWrite:
      return "TARGET_WRITE";
    case OpKind::kTargetRead:
      return "TARGET_READ";
  }
  return "?";
}

bool is_target_op(OpKind kind) {
  return kind == OpKind::kTargetSend || kind == OpKind::kTargetWrite || kind == OpKind::kTargetRead;
}

namespace {

std::uint32_t uniform(std::mt19937_64& r, std::uint32_t lo, std::uint32_t hi) {
  return std::uniform_int_distribution<std::uint32_t>(lo, hi)(r);
}

// A length that often sits on a path MTU boundary (one byte either side of one, two or three
// MTUs), sometimes anywhere up to four MTUs, rarely zero; never above `max`.
std::uint32_t length(std::mt19937_64& r, std::uint32_t pmtu, std::uint32_t max, bool zero_ok) {
  if (zero_ok && uniform(r, 0, 19) == 0) return 0;
  std::uint32_t n = 0;
  if (uniform(r, 0, 2) == 0) {
    n = uniform(r, 1, 4 * pmtu);
  } else {
    const std::uint32_t k = uniform(r, 1, 3);
    n = k * pmtu + uniform(r, 0, 2) - 1;  // k MTUs, one less or one more
    if (n == 0) n = 1;
  }
  return std::clamp<std::uint32_t>(n, zero_ok ? 0 : 1, max);
}

}  // namespace

std::vector<Op> generate(const Layout& layout, const Mix& mix, std::uint32_t batches,
                         std::mt19937_64& r) {
  std::vector<Op> ops;
  const auto conns = static_cast<std::uint32_t>(layout.pmtus.size());
  if (conns == 0) return ops;
  const std::uint32_t data = layout.data_area();
  // Per connection: requests sent so far, and how many of them were single-packet SEND/WRITEs
  // (what kDupOld can repeat).
  std::vector<std::uint32_t> requests(conns, 0), singles(conns, 0);
  std::vector<bool> last_gap(conns, false);
  std::uint32_t batch = 0;
  for (std::uint8_t c = 0; c < conns; ++c) {
    ops.push_back(
        {.batch = batch, .conn = c, .kind = OpKind::kInit, .fill = static_cast<std::uint8_t>(r())});
    ops.push_back({.batch = batch + 1, .conn = c, .kind = OpKind::kInitWords});
  }
  ++batch;
  for (std::uint32_t b = 0; b < batches; ++b) {
    ++batch;
    // A random non-empty subset of the connections, each with one tester request.
    std::vector<std::uint8_t> chosen;
    for (std::uint8_t c = 0; c < conns; ++c)
      if (uniform(r, 0, 1) == 1) chosen.push_back(c);
    if (chosen.empty()) chosen.push_back(static_cast<std::uint8_t>(uniform(r, 0, conns - 1)));
    for (const std::uint8_t c : chosen) {
      const std::uint32_t pmtu = layout.pmtus[c];
      Op op{.batch = batch, .conn = c};
      op.fill = static_cast<std::uint8_t>(r());
      // Weights: data operations mostly, a fault now and then.
      const std::uint32_t roll = uniform(r, 0, 99);
      if (mix.faults && roll < 6 && requests[c] > 0) {
        op.kind = OpKind::kDupLast;
      } else if (mix.faults && roll < 10 && singles[c] > 1) {
        op.kind = OpKind::kDupOld;
        op.back = static_cast<std::uint8_t>(uniform(r, 1, 3));
      } else if (mix.faults && roll < 13 && !last_gap[c]) {
        op.kind = OpKind::kGap;
        op.gap = static_cast<std::uint8_t>(uniform(r, 1, 3));
      } else {
        static constexpr std::array kData{OpKind::kSend,   OpKind::kSend,  OpKind::kSendImm,
                                          OpKind::kWrite,  OpKind::kWrite, OpKind::kWriteImm,
                                          OpKind::kRead,   OpKind::kRead,  OpKind::kFetchAdd,
                                          OpKind::kCmpSwap};
        op.kind = kData[uniform(r, 0, kData.size() - 1)];
      }
      switch (op.kind) {
        case OpKind::kSend:
        case OpKind::kSendImm:
          op.len = length(r, pmtu, layout.recv_len, true);
          op.imm = static_cast<std::uint32_t>(r());
          break;
        case OpKind::kWrite:
        case OpKind::kWriteImm:
          op.len = length(r, pmtu, std::min<std::uint32_t>(data, 16384), true);
          op.offset = uniform(r, 0, data - op.len);
          op.imm = static_cast<std::uint32_t>(r());
          break;
        case OpKind::kRead:
          op.len = length(r, pmtu, std::min<std::uint32_t>(data, 16384), false);
          op.offset = uniform(r, 0, data - op.len);
          break;
        case OpKind::kFetchAdd:
          op.offset = uniform(r, 0, layout.atomic_words - 1);
          op.operand = uniform(r, 0, 2) == 0 ? r() : uniform(r, 1, 1000);
          break;
        case OpKind::kCmpSwap:
          op.offset = uniform(r, 0, layout.atomic_words - 1);
          op.compare_hits = uniform(r, 0, 2) != 0;
          op.operand = r();
          op.swap = r();
          break;
        default:
          break;
      }
      last_gap[c] = op.kind == OpKind::kGap;
      if (op.kind != OpKind::kGap && op.kind != OpKind::kDupLast && op.kind != OpKind::kDupOld) {
        ++requests[c];
        if ((op.kind == OpKind::kSend || op.kind == OpKind::kWrite) && op.len <= pmtu) ++singles[c];
      }
      ops.push_back(op);
    }
    // The target as requester, now and then, on one connection.
    if (layout.control && mix.target_ops && uniform(r, 0, 3) == 0) {
      const auto c = static_cast<std::uint8_t>(uniform(r, 0, conns - 1));
      const std::uint32_t pmtu = layout.pmtus[c];
      static constexpr std::array kTarget{OpKind::kTargetSend, OpKind::kTargetWrite,
                                          OpKind::kTargetRead};
      Op op{.batch = batch, .conn = c, .kind = kTarget[uniform(r, 0, kTarget.size() - 1)]};
      op.count = static_cast<std::uint8_t>(uniform(r, 1, 3));
      op.fill = static_cast<std::uint8_t>(r());
      op.len = length(r, pmtu, std::min<std::uint32_t>(data / op.count, 8192), false);
      op.offset = uniform(r, 0, data - op.len * op.count);
      ops.push_back(op);
    }
  }
  ++batch;
  for (std::uint8_t c = 0; c < conns; ++c)
    ops.push_back({.batch = batch, .conn = c, .kind = OpKind::kVerify});
  return ops;
}

}  // namespace roceconf::soak
