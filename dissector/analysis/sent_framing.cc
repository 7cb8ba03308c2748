#include "dissector/analysis/sent_framing.h"

#include <fmt/format.h>

#include "dissector/address_text.h"
#include "dissector/eth.h"
#include "dissector/mad/cm.h"

namespace roceconf {

namespace {

constexpr std::size_t kEthernetMinFrame = 60;         // without the FCS: shorter frames are padded
constexpr std::uint16_t kRejLidReasons[] = {13, 19};  // Invalid LID, Invalid alternate LID

class Grader {
 public:
  Grader(const Packet& p, const SentFramingExpect& e) : p_(p), e_(e) {}

  std::vector<FramingFinding> run() {
    // The IP header is graded even where the decoder stopped at it (a fragment, IP options
    // it could not read, a protocol other than UDP): the caller knows the frame is RoCE.
    if (p_.ipv4) ipv4(*p_.ipv4);
    if (p_.ipv6) ipv6(*p_.ipv6);
    if (!p_.udp) return std::move(out_);
    udp(*p_.udp);
    if (p_.bth) bth(*p_.bth);
    // The frame ends with the ICRC over all of it (A17.4.1); a wrong one is a malformed packet.
    // Where a header length or IHL is already wrong the ICRC was looked for in the wrong place.
    if (p_.bth && p_.icrc && !p_.icrc->ok() && !misframed_)
      add("CA17-2", "icrc", fmt::format("{:#010x}", p_.icrc->value),
          fmt::format("{:#010x} (the ICRC of the frame)", p_.icrc->expected));
    if (p_.mad) mad(*p_.mad);
    return std::move(out_);
  }

 private:
  void add(std::string_view statement, std::string_view field, std::string actual,
           std::string expected) {
    for (std::string_view f : {"ipv4.ihl", "ipv4.len", "ipv6.plen", "udp.len"})
      if (field == f) misframed_ = true;
    out_.push_back(
        {std::string(statement), std::string(field), std::move(actual), std::move(expected)});
  }

  // A MAD rides on QP1 with a GSI address vector the device chooses; the tester's AV governs
  // the connection's transport packets only.
  bool gsi() const {
    return (p_.bth && p_.bth->dqpn == 1) || (p_.deth && p_.deth->srcqp <= 1) || p_.mad.has_value();
  }
  // A CNP's priority is the device's congestion setting (mlx5 cnp_dscp), not the QP's AV.
  bool cnp() const { return p_.bth && p_.bth->opcode == opcode::kCnp; }
  // What ECN the device may send: 00 without congestion management (CA17-5, CA17-14); with it
  // the codepoint its profile declares, or any.
  std::optional<std::string> ecn_wrong(std::uint8_t ecn) const {
    if (!e_.congestion_management) {
      if (ecn != 0) return std::string("0 (no congestion management declared)");
    } else if (e_.declared_ecn && ecn != *e_.declared_ecn) {
      return fmt::format("{} (the ECN the device declares for its packets)", *e_.declared_ecn);
    }
    return std::nullopt;
  }

  // Bytes from the IP header to the end of the frame (Ethernet or raw IP framing).
  std::size_t ip_bytes() const {
    const std::size_t l2 = p_.eth ? Ethernet::kSize + Vlan::kSize * p_.vlans.size() : 0;
    return p_.frame_length > l2 ? p_.frame_length - l2 : 0;
  }

  // An IP length must cover the frame to its end (the ICRC is its last 4 bytes); a frame padded
  // to the Ethernet minimum may carry fewer, as long as the ICRC found there verifies.
  bool length_fits(std::size_t claimed) const {
    const std::size_t have = ip_bytes();
    if (claimed == have) return true;
    return claimed < have && p_.eth && p_.frame_length <= kEthernetMinFrame && p_.icrc &&
           p_.icrc->ok();
  }

  std::string length_expected() const {
    return fmt::format("{} (to the end of the frame, ICRC included)", ip_bytes());
  }

