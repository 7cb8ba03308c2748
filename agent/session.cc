// Over 600 lines: one handler per control op, each next to the libibverbs calls it wraps.
#include "agent/session.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "agent/identity.h"
#include "agent/kmsg.h"
#include "agent/request_fields.h"
#include "agent/verbs_names.h"
#include "control/lines.h"
#include "control/verbs_names.h"
#include "dissector/address_text.h"

namespace roceconf::agent {

using nlohmann::json;

namespace {

constexpr std::uint64_t kMaxReadBytes = 1u << 20;
constexpr std::uint64_t kMaxPoll = 4096;
constexpr std::chrono::seconds kDestroyTimeout{3};
constexpr std::uint64_t kMaxRegion = 1ull << 30;  // one MR's buffer, allocated by the agent

struct VerbsFailure {
  int error;
  std::string message;
  std::optional<std::size_t> bad_wr;
};

std::string errno_name(int e) {
  const char* name = strerrorname_np(e);
  return name ? name : fmt::format("E{}", e);
}

[[noreturn]] void verbs_fail(int e, std::string message,
                             std::optional<std::size_t> bad_wr = std::nullopt) {
  throw VerbsFailure{e, std::move(message), bad_wr};
}

// GIDs in the address text of dissector/address_text.h, as the reference target writes them.
std::string gid_text(const ibv_gid& gid) {
  Ipv6Address address;
  std::memcpy(address.data(), gid.raw, address.size());
  return format_gid(address);
}

// "192.0.2.1" is ::ffff:192.0.2.1; any IPv6 text is taken as written.
std::optional<ibv_gid> gid_from_text(std::string_view text) {
  const auto address = parse_gid(text);
  if (!address) return std::nullopt;
  ibv_gid gid{};
  std::memcpy(gid.raw, address->data(), address->size());
  return gid;
}

// The IPv4 address of an IPv4-mapped GID.
std::string mapped_ipv4_text(const ibv_gid& gid) {
  return format_ipv4({gid.raw[12], gid.raw[13], gid.raw[14], gid.raw[15]});
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string gid_type_text(std::uint32_t type) {
  switch (type) {
    case IBV_GID_TYPE_IB:
      return "IB";
    case IBV_GID_TYPE_ROCE_V1:
      return "RoCEv1";
    case IBV_GID_TYPE_ROCE_V2:
      return "RoCEv2";
    default:
      return std::to_string(type);
  }
}

// The window types the device binds: 1 with IBV_DEVICE_MEM_WINDOW, 2 with type 2B (bound to a
// QP, what the API's type 2 means).
json memory_window_types(unsigned int cap_flags) {
  json out = json::array();
  if (cap_flags & IBV_DEVICE_MEM_WINDOW) out.push_back(1);
  if (cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) out.push_back(2);
  return out;
}

bool is_v4_mapped(const ibv_gid& gid) {
  static constexpr std::array<std::uint8_t, 12> kPrefix = {0, 0, 0, 0, 0,    0,
                                                           0, 0, 0, 0, 0xFF, 0xFF};
  return std::memcmp(gid.raw, kPrefix.data(), kPrefix.size()) == 0;
}

}  // namespace

// The ops, over the session's resources. Bad requests throw RequestError, failed verbs throw
// VerbsFailure; handle() turns both into ok = false.
class Ops {
 public:
  explicit Ops(Session& s) : s_(s) {}

  ibv_context* ctx(std::string_view op) const {
    if (!s_.ctx_) verbs_fail(ENODEV, fmt::format("{}: {}", op, s_.device_error_));
    return s_.ctx_;
  }
  ibv_pd* pd(std::string_view op, std::uint32_t h) const {
    const auto it = s_.pds_.find(h);
    if (it == s_.pds_.end()) verbs_fail(ENOENT, fmt::format("{}: no PD {}", op, h));
    return it->second;
  }
  Session::Cq& cq(std::string_view op, std::uint32_t h) const {
    const auto it = s_.cqs_.find(h);
    if (it == s_.cqs_.end()) verbs_fail(ENOENT, fmt::format("{}: no CQ {}", op, h));
    return it->second;
  }
  Session::Mr& mr(std::string_view op, std::uint32_t h) const {
    const auto it = s_.mrs_.find(h);
    if (it == s_.mrs_.end()) verbs_fail(ENOENT, fmt::format("{}: no MR {}", op, h));
    return it->second;
  }
  Session::Mw& mw(std::string_view op, std::uint32_t h) const {
    const auto it = s_.mws_.find(h);
    if (it == s_.mws_.end()) verbs_fail(ENOENT, fmt::format("{}: no memory window {}", op, h));
    return it->second;
  }
  // ibv_mw_bind_info from the request's region, range, rights and zero_based.
  ibv_mw_bind_info bind_info(const Fields& f) const {
    ibv_mw_bind_info b{};
    const std::uint32_t mr_handle = f.u32("mr", 0);
    b.mr = mr_handle ? mr("bind_mw", mr_handle).mr : nullptr;
    b.addr = f.u("addr", UINT64_MAX, 0);
    b.length = f.u("length", UINT64_MAX, 0);
    b.mw_access_flags = parse_flags(f, "access", FlagSet::kAccess);
    if (f.boolean("zero_based", false)) b.mw_access_flags |= IBV_ACCESS_ZERO_BASED;
    return b;
  }
  Session::Qp& qp(std::string_view op, std::uint32_t n) const {
    const auto it = s_.qps_.find(n);
    if (it == s_.qps_.end()) verbs_fail(ENOENT, fmt::format("{}: no QP {}", op, n));
    return it->second;
  }

