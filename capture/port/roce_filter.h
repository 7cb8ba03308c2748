// The classic BPF program a raw socket port attaches so the kernel hands it RoCE frames only:
// RoCEv2 (UDP to the RoCE port, IBA Annex A17) and RoCEv1 (ethertype 0x8915, Annex A16).
// Compiled by libpcap from tcpdump syntax, so it can be read and checked with `tcpdump -d`.
#pragma once

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <vector>

#include "capture/port/port.h"
#include "dissector/bytes.h"
#include "dissector/udp.h"

namespace roceconf {

// Same layout as the kernel's struct sock_filter and libpcap's struct bpf_insn.
struct BpfInstruction {
  std::uint16_t code = 0;
  std::uint8_t jt = 0;
  std::uint8_t jf = 0;
  std::uint32_t k = 0;
};

// "udp dst port 4791 or ether proto 0x8915", also behind an 802.1Q/802.1ad tag, with `udp_port`
// for targets on a non-standard port.
std::string roce_filter_expression(std::uint16_t udp_port = Udp::kRocePort);

// Compiles a tcpdump-syntax expression for Ethernet frames.
std::expected<std::vector<BpfInstruction>, PortError> compile_filter(const std::string& expression);

// Runs `program` over `frame` in user space, as the kernel would (for tests and tools).
bool filter_accepts(std::span<const BpfInstruction> program, Bytes frame);

}  // namespace roceconf
