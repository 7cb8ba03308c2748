#include "dissector/wireshark/field_catalogue.h"

#include <algorithm>
#include <array>
#include <variant>

#include "dissector/mad/cm.h"
#include "dissector/mad/rdma_cm.h"
#include "dissector/packet.h"

namespace roceconf::wireshark {

namespace {

class Collector : public FieldSink {
 public:
  Collector(FieldCatalogue& catalogue, std::string_view prefix,
            const std::vector<std::string>& skip)
      : catalogue_(catalogue), prefix_(prefix), skip_(skip) {}

  void field(std::string_view layer, std::string_view name, const FieldValue& value) override {
    if (std::find(skip_.begin(), skip_.end(), layer) != skip_.end()) return;
    catalogue_.add(prefix_, layer, name, FieldCatalogue::kind_of(value));
  }

 private:
  FieldCatalogue& catalogue_;
  std::string_view prefix_;
  const std::vector<std::string>& skip_;
};

// Packets that between them carry every layer and every optional field visit_fields() knows.
std::vector<Packet> samples(std::array<std::uint8_t, kReqPrivateDataSize>& rdma4,
                            std::array<std::uint8_t, kReqPrivateDataSize>& rdma6) {
  std::vector<Packet> out;
  Packet all;
  all.eth = Ethernet{};
  all.vlans.push_back(Vlan{});
  all.ipv4 = Ipv4{};
  all.ipv6 = Ipv6{};
  all.udp = Udp{};
  all.lrh = Lrh{};
  all.grh = Grh{};
  all.bth = Bth{};
  all.rdeth = Rdeth{};
  all.deth = Deth{};
  all.xrceth = XrcEth{};
  all.feth = Feth{};
  all.reth = Reth{};
  all.atomiceth = AtomicEth{};
  all.aeth = Aeth{0x00, 0};  // ACK with a credit count
  all.atomicacketh = AtomicAckEth{};
  all.immdt = ImmDt{};
  all.ieth = Ieth{};
  all.icrc = Icrc{};
  all.vcrc = Vcrc{};
  out.push_back(all);

  Packet rnr;
  rnr.aeth = Aeth{0x20, 0};  // RNR NAK: the timer field
  out.push_back(rnr);

  RdmaCmHeader h4;
  h4.ip_version = 4;
  build_rdma_cm_private_data(h4, {}, rdma4);
  RdmaCmHeader h6;
  h6.ip_version = 6;
  build_rdma_cm_private_data(h6, {}, rdma6);

  // One MAD per CM message; REQs with rdma_cm headers of both IP versions.
  auto add_cm = [&out](CmMessage msg) {
    Packet p;
    p.mad = Mad{};
    p.mad->cm = std::move(msg);
    out.push_back(std::move(p));
  };
  CmReq req4;
  req4.service_id = rdma_cm_service_id(rdma_cm_ps::kTcp, 1);
  req4.private_data = rdma4;
  add_cm(req4);
  CmReq req6 = req4;
  req6.private_data = rdma6;
  add_cm(req6);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (add_cm(CmMessage(std::in_place_index<I>)), ...);
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

void FieldCatalogue::add(std::string_view prefix, std::string_view layer, std::string_view name,
                         FieldKind kind) {
  std::string key;
  key.append(layer).append(".").append(name).append("#");
  key.push_back(static_cast<char>('0' + static_cast<int>(kind)));
  if (index_.contains(key)) return;
  // A name seen before with another kind (an rdma_cm address is IPv4 or IPv6) gets a suffix.
  bool other_kind = false;
  for (const CatalogueField& f : fields_)
    if (f.layer == layer && f.name == name) other_kind = true;
  CatalogueField f{std::string(layer), std::string(name), {}, kind};
  f.abbrev.append(prefix).append(".").append(layer).append(".").append(name);
  if (other_kind) f.abbrev += kind == FieldKind::kIpv6 ? "6" : "_" + std::to_string(int(kind));
  index_.emplace(std::move(key), static_cast<int>(fields_.size()));
  fields_.push_back(std::move(f));
}

FieldCatalogue FieldCatalogue::build(std::string_view prefix,
                                     const std::vector<std::string>& skip) {
  FieldCatalogue catalogue;
  std::array<std::uint8_t, kReqPrivateDataSize> rdma4{}, rdma6{};
  Collector collector(catalogue, prefix, skip);
  for (const Packet& p : samples(rdma4, rdma6)) visit_fields(p, collector);
  return catalogue;
}

int FieldCatalogue::find(std::string_view layer, std::string_view name, FieldKind kind) const {
  thread_local std::string key;
  key.clear();
  key.append(layer).append(".").append(name).append("#");
  key.push_back(static_cast<char>('0' + static_cast<int>(kind)));
  const auto it = index_.find(key);
  return it == index_.end() ? -1 : it->second;
}

}  // namespace roceconf::wireshark