  json hello(const Fields& f) {
    f.only(keys::kNone);
    ibv_context* c = ctx("hello");
    ibv_device_attr a{};
    if (const int e = ibv_query_device(c, &a)) verbs_fail(e, "hello: ibv_query_device failed");
    ibv_port_attr p{};
    if (const int e = ibv_query_port(c, s_.options_.port, &p))
      verbs_fail(e, fmt::format("hello: ibv_query_port {} failed", s_.options_.port));
    json gids = json::array();
    std::string mac, ipv4;
    for (int i = 0; i < p.gid_tbl_len; ++i) {
      ibv_gid_entry entry{};
      if (ibv_query_gid_ex(c, s_.options_.port, static_cast<std::uint32_t>(i), &entry, 0) != 0)
        continue;
      gids.push_back(
          {{"index", i}, {"gid", gid_text(entry.gid)}, {"type", gid_type_text(entry.gid_type)}});
      if (i == s_.roce_v2_ipv4_gid_) {
        char ifname[IF_NAMESIZE] = {};
        if (if_indextoname(entry.ndev_ifindex, ifname))
          mac = read_line(fmt::format("/sys/class/net/{}/address", ifname));
        ipv4 = mapped_ipv4_text(entry.gid);
      }
    }
    json pkeys = json::array();
    for (int i = 0; i < p.pkey_tbl_len; ++i) {
      std::uint16_t pkey = 0;
      if (ibv_query_pkey(c, s_.options_.port, i, &pkey) == 0) pkeys.push_back(ntohs(pkey));
    }
    json ops = json::array();
    for (std::string_view op : Session::ops()) ops.push_back(op);
    return {{"target", fmt::format("roceconf-agent on {}", s_.device_name_)},
            {"protocol", Session::kProtocolVersion},
            {"ops", ops},
            {"quirks", json::array()},
            {"device",
             {{"name", s_.device_name_},
              {"fw_ver", a.fw_ver},
              {"vendor_id", a.vendor_id},
              {"vendor_part_id", a.vendor_part_id},
              {"node_guid", fmt::format("{:#018x}", be64toh(a.node_guid))},
              {"hw_ver", a.hw_ver},
              {"driver", device_driver(s_.device_name_)},
              {"kernel", kernel_release()},
              {"rdma_core", rdma_core_release()},
              {"max_qp", a.max_qp},
              {"max_cq", a.max_cq},
              {"max_cqe", a.max_cqe},
              {"max_pd", a.max_pd},
              {"max_mr", a.max_mr},
              {"max_mr_size", a.max_mr_size},
              {"max_qp_wr", a.max_qp_wr},
              {"max_sge", a.max_sge},
              {"max_qp_rd_atom", a.max_qp_rd_atom},
              {"max_qp_init_rd_atom", a.max_qp_init_rd_atom},
              {"memory_windows", memory_window_types(a.device_cap_flags)}}},
            {"port",
             {{"port_num", s_.options_.port},
              {"mac", mac},
              {"ipv4", ipv4},
              {"udp_port", 4791},
              {"max_mtu", mtu_bytes(p.max_mtu)},
              {"active_mtu", mtu_bytes(p.active_mtu)},
              {"lid", p.lid},
              {"sm_lid", p.sm_lid},
              {"lmc", p.lmc},
              {"max_vl_num", p.max_vl_num},
              {"link_layer", p.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand"},
              {"port_cap_flags",
               control::verbs::flag_names(control::verbs::kPortCapFlags, p.port_cap_flags)},
              {"state", p.state == IBV_PORT_ACTIVE ? "ACTIVE" : "DOWN"},
              {"gids", gids},
              {"pkeys", pkeys}}}};
  }

  json alloc_pd(const Fields& f) {
    f.only(keys::kNone);
    ibv_pd* p = ibv_alloc_pd(ctx("alloc_pd"));
    if (!p) verbs_fail(errno ? errno : ENOMEM, "alloc_pd: ibv_alloc_pd failed");
    const std::uint32_t h = s_.next_handle_++;
    s_.pds_[h] = p;
    return {{"pd", h}};
  }

  json dealloc_pd(const Fields& f) {
    f.only(keys::kPd);
    const std::uint32_t h = f.u32("pd");
    ibv_pd* p = pd("dealloc_pd", h);
    for (const auto& [handle, m] : s_.mrs_)
      if (m.pd == h) verbs_fail(EBUSY, fmt::format("dealloc_pd: PD {} still has MR {}", h, handle));
    for (const auto& [num, q] : s_.qps_)
      if (q.pd == h) verbs_fail(EBUSY, fmt::format("dealloc_pd: PD {} still has QP {}", h, num));
    for (const auto& [handle, m] : s_.mws_)
      if (m.pd == h)
        verbs_fail(EBUSY, fmt::format("dealloc_pd: PD {} still has memory window {}", h, handle));
    if (const int e = ibv_dealloc_pd(p)) verbs_fail(e, fmt::format("dealloc_pd: PD {}", h));
    s_.pds_.erase(h);
    return json::object();
  }

  json reg_mr(const Fields& f) {
    f.only(keys::kRegMr);
    const std::uint32_t pd_handle = f.u32("pd");
    ibv_pd* p = pd("reg_mr", pd_handle);
    const std::uint64_t length = f.u("length", kMaxRegion);
    if (length == 0) fail("reg_mr.length: must be at least 1");
    const int access = static_cast<int>(parse_flags(f, "access", FlagSet::kAccess));
    Session::Mr m;
    m.pd = pd_handle;
    m.length = length;
    const std::uint64_t rounded = (length + 4095) & ~std::uint64_t{4095};
    m.buffer = static_cast<std::uint8_t*>(std::aligned_alloc(4096, rounded));
    if (!m.buffer) verbs_fail(ENOMEM, fmt::format("reg_mr: no memory for {} bytes", length));
    std::memset(m.buffer, 0, rounded);
    if (f.has("iova")) {
      m.addr = f.u("iova", UINT64_MAX);
      m.mr = ibv_reg_mr_iova(p, m.buffer, length, m.addr, access);
    } else {
      m.addr = reinterpret_cast<std::uintptr_t>(m.buffer);
      m.mr = ibv_reg_mr(p, m.buffer, length, access);
    }
    if (!m.mr) {
      const int e = errno ? errno : EINVAL;
      std::free(m.buffer);
      verbs_fail(e, fmt::format("reg_mr: ibv_reg_mr of {} bytes failed", length));
    }
    const std::uint32_t h = s_.next_handle_++;
    s_.mrs_[h] = m;
    return {{"handle", h},    {"lkey", m.mr->lkey}, {"rkey", m.mr->rkey},
            {"addr", m.addr}, {"length", length},   {"pd", pd_handle}};
  }

  json dereg_mr(const Fields& f) {
    f.only(keys::kMrHandle);
    const std::uint32_t h = f.u32("handle");
    Session::Mr& m = mr("dereg_mr", h);
    if (const int e = ibv_dereg_mr(m.mr)) verbs_fail(e, fmt::format("dereg_mr: MR {}", h));
    std::free(m.buffer);
    s_.mrs_.erase(h);
    return json::object();
  }

  json write_mr(const Fields& f) {
    f.only(keys::kWriteMr);
    Session::Mr& m = mr("write_mr", f.u32("handle"));
    const std::uint64_t offset = f.u("offset", UINT64_MAX, 0);
    const std::vector<std::uint8_t> data = f.hex("data");
    if (offset > m.length || data.size() > m.length - offset)
      verbs_fail(EINVAL, fmt::format("write_mr: {} bytes at offset {} do not fit the MR's {} bytes",
                                     data.size(), offset, m.length));
    std::memcpy(m.buffer + offset, data.data(), data.size());
    return {{"length", data.size()}};
  }

  json read_mr(const Fields& f) {
    f.only(keys::kReadMr);
    Session::Mr& m = mr("read_mr", f.u32("handle"));
    const std::uint64_t offset = f.u("offset", UINT64_MAX, 0);
    const std::uint64_t length = f.u("length", kMaxReadBytes);
    if (offset > m.length || length > m.length - offset)
      verbs_fail(EINVAL, fmt::format("read_mr: {} bytes at offset {} are outside the MR's {} bytes",
                                     length, offset, m.length));
    return {{"data", to_hex({m.buffer + offset, static_cast<std::size_t>(length)})}};
  }

  json alloc_mw(const Fields& f) {
    f.only(keys::kAllocMw);
    const std::uint32_t pd_handle = f.u32("pd");
    ibv_pd* p = pd("alloc_mw", pd_handle);
    const std::uint64_t type = f.u("type", UINT32_MAX, 1);
    if (type != 1 && type != 2) fail("alloc_mw.type: {} is not a window type (1 or 2)", type);
    ibv_mw* w = ibv_alloc_mw(p, type == 1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
    if (!w) verbs_fail(errno ? errno : EOPNOTSUPP, fmt::format("alloc_mw: type {} failed", type));
    const std::uint32_t h = s_.next_handle_++;
    s_.mws_[h] = Session::Mw{w, pd_handle, w->rkey};
    return {{"mw", h}, {"rkey", w->rkey}, {"type", type}, {"pd", pd_handle}};
  }

  json dealloc_mw(const Fields& f) {
    f.only(keys::kMw);
    const std::uint32_t h = f.u32("mw");
    Session::Mw& m = mw("dealloc_mw", h);
    if (const int e = ibv_dealloc_mw(m.mw)) verbs_fail(e, fmt::format("dealloc_mw: window {}", h));
    s_.mws_.erase(h);
    return json::object();
  }

  // The bind verb: a bind WQE on the QP; the completion (when signaled) says whether it held.
  json bind_mw(const Fields& f) {
    f.only(keys::kBindMw);
    Session::Qp& q = qp("bind_mw", f.u32("qp_num"));
    Session::Mw& m = mw("bind_mw", f.u32("mw"));
    ibv_mw_bind b{};
    b.wr_id = f.u("wr_id", UINT64_MAX, 0);
    b.send_flags = parse_flags(f, "send_flags", FlagSet::kSend);
    b.bind_info = bind_info(f);
    if (const int e = ibv_bind_mw(q.qp, m.mw, &b))
      verbs_fail(e, fmt::format("bind_mw: window {} on QP {}", f.u32("mw"), q.qp->qp_num));
    m.rkey = m.mw->rkey;
    return {{"rkey", m.mw->rkey}};
  }

  json create_cq(const Fields& f) {
    f.only(keys::kCreateCq);
    const std::uint32_t depth = static_cast<std::uint32_t>(f.u("depth", INT32_MAX));
    if (depth == 0) fail("create_cq.depth: must be at least 1");
    ibv_cq* c = ibv_create_cq(ctx("create_cq"), static_cast<int>(depth), nullptr, s_.channel_, 0);
    if (!c) verbs_fail(errno ? errno : EINVAL, fmt::format("create_cq: depth {} refused", depth));
    const std::uint32_t h = s_.next_handle_++;
    s_.cqs_[h] = {c, static_cast<std::uint32_t>(c->cqe)};
    // The device may round the depth up (rxe does): `depth` is what it granted, which is where
    // the CQ overruns; `requested` is what was asked.
    return {{"cq", h}, {"depth", c->cqe}, {"requested", depth}};
  }

  json destroy_cq(const Fields& f) {
    f.only(keys::kCq);
    const std::uint32_t h = f.u32("cq");
    Session::Cq& c = cq("destroy_cq", h);
    if (const int e = ibv_destroy_cq(c.cq))
      verbs_fail(e, fmt::format("destroy_cq: CQ {} (still used by a QP?)", h));
    s_.cqs_.erase(h);
    return json::object();
  }

  json req_notify_cq(const Fields& f) {
    f.only(keys::kReqNotifyCq);
    Session::Cq& c = cq("req_notify_cq", f.u32("cq"));
    if (const int e = ibv_req_notify_cq(c.cq, f.boolean("solicited_only", false) ? 1 : 0))
      verbs_fail(e, "req_notify_cq: ibv_req_notify_cq failed");
    return json::object();
  }

  json cq_events(const Fields& f) {
    f.only(keys::kCqEvents);
    const auto wait_ms = static_cast<int>(f.u("wait_ms", control::kMaxEventWaitMs, 0));
    ctx("cq_events");
    if (!s_.channel_) verbs_fail(ENODEV, "cq_events: the device gave no completion channel");
    json events = json::array();
    bool waited = wait_ms == 0;
    for (;;) {
      ibv_cq* cq = nullptr;
      void* context = nullptr;
      if (ibv_get_cq_event(s_.channel_, &cq, &context) == 0) {
        ibv_ack_cq_events(cq, 1);
        std::uint32_t handle = 0;
        for (const auto& [h, c] : s_.cqs_)
          if (c.cq == cq) handle = h;
        events.push_back(handle);
        continue;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        verbs_fail(errno, "cq_events: ibv_get_cq_event failed");
      // Nothing pending: wait once, and only for the first event.
      if (waited || !events.empty()) break;
      waited = true;
      pollfd p{s_.channel_->fd, POLLIN, 0};
      if (poll(&p, 1, wait_ms) <= 0) break;
    }
    return {{"events", events}};
  }

  json poll_cq(const Fields& f) {
    f.only(keys::kPollCq);
    Session::Cq& c = cq("poll_cq", f.u32("cq"));
    const int max = static_cast<int>(f.u("max", kMaxPoll, 16));
    std::vector<ibv_wc> wc(static_cast<std::size_t>(std::max(max, 1)));
    const int n = max == 0 ? 0 : ibv_poll_cq(c.cq, max, wc.data());
    if (n < 0) verbs_fail(EIO, "poll_cq: ibv_poll_cq failed (the CQ is in error: overrun?)");
    json out = json::array();
    for (int i = 0; i < n; ++i) {
      const ibv_wc& w = wc[static_cast<std::size_t>(i)];
      out.push_back(
          {{"wr_id", w.wr_id},
           {"status", wc_status_name(w.status)},
           {"opcode", wc_opcode_name(w.opcode)},
           {"vendor_err", w.vendor_err},
           {"byte_len", w.byte_len},
           // The union holds the invalidated R_Key (host order) with WITH_INV.
           {"imm_data", (w.wc_flags & IBV_WC_WITH_INV) ? w.invalidated_rkey : ntohl(w.imm_data)},
           {"qp_num", w.qp_num},
           {"src_qp", w.src_qp},
           {"wc_flags", flag_list(w.wc_flags, FlagSet::kWc)},
           {"pkey_index", w.pkey_index},
           {"slid", w.slid},
           {"sl", w.sl},
           {"dlid_path_bits", w.dlid_path_bits}});
    }
    return {{"wc", out}};
  }

  static json cap_json(const ibv_qp_cap& c) {
    return {{"max_send_wr", c.max_send_wr},
            {"max_recv_wr", c.max_recv_wr},
            {"max_send_sge", c.max_send_sge},
            {"max_recv_sge", c.max_recv_sge},
            {"max_inline_data", c.max_inline_data}};
  }

  static ibv_qp_cap parse_cap(const json& v, const std::string& where) {
    const Fields f(v, where);
    f.only(keys::kQpCap);
    ibv_qp_cap c{};
    c.max_send_wr = f.u32("max_send_wr", 16);
    c.max_recv_wr = f.u32("max_recv_wr", 16);
    c.max_send_sge = f.u32("max_send_sge", 1);
    c.max_recv_sge = f.u32("max_recv_sge", 1);
    c.max_inline_data = f.u32("max_inline_data", 0);
    return c;
  }

  json create_qp(const Fields& f) {
    f.only(keys::kCreateQp);
    if (f.has("qp_type") == f.has("type"))
      fail("create_qp: give 'qp_type' (\"RC\", \"UC\", \"UD\")");
    const std::string key = f.has("qp_type") ? "qp_type" : "type";
    const std::string type = f.text(key);
    const auto t = qp_type_from_name(type);
    if (!t) fail("create_qp.{}: '{}' is not RC, UC or UD", key, type);
    const std::uint32_t pd_handle = f.u32("pd");
    ibv_pd* p = pd("create_qp", pd_handle);
    ibv_qp_init_attr init{};
    init.qp_type = *t;
    init.send_cq = cq("create_qp", f.u32("send_cq")).cq;
    init.recv_cq = cq("create_qp", f.u32("recv_cq")).cq;
    init.cap = f.has("cap") ? parse_cap(f.at("cap"), f.path("cap")) : parse_cap(json::object(), "");
    init.sq_sig_all = f.boolean("sq_sig_all", false) ? 1 : 0;
    ibv_qp* q = ibv_create_qp(p, &init);
    if (!q) verbs_fail(errno ? errno : EINVAL, "create_qp: ibv_create_qp refused the attributes");
    s_.qps_[q->qp_num] = {q, pd_handle, "00:00:00:00:00:00"};
    return {{"qp_num", q->qp_num}, {"cap", cap_json(init.cap)}};
  }

  ibv_ah_attr parse_av(const json& v, const std::string& where, std::string* dmac) {
    const Fields f(v, where);
    f.only(keys::kAddressVector);
    const std::string dgid = f.text("dgid");
    const auto gid = gid_from_text(dgid);
    if (!gid) fail("{}: '{}' is not an IPv4 or IPv6 address", f.path("dgid"), dgid);
    const std::string mac = f.text("dmac");
    if (!parse_mac(mac))
      fail("{}: '{}' is not a MAC address (aa:bb:cc:dd:ee:ff)", f.path("dmac"), mac);
    if (dmac) *dmac = mac;
    // libibverbs takes the UDP source port from the flow label; a chosen port is not offered.
    if (f.has("udp_sport") && f.u("udp_sport", UINT16_MAX) != 0)
      fail("{}: a UDP source port cannot be chosen through libibverbs (leave it out)",
           f.path("udp_sport"));
    ibv_ah_attr ah{};
    ah.is_global = 1;
    ah.grh.dgid = *gid;
    ah.grh.flow_label = static_cast<std::uint32_t>(f.u("flow_label", 0xFFFFF, 0));
    // The source GID of the destination's kind: a RoCEv2 IPv4 GID toward an IPv4-mapped one, a
    // routable RoCEv2 IPv6 GID toward an IPv6 address.
    const int family_gid = is_v4_mapped(*gid) ? s_.roce_v2_ipv4_gid_ : s_.roce_v2_ipv6_gid_;
    const int default_sgid = family_gid < 0 ? 0 : family_gid;
    ah.grh.sgid_index = static_cast<std::uint8_t>(
        f.u("sgid_index", UINT8_MAX, static_cast<std::uint64_t>(default_sgid)));
    ah.grh.hop_limit = static_cast<std::uint8_t>(f.u("hop_limit", UINT8_MAX, 64));
    ah.grh.traffic_class = static_cast<std::uint8_t>(f.u("traffic_class", UINT8_MAX, 0));
    ah.sl = static_cast<std::uint8_t>(f.u("sl", 15, 0));
    ah.port_num = static_cast<std::uint8_t>(f.u("port_num", UINT8_MAX, s_.options_.port));
    ah.static_rate = static_cast<std::uint8_t>(f.u("static_rate", UINT8_MAX, 0));
    return ah;
  }

  json av_json(const ibv_ah_attr& ah, const std::string& dmac) {
    return {{"dgid", gid_text(ah.grh.dgid)},
            {"flow_label", ah.grh.flow_label},
            {"sgid_index", ah.grh.sgid_index},
            {"hop_limit", ah.grh.hop_limit},
            {"traffic_class", ah.grh.traffic_class},
            {"sl", ah.sl},
            {"port_num", ah.port_num},
            {"static_rate", ah.static_rate},
            {"dmac", dmac},
            {"udp_sport", 0}};
  }

  json modify_qp(const Fields& f) {
    f.only(keys::kModifyQp);
    Session::Qp& q = qp("modify_qp", f.u32("qp_num"));
    const Fields a(f.at("attr"), f.path("attr"));
    a.only(keys::kQpAttr);
    ibv_qp_attr attr{};
    int mask = 0;
    json names = json::array();
    auto set = [&](std::string_view name, int bit) {
      mask |= bit;
      names.push_back(name);
    };
    auto state = [&](std::string_view key) {
      const std::string s = a.text(key);
      const auto v = qp_state_from_name(s);
      if (!v)
        fail("{}: '{}' is not a QP state (RESET, INIT, RTR, RTS, SQD, SQE, ERR)", a.path(key), s);
      return *v;
    };
    std::string dmac = q.dmac;
    if (a.has("qp_state")) attr.qp_state = state("qp_state"), set("STATE", IBV_QP_STATE);
    if (a.has("cur_qp_state"))
      attr.cur_qp_state = state("cur_qp_state"), set("CUR_STATE", IBV_QP_CUR_STATE);
    if (a.has("en_sqd_async_notify"))
      attr.en_sqd_async_notify = a.boolean("en_sqd_async_notify", false),
      set("EN_SQD_ASYNC_NOTIFY", IBV_QP_EN_SQD_ASYNC_NOTIFY);
    if (a.has("qp_access_flags"))
      attr.qp_access_flags = parse_flags(a, "qp_access_flags", FlagSet::kAccess),
      set("ACCESS_FLAGS", IBV_QP_ACCESS_FLAGS);
    if (a.has("pkey_index"))
      attr.pkey_index = static_cast<std::uint16_t>(a.u("pkey_index", UINT16_MAX)),
      set("PKEY_INDEX", IBV_QP_PKEY_INDEX);
    if (a.has("port_num"))
      attr.port_num = static_cast<std::uint8_t>(a.u("port_num", UINT8_MAX)),
      set("PORT", IBV_QP_PORT);
    if (a.has("qkey")) attr.qkey = a.u32("qkey"), set("QKEY", IBV_QP_QKEY);
    if (a.has("ah_attr"))
      attr.ah_attr = parse_av(a.at("ah_attr"), a.path("ah_attr"), &dmac), set("AV", IBV_QP_AV);
    if (a.has("path_mtu")) {
      attr.path_mtu = mtu_from_number(a.u("path_mtu", UINT32_MAX));
      if (attr.path_mtu == 0)
        fail("{}: not a path MTU (256, 512, 1024, 2048, 4096, or the ibv_mtu value 1-5)",
             a.path("path_mtu"));
      set("PATH_MTU", IBV_QP_PATH_MTU);
    }
    if (a.has("timeout"))
      attr.timeout = static_cast<std::uint8_t>(a.u("timeout", 31)), set("TIMEOUT", IBV_QP_TIMEOUT);
    if (a.has("retry_cnt"))
      attr.retry_cnt = static_cast<std::uint8_t>(a.u("retry_cnt", 7)),
      set("RETRY_CNT", IBV_QP_RETRY_CNT);
    if (a.has("rnr_retry"))
      attr.rnr_retry = static_cast<std::uint8_t>(a.u("rnr_retry", 7)),
      set("RNR_RETRY", IBV_QP_RNR_RETRY);
    if (a.has("rq_psn"))
      attr.rq_psn = static_cast<std::uint32_t>(a.u("rq_psn", 0xFFFFFF)),
      set("RQ_PSN", IBV_QP_RQ_PSN);
    if (a.has("max_rd_atomic"))
      attr.max_rd_atomic = static_cast<std::uint8_t>(a.u("max_rd_atomic", UINT8_MAX)),
      set("MAX_QP_RD_ATOMIC", IBV_QP_MAX_QP_RD_ATOMIC);
    if (a.has("alt_ah_attr") || a.has("alt_pkey_index") || a.has("alt_port_num") ||
        a.has("alt_timeout") || a.has("path_mig_state"))
      verbs_fail(EOPNOTSUPP,
                 "modify_qp: alternate paths and migration are not offered by the agent");
    if (a.has("min_rnr_timer"))
      attr.min_rnr_timer = static_cast<std::uint8_t>(a.u("min_rnr_timer", 31)),
      set("MIN_RNR_TIMER", IBV_QP_MIN_RNR_TIMER);
    if (a.has("sq_psn"))
      attr.sq_psn = static_cast<std::uint32_t>(a.u("sq_psn", 0xFFFFFF)),
      set("SQ_PSN", IBV_QP_SQ_PSN);
    if (a.has("max_dest_rd_atomic"))
      attr.max_dest_rd_atomic = static_cast<std::uint8_t>(a.u("max_dest_rd_atomic", UINT8_MAX)),
      set("MAX_DEST_RD_ATOMIC", IBV_QP_MAX_DEST_RD_ATOMIC);
    if (a.has("cap")) attr.cap = parse_cap(a.at("cap"), a.path("cap")), set("CAP", IBV_QP_CAP);
    if (a.has("dest_qp_num"))
      attr.dest_qp_num = static_cast<std::uint32_t>(a.u("dest_qp_num", 0xFFFFFF)),
      set("DEST_QPN", IBV_QP_DEST_QPN);
    if (const int e = ibv_modify_qp(q.qp, &attr, mask))
      verbs_fail(e, fmt::format("modify_qp: QP {}: the device refused {} (illegal transition, or "
                                "missing or extra attributes)",
                                q.qp->qp_num, names.dump()));
    q.dmac = dmac;
    return {{"attr_mask", names}};
  }

  json query_qp(const Fields& f) {
    f.only(keys::kQpNum);
    Session::Qp& q = qp("query_qp", f.u32("qp_num"));
    ibv_qp_attr a{};
    ibv_qp_init_attr init{};
    const int all = IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY |
                    IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY |
                    IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                    IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_ALT_PATH |
                    IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                    IBV_QP_PATH_MIG_STATE | IBV_QP_CAP | IBV_QP_DEST_QPN;
    if (const int e = ibv_query_qp(q.qp, &a, all, &init))
      verbs_fail(e, fmt::format("query_qp: QP {}", q.qp->qp_num));
    const json attr = {{"qp_state", qp_state_name(a.qp_state)},
                       {"cur_qp_state", qp_state_name(a.cur_qp_state)},
                       {"path_mtu", mtu_bytes(a.path_mtu)},
                       {"path_mig_state", mig_state_name(a.path_mig_state)},
                       {"qkey", a.qkey},
                       {"rq_psn", a.rq_psn},
                       {"sq_psn", a.sq_psn},
                       {"dest_qp_num", a.dest_qp_num},
                       {"qp_access_flags", flag_list(a.qp_access_flags, FlagSet::kAccess)},
                       {"cap", cap_json(a.cap)},
                       {"ah_attr", av_json(a.ah_attr, q.dmac)},
                       {"alt_ah_attr", av_json(a.alt_ah_attr, "00:00:00:00:00:00")},
                       {"pkey_index", a.pkey_index},
                       {"alt_pkey_index", a.alt_pkey_index},
                       {"en_sqd_async_notify", a.en_sqd_async_notify != 0},
                       {"sq_draining", a.sq_draining != 0},
                       {"max_rd_atomic", a.max_rd_atomic},
                       {"max_dest_rd_atomic", a.max_dest_rd_atomic},
                       {"min_rnr_timer", a.min_rnr_timer},
                       {"port_num", a.port_num},
                       {"timeout", a.timeout},
                       {"retry_cnt", a.retry_cnt},
                       {"rnr_retry", a.rnr_retry},
                       {"alt_port_num", a.alt_port_num},
                       {"alt_timeout", a.alt_timeout}};
    const json init_attr = {{"qp_type", qp_type_name(init.qp_type)},
                            {"cap", cap_json(init.cap)},
                            {"sq_sig_all", init.sq_sig_all != 0}};
    return {{"attr", attr}, {"init_attr", init_attr}};
  }

  json destroy_qp(const Fields& f) {
    f.only(keys::kQpNum);
    const std::uint32_t n = f.u32("qp_num");
    Session::Qp& q = qp("destroy_qp", n);
    if (s_.cm_) s_.cm_->forget(n);
    // Some devices block in destroy while a memory window holds the QP (rxe with a bound type 2
    // window): the verb runs on its own thread, so a hang is one ETIMEDOUT answer, not a dead
    // session. The QP is then gone from the session; freeing its windows may release the thread.
    auto result = std::make_shared<std::promise<int>>();
    std::future<int> done = result->get_future();
    std::thread([qp = q.qp, result] { result->set_value(ibv_destroy_qp(qp)); }).detach();
    if (done.wait_for(kDestroyTimeout) != std::future_status::ready) {
      s_.qps_.erase(n);
      verbs_fail(ETIMEDOUT, fmt::format("destroy_qp: QP {}: ibv_destroy_qp has not returned after "
                                        "{} s (the device blocks in destroy)",
                                        n, kDestroyTimeout.count()));
    }
    if (const int e = done.get()) verbs_fail(e, fmt::format("destroy_qp: QP {}", n));
    s_.qps_.erase(n);
    return json::object();
  }

  // Scatter lists, parsed into `sges` (kept alive until the post).
  static void parse_sg_list(const Fields& f, std::vector<ibv_sge>& sges) {
    if (!f.has("sg_list")) return;
    const json& list = f.array("sg_list");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Fields s(list[i], fmt::format("{}[{}]", f.path("sg_list"), i));
      s.only(keys::kSge);
      sges.push_back({s.u("addr", UINT64_MAX), s.u32("length"), s.u32("lkey")});
    }
  }

  json post_send(const Fields& f) {
    f.only(keys::kPost);
    Session::Qp& q = qp("post_send", f.u32("qp_num"));
    const json& list = f.array("wrs");
    if (list.empty()) fail("post_send.wrs: the list is empty");
    std::vector<ibv_send_wr> wrs(list.size());
    std::vector<std::vector<ibv_sge>> sges(list.size());
    std::vector<std::vector<std::uint8_t>> inline_data(list.size());
    std::vector<std::pair<Session::Mw*, std::uint32_t>> bound;  // windows and their new R_Keys
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Fields w(list[i], fmt::format("post_send.wrs[{}]", i));
      w.only(keys::kSendWr);
      ibv_send_wr& wr = wrs[i];
      wr.wr_id = w.u("wr_id", UINT64_MAX, 0);
      const std::string opcode = w.text("opcode");
      const auto op = wr_opcode_from_name(opcode);
      if (!op)
        fail("{}: '{}' is not a send opcode (SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_READ, ...)",
             w.path("opcode"), opcode);
      wr.opcode = *op;
      wr.send_flags = parse_flags(w, "send_flags", FlagSet::kSend);
      parse_sg_list(w, sges[i]);
      if (w.has("inline_data")) {
        if (!(wr.send_flags & IBV_SEND_INLINE))
          fail("{}: inline_data needs the INLINE send flag", w.path("inline_data"));
        inline_data[i] = w.hex("inline_data");
        sges[i].push_back({reinterpret_cast<std::uintptr_t>(inline_data[i].data()),
                           static_cast<std::uint32_t>(inline_data[i].size()), 0});
      }
      wr.imm_data = htonl(w.u32("imm_data", 0));
      if (w.has("invalidate_rkey")) wr.invalidate_rkey = w.u32("invalidate_rkey");
      if (w.has("rdma")) {
        const Fields r(w.at("rdma"), w.path("rdma"));
        r.only(keys::kRdma);
        wr.wr.rdma.remote_addr = r.u("remote_addr", UINT64_MAX);
        wr.wr.rdma.rkey = r.u32("rkey");
      }
      if (w.has("atomic")) {
        const Fields a(w.at("atomic"), w.path("atomic"));
        a.only(keys::kAtomic);
        wr.wr.atomic.remote_addr = a.u("remote_addr", UINT64_MAX);
        wr.wr.atomic.compare_add = a.u("compare_add", UINT64_MAX, 0);
        wr.wr.atomic.swap = a.u("swap", UINT64_MAX, 0);
        wr.wr.atomic.rkey = a.u32("rkey");
      }
      if (w.has("bind_mw")) {
        const Fields b(w.at("bind_mw"), w.path("bind_mw"));
        b.only(keys::kBindMwWr);
        Session::Mw& m = mw("post_send", b.u32("mw"));
        wr.bind_mw.mw = m.mw;
        wr.bind_mw.rkey = b.has("rkey") ? b.u32("rkey") : ibv_inc_rkey(m.rkey);
        wr.bind_mw.bind_info = bind_info(b);
        bound.emplace_back(&m, wr.bind_mw.rkey);
      } else if (wr.opcode == IBV_WR_BIND_MW) {
        fail("{}: a BIND_MW work request needs 'bind_mw'", w.path("opcode"));
      }
      if (w.has("ud")) {
        const Fields u(w.at("ud"), w.path("ud"));
        u.only(keys::kUd);
        ibv_ah_attr attr = parse_av(u.at("ah"), u.path("ah"), nullptr);
        ibv_ah* ah = ibv_create_ah(pd("post_send", q.pd), &attr);
        if (!ah)
          verbs_fail(errno ? errno : EINVAL,
                     fmt::format("post_send.wrs[{}]: ibv_create_ah failed", i));
        s_.ahs_.push_back(ah);
        wr.wr.ud.ah = ah;
        wr.wr.ud.remote_qpn = static_cast<std::uint32_t>(u.u("remote_qpn", 0xFFFFFF));
        wr.wr.ud.remote_qkey = u.u32("remote_qkey");
      }
    }
    for (std::size_t i = 0; i < wrs.size(); ++i) {
      wrs[i].sg_list = sges[i].empty() ? nullptr : sges[i].data();
      wrs[i].num_sge = static_cast<int>(sges[i].size());
      wrs[i].next = i + 1 < wrs.size() ? &wrs[i + 1] : nullptr;
    }
    // One chained call: the WRs share one doorbell.
    ibv_send_wr* bad = nullptr;
    if (const int e = ibv_post_send(q.qp, wrs.data(), &bad)) {
      const std::size_t index = bad ? static_cast<std::size_t>(bad - wrs.data()) : 0;
      verbs_fail(e, fmt::format("post_send: QP {}: WR {} not posted", q.qp->qp_num, index), index);
    }
    for (auto& [m, rkey] : bound) m->rkey = rkey;
    return {{"posted", wrs.size()}};
  }

  json post_recv(const Fields& f) {
    f.only(keys::kPost);
    Session::Qp& q = qp("post_recv", f.u32("qp_num"));
    const json& list = f.array("wrs");
    if (list.empty()) fail("post_recv.wrs: the list is empty");
    std::vector<ibv_recv_wr> wrs(list.size());
    std::vector<std::vector<ibv_sge>> sges(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Fields w(list[i], fmt::format("post_recv.wrs[{}]", i));
      w.only(keys::kRecvWr);
      wrs[i].wr_id = w.u("wr_id", UINT64_MAX, 0);
      parse_sg_list(w, sges[i]);
    }
    for (std::size_t i = 0; i < wrs.size(); ++i) {
      wrs[i].sg_list = sges[i].empty() ? nullptr : sges[i].data();
      wrs[i].num_sge = static_cast<int>(sges[i].size());
      wrs[i].next = i + 1 < wrs.size() ? &wrs[i + 1] : nullptr;
    }
    ibv_recv_wr* bad = nullptr;
    if (const int e = ibv_post_recv(q.qp, wrs.data(), &bad)) {
      const std::size_t index = bad ? static_cast<std::size_t>(bad - wrs.data()) : 0;
      verbs_fail(e, fmt::format("post_recv: QP {}: WR {} not posted", q.qp->qp_num, index), index);
    }
    return {{"posted", wrs.size()}};
  }

  // The port's counters as the kernel exposes them (hw_counters: the driver's own; counters: the
  // IB PortCounters), by their file names.
  json counters(const Fields& f) {
    f.only(keys::kCounters);
    ctx("counters");
    std::map<std::string, std::uint64_t> all;
    for (const char* dir : {"counters", "hw_counters"}) {
      const std::string path = fmt::format("/sys/class/infiniband/{}/ports/{}/{}", s_.device_name_,
                                           s_.options_.port, dir);
      DIR* d = opendir(path.c_str());
      if (!d) continue;
      while (const dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        const std::string value = read_line(path + "/" + e->d_name);
        char* end = nullptr;
        const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
        if (!value.empty() && end && *end == '\0') all[e->d_name] = v;
      }
      closedir(d);
    }
    json out = json::object();
    if (f.has("names")) {
      const json& names = f.array("names");
      for (std::size_t i = 0; i < names.size(); ++i) {
        if (!names[i].is_string())
          fail("counters.names[{}]: must be a string, got {}", i, shown(names[i]));
        const std::string name = names[i].get<std::string>();
        const auto it = all.find(name);
        if (it == all.end())
          verbs_fail(ENOENT,
                     fmt::format("counters: {} has no counter '{}'", s_.device_name_, name));
        out[name] = it->second;
      }
    } else {
      for (const auto& [name, value] : all) out[name] = value;
    }
    return {{"counters", out}};
  }

  // The host's kernel log lines within the window (kmsg.h). No device needed: the log is the
  // host's. now_unix_ns lets the tester place them on its own clock.
  json kernel_log(const Fields& f) {
    f.only(keys::kKernelLog);
    KmsgWindow window;
    window.since_unix_ns = static_cast<std::int64_t>(f.u("since_unix_ns", INT64_MAX, 0));
    window.until_unix_ns = static_cast<std::int64_t>(f.u("until_unix_ns", INT64_MAX, INT64_MAX));
    window.max_lines = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(f.u("max_lines", UINT32_MAX, 200), control::kMaxKernelLogLines));
    if (window.since_unix_ns > window.until_unix_ns)
      fail("kernel_log.since_unix_ns: {} is after until_unix_ns {}", window.since_unix_ns,
           window.until_unix_ns);
    json lines = json::array();
    json out = {{"dropped", 0}, {"source", s_.options_.kernel_log}};
    if (window.max_lines > 0) {
      const KmsgClock stamps = kmsg_clock();
      out["stamp_clock"] = stamps.method;
      auto read = read_kernel_log(s_.options_.kernel_log, window, stamps.to_unix_ns);
      if (!read) verbs_fail(read.error().error, read.error().message);
      for (const KmsgLine& l : read->lines)
        lines.push_back({{"unix_ns", l.unix_ns},
                         {"text", l.record.text},
                         {"priority", l.record.priority},
                         {"seq", l.record.seq}});
      out["dropped"] = read->dropped;
      if (read->malformed > 0) {
        out["malformed"] = read->malformed;
        out["malformed_first"] = read->first_malformed;
      }
    }
    out["lines"] = std::move(lines);
    out["now_unix_ns"] = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
    return out;
  }

