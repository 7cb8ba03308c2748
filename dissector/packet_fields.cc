// The field vocabulary of a decoded packet: names follow Scapy where Scapy has the field.
#include "dissector/names.h"
#include "dissector/packet.h"

namespace roceconf {

namespace {

class Emitter {
 public:
  explicit Emitter(FieldSink& sink) : sink_(sink) {}
  Emitter& layer(std::string_view l) {
    layer_ = l;
    return *this;
  }
  Emitter& u(std::string_view name, std::uint64_t v) {
    sink_.field(layer_, name, FieldValue{v});
    return *this;
  }
  Emitter& b(std::string_view name, bool v) {
    sink_.field(layer_, name, FieldValue{v});
    return *this;
  }
  Emitter& s(std::string_view name, std::string_view v) {
    sink_.field(layer_, name, FieldValue{v});
    return *this;
  }
  Emitter& a(std::string_view name, Bytes v) {
    sink_.field(layer_, name, FieldValue{Address{v}});
    return *this;
  }

 private:
  FieldSink& sink_;
  std::string_view layer_;
};

}  // namespace

void visit_fields(const Packet& p, FieldSink& sink) {
  Emitter e(sink);
  if (p.eth) e.layer("eth").a("dst", p.eth->dst).a("src", p.eth->src).u("type", p.eth->type);
  for (const Vlan& v : p.vlans)
    e.layer("vlan").u("prio", v.pcp).b("dei", v.dei).u("vlan", v.vid).u("type", v.type);
  if (p.ipv4) {
    const Ipv4& i = *p.ipv4;
    e.layer("ipv4").u("version", i.version).u("ihl", i.ihl).u("dscp", i.dscp).u("ecn", i.ecn);
    e.u("len", i.total_length).u("id", i.id).b("df", i.df).b("mf", i.mf).u("frag", i.frag_offset);
    e.u("ttl", i.ttl)
        .u("proto", i.protocol)
        .u("chksum", i.checksum)
        .a("src", i.src)
        .a("dst", i.dst);
  }
  if (p.ipv6) {
    const Ipv6& i = *p.ipv6;
    e.layer("ipv6").u("version", i.version).u("tc", i.traffic_class).u("fl", i.flow_label);
    e.u("plen", i.payload_length).u("nh", i.next_header).u("hlim", i.hop_limit);
    e.a("src", i.src).a("dst", i.dst);
  }
  if (p.udp) {
    e.layer("udp").u("sport", p.udp->sport).u("dport", p.udp->dport).u("len", p.udp->length);
    e.u("chksum", p.udp->checksum);
  }
  if (p.lrh) {
    const Lrh& l = *p.lrh;
    e.layer("lrh").u("vl", l.vl).u("lver", l.lver).u("sl", l.sl).u("lnh", l.lnh);
    e.u("dlid", l.dlid).u("pktlen", l.pkt_len).u("slid", l.slid);
  }
  if (p.grh) {
    const Grh& g = *p.grh;
    e.layer("grh")
        .u("ipver", g.ip_version)
        .u("tclass", g.traffic_class)
        .u("flowlabel", g.flow_label);
    e.u("paylen", g.pay_len).u("nexthdr", g.next_header).u("hoplmt", g.hop_limit);
    e.a("sgid", g.sgid).a("dgid", g.dgid);
  }
  if (p.bth) {
    const Bth& b = *p.bth;
    const OpcodeInfo& op = opcode_info(b.opcode);
    e.layer("bth")
        .u("opcode", b.opcode)
        .s("opcode_name", op.name)
        .s("service", service_name(op.service));
    e.b("solicited", b.solicited).b("migreq", b.migreq).u("padcount", b.padcount);
    e.u("version", b.version).u("pkey", b.pkey).b("fecn", b.fecn).b("becn", b.becn);
    e.u("resv6", b.resv6)
        .u("dqpn", b.dqpn)
        .b("ackreq", b.ackreq)
        .u("resv7", b.resv7)
        .u("psn", b.psn);
  }
  if (p.rdeth) e.layer("rdeth").u("eecnxt", p.rdeth->eecnxt);
  if (p.deth) e.layer("deth").u("qkey", p.deth->qkey).u("srcqp", p.deth->srcqp);
  if (p.xrceth) e.layer("xrceth").u("xrcsrq", p.xrceth->xrcsrq);
  if (p.feth) e.layer("feth").u("sel", p.feth->sel).u("plt", p.feth->plt);
  if (p.reth)
    e.layer("reth").u("va", p.reth->va).u("rkey", p.reth->rkey).u("dmalen", p.reth->dmalen);
  if (p.atomiceth) {
    const AtomicEth& a = *p.atomiceth;
    e.layer("atomiceth").u("va", a.va).u("rkey", a.rkey).u("swap_add", a.swap_add);
    e.u("compare", a.compare);
  }
  if (p.aeth) {
    const std::uint8_t s = p.aeth->syndrome;
    e.layer("aeth").u("syndrome", s).s("syndrome_name", syndrome_name(s)).u("msn", p.aeth->msn);
    if (!syndrome_reserved(s) && aeth_type(s) == AethType::kAck) {
      if (auto c = ack_credits(aeth_value(s))) e.u("credits", *c);
    } else if (!syndrome_reserved(s) && aeth_type(s) == AethType::kRnrNak) {
      e.u("rnr_timer_usec", rnr_timer_usec(aeth_value(s)));
    }
  }
  if (p.atomicacketh) e.layer("atomicacketh").u("orig", p.atomicacketh->orig);
  if (p.immdt) e.layer("immdt").u("imm", p.immdt->imm);
  if (p.ieth) e.layer("ieth").u("rkey", p.ieth->rkey);
  if (p.bth) e.layer("payload").u("length", p.payload.size());
  if (p.mad) visit_mad_fields(*p.mad, sink);
  if (p.icrc)
    e.layer("icrc").u("value", p.icrc->value).u("expected", p.icrc->expected).b("ok", p.icrc->ok());
  if (p.vcrc)
    e.layer("vcrc").u("value", p.vcrc->value).u("expected", p.vcrc->expected).b("ok", p.vcrc->ok());
}

}  // namespace roceconf
