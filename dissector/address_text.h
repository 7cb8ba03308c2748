// The text of addresses, formatting and parsing both: MAC, IPv4 and GID / IPv6. Every layer
// (codec, engine, reference target, agent, Python) writes and reads them here, so one notation
// holds everywhere. Its own small library (roceconf_address): roceconf-agent links it alone.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "dissector/bytes.h"
#include "dissector/eth.h"
#include "dissector/ip.h"

namespace roceconf {

// "02:00:00:00:00:01": lower case, ':'-separated.
std::string format_mac(const MacAddress& mac);
// Six groups of one or two hex digits, separated by ':' or '-' (one kind throughout):
// "02:00:00:00:00:01", "02-00-00-00-00-01", "2:0:0:0:0:1".
std::optional<MacAddress> parse_mac(std::string_view text);

// "192.0.2.1".
std::string format_ipv4(const Ipv4Address& address);
// Exactly four decimal numbers 0-255 separated by '.', no leading zeros beyond a lone "0"
// (inet_aton would read "010" as octal 8).
std::optional<Ipv4Address> parse_ipv4(std::string_view text);

// ::ffff:a.b.c.d: the GID (an IPv6 address) RoCEv2 uses for an IPv4 address, and back.
Ipv6Address gid_from_ipv4(const Ipv4Address& address);
bool gid_is_ipv4_mapped(const Ipv6Address& gid);
std::optional<Ipv4Address> gid_ipv4(const Ipv6Address& gid);

// A GID or IPv6 address: "::ffff:192.0.2.1" for IPv4-mapped ones (how RoCEv2 GIDs carry IPv4
// addresses), RFC 5952 text otherwise ("fe80::1", "2001:db8::1").
std::string format_gid(const Ipv6Address& gid);
// Any IPv6 text form (RFC 4291 2.2), including a dotted IPv4 tail ("::ffff:192.0.2.1").
std::optional<Ipv6Address> parse_ipv6(std::string_view text);
// A GID as users write it: IPv4 text ("192.0.2.1") means its mapped GID ::ffff:192.0.2.1;
// otherwise any IPv6 text.
std::optional<Ipv6Address> parse_gid(std::string_view text);

// By size: MAC (6 bytes), IPv4 (4), GID / IPv6 (16); anything else as lower-case hex.
std::string format_address(Bytes address);

}  // namespace roceconf
