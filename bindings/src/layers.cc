// The header classes from the field table, and their module functions (one table: 600+ lines).
#include "layers.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "dissector/fields.h"

namespace roceconf::python {

namespace {

// ---------------------------------------------------------------------------------------------
// Fields of the table
// ---------------------------------------------------------------------------------------------

py::object value_to_py(const FieldValue& v, const FieldDef* f) {
  if (const auto* n = std::get_if<std::uint64_t>(&v)) return py::int_(*n);
  if (const auto* b = std::get_if<bool>(&v)) {
    if (f == nullptr || f->bits == 1) return py::int_(*b ? 1 : 0);  // Scapy's bits read 0/1
    return py::bool_(*b);                                           // derived: icrc_ok
  }
  if (const auto* s = std::get_if<std::string_view>(&v)) return py::str(s->data(), s->size());
  if (const auto* b = std::get_if<Bytes>(&v))
    return py::bytes(reinterpret_cast<const char*>(b->data()), b->size());
  return py::str(format_address(std::get<Address>(v).bytes));
}

std::size_t address_size(FieldType t) {
  switch (t) {
    case FieldType::kMac:
      return 6;
    case FieldType::kIpv4:
      return 4;
    default:
      return 16;
  }
}

// A layer that repeats (VLAN tags): the table writes its first instance, so instance `i` is
// swapped to the front for the write and back after it.
using ToFront = void (*)(Packet&, std::size_t);

class Front {
 public:
  Front(Packet& p, std::size_t i, ToFront swap) : p_(p), i_(i), swap_(i > 0 ? swap : nullptr) {
    if (swap_) swap_(p_, i_);
  }
  ~Front() {
    if (swap_) swap_(p_, i_);
  }
  Front(const Front&) = delete;
  Front& operator=(const Front&) = delete;

 private:
  Packet& p_;
  std::size_t i_;
  ToFront swap_;
};

std::string_view type_name(FieldType t);

// `add_layer`: makes the table's layer present first (a trailer shown on another class).
FieldSpec table_field(const std::string& cls, const FieldDef& f, std::string attr,
                      void (*add_layer)(Packet&), ToFront to_front) {
  FieldSpec s;
  s.name = std::move(attr);
  s.computed = f.computed;
  s.readonly = !f.settable();
  s.def = &f;
  s.type = type_name(f.type);
  s.hex = f.hex;
  s.get = [&f](const Packet& p, std::size_t i) -> py::object {
    const auto v = f.get(p, i);
    return v ? value_to_py(*v, &f) : py::none();
  };
  s.set = [&f, full = cls + "." + s.name, add_layer, to_front](Packet& p, std::size_t i,
                                                               py::handle v, Arena& arena) {
    if (!f.settable()) return;  // derived: encode works it out from the rest
    if (add_layer) add_layer(p);
    Front front(p, i, to_front);
    bool ok = false;
    if (f.set && py::isinstance<py::str>(v) && !f.values.empty()) {
      ok = f.set(p, named_value(f, v.cast<std::string>(), full));
    } else if (f.set) {
      ok = f.set(p, uint_of(v, full, f.type == FieldType::kBool ? 1 : (f.bits ? f.bits : 64)));
    } else if (f.type == FieldType::kBytes) {
      ok = f.set_bytes(p, arena.keep(bytes_of(v, full)));
    } else {
      std::array<std::uint8_t, 16> a{};
      const std::size_t n = address_size(f.type);
      parse_address(v, full, a.data(), n);
      ok = f.set_bytes(p, Bytes(a.data(), n));
    }
    if (!ok) raise("EncodeError", fmt::format("{} does not apply to this packet", full));
  };
  return s;
}

// The Python name of a table field: dots (rdma_cm.port) become underscores.
std::string attr_name(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '.', '_');
  return out;
}

// ---------------------------------------------------------------------------------------------
// The classes' own fields: what the table does not declare
// ---------------------------------------------------------------------------------------------

template <class T>
py::object to_py(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return py::int_(v ? 1 : 0);
  } else if constexpr (std::is_integral_v<T>) {
    return py::int_(v);
  } else if constexpr (std::is_same_v<T, Bytes>) {
    return py::bytes(reinterpret_cast<const char*>(v.data()), v.size());
  } else {  // std::array<std::uint8_t, N>: an address
    return py::str(format_address(Bytes(v.data(), v.size())));
  }
}

