// Over 600 lines: one handler per control op of the reference NIC.
#include "suite/reference_nic/control_api.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "control/fields.h"
#include "control/lines.h"
#include "control/ops.h"
#include "control/verbs_names.h"
#include "dissector/address_text.h"
#include "dissector/mad/rdma_cm.h"
#include "suite/reference_nic/cm_agent.h"

namespace roceconf::target {

using control::dump_line;
using control::fail;
using control::Fields;
using control::RequestError;
using control::shown;
using control::to_hex;
namespace keys = control::keys;

// One QP's connection as cm_connect started it, from the agent's connect callbacks.
struct CmStatusEntry {
  std::string state = "connecting";     // connecting, established, rejected, timed_out,
                                        // disconnecting, disconnected
  std::optional<std::uint16_t> reason;  // REJ reason (rejected)
  std::optional<std::uint32_t> comm_id;
  std::optional<std::uint32_t> remote_qpn;  // from the REP (established)
  std::uint64_t generation = 0;             // which cm_connect the entry belongs to
};

struct CmStatusTable {
  std::map<std::uint32_t, CmStatusEntry> by_qp;
  std::uint64_t generation = 0;
  std::uint64_t draws = 0;  // default starting PSNs and agent seeds drawn so far
};

namespace {

using json = nlohmann::json;

struct VerbsFailure {
  VerbsError error;
  std::optional<std::size_t> bad_wr;
};

template <typename T>
T check(VerbsResult<T> result) {
  if (!result) throw VerbsFailure{std::move(result.error()), std::nullopt};
  if constexpr (!std::is_void_v<T>) return std::move(*result);
}

// ---- names of flags and enums the verbs model has no table for -----------------------------

struct FlagName {
  std::uint32_t bit;
  std::string_view name;
};
constexpr std::array<FlagName, 4> kSendFlags = {{{send_flag::kFence, "FENCE"},
                                                 {send_flag::kSignaled, "SIGNALED"},
                                                 {send_flag::kSolicited, "SOLICITED"},
                                                 {send_flag::kInline, "INLINE"}}};
constexpr std::array<FlagName, 4> kWcFlags = {{{wc_flag::kGrh, "GRH"},
                                               {wc_flag::kWithImm, "WITH_IMM"},
                                               {wc_flag::kIpCsumOk, "IP_CSUM_OK"},
                                               {wc_flag::kWithInv, "WITH_INV"}}};
constexpr std::array<FlagName, 5> kAccessFlags = {{{access::kLocalWrite, "LOCAL_WRITE"},
                                                   {access::kRemoteWrite, "REMOTE_WRITE"},
                                                   {access::kRemoteRead, "REMOTE_READ"},
                                                   {access::kRemoteAtomic, "REMOTE_ATOMIC"},
                                                   {access::kMwBind, "MW_BIND"}}};
constexpr std::array<std::string_view, 3> kMigStates = {"MIGRATED", "REARM", "ARMED"};

template <std::size_t N>
json flag_list(std::uint32_t flags, const std::array<FlagName, N>& table) {
  json out = json::array();
  for (const FlagName& f : table)
    if (flags & f.bit) out.push_back(f.name);
  if (std::uint32_t unknown = flags; unknown != 0) {
    for (const FlagName& f : table) unknown &= ~f.bit;
    if (unknown) out.push_back(fmt::format("{:#x}", unknown));
  }
  return out;
}

// A list of flag names (["SIGNALED", "SOLICITED"]); a number is taken as the raw bits, so a
// tester can also send bits the names do not cover.
template <std::size_t N>
std::uint32_t parse_flags(const Fields& f, std::string_view key,
                          const std::array<FlagName, N>& table) {
  if (!f.has(key)) return 0;
  const json& v = f.at(key);
  if (!v.is_array())
    return static_cast<std::uint32_t>(Fields::to_unsigned(v, f.path(key), UINT32_MAX));
  std::uint32_t flags = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const json& name = v[i];
    const auto it =
        name.is_string()
            ? std::find_if(table.begin(), table.end(),
                           [&](const FlagName& fl) { return fl.name == name.get<std::string>(); })
            : table.end();
    if (it == table.end()) {
      std::string known;
      for (const FlagName& fl : table)
        known += fmt::format("{}{}", known.empty() ? "" : ", ", fl.name);
      fail("{}[{}]: {} is not a flag name (known: {})", f.path(key), i, shown(name), known);
    }
    flags |= it->bit;
  }
  return flags;
}

PathMtu parse_path_mtu(const Fields& f, std::string_view key) {
  // The ibv_mtu value (1-5) or the size in bytes (256-4096): the ranges do not overlap.
  const std::uint64_t v = f.u(key, UINT32_MAX);
  if (path_mtu_valid(static_cast<std::uint8_t>(v)) && v <= 5) return static_cast<PathMtu>(v);
  if (const auto mtu = path_mtu_from_bytes(static_cast<std::uint32_t>(v))) return *mtu;
  fail("{}: {} is not a path MTU (256, 512, 1024, 2048, 4096, or the ibv_mtu value 1-5)",
       f.path(key), v);
}

QpState parse_state(const Fields& f, std::string_view key) {
  const std::string name = f.text(key);
  if (const auto s = qp_state_from_name(name)) return *s;
  fail("{}: '{}' is not a QP state (RESET, INIT, RTR, RTS, SQD, SQE, ERR)", f.path(key), name);
}

// ---- JSON forms of the verbs structures ------------------------------------------------------

json av_json(const AddressVector& av) {
  return {{"dgid", format_gid(av.dgid)},       {"flow_label", av.flow_label},
          {"sgid_index", av.sgid_index},       {"hop_limit", av.hop_limit},
          {"traffic_class", av.traffic_class}, {"sl", av.sl},
          {"port_num", av.port_num},           {"static_rate", av.static_rate},
          {"dmac", format_mac(av.dmac)},       {"udp_sport", av.udp_sport}};
}

AddressVector parse_av(const json& v, const std::string& where) {
  const Fields f(v, where);
  f.only(keys::kAddressVector);
  AddressVector av;
  const std::string dgid = f.text("dgid");
  const auto gid = parse_gid(dgid);
  if (!gid) fail("{}: '{}' is not an IPv4 or IPv6 address", f.path("dgid"), dgid);
  av.dgid = *gid;
  // No neighbour resolution here: the tester names the peer's MAC, as rdma_cm would have found.
  const std::string dmac = f.text("dmac");
  const auto mac = parse_mac(dmac);
  if (!mac) fail("{}: '{}' is not a MAC address (aa:bb:cc:dd:ee:ff)", f.path("dmac"), dmac);
  av.dmac = *mac;
  av.flow_label = static_cast<std::uint32_t>(f.u("flow_label", 0xFFFFF, 0));
  av.sgid_index = static_cast<std::uint8_t>(f.u("sgid_index", UINT8_MAX, av.sgid_index));
  av.hop_limit = static_cast<std::uint8_t>(f.u("hop_limit", UINT8_MAX, av.hop_limit));
  av.traffic_class = static_cast<std::uint8_t>(f.u("traffic_class", UINT8_MAX, av.traffic_class));
  av.sl = static_cast<std::uint8_t>(f.u("sl", UINT8_MAX, av.sl));
  av.port_num = static_cast<std::uint8_t>(f.u("port_num", UINT8_MAX, av.port_num));
  av.static_rate = static_cast<std::uint8_t>(f.u("static_rate", UINT8_MAX, av.static_rate));
  av.udp_sport = static_cast<std::uint16_t>(f.u("udp_sport", UINT16_MAX, av.udp_sport));
  return av;
}

json cap_json(const QpCap& c) {
  return {{"max_send_wr", c.max_send_wr},
          {"max_recv_wr", c.max_recv_wr},
          {"max_send_sge", c.max_send_sge},
          {"max_recv_sge", c.max_recv_sge},
          {"max_inline_data", c.max_inline_data}};
}

QpCap parse_cap(const json& v, const std::string& where) {
  const Fields f(v, where);
  f.only(keys::kQpCap);
  QpCap c;
  c.max_send_wr = f.u32("max_send_wr", c.max_send_wr);
  c.max_recv_wr = f.u32("max_recv_wr", c.max_recv_wr);
  c.max_send_sge = f.u32("max_send_sge", c.max_send_sge);
  c.max_recv_sge = f.u32("max_recv_sge", c.max_recv_sge);
  c.max_inline_data = f.u32("max_inline_data", c.max_inline_data);
  return c;
}

json qp_attr_json(const QpAttr& a) {
  return {{"qp_state", qp_state_name(a.qp_state)},
          {"cur_qp_state", qp_state_name(a.cur_qp_state)},
          {"path_mtu", path_mtu_bytes(a.path_mtu)},
          {"path_mig_state", kMigStates.at(static_cast<std::size_t>(a.path_mig_state))},
          {"qkey", a.qkey},
          {"rq_psn", a.rq_psn},
          {"sq_psn", a.sq_psn},
          {"dest_qp_num", a.dest_qp_num},
          {"qp_access_flags", flag_list(a.qp_access_flags, kAccessFlags)},
          {"cap", cap_json(a.cap)},
          {"ah_attr", av_json(a.ah_attr)},
          {"alt_ah_attr", av_json(a.alt_ah_attr)},
          {"pkey_index", a.pkey_index},
          {"alt_pkey_index", a.alt_pkey_index},
          {"en_sqd_async_notify", a.en_sqd_async_notify},
          {"sq_draining", a.sq_draining},
          {"max_rd_atomic", a.max_rd_atomic},
          {"max_dest_rd_atomic", a.max_dest_rd_atomic},
          {"min_rnr_timer", a.min_rnr_timer},
          {"port_num", a.port_num},
          {"timeout", a.timeout},
          {"retry_cnt", a.retry_cnt},
          {"rnr_retry", a.rnr_retry},
          {"alt_port_num", a.alt_port_num},
          {"alt_timeout", a.alt_timeout}};
}

// The attributes present in `v` and the mask they make (ibv_modify_qp's attr and attr_mask).
std::pair<QpAttr, QpAttrMask> parse_qp_attr(const json& v, const std::string& where) {
  const Fields f(v, where);
  f.only(keys::kQpAttr);
  QpAttr a;
  QpAttrMask mask = 0;
  for (const auto& [key, value] : v.items()) {
    if (const auto bit = qp_attr_mask_from_name(key)) mask |= *bit;
  }
  if (f.has("qp_state")) a.qp_state = parse_state(f, "qp_state");
  if (f.has("cur_qp_state")) a.cur_qp_state = parse_state(f, "cur_qp_state");
  a.en_sqd_async_notify = f.boolean("en_sqd_async_notify", false);
  a.qp_access_flags = parse_flags(f, "qp_access_flags", kAccessFlags);
  if (f.has("pkey_index")) a.pkey_index = f.u16("pkey_index");
  if (f.has("port_num")) a.port_num = f.u8("port_num");
  if (f.has("qkey")) a.qkey = f.u32("qkey");
  if (f.has("ah_attr")) a.ah_attr = parse_av(f.at("ah_attr"), f.path("ah_attr"));
  if (f.has("path_mtu")) a.path_mtu = parse_path_mtu(f, "path_mtu");
  if (f.has("timeout")) a.timeout = f.u8("timeout");
  if (f.has("retry_cnt")) a.retry_cnt = f.u8("retry_cnt");
  if (f.has("rnr_retry")) a.rnr_retry = f.u8("rnr_retry");
  if (f.has("rq_psn")) a.rq_psn = f.u32("rq_psn");
  if (f.has("max_rd_atomic")) a.max_rd_atomic = f.u8("max_rd_atomic");
  if (f.has("alt_ah_attr")) a.alt_ah_attr = parse_av(f.at("alt_ah_attr"), f.path("alt_ah_attr"));
  if (f.has("alt_pkey_index")) a.alt_pkey_index = f.u16("alt_pkey_index");
  if (f.has("alt_port_num")) a.alt_port_num = f.u8("alt_port_num");
  if (f.has("alt_timeout")) a.alt_timeout = f.u8("alt_timeout");
  if (f.has("min_rnr_timer")) a.min_rnr_timer = f.u8("min_rnr_timer");
  if (f.has("sq_psn")) a.sq_psn = f.u32("sq_psn");
  if (f.has("max_dest_rd_atomic")) a.max_dest_rd_atomic = f.u8("max_dest_rd_atomic");
  if (f.has("path_mig_state")) {
    const std::string name = f.text("path_mig_state");
    const auto it = std::find(kMigStates.begin(), kMigStates.end(), name);
    if (it == kMigStates.end())
      fail("{}: '{}' is not MIGRATED, REARM or ARMED", f.path("path_mig_state"), name);
    a.path_mig_state = static_cast<MigState>(it - kMigStates.begin());
  }
  if (f.has("cap")) a.cap = parse_cap(f.at("cap"), f.path("cap"));
  if (f.has("dest_qp_num")) a.dest_qp_num = f.u32("dest_qp_num");
  return {a, mask};
}

std::vector<Sge> parse_sg_list(const Fields& f) {
  std::vector<Sge> out;
  if (!f.has("sg_list")) return out;
  const json& list = f.array("sg_list");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Fields s(list[i], fmt::format("{}[{}]", f.path("sg_list"), i));
    s.only(keys::kSge);
    out.push_back(
        Sge{.addr = s.u("addr", UINT64_MAX), .length = s.u32("length"), .lkey = s.u32("lkey")});
  }
  return out;
}

