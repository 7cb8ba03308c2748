#include "layers.h"

#include <sstream>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

namespace roceconf::python {

namespace {

template <class T>
py::object to_py(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return py::int_(v ? 1 : 0);  // Scapy's one-bit fields read as 0/1
  } else if constexpr (std::is_integral_v<T>) {
    return py::int_(v);
  } else if constexpr (std::is_same_v<T, Bytes>) {
    return py::bytes(reinterpret_cast<const char*>(v.data()), v.size());
  } else {  // std::array<std::uint8_t, N>: an address
    return py::str(address_text(Bytes(v.data(), v.size())));
  }
}

template <class T>
void from_py(T& ref, py::handle v, const std::string& name, unsigned bits, Arena& arena) {
  if constexpr (std::is_same_v<T, bool>) {
    ref = uint_of(v, name, 1) != 0;
  } else if constexpr (std::is_integral_v<T>) {
    ref = static_cast<T>(uint_of(v, name, bits ? bits : sizeof(T) * 8));
  } else if constexpr (std::is_same_v<T, Bytes>) {
    ref = arena.keep(bytes_of(v, name));
  } else {
    parse_address(v, name, ref.data(), ref.size());
  }
}

// A field read and written through `access(packet, index) -> member&`.
template <class Access>
FieldSpec field(const std::string& layer, std::string name, unsigned bits, Access access,
                bool computed = false) {
  FieldSpec f;
  f.name = name;
  f.computed = computed;
  f.get = [access](const Packet& p, std::size_t i) { return to_py(access(p, i)); };
  f.set = [access, full = layer + "." + name, bits](Packet& p, std::size_t i, py::handle v,
                                                    Arena& a) {
    auto& ref = access(p, i);
    from_py(ref, v, full, bits, a);
  };
  return f;
}

#define F(NAME, BITS, EXPR)                                \
  field(                                                   \
      L, NAME, BITS, [](auto& p, std::size_t i) -> auto& { \
        (void)i;                                           \
        return EXPR;                                       \
      })
#define FC(NAME, BITS, EXPR)                               \
  field(                                                   \
      L, NAME, BITS, [](auto& p, std::size_t i) -> auto& { \
        (void)i;                                           \
        return EXPR;                                       \
      },                                                   \
      true)

// A layer held in one std::optional member of Packet.
#define OPTIONAL_LAYER(MEMBER)                                                     \
  [](const Packet& p) -> std::size_t { return p.MEMBER ? 1 : 0; }, [](Packet& p) { \
    if (!p.MEMBER) p.MEMBER.emplace();                                             \
  }

template <class M>
std::size_t cm_count(const Packet& p) {
  return p.mad && p.mad->cm && std::holds_alternative<M>(*p.mad->cm) ? 1 : 0;
}
template <class M>
void cm_add(Packet& p) {
  if (!p.mad) p.mad.emplace();
  if (!p.mad->cm || !std::holds_alternative<M>(*p.mad->cm)) p.mad->cm = M{};
}

// The fields of one CM path, prefixed ("primary_", "alternate_").
#define PATH_FIELDS(PREFIX, PATH)                                                                 \
  F(PREFIX "local_lid", 0, PATH.local_lid), F(PREFIX "remote_lid", 0, PATH.remote_lid),           \
      F(PREFIX "local_gid", 0, PATH.local_gid), F(PREFIX "remote_gid", 0, PATH.remote_gid),       \
      F(PREFIX "flow_label", 20, PATH.flow_label), F(PREFIX "resv_flow", 4, PATH.resv_flow),      \
      F(PREFIX "traffic_class", 0, PATH.traffic_class), F(PREFIX "hop_limit", 0, PATH.hop_limit), \
      F(PREFIX "resv_rate", 2, PATH.resv_rate), F(PREFIX "packet_rate", 6, PATH.packet_rate),     \
      F(PREFIX "sl", 4, PATH.sl), F(PREFIX "subnet_local", 1, PATH.subnet_local),                 \
      F(PREFIX "resv_sl", 3, PATH.resv_sl),                                                       \
      F(PREFIX "local_ack_timeout", 5, PATH.local_ack_timeout),                                   \
      F(PREFIX "resv_ack", 3, PATH.resv_ack)

std::vector<LayerSpec> make_specs() {
  std::vector<LayerSpec> s;
  {
    const std::string L = "Ether";
    s.push_back({L,
                 "Ethernet II header.",
                 {F("dst", 0, p.eth->dst), F("src", 0, p.eth->src), FC("type", 0, p.eth->type)},
                 OPTIONAL_LAYER(eth)});
  }
  {
    const std::string L = "Dot1Q";
    s.push_back(
        {L,
         "802.1Q (or 802.1ad with tpid=0x88a8) tag; one layer per tag.",
         {F("prio", 3, p.vlans[i].pcp), F("id", 1, p.vlans[i].dei), F("vlan", 12, p.vlans[i].vid),
          FC("type", 0, p.vlans[i].type), F("tpid", 0, p.vlans[i].tpid)},
         [](const Packet& p) { return p.vlans.size(); },
         [](Packet& p) { p.vlans.emplace_back(); }});
  }
  {
    const std::string L = "LRH";
    s.push_back(
        {L,
         "InfiniBand Local Route Header (native IB); vcrc is the frame's VCRC.",
         {F("vl", 4, p.lrh->vl), F("lver", 4, p.lrh->lver), F("sl", 4, p.lrh->sl),
          F("resv2", 2, p.lrh->resv2), F("lnh", 2, p.lrh->lnh), F("dlid", 0, p.lrh->dlid),
          F("resv5", 5, p.lrh->resv5), FC("pktlen", 11, p.lrh->pkt_len), F("slid", 0, p.lrh->slid)},
         OPTIONAL_LAYER(lrh)});
    FieldSpec vcrc;
    vcrc.name = "vcrc";
    vcrc.computed = true;
    vcrc.get = [](const Packet& p, std::size_t) -> py::object {
      return p.vcrc ? py::object(py::int_(p.vcrc->value)) : py::none();
    };
    vcrc.set = [](Packet& p, std::size_t, py::handle v, Arena&) {
      p.vcrc = Vcrc{static_cast<std::uint16_t>(uint_of(v, "LRH.vcrc", 16)), 0};
    };
    s.back().fields.push_back(vcrc);
  }
  {
    const std::string L = "GRH";
    s.push_back({L,
                 "Global Route Header (RoCEv1 and native IB).",
                 {F("ipver", 4, p.grh->ip_version), F("tclass", 0, p.grh->traffic_class),
                  F("flowlabel", 20, p.grh->flow_label), FC("paylen", 0, p.grh->pay_len),
                  F("nexthdr", 0, p.grh->next_header), F("hoplmt", 0, p.grh->hop_limit),
                  F("sgid", 0, p.grh->sgid), F("dgid", 0, p.grh->dgid)},
                 OPTIONAL_LAYER(grh)});
  }
  {
    const std::string L = "IP";
    LayerSpec ip{L,
                 "IPv4 header (RoCEv2).",
                 {F("version", 4, p.ipv4->version), F("ihl", 4, p.ipv4->ihl)},
                 OPTIONAL_LAYER(ipv4)};
    FieldSpec tos;
    tos.name = "tos";
    tos.get = [](const Packet& p, std::size_t) {
      return py::int_(p.ipv4->dscp << 2 | p.ipv4->ecn);
    };
    tos.set = [](Packet& p, std::size_t, py::handle v, Arena&) {
      const auto t = uint_of(v, "IP.tos", 8);
      p.ipv4->dscp = static_cast<std::uint8_t>(t >> 2);
      p.ipv4->ecn = static_cast<std::uint8_t>(t & 3);
    };
    ip.fields.push_back(tos);
    ip.fields.push_back(FC("len", 0, p.ipv4->total_length));
    ip.fields.push_back(F("id", 0, p.ipv4->id));
    FieldSpec flags;  // Scapy's bits: MF 1, DF 2, evil (reserved) 4; names accepted too
    flags.name = "flags";
    flags.get = [](const Packet& p, std::size_t) {
      return py::int_((p.ipv4->mf ? 1 : 0) | (p.ipv4->df ? 2 : 0) |
                      (p.ipv4->reserved_flag ? 4 : 0));
    };
    flags.set = [](Packet& p, std::size_t, py::handle v, Arena&) {
      std::uint64_t bits = 0;
      if (py::isinstance<py::str>(v)) {
        std::string text = v.cast<std::string>();
        for (char& c : text)
          if (c == '|' || c == ',' || c == '+') c = ' ';
        std::istringstream words(text);
        for (std::string w; words >> w;) {
          if (w == "MF")
            bits |= 1;
          else if (w == "DF")
            bits |= 2;
          else if (w == "evil")
            bits |= 4;
          else
            raise("EncodeError", fmt::format("IP.flags: unknown flag '{}' (MF, DF, evil)", w));
        }
      } else {
        bits = uint_of(v, "IP.flags", 3);
      }
      p.ipv4->mf = bits & 1;
      p.ipv4->df = bits & 2;
      p.ipv4->reserved_flag = bits & 4;
    };
    ip.fields.push_back(flags);
    for (auto f :
         {F("frag", 13, p.ipv4->frag_offset), F("ttl", 0, p.ipv4->ttl),
          F("proto", 0, p.ipv4->protocol), FC("chksum", 0, p.ipv4->checksum),
          F("src", 0, p.ipv4->src), F("dst", 0, p.ipv4->dst), F("options", 0, p.ipv4_options)})
      ip.fields.push_back(f);
    s.push_back(ip);
  }
  {
    const std::string L = "IPv6";
    s.push_back({L,
                 "IPv6 header (RoCEv2).",
                 {F("version", 4, p.ipv6->version), F("tc", 0, p.ipv6->traffic_class),
                  F("fl", 20, p.ipv6->flow_label), FC("plen", 0, p.ipv6->payload_length),
                  F("nh", 0, p.ipv6->next_header), F("hlim", 0, p.ipv6->hop_limit),
                  F("src", 0, p.ipv6->src), F("dst", 0, p.ipv6->dst)},
                 OPTIONAL_LAYER(ipv6)});
  }
  {
    const std::string L = "UDP";
    s.push_back({L,
                 "UDP header; RoCEv2 uses destination port 4791.",
                 {F("sport", 0, p.udp->sport), F("dport", 0, p.udp->dport),
                  FC("len", 0, p.udp->length), F("chksum", 0, p.udp->checksum)},
                 OPTIONAL_LAYER(udp)});
  }
  {
    const std::string L = "BTH";
    s.push_back(
        {L,
         "Base Transport Header; icrc is the frame's ICRC (computed when not given).",
         {F("opcode", 0, p.bth->opcode), F("solicited", 1, p.bth->solicited),
          F("migreq", 1, p.bth->migreq), FC("padcount", 2, p.bth->padcount),
          F("version", 4, p.bth->version), F("pkey", 0, p.bth->pkey), F("fecn", 1, p.bth->fecn),
          F("becn", 1, p.bth->becn), F("resv6", 6, p.bth->resv6), F("dqpn", 24, p.bth->dqpn),
          F("ackreq", 1, p.bth->ackreq), F("resv7", 7, p.bth->resv7), F("psn", 24, p.bth->psn)},
         OPTIONAL_LAYER(bth)});
    FieldSpec icrc;
    icrc.name = "icrc";
    icrc.computed = true;
    icrc.get = [](const Packet& p, std::size_t) -> py::object {
      return p.icrc ? py::object(py::int_(p.icrc->value)) : py::none();
    };
    icrc.set = [](Packet& p, std::size_t, py::handle v, Arena&) {
      p.icrc = Icrc{static_cast<std::uint32_t>(uint_of(v, "BTH.icrc", 32)), 0};
    };
    s.back().fields.push_back(icrc);
  }
  {
    const std::string L = "RDETH";
    s.push_back({L,
                 "Reliable Datagram ETH.",
                 {F("resv", 0, p.rdeth->resv), F("eecnxt", 24, p.rdeth->eecnxt)},
                 OPTIONAL_LAYER(rdeth)});
  }
  {
    const std::string L = "DETH";
    s.push_back(
        {L,
         "Datagram ETH (UD): Q_Key and source QP.",
         {F("qkey", 0, p.deth->qkey), F("resv", 0, p.deth->resv), F("srcqp", 24, p.deth->srcqp)},
         OPTIONAL_LAYER(deth)});
  }
  {
    const std::string L = "XRCETH";
    s.push_back({L,
                 "XRC ETH: the destination XRC SRQ.",
                 {F("resv", 0, p.xrceth->resv), F("xrcsrq", 24, p.xrceth->xrcsrq)},
                 OPTIONAL_LAYER(xrceth)});
  }
  {
    const std::string L = "RETH";
    s.push_back(
        {L,
         "RDMA ETH; dmalen is the payload length on ONLY writes when not given.",
         {F("va", 0, p.reth->va), F("rkey", 0, p.reth->rkey), FC("dmalen", 0, p.reth->dmalen)},
         OPTIONAL_LAYER(reth)});
  }
  {
    const std::string L = "AtomicETH";
    s.push_back({L,
                 "Atomic ETH (COMPARE_SWAP, FETCH_ADD).",
                 {F("va", 0, p.atomiceth->va), F("rkey", 0, p.atomiceth->rkey),
                  F("swap_add", 0, p.atomiceth->swap_add), F("compare", 0, p.atomiceth->compare)},
                 OPTIONAL_LAYER(atomiceth)});
  }
  {
    const std::string L = "AETH";
    s.push_back({L,
                 "ACK ETH: syndrome (ACK, RNR NAK, NAK with its code) and MSN.",
                 {F("syndrome", 0, p.aeth->syndrome), F("msn", 24, p.aeth->msn)},
                 OPTIONAL_LAYER(aeth)});
  }
  {
    const std::string L = "AtomicAckETH";
    s.push_back({L,
                 "Atomic ACK ETH: the original remote data.",
                 {F("orig", 0, p.atomicacketh->orig)},
                 OPTIONAL_LAYER(atomicacketh)});
  }
  {
    const std::string L = "ImmDt";
    s.push_back({L, "Immediate data.", {F("imm", 0, p.immdt->imm)}, OPTIONAL_LAYER(immdt)});
  }
  {
    const std::string L = "IETH";
    s.push_back({L, "Invalidate ETH.", {F("rkey", 0, p.ieth->rkey)}, OPTIONAL_LAYER(ieth)});
  }
  {
    const std::string L = "FETH";
    s.push_back({L,
                 "FLUSH ETH.",
                 {F("resv", 26, p.feth->resv), F("sel", 2, p.feth->sel), F("plt", 4, p.feth->plt)},
                 OPTIONAL_LAYER(feth)});
  }
  {
    const std::string L = "MAD";
    s.push_back({L,
                 "MAD common header (QP1); attr_id follows the CM message when one is stacked.",
                 {F("base_version", 0, p.mad->header.base_version),
                  F("mgmt_class", 0, p.mad->header.mgmt_class),
                  F("class_version", 0, p.mad->header.class_version),
                  F("method", 0, p.mad->header.method), F("status", 0, p.mad->header.status),
                  F("class_specific", 0, p.mad->header.class_specific),
                  F("tid", 0, p.mad->header.tid), F("attr_id", 0, p.mad->header.attr_id),
                  F("resv", 0, p.mad->header.resv), F("attr_mod", 0, p.mad->header.attr_mod)},
                 OPTIONAL_LAYER(mad)});
  }
#define CM(TYPE) std::get<TYPE>(*p.mad->cm)
#define CM_LAYER(TYPE) cm_count<TYPE>, cm_add<TYPE>
  {
    const std::string L = "REQ";
    s.push_back({L,
                 "CM REQ (IBA Table 106).",
                 {F("local_comm_id", 0, CM(CmReq).local_comm_id),
                  F("resv4", 0, CM(CmReq).resv4),
                  F("vendor_id", 24, CM(CmReq).vendor_id),
                  F("service_id", 0, CM(CmReq).service_id),
                  F("local_ca_guid", 0, CM(CmReq).local_ca_guid),
                  F("resv24", 0, CM(CmReq).resv24),
                  F("local_qkey", 0, CM(CmReq).local_qkey),
                  F("local_qpn", 24, CM(CmReq).local_qpn),
                  F("responder_resources", 0, CM(CmReq).responder_resources),
                  F("local_eecn", 24, CM(CmReq).local_eecn),
                  F("initiator_depth", 0, CM(CmReq).initiator_depth),
                  F("remote_eecn", 24, CM(CmReq).remote_eecn),
                  F("remote_cm_response_timeout", 5, CM(CmReq).remote_cm_response_timeout),
                  F("transport_type", 2, CM(CmReq).transport_type),
                  F("end_to_end_flow_control", 1, CM(CmReq).end_to_end_flow_control),
                  F("starting_psn", 24, CM(CmReq).starting_psn),
                  F("local_cm_response_timeout", 5, CM(CmReq).local_cm_response_timeout),
                  F("retry_count", 3, CM(CmReq).retry_count),
                  F("pkey", 0, CM(CmReq).pkey),
                  F("path_mtu", 4, CM(CmReq).path_mtu),
                  F("rdc_exists", 1, CM(CmReq).rdc_exists),
                  F("rnr_retry_count", 3, CM(CmReq).rnr_retry_count),
                  F("max_cm_retries", 4, CM(CmReq).max_cm_retries),
                  F("srq", 1, CM(CmReq).srq),
                  F("extended_transport_type", 3, CM(CmReq).extended_transport_type),
                  PATH_FIELDS("primary_", CM(CmReq).primary),
                  PATH_FIELDS("alternate_", CM(CmReq).alternate),
                  F("sap_supported", 1, CM(CmReq).sap_supported),
                  F("private_data", 0, CM(CmReq).private_data)},
                 CM_LAYER(CmReq)});
  }
  {
    const std::string L = "MRA";
    s.push_back({L,
                 "CM MRA (IBA Table 107).",
                 {F("local_comm_id", 0, CM(CmMra).local_comm_id),
                  F("remote_comm_id", 0, CM(CmMra).remote_comm_id),
                  F("message_mraed", 2, CM(CmMra).message_mraed), F("resv8", 6, CM(CmMra).resv8),
                  F("service_timeout", 5, CM(CmMra).service_timeout),
                  F("resv9", 3, CM(CmMra).resv9), F("private_data", 0, CM(CmMra).private_data)},
                 CM_LAYER(CmMra)});
  }
  {
    const std::string L = "REJ";
    s.push_back(
        {L,
         "CM REJ (IBA Table 108).",
         {F("local_comm_id", 0, CM(CmRej).local_comm_id),
          F("remote_comm_id", 0, CM(CmRej).remote_comm_id),
          F("message_rejected", 2, CM(CmRej).message_rejected), F("resv8", 6, CM(CmRej).resv8),
          F("reject_info_length", 7, CM(CmRej).reject_info_length), F("resv9", 1, CM(CmRej).resv9),
          F("reason", 0, CM(CmRej).reason), F("ari", 0, CM(CmRej).ari),
          F("private_data", 0, CM(CmRej).private_data)},
         CM_LAYER(CmRej)});
  }
  {
    const std::string L = "REP";
    s.push_back(
        {L,
         "CM REP (IBA Table 110).",
         {F("local_comm_id", 0, CM(CmRep).local_comm_id),
          F("remote_comm_id", 0, CM(CmRep).remote_comm_id),
          F("local_qkey", 0, CM(CmRep).local_qkey), F("local_qpn", 24, CM(CmRep).local_qpn),
          F("vendor_id", 24, CM(CmRep).vendor_id), F("local_eecn", 24, CM(CmRep).local_eecn),
          F("starting_psn", 24, CM(CmRep).starting_psn),
          F("responder_resources", 0, CM(CmRep).responder_resources),
          F("initiator_depth", 0, CM(CmRep).initiator_depth),
          F("target_ack_delay", 5, CM(CmRep).target_ack_delay),
          F("failover_accepted", 2, CM(CmRep).failover_accepted),
          F("end_to_end_flow_control", 1, CM(CmRep).end_to_end_flow_control),
          F("rnr_retry_count", 3, CM(CmRep).rnr_retry_count), F("srq", 1, CM(CmRep).srq),
          F("resv27", 4, CM(CmRep).resv27), F("local_ca_guid", 0, CM(CmRep).local_ca_guid),
          F("private_data", 0, CM(CmRep).private_data)},
         CM_LAYER(CmRep)});
  }
  {
    const std::string L = "RTU";
    s.push_back({L,
                 "CM RTU (IBA Table 111).",
                 {F("local_comm_id", 0, CM(CmRtu).local_comm_id),
                  F("remote_comm_id", 0, CM(CmRtu).remote_comm_id),
                  F("private_data", 0, CM(CmRtu).private_data)},
                 CM_LAYER(CmRtu)});
  }
  {
    const std::string L = "DREQ";
    s.push_back({L,
                 "CM DREQ (IBA Table 112).",
                 {F("local_comm_id", 0, CM(CmDreq).local_comm_id),
                  F("remote_comm_id", 0, CM(CmDreq).remote_comm_id),
                  F("remote_qpn", 24, CM(CmDreq).remote_qpn), F("resv11", 0, CM(CmDreq).resv11),
                  F("private_data", 0, CM(CmDreq).private_data)},
                 CM_LAYER(CmDreq)});
  }
  {
    const std::string L = "DREP";
    s.push_back({L,
                 "CM DREP (IBA Table 113).",
                 {F("local_comm_id", 0, CM(CmDrep).local_comm_id),
                  F("remote_comm_id", 0, CM(CmDrep).remote_comm_id),
                  F("private_data", 0, CM(CmDrep).private_data)},
                 CM_LAYER(CmDrep)});
  }
  {
    const std::string L = "SIDR_REQ";
    s.push_back({L,
                 "CM SIDR_REQ (IBA Table 119).",
                 {F("request_id", 0, CM(CmSidrReq).request_id), F("pkey", 0, CM(CmSidrReq).pkey),
                  F("resv6", 0, CM(CmSidrReq).resv6), F("service_id", 0, CM(CmSidrReq).service_id),
                  F("private_data", 0, CM(CmSidrReq).private_data)},
                 CM_LAYER(CmSidrReq)});
  }
  {
    const std::string L = "SIDR_REP";
    s.push_back({L,
                 "CM SIDR_REP (IBA Table 120).",
                 {F("request_id", 0, CM(CmSidrRep).request_id),
                  F("sidr_status", 0, CM(CmSidrRep).sidr_status),
                  F("additional_info_length", 0, CM(CmSidrRep).additional_info_length),
                  F("vendor_id", 24, CM(CmSidrRep).vendor_id), F("qpn", 24, CM(CmSidrRep).qpn),
                  F("service_id", 0, CM(CmSidrRep).service_id), F("qkey", 0, CM(CmSidrRep).qkey),
                  F("additional_info", 0, CM(CmSidrRep).additional_info),
                  F("private_data", 0, CM(CmSidrRep).private_data)},
                 CM_LAYER(CmSidrRep)});
  }
  {
    const std::string L = "LAP";
    s.push_back({L,
                 "CM LAP (IBA Table 115).",
                 {F("local_comm_id", 0, CM(CmLap).local_comm_id),
                  F("remote_comm_id", 0, CM(CmLap).remote_comm_id), F("resv8", 0, CM(CmLap).resv8),
                  F("remote_qpn", 24, CM(CmLap).remote_qpn),
                  F("remote_cm_response_timeout", 5, CM(CmLap).remote_cm_response_timeout),
                  F("resv15", 3, CM(CmLap).resv15), F("resv16", 0, CM(CmLap).resv16),
                  PATH_FIELDS("alternate_", CM(CmLap).alternate),
                  F("private_data", 0, CM(CmLap).private_data)},
                 CM_LAYER(CmLap)});
  }
  {
    const std::string L = "APR";
    s.push_back({L,
                 "CM APR (IBA Table 116).",
                 {F("local_comm_id", 0, CM(CmApr).local_comm_id),
                  F("remote_comm_id", 0, CM(CmApr).remote_comm_id),
                  F("additional_info_length", 0, CM(CmApr).additional_info_length),
                  F("ap_status", 0, CM(CmApr).ap_status), F("resv10", 0, CM(CmApr).resv10),
                  F("additional_info", 0, CM(CmApr).additional_info),
                  F("private_data", 0, CM(CmApr).private_data)},
                 CM_LAYER(CmApr)});
  }
  {
    const std::string L = "ClassPortInfo";
    s.push_back({L,
                 "CM ClassPortInfo (IBA 13.4.8.1).",
                 {F("base_version", 0, CM(ClassPortInfo).base_version),
                  F("class_version", 0, CM(ClassPortInfo).class_version),
                  F("capability_mask", 0, CM(ClassPortInfo).capability_mask),
                  F("capability_mask2", 27, CM(ClassPortInfo).capability_mask2),
                  F("resp_time_value", 5, CM(ClassPortInfo).resp_time_value),
                  F("redirect_gid", 0, CM(ClassPortInfo).redirect_gid),
                  F("redirect_tc", 0, CM(ClassPortInfo).redirect_tc),
                  F("redirect_sl", 4, CM(ClassPortInfo).redirect_sl),
                  F("redirect_flow_label", 20, CM(ClassPortInfo).redirect_flow_label),
                  F("redirect_lid", 0, CM(ClassPortInfo).redirect_lid),
                  F("redirect_pkey", 0, CM(ClassPortInfo).redirect_pkey),
                  F("resv32", 0, CM(ClassPortInfo).resv32),
                  F("redirect_qp", 24, CM(ClassPortInfo).redirect_qp),
                  F("redirect_qkey", 0, CM(ClassPortInfo).redirect_qkey),
                  F("trap_gid", 0, CM(ClassPortInfo).trap_gid),
                  F("trap_tc", 0, CM(ClassPortInfo).trap_tc),
                  F("trap_sl", 0, CM(ClassPortInfo).trap_sl),
                  F("trap_flow_label", 20, CM(ClassPortInfo).trap_flow_label),
                  F("trap_lid", 0, CM(ClassPortInfo).trap_lid),
                  F("trap_pkey", 0, CM(ClassPortInfo).trap_pkey),
                  F("trap_hop_limit", 0, CM(ClassPortInfo).trap_hop_limit),
                  F("trap_qp", 24, CM(ClassPortInfo).trap_qp),
                  F("trap_qkey", 0, CM(ClassPortInfo).trap_qkey),
                  F("reserved", 0, CM(ClassPortInfo).reserved)},
                 CM_LAYER(ClassPortInfo)});
  }
  {
    const std::string L = "Raw";
    s.push_back({L,
                 "The payload after the transport headers (without pad and ICRC).",
                 {F("load", 0, p.payload)},
                 [](const Packet& p) -> std::size_t { return !p.payload.empty() && !p.mad; },
                 [](Packet&) {}});
  }
  return s;
}

}  // namespace

const FieldSpec* LayerSpec::field(std::string_view name) const {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

const std::vector<LayerSpec>& layer_specs() {
  static const std::vector<LayerSpec> specs = make_specs();
  return specs;
}

const LayerSpec* find_layer(std::string_view cls) {
  for (const auto& l : layer_specs())
    if (l.cls == cls) return &l;
  return nullptr;
}

void register_layers(py::module_& m) {
  // [(class name, doc, [(field, default, computed)])]: errors.py's classes are built from it.
  m.def(
      "layer_table",
      [] {
        py::list out;
        for (const auto& l : layer_specs()) {
          Packet p;
          l.add(p);
          py::list fields;
          for (const auto& f : l.fields)
            fields.append(
                py::make_tuple(f.name, f.computed ? py::none() : f.get(p, 0), f.computed));
          out.append(py::make_tuple(l.cls, l.doc, fields));
        }
        return out;
      },
      "The header classes: (name, doc, [(field, default, computed)]) in wire order.");
}

}  // namespace roceconf::python