template <class T>
void from_py(T& ref, py::handle v, const std::string& name, unsigned bits, Arena& arena) {
  if constexpr (std::is_same_v<T, bool>) {
    ref = uint_of(v, name, 1) != 0;
  } else if constexpr (std::is_integral_v<T>) {
    ref = static_cast<T>(uint_of(v, name, bits ? bits : sizeof(T) * 8));
  } else if constexpr (std::is_same_v<T, Bytes>) {
    ref = arena.keep(bytes_of(v, name));
  } else {
    parse_address(v, name, ref.data(), ref.size());
  }
}

// A field read and written through `access(packet, index) -> member&`.
template <class Access>
FieldSpec own(const std::string& cls, std::string name, unsigned bits, Access access) {
  using T = std::remove_cvref_t<decltype(access(std::declval<Packet&>(), 0))>;
  FieldSpec f;
  f.name = name;
  if constexpr (std::is_same_v<T, bool>) {
    f.type = "bool";
  } else if constexpr (std::is_same_v<T, Bytes>) {
    f.type = "bytes";
  } else if constexpr (!std::is_integral_v<T>) {  // std::array<std::uint8_t, N>
    constexpr std::size_t n = std::tuple_size_v<T>;
    f.type = n == 6 ? "mac" : n == 4 ? "ipv4" : n == 16 ? "ipv6" : "bytes";
  }
  // Reserved bits read best in hex, as the table shows its own (bth.resv6); so does a TPID.
  f.hex = std::is_integral_v<T> && !std::is_same_v<T, bool> &&
          (name.starts_with("resv") || name == "reserved" || name == "tpid");
  f.get = [access](const Packet& p, std::size_t i) { return to_py(access(p, i)); };
  f.set = [access, full = cls + "." + name, bits](Packet& p, std::size_t i, py::handle v,
                                                  Arena& a) {
    auto& ref = access(p, i);
    from_py(ref, v, full, bits, a);
  };
  return f;
}

#define F(NAME, BITS, EXPR)                                \
  own(                                                     \
      L, NAME, BITS, [](auto& p, std::size_t i) -> auto& { \
        (void)i;                                           \
        return EXPR;                                       \
      })

// An own field and where it goes: after the field named `after` ("" first).
struct Own {
  std::string after;
  FieldSpec field;
};

template <class M>
std::size_t cm_count(const Packet& p) {
  return p.mad && p.mad->cm && std::holds_alternative<M>(*p.mad->cm) ? 1 : 0;
}
template <class M>
void cm_add(Packet& p) {
  if (!p.mad) p.mad.emplace();
  if (!p.mad->cm || !std::holds_alternative<M>(*p.mad->cm)) p.mad->cm = M{};
}

// ---------------------------------------------------------------------------------------------
// The classes: which table layer each shows, and how a packet holds it
// ---------------------------------------------------------------------------------------------

struct ClassDecl {
  std::string cls;
  std::string doc;
  std::string layer;  // the table's layer
  std::function<std::size_t(const Packet&)> count;
  std::function<void(Packet&)> add;
  std::vector<Own> own = {};
  // Table layers without a class of their own shown on this one (BTH shows payload and icrc):
  // a `value` by the layer's name (BTH.icrc), other fields prefixed (BTH.icrc_ok).
  std::vector<std::pair<std::string, void (*)(Packet&)>> guests = {};  // layer, makes it present
  ToFront to_front = nullptr;
  std::vector<AliasSpec> aliases = {};
};

// A layer held in one std::optional member of Packet.
#define OPTIONAL_LAYER(MEMBER)                                                     \
  [](const Packet& p) -> std::size_t { return p.MEMBER ? 1 : 0; }, [](Packet& p) { \
    if (!p.MEMBER) p.MEMBER.emplace();                                             \
  }

