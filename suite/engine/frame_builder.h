// Builds the frames a case sends: RC requests on a connection (any header field overridable,
// including deliberately wrong ones) and CM MADs to QP1. Values in `Assignments` are read with
// the connection as context: `psn=3` is three after the connection's starting PSN, `offset=64`
// is 64 bytes into the responder's region.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "dissector/field_table.h"
#include "dissector/mad/cm.h"
#include "dissector/packet.h"
#include "suite/engine/assignments.h"
#include "suite/engine/connection.h"
#include "suite/engine/target.h"

namespace roceconf::engine {

struct Addresses {
  Endpoint tester;
  Endpoint device;
  std::uint16_t udp_port = Udp::kRocePort;
  Marking marking;  // the tester's 802.1Q tag and DSCP
  // Frames go between the two IPv6 addresses (RoCEv2 over IPv6) instead of the IPv4 ones; both
  // endpoints must have one (build_mad fails otherwise). Requests follow their connection's.
  bool ipv6 = false;
};

struct BuiltFrame {
  std::vector<std::uint8_t> bytes;
  std::uint32_t psn = 0;       // absolute BTH PSN
  std::uint32_t psn_span = 1;  // PSNs the request consumes (READ: ceil(len / PMTU))
};

// The RC opcode for a name as cases write it: "SEND_ONLY", "RDMA_READ_REQUEST", "READ" (=
// RDMA_READ_REQUEST), "WRITE_ONLY" (= RDMA_WRITE_ONLY), "RC_SEND_ONLY", or a number.
std::expected<std::uint8_t, std::string> request_opcode(std::string_view name);

// The payload byte pattern `fill=N`: byte i is (N + i) mod 256.
std::vector<std::uint8_t> fill_pattern(std::uint32_t seed, std::size_t length);

// One request packet on `c`. Keys: any settable field of the field table by its key or alias
// (bth.solicited or se, tver, pkey, dqpn, imm, inv_rkey, swap, add, ttl, ip.len, ...), and
// psn (relative: responses such as ACKNOWLEDGE and READ responses count from the target's
// starting PSN), len, fill, data (hex), offset (into the region), tos, ip.csum=bad, corrupt (a
// frame byte offset flipped after the ICRC) and icrc (bad, good or a value). ip.ihl=N adds N - 5
// words of IPv4 options; ip.len and udp.len are written over the built frame, checksum and ICRC
// then computed over them. An unknown key is an error (a typo is never ignored). A connection
// over IPv6 (Connection::ipv6) gets an IPv6 header: `tos` sets its traffic class, ipv6.* fields
// apply, and the IPv4-only keys (ip.csum, ip.ihl, ip.len, ipv4.*) are errors.
std::expected<BuiltFrame, std::string> build_request(const Addresses& addr, const Connection& c,
                                                     std::uint8_t opcode, const Assignments& a);

// Checks a `send` step before anything is sent: every key is known and applies to `opcode`,
// every value parses and fits its field. Values that need the connection (offset on a
// connection without a region) are checked when the step runs.
std::expected<void, std::string> check_request(std::uint8_t opcode, const Assignments& a);

// Sets the field `key` names (a field-table key such as "bth.solicited", or an alias such as
// "se") in `p` from its case text: a number, true/false, a value name, or an address. A computed
// field set this way is kept as given (`eo`). Returns the field set; an error when the key is
// unknown, the field is derived, the value does not fit, or `p` lacks the field's header.
std::expected<const FieldDef*, std::string> set_field(Packet& p, std::string_view key,
                                                      std::string_view value, EncodeOptions& eo);

// A CM MAD from the tester's QP1 to the target's QP1. Keys for the MAD header: tid,
// class_version, base_version, method, attr_id; bth.pkey as pkey; anything else must be a
// field of the message, set beforehand by the caller.
std::expected<BuiltFrame, std::string> build_mad(const Addresses& addr, std::uint16_t pkey,
                                                 const CmMessage& message, std::uint64_t tid,
                                                 const Assignments& header_overrides);

// `@tester.NAME` in a case: the tester's marking, `vlan` (its VLAN ID), `pcp` or `dscp`. An
// error for another name, or for `vlan`/`pcp` when the tester sends untagged frames.
std::expected<std::uint64_t, std::string> marking_field(const Marking& m, std::string_view name);
// The same check when a case loads: the name is one of them.
std::expected<void, std::string> check_marking_field(std::string_view name);

// Sets a CM message field by name ("service_id", "path_mtu", "reason", ...). False when the
// message has no such field or the value does not parse.
std::expected<void, std::string> set_cm_field(CmMessage& message, std::string_view key,
                                              std::string_view value);

}  // namespace roceconf::engine