SendWr parse_send_wr(const json& v, const std::string& where) {
  const Fields f(v, where);
  f.only(keys::kSendWr);
  SendWr wr;
  wr.wr_id = f.u("wr_id", UINT64_MAX, 0);
  const std::string opcode = f.text("opcode");
  const auto op = wr_opcode_from_name(opcode);
  if (!op)
    fail("{}: '{}' is not a send opcode (SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_READ, ...)",
         f.path("opcode"), opcode);
  wr.opcode = *op;
  wr.send_flags = parse_flags(f, "send_flags", kSendFlags);
  wr.sg_list = parse_sg_list(f);
  if (f.has("inline_data")) {
    if (!(wr.send_flags & send_flag::kInline))
      fail("{}: inline_data needs the INLINE send flag", f.path("inline_data"));
    wr.inline_data = f.hex("inline_data");
  }
  wr.imm_data = f.u32("imm_data", 0);
  wr.invalidate_rkey = f.u32("invalidate_rkey", 0);
  if (f.has("rdma")) {
    const Fields r(f.at("rdma"), f.path("rdma"));
    r.only(keys::kRdma);
    wr.rdma.remote_addr = r.u("remote_addr", UINT64_MAX);
    wr.rdma.rkey = r.u32("rkey");
  }
  if (f.has("atomic")) {
    const Fields a(f.at("atomic"), f.path("atomic"));
    a.only(keys::kAtomic);
    wr.atomic.remote_addr = a.u("remote_addr", UINT64_MAX);
    wr.atomic.compare_add = a.u("compare_add", UINT64_MAX, 0);
    wr.atomic.swap = a.u("swap", UINT64_MAX, 0);
    wr.atomic.rkey = a.u32("rkey");
  }
  if (f.has("bind_mw")) {
    const Fields b(f.at("bind_mw"), f.path("bind_mw"));
    b.only(keys::kBindMwWr);
    wr.bind_mw.mw = b.u32("mw");
    if (b.has("rkey")) wr.bind_mw.rkey = b.u32("rkey");
    wr.bind_mw.mr = b.u32("mr", 0);
    wr.bind_mw.addr = b.u("addr", UINT64_MAX, 0);
    wr.bind_mw.length = b.u("length", UINT64_MAX, 0);
    wr.bind_mw.access = parse_flags(b, "access", kAccessFlags);
    wr.bind_mw.zero_based = b.boolean("zero_based", false);
  } else if (wr.opcode == WrOpcode::kBindMw) {
    fail("{}: a BIND_MW work request needs 'bind_mw'", f.where());
  }
  if (f.has("ud")) {
    const Fields u(f.at("ud"), f.path("ud"));
    u.only(keys::kUd);
    wr.ud.ah = parse_av(u.at("ah"), u.path("ah"));
    wr.ud.remote_qpn = static_cast<std::uint32_t>(u.u("remote_qpn", 0xFFFFFF));
    wr.ud.remote_qkey = u.u32("remote_qkey");
  }
  return wr;
}