AliasSpec ip_tos() {
  AliasSpec a;
  a.over = {"dscp", "ecn"};
  a.field.name = "tos";
  a.field.get = [](const Packet& p, std::size_t) {
    return py::int_(p.ipv4->dscp << 2 | p.ipv4->ecn);
  };
  a.field.set = [](Packet& p, std::size_t, py::handle v, Arena&) {
    const auto t = uint_of(v, "IP.tos", 8);
    p.ipv4->dscp = static_cast<std::uint8_t>(t >> 2);
    p.ipv4->ecn = static_cast<std::uint8_t>(t & 3);
  };
  return a;
}

AliasSpec ip_flags() {  // Scapy's bits: MF 1, DF 2, evil (reserved) 4; names accepted too
  AliasSpec a;
  a.over = {"evil", "df", "mf"};
  a.field.name = "flags";
  a.field.get = [](const Packet& p, std::size_t) {
    return py::int_((p.ipv4->mf ? 1 : 0) | (p.ipv4->df ? 2 : 0) | (p.ipv4->reserved_flag ? 4 : 0));
  };
  a.field.set = [](Packet& p, std::size_t, py::handle v, Arena&) {
    std::uint64_t bits = 0;
    if (py::isinstance<py::str>(v)) {
      std::string text = v.cast<std::string>();
      for (char& c : text)
        if (c == '|' || c == ',' || c == '+') c = ' ';
      std::istringstream words(text);
      for (std::string w; words >> w;) {
        if (w == "MF")
          bits |= 1;
        else if (w == "DF")
          bits |= 2;
        else if (w == "evil")
          bits |= 4;
        else
          raise("EncodeError", fmt::format("IP.flags: unknown flag '{}' (MF, DF, evil)", w));
      }
    } else {
      bits = uint_of(v, "IP.flags", 3);
    }
    p.ipv4->mf = bits & 1;
    p.ipv4->df = bits & 2;
    p.ipv4->reserved_flag = bits & 4;
  };
  return a;
}

#include "layers.mad.inc"

