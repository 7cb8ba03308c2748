// Text forms of the addresses a user types for the reference target: MAC addresses
// ("02:00:00:00:00:01") and IPv4 addresses in dotted decimal. GIDs have theirs in port_tables.h
// (parse_gid, format_gid).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "dissector/ip.h"
#include "suite/reference_nic/port_tables.h"

namespace roceconf::target {

// Six pairs of hex digits separated by ':' or '-' ("02:00:00:00:00:01", "02-00-...").
std::optional<MacAddress> parse_mac(std::string_view text);
std::string format_mac(const MacAddress& mac);  // lower case, ':'-separated

// Exactly four decimal numbers 0-255 separated by '.', no leading zeros beyond a lone "0".
std::optional<Ipv4Address> parse_ipv4(std::string_view text);
std::string format_ipv4(const Ipv4Address& address);

}  // namespace roceconf::target
