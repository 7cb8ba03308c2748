#include "dissector/wireshark/field_catalogue.h"

#include <algorithm>
#include <array>
#include <utility>
#include <variant>

#include "dissector/mad/cm.h"
#include "dissector/mad/rdma_cm.h"
#include "dissector/packet.h"

namespace roceconf::wireshark {

namespace {

std::string index_key(std::string_view layer, std::string_view name, FieldKind kind) {
  std::string key;
  key.append(layer).append(".").append(name).append("#");
  key.push_back(static_cast<char>('0' + static_cast<int>(kind)));
  return key;
}

// --- until the table declares "mad" and "cm" (dissector/mad/): their fields as visit_fields()
// emits them over one MAD of every CM message. Layers the table has are never taken from here.

class Collector : public FieldSink {
 public:
  Collector(std::vector<CatalogueField>& out, std::string_view prefix)
      : out_(out), prefix_(prefix) {}

  void field(std::string_view layer, std::string_view name, const FieldValue& value) override {
    if (!layer_fields(layer).empty()) return;
    const FieldKind kind = FieldCatalogue::kind_of(value);
    bool other_kind = false;
    for (const CatalogueField& f : out_) {
      if (f.layer != layer || f.name != name) continue;
      if (f.kind == kind) return;
      other_kind = true;
    }
    CatalogueField f;
    f.layer = layer;
    f.name = name;
    f.kind = kind;
    f.width = kind == FieldKind::kUnsigned ? 64 : 0;
    f.label = f.layer + " " + f.name;
    std::replace(f.label.begin(), f.label.end(), '_', ' ');
    f.abbrev.append(prefix_).append(".").append(layer).append(".").append(name);
    // A name seen before with another kind (an rdma_cm address is IPv4 or IPv6) gets a suffix.
    if (other_kind) f.abbrev += kind == FieldKind::kIpv6 ? "6" : "_" + std::to_string(int(kind));
    out_.push_back(std::move(f));
  }

 private:
  std::vector<CatalogueField>& out_;
  std::string_view prefix_;
};

std::vector<CatalogueField> untabled_mad_fields(std::string_view prefix) {
  std::vector<CatalogueField> out;
  Collector collector(out, prefix);
  const auto visit = [&collector](CmMessage msg) {
    Packet p;
    p.mad = Mad{};
    p.mad->cm = std::move(msg);
    visit_fields(p, collector);
  };
  // REQs with rdma_cm headers of both IP versions, then every message.
  std::array<std::uint8_t, kReqPrivateDataSize> rdma4{}, rdma6{};
  RdmaCmHeader h4;
  h4.ip_version = 4;
  build_rdma_cm_private_data(h4, {}, rdma4);
  RdmaCmHeader h6;
  h6.ip_version = 6;
  build_rdma_cm_private_data(h6, {}, rdma6);
  CmReq req;
  req.service_id = rdma_cm_service_id(rdma_cm_ps::kTcp, 1);
  req.private_data = rdma4;
  visit(req);
  req.private_data = rdma6;
  visit(req);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (visit(CmMessage(std::in_place_index<I>)), ...);
  }
  (std::make_index_sequence<std::variant_size_v<CmMessage>>{});
  return out;
}

}  // namespace

FieldKind FieldCatalogue::kind_of(const FieldValue& value) {
  switch (value.index()) {
    case 0:
      return FieldKind::kUnsigned;
    case 1:
      return FieldKind::kBool;
    case 2:
      return FieldKind::kString;
    case 3:
      return FieldKind::kBytes;
    default:
      break;
  }
  switch (std::get<Address>(value).bytes.size()) {
    case 6:
      return FieldKind::kEther;
    case 4:
      return FieldKind::kIpv4;
    case 16:
      return FieldKind::kIpv6;
    default:
      return FieldKind::kBytes;
  }
}

FieldKind FieldCatalogue::kind_of(FieldType type) {
  switch (type) {
    case FieldType::kUnsigned:
      return FieldKind::kUnsigned;
    case FieldType::kBool:
      return FieldKind::kBool;
    case FieldType::kName:
      return FieldKind::kString;
    case FieldType::kBytes:
      return FieldKind::kBytes;
    case FieldType::kMac:
      return FieldKind::kEther;
    case FieldType::kIpv4:
      return FieldKind::kIpv4;
    case FieldType::kIpv6:
      return FieldKind::kIpv6;
  }
  return FieldKind::kBytes;
}

std::uint8_t FieldCatalogue::width_of(unsigned bits) {
  if (bits == 0 || bits > 64) return 64;
  return static_cast<std::uint8_t>((bits + 7) / 8 * 8);
}

void FieldCatalogue::add(CatalogueField f) {
  std::string key = index_key(f.layer, f.name, f.kind);
  if (index_.contains(key)) return;
  index_.emplace(std::move(key), static_cast<int>(fields_.size()));
  fields_.push_back(std::move(f));
}

FieldCatalogue FieldCatalogue::build(std::string_view prefix, const std::vector<std::string>& own) {
  FieldCatalogue c;
  const auto declared_by_plugin = [&own](const std::string& abbrev) {
    return std::find(own.begin(), own.end(), abbrev) != own.end();
  };
  for (const FieldDef& d : field_table()) {
    CatalogueField f;
    f.layer = d.layer;
    f.name = d.name;
    f.abbrev.append(prefix).append(".").append(d.key());
    if (declared_by_plugin(f.abbrev)) continue;
    f.label = d.label;
    f.kind = kind_of(d.type);
    f.width = f.kind == FieldKind::kUnsigned ? width_of(d.bits) : 0;
    f.hex = d.hex;
    f.values = d.values;
    // "BTH Packet Sequence Number, 24 bits (case key bth.psn, psn)": where the field is, its
    // width, and how cases and `roceconf decode --json` name it.
    for (char ch : d.layer)
      f.blurb.push_back(ch >= 'a' && ch <= 'z' ? static_cast<char>(ch - 32) : ch);
    f.blurb.append(" ").append(d.label);
    if (d.bits != 0)
      f.blurb.append(", ").append(std::to_string(d.bits)).append(d.bits == 1 ? " bit" : " bits");
    if (d.bits == 0 && d.type == FieldType::kUnsigned) f.blurb.append(", derived");
    if (d.computed) f.blurb.append(", filled in when a packet is built");
    f.blurb.append(" (case key ").append(d.key());
    std::string_view aliases = d.aliases;
    while (!aliases.empty()) {
      const std::size_t space = aliases.find(' ');
      f.blurb.append(", ").append(aliases.substr(0, space));
      aliases = space == std::string_view::npos ? std::string_view{} : aliases.substr(space + 1);
    }
    f.blurb.append(")");
    c.add(std::move(f));
  }
  for (CatalogueField& f : untabled_mad_fields(prefix))
    if (!declared_by_plugin(f.abbrev)) c.add(std::move(f));
  return c;
}

int FieldCatalogue::find(std::string_view layer, std::string_view name, FieldKind kind) const {
  thread_local std::string key;
  key.clear();
  key.append(layer).append(".").append(name).append("#");
  key.push_back(static_cast<char>('0' + static_cast<int>(kind)));
  auto it = index_.find(key);
  if (it == index_.end() && kind == FieldKind::kIpv4) {
    // An IPv4 address in an IPv6 field (rdma_cm's, by the header's IP version): shown mapped.
    key.back() = static_cast<char>('0' + static_cast<int>(FieldKind::kIpv6));
    it = index_.find(key);
  }
  return it == index_.end() ? -1 : it->second;
}

}  // namespace roceconf::wireshark