std::vector<ClassDecl> header_classes() {
  std::vector<ClassDecl> d;
  d.push_back({"Ether", "Ethernet II header.", "eth", OPTIONAL_LAYER(eth)});
  {
    const std::string L = "Dot1Q";
    d.push_back({L,
                 "802.1Q (or 802.1ad with tpid=0x88a8) tag; one layer per tag.",
                 "vlan",
                 [](const Packet& p) { return p.vlans.size(); },
                 [](Packet& p) { p.vlans.emplace_back(); },
                 {{"type", F("tpid", 0, p.vlans[i].tpid)}}});
    d.back().to_front = [](Packet& p, std::size_t i) { std::swap(p.vlans[0], p.vlans[i]); };
  }
  {
    const std::string L = "LRH";
    d.push_back({L,
                 "InfiniBand Local Route Header (native IB); vcrc is the frame's VCRC.",
                 "lrh",
                 OPTIONAL_LAYER(lrh),
                 {{"sl", F("resv2", 2, p.lrh->resv2)}, {"dlid", F("resv5", 5, p.lrh->resv5)}},
                 {{"vcrc", [](Packet& p) {
                     if (!p.vcrc) p.vcrc.emplace();
                   }}}});
  }
  d.push_back({"GRH", "Global Route Header (RoCEv1 and native IB).", "grh", OPTIONAL_LAYER(grh)});
  {
    const std::string L = "IP";
    d.push_back(
        {L,
         "IPv4 header (RoCEv2); tos and flags are views over dscp/ecn and evil/df/mf.",
         "ipv4",
         OPTIONAL_LAYER(ipv4),
         {{"id", F("evil", 1, p.ipv4->reserved_flag)}, {"dst", F("options", 0, p.ipv4_options)}}});
    d.back().aliases = {ip_tos(), ip_flags()};
  }
  d.push_back({"IPv6", "IPv6 header (RoCEv2).", "ipv6", OPTIONAL_LAYER(ipv6)});
  d.push_back(
      {"UDP", "UDP header; RoCEv2 uses destination port 4791.", "udp", OPTIONAL_LAYER(udp)});
  d.push_back({"BTH",
               "Base Transport Header; payload_length is the payload's, icrc the frame's ICRC "
               "(computed when not given).",
               "bth",
               OPTIONAL_LAYER(bth),
               {},
               {{"payload", nullptr}, {"icrc", [](Packet& p) {
                                         if (!p.icrc) p.icrc.emplace();
                                       }}}});
  {
    const std::string L = "RDETH";
    d.push_back({L,
                 "Reliable Datagram ETH.",
                 "rdeth",
                 OPTIONAL_LAYER(rdeth),
                 {{"", F("resv", 0, p.rdeth->resv)}}});
  }
  {
    const std::string L = "DETH";
    d.push_back({L,
                 "Datagram ETH (UD): Q_Key and source QP.",
                 "deth",
                 OPTIONAL_LAYER(deth),
                 {{"qkey", F("resv", 0, p.deth->resv)}}});
  }
  {
    const std::string L = "XRCETH";
    d.push_back({L,
                 "XRC ETH: the destination XRC SRQ.",
                 "xrceth",
                 OPTIONAL_LAYER(xrceth),
                 {{"", F("resv", 0, p.xrceth->resv)}}});
  }
  d.push_back({"RETH", "RDMA ETH; dmalen is the payload length on ONLY writes when not given.",
               "reth", OPTIONAL_LAYER(reth)});
  d.push_back({"AtomicETH", "Atomic ETH (COMPARE_SWAP, FETCH_ADD).", "atomiceth",
               OPTIONAL_LAYER(atomiceth)});
  d.push_back({"AETH", "ACK ETH: syndrome (ACK, RNR NAK, NAK with its code) and MSN.", "aeth",
               OPTIONAL_LAYER(aeth)});
  d.push_back({"AtomicAckETH", "Atomic ACK ETH: the original remote data.", "atomicacketh",
               OPTIONAL_LAYER(atomicacketh)});
  d.push_back({"ImmDt", "Immediate data.", "immdt", OPTIONAL_LAYER(immdt)});
  d.push_back({"IETH", "Invalidate ETH.", "ieth", OPTIONAL_LAYER(ieth)});
  {
    const std::string L = "FETH";
    d.push_back(
        {L, "FLUSH ETH.", "feth", OPTIONAL_LAYER(feth), {{"", F("resv", 26, p.feth->resv)}}});
  }
  return d;
}

std::vector<ClassDecl> all_classes() {
  std::vector<ClassDecl> d = header_classes();
  for (auto& c : mad_classes()) d.push_back(std::move(c));
  const std::string L = "Raw";
  d.push_back({L,
               "The payload after the transport headers (without pad and ICRC).",
               "",  // its length is BTH.payload_length: there without a payload too
               [](const Packet& p) -> std::size_t { return !p.payload.empty() && !p.mad; },
               [](Packet&) {},
               {{"", F("load", 0, p.payload)}}});
  return d;
}

// The table's fields of `layer` a class shows. A layer several classes share (cm: one class
// per message) gives each the fields its message has, read on a default instance; a field no
// default instance has (rdma_cm's, which depend on the service ID) goes with the field before
// it, as the table lists each message's fields together.
std::vector<const FieldDef*> fields_of(const ClassDecl& c, const std::vector<ClassDecl>& all) {
  std::vector<const ClassDecl*> sharing;
  for (const auto& o : all)
    if (o.layer == c.layer) sharing.push_back(&o);
  const auto table = layer_fields(c.layer);
  std::vector<const FieldDef*> out;
  if (sharing.size() <= 1) {
    for (const FieldDef& f : table) out.push_back(&f);
    return out;
  }
  std::vector<Packet> probes(sharing.size());
  for (std::size_t k = 0; k < sharing.size(); ++k) sharing[k]->add(probes[k]);
  const std::size_t self = std::ranges::find(sharing, &c) - sharing.begin();
  std::vector<bool> before(sharing.size(), true);
  for (const FieldDef& f : table) {
    std::vector<bool> owners(sharing.size());
    for (std::size_t k = 0; k < sharing.size(); ++k) owners[k] = f.get(probes[k], 0).has_value();
    if (std::ranges::find(owners, true) == owners.end()) owners = before;
    if (owners[self]) out.push_back(&f);
    before = std::move(owners);
  }
  return out;
}

