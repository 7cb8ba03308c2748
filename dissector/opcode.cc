#include "dissector/opcode.h"

#include <array>

namespace roceconf {

namespace {

struct OpDef {
  std::string_view op_name;
  OpKind kind;
  Position position;
  PayloadRule payload;
  std::uint16_t headers;  // for RC; other services derive theirs
  bool is_request;
};

using enum OpKind;
using enum Position;
using enum PayloadRule;

// The 32 operations of the RC/UC/RD/XRC families, indexed by the low five opcode bits.
constexpr std::array<OpDef, 32> kOps = {{
    {"SEND_FIRST", kSend, kFirst, kExactPmtu, 0, true},
    {"SEND_MIDDLE", kSend, kMiddle, kExactPmtu, 0, true},
    {"SEND_LAST", kSend, kLast, kUpToPmtu1, 0, true},
    {"SEND_LAST_WITH_IMMEDIATE", kSend, kLast, kUpToPmtu1, hdr::kImmDt, true},
    {"SEND_ONLY", kSend, kOnly, kUpToPmtu0, 0, true},
    {"SEND_ONLY_WITH_IMMEDIATE", kSend, kOnly, kUpToPmtu0, hdr::kImmDt, true},
    {"RDMA_WRITE_FIRST", kWrite, kFirst, kExactPmtu, hdr::kReth, true},
    {"RDMA_WRITE_MIDDLE", kWrite, kMiddle, kExactPmtu, 0, true},
    {"RDMA_WRITE_LAST", kWrite, kLast, kUpToPmtu1, 0, true},
    {"RDMA_WRITE_LAST_WITH_IMMEDIATE", kWrite, kLast, kUpToPmtu1, hdr::kImmDt, true},
    {"RDMA_WRITE_ONLY", kWrite, kOnly, kUpToPmtu0, hdr::kReth, true},
    {"RDMA_WRITE_ONLY_WITH_IMMEDIATE", kWrite, kOnly, kUpToPmtu0, hdr::kReth | hdr::kImmDt, true},
    {"RDMA_READ_REQUEST", kReadRequest, kOnly, kNoPayload, hdr::kReth, true},
    {"RDMA_READ_RESPONSE_FIRST", kReadResponse, kFirst, kExactPmtu, hdr::kAeth, false},
    {"RDMA_READ_RESPONSE_MIDDLE", kReadResponse, kMiddle, kExactPmtu, 0, false},
    {"RDMA_READ_RESPONSE_LAST", kReadResponse, kLast, kUpToPmtu1, hdr::kAeth, false},
    {"RDMA_READ_RESPONSE_ONLY", kReadResponse, kOnly, kUpToPmtu0, hdr::kAeth, false},
    {"ACKNOWLEDGE", kAck, kOnly, kNoPayload, hdr::kAeth, false},
    {"ATOMIC_ACKNOWLEDGE", kAtomicAck, kOnly, kNoPayload, hdr::kAeth | hdr::kAtomicAckEth, false},
    {"COMPARE_SWAP", kCompareSwap, kOnly, kNoPayload, hdr::kAtomicEth, true},
    {"FETCH_ADD", kFetchAdd, kOnly, kNoPayload, hdr::kAtomicEth, true},
    {"RESYNC", kResync, kOnly, kNoPayload, 0, true},
    {"SEND_LAST_WITH_INVALIDATE", kSend, kLast, kUpToPmtu1, hdr::kIeth, true},
    {"SEND_ONLY_WITH_INVALIDATE", kSend, kOnly, kUpToPmtu0, hdr::kIeth, true},
    {"", kOther, kNone, kUnknown, 0, false},
    {"", kOther, kNone, kUnknown, 0, false},
    {"", kOther, kNone, kUnknown, 0, false},
    {"", kOther, kNone, kUnknown, 0, false},
    {"FLUSH", kFlush, kOnly, kNoPayload, hdr::kFeth | hdr::kReth, true},
    {"ATOMIC_WRITE", kAtomicWrite, kOnly, kExactly8, hdr::kReth, true},
    {"", kOther, kNone, kUnknown, 0, false},
    {"", kOther, kNone, kUnknown, 0, false},
}};

// Full names, built once at compile time: "<SERVICE>_<OP>".
template <std::size_t N>
struct Name {
  std::array<char, N> text{};
  std::size_t size = 0;
  constexpr void append(std::string_view s) {
    for (char c : s) text[size++] = c;
  }
};

constexpr std::string_view kPrefix[] = {"RC_", "UC_", "RD_", "UD_", "", "XRC_", "", ""};

constexpr bool uc_has(std::uint8_t low) {
  // UC carries SEND and RDMA WRITE only.
  return low <= 0x0B && low != 0x0C;
}
constexpr bool rd_has(std::uint8_t low) {
  return low <= 0x15 || low == 0x1C || low == 0x1D;
}
constexpr bool rc_has(std::uint8_t low) {
  return !kOps[low].op_name.empty() && low != 0x15;
}

struct Table {
  std::array<OpcodeInfo, 256> info{};
  std::array<Name<48>, 256> names{};
};

constexpr Table build() {
  Table t;
  for (int op = 0; op < 256; ++op) {
    const auto low = static_cast<std::uint8_t>(op & 0x1F);
    const int family = op >> 5;
    OpcodeInfo& info = t.info[op];
    Name<48>& name = t.names[op];
    info = OpcodeInfo{"", "", Service::kReserved, kOther, kNone, kUnknown, 0, false, false};
    const OpDef& d = kOps[low];
    bool valid = false;
    Service service = Service::kReserved;
    std::uint16_t headers = d.headers;
    switch (family) {
      case 0:
        service = Service::kRc;
        valid = rc_has(low);
        break;
      case 1:
        service = Service::kUc;
        valid = uc_has(low);
        break;
      case 2:
        service = Service::kRd;
        valid = rd_has(low);
        // Every RD packet opens with RDETH; requests add DETH (IBA 9.3.3).
        headers =
            static_cast<std::uint16_t>(headers | hdr::kRdeth | (d.is_request ? hdr::kDeth : 0));
        break;
      case 3:
        service = Service::kUd;
        valid = low == 0x04 || low == 0x05;
        headers = static_cast<std::uint16_t>(headers | hdr::kDeth);
        break;
      case 4:
        service = Service::kCnp;
        // 0x81 is RoCEv2's CNP (Annex A17), 0x80 native InfiniBand's (Annex A10).
        valid = op == opcode::kCnp || op == opcode::kIbCnp;
        break;
      case 5:
        service = Service::kXrc;
        valid = rc_has(low);
        if (d.is_request) headers = static_cast<std::uint16_t>(headers | hdr::kXrceth);
        break;
      case 7:
        service = Service::kManufacturer;
        valid = true;
        break;
      default:
        break;
    }
    if (service == Service::kManufacturer) {
      name.append("MANUFACTURER_SPECIFIC");
      info =
          OpcodeInfo{{}, "MANUFACTURER_SPECIFIC", service, kOther, kNone, kUnknown, 0, true, false};
    } else if (service == Service::kCnp && valid && op == opcode::kIbCnp) {
      // Native IB's CNP is a BTH alone (LRH, BTH, ICRC, VCRC: six words on the link).
      name.append("IB_CNP");
      info = OpcodeInfo{{}, "IB_CNP", service, kCnp, kNone, kNoPayload, 0, true, false};
    } else if (service == Service::kCnp && valid) {
      name.append("CNP");
      info = OpcodeInfo{{}, "CNP", service, kCnp, kNone, kNoPayload, hdr::kCnpBody, true, false};
    } else if (valid) {
      name.append(kPrefix[static_cast<int>(service)]);
      name.append(d.op_name);
      info = OpcodeInfo{{},        d.op_name, service, d.kind,      d.position,
                        d.payload, headers,   true,    d.is_request};
    } else {
      name.append("RESERVED");
      info.op_name = "RESERVED";
      info.service = service;
    }
  }
  return t;
}

constexpr Table kBuilt = build();

struct Finished {
  std::array<OpcodeInfo, 256> info;
  Finished() : info(kBuilt.info) {
    for (int i = 0; i < 256; ++i)
      info[i].name = {kBuilt.names[i].text.data(), kBuilt.names[i].size};
  }
};

const Finished& finished() {
  static const Finished table;
  return table;
}

}  // namespace

std::string_view service_name(Service service) {
  static constexpr std::string_view kNames[] = {"RC",  "UC",  "RD",           "UD",
                                                "CNP", "XRC", "MANUFACTURER", "RESERVED"};
  return kNames[static_cast<int>(service)];
}

const OpcodeInfo& opcode_info(std::uint8_t op) {
  return finished().info[op];
}

}  // namespace roceconf
