// The "RoCE connections" statistics table: `tshark -z roceconf,conn[,filter]` and Wireshark's
// Statistics menu. The plugin queues every RoCE frame it decodes on the `roceconf` tap; the
// table's listener runs its own stream analysis over them in frame order (so it is the same on
// the first pass, a second pass and a retap) and fills one row per direction with the numbers
// `roceconf decode --connections` prints.
#pragma once

#include "dissector/packet.h"

namespace roceconf::wireshark {

// What the plugin queues on the tap for one frame: valid until the tap's listeners ran.
struct TapFrame {
  const Packet* packet = nullptr;
};

// Registers the tap (returns its id) and the table; call from the protocol registration.
int register_connection_tap();

}  // namespace roceconf::wireshark