LayerSpec make_spec(const ClassDecl& c, const std::vector<ClassDecl>& all) {
  LayerSpec s{c.cls, c.doc, c.layer, {}, c.aliases, c.count, c.add};
  std::set<std::string> table_names;
  for (const FieldDef& f : layer_fields(c.layer)) table_names.insert(attr_name(f.name));
  for (const FieldDef* f : fields_of(c, all)) {
    s.fields.push_back(table_field(c.cls, *f, attr_name(f->name), nullptr, c.to_front));
  }
  // Own fields, unless the table has one of the name (then its declaration wins).
  for (const Own& o : c.own) {
    if (table_names.contains(o.field.name)) continue;
    auto at = s.fields.begin();
    if (!o.after.empty()) {
      at = std::find_if(s.fields.begin(), s.fields.end(),
                        [&o](const FieldSpec& f) { return f.name == o.after; });
      at = at == s.fields.end() ? at : at + 1;
    }
    s.fields.insert(at, o.field);
  }
  for (const auto& [layer, add] : c.guests)
    for (const FieldDef& f : layer_fields(layer))
      s.fields.push_back(table_field(
          c.cls, f, f.name == "value" ? layer : layer + "_" + attr_name(f.name), add, nullptr));
  return s;
}

std::vector<LayerSpec> make_specs() {
  const std::vector<ClassDecl> all = all_classes();
  std::vector<LayerSpec> out;
  for (const ClassDecl& c : all) out.push_back(make_spec(c, all));
  return out;
}

std::string_view type_name(FieldType t) {
  switch (t) {
    case FieldType::kUnsigned:
      return "unsigned";
    case FieldType::kBool:
      return "bool";
    case FieldType::kName:
      return "name";
    case FieldType::kBytes:
      return "bytes";
    case FieldType::kMac:
      return "mac";
    case FieldType::kIpv4:
      return "ipv4";
    case FieldType::kIpv6:
      return "ipv6";
  }
  return "unsigned";
}

// A packet holding one default instance of `spec` with `values` (fields of it) set.
Packet packet_with(const LayerSpec& spec, const std::vector<std::string>& names,
                   const py::dict& values, Arena& arena) {
  Packet p;
  spec.add(p);
  for (const auto& name : names) {
    const FieldSpec* f = spec.field(name);
    if (!f || !values.contains(name.c_str())) continue;
    const py::object v = values[name.c_str()];
    if (!v.is_none()) f->set(p, 0, v, arena);
  }
  return p;
}

const AliasSpec& alias_of(const std::string& cls, const std::string& name) {
  if (const LayerSpec* spec = find_layer(cls))
    for (const AliasSpec& a : spec->aliases)
      if (a.field.name == name) return a;
  raise("EncodeError", fmt::format("{} has no field '{}'", cls, name));
}

class Collect : public FieldSink {
 public:
  explicit Collect(py::list& out) : out_(out) {}
  void field(std::string_view layer, std::string_view name, const FieldValue& v) override {
    std::string key(layer);
    key.append(".").append(name);
    const FieldDef* f = find_field(key);
    out_.append(py::make_tuple(py::str(layer.data(), layer.size()),
                               py::str(name.data(), name.size()),
                               value_to_py(v, f && f->layer == layer ? f : nullptr)));
  }

 private:
  py::list& out_;
};

}  // namespace

const FieldSpec* LayerSpec::field(std::string_view name) const {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  for (const auto& a : aliases)
    if (a.field.name == name) return &a.field;
  return nullptr;
}

const std::vector<LayerSpec>& layer_specs() {
  static const std::vector<LayerSpec> specs = make_specs();
  return specs;
}

const LayerSpec* find_layer(std::string_view cls) {
  for (const auto& l : layer_specs())
    if (l.cls == cls) return &l;
  return nullptr;
}

