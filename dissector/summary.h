// Human-readable renderings of a decoded packet: a terse tshark-like one-line summary, and the
// usual notation for the addresses the field visitor emits.
#pragma once

#include <string>
#include <string_view>

#include "dissector/address_text.h"  // format_address, which the summary uses for every address
#include "dissector/bytes.h"
#include "dissector/packet.h"

namespace roceconf {

// "RoCEv2", "RoCEv1", "IB"; "none" for frames without RoCE or IB transport.
std::string_view framing_name(Framing framing);

// One line: addresses, framing, opcode, QP, PSN, key extension headers, CM message, ICRC/VCRC
// status and finding codes in brackets, e.g.
//   192.0.2.1 → 192.0.2.2 RoCEv2 RC_ACKNOWLEDGE QP=0x000011 PSN=42 ACK msn=3 ICRC ok
// `icrc_checked` false says the decoder was told not to verify the ICRC.
std::string summarize(const Packet& packet, bool icrc_checked = true);

}  // namespace roceconf
