// Two reference NICs joined back to back: A connects through its CM agent to B's responder
// application (rdma_cm service, REP private data per the RCNF convention) and moves data with
// SEND, RDMA WRITE, RDMA READ and atomics, multi-packet at every path MTU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <numeric>
#include <vector>

#include "capture/port/pcapng_writer.h"
#include "dissector/mad/rdma_cm.h"
#include "suite/reference_nic/cm_agent.h"
#include "suite/reference_nic/nic.h"
#include "suite/reference_nic/responder_app.h"

namespace roceconf::target {
namespace {

constexpr MacAddress kMacA{0x02, 0, 0, 0, 0, 0x0a};
constexpr MacAddress kMacB{0x02, 0, 0, 0, 0, 0x0b};
constexpr std::uint64_t kStep = 1'000;  // ns between pump rounds

NicConfig config(MacAddress mac, Ipv4Address ip) {
  NicConfig c;
  c.device.port.mac = mac;
  c.device.attr.node_guid = 0x0200'00ff'fe00'0000ull | mac[5];
  c.ipv4 = ip;
  return c;
}

// Frames each NIC sends wait in the other's inbox until pump() delivers them. With
// ROCECONF_SAMPLE_CAPTURE=FILE the 1024-byte-MTU session is also written as pcapng: that is how
// samples/rc-session.pcapng was made.
struct BackToBack {
  std::deque<std::vector<std::uint8_t>> to_a, to_b;
  std::optional<PcapngWriter> capture;
  Nic a{config(kMacA, {192, 0, 2, 1}), [this](std::span<const std::uint8_t> f) {
          record(f);
          to_b.emplace_back(f.begin(), f.end());
        }};
  Nic b{config(kMacB, {192, 0, 2, 2}), [this](std::span<const std::uint8_t> f) {
          record(f);
          to_a.emplace_back(f.begin(), f.end());
        }};

