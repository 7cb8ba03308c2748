// The packet headers' part of the field table; the MAD and CM parts live with their codecs in
// dissector/mad/. Names follow Scapy where Scapy has the field.
#include "dissector/field_table.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <type_traits>

#include "dissector/mad/cm_fields.h"
#include "dissector/mad/mad_fields.h"
#include "dissector/names.h"
#include "dissector/packet.h"

namespace roceconf {

namespace {

// --- accessors through member pointers: Packet::*L is an optional header, M a member of it ----

template <auto L, auto M>
std::optional<FieldValue> get_value(const Packet& p, std::size_t) {
  const auto& layer = p.*L;
  if (!layer) return std::nullopt;
  const auto& v = (*layer).*M;
  using T = std::remove_cvref_t<decltype(v)>;
  if constexpr (std::is_same_v<T, bool>) {
    return FieldValue{v};
  } else if constexpr (std::is_integral_v<T>) {
    return FieldValue{static_cast<std::uint64_t>(v)};
  } else {
    return FieldValue{Address{Bytes(v.data(), v.size())}};
  }
}

template <auto L, auto M>
bool set_value(Packet& p, std::uint64_t v) {
  auto& layer = p.*L;
  if (!layer) return false;
  auto& ref = (*layer).*M;
  using T = std::remove_cvref_t<decltype(ref)>;
  if constexpr (std::is_same_v<T, bool>)
    ref = v != 0;
  else
    ref = static_cast<T>(v);
  return true;
}

template <auto L, auto M>
bool set_address(Packet& p, Bytes b) {
  auto& layer = p.*L;
  if (!layer) return false;
  auto& ref = (*layer).*M;
  if (b.size() != ref.size()) return false;
  std::copy(b.begin(), b.end(), ref.begin());
  return true;
}

FieldType type_of_bits(unsigned bits) {
  return bits == 1 ? FieldType::kBool : FieldType::kUnsigned;
}

template <auto L, auto M>
FieldDef num(std::string_view layer, std::string_view name, std::string_view label,
             std::uint8_t bits, bool hex = false, std::string_view aliases = {},
             bool computed = false) {
  FieldDef f;
  f.layer = layer;
  f.name = name;
  f.label = label;
  f.type = type_of_bits(bits);
  f.bits = bits;
  f.hex = hex;
  f.computed = computed;
  f.aliases = aliases;
  f.get = &get_value<L, M>;
  f.set = &set_value<L, M>;
  return f;
}

template <auto L, auto M>
FieldDef addr(std::string_view layer, std::string_view name, std::string_view label, FieldType type,
              std::string_view aliases = {}) {
  FieldDef f;
  f.layer = layer;
  f.name = name;
  f.label = label;
  f.type = type;
  f.hex = true;
  f.aliases = aliases;
  f.get = &get_value<L, M>;
  f.set_bytes = &set_address<L, M>;
  return f;
}

FieldDef derived(std::string_view layer, std::string_view name, std::string_view label,
                 FieldType type, std::optional<FieldValue> (*get)(const Packet&, std::size_t),
                 bool hex = false) {
  FieldDef f;
  f.layer = layer;
  f.name = name;
  f.label = label;
  f.type = type;
  f.hex = hex;
  f.get = get;
  return f;
}

// VLAN tags repeat: the index picks the tag, outermost first.
template <auto M>
std::optional<FieldValue> vlan_get(const Packet& p, std::size_t i) {
  if (i >= p.vlans.size()) return std::nullopt;
  const auto v = p.vlans[i].*M;
  if constexpr (std::is_same_v<decltype(v), const bool>) return FieldValue{v};
  return FieldValue{static_cast<std::uint64_t>(v)};
}
template <auto M>
bool vlan_set(Packet& p, std::uint64_t v) {
  if (p.vlans.empty()) return false;
  using T = std::remove_cvref_t<decltype(p.vlans[0].*M)>;
  p.vlans[0].*M = static_cast<T>(v);
  return true;
}
template <auto M>
FieldDef vlan(std::string_view name, std::string_view label, std::uint8_t bits, bool hex = false,
              bool computed = false) {
  FieldDef f;
  f.layer = "vlan";
  f.name = name;
  f.label = label;
  f.type = type_of_bits(bits);
  f.bits = bits;
  f.hex = hex;
  f.computed = computed;
  f.get = &vlan_get<M>;
  f.set = &vlan_set<M>;
  return f;
}

std::span<const ValueName> opcode_names() {
  static const std::vector<ValueName> names = [] {
    std::vector<ValueName> out;
    for (int op = 0; op < 256; ++op) {
      const OpcodeInfo& info = opcode_info(static_cast<std::uint8_t>(op));
      if (info.valid) out.push_back({static_cast<std::uint64_t>(op), info.name});
    }
    return out;
  }();
  return names;
}

std::span<const ValueName> syndrome_names() {
  static const std::vector<ValueName> names = [] {
    std::vector<ValueName> out;
    for (int s = 0; s < 256; ++s)
      if (!syndrome_reserved(static_cast<std::uint8_t>(s)))
        out.push_back({static_cast<std::uint64_t>(s), syndrome_name(static_cast<std::uint8_t>(s))});
    return out;
  }();
  return names;
}

std::optional<FieldValue> opcode_name(const Packet& p, std::size_t) {
  if (!p.bth) return std::nullopt;
  return FieldValue{opcode_info(p.bth->opcode).name};
}
std::optional<FieldValue> service(const Packet& p, std::size_t) {
  if (!p.bth) return std::nullopt;
  return FieldValue{service_name(opcode_info(p.bth->opcode).service)};
}
std::optional<FieldValue> aeth_syndrome_name(const Packet& p, std::size_t) {
  if (!p.aeth) return std::nullopt;
  return FieldValue{syndrome_name(p.aeth->syndrome)};
}
std::optional<FieldValue> aeth_credits(const Packet& p, std::size_t) {
  if (!p.aeth) return std::nullopt;
  const std::uint8_t s = p.aeth->syndrome;
  if (syndrome_reserved(s) || aeth_type(s) != AethType::kAck) return std::nullopt;
  if (auto c = ack_credits(aeth_value(s))) return FieldValue{std::uint64_t{*c}};
  return std::nullopt;
}
std::optional<FieldValue> aeth_rnr_timer_usec(const Packet& p, std::size_t) {
  if (!p.aeth) return std::nullopt;
  const std::uint8_t s = p.aeth->syndrome;
  if (syndrome_reserved(s) || aeth_type(s) != AethType::kRnrNak) return std::nullopt;
  return FieldValue{std::uint64_t{rnr_timer_usec(aeth_value(s))}};
}
std::optional<FieldValue> payload_length(const Packet& p, std::size_t) {
  if (!p.bth) return std::nullopt;
  return FieldValue{std::uint64_t{p.payload.size()}};
}
template <auto L>
std::optional<FieldValue> crc_expected(const Packet& p, std::size_t) {
  if (!(p.*L)) return std::nullopt;
  return FieldValue{std::uint64_t{(p.*L)->expected}};
}
template <auto L>
std::optional<FieldValue> crc_ok(const Packet& p, std::size_t) {
  if (!(p.*L)) return std::nullopt;
  return FieldValue{(p.*L)->ok()};
}

using P = Packet;

std::vector<FieldDef> header_fields() {
  std::vector<FieldDef> t = {
      addr<&P::eth, &Ethernet::dst>("eth", "dst", "Destination MAC", FieldType::kMac),
      addr<&P::eth, &Ethernet::src>("eth", "src", "Source MAC", FieldType::kMac),
      num<&P::eth, &Ethernet::type>("eth", "type", "EtherType", 16, true, {}, true),
      vlan<&Vlan::pcp>("prio", "Priority Code Point", 3),
      vlan<&Vlan::dei>("dei", "Drop Eligible Indicator", 1),
      vlan<&Vlan::vid>("vlan", "VLAN ID", 12),
      vlan<&Vlan::type>("type", "EtherType", 16, true, true),
      num<&P::ipv4, &Ipv4::version>("ipv4", "version", "IP Version", 4, false, "ip.version"),
      num<&P::ipv4, &Ipv4::ihl>("ipv4", "ihl", "Header Length (32-bit words)", 4, false, "ip.ihl"),
      num<&P::ipv4, &Ipv4::dscp>("ipv4", "dscp", "DSCP", 6, false, "dscp"),
      num<&P::ipv4, &Ipv4::ecn>("ipv4", "ecn", "ECN", 2, false, "ecn"),
      num<&P::ipv4, &Ipv4::total_length>("ipv4", "len", "Total Length", 16, false, "ip.len", true),
      num<&P::ipv4, &Ipv4::id>("ipv4", "id", "Identification", 16, true, "ip.id"),
      num<&P::ipv4, &Ipv4::df>("ipv4", "df", "Don't Fragment", 1, false, "ip.df"),
      num<&P::ipv4, &Ipv4::mf>("ipv4", "mf", "More Fragments", 1, false, "ip.mf"),
      num<&P::ipv4, &Ipv4::frag_offset>("ipv4", "frag", "Fragment Offset", 13, false, "ip.frag"),
      num<&P::ipv4, &Ipv4::ttl>("ipv4", "ttl", "Time to Live", 8, false, "ttl"),
      num<&P::ipv4, &Ipv4::protocol>("ipv4", "proto", "Protocol", 8),
      num<&P::ipv4, &Ipv4::checksum>("ipv4", "chksum", "Header Checksum", 16, true, "ip.csum",
                                     true),
      addr<&P::ipv4, &Ipv4::src>("ipv4", "src", "Source Address", FieldType::kIpv4),
      addr<&P::ipv4, &Ipv4::dst>("ipv4", "dst", "Destination Address", FieldType::kIpv4),
      num<&P::ipv6, &Ipv6::version>("ipv6", "version", "IP Version", 4),
      num<&P::ipv6, &Ipv6::traffic_class>("ipv6", "tc", "Traffic Class", 8, true),
      num<&P::ipv6, &Ipv6::flow_label>("ipv6", "fl", "Flow Label", 20, true),
      num<&P::ipv6, &Ipv6::payload_length>("ipv6", "plen", "Payload Length", 16, false, {}, true),
      num<&P::ipv6, &Ipv6::next_header>("ipv6", "nh", "Next Header", 8),
      num<&P::ipv6, &Ipv6::hop_limit>("ipv6", "hlim", "Hop Limit", 8),
      addr<&P::ipv6, &Ipv6::src>("ipv6", "src", "Source Address", FieldType::kIpv6),
      addr<&P::ipv6, &Ipv6::dst>("ipv6", "dst", "Destination Address", FieldType::kIpv6),
      num<&P::udp, &Udp::sport>("udp", "sport", "Source Port", 16, false, "sport"),
      num<&P::udp, &Udp::dport>("udp", "dport", "Destination Port", 16),
      num<&P::udp, &Udp::length>("udp", "len", "Length", 16, false, {}, true),
      num<&P::udp, &Udp::checksum>("udp", "chksum", "Checksum", 16, true),
      num<&P::lrh, &Lrh::vl>("lrh", "vl", "Virtual Lane", 4),
      num<&P::lrh, &Lrh::lver>("lrh", "lver", "Link Version", 4),
      num<&P::lrh, &Lrh::sl>("lrh", "sl", "Service Level", 4),
      num<&P::lrh, &Lrh::lnh>("lrh", "lnh", "Link Next Header", 2),
      num<&P::lrh, &Lrh::dlid>("lrh", "dlid", "Destination LID", 16, true),
      num<&P::lrh, &Lrh::pkt_len>("lrh", "pktlen", "Packet Length (4-byte words)", 11, false, {},
                                  true),
      num<&P::lrh, &Lrh::slid>("lrh", "slid", "Source LID", 16, true),
      num<&P::grh, &Grh::ip_version>("grh", "ipver", "IP Version", 4),
      num<&P::grh, &Grh::traffic_class>("grh", "tclass", "Traffic Class", 8, true),
      num<&P::grh, &Grh::flow_label>("grh", "flowlabel", "Flow Label", 20, true),
      num<&P::grh, &Grh::pay_len>("grh", "paylen", "Payload Length", 16, false, {}, true),
      num<&P::grh, &Grh::next_header>("grh", "nexthdr", "Next Header", 8),
      num<&P::grh, &Grh::hop_limit>("grh", "hoplmt", "Hop Limit", 8),
      addr<&P::grh, &Grh::sgid>("grh", "sgid", "Source GID", FieldType::kIpv6),
      addr<&P::grh, &Grh::dgid>("grh", "dgid", "Destination GID", FieldType::kIpv6),
      num<&P::bth, &Bth::opcode>("bth", "opcode", "Opcode", 8, true, "opcode"),
      derived("bth", "opcode_name", "Opcode Name", FieldType::kName, &opcode_name),
      derived("bth", "service", "Transport Service", FieldType::kName, &service),
      num<&P::bth, &Bth::solicited>("bth", "solicited", "Solicited Event", 1, false, "se"),
      num<&P::bth, &Bth::migreq>("bth", "migreq", "Migration Request", 1, false, "migreq"),
      num<&P::bth, &Bth::padcount>("bth", "padcount", "Pad Count", 2, false, "padcount", true),
      num<&P::bth, &Bth::version>("bth", "version", "Transport Header Version", 4, false, "tver"),
      num<&P::bth, &Bth::pkey>("bth", "pkey", "Partition Key", 16, true, "pkey"),
      num<&P::bth, &Bth::fecn>("bth", "fecn", "Forward ECN", 1, false, "fecn"),
      num<&P::bth, &Bth::becn>("bth", "becn", "Backward ECN", 1, false, "becn"),
      num<&P::bth, &Bth::resv6>("bth", "resv6", "Reserved (6 bits)", 6, true, "resv6"),
      num<&P::bth, &Bth::dqpn>("bth", "dqpn", "Destination QP", 24, true, "dqpn"),
      num<&P::bth, &Bth::ackreq>("bth", "ackreq", "Acknowledge Request", 1, false, "ackreq"),
      num<&P::bth, &Bth::resv7>("bth", "resv7", "Reserved (7 bits)", 7, true, "resv7"),
      num<&P::bth, &Bth::psn>("bth", "psn", "Packet Sequence Number", 24, true),
      num<&P::rdeth, &Rdeth::eecnxt>("rdeth", "eecnxt", "EE Context", 24, true),
      num<&P::deth, &Deth::qkey>("deth", "qkey", "Queue Key", 32, true, "qkey"),
      num<&P::deth, &Deth::srcqp>("deth", "srcqp", "Source QP", 24, true, "srcqp"),
      num<&P::xrceth, &XrcEth::xrcsrq>("xrceth", "xrcsrq", "XRC SRQ", 24, true),
      num<&P::feth, &Feth::sel>("feth", "sel", "Selectivity Level", 2),
      num<&P::feth, &Feth::plt>("feth", "plt", "Placement Type", 4),
      num<&P::reth, &Reth::va>("reth", "va", "Virtual Address", 64, true, "va"),
      num<&P::reth, &Reth::rkey>("reth", "rkey", "Remote Key", 32, true, "rkey"),
      num<&P::reth, &Reth::dmalen>("reth", "dmalen", "DMA Length", 32, false, "dmalen", true),
      num<&P::atomiceth, &AtomicEth::va>("atomiceth", "va", "Virtual Address", 64, true, "va"),
      num<&P::atomiceth, &AtomicEth::rkey>("atomiceth", "rkey", "Remote Key", 32, true, "rkey"),
      num<&P::atomiceth, &AtomicEth::swap_add>("atomiceth", "swap_add", "Swap or Add Data", 64,
                                               true, "swap add"),
      num<&P::atomiceth, &AtomicEth::compare>("atomiceth", "compare", "Compare Data", 64, true,
                                              "compare"),
      num<&P::aeth, &Aeth::syndrome>("aeth", "syndrome", "Syndrome", 8, true, "syndrome"),
      derived("aeth", "syndrome_name", "Syndrome Name", FieldType::kName, &aeth_syndrome_name),
      num<&P::aeth, &Aeth::msn>("aeth", "msn", "Message Sequence Number", 24, false, "msn"),
      derived("aeth", "credits", "Credits", FieldType::kUnsigned, &aeth_credits),
      derived("aeth", "rnr_timer_usec", "RNR Timer (microseconds)", FieldType::kUnsigned,
              &aeth_rnr_timer_usec),
      num<&P::atomicacketh, &AtomicAckEth::orig>("atomicacketh", "orig", "Original Remote Data", 64,
                                                 true, "orig"),
      num<&P::immdt, &ImmDt::imm>("immdt", "imm", "Immediate Data", 32, true, "imm"),
      num<&P::ieth, &Ieth::rkey>("ieth", "rkey", "Invalidated Remote Key", 32, true, "inv_rkey"),
      derived("payload", "length", "Payload Length", FieldType::kUnsigned, &payload_length),
  };
  for (FieldDef& f : t) {
    if (f.layer == "bth" && f.name == "opcode") f.values = opcode_names();
    if (f.layer == "aeth" && f.name == "syndrome") f.values = syndrome_names();
  }
  return t;
}

std::vector<FieldDef> trailer_fields() {
  FieldDef icrc = num<&P::icrc, &Icrc::value>("icrc", "value", "ICRC", 32, true, {}, true);
  FieldDef vcrc = num<&P::vcrc, &Vcrc::value>("vcrc", "value", "VCRC", 16, true, {}, true);
  return {
      icrc,
      derived("icrc", "expected", "ICRC Expected", FieldType::kUnsigned, &crc_expected<&P::icrc>,
              true),
      derived("icrc", "ok", "ICRC Valid", FieldType::kBool, &crc_ok<&P::icrc>),
      vcrc,
      derived("vcrc", "expected", "VCRC Expected", FieldType::kUnsigned, &crc_expected<&P::vcrc>,
              true),
      derived("vcrc", "ok", "VCRC Valid", FieldType::kBool, &crc_ok<&P::vcrc>),
  };
}

struct Table {
  std::vector<FieldDef> fields;
  std::vector<std::string_view> layers;
  std::map<std::string, std::vector<const FieldDef*>, std::less<>> by_key;
  std::map<std::string_view, std::span<const FieldDef>, std::less<>> by_layer;
};

const Table& table() {
  static const Table t = [] {
    Table out;
    for (auto part : {header_fields(),
                      std::vector<FieldDef>(mad_field_table().begin(), mad_field_table().end()),
                      std::vector<FieldDef>(cm_field_table().begin(), cm_field_table().end()),
                      trailer_fields()})
      out.fields.insert(out.fields.end(), part.begin(), part.end());
    for (std::size_t i = 0; i < out.fields.size();) {
      std::size_t j = i;
      while (j < out.fields.size() && out.fields[j].layer == out.fields[i].layer) ++j;
      out.layers.push_back(out.fields[i].layer);
      out.by_layer.emplace(out.fields[i].layer,
                           std::span<const FieldDef>(out.fields.data() + i, j - i));
      i = j;
    }
    for (const FieldDef& f : out.fields) out.by_key[f.key()].push_back(&f);
    for (const FieldDef& f : out.fields) {
      std::string_view rest = f.aliases;
      while (!rest.empty()) {
        const std::size_t space = rest.find(' ');
        out.by_key[std::string(rest.substr(0, space))].push_back(&f);
        rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
      }
    }
    return out;
  }();
  return t;
}

bool iequal(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::toupper(static_cast<unsigned char>(x)) ==
           std::toupper(static_cast<unsigned char>(y));
  });
}

}  // namespace

