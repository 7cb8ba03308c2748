#include "suite/reference_nic/segmentation.h"

#include <algorithm>

#include "dissector/opcode.h"

namespace roceconf::target {

std::uint32_t packet_count(std::uint64_t length, std::uint32_t pmtu) {
  if (length == 0) return 1;
  return static_cast<std::uint32_t>((length + pmtu - 1) / pmtu);
}

std::uint8_t segment_opcode(WrOpcode opcode, std::uint32_t index, std::uint32_t count, bool uc) {
  namespace op = roceconf::opcode;
  const bool only = count == 1;
  const bool first = index == 0;
  const bool last = index + 1 == count;
  std::uint8_t code = 0;
  switch (opcode) {
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm: {
      const bool imm = opcode == WrOpcode::kRdmaWriteWithImm;
      if (only) {
        code = imm ? op::kRcWriteOnlyImm : op::kRcWriteOnly;
      } else if (first) {
        code = op::kRcWriteFirst;
      } else if (last) {
        code = imm ? op::kRcWriteLastImm : op::kRcWriteLast;
      } else {
        code = op::kRcWriteMiddle;
      }
      break;
    }
    default: {
      // SEND, SEND_WITH_IMM, SEND_WITH_INV: only the last packet says which.
      const bool imm = opcode == WrOpcode::kSendWithImm;
      const bool inv = opcode == WrOpcode::kSendWithInv;
      if (only) {
        code = imm ? op::kRcSendOnlyImm : inv ? op::kRcSendOnlyInv : op::kRcSendOnly;
      } else if (first) {
        code = op::kRcSendFirst;
      } else if (last) {
        code = imm ? op::kRcSendLastImm : inv ? op::kRcSendLastInv : op::kRcSendLast;
      } else {
        code = op::kRcSendMiddle;
      }
      break;
    }
  }
  return uc ? static_cast<std::uint8_t>(code | op::kUcBase) : code;
}

std::vector<Sge> sge_slice(std::span<const Sge> sg_list, std::uint64_t offset,
                           std::uint64_t length) {
  std::vector<Sge> out;
  for (const Sge& sge : sg_list) {
    if (length == 0) break;
    if (offset >= sge.length) {
      offset -= sge.length;
      continue;
    }
    const std::uint64_t n = std::min<std::uint64_t>(sge.length - offset, length);
    out.push_back(Sge{sge.addr + offset, static_cast<std::uint32_t>(n), sge.lkey});
    length -= n;
    offset = 0;
  }
  return out;
}

}  // namespace roceconf::target