  json async_events(const Fields& f) {
    f.only(keys::kNone);
    ibv_context* c = ctx("async_events");
    json events = json::array();
    ibv_async_event ev{};
    while (ibv_get_async_event(c, &ev) == 0) {
      json element = nullptr;
      switch (ev.event_type) {
        case IBV_EVENT_CQ_ERR:
          for (const auto& [h, cq] : s_.cqs_)
            if (cq.cq == ev.element.cq) element = h;
          break;
        case IBV_EVENT_QP_FATAL:
        case IBV_EVENT_QP_REQ_ERR:
        case IBV_EVENT_QP_ACCESS_ERR:
        case IBV_EVENT_COMM_EST:
        case IBV_EVENT_SQ_DRAINED:
        case IBV_EVENT_PATH_MIG:
        case IBV_EVENT_PATH_MIG_ERR:
        case IBV_EVENT_QP_LAST_WQE_REACHED:
          element = ev.element.qp->qp_num;
          break;
        case IBV_EVENT_SRQ_ERR:
        case IBV_EVENT_SRQ_LIMIT_REACHED:
          break;
        default:
          element = ev.element.port_num;
          break;
      }
      events.push_back({{"event_type", async_event_name(ev.event_type)}, {"element", element}});
      ibv_ack_async_event(&ev);
    }
    return {{"events", events}, {"dropped", 0}};
  }