std::string FieldDef::key() const {
  std::string k(layer);
  k += '.';
  k += name;
  return k;
}

std::uint64_t FieldDef::max() const {
  if (type == FieldType::kBool) return 1;
  if (bits == 0 || bits >= 64) return UINT64_MAX;
  return (std::uint64_t{1} << bits) - 1;
}

std::string_view FieldDef::value_name(std::uint64_t value) const {
  for (const ValueName& v : values)
    if (v.value == value) return v.name;
  return {};
}

std::optional<std::uint64_t> FieldDef::value_of(std::string_view want) const {
  for (const ValueName& v : values)
    if (iequal(v.name, want)) return v.value;
  return std::nullopt;
}

std::span<const FieldDef> field_table() {
  return table().fields;
}

const FieldDef* find_field(std::string_view key) {
  const auto& by_key = table().by_key;
  const auto it = by_key.find(key);
  return it == by_key.end() ? nullptr : it->second.front();
}

std::vector<const FieldDef*> find_fields(std::string_view key) {
  const auto& by_key = table().by_key;
  const auto it = by_key.find(key);
  return it == by_key.end() ? std::vector<const FieldDef*>{} : it->second;
}

std::span<const FieldDef> layer_fields(std::string_view layer) {
  const auto& by_layer = table().by_layer;
  const auto it = by_layer.find(layer);
  return it == by_layer.end() ? std::span<const FieldDef>{} : it->second;
}

std::span<const std::string_view> field_layers() {
  return table().layers;
}

}  // namespace roceconf