RecvWr parse_recv_wr(const json& v, const std::string& where) {
  const Fields f(v, where);
  f.only(keys::kRecvWr);
  return RecvWr{.wr_id = f.u("wr_id", UINT64_MAX, 0), .sg_list = parse_sg_list(f)};
}

json cqe_json(const Cqe& c) {
  return {{"wr_id", c.wr_id},
          {"status", wc_status_name(c.status)},
          {"opcode", wc_opcode_name(c.opcode)},
          {"vendor_err", c.vendor_err},
          {"byte_len", c.byte_len},
          {"imm_data", c.imm_data},
          {"qp_num", c.qp_num},
          {"src_qp", c.src_qp},
          {"wc_flags", flag_list(c.wc_flags, kWcFlags)},
          {"pkey_index", c.pkey_index},
          {"slid", c.slid},
          {"sl", c.sl},
          {"dlid_path_bits", c.dlid_path_bits}};
}

// ---- the ops ---------------------------------------------------------------------------------

// Largest read_mr answer: keeps one response line within what a client reasonably buffers.
constexpr std::uint64_t kMaxReadBytes = 1u << 20;
constexpr std::uint64_t kMaxPoll = 4096;

// A value for the control API's own choices (default starting PSNs, agent seeds): derived from
// the node GUID and a counter, so two runs of the same requests repeat exactly.
std::uint64_t draw(const Device& dev, CmStatusTable& table) {
  std::uint64_t z = dev.attr().node_guid + 0x9E3779B97F4A7C15ull * ++table.draws;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Applies `change` to the QP's status when it still belongs to cm_connect number `generation`
// (a later cm_connect or destroy_qp of the QP makes older callbacks stale).
template <typename F>
void update_status(const std::weak_ptr<CmStatusTable>& weak, std::uint32_t qp_num,
                   std::uint64_t generation, F&& change) {
  const auto table = weak.lock();
  if (!table) return;
  const auto it = table->by_qp.find(qp_num);
  if (it == table->by_qp.end() || it->second.generation != generation) return;
  change(it->second);
}

class Ops {
 public:
  Ops(Nic& nic, std::shared_ptr<CmStatusTable> cm_status, bool& reset_requested,
      const std::function<std::int64_t()>& unix_now)
      : nic_(nic),
        dev_(nic.device()),
        cm_status_(std::move(cm_status)),
        reset_requested_(reset_requested),
        unix_now_(unix_now) {}

  json hello(const Fields& f) {
    f.only(keys::kNone);
    const DeviceAttr& a = dev_.attr();
    const Port& port = dev_.port();
    json gids = json::array();
    for (std::uint32_t i = 0; i < port.gid_table.size(); ++i) {
      if (const GidEntry* e = port.gid_table.at(i)) {
        json entry = {{"index", i}, {"gid", format_gid(e->gid)}};
        // The gid-type-unreported defect: a table without types, as before GID types existed.
        if (!dev_.quirks().has(Quirk::kGidTypeUnreported))
          entry["type"] = gid_type_name(e->gid_type);
        gids.push_back(std::move(entry));
      }
    }
    json pkeys = json::array();
    for (std::uint32_t i = 0; i < port.pkey_table.size(); ++i)
      pkeys.push_back(*port.pkey_table.at(i));
    json ops = json::array();
    for (std::string_view op : ControlApi::ops()) ops.push_back(op);
    // The port-lid-reported and client-rereg-advertised defects: IB port attributes on RoCE.
    const std::uint16_t lid = dev_.quirks().has(Quirk::kPortLidReported) ? 1 : port.attr.lid;
    std::uint32_t caps = port.attr.port_cap_flags;
    if (dev_.quirks().has(Quirk::kClientReregAdvertised)) caps |= 1u << 25;
    return {{"target", "roceconf reference NIC"},
            {"protocol", ControlApi::kProtocolVersion},
            {"ops", ops},
            {"quirks", active_quirks()},
            {"device",
             {{"node_guid", fmt::format("{:#018x}", a.node_guid)},
              {"max_qp", a.max_qp},
              {"max_cq", a.max_cq},
              {"max_cqe", a.max_cqe},
              {"max_pd", a.max_pd},
              {"max_mr", a.max_mr},
              {"max_mr_size", a.max_mr_size},
              {"max_qp_wr", a.qp.max_qp_wr},
              {"max_sge", a.qp.max_sge},
              {"max_inline_data", a.qp.max_inline_data},
              {"max_qp_rd_atom", a.qp.max_qp_rd_atom},
              {"max_qp_init_rd_atom", a.qp.max_qp_init_rd_atom},
              {"memory_windows", {1, 2}}}},
            {"port",
             {{"port_num", port.attr.port_num},
              {"mac", format_mac(port.mac)},
              {"ipv4", format_ipv4(nic_.config().ipv4)},
              {"udp_port", nic_.config().udp_port},
              {"max_mtu", path_mtu_bytes(port.attr.max_mtu)},
              {"active_mtu", path_mtu_bytes(port.attr.active_mtu)},
              {"lid", lid},
              {"sm_lid", lid},
              {"lmc", lid != 0 ? 1 : port.attr.lmc},
              {"max_vl_num", port.attr.max_vl_num},
              {"link_layer", "Ethernet"},
              {"port_cap_flags", control::verbs::flag_names(control::verbs::kPortCapFlags, caps)},
              {"gids", gids},
              {"pkeys", pkeys}}}};
  }

  json alloc_pd(const Fields& f) {
    f.only(keys::kNone);
    return {{"pd", check(dev_.alloc_pd())}};
  }
  json dealloc_pd(const Fields& f) {
    f.only(keys::kPd);
    check(dev_.dealloc_pd(f.u32("pd")));
    return json::object();
  }

  json reg_mr(const Fields& f) {
    f.only(keys::kRegMr);
    MrInit init;
    init.pd = f.u32("pd");
    init.length = f.u("length", UINT64_MAX);
    init.access = parse_flags(f, "access", kAccessFlags);
    if (f.has("iova")) init.iova = f.u("iova", UINT64_MAX);
    const Mr* mr = check(dev_.reg_mr(init));
    return {{"handle", mr->handle()}, {"lkey", mr->lkey()},     {"rkey", mr->rkey()},
            {"addr", mr->addr()},     {"length", mr->length()}, {"pd", mr->pd()}};
  }
  json dereg_mr(const Fields& f) {
    f.only(keys::kMrHandle);
    check(dev_.dereg_mr(f.u32("handle")));
    return json::object();
  }

  json alloc_mw(const Fields& f) {
    f.only(keys::kAllocMw);
    const std::uint64_t type = f.u("type", UINT32_MAX, 1);
    if (type != 1 && type != 2) fail("{}: {} is not a window type (1 or 2)", f.path("type"), type);
    const Mw* mw = check(dev_.alloc_mw(f.u32("pd"), static_cast<MwType>(type)));
    return {{"mw", mw->handle}, {"rkey", mw->rkey}, {"type", type}, {"pd", mw->pd}};
  }
  json dealloc_mw(const Fields& f) {
    f.only(keys::kMw);
    check(dev_.dealloc_mw(f.u32("mw")));
    return json::object();
  }
  json bind_mw(const Fields& f) {
    f.only(keys::kBindMw);
    MwBind b;
    b.mw = f.u32("mw");
    b.mr = f.u32("mr", 0);
    b.addr = f.u("addr", UINT64_MAX, 0);
    b.length = f.u("length", UINT64_MAX, 0);
    b.access = parse_flags(f, "access", kAccessFlags);
    b.zero_based = f.boolean("zero_based", false);
    const std::uint32_t rkey = check(nic_.bind_mw(f.u32("qp_num"), b, f.u("wr_id", UINT64_MAX, 0),
                                                  parse_flags(f, "send_flags", kSendFlags)));
    return {{"rkey", rkey}};
  }

  // Memory access by the tester, beside the wire: fill a buffer before a send, check it after.
  json write_mr(const Fields& f) {
    f.only(keys::kWriteMr);
    const std::uint32_t handle = f.u32("handle");
    const std::uint64_t offset = f.u("offset", UINT64_MAX, 0);
    const std::vector<std::uint8_t> data = f.hex("data");
    Mr& mr = find_mr("write_mr", handle);
    check_range("write_mr", mr, offset, data.size());
    std::copy(data.begin(), data.end(), mr.bytes().begin() + static_cast<std::ptrdiff_t>(offset));
    return {{"length", data.size()}};
  }
  json read_mr(const Fields& f) {
    f.only(keys::kReadMr);
    const std::uint32_t handle = f.u32("handle");
    const std::uint64_t offset = f.u("offset", UINT64_MAX, 0);
    const std::uint64_t length = f.u("length", kMaxReadBytes);
    Mr& mr = find_mr("read_mr", handle);
    check_range("read_mr", mr, offset, length);
    return {{"data", to_hex(mr.bytes().subspan(offset, length))}};
  }

  json create_cq(const Fields& f) {
    f.only(keys::kCreateCq);
    const Cq* cq = check(dev_.create_cq(f.u32("depth")));
    return {{"cq", cq->handle()}, {"depth", cq->depth()}};
  }
  json destroy_cq(const Fields& f) {
    f.only(keys::kCq);
    check(dev_.destroy_cq(f.u32("cq")));
    return json::object();
  }
  json req_notify_cq(const Fields& f) {
    f.only(keys::kReqNotifyCq);
    check(dev_.req_notify_cq(f.u32("cq"), f.boolean("solicited_only", false)));
    return json::object();
  }
  json poll_cq(const Fields& f) {
    f.only(keys::kPollCq);
    const auto cqes = check(dev_.poll_cq(f.u32("cq"), f.u("max", kMaxPoll, 16)));
    json wc = json::array();
    for (const Cqe& c : cqes) wc.push_back(cqe_json(c));
    return {{"wc", wc}};
  }

  // An event is queued with its completion, so nothing is waited for: wait_ms is only checked.
  json cq_events(const Fields& f) {
    f.only(keys::kCqEvents);
    (void)f.u("wait_ms", control::kMaxEventWaitMs, 0);
    json events = json::array();
    while (const auto h = dev_.comp_channel().get_event()) events.push_back(*h);
    return {{"events", events}};
  }

  json create_qp(const Fields& f) {
    f.only(keys::kCreateQp);
    if (f.has("qp_type") == f.has("type"))
      fail("create_qp: give 'qp_type' (\"RC\", \"UC\", \"UD\")");
    const std::string key = f.has("qp_type") ? "qp_type" : "type";
    const std::string type = f.text(key);
    const auto t = qp_type_from_name(type);
    if (!t) fail("{}: '{}' is not a QP type (RC, UC, UD, GSI)", f.path(key), type);
    QpInit init;
    init.qp_type = *t;
    init.pd = f.u32("pd");
    init.send_cq = f.u32("send_cq");
    init.recv_cq = f.u32("recv_cq");
    if (f.has("cap")) init.cap = parse_cap(f.at("cap"), f.path("cap"));
    init.sq_sig_all = f.boolean("sq_sig_all", false);
    const Qp* qp = check(dev_.create_qp(init));
    return {{"qp_num", qp->qp_num()}, {"cap", cap_json(qp->init_attr().cap)}};
  }
  json modify_qp(const Fields& f) {
    f.only(keys::kModifyQp);
    const std::uint32_t qpn = f.u32("qp_num");
    const auto [attr, mask] = parse_qp_attr(f.at("attr"), f.path("attr"));
    check(nic_.modify_qp(qpn, attr, mask));
    return {{"attr_mask", qp_attr_mask_names(mask)}};
  }
  json query_qp(const Fields& f) {
    f.only(keys::kQpNum);
    const std::uint32_t qpn = f.u32("qp_num");
    const QpAttr attr = check(dev_.query_qp(qpn));
    const QpInit& init = dev_.qp(qpn)->init_attr();
    return {{"attr", qp_attr_json(attr)},
            {"init_attr",
             {{"qp_type", qp_type_name(init.qp_type)},
              {"pd", init.pd},
              {"send_cq", init.send_cq},
              {"recv_cq", init.recv_cq},
              {"cap", cap_json(init.cap)},
              {"sq_sig_all", init.sq_sig_all}}}};
  }
  json destroy_qp(const Fields& f) {
    f.only(keys::kQpNum);
    const std::uint32_t qpn = f.u32("qp_num");
    check(nic_.destroy_qp(qpn));
    cm_status_->by_qp.erase(qpn);  // its callbacks, if any still come, are stale now
    return json::object();
  }

  // All WRs of one request go to the QP in one call: one doorbell, as a chained ibv_post_send.
  json post_send(const Fields& f) {
    f.only(keys::kPost);
    const std::uint32_t qpn = f.u32("qp_num");
    std::vector<SendWr> wrs;
    const json& list = nonempty_list(f, "wrs");
    for (std::size_t i = 0; i < list.size(); ++i)
      wrs.push_back(parse_send_wr(list[i], fmt::format("{}[{}]", f.path("wrs"), i)));
    posted(nic_.post_send(qpn, wrs));
    return {{"posted", wrs.size()}};
  }
  json post_recv(const Fields& f) {
    f.only(keys::kPost);
    const std::uint32_t qpn = f.u32("qp_num");
    std::vector<RecvWr> wrs;
    const json& list = nonempty_list(f, "wrs");
    for (std::size_t i = 0; i < list.size(); ++i)
      wrs.push_back(parse_recv_wr(list[i], fmt::format("{}[{}]", f.path("wrs"), i)));
    posted(nic_.post_recv(qpn, wrs));
    return {{"posted", wrs.size()}};
  }

  // The CM agent's active side (CmAgent::connect): a REQ for an RC or UC QP in RESET or INIT.
  // The connect callbacks keep the QP's status for cm_status.
  json cm_connect(const Fields& f) {
    f.only(keys::kCmConnect);
    ConnectParams p;
    p.qp_num = f.u32("qp_num");
    if (f.has("service_id") == f.has("port"))
      fail("cm_connect: give 'service_id', or 'port' (an rdma_cm TCP port), not both");
    p.service_id =
        f.has("port")
            ? rdma_cm_service_id(rdma_cm_ps::kTcp, static_cast<std::uint16_t>(f.u("port", 0xFFFF)))
            : f.u("service_id", UINT64_MAX);
    json av = json::object();
    av["dgid"] = f.at("dgid");
    av["dmac"] = f.at("dmac");
    p.peer = parse_av(av, f.where());
    p.path_mtu = f.has("path_mtu") ? parse_path_mtu(f, "path_mtu") : PathMtu::k1024;
    p.starting_psn = static_cast<std::uint32_t>(
        f.has("starting_psn") ? f.u("starting_psn", 0xFFFFFF) : draw(dev_, *cm_status_) & 0xFFFFFF);
    p.pkey = static_cast<std::uint16_t>(f.u("pkey", 0xFFFF, 0xFFFF));
    p.responder_resources =
        static_cast<std::uint8_t>(f.u("responder_resources", UINT8_MAX, p.responder_resources));
    p.initiator_depth =
        static_cast<std::uint8_t>(f.u("initiator_depth", UINT8_MAX, p.initiator_depth));
    p.retry_count = static_cast<std::uint8_t>(f.u("retry_count", 7, p.retry_count));
    p.rnr_retry_count = static_cast<std::uint8_t>(f.u("rnr_retry_count", 7, p.rnr_retry_count));
    if (f.has("private_data")) p.private_data = f.hex("private_data");
    if (!dev_.qp(p.qp_num))
      throw VerbsFailure{{VerbsStatus::kNoEnt, fmt::format("cm_connect: no QP {}", p.qp_num)}, {}};

    // The REQ's timers, for this connection only: the agent takes them from its configuration
    // when it connects, so the configuration is set around the call and put back after it.
    CmAgent& cm = nic_.cm();
    const CmAgentConfig saved = cm.config();
    const bool timing =
        f.has("cm_response_timeout") || f.has("max_cm_retries") || f.has("packet_lifetime");
    if (timing) {
      CmAgentConfig t = saved;
      t.cm_response_timeout =
          static_cast<std::uint8_t>(f.u("cm_response_timeout", 31, t.cm_response_timeout));
      t.max_cm_retries = static_cast<std::uint8_t>(f.u("max_cm_retries", 15, t.max_cm_retries));
      t.packet_lifetime = static_cast<std::uint8_t>(f.u("packet_lifetime", 31, t.packet_lifetime));
      // configure() restarts the ID sequences from the seed: a fresh one keeps them new.
      t.seed = draw(dev_, *cm_status_) | 1;
      cm.configure(t);
    }

    const std::uint32_t qpn = p.qp_num;
    const std::uint64_t generation = ++cm_status_->generation;
    std::optional<CmStatusEntry> previous;
    if (const auto it = cm_status_->by_qp.find(qpn); it != cm_status_->by_qp.end())
      previous = it->second;
    CmStatusEntry fresh;
    fresh.generation = generation;
    cm_status_->by_qp[qpn] = fresh;
    const std::weak_ptr<CmStatusTable> weak = cm_status_;
    ConnectCallbacks cb;
    cb.established = [weak, qpn, generation](std::uint32_t, const CmRep& rep) {
      update_status(weak, qpn, generation, [&](CmStatusEntry& e) {
        e.state = "established";
        e.remote_qpn = rep.local_qpn;
      });
    };
    cb.rejected = [weak, qpn, generation](std::uint16_t reason) {
      update_status(weak, qpn, generation, [&](CmStatusEntry& e) {
        e.state = "rejected";
        e.reason = reason;
      });
    };
    cb.timed_out = [weak, qpn, generation] {
      update_status(weak, qpn, generation, [](CmStatusEntry& e) { e.state = "timed_out"; });
    };
    cb.disconnected = [weak, qpn, generation](std::uint32_t) {
      update_status(weak, qpn, generation, [](CmStatusEntry& e) { e.state = "disconnected"; });
    };
    const auto id = cm.connect(p, std::move(cb));
    if (timing) {
      CmAgentConfig restored = saved;
      restored.seed = draw(dev_, *cm_status_) | 1;
      cm.configure(restored);
    }
    if (!id) {
      if (previous)
        cm_status_->by_qp[qpn] = *previous;
      else
        cm_status_->by_qp.erase(qpn);
      throw VerbsFailure{{VerbsStatus::kInval, "cm_" + id.error()}, {}};
    }
    cm_status_->by_qp[qpn].comm_id = *id;
    return {{"comm_id", *id},
            {"service_id", fmt::format("{:#018x}", p.service_id)},
            {"starting_psn", p.starting_psn}};
  }

  json cm_status(const Fields& f) {
    f.only(keys::kQpNum);
    const CmStatusEntry& e = status_of("cm_status", f.u32("qp_num"));
    json out = {{"state", e.state}};
    if (e.reason) out["reason"] = *e.reason;
    if (e.comm_id) {
      out["comm_id"] = *e.comm_id;
      if (const auto info = nic_.cm().connection(*e.comm_id))
        out["cm_state"] = cm_state_name(info->state);
    }
    if (e.remote_qpn) out["remote_qpn"] = *e.remote_qpn;
    return out;
  }

  // DREQ for a connection cm_connect made, once established (CmAgent::disconnect).
  json cm_disconnect(const Fields& f) {
    f.only(keys::kQpNum);
    CmStatusEntry& e = status_of("cm_disconnect", f.u32("qp_num"));
    if (!e.comm_id)
      throw VerbsFailure{{VerbsStatus::kInval, "cm_disconnect: the connect has no ID"}, {}};
    if (const auto r = nic_.cm().disconnect(*e.comm_id); !r)
      throw VerbsFailure{{VerbsStatus::kInval, "cm_" + r.error()}, {}};
    e.state = "disconnecting";
    return json::object();
  }

  json counters(const Fields& f) {
    f.only(keys::kCounters);
    const Counters& c = dev_.counters();
    json out = json::object();
    if (!f.has("names")) {
      c.for_each(
          [&](std::string_view name, std::uint64_t value) { out[std::string(name)] = value; });
      return {{"counters", out}};
    }
    const json& names = f.array("names");
    for (std::size_t i = 0; i < names.size(); ++i) {
      const json& n = names[i];
      const auto value = n.is_string() ? c.get(n.get<std::string>()) : std::nullopt;
      if (!value) {
        std::string known;
        c.for_each([&](std::string_view name, std::uint64_t) {
          known += fmt::format("{}{}", known.empty() ? "" : ", ", name);
        });
        fail("counters: names[{}]: {} is not a counter (known: {})", i, shown(n), known);
      }
      out[n.get<std::string>()] = *value;
    }
    return {{"counters", out}};
  }

  // The reference NIC keeps no log of its own: no line is ever made up. The fields are still
  // checked, and the clock is the one the owner runs the NIC on.
  json kernel_log(const Fields& f) {
    f.only(keys::kKernelLog);
    const std::uint64_t since = f.u("since_unix_ns", INT64_MAX, 0);
    const std::uint64_t until = f.u("until_unix_ns", INT64_MAX, INT64_MAX);
    (void)f.u("max_lines", UINT32_MAX, 0);
    if (since > until) fail("kernel_log: since_unix_ns {} is after until_unix_ns {}", since, until);
    return {
        {"lines", json::array()}, {"dropped", 0}, {"now_unix_ns", unix_now_()}, {"source", "none"}};
  }

  json async_events(const Fields& f) {
    f.only(keys::kNone);
    json events = json::array();
    for (const AsyncEvent& e : dev_.async_events())
      events.push_back({{"event_type", async_event_name(e.event_type)}, {"element", e.element}});
    return {{"events", events}, {"dropped", dev_.async_event_queue().dropped()}};
  }

  json reset(const Fields& f) {
    f.only(keys::kNone);
    reset_requested_ = true;
    return json::object();
  }

  json quirks(const Fields& f) {
    f.only(keys::kNone);
    json known = json::array();
    for (const QuirkInfo& q : all_quirks())
      known.push_back({{"name", q.name},
                       {"area", q.area},
                       {"description", q.description},
                       {"active", nic_.quirks().has(q.quirk)}});
    return {{"active", active_quirks()}, {"known", known}};
  }

 private:
  json active_quirks() const {
    json out = json::array();
    for (const QuirkInfo& q : all_quirks())
      if (nic_.quirks().has(q.quirk)) out.push_back(q.name);
    return out;
  }

  Mr& find_mr(std::string_view op, std::uint32_t handle) {
    Mr* mr = dev_.mr(handle);
    if (!mr) throw VerbsFailure{{VerbsStatus::kNoEnt, fmt::format("{}: no MR {}", op, handle)}, {}};
    return *mr;
  }
  static void check_range(std::string_view op, const Mr& mr, std::uint64_t offset,
                          std::uint64_t length) {
    if (offset > mr.length() || length > mr.length() - offset)
      throw VerbsFailure{{VerbsStatus::kInval,
                          fmt::format("{}: offset {} + length {} is outside MR {} of {} bytes", op,
                                      offset, length, mr.handle(), mr.length())},
                         {}};
  }
  static const json& nonempty_list(const Fields& f, std::string_view key) {
    const json& list = f.array(key);
    if (list.empty()) fail("{}: needs at least one work request", f.path(key));
    return list;
  }
  static void posted(PostResult result) {
    if (!result) throw VerbsFailure{std::move(result.error().error), result.error().bad_wr};
  }

  CmStatusEntry& status_of(std::string_view op, std::uint32_t qpn) {
    const auto it = cm_status_->by_qp.find(qpn);
    if (it == cm_status_->by_qp.end())
      throw VerbsFailure{{VerbsStatus::kNoEnt, fmt::format("{}: no cm_connect for QP {}", op, qpn)},
                         {}};
    return it->second;
  }

  Nic& nic_;
  Device& dev_;
  std::shared_ptr<CmStatusTable> cm_status_;
  bool& reset_requested_;
  const std::function<std::int64_t()>& unix_now_;
};

using Handler = json (Ops::*)(const Fields&);
struct OpEntry {
  std::string_view name;
  Handler handler;
};
constexpr auto kOps = std::to_array<OpEntry>({
    {"hello", &Ops::hello},
    {"capabilities", &Ops::hello},
    {"alloc_pd", &Ops::alloc_pd},
    {"dealloc_pd", &Ops::dealloc_pd},
    {"reg_mr", &Ops::reg_mr},
    {"dereg_mr", &Ops::dereg_mr},
    {"write_mr", &Ops::write_mr},
    {"read_mr", &Ops::read_mr},
    {"alloc_mw", &Ops::alloc_mw},
    {"dealloc_mw", &Ops::dealloc_mw},
    {"bind_mw", &Ops::bind_mw},
    {"create_cq", &Ops::create_cq},
    {"destroy_cq", &Ops::destroy_cq},
    {"req_notify_cq", &Ops::req_notify_cq},
    {"poll_cq", &Ops::poll_cq},
    {"cq_events", &Ops::cq_events},
    {"create_qp", &Ops::create_qp},
    {"modify_qp", &Ops::modify_qp},
    {"query_qp", &Ops::query_qp},
    {"destroy_qp", &Ops::destroy_qp},
    {"post_send", &Ops::post_send},
    {"post_recv", &Ops::post_recv},
    {"counters", &Ops::counters},
    {"kernel_log", &Ops::kernel_log},
    {"async_events", &Ops::async_events},
    {"quirks", &Ops::quirks},
    {"cm_connect", &Ops::cm_connect},
    {"cm_status", &Ops::cm_status},
    {"cm_disconnect", &Ops::cm_disconnect},
    {"reset", &Ops::reset},
});
static_assert(control::lists_every_op(kOps), "the reference target serves every op of ops.h");

}  // namespace