  void record(std::span<const std::uint8_t> f) {
    // Simulated time: 2026-01-01 plus the pump clock.
    if (capture)
      (void)capture->write(PcapngRecord{
          .frame = f, .unix_ns = 1767225600'000000000 + static_cast<std::int64_t>(now)});
  }
  std::unique_ptr<ResponderApp> app;
  std::uint64_t now = 1;

  // Delivers frames and runs timers until both sides are quiet.
  void pump(int max_rounds = 10000) {
    for (int i = 0; i < max_rounds && (!to_a.empty() || !to_b.empty()); ++i) {
      now += kStep;
      while (!to_b.empty()) {
        auto f = std::move(to_b.front());
        to_b.pop_front();
        b.receive(f, now);
        if (app) app->service();
      }
      while (!to_a.empty()) {
        auto f = std::move(to_a.front());
        to_a.pop_front();
        a.receive(f, now);
      }
      a.tick(now);
      b.tick(now);
      if (app) app->service();
    }
  }
};

struct Local {
  std::uint32_t pd = 0, cq = 0, qp = 0;
  Mr* mr = nullptr;
};

Local make_local(Nic& nic, std::uint64_t buffer_size) {
  Device& d = nic.device();
  Local l;
  l.pd = *d.alloc_pd();
  l.cq = (*d.create_cq(256))->handle();
  QpInit init;
  init.qp_type = QpType::kRc;
  init.pd = l.pd;
  init.send_cq = init.recv_cq = l.cq;
  init.cap.max_send_wr = 64;
  init.cap.max_recv_wr = 64;
  init.sq_sig_all = true;
  l.qp = (*d.create_qp(init))->qp_num();
  MrInit m;
  m.pd = l.pd;
  m.length = buffer_size;
  m.access =
      access::kLocalWrite | access::kRemoteRead | access::kRemoteWrite | access::kRemoteAtomic;
  l.mr = *d.reg_mr(m);
  return l;
}

std::vector<Cqe> drain(Nic& nic, std::uint32_t cq) {
  return *nic.device().poll_cq(cq, 1024);
}

class TwoNics : public ::testing::TestWithParam<PathMtu> {};

TEST_P(TwoNics, ConnectAndMoveData) {
  const PathMtu mtu = GetParam();
  const std::uint32_t pmtu = path_mtu_bytes(mtu);
  BackToBack link;
  if (const char* path = std::getenv("ROCECONF_SAMPLE_CAPTURE"); path && mtu == PathMtu::k1024) {
    auto writer = PcapngWriter::create(path);
    ASSERT_TRUE(writer) << writer.error().message;
    link.capture.emplace(std::move(*writer));
  }
  auto app = ResponderApp::start(link.b, ResponderAppConfig{});
  ASSERT_TRUE(app) << app.error();
  link.app = std::move(*app);

  Local a = make_local(link.a, 64 * 1024);
  std::optional<CmRep> rep;
  std::vector<std::uint8_t> rep_private;  // the REP views its frame only during the callback
  std::optional<std::uint16_t> rejected;
  ConnectParams params;
  params.service_id = rdma_cm_service_id(rdma_cm_ps::kTcp, 7471);
  params.peer.dgid = gid_from_ipv4({192, 0, 2, 2});
  params.peer.dmac = kMacB;
  params.qp_num = a.qp;
  params.path_mtu = mtu;
  // The REQ's Starting PSN: where B's requests would start. A's requests start at the REP's
  // (IBA 12.7.23, 12.7.36).
  params.starting_psn = 0xFFFFF0;
  params.responder_resources = 4;
  params.initiator_depth = 4;
  ConnectCallbacks cb;
  cb.established = [&](std::uint32_t, const CmRep& r) {
    rep = r;
    rep_private.assign(r.private_data.begin(), r.private_data.end());
  };
  cb.rejected = [&](std::uint16_t reason) { rejected = reason; };
  bool disconnected = false;
  cb.disconnected = [&](std::uint32_t) { disconnected = true; };
  const auto comm_id = link.a.cm().connect(params, cb);
  ASSERT_TRUE(comm_id) << comm_id.error();
  link.pump();
  ASSERT_FALSE(rejected) << "REJ reason " << *rejected;
  ASSERT_TRUE(rep);
  EXPECT_EQ(link.a.device().qp(a.qp)->state(), QpState::kRts);
  const auto remote = RcnfPrivateData::decode(rep_private);
  ASSERT_TRUE(remote) << remote.error();
  ASSERT_EQ(link.app->connections().size(), 1u);
  const auto& conn = link.app->connections().begin()->second;
  Mr* region = link.b.device().mr(conn.region_mr);
  ASSERT_NE(region, nullptr);
  EXPECT_EQ(remote->rkey, region->rkey());
  EXPECT_EQ(link.b.device().qp(conn.qp_num)->attr().path_mtu, mtu);
  EXPECT_EQ(link.a.device().qp(a.qp)->attr().sq_psn, rep->starting_psn);
  EXPECT_EQ(link.b.device().qp(conn.qp_num)->attr().rq_psn, rep->starting_psn);
  EXPECT_EQ(link.b.device().qp(conn.qp_num)->attr().sq_psn, 0xFFFFF0u);
  EXPECT_EQ(link.a.device().qp(a.qp)->attr().rq_psn, 0xFFFFF0u);

  // Local buffer layout: [0, 16K) source, [16K, 32K) READ destination, [32K, +8) atomic result.
  auto local = a.mr->bytes();
  std::iota(local.begin(), local.begin() + 16384, std::uint8_t{7});
  const std::uint32_t len = std::min<std::uint32_t>(3 * pmtu + 5, 16384);
  const std::uint32_t send_len = std::min<std::uint32_t>(2 * pmtu + 3, remote->recv_buffer_size);

  std::vector<SendWr> wrs(4);
  wrs[0].wr_id = 1;
  wrs[0].opcode = WrOpcode::kSend;
  wrs[0].sg_list = {Sge{a.mr->addr(), send_len, a.mr->lkey()}};
  wrs[1].wr_id = 2;
  wrs[1].opcode = WrOpcode::kRdmaWrite;
  wrs[1].sg_list = {Sge{a.mr->addr(), len, a.mr->lkey()}};
  wrs[1].rdma = {remote->region_va, remote->rkey};
  wrs[2].wr_id = 3;
  wrs[2].opcode = WrOpcode::kRdmaRead;
  wrs[2].sg_list = {Sge{a.mr->addr() + 16384, len, a.mr->lkey()}};
  wrs[2].rdma = {remote->region_va, remote->rkey};
  wrs[3].wr_id = 4;
  wrs[3].opcode = WrOpcode::kAtomicFetchAndAdd;
  wrs[3].sg_list = {Sge{a.mr->addr() + 32768, 8, a.mr->lkey()}};
  wrs[3].atomic = {remote->region_va + 32768, 5, 0, remote->rkey};
  ASSERT_TRUE(link.a.post_send(a.qp, wrs));
  link.pump();

  const auto cqes = drain(link.a, a.cq);
  ASSERT_EQ(cqes.size(), 4u);
  for (std::size_t i = 0; i < cqes.size(); ++i) {
    EXPECT_EQ(cqes[i].status, WcStatus::kSuccess) << "wr " << cqes[i].wr_id;
    EXPECT_EQ(cqes[i].wr_id, i + 1);
  }
  EXPECT_EQ(cqes[1].opcode, WcOpcode::kRdmaWrite);
  EXPECT_EQ(cqes[2].opcode, WcOpcode::kRdmaRead);
  EXPECT_EQ(cqes[2].byte_len, len);

  // B received the SEND into a posted buffer and holds the WRITE's bytes.
  EXPECT_GE(link.app->connections().begin()->second.receives, 1u);
  const auto b_bytes = region->bytes();
  EXPECT_TRUE(std::equal(local.begin(), local.begin() + len, b_bytes.begin()));
  // The READ brought the same bytes back (the atomic ran after it).
  EXPECT_TRUE(std::equal(local.begin(), local.begin() + len, local.begin() + 16384));
  // FETCH_ADD returned the original value and added 5 in place; memory holds host-order
  // 64-bit integers, as on every RoCE NIC.
  std::uint64_t before = 0, after = 0;
  std::memcpy(&before, local.data() + 32768, 8);
  std::memcpy(&after, b_bytes.data() + 32768, 8);
  EXPECT_EQ(after, before + 5);

  // Compare-and-swap: succeeds when the compare value matches.
  SendWr cas;
  cas.wr_id = 5;
  cas.opcode = WrOpcode::kAtomicCmpAndSwp;
  cas.sg_list = {Sge{a.mr->addr() + 32768, 8, a.mr->lkey()}};
  cas.atomic = {remote->region_va + 32768, after, 0x1122334455667788ull, remote->rkey};
  ASSERT_TRUE(link.a.post_send(a.qp, std::span(&cas, 1)));
  link.pump();
  const auto cas_cqe = drain(link.a, a.cq);
  ASSERT_EQ(cas_cqe.size(), 1u);
  EXPECT_EQ(cas_cqe[0].status, WcStatus::kSuccess);
  std::uint64_t swapped = 0;
  std::memcpy(&swapped, b_bytes.data() + 32768, 8);
  EXPECT_EQ(swapped, 0x1122334455667788ull);

  // DREQ → DREP: both sides learn of it and B's QP leaves RTS.
  const std::uint32_t b_qp = link.app->connections().begin()->second.qp_num;
  ASSERT_TRUE(link.a.cm().disconnect(*comm_id));
  link.pump();
  EXPECT_TRUE(disconnected);
  const Qp* bqp = link.b.device().qp(b_qp);
  EXPECT_TRUE(bqp == nullptr || bqp->state() == QpState::kErr);
}

INSTANTIATE_TEST_SUITE_P(EveryPmtu, TwoNics,
                         ::testing::Values(PathMtu::k256, PathMtu::k512, PathMtu::k1024,
                                           PathMtu::k2048, PathMtu::k4096),
                         [](const auto& info) {
                           return "mtu" + std::to_string(path_mtu_bytes(info.param));
                         });

}  // namespace
}  // namespace roceconf::target
