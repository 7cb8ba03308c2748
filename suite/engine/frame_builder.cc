#include "suite/engine/frame_builder.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "dissector/address_text.h"
#include "dissector/analysis/psn.h"
#include "dissector/field_table.h"
#include "dissector/icrc.h"
#include "dissector/mad/cm_fields.h"
#include "dissector/opcode.h"

namespace roceconf::engine {

namespace {

template <typename T>
std::expected<T, std::string> number(std::string_view key, std::string_view value,
                                     std::uint64_t max) {
  auto v = parse_uint(value);
  if (!v) return std::unexpected(fmt::format("{}: {}", key, v.error()));
  if (*v > max)
    return std::unexpected(fmt::format("{}: {} is out of range (at most {:#x})", key, value, max));
  return static_cast<T>(*v);
}

std::expected<std::vector<std::uint8_t>, std::string> hex_bytes(std::string_view text) {
  std::vector<std::uint8_t> out;
  if (text.starts_with("0x")) text.remove_prefix(2);
  std::string digits;
  for (char ch : text)
    if (ch != ':' && ch != '_' && ch != ' ') digits += ch;
  if (digits.size() % 2 != 0) return std::unexpected("data: odd number of hex digits");
  for (std::size_t i = 0; i < digits.size(); i += 2) {
    auto v = parse_uint("0x" + digits.substr(i, 2));
    if (!v) return std::unexpected(fmt::format("data: '{}' is not hex", digits.substr(i, 2)));
    out.push_back(static_cast<std::uint8_t>(*v));
  }
  return out;
}

std::expected<Packet, std::string> base_packet(const Addresses& addr, bool ipv6) {
  Packet p;
  Ethernet e;
  e.src = addr.tester.mac;
  e.dst = addr.device.mac;
  p.eth = e;
  if (addr.marking.vlan) {
    Vlan tag;
    tag.vid = *addr.marking.vlan;
    tag.pcp = addr.marking.pcp;
    p.vlans.push_back(tag);
  }
  if (ipv6) {
    if (!addr.tester.ip6 || !addr.device.ip6)
      return std::unexpected(std::string(
          "an IPv6 frame needs an IPv6 address on both sides (target_ip6, tester_ip6)"));
    Ipv6 ip;
    ip.src = *addr.tester.ip6;
    ip.dst = *addr.device.ip6;
    ip.traffic_class = static_cast<std::uint8_t>(addr.marking.dscp << 2);
    p.ipv6 = ip;
  } else {
    Ipv4 ip;
    ip.src = addr.tester.ip;
    ip.dst = addr.device.ip;
    ip.dscp = addr.marking.dscp;
    p.ipv4 = ip;
  }
  Udp u;
  u.dport = addr.udp_port;
  p.udp = u;
  return p;
}

// An address in its usual text: MAC "02:00:00:00:00:01", IPv4 dotted, IPv6/GID.
std::expected<std::vector<std::uint8_t>, std::string> address_bytes(std::string_view key,
                                                                    std::string_view text,
                                                                    FieldType type) {
  const auto bytes = [](const auto& a) { return std::vector<std::uint8_t>(a.begin(), a.end()); };
  if (type == FieldType::kMac) {
    if (const auto mac = parse_mac(text)) return bytes(*mac);
    return std::unexpected(fmt::format("{}: '{}' is not a MAC address", key, text));
  }
  if (type == FieldType::kIpv4) {
    if (const auto ip = parse_ipv4(text)) return bytes(*ip);
  } else if (const auto ip = parse_ipv6(text)) {
    return bytes(*ip);
  }
  return std::unexpected(fmt::format("{}: '{}' is not an {} address", key, text,
                                     type == FieldType::kIpv4 ? "IPv4" : "IPv6"));
}

// A number for `f`: decimal, 0x hex, true/false, or one of the field's value names.
std::expected<std::uint64_t, std::string> field_number(const FieldDef& f, std::string_view key,
                                                       std::string_view value) {
  std::optional<std::uint64_t> n;
  if (auto v = parse_uint(value))
    n = *v;
  else if (value == "true" || value == "false")
    n = value == "true" ? 1 : 0;
  else if (auto named = f.value_of(value))
    n = *named;
  if (!n)
    return std::unexpected(fmt::format("{}: '{}' is not a number{}", key, value,
                                       f.values.empty() ? "" : " or a value name of " + f.key()));
  if (*n > f.max())
    return std::unexpected(
        fmt::format("{}: {} is out of range (at most {:#x})", key, value, f.max()));
  return *n;
}

// A computed field a case sets keeps its value: encode() must not fill it in.
void keep_as_given(const FieldDef& f, EncodeOptions& eo) {
  if (!f.computed) return;
  if (f.name == "padcount")
    eo.fill_pad = false;
  else if (f.name == "chksum")
    eo.fill_checksum = false;
  else if (f.layer == "icrc" || f.layer == "vcrc")
    eo.fill_icrc = false;
  else if (f.name == "type")
    eo.fill_types = false;
  else if (f.name == "dmalen")
    eo.fill_dmalen = false;
  else
    eo.fill_lengths = false;
}

}  // namespace

std::expected<const FieldDef*, std::string> set_field(Packet& p, std::string_view key,
                                                      std::string_view value, EncodeOptions& eo) {
  const auto defs = find_fields(key);
  if (defs.empty())
    return std::unexpected(fmt::format("unknown field '{}' for a request packet", key));
  std::string layers;
  for (const FieldDef* f : defs) {
    if (!f->settable())
      return std::unexpected(
          fmt::format("{}: {} is derived from other fields, a case cannot set it", key, f->key()));
    if (f->layer == "icrc" && !p.icrc && p.bth) p.icrc = Icrc{};
    bool done = false;
    if (f->set) {
      auto n = field_number(*f, key, value);
      if (!n) return std::unexpected(n.error());
      done = f->set(p, *n);
    } else {
      auto b = address_bytes(key, value, f->type);
      if (!b) return std::unexpected(b.error());
      done = f->set_bytes(p, Bytes(b->data(), b->size()));
    }
    if (done) {
      keep_as_given(*f, eo);
      return f;
    }
    layers += layers.empty() ? "" : " or ";
    layers += f->layer;
  }
  const std::string_view what = p.bth ? opcode_info(p.bth->opcode).name : std::string_view{};
  return std::unexpected(
      fmt::format("{}: {} has no {} header", key, what.empty() ? "this packet" : what, layers));
}

namespace {

// IPv4 options for a header of `ihl` words: Router Alert (RFC 2113, a real option routers
// pass), then No-Operation padding ending in End of Option List, so every length agrees.
std::vector<std::uint8_t> ipv4_options(std::uint8_t ihl) {
  std::vector<std::uint8_t> out((ihl - 5u) * 4u, 0x01);
  if (out.empty()) return out;
  out[0] = 0x94;
  out[1] = 0x04;
  out[2] = out[3] = 0x00;
  if (out.size() > 4) out.back() = 0x00;
  return out;
}

}  // namespace

std::expected<std::uint8_t, std::string> request_opcode(std::string_view name) {
  if (auto n = parse_uint(name); n) {
    if (*n > 0xFF) return std::unexpected(fmt::format("opcode {} is out of range", name));
    return static_cast<std::uint8_t>(*n);
  }
  std::string want(name);
  if (want == "READ" || want == "READ_REQUEST") want = "RDMA_READ_REQUEST";
  if (want.starts_with("WRITE_")) want = "RDMA_" + want;
  for (int op = 0; op < 256; ++op) {
    const OpcodeInfo& info = opcode_info(static_cast<std::uint8_t>(op));
    if (!info.valid) continue;
    if (info.name == want || (info.service == Service::kRc && info.op_name == want))
      return static_cast<std::uint8_t>(op);
  }
  return std::unexpected(
      fmt::format("unknown opcode '{}' (write SEND_ONLY, RDMA_WRITE_FIRST, "
                  "RDMA_READ_REQUEST, FETCH_ADD, ..., or a number)",
                  name));
}

std::vector<std::uint8_t> fill_pattern(std::uint32_t seed, std::size_t length) {
  std::vector<std::uint8_t> out(length);
  for (std::size_t i = 0; i < length; ++i) out[i] = static_cast<std::uint8_t>(seed + i);
  return out;
}

std::expected<BuiltFrame, std::string> build_request(const Addresses& addr, const Connection& c,
                                                     std::uint8_t op, const Assignments& a) {
  auto based = base_packet(addr, c.ipv6 || addr.ipv6);
  if (!based) return std::unexpected(based.error());
  Packet p = std::move(*based);
  p.udp->sport = c.udp_sport;
  Bth b;
  b.opcode = op;
  b.dqpn = c.remote_qpn;
  b.pkey = c.pkey;
  b.psn = c.next_psn;
  const OpcodeInfo& info = opcode_info(op);
  if (info.kind == OpKind::kCnp) {
    // A CNP (the tester as notification point) takes no PSN and carries BECN (Annex A17.9.3).
    b.psn = 0;
    b.becn = true;
  }
  p.bth = b;
  if (info.headers & hdr::kReth) {
    Reth r;
    if (c.region) {
      r.va = c.region->va;
      r.rkey = c.region->rkey;
    }
    p.reth = r;
  }
  if (info.headers & hdr::kAtomicEth) {
    AtomicEth ae;
    if (c.region) {
      ae.va = c.region->va;
      ae.rkey = c.region->rkey;
    }
    p.atomiceth = ae;
  }
  if (info.headers & hdr::kImmDt) p.immdt = ImmDt{0x12345678};
  if (info.headers & hdr::kIeth) p.ieth = Ieth{};
  if (info.headers & hdr::kRdeth) p.rdeth = Rdeth{};
  if (info.headers & hdr::kDeth) p.deth = Deth{};
  if (info.headers & hdr::kXrceth) p.xrceth = XrcEth{};
  if (info.headers & hdr::kFeth) p.feth = Feth{};
  if (info.headers & hdr::kAeth) p.aeth = Aeth{};
  if (info.headers & hdr::kAtomicAckEth) p.atomicacketh = AtomicAckEth{};
  // Responses (the tester answering the target's requests) count PSNs from the target's start.
  const bool response =
      info.valid && (info.kind == OpKind::kAck || info.kind == OpKind::kAtomicAck ||
                     info.kind == OpKind::kReadResponse);
  const std::uint32_t psn_base = response ? c.remote_psn0 : c.local_psn0;

  static const FieldDef* const dmalen_field = find_field("reth.dmalen");
  // IP total length and UDP length, when given, are written over the built frame: the other
  // lengths stay computed, and checksum and ICRC are computed over the value given.
  static const FieldDef* const ip_len_field = find_field("ipv4.len");
  static const FieldDef* const udp_len_field = find_field("udp.len");
  std::optional<std::uint16_t> ip_len, udp_len;
  EncodeOptions eo;
  std::size_t len = 0;
  std::optional<std::uint32_t> fill;
  std::optional<std::vector<std::uint8_t>> data;
  std::optional<std::uint32_t> dmalen;
  enum class IcrcMode { kGood, kBad, kValue } icrc = IcrcMode::kGood;
  bool bad_ip_checksum = false;
  std::optional<std::size_t> corrupt;  // a byte flipped after every checksum was computed
  std::optional<std::size_t> cut;      // the bytes after the BTH, cut or extended to this
  std::uint32_t icrc_value = 0;

  // Keys that are not one header field: relative PSN, payload, region offset, ICRC/checksum
  // modes, deliberate corruption. Everything else is a field of the declared field table.
  const auto special = [&](std::string_view key,
                           std::string_view v) -> std::optional<std::expected<void, std::string>> {
    using R = std::expected<void, std::string>;
    if (key == "psn") {
      auto n = parse_int(v);
      if (!n) return R(std::unexpected("psn: " + n.error()));
      p.bth->psn = psn::add(psn_base, *n);
      return R{};
    }
    if (key == "len") {
      auto n = number<std::size_t>("len", v, 1 << 20);
      if (!n) return R(std::unexpected(n.error()));
      len = *n;
      return R{};
    }
    if (key == "fill") {
      auto n = number<std::uint32_t>("fill", v, 0xFFFFFFFF);
      if (!n) return R(std::unexpected(n.error()));
      fill = *n;
      return R{};
    }
    if (key == "data") {
      auto d = hex_bytes(v);
      if (!d) return R(std::unexpected(d.error()));
      data = std::move(*d);
      return R{};
    }
    if (key == "offset") {
      auto n = parse_int(v);
      if (!n) return R(std::unexpected("offset: " + n.error()));
      if (!p.reth && !p.atomiceth)
        return R(std::unexpected(fmt::format("offset: {} has no RETH or AtomicETH", info.name)));
      if (!c.region)
        return R(
            std::unexpected(fmt::format("offset: connection {} has no remote region", c.name)));
      const std::uint64_t va = c.region->va + static_cast<std::uint64_t>(*n);
      if (p.reth) p.reth->va = va;
      if (p.atomiceth) p.atomiceth->va = va;
      return R{};
    }
    if (key == "tos") {
      auto n = number<std::uint8_t>("tos", v, 0xFF);
      if (!n) return R(std::unexpected(n.error()));
      if (p.ipv6) {
        p.ipv6->traffic_class = *n;
        return R{};
      }
      p.ipv4->dscp = *n >> 2;
      p.ipv4->ecn = *n & 3;
      return R{};
    }
    if ((key == "ip.csum" || key == "ipv4.chksum") && v == "bad") {
      if (p.ipv6)
        return R(std::unexpected(fmt::format(
            "{}: connection {} runs over IPv6, whose header has no checksum", key, c.name)));
      bad_ip_checksum = true;
      return R{};
    }
    if (key == "corrupt") {
      auto n = number<std::size_t>("corrupt", v, 1 << 20);
      if (!n) return R(std::unexpected(n.error()));
      corrupt = *n;
      return R{};
    }
    if (key == "cut") {
      auto n = number<std::size_t>("cut", v, 1 << 16);
      if (!n) return R(std::unexpected(n.error()));
      cut = *n;
      return R{};
    }
    if (key == "icrc") {
      if (v == "bad") {
        icrc = IcrcMode::kBad;
        return R{};
      }
      if (v == "good") return R{};
      auto n = number<std::uint32_t>("icrc", v, 0xFFFFFFFF);
      if (!n) return R(std::unexpected("icrc: write bad, good or a value"));
      icrc = IcrcMode::kValue;
      icrc_value = *n;
      return R{};
    }
    return std::nullopt;
  };
  for (const auto& item : a.items()) {
    if (auto done = special(item.key, item.value)) {
      if (!*done) return std::unexpected(done->error());
      continue;
    }
    if (const auto defs = find_fields(item.key);
        defs.size() == 1 && (defs[0] == ip_len_field || defs[0] == udp_len_field)) {
      if (p.ipv6)
        return std::unexpected(fmt::format(
            "{}: connection {} runs over IPv6 (its lengths are computed)", item.key, c.name));
      auto n = field_number(*defs[0], item.key, item.value);
      if (!n) return std::unexpected(n.error());
      (defs[0] == ip_len_field ? ip_len : udp_len) = static_cast<std::uint16_t>(*n);
      continue;
    }
    auto set = set_field(p, item.key, item.value, eo);
    if (!set) return std::unexpected(set.error());
    if (*set == dmalen_field) dmalen = p.reth->dmalen;
    if (item.key == "icrc.value") {
      icrc = IcrcMode::kValue;
      icrc_value = p.icrc->value;
    }
  }
  Bth& bth = *p.bth;
  // ip.ihl=N: N - 5 words of options, so lengths and checksum agree with the header length.
  std::vector<std::uint8_t> options;
  if (p.ipv4 && p.ipv4->ihl != 5) {
    if (p.ipv4->ihl < 5)
      return std::unexpected(fmt::format(
          "ip.ihl: {} is below 5, the 20-byte header (5 to 15: the options are generated)",
          p.ipv4->ihl));
    options = ipv4_options(p.ipv4->ihl);
    p.ipv4_options = options;
  }

  std::vector<std::uint8_t> payload;
  if (data) {
    payload = std::move(*data);
  } else if (info.kind == OpKind::kReadRequest) {
    if (!dmalen) dmalen = static_cast<std::uint32_t>(len);
  } else if (info.payload != PayloadRule::kNoPayload) {
    payload = fill_pattern(fill.value_or(bth.psn & 0xFF), len);
  }
  if (p.reth) p.reth->dmalen = dmalen.value_or(static_cast<std::uint32_t>(payload.size()));
  p.payload = payload;

  BuiltFrame out;
  if (icrc == IcrcMode::kValue) {
    eo.fill_icrc = false;
    p.icrc = Icrc{icrc_value, 0};
  }
  out.bytes = encode(p, eo);
  const std::size_t ip_at = Ethernet::kSize + Vlan::kSize * p.vlans.size();
  if (cut) {
    // A header cut short or missing, a MAD of the wrong size: lengths, checksum and ICRC agree
    // with what is left, so the length is the only fault (the ICRC is not the first check hit).
    const std::size_t bth_at =
        ip_at + (p.ipv6 ? Ipv6::kSize : Ipv4::kSize + options.size()) + Udp::kSize;
    if (!resize_roce_v2_transport(out.bytes, ip_at, bth_at, *cut))
      return std::unexpected(
          fmt::format("cut: the {}-byte frame has no RoCEv2 transport to cut", out.bytes.size()));
    if (icrc == IcrcMode::kValue) store_icrc(&out.bytes[out.bytes.size() - 4], icrc_value);
  }
  if ((ip_len || udp_len) && out.bytes.size() >= ip_at + Ipv4::kSize + options.size() + 8 + 4) {
    const std::size_t udp_at = ip_at + Ipv4::kSize + options.size();
    if (ip_len) be::store16(&out.bytes[ip_at + 2], *ip_len);
    if (udp_len) be::store16(&out.bytes[udp_at + 4], *udp_len);
    if (eo.fill_checksum)
      refresh_ipv4_checksum(std::span(out.bytes).subspan(ip_at, Ipv4::kSize + options.size()));
    if (eo.fill_icrc) refresh_roce_v2_ipv4_icrc(out.bytes, ip_at, udp_at + Udp::kSize);
  }
  // A wrong IPv4 checksum with a good ICRC: the checksum is masked out of the ICRC (IPv4 only:
  // refused above for IPv6).
  const std::size_t checksum_at = ip_at + 11;
  if (bad_ip_checksum && out.bytes.size() > checksum_at) out.bytes[checksum_at] ^= 0xFF;
  if (corrupt) {
    if (*corrupt >= out.bytes.size())
      return std::unexpected(
          fmt::format("corrupt: byte {} is past the {}-byte frame", *corrupt, out.bytes.size()));
    out.bytes[*corrupt] ^= 0x01;
  }
  if (icrc == IcrcMode::kBad && out.bytes.size() >= 4)
    for (std::size_t i = out.bytes.size() - 4; i < out.bytes.size(); ++i) out.bytes[i] ^= 0xFF;
  out.psn = bth.psn;
  if (info.kind == OpKind::kReadRequest && p.reth) {
    const std::uint32_t n = (p.reth->dmalen + c.pmtu - 1) / c.pmtu;
    out.psn_span = std::max<std::uint32_t>(1, n);
  }
  return out;
}

std::expected<BuiltFrame, std::string> build_mad(const Addresses& addr, std::uint16_t pkey,
                                                 const CmMessage& message, std::uint64_t tid,
                                                 const Assignments& header) {
  auto based = base_packet(addr, addr.ipv6);
  if (!based) return std::unexpected(based.error());
  Packet p = std::move(*based);
  Bth b;
  b.opcode = opcode::kUdSendOnly;
  b.dqpn = 1;
  b.pkey = pkey;
  b.psn = static_cast<std::uint32_t>(tid & psn::kMask);
  p.bth = b;
  p.deth = Deth{kGsiQkey, 0, 1};
  Mad m;
  m.header.tid = tid;
  m.cm = message;
  for (const auto& item : header.items()) {
    auto set8 = [&](std::uint8_t& field) -> std::expected<void, std::string> {
      auto n = number<std::uint8_t>(item.key, item.value, 0xFF);
      if (!n) return std::unexpected(n.error());
      field = *n;
      return {};
    };
    std::expected<void, std::string> ok;
    if (item.key == "class_version")
      ok = set8(m.header.class_version);
    else if (item.key == "base_version")
      ok = set8(m.header.base_version);
    else if (item.key == "method")
      ok = set8(m.header.method);
    else if (item.key == "qkey") {
      auto n = number<std::uint32_t>("qkey", item.value, 0xFFFFFFFF);
      if (!n) return std::unexpected(n.error());
      p.deth->qkey = *n;
    } else if (item.key == "pkey") {
      auto n = number<std::uint16_t>("pkey", item.value, 0xFFFF);
      if (!n) return std::unexpected(n.error());
      p.bth->pkey = *n;
    } else
      return std::unexpected(fmt::format("unknown MAD header field '{}'", item.key));
    if (!ok) return std::unexpected(ok.error());
  }
  p.mad = m;
  BuiltFrame out;
  out.bytes = encode(p);
  out.psn = p.bth->psn;
  return out;
}

std::expected<void, std::string> check_marking_field(std::string_view name) {
  if (name == "vlan" || name == "pcp" || name == "dscp") return {};
  return std::unexpected(
      fmt::format("the tester has no value '{}' (@tester.vlan, @tester.pcp, @tester.dscp)", name));
}

std::expected<std::uint64_t, std::string> marking_field(const Marking& m, std::string_view name) {
  if (auto ok = check_marking_field(name); !ok) return std::unexpected(ok.error());
  if (name == "dscp") return m.dscp;
  if (!m.vlan)
    return std::unexpected(fmt::format(
        "@tester.{}: the tester sends untagged frames (the case needs 'needs: vlan')", name));
  return name == "vlan" ? *m.vlan : m.pcp;
}

std::expected<void, std::string> set_cm_field(CmMessage& message, std::string_view key,
                                              std::string_view value) {
  // The CM field table knows the field; the case text is read as for any other field.
  const FieldDef* f = find_cm_field(key);
  if (!f)
    return std::unexpected(fmt::format("{} has no field '{}'", cm_message_name(message), key));
  if (f->type != FieldType::kUnsigned && f->type != FieldType::kBool)
    return std::unexpected(fmt::format("{}: a case sets numbers, not {} bytes", key, f->key()));
  auto n = field_number(*f, key, value);
  if (!n) return std::unexpected(n.error());
  if (auto set = roceconf::set_cm_field(message, key, *n); !set)
    return std::unexpected(set.error());
  return {};
}

}  // namespace roceconf::engine

namespace roceconf::engine {

std::expected<void, std::string> check_request(std::uint8_t op, const Assignments& a) {
  // The builder itself is the check: a connection with a region so every key can apply.
  Connection c;
  c.name = "check";
  c.region = RemoteRegion{0x1000, 1, 1u << 20, 1, 1u << 20, 0};
  Addresses addr;
  auto built = build_request(addr, c, op, a);
  if (built) return {};
  // The step's connection may run over IPv6 (ipv6.hlim=..., no IPv4-only keys): the same keys
  // on such a connection.
  c.ipv6 = true;
  addr.tester.ip6 = Ipv6{}.src;
  addr.device.ip6 = Ipv6{}.dst;
  if (build_request(addr, c, op, a)) return {};
  return std::unexpected(built.error());
}

}  // namespace roceconf::engine
