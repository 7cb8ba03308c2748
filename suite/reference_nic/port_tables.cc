#include "suite/reference_nic/port_tables.h"

#include <algorithm>

#include "dissector/address_text.h"
#include "dissector/names.h"

namespace roceconf::target {

std::uint32_t path_mtu_bytes(PathMtu mtu) {
  return roceconf::mtu_bytes(static_cast<std::uint8_t>(mtu));
}

std::optional<PathMtu> path_mtu_from_bytes(std::uint32_t bytes) {
  const std::uint8_t e = roceconf::mtu_enum(bytes);
  if (e == 0) return std::nullopt;
  return static_cast<PathMtu>(e);
}

std::string_view gid_type_name(GidType type) {
  switch (type) {
    case GidType::kIb:
      return "IB";
    case GidType::kRoceV1:
      return "RoCEv1";
    case GidType::kRoceV2:
      return "RoCEv2";
  }
  return "?";
}

Gid gid_link_local(const MacAddress& mac) {
  Gid g{0xFE, 0x80};
  g[8] = mac[0] ^ 0x02;  // flip the universal/local bit (modified EUI-64)
  g[9] = mac[1];
  g[10] = mac[2];
  g[11] = 0xFF;
  g[12] = 0xFE;
  g[13] = mac[3];
  g[14] = mac[4];
  g[15] = mac[5];
  return g;
}

VerbsResult<std::uint32_t> GidTable::add(const Gid& gid, GidType type) {
  if (find(gid, type)) {
    return verbs_error(VerbsStatus::kExist, "add_gid: {} ({}) is already in the GID table",
                       format_gid(gid), gid_type_name(type));
  }
  for (std::uint32_t i = 0; i < entries_.size(); ++i) {
    if (!entries_[i]) {
      entries_[i] = GidEntry{gid, type};
      return i;
    }
  }
  return verbs_error(VerbsStatus::kNoMem, "add_gid: the GID table is full ({} entries)",
                     entries_.size());
}

VerbsResult<void> GidTable::set(std::uint32_t index, const GidEntry& entry) {
  if (index >= entries_.size()) {
    return verbs_error(VerbsStatus::kInval,
                       "set_gid: index {} is outside the GID table ({} entries)", index,
                       entries_.size());
  }
  entries_[index] = entry;
  return {};
}

VerbsResult<void> GidTable::remove(std::uint32_t index) {
  if (index >= entries_.size() || !entries_[index]) {
    return verbs_error(VerbsStatus::kNoEnt, "remove_gid: GID index {} is empty", index);
  }
  entries_[index].reset();
  return {};
}

const GidEntry* GidTable::at(std::uint32_t index) const {
  if (index >= entries_.size() || !entries_[index]) return nullptr;
  return &*entries_[index];
}

std::optional<std::uint32_t> GidTable::find(const Gid& gid, std::optional<GidType> type) const {
  for (std::uint32_t i = 0; i < entries_.size(); ++i) {
    const auto& e = entries_[i];
    if (e && e->gid == gid && (!type || e->gid_type == *type)) return i;
  }
  return std::nullopt;
}

std::string_view pkey_membership_name(PkeyMembership m) {
  switch (m) {
    case PkeyMembership::kInvalid:
      return "invalid";
    case PkeyMembership::kLimited:
      return "limited";
    case PkeyMembership::kFull:
      return "full";
  }
  return "?";
}

PkeyTable::PkeyTable(std::size_t size, std::initializer_list<std::uint16_t> init)
    : entries_(std::max(size, init.size()), 0) {
  std::copy(init.begin(), init.end(), entries_.begin());
}

VerbsResult<void> PkeyTable::set(std::uint32_t index, std::uint16_t pkey) {
  if (index >= entries_.size()) {
    return verbs_error(VerbsStatus::kInval,
                       "set_pkey: index {} is outside the P_Key table ({} entries)", index,
                       entries_.size());
  }
  entries_[index] = pkey;
  return {};
}

std::optional<std::uint16_t> PkeyTable::at(std::uint32_t index) const {
  if (index >= entries_.size()) return std::nullopt;
  return entries_[index];
}

std::optional<std::uint32_t> PkeyTable::find(std::uint16_t pkey) const {
  for (std::uint32_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i] == pkey && pkey_valid(pkey)) return i;
  }
  return std::nullopt;
}

std::optional<std::uint32_t> PkeyTable::find_match(std::uint16_t packet_pkey) const {
  for (std::uint32_t i = 0; i < entries_.size(); ++i) {
    if (pkey_match(entries_[i], packet_pkey)) return i;
  }
  return std::nullopt;
}

}  // namespace roceconf::target
