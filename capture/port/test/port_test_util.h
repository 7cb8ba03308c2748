// Helpers shared by the port tests: RoCE frames built with the codec, a scratch directory, and
// running a command for its output.
#pragma once

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "dissector/packet.h"

#include "dissector/testing/shell_command.h"

namespace roceconf::test {

// An RC SEND Only over RoCEv2/IPv4, 192.0.2.1 -> 192.0.2.2, whose PSN tells frames apart.
inline std::vector<std::uint8_t> roce_frame(std::uint32_t psn, std::uint16_t udp_dport = 4791,
                                            MacAddress src = {2, 0, 0, 0, 0, 1},
                                            MacAddress dst = {2, 0, 0, 0, 0, 2}) {
  Packet p;
  p.eth = Ethernet{dst, src, ethertype::kIpv4};
  p.ipv4 = Ipv4{};
  Udp udp;
  udp.dport = udp_dport;
  p.udp = udp;
  Bth bth;
  bth.opcode = opcode::kRcSendOnly;
  bth.dqpn = 0x12;
  bth.psn = psn;
  p.bth = bth;
  static const std::uint8_t payload[] = {'r', 'o', 'c', 'e', 'c', 'o', 'n', 'f'};
  p.payload = payload;
  return encode(p);
}

// The same SEND over RoCEv1 (ethertype 0x8915, GRH).
inline std::vector<std::uint8_t> roce_v1_frame(std::uint32_t psn,
                                               MacAddress src = {2, 0, 0, 0, 0, 1},
                                               MacAddress dst = {2, 0, 0, 0, 0, 2}) {
  Packet p;
  p.eth = Ethernet{dst, src, ethertype::kRoceV1};
  p.grh = Grh{};
  Bth bth;
  bth.opcode = opcode::kRcSendOnly;
  bth.psn = psn;
  p.bth = bth;
  return encode(p);
}

inline std::uint32_t psn_of(const std::vector<std::uint8_t>& frame) {
  const Packet p = decode(frame);
  return p.bth ? p.bth->psn : 0xFFFFFFFF;
}

// A fresh directory under the system temp dir, removed with its contents.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "roceconf-port-XXXXXX");
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

using testutil::CommandResult;
using testutil::have_program;
using testutil::run;

}  // namespace roceconf::test