  json cm_connect(const Fields& f) {
    f.only(keys::kCmConnect);  // before the QP lookup: an unknown field is the first thing said
    Session::Qp& q = qp("cm_connect", static_cast<std::uint32_t>(f.u("qp_num", UINT32_MAX)));
    if (q.qp->qp_type != IBV_QPT_RC && q.qp->qp_type != IBV_QPT_UC)
      verbs_fail(EINVAL, fmt::format("cm_connect: QP {} is not RC or UC", q.qp->qp_num));
    if (s_.local_ipv4_.empty())
      verbs_fail(ENODEV, "cm_connect: the port has no RoCEv2 IPv4 GID to connect from");
    if (!s_.cm_) s_.cm_ = std::make_unique<CmActive>();
    return s_.cm_->connect(f, q.qp, s_.local_ipv4_);
  }

  json cm_status(const Fields& f) {
    f.only(keys::kQpNum);
    const std::uint32_t n = f.u32("qp_num");
    if (!s_.cm_) verbs_fail(ENOENT, fmt::format("cm_status: cm_connect never named QP {}", n));
    return s_.cm_->status(n);
  }

  json cm_disconnect(const Fields& f) {
    f.only(keys::kQpNum);
    const std::uint32_t n = f.u32("qp_num");
    if (!s_.cm_)
      verbs_fail(EINVAL, fmt::format("cm_disconnect: QP {} has no established connection", n));
    return s_.cm_->disconnect(n);
  }

