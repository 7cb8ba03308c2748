// A RoCE / InfiniBand packet as layers. The same struct is what decode() fills from bytes and
// what encode() serialises: every header is a value with spec defaults, so a valid packet is a
// few assignments away, and computed fields (lengths, checksums, pad, ICRC) fill themselves in
// on encode unless the caller asks to keep them as given (to build deliberately wrong packets).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "dissector/bytes.h"
#include "dissector/eth.h"
#include "dissector/ext_headers.h"
#include "dissector/fields.h"
#include "dissector/finding.h"
#include "dissector/ib_headers.h"
#include "dissector/ip.h"
#include "dissector/mad/mad.h"
#include "dissector/opcode.h"
#include "dissector/udp.h"

namespace roceconf {

// Link types, numbered as pcap's LINKTYPE_* values.
enum class LinkType : std::uint16_t {
  kEthernet = 1,
  kRaw = 101,  // raw IPv4 or IPv6
  kLinuxSll = 113,
  kErf = 197,
  kInfiniBand = 247,
  kLinuxSll2 = 276,
};

enum class Framing : std::uint8_t { kNone, kRoceV2, kRoceV1, kInfiniBand };

struct Icrc {
  std::uint32_t value = 0;     // as carried on the wire (little-endian read)
  std::uint32_t expected = 0;  // as computed
  bool ok() const { return value == expected; }
};

struct Vcrc {
  std::uint16_t value = 0;
  std::uint16_t expected = 0;
  bool ok() const { return value == expected; }
};

struct Packet {
  Framing framing = Framing::kNone;

  std::optional<Ethernet> eth;
  std::vector<Vlan> vlans;  // outermost first
  std::optional<Ipv4> ipv4;
  Bytes ipv4_options;  // IPv4 option bytes when IHL > 5 (a view)
  std::optional<Ipv6> ipv6;
  std::optional<Udp> udp;
  std::optional<Lrh> lrh;
  std::optional<Grh> grh;

  std::optional<Bth> bth;
  std::optional<Rdeth> rdeth;
  std::optional<Deth> deth;
  std::optional<XrcEth> xrceth;
  std::optional<Feth> feth;
  std::optional<Reth> reth;
  std::optional<AtomicEth> atomiceth;
  std::optional<Aeth> aeth;
  std::optional<AtomicAckEth> atomicacketh;
  std::optional<ImmDt> immdt;
  std::optional<Ieth> ieth;

  // Payload after the extension headers, without pad and ICRC. A view into the decoded frame,
  // or caller-owned bytes when encoding (ignored on encode when `mad` is set).
  Bytes payload;
  std::optional<Mad> mad;  // datagrams to or from QP0/QP1
  std::optional<Icrc> icrc;
  std::optional<Vcrc> vcrc;

  // Offsets in the frame (decode only): where the BTH and the payload start.
  std::uint32_t bth_offset = 0;
  std::uint32_t payload_offset = 0;
  std::uint32_t frame_length = 0;

  Findings findings;

  const OpcodeInfo* opcode() const { return bth ? &opcode_info(bth->opcode) : nullptr; }
  bool has(FindingCode code) const {
    for (const auto& f : findings)
      if (f.code == code) return true;
    return false;
  }
};

struct DecodeOptions {
  std::uint16_t udp_port = Udp::kRocePort;  // RoCEv2 destination port
  bool check_icrc = true;
  bool decode_mad = true;
};

// Decodes one captured frame. Never fails: what cannot be read becomes a finding.
Packet decode(Bytes frame, LinkType link = LinkType::kEthernet, const DecodeOptions& options = {});
// Same, reusing `out`'s storage (for tight loops).
void decode_into(Packet& out, Bytes frame, LinkType link, const DecodeOptions& options = {});

struct EncodeOptions {
  LinkType link = LinkType::kEthernet;  // kRaw: RoCEv2 without the Ethernet header
  bool fill_lengths = true;   // IP total/payload length, UDP length, GRH PayLen, LRH PktLen
  bool fill_types = true;     // Ethernet and VLAN EtherTypes (also kept when lengths are)
  bool fill_checksum = true;  // IPv4 header checksum
  bool fill_pad = true;       // BTH pad count from the payload length
  bool fill_icrc = true;      // ICRC (and VCRC); otherwise packet.icrc/vcrc values are used
  bool fill_dmalen = false;   // RETH DMA length = payload length (ONLY packets)
};

// Serialises `packet` for its framing (RoCEv2 when ipv4/ipv6+udp are set, RoCEv1 when a GRH
// follows Ethernet, native IB when an LRH is set). Headers the opcode calls for but that are
// unset are written with their defaults.
std::vector<std::uint8_t> encode(const Packet& packet, const EncodeOptions& options = {});
// Same, into `out` (cleared first), reusing its storage.
void encode_into(std::vector<std::uint8_t>& out, const Packet& packet,
                 const EncodeOptions& options = {});

}  // namespace roceconf

namespace roceconf {

// Emits every decoded field of every present layer, in wire order ("eth.src" ... "icrc.ok"),
// including MAD and CM fields. Findings are not fields; read packet.findings.
void visit_fields(const Packet& packet, FieldSink& sink);

}  // namespace roceconf
