#include "dissector/summary.h"

#include <iterator>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "dissector/names.h"

namespace roceconf {

namespace {

using Out = fmt::memory_buffer;

template <typename... Args>
void put(Out& out, fmt::format_string<Args...> fs, Args&&... args) {
  fmt::format_to(std::back_inserter(out), fs, std::forward<Args>(args)...);
}

void put_address(Out& out, Bytes a) {
  put(out, "{}", format_address(a));
}

void put_route(Out& out, const Packet& p) {
  if (p.ipv4) {
    put_address(out, p.ipv4->src);
    put(out, " → ");
    put_address(out, p.ipv4->dst);
  } else if (p.ipv6) {
    put_address(out, p.ipv6->src);
    put(out, " → ");
    put_address(out, p.ipv6->dst);
  } else if (p.grh) {
    put_address(out, p.grh->sgid);
    put(out, " → ");
    put_address(out, p.grh->dgid);
  } else if (p.lrh) {
    put(out, "LID {} → LID {}", p.lrh->slid, p.lrh->dlid);
  }
}

void put_cm(Out& out, const CmMessage& msg) {
  put(out, " CM {}", cm_message_name(msg));
  std::visit(
      [&](const auto& m) {
        using M = std::decay_t<decltype(m)>;
        if constexpr (requires { m.local_comm_id; }) put(out, " local=0x{:08x}", m.local_comm_id);
        if constexpr (requires { m.remote_comm_id; })
          put(out, " remote=0x{:08x}", m.remote_comm_id);
        if constexpr (requires { m.request_id; }) put(out, " request=0x{:08x}", m.request_id);
        if constexpr (requires { m.local_qpn; }) put(out, " qpn=0x{:06x}", m.local_qpn);
        if constexpr (requires { m.starting_psn; }) put(out, " start_psn={}", m.starting_psn);
        if constexpr (std::is_same_v<M, CmRej>) {
          put(out, " reason={}", m.reason);
          if (auto name = rej_reason_name(m.reason); !name.empty()) put(out, " ({})", name);
        }
        if constexpr (std::is_same_v<M, CmSidrRep>) {
          put(out, " status={}", m.sidr_status);
          if (auto name = sidr_status_name(m.sidr_status); !name.empty()) put(out, " ({})", name);
        }
        if constexpr (std::is_same_v<M, CmApr>) {
          put(out, " status={}", m.ap_status);
          if (auto name = apr_status_name(m.ap_status); !name.empty()) put(out, " ({})", name);
        }
      },
      msg);
}

void put_mad(Out& out, const Mad& mad) {
  if (mad.cm) {
    put_cm(out, *mad.cm);
    return;
  }
  const MadHeader& h = mad.header;
  put(out, " MAD class=0x{:02x} method=0x{:02x} attr=0x{:04x}", h.mgmt_class, h.method, h.attr_id);
}

void put_transport(Out& out, const Packet& p, bool icrc_checked) {
  const Bth& b = *p.bth;
  const OpcodeInfo& op = opcode_info(b.opcode);
  if (!op.valid || op.name.empty())  // "RESERVED" says less than the number
    put(out, " opcode=0x{:02x}", b.opcode);
  else
    put(out, " {}", op.name);
  put(out, " QP=0x{:06x} PSN={}", b.dqpn, b.psn);
  if (b.fecn) put(out, " FECN");
  if (b.becn) put(out, " BECN");
  if (p.deth) put(out, " qkey=0x{:08x} srcqp=0x{:06x}", p.deth->qkey, p.deth->srcqp);
  if (p.reth) put(out, " va=0x{:x} rkey=0x{:x} len={}", p.reth->va, p.reth->rkey, p.reth->dmalen);
  if (p.atomiceth)
    put(out, " va=0x{:x} rkey=0x{:x} swap_add=0x{:x} compare=0x{:x}", p.atomiceth->va,
        p.atomiceth->rkey, p.atomiceth->swap_add, p.atomiceth->compare);
  if (p.aeth) put(out, " {} msn={}", syndrome_name(p.aeth->syndrome), p.aeth->msn);
  if (p.atomicacketh) put(out, " orig=0x{:x}", p.atomicacketh->orig);
  if (p.immdt) put(out, " imm=0x{:08x}", p.immdt->imm);
  if (p.ieth) put(out, " inv_rkey=0x{:x}", p.ieth->rkey);
  if (p.mad) put_mad(out, *p.mad);
  if (p.icrc) put(out, " ICRC {}", !icrc_checked ? "unchecked" : p.icrc->ok() ? "ok" : "bad");
  if (p.vcrc) put(out, " VCRC {}", p.vcrc->ok() ? "ok" : "bad");
}

// Frames that carry no RoCE: say what they are instead.
void put_other(Out& out, const Packet& p) {
  put(out, "non-RoCE: ");
  if (p.udp) {
    if (p.ipv4 || p.ipv6) {
      put(out, "UDP ");
      put_address(out, p.ipv4 ? Bytes(p.ipv4->src) : Bytes(p.ipv6->src));
      put(out, ":{} → ", p.udp->sport);
      put_address(out, p.ipv4 ? Bytes(p.ipv4->dst) : Bytes(p.ipv6->dst));
      put(out, ":{}", p.udp->dport);
    }
  } else if (p.ipv4) {
    put(out, "IPv4 ");
    put_route(out, p);
    put(out, " proto {}", p.ipv4->protocol);
  } else if (p.ipv6) {
    put(out, "IPv6 ");
    put_route(out, p);
    put(out, " next header {}", p.ipv6->next_header);
  } else if (p.eth) {
    const std::uint16_t type = p.vlans.empty() ? p.eth->type : p.vlans.back().type;
    put(out, "eth type 0x{:04x}", type);
  } else {
    put(out, "nothing decoded");
  }
}

void put_findings(Out& out, const Findings& findings) {
  if (findings.empty()) return;
  put(out, " [");
  for (std::size_t i = 0; i < findings.size(); ++i) {
    bool seen = false;  // one mention per code is enough for a summary
    for (std::size_t j = 0; j < i && !seen; ++j) seen = findings[j].code == findings[i].code;
    if (seen) continue;
    put(out, "{}{}", i == 0 ? "" : ", ", findings[i].code_name());
  }
  put(out, "]");
}

}  // namespace

std::string_view framing_name(Framing framing) {
  switch (framing) {
    case Framing::kRoceV2:
      return "RoCEv2";
    case Framing::kRoceV1:
      return "RoCEv1";
    case Framing::kInfiniBand:
      return "IB";
    case Framing::kNone:
      break;
  }
  return "none";
}

std::string summarize(const Packet& p, bool icrc_checked) {
  Out out;
  if (p.framing == Framing::kNone) {
    put_other(out, p);
  } else {
    put_route(out, p);
    put(out, "{}{}", out.size() == 0 ? "" : " ", framing_name(p.framing));
    if (p.bth)
      put_transport(out, p, icrc_checked);
    else
      put(out, " (no BTH)");
  }
  put_findings(out, p.findings);
  return fmt::to_string(out);
}

}  // namespace roceconf