  json reset(const Fields& f) {
    f.only(keys::kNone);
    s_.reset();
    return json::object();
  }

  json quirks(const Fields& f) {
    f.only(keys::kNone);
    return {{"active", json::array()}, {"known", json::array()}};
  }

 private:
  Session& s_;
};

namespace {
using Handler = json (Ops::*)(const Fields&);
struct OpEntry {
  std::string_view name;
  Handler handler;
};
constexpr auto kOps = std::to_array<OpEntry>({{"hello", &Ops::hello},
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
                                              {"reset", &Ops::reset}});
static_assert(control::lists_every_op(kOps), "the agent serves every op of control/ops.h");
}  // namespace

Session::Session(const SessionOptions& options) : options_(options) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list || n == 0) {
    device_error_ =
        "no RDMA device on this host (ibv_get_device_list is empty): load a driver "
        "(modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0)";
    if (list) ibv_free_device_list(list);
    return;
  }
  ibv_device* chosen = nullptr;
  for (int i = 0; i < n; ++i)
    if (options.device.empty() || options.device == ibv_get_device_name(list[i])) {
      chosen = list[i];
      break;
    }
  if (!chosen) {
    device_error_ = fmt::format("no RDMA device '{}' (ibv_devices lists them)", options.device);
  } else {
    device_name_ = ibv_get_device_name(chosen);
    ctx_ = ibv_open_device(chosen);
    if (!ctx_)
      device_error_ = fmt::format("cannot open {}: {}", device_name_, std::strerror(errno));
  }
  ibv_free_device_list(list);
  if (!ctx_) return;
  // async_events drains without waiting; so does cq_events, after its one wait.
  const int flags = fcntl(ctx_->async_fd, F_GETFL);
  fcntl(ctx_->async_fd, F_SETFL, flags | O_NONBLOCK);
  channel_ = ibv_create_comp_channel(ctx_);
  if (channel_) fcntl(channel_->fd, F_SETFL, fcntl(channel_->fd, F_GETFL) | O_NONBLOCK);
  ibv_port_attr p{};
  if (ibv_query_port(ctx_, options_.port, &p) != 0) return;
  for (int i = 0; i < p.gid_tbl_len; ++i) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(ctx_, options_.port, static_cast<std::uint32_t>(i), &entry, 0) != 0)
      continue;
    if (entry.gid_type != IBV_GID_TYPE_ROCE_V2) continue;
    if (is_v4_mapped(entry.gid)) {
      if (roce_v2_ipv4_gid_ < 0) {
        roce_v2_ipv4_gid_ = i;
        local_ipv4_ = mapped_ipv4_text(entry.gid);
      }
    } else if (roce_v2_ipv6_gid_ < 0 &&
               !(entry.gid.raw[0] == 0xFE && (entry.gid.raw[1] & 0xC0) == 0x80)) {
      roce_v2_ipv6_gid_ = i;  // a routable IPv6 address (not the link-local GID 0)
    }
  }
}

