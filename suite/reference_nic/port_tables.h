// The port of the reference NIC: its GID table (IBA Vol 1 ch. 4 addressing; Annex A17: RoCEv2
// GIDs are IPv4-mapped `::ffff:a.b.c.d` or IPv6 addresses), its P_Key table with the partition
// membership and match rules (IBA Vol 1 ch. 10 partitioning, spec-facts §7), and its MTUs (IBA
// Table 208 path MTU enum, spec-facts §5).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dissector/address_text.h"
#include "dissector/ib_headers.h"
#include "suite/reference_nic/errors.h"

namespace roceconf::target {

using roceconf::Gid;
using MacAddress = std::array<std::uint8_t, 6>;

// ---- path MTU --------------------------------------------------------------------------------

// Values are enum ibv_mtu (and the CM REQ "path packet payload MTU" nibble).
enum class PathMtu : std::uint8_t { k256 = 1, k512 = 2, k1024 = 3, k2048 = 4, k4096 = 5 };

constexpr bool path_mtu_valid(std::uint8_t value) {
  return value >= 1 && value <= 5;
}
std::uint32_t path_mtu_bytes(PathMtu mtu);
std::optional<PathMtu> path_mtu_from_bytes(std::uint32_t bytes);

// ---- GIDs ------------------------------------------------------------------------------------

enum class GidType : std::uint8_t { kIb, kRoceV1, kRoceV2 };
std::string_view gid_type_name(GidType type);  // "IB", "RoCEv1", "RoCEv2"

struct GidEntry {
  Gid gid{};
  GidType gid_type = GidType::kRoceV2;
  friend bool operator==(const GidEntry&, const GidEntry&) = default;
};

// IPv4-mapped GIDs (gid_from_ipv4, gid_ipv4): dissector/address_text.h.
// fe80::/64 with the modified EUI-64 of the MAC: the default GID 0 of a RoCE port.
Gid gid_link_local(const MacAddress& mac);

// Fixed-size table; an index names a GID in address vectors (sgid_index) as in verbs.
class GidTable {
 public:
  static constexpr std::size_t kDefaultSize = 16;
  GidTable() : GidTable(kDefaultSize) {}
  explicit GidTable(std::size_t size) : entries_(size) {}

  // Stores in the first free slot and returns its index; EEXIST if the same GID and type are
  // present, ENOMEM when full.
  VerbsResult<std::uint32_t> add(const Gid& gid, GidType type = GidType::kRoceV2);
  VerbsResult<void> set(std::uint32_t index, const GidEntry& entry);
  VerbsResult<void> remove(std::uint32_t index);

  // nullptr for an out-of-range or empty index.
  const GidEntry* at(std::uint32_t index) const;
  // Lowest index holding `gid` (of `type`, when given).
  std::optional<std::uint32_t> find(const Gid& gid,
                                    std::optional<GidType> type = std::nullopt) const;
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<std::optional<GidEntry>> entries_;
};

// ---- P_Keys ----------------------------------------------------------------------------------

inline constexpr std::uint16_t kDefaultPkey = 0xFFFF;  // full member, default partition
inline constexpr std::uint16_t kPkeyFullMember = 0x8000;
inline constexpr std::uint16_t kPkeyPartitionMask = 0x7FFF;

enum class PkeyMembership : std::uint8_t { kInvalid, kLimited, kFull };
std::string_view pkey_membership_name(PkeyMembership m);  // "invalid", "limited", "full"

// A P_Key whose low 15 bits are 0 (0x0000, 0x8000) names no partition.
constexpr bool pkey_valid(std::uint16_t pkey) {
  return (pkey & kPkeyPartitionMask) != 0;
}
constexpr std::uint16_t pkey_partition(std::uint16_t pkey) {
  return pkey & kPkeyPartitionMask;
}
constexpr PkeyMembership pkey_membership(std::uint16_t pkey) {
  if (!pkey_valid(pkey)) return PkeyMembership::kInvalid;
  return (pkey & kPkeyFullMember) ? PkeyMembership::kFull : PkeyMembership::kLimited;
}
// spec-facts §7 (rxe pkey_match): same valid partition, and at least one side a full member — two
// limited members never talk to each other.
constexpr bool pkey_match(std::uint16_t a, std::uint16_t b) {
  return pkey_valid(a) && pkey_partition(a) == pkey_partition(b) &&
         ((a | b) & kPkeyFullMember) != 0;
}

// Fixed-size table; empty slots hold 0x0000, which matches nothing.
class PkeyTable {
 public:
  static constexpr std::size_t kDefaultSize = 16;
  PkeyTable(std::size_t size = kDefaultSize,
            std::initializer_list<std::uint16_t> init = {kDefaultPkey});

  VerbsResult<void> set(std::uint32_t index, std::uint16_t pkey);
  // The entry at `index`; nullopt when out of range.
  std::optional<std::uint16_t> at(std::uint32_t index) const;
  // Lowest index whose entry equals `pkey` exactly.
  std::optional<std::uint32_t> find(std::uint16_t pkey) const;
  // Lowest index whose entry pkey_match()es a packet's P_Key: what a GSI QP reports as the
  // received pkey_index (spec-facts §7).
  std::optional<std::uint32_t> find_match(std::uint16_t packet_pkey) const;
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<std::uint16_t> entries_;
};

// ---- the port --------------------------------------------------------------------------------

struct PortAttr {
  std::uint8_t port_num = 1;            // verbs ports count from 1; this NIC has one
  PathMtu max_mtu = PathMtu::k4096;     // largest path_mtu modify_qp accepts (as rxe)
  PathMtu active_mtu = PathMtu::k4096;  // from the link MTU (1500 -> 1024, 9000 -> 4096)
  // A RoCE port has no LID, LMC or subnet manager (A17.5): they read 0. One data VL, as rxe.
  std::uint16_t lid = 0, sm_lid = 0;
  std::uint8_t lmc = 0, max_vl_num = 1;
  // ibv_port_cap_flags: CM_SUP and IP_BASED_GIDS, and no client reregistration (CA17-31).
  std::uint32_t port_cap_flags = (1u << 16) | (1u << 26);
};

struct Port {
  PortAttr attr;
  MacAddress mac{0x02, 0x00, 0x00, 0x00, 0x00, 0x01};  // locally administered
  GidTable gid_table;
  PkeyTable pkey_table;
};

}  // namespace roceconf::target
