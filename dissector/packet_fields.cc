// visit_fields() walks the declared field table (dissector/field_table.h).
#include "dissector/field_table.h"
#include "dissector/packet.h"

namespace roceconf {

void visit_fields(const Packet& p, FieldSink& sink) {
  for (const std::string_view layer : field_layers()) {
    // MAD and CM fields come in each message's own wire order, not the table's.
    if (layer == "cm") continue;
    if (layer == "mad") {
      if (p.mad) visit_mad_fields(*p.mad, sink);
      continue;
    }
    const std::size_t count = layer == "vlan" ? p.vlans.size() : 1;
    for (std::size_t i = 0; i < count; ++i)
      for (const FieldDef& f : layer_fields(layer))
        if (auto v = f.get(p, i)) sink.field(f.layer, f.name, *v);
  }
}

}  // namespace roceconf
