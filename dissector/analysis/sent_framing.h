// The framing of a packet a device under test sent: the IP, UDP, BTH and MAD fields Annex A17
// and chapters 9 and 13 fix for a sender, graded against what the tester expects of that
// packet (the address vector it asked for, whether congestion management is declared). Pure:
// one decoded packet in, findings out, each naming the statement it breaks. The engine runs it
// on every frame the target sends on a known connection (suite/engine/receive_demux.cc) and
// the run-level case header/sent-framing grades what it found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dissector/ib_headers.h"
#include "dissector/packet.h"

namespace roceconf {

struct SentFramingExpect {
  // The address vector the tester asked the device to use (REQ primary path, or the ah_attr of
  // a QP made through control). Unset: not known, not graded. Transport packets only: a MAD's
  // address vector is the device's own GSI choice.
  std::optional<std::uint8_t> hop_limit;
  std::optional<std::uint8_t> traffic_class;
  // The device declares RoCEv2 congestion management: ECT/CE marking and FECN/BECN allowed.
  bool congestion_management = false;
  // With it, the ECN codepoint the device says its packets carry; unset: any.
  std::optional<std::uint8_t> declared_ecn;
  // The sender's (device's) and receiver's (tester's) GIDs; an IPv4-mapped GID gives the IPv4
  // address. Unset: not graded.
  std::optional<Gid> source_gid;
  std::optional<Gid> destination_gid;
  std::uint16_t udp_port = Udp::kRocePort;
};

struct FramingFinding {
  std::string statement;  // "CA17-9"
  std::string field;      // dotted name as `roceconf decode --json` shows it: "ipv4.ttl"
  std::string actual;     // "63"
  std::string expected;   // "64 (the AV's hop limit)"

  // "framing: ipv4.ttl 63, expected 64 (the AV's hop limit) (CA17-9)": the line put on the
  // packet's event; parse_framing_finding reads it back.
  std::string text() const;
};

inline constexpr std::string_view kFramingPrefix = "framing: ";

// The findings of one packet the device sent as RoCEv2 (Ethernet or raw IP framing): the IP
// header is graded even where the decoder stopped at it (fragment, protocol), the UDP, BTH and
// MAD when present.
std::vector<FramingFinding> check_sent_framing(const Packet& packet, const SentFramingExpect& e);

// A line made by FramingFinding::text(); nullopt for any other line.
std::optional<FramingFinding> parse_framing_finding(std::string_view line);

}  // namespace roceconf
