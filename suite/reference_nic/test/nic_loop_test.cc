// The in-process target on an in-memory port: two reference NICs, each driven by a NicLoop on
// one end of a memory pair, connect through the CM and move data.
#include "suite/reference_nic/nic_loop.h"

#include <gtest/gtest.h>

#include "capture/port/memory_port.h"
#include "dissector/mad/rdma_cm.h"
#include "suite/reference_nic/cm_agent.h"
#include "suite/reference_nic/responder_app.h"

namespace roceconf::target {
namespace {

NicConfig config(MacAddress mac, Ipv4Address ip) {
  NicConfig c;
  c.device.port.mac = mac;
  c.device.attr.node_guid = 0x020000fffe000000ull | mac[5];
  c.ipv4 = ip;
  return c;
}

TEST(NicLoop, TwoNicsOnAMemoryPairConnectAndWriteThenRead) {
  const MacAddress mac_b{0x02, 0, 0, 0, 0, 0x0b};
  MemoryPair pair = make_memory_pair();
  NicLoop a(*pair.a, config({0x02, 0, 0, 0, 0, 0x0a}, {192, 0, 2, 1}));
  NicLoop b(*pair.b, config(mac_b, {192, 0, 2, 2}));
  auto app = ResponderApp::start(b.nic(), {});
  ASSERT_TRUE(app) << app.error();
  // One thread drives both ends: each step waits for nothing.
  auto run = [&](const std::function<bool()>& done) {
    const TimeNs give_up = pair.a->clock().now_ns() + 5'000'000'000;
    while (!done() && pair.a->clock().now_ns() < give_up) {
      ASSERT_TRUE(a.step(pair.a->clock().now_ns()));
      ASSERT_TRUE(b.step(pair.b->clock().now_ns()));
      (*app)->service();
    }
  };

  Device& d = a.nic().device();
  const std::uint32_t pd = *d.alloc_pd();
  const std::uint32_t cq = (*d.create_cq(16))->handle();
  const std::uint32_t qpn =
      (*d.create_qp(QpInit{QpType::kRc, pd, cq, cq, QpCap{8, 8, 1, 1}, true}))->qp_num();
  Mr* mr = *d.reg_mr(MrInit{pd, 8192, access::kLocalWrite, std::nullopt, {}});

  std::optional<CmRep> rep;
  std::vector<std::uint8_t> rep_private;  // the REP views its frame only during the callback
  ConnectParams params;
  params.service_id = rdma_cm_service_id(rdma_cm_ps::kTcp, 7471);
  params.peer.dgid = gid_from_ipv4({192, 0, 2, 2});
  params.peer.dmac = mac_b;
  params.qp_num = qpn;
  ConnectCallbacks callbacks;
  callbacks.established = [&](std::uint32_t, const CmRep& r) {
    rep = r;
    rep_private.assign(r.private_data.begin(), r.private_data.end());
  };
  a.nic().tick(a.now());
  ASSERT_TRUE(a.nic().cm().connect(params, callbacks));
  run([&] { return rep.has_value(); });
  ASSERT_TRUE(rep);
  const auto remote = RcnfPrivateData::decode(rep_private);
  ASSERT_TRUE(remote) << remote.error();

  auto bytes = mr->bytes();
  for (std::size_t i = 0; i < 3000; ++i) bytes[i] = static_cast<std::uint8_t>(i ^ 0x5A);
  std::vector<SendWr> wrs(2);
  wrs[0].wr_id = 1;
  wrs[0].opcode = WrOpcode::kRdmaWrite;
  wrs[0].sg_list = {Sge{mr->addr(), 3000, mr->lkey()}};
  wrs[0].rdma = {remote->region_va, remote->rkey};
  wrs[1].wr_id = 2;
  wrs[1].opcode = WrOpcode::kRdmaRead;
  wrs[1].sg_list = {Sge{mr->addr() + 4096, 3000, mr->lkey()}};
  wrs[1].rdma = {remote->region_va, remote->rkey};
  ASSERT_TRUE(a.nic().post_send(qpn, wrs));
  std::vector<Cqe> cqes;
  run([&] {
    const auto polled = d.poll_cq(cq, 8);
    if (polled) cqes.insert(cqes.end(), polled->begin(), polled->end());
    return cqes.size() == 2;
  });
  ASSERT_EQ(cqes.size(), 2u);
  EXPECT_EQ(cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(cqes[1].status, WcStatus::kSuccess);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.begin() + 3000, bytes.begin() + 4096));
}

}  // namespace
}  // namespace roceconf::target
