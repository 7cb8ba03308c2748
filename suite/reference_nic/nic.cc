#include "suite/reference_nic/nic.h"

#include "dissector/icrc.h"

#include "suite/reference_nic/cm_agent.h"
#include "suite/reference_nic/requester.h"
#include "suite/reference_nic/responder.h"

namespace roceconf::target {

namespace {

constexpr std::uint32_t kMaxQpn = 0xFFFFFF;  // the highest QPN a BTH can name

DeviceConfig with_quirks_and_ip(NicConfig& c) {
  DeviceConfig d = c.device;
  d.quirks = c.quirks;
  return d;
}

bool service_matches(QpType type, Service service) {
  switch (type) {
    case QpType::kRc:
      return service == Service::kRc;
    case QpType::kUc:
      return service == Service::kUc;
    case QpType::kUd:
    case QpType::kGsi:
      return service == Service::kUd;
  }
  return false;
}

// What a NIC that never reads the IPv4 version (ip-version-unchecked) or the IP and UDP length
// fields (ip-length-unchecked) parses: the frame with those fields as it assumes them. Empty
// when the quirks do not change `frame`.
std::vector<std::uint8_t> as_assumed(const Packet& p, Bytes frame, const Quirks& quirks) {
  const bool version = quirks.has(Quirk::kIpVersionUnchecked) && p.has(FindingCode::kIpVersion);
  const bool lengths = quirks.has(Quirk::kIpLengthUnchecked) &&
                       (p.has(FindingCode::kIpLength) || p.has(FindingCode::kUdpLength));
  if (!p.ipv4 || (!version && !lengths)) return {};
  const std::size_t ip_at = Ethernet::kSize + Vlan::kSize * p.vlans.size();
  const std::size_t hl = std::size_t{frame[ip_at] & 0x0Fu} * 4;
  if (hl < Ipv4::kSize || frame.size() < ip_at + hl + Udp::kSize) return {};
  std::vector<std::uint8_t> out(frame.begin(), frame.end());
  const bool checksum_ok = ipv4_checksum(frame.subspan(ip_at, hl)) == 0;
  if (version) out[ip_at] = static_cast<std::uint8_t>(0x40 | (out[ip_at] & 0x0F));
  if (lengths) {
    const std::size_t total = out.size() - ip_at;
    be::store16(&out[ip_at + 2], static_cast<std::uint16_t>(total));
    be::store16(&out[ip_at + hl + 4], static_cast<std::uint16_t>(total - hl));
  }
  // The checksum it verifies is the one of the header it believes in.
  if (checksum_ok) refresh_ipv4_checksum(std::span(out).subspan(ip_at, hl));
  return out;
}

}  // namespace

Nic::Nic(NicConfig config, Wire::Sink sink)
    : config_(std::move(config)),
      device_(with_quirks_and_ip(config_)),
      wire_(device_.port(), config_.quirks, device_.counters(), std::move(sink), config_.udp_port) {
  // Our IPv4 address as a RoCEv2 GID, beside the link-local GID 0, then the IPv6 one.
  const Gid v4 = gid_from_ipv4(config_.ipv4);
  if (!device_.port().gid_table.find(v4)) (void)device_.port().gid_table.add(v4);
  if (config_.ipv6 && !device_.port().gid_table.find(*config_.ipv6))
    (void)device_.port().gid_table.add(*config_.ipv6, GidType::kRoceV2);
  responder_ = std::make_unique<Responder>(*this);
  requester_ = std::make_unique<Requester>(*this);
  cm_ = std::make_unique<CmAgent>(*this);
  congestion_ = std::make_unique<Congestion>(*this, config_.congestion);
  responder_->on_first_request = [this](std::uint32_t qpn) { cm_->on_comm_est(qpn, now_); };
}

Nic::~Nic() = default;

void Nic::receive(Bytes frame, std::uint64_t now_ns) {
  now_ = now_ns;
  if (wire_.halted()) return;  // unknown-opcode-kills-nic: a dead NIC takes nothing in
  Counters& c = device_.counters();
  decode_into(rx_, frame, LinkType::kEthernet, {.udp_port = config_.udp_port});
  const Bytes received = frame;
  if (!config_.quirks.none()) {
    assumed_ = as_assumed(rx_, frame, config_.quirks);
    if (!assumed_.empty()) {
      frame = assumed_;
      decode_into(rx_, frame, LinkType::kEthernet, {.udp_port = config_.udp_port});
      // The ICRC it checks is still computed over the bytes that arrived.
      const std::size_t net = Ethernet::kSize + Vlan::kSize * rx_.vlans.size();
      if (rx_.icrc && rx_.bth)
        rx_.icrc->expected = compute_icrc(received.subspan(net, received.size() - 4 - net),
                                          IcrcFraming::kRoceV2Ipv4, rx_.bth_offset - net);
    }
  }
  // Only RoCEv2 addressed to one of our GIDs is ours; everything else is not for this NIC.
  if (rx_.framing != Framing::kRoceV2 || !rx_.bth || !rx_.icrc) return;
  if (rx_.ipv4) {
    if (rx_.ipv4->dst != config_.ipv4) return;
  } else if (!rx_.ipv6 || !device_.port().gid_table.find(rx_.ipv6->dst)) {
    return;
  }
  c.rx_packets++;
  c.rx_bytes += frame.size();
  // Lengths that disagree leave no trustworthy payload, and an IPv4 header whose checksum fails
  // is not a datagram for us (RFC 1122 3.2.1.2): drop like hardware does.
  if (rx_.has(FindingCode::kTruncated) || rx_.has(FindingCode::kIpLength) ||
      rx_.has(FindingCode::kUdpLength) || rx_.has(FindingCode::kIpVersion) ||
      rx_.has(FindingCode::kIpChecksum)) {
    if (config_.quirks.has(Quirk::kTruncatedAethHangsRequester)) hang_requester_on_cut_aeth(rx_);
    return;
  }
  // RoCEv2 over IPv4 has no options and is never fragmented (CA17-3, CA17-7, CA17-8); a packet
  // that breaks that is dropped (CA17-24). A fragment with a nonzero offset carries no BTH the
  // codec reads, so it never gets here.
  if (rx_.ipv4) {
    if (rx_.ipv4->ihl != 5 && !config_.quirks.has(Quirk::kIpOptionsAccepted)) return;
    if ((rx_.ipv4->mf || rx_.ipv4->frag_offset != 0) &&
        !config_.quirks.has(Quirk::kIpFragmentsAccepted))
      return;
  }
  if (config_.quirks.has(Quirk::kUnknownOpcodeKillsNic) && kills_nic(rx_)) return;
  // The ICRC is checked before any key, so a corrupted packet never counts as a key violation.
  if (!wire_.icrc_accepts(rx_, frame)) {
    c.icrc_error++;
    return;
  }
  if (rx_.bth->version != 0) return;  // C9-? TVer must be 0: silently dropped
  dispatch(rx_, frame);
}

// The unknown-opcode-kills-nic defect, as rxe before "Reject unknown opcodes before ICRC
// processing": the ICRC of an opcode it has no header length for is computed past the frame.
bool Nic::kills_nic(const Packet& p) {
  const OpcodeInfo& op = opcode_info(p.bth->opcode);
  if ((op.valid && op.service != Service::kManufacturer) || p.bth->dqpn != kMaxQpn) return false;
  wire_.halt();
  return true;
}

// The truncated-aeth-hangs-requester defect: a READ response too short for its AETH (lengths
// and ICRC otherwise right) is parsed anyway, and the requester QP it names stops.
void Nic::hang_requester_on_cut_aeth(const Packet& p) {
  if (!p.bth || p.aeth || !p.icrc || !p.icrc->ok()) return;
  if (p.has(FindingCode::kIpLength) || p.has(FindingCode::kUdpLength) ||
      p.has(FindingCode::kIpVersion) || p.has(FindingCode::kIpChecksum))
    return;
  const OpcodeInfo& op = opcode_info(p.bth->opcode);
  if (!op.valid || op.service != Service::kRc || op.kind != OpKind::kReadResponse ||
      !(op.headers & hdr::kAeth))
    return;
  if (Qp* qp = device_.qp(p.bth->dqpn); qp && qp->qp_type() == QpType::kRc) requester_->wedge(*qp);
}

Qp* Nic::newest_qp_of(const Packet& p) {
  // The qp0-accepted defect: QP number 0 falls through to the last QP connected to the sender.
  const auto nums = device_.qp_nums_by_age();
  for (auto it = nums.rbegin(); it != nums.rend(); ++it) {
    Qp* qp = device_.qp(*it);
    const auto peer = gid_ipv4(qp->attr().ah_attr.dgid);
    if (qp->qp_type() == QpType::kRc && qp->can_receive() && peer && p.ipv4 && *peer == p.ipv4->src)
      return qp;
  }
  return nullptr;
}

bool Nic::pkey_accepts(std::uint16_t packet_pkey, std::uint16_t qp_pkey) const {
  if (config_.quirks.has(Quirk::kPkeyUnchecked)) return true;
  if (config_.quirks.has(Quirk::kPkeyLimitedMatch))
    return pkey_valid(packet_pkey) && pkey_partition(packet_pkey) == pkey_partition(qp_pkey);
  return pkey_match(packet_pkey, qp_pkey);
}

void Nic::dispatch(const Packet& p, Bytes) {
  Counters& c = device_.counters();
  const Bth& b = *p.bth;
  const OpcodeInfo& op = opcode_info(b.opcode);
  if (!op.valid || op.service == Service::kManufacturer) return;  // reserved opcode: drop
  if (op.service == Service::kCnp) {
    // RoCEv2's CNP reaches the reaction point; native IB's (0x80) has no place on RoCEv2.
    if (b.opcode == opcode::kCnp) congestion_->on_cnp(p, now_);
    return;
  }
  if (b.dqpn == 0 && !config_.quirks.has(Quirk::kQp0Accepted)) return;  // CA17-33: no QP0

  if (b.dqpn == Device::kGsiQpn) {
    if (op.service != Service::kUd || !p.deth) return;
    std::optional<std::uint32_t> index;
    if (config_.quirks.has(Quirk::kPkeyUnchecked)) {
      index = 0;
    } else {
      index = device_.port().pkey_table.find_match(b.pkey);
    }
    if (!index) {
      c.count_bad_pkey();
      return;
    }
    if (p.deth->qkey != kGsiQkey && !config_.quirks.has(Quirk::kGsiQkeyUnchecked)) {
      c.qkey_violation++;
      return;
    }
    // A MAD too short for its header still reaches the agent (malformed-mad-hangs-cm).
    if (p.mad || p.has(FindingCode::kMadLength))
      cm_->on_mad(p, static_cast<std::uint16_t>(*index), now_);
    return;
  }

  Qp* qp = b.dqpn == 0 ? newest_qp_of(p) : device_.qp(b.dqpn);
  if (!qp) {
    c.unknown_qp++;
    return;
  }
  if (wedged_.contains(qp->qp_num())) return;
  const QpType type = qp->init_attr().qp_type;
  if (!service_matches(type, op.service) || !qp->can_receive()) return;
  if (type == QpType::kRc || type == QpType::kUc) {
    // Connected QPs take packets only from the peer their address vector names.
    const Gid& peer = qp->attr().ah_attr.dgid;
    const auto peer_v4 = gid_ipv4(peer);
    const bool from_peer =
        p.ipv4 ? (peer_v4 && *peer_v4 == p.ipv4->src) : (p.ipv6 && !peer_v4 && peer == p.ipv6->src);
    if (!from_peer) return;
  }
  const std::optional<std::uint16_t> qp_pkey = qp->pkey();
  if (!qp_pkey || !pkey_accepts(b.pkey, *qp_pkey)) {
    c.count_bad_pkey();
    return;
  }
  if (type == QpType::kUd && (!p.deth || (p.deth->qkey != qp->attr().qkey &&
                                          !config_.quirks.has(Quirk::kUdQkeyUnchecked)))) {
    c.qkey_violation++;
    return;
  }
  if (config_.quirks.has(Quirk::kPadOverrunWedgesQp) && p.has(FindingCode::kPadCount)) {
    // payload_size() underflows: the QP's receive context is stuck for good (quirks.cc).
    wedged_.insert(qp->qp_num());
    requester_->wedge(*qp);
    return;
  }
  if (op.is_request) {
    responder_->on_request(*qp, p, now_);
    congestion_->on_request(*qp, p, now_);  // a CNP when it arrived marked CE
  } else
    requester_->on_response(*qp, p, now_);
}

void Nic::tick(std::uint64_t now_ns) {
  now_ = now_ns;
  if (wire_.halted()) return;
  requester_->tick(now_ns);
  congestion_->tick(now_ns);
  cm_->tick(now_ns);
}

std::optional<std::uint64_t> Nic::next_deadline() const {
  std::optional<std::uint64_t> out;
  if (wire_.halted()) return out;
  for (const auto t :
       {requester_->next_deadline(), congestion_->next_deadline(), cm_->next_deadline()})
    if (t && (!out || *t < *out)) out = t;
  return out;
}

VerbsResult<void> Nic::modify_qp(std::uint32_t qp_num, const QpAttr& attr, QpAttrMask mask) {
  Qp* qp = device_.qp(qp_num);
  const QpState from = qp ? qp->state() : QpState::kReset;
  auto result = device_.modify_qp(qp_num, attr, mask);
  if (!result) return result;
  if (qp->state() == QpState::kReset || qp->state() == QpState::kErr) {
    responder_->forget(qp_num);
    congestion_->forget(qp_num);
  }
  if (qp->state() != from) requester_->on_state_change(*qp, from, now_);
  return result;
}

PostResult Nic::post_send(std::uint32_t qp_num, std::span<const SendWr> wrs) {
  auto result = device_.post_send(qp_num, wrs);
  if (Qp* qp = device_.qp(qp_num)) requester_->kick(*qp, now_);
  return result;
}

VerbsResult<std::uint32_t> Nic::bind_mw(std::uint32_t qp_num, const MwBind& bind,
                                        std::uint64_t wr_id, std::uint32_t send_flags) {
  auto result = device_.bind_mw(qp_num, bind, wr_id, send_flags);
  if (Qp* qp = device_.qp(qp_num)) requester_->kick(*qp, now_);
  return result;
}

PostResult Nic::post_recv(std::uint32_t qp_num, std::span<const RecvWr> wrs) {
  return device_.post_recv(qp_num, wrs);
}

VerbsResult<void> Nic::destroy_qp(std::uint32_t qp_num) {
  auto result = device_.destroy_qp(qp_num);
  if (result) {
    wedged_.erase(qp_num);
    responder_->forget(qp_num);
    requester_->forget(qp_num);
    congestion_->forget(qp_num);
  }
  return result;
}

}  // namespace roceconf::target