Session::~Session() {
  release_all();
  if (channel_) ibv_destroy_comp_channel(channel_);
  if (ctx_) ibv_close_device(ctx_);
}

void Session::release_all() {
  // Dependants first: connections name QPs, QPs hold CQs and PDs, MRs and AHs hold PDs.
  cm_.reset();
  // Windows first: a bound window keeps its region (and type 2 its QP) busy.
  for (auto& [h, m] : mws_) ibv_dealloc_mw(m.mw);
  mws_.clear();
  for (auto& [n, q] : qps_) ibv_destroy_qp(q.qp);
  qps_.clear();
  for (auto& [h, m] : mrs_) {
    ibv_dereg_mr(m.mr);
    std::free(m.buffer);
  }
  mrs_.clear();
  for (ibv_ah* ah : ahs_) ibv_destroy_ah(ah);
  ahs_.clear();
  for (auto& [h, c] : cqs_) ibv_destroy_cq(c.cq);
  cqs_.clear();
  for (auto& [h, p] : pds_) ibv_dealloc_pd(p);
  pds_.clear();
}

void Session::reset() {
  // Events still queued name the old QPs and CQs, and verbs will not destroy an object whose
  // event is unacknowledged: take them first.
  if (ctx_) {
    ibv_async_event ev{};
    while (ibv_get_async_event(ctx_, &ev) == 0) ibv_ack_async_event(&ev);
  }
  release_all();
  next_handle_ = 1;
}