void register_layers(py::module_& m) {
  // [(class, doc, [(field, default, computed, readonly)], [alias])]: packet.py's classes.
  m.def(
      "layer_table",
      [] {
        py::list out;
        for (const auto& l : layer_specs()) {
          Packet p;
          l.add(p);
          py::list fields;
          for (const auto& f : l.fields) {
            py::dict names;  // value -> name, from the table
            if (f.def)
              for (const ValueName& v : f.def->values)
                if (!names.contains(py::int_(v.value)))
                  names[py::int_(v.value)] = py::str(v.name.data(), v.name.size());
            fields.append(py::make_tuple(
                f.name, f.computed || f.readonly ? py::none() : f.get(p, 0), f.computed, f.readonly,
                f.hex, py::str(f.type.data(), f.type.size()), names));
          }
          py::list aliases;
          for (const auto& a : l.aliases) {
            py::list over;
            for (const auto& f : a.over) over.append(f);
            aliases.append(py::make_tuple(a.field.name, over));
          }
          out.append(py::make_tuple(l.cls, l.doc, fields, aliases));
        }
        return out;
      },
      "The header classes: (name, doc, [(field, default, computed, readonly, hex, type, "
      "{value: name})], [(alias, fields)]) in wire order.");
  m.def(
      "layer_alias_get",
      [](const std::string& cls, const std::string& name, const py::dict& values) {
        const AliasSpec& a = alias_of(cls, name);
        Arena arena;
        return a.field.get(packet_with(*find_layer(cls), a.over, values, arena), 0);
      },
      py::arg("cls"), py::arg("name"), py::arg("values"),
      "An alias's value (IP.tos) from the fields it views.");
  m.def(
      "layer_alias_set",
      [](const std::string& cls, const std::string& name, py::handle value) {
        const AliasSpec& a = alias_of(cls, name);
        const LayerSpec& spec = *find_layer(cls);
        Packet p;
        Arena arena;
        spec.add(p);
        a.field.set(p, 0, value, arena);
        py::dict out;
        for (const auto& f : a.over) out[f.c_str()] = spec.field(f)->get(p, 0);
        return out;
      },
      py::arg("cls"), py::arg("name"), py::arg("value"),
      "The fields an alias's value (IP.tos=0x2a) stands for, as a dict.");
  m.def(
      "field_table",
      [] {
        std::map<const FieldDef*, py::list> shown;  // where Python shows each field
        for (const auto& l : layer_specs())
          for (const auto& f : l.fields)
            if (f.def) shown[f.def].append(py::make_tuple(l.cls, f.name));
        py::list out;
        for (const FieldDef& f : field_table()) {
          py::dict d;
          d["layer"] = py::str(f.layer.data(), f.layer.size());
          d["name"] = py::str(f.name.data(), f.name.size());
          d["key"] = f.key();
          d["label"] = py::str(f.label.data(), f.label.size());
          d["type"] = py::str(type_name(f.type).data(), type_name(f.type).size());
          d["bits"] = f.bits;
          d["hex"] = f.hex;
          d["computed"] = f.computed;
          d["settable"] = f.settable();
          d["aliases"] = py::str(f.aliases.data(), f.aliases.size()).attr("split")();
          py::dict values;
          for (const ValueName& v : f.values)
            values[py::int_(v.value)] = py::str(v.name.data(), v.name.size());
          d["values"] = values;
          d["python"] = shown.contains(&f) ? shown[&f] : py::list();
          out.append(d);
        }
        return out;
      },
      "The codec's field table: one dict per field (layer, name, key, label, type, bits, hex, "
      "computed, settable, aliases, values) with `python`, the [(class, attribute)] showing it.");
  m.def(
      "visit_fields",
      [](const py::bytes& data, int link, std::uint16_t udp_port) {
        const std::string_view s = data;
        const std::vector<std::uint8_t> b(s.begin(), s.end());
        DecodeOptions o;
        o.udp_port = udp_port;
        const Packet p = decode(b, static_cast<LinkType>(link), o);
        py::list out;
        Collect sink(out);
        visit_fields(p, sink);
        return out;
      },
      py::arg("data"), py::arg("link") = 1, py::arg("udp_port") = Udp::kRocePort,
      "Every field the codec decodes from one frame, as [(layer, name, value)] in the order of "
      "`roceconf decode --json`.");
}

}  // namespace roceconf::python