  void ipv4(const Ipv4& ip) {
    if (ip.version != 4) add("CA17-3", "ipv4.version", fmt::format("{}", ip.version), "4");
    if (ip.ihl != 5) add("CA17-3", "ipv4.ihl", fmt::format("{}", ip.ihl), "5 (no options)");
    if (ip.version != 4 || ip.ihl < 5) return;  // the rest of the header is not where it says
    if (!ip.df) add("CA17-7", "ipv4.df", "0", "1 (don't fragment)");
    if (ip.mf) add("CA17-8", "ipv4.mf", "1", "0 (not fragmented)");
    if (ip.frag_offset != 0)
      add("CA17-8", "ipv4.frag", fmt::format("{}", ip.frag_offset), "0 (not fragmented)");
    if (ip.protocol != kIpProtoUdp)
      add("CA17-10", "ipv4.proto", fmt::format("{}", ip.protocol), "17 (UDP)");
    if (!length_fits(ip.total_length))
      add("CA17-6", "ipv4.len", fmt::format("{}", ip.total_length), length_expected());
    if (e_.hop_limit && !gsi() && ip.ttl != *e_.hop_limit)
      add("CA17-9", "ipv4.ttl", fmt::format("{}", ip.ttl),
          fmt::format("{} (the AV's hop limit)", *e_.hop_limit));
    if (e_.traffic_class && !gsi() && !cnp() && ip.dscp != *e_.traffic_class >> 2)
      add("CA17-4", "ipv4.dscp", fmt::format("{}", ip.dscp),
          fmt::format("{} (the AV's traffic class {:#04x}, upper 6 bits)", *e_.traffic_class >> 2,
                      *e_.traffic_class));
    if (auto want = ecn_wrong(ip.ecn)) add("CA17-5", "ipv4.ecn", fmt::format("{}", ip.ecn), *want);
    address("CA17-11", "ipv4.src", ip.src, e_.source_gid, "the device's GID");
    address("CA17-12", "ipv4.dst", ip.dst, e_.destination_gid, "the tester's GID");
  }

  void address(std::string_view statement, std::string_view field, const Ipv4Address& have,
               const std::optional<Gid>& gid, std::string_view whose) {
    if (!gid) return;
    if (gid_from_ipv4(have) == *gid) return;
    add(statement, field, format_ipv4(have), fmt::format("{} ({})", format_gid(*gid), whose));
  }

  void ipv6(const Ipv6& ip) {
    if (ip.next_header != kIpProtoUdp)
      add("CA17-16", "ipv6.nh", fmt::format("{}", ip.next_header), "17 (UDP)");
    if (!length_fits(std::size_t{ip.payload_length} + Ipv6::kSize))
      add("CA17-15", "ipv6.plen", fmt::format("{}", ip.payload_length),
          fmt::format("{} (to the end of the frame, ICRC included)",
                      ip_bytes() > Ipv6::kSize ? ip_bytes() - Ipv6::kSize : 0));
    if (e_.hop_limit && !gsi() && ip.hop_limit != *e_.hop_limit)
      add("CA17-17", "ipv6.hlim", fmt::format("{}", ip.hop_limit),
          fmt::format("{} (the AV's hop limit)", *e_.hop_limit));
    if (e_.traffic_class && !gsi() && !cnp() && ip.traffic_class >> 2 != *e_.traffic_class >> 2)
      add("CA17-13", "ipv6.tc", fmt::format("{:#04x}", ip.traffic_class),
          fmt::format("DSCP {} (the AV's traffic class {:#04x}, upper 6 bits)",
                      *e_.traffic_class >> 2, *e_.traffic_class));
    if (auto want = ecn_wrong(ip.traffic_class & 3))
      add("CA17-14", "ipv6.tc", fmt::format("{:#04x}", ip.traffic_class), "ECN " + *want);
    if (e_.source_gid && ip.src != *e_.source_gid)
      add("CA17-18", "ipv6.src", format_gid(ip.src),
          fmt::format("{} (the device's GID)", format_gid(*e_.source_gid)));
    if (e_.destination_gid && ip.dst != *e_.destination_gid)
      add("CA17-19", "ipv6.dst", format_gid(ip.dst),
          fmt::format("{} (the tester's GID)", format_gid(*e_.destination_gid)));
  }

