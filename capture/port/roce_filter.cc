#include "capture/port/roce_filter.h"

#include <pcap/pcap.h>

#include <memory>

namespace roceconf {

static_assert(sizeof(BpfInstruction) == sizeof(bpf_insn));

std::string roce_filter_expression(std::uint16_t udp_port) {
  const std::string roce = "udp dst port " + std::to_string(udp_port) + " or ether proto 0x8915";
  // Linux hands the filter an 802.1Q frame without its (outer) tag, which the first part
  // matches; the `vlan` part matches a tag still in the frame (an inner QinQ tag, a kernel that
  // keeps it). Last, because `vlan` moves the offsets of everything after it.
  return roce + " or (vlan and (" + roce + "))";
}

std::expected<std::vector<BpfInstruction>, PortError> compile_filter(
    const std::string& expression) {
  // A dead handle compiles for a link type without opening a device (and without privileges).
  std::unique_ptr<pcap_t, decltype(&pcap_close)> dead(pcap_open_dead(DLT_EN10MB, 262144),
                                                      &pcap_close);
  if (!dead) return std::unexpected(PortError{PortErrorCode::kIo, "libpcap: out of memory"});
  bpf_program program{};
  if (pcap_compile(dead.get(), &program, expression.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0)
    return std::unexpected(
        PortError{PortErrorCode::kIo,
                  "cannot compile BPF filter '" + expression + "': " + pcap_geterr(dead.get())});
  std::vector<BpfInstruction> out(program.bf_len);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const bpf_insn& in = program.bf_insns[i];
    out[i] = {in.code, in.jt, in.jf, in.k};
  }
  pcap_freecode(&program);
  return out;
}

bool filter_accepts(std::span<const BpfInstruction> program, Bytes frame) {
  std::vector<bpf_insn> insns(program.size());
  for (std::size_t i = 0; i < program.size(); ++i)
    insns[i] = {program[i].code, program[i].jt, program[i].jf, program[i].k};
  const auto length = static_cast<u_int>(frame.size());
  return bpf_filter(insns.data(), frame.data(), length, length) != 0;
}

}  // namespace roceconf