std::string Session::holdings() const {
  return fmt::format("{} QPs, {} MRs, {} MWs, {} CQs, {} PDs, {} AHs", qps_.size(), mrs_.size(),
                     mws_.size(), cqs_.size(), pds_.size(), ahs_.size());
}

std::span<const std::string_view> Session::ops() {
  return control::kOpNames;
}

json Session::handle(const json& request) {
  json id = nullptr;
  if (request.is_object()) {
    const auto it = request.find("id");
    if (it != request.end() && (it->is_number() || it->is_string())) id = *it;
  }
  json response;
  try {
    const Fields f(request, "request", true);
    if (request.contains("id") && id.is_null() && !request["id"].is_null())
      fail("request.id: must be a number or a string, got {}", shown(request["id"]));
    const std::string op = f.text("op");
    const auto it =
        std::find_if(kOps.begin(), kOps.end(), [&](const OpEntry& e) { return e.name == op; });
    if (it == kOps.end()) {
      std::string known;
      for (const OpEntry& e : kOps) known += fmt::format("{}{}", known.empty() ? "" : ", ", e.name);
      fail("unknown op '{}' (known: {})", op, known);
    }
    const Fields body(request, op, true);
    Ops ops(*this);
    response = (ops.*(it->handler))(body);
    response["ok"] = true;
  } catch (const RequestError& e) {
    response = {{"ok", false}, {"errno", "EINVAL"}, {"error", "EINVAL: " + e.message}};
  } catch (const CmActiveFailure& e) {
    const std::string name = errno_name(e.error);
    response = {{"ok", false}, {"errno", name}, {"error", fmt::format("{}: {}", name, e.message)}};
  } catch (const VerbsFailure& e) {
    const std::string name = errno_name(e.error);
    response = {{"ok", false}, {"errno", name}, {"error", fmt::format("{}: {}", name, e.message)}};
    if (e.bad_wr) response["bad_wr"] = *e.bad_wr;
  } catch (const std::exception& e) {
    // nlohmann::json conversions of unexpected shapes; never fatal.
    response = {{"ok", false}, {"errno", "EINVAL"}, {"error", fmt::format("EINVAL: {}", e.what())}};
  }
  response["id"] = id;
  return response;
}

std::string Session::handle_line(std::string_view line) {
  json request = json::parse(line.begin(), line.end(), nullptr, false);
  json response;
  if (request.is_discarded()) {
    response = {{"id", nullptr},
                {"ok", false},
                {"errno", "EINVAL"},
                {"error", "EINVAL: the line is not valid JSON (one request object per line)"}};
  } else {
    response = handle(request);
  }
  return control::dump_line(response);
}

}  // namespace roceconf::agent