  void udp(const Udp& u) {
    if (u.dport != e_.udp_port)
      add("CA17-20", "udp.dport", fmt::format("{}", u.dport), fmt::format("{}", e_.udp_port));
    std::size_t ip_header = 0;
    if (p_.ipv4) ip_header = p_.ipv4->header_length();
    if (p_.ipv6) ip_header = Ipv6::kSize;
    if (!length_fits(std::size_t{u.length} + ip_header))
      add("CA17-21", "udp.len", fmt::format("{}", u.length),
          fmt::format("{} (to the end of the frame, ICRC included)",
                      ip_bytes() > ip_header ? ip_bytes() - ip_header : 0));
  }

  void bth(const Bth& b) {
    if (b.version != 0) add("9.2", "bth.version", fmt::format("{}", b.version), "0");
    if (b.resv6 != 0) add("C9-6", "bth.resv6", fmt::format("{:#04x}", b.resv6), "0 (reserved)");
    if (b.resv7 != 0) add("C9-6", "bth.resv7", fmt::format("{:#04x}", b.resv7), "0 (reserved)");
    // Without congestion management F and B are reserved bits (Res1) the sender sets to 0.
    if (!e_.congestion_management) {
      if (b.fecn) add("C9-6", "bth.fecn", "1", "0 (reserved: no congestion management declared)");
      if (b.becn) add("C9-6", "bth.becn", "1", "0 (reserved: no congestion management declared)");
    }
  }

  void mad(const Mad& m) {
    if (p_.payload.size() != kMadSize)
      add("C13-3", "mad.length", fmt::format("{}", p_.payload.size()), "256");
    if (m.header.base_version != 1)
      add("C13-4.2-1.1", "mad.base_version", fmt::format("{}", m.header.base_version), "1");
    // Only the CM class is graded: the tester speaks to the device's CM alone.
    if (m.header.mgmt_class != kMgmtClassCm) {
      add("C13-5", "mad.mgmt_class", fmt::format("{:#04x}", m.header.mgmt_class),
          "0x07 (Communication Management)");
      return;
    }
    if (m.header.class_version != kCmClassVersion)
      add("C13-5", "mad.class_version", fmt::format("{}", m.header.class_version), "2");
    if (!m.cm) return;
    if (const auto* rej = std::get_if<CmRej>(&*m.cm))
      for (const std::uint16_t lid : kRejLidReasons)
        if (rej->reason == lid)
          add("CA17-35", "cm.reason", fmt::format("{}", rej->reason),
              "not 13 or 19 (LID reasons: RoCE has no LIDs)");
  }

  const Packet& p_;
  const SentFramingExpect& e_;
  std::vector<FramingFinding> out_;
  bool misframed_ = false;
};

}  // namespace

std::string FramingFinding::text() const {
  return fmt::format("{}{} {}, expected {} ({})", kFramingPrefix, field, actual, expected,
                     statement);
}

std::vector<FramingFinding> check_sent_framing(const Packet& packet, const SentFramingExpect& e) {
  return Grader(packet, e).run();
}

std::optional<FramingFinding> parse_framing_finding(std::string_view line) {
  if (!line.starts_with(kFramingPrefix)) return std::nullopt;
  line.remove_prefix(kFramingPrefix.size());
  const auto space = line.find(' ');
  const auto comma = line.find(", expected ");
  const auto open = line.rfind(" (");
  if (space == std::string_view::npos || comma == std::string_view::npos ||
      open == std::string_view::npos || comma < space || open < comma || !line.ends_with(')'))
    return std::nullopt;
  FramingFinding f;
  f.field = std::string(line.substr(0, space));
  f.actual = std::string(line.substr(space + 1, comma - space - 1));
  const auto from = comma + std::string_view(", expected ").size();
  f.expected = std::string(line.substr(from, open - from));
  f.statement = std::string(line.substr(open + 2, line.size() - open - 3));
  return f;
}

}  // namespace roceconf
