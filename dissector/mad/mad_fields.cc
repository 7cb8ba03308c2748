#include "dissector/mad/mad_fields.h"

#include <array>
#include <optional>
#include <type_traits>

#include "dissector/mad/cm.h"
#include "dissector/mad/cm_fields.h"
#include "dissector/mad/mad.h"
#include "dissector/packet.h"

namespace roceconf {

namespace {

template <auto M>
std::optional<FieldValue> get(const Packet& p, std::size_t) {
  if (!p.mad) return std::nullopt;
  return FieldValue{static_cast<std::uint64_t>(p.mad->header.*M)};
}

template <auto M>
bool set(Packet& p, std::uint64_t v) {
  if (!p.mad) return false;
  using T = std::remove_cvref_t<decltype(p.mad->header.*M)>;
  p.mad->header.*M = static_cast<T>(v);
  return true;
}

template <auto M>
constexpr FieldDef num(std::string_view name, std::string_view label, std::uint8_t bits, bool hex,
                       std::span<const ValueName> values = {}, std::string_view aliases = {}) {
  FieldDef f;
  f.aliases = aliases;
  f.layer = "mad";
  f.name = name;
  f.label = label;
  f.bits = bits;
  f.hex = hex;
  f.values = values;
  f.get = &get<M>;
  f.set = &set<M>;
  return f;
}

constexpr std::array<ValueName, 1> kClassNames = {{{kMgmtClassCm, "CM"}}};
constexpr std::array<ValueName, 4> kMethodNames = {{
    {mad_method::kGet, "Get"},
    {mad_method::kSet, "Set"},
    {mad_method::kSend, "Send"},
    {mad_method::kGetResp, "GetResp"},
}};
// CM attributes (the only class decoded); on encode a CM message's own ID wins.
constexpr std::array<ValueName, 12> kCmAttrNames = {{
    {cm_attr::kClassPortInfo, "ClassPortInfo"},
    {cm_attr::kReq, "REQ"},
    {cm_attr::kMra, "MRA"},
    {cm_attr::kRej, "REJ"},
    {cm_attr::kRep, "REP"},
    {cm_attr::kRtu, "RTU"},
    {cm_attr::kDreq, "DREQ"},
    {cm_attr::kDrep, "DREP"},
    {cm_attr::kSidrReq, "SIDR_REQ"},
    {cm_attr::kSidrRep, "SIDR_REP"},
    {cm_attr::kLap, "LAP"},
    {cm_attr::kApr, "APR"},
}};

using H = MadHeader;
constexpr bool kHex = true;

constexpr std::array<FieldDef, 9> kFields = {
    num<&H::base_version>("base_version", "Base Version", 8, false),
    num<&H::mgmt_class>("mgmt_class", "Management Class", 8, kHex, kClassNames),
    num<&H::class_version>("class_version", "Class Version", 8, false),
    num<&H::method>("method", "Method", 8, kHex, kMethodNames),
    num<&H::status>("status", "Status", 16, kHex),
    num<&H::class_specific>("class_specific", "Class Specific", 16, kHex),
    num<&H::tid>("tid", "Transaction ID", 64, kHex, {}, "tid"),
    num<&H::attr_id>("attr_id", "Attribute ID", 16, kHex, kCmAttrNames),
    num<&H::attr_mod>("attr_mod", "Attribute Modifier", 32, kHex),
};

}  // namespace

std::span<const FieldDef> mad_field_table() {
  return kFields;
}

void visit_mad_fields(const Mad& mad, FieldSink& sink) {
  // The getters read a Packet; this one holds only the header (the CM message is visited in
  // place below, so its views stay views into `mad`).
  Packet p;
  p.mad.emplace();
  p.mad->header = mad.header;
  for (const FieldDef& f : kFields)
    if (auto v = f.get(p, 0)) sink.field(f.layer, f.name, *v);
  if (mad.cm) visit_cm_fields(*mad.cm, sink);
}

}  // namespace roceconf