ControlApi::ControlApi(Nic& nic, std::function<std::int64_t()> unix_now)
    : nic_(nic), cm_status_(std::make_shared<CmStatusTable>()), unix_now_(std::move(unix_now)) {
  if (!unix_now_)
    unix_now_ = [] {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
}

ControlApi::~ControlApi() = default;

std::span<const std::string_view> ControlApi::ops() {
  return control::kOpNames;
}

json ControlApi::handle(const json& request) {
  json response = json::object();
  response["id"] = nullptr;
  try {
    if (!request.is_object()) fail("a request must be a JSON object, got {}", shown(request));
    if (const auto id = request.find("id"); id != request.end()) {
      // Only scalars are echoed: a nested id would be copied back unbounded.
      if (!id->is_number() && !id->is_string() && !id->is_null())
        fail("'id' must be a number or a string, got {}", shown(*id));
      response["id"] = *id;
    }
    const auto op_it = request.find("op");
    if (op_it == request.end()) fail("'op' is missing");
    if (!op_it->is_string()) fail("'op' must be a string, got {}", shown(*op_it));
    const std::string& op = op_it->get_ref<const std::string&>();
    const auto entry =
        std::find_if(kOps.begin(), kOps.end(), [&](const OpEntry& e) { return e.name == op; });
    if (entry == kOps.end()) {
      std::string known;
      for (std::string_view name : ops())
        known += fmt::format("{}{}", known.empty() ? "" : ", ", name);
      fail("unknown op '{}' (known: {})", op, known);
    }
    Ops ops(nic_, cm_status_, reset_requested_, unix_now_);
    json result = (ops.*(entry->handler))(Fields(request, op, true));
    response["ok"] = true;
    response.update(result);
  } catch (const RequestError& e) {
    response["ok"] = false;
    response["error"] = e.message;
  } catch (const VerbsFailure& e) {
    response["ok"] = false;
    response["errno"] = verbs_status_name(e.error.status);
    response["error"] = e.error.to_string();
    if (e.bad_wr) response["bad_wr"] = *e.bad_wr;
  } catch (const std::exception& e) {
    // nlohmann type errors and allocation failures: still one line, never a crash.
    response["ok"] = false;
    response["error"] = fmt::format("internal error: {}", e.what());
  }
  return response;
}

std::string ControlApi::handle_line(std::string_view line) {
  json request;
  try {
    request = json::parse(line);
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at ...": keep the readable part.
    std::string_view what = e.what();
    if (const auto at = what.find("] "); at != std::string_view::npos) what.remove_prefix(at + 2);
    return dump_line(
        {{"id", nullptr}, {"ok", false}, {"error", fmt::format("malformed JSON: {}", what)}});
  }
  return dump_line(handle(request));
}

}  // namespace roceconf::target
