// Routing of received frames to the case's connections (receive_demux.h), over an in-memory
// port on virtual time: the target's side of the pair sends what a device would.
#include "suite/engine/receive_demux.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "capture/port/memory_port.h"
#include "dissector/mad/cm.h"
#include "dissector/opcode.h"
#include "suite/engine/case_stop.h"
#include "suite/engine/frame_builder.h"

namespace roceconf::engine {
namespace {

class ReceiveDemuxTest : public ::testing::Test {
 protected:
  ReceiveDemuxTest()
      : pair_(make_memory_pair({.clock = std::make_shared<VirtualClock>()})),
        evidence_(result_, pair_.a->clock()),
        demux_(*pair_.a, evidence_, connections_, passive_) {}

  Connection& add(const std::string& name, std::uint32_t qpn, std::uint32_t comm_id = 0) {
    auto c = std::make_unique<Connection>();
    c->name = name;
    c->local_qpn = qpn;
    c->local_comm_id = comm_id;
    auto& ref = *c;
    connections_.emplace(name, std::move(c));
    return ref;
  }

  // An ACK from the target to the tester's QP `dqpn` at `psn`.
  void ack(std::uint32_t dqpn, std::uint32_t psn) {
    Connection peer;
    peer.remote_qpn = dqpn;
    peer.next_psn = psn;
    auto f = build_request(target_side(), peer, opcode::kRcAck, {});
    ASSERT_TRUE(f) << f.error();
    ASSERT_TRUE(pair_.b->send(f->bytes));
  }

  void cm(const CmMessage& m, std::uint64_t tid = 0x77) {
    auto f = build_mad(target_side(), 0xFFFF, m, tid, {});
    ASSERT_TRUE(f) << f.error();
    ASSERT_TRUE(pair_.b->send(f->bytes));
  }

  static Addresses target_side() {
    Addresses a;
    a.tester = {{0x02, 0, 0, 0, 0, 0x02}, {192, 0, 2, 2}};
    a.device = {{0x02, 0, 0, 0, 0, 0x01}, {192, 0, 2, 1}};
    return a;
  }

  TimeNs soon() { return pair_.a->clock().now_ns() + kMillisecond; }

  static constexpr TimeNs kMillisecond = 1'000'000;
  MemoryPair pair_;
  report::CaseResult result_;
  EvidenceRecorder evidence_;
  ConnectionTable connections_;
  PassiveTable passive_;
  ReceiveDemux demux_;
};

TEST_F(ReceiveDemuxTest, RoutesTransportPacketsByDestinationQp) {
  Connection& a = add("a", 0x100);
  Connection& b = add("b", 0x200);
  ack(0x200, 5);
  ack(0x100, 6);
  const auto got = demux_.next_for(&a, soon());
  ASSERT_TRUE(got);
  EXPECT_EQ(got->packet.bth->psn, 6u);
  EXPECT_EQ(demux_.kept(), 1u);  // b's ACK waits for a step on b
  const auto later = demux_.next_for(&b, soon());
  ASSERT_TRUE(later);
  EXPECT_EQ(later->packet.bth->psn, 5u);
  EXPECT_EQ(demux_.kept(), 0u);
  EXPECT_FALSE(demux_.next_for(&b, soon()));
}

TEST_F(ReceiveDemuxTest, RecordsEveryRoceFrameWithItsOwnerAndDropsUnownedOnes) {
  add("a", 0x100);
  evidence_.set_step("t.rcase:3");
  ack(0x999, 1);  // nobody's
  ack(0x100, 2);
  const auto got = demux_.next_for(connections_.at("a").get(), soon());
  ASSERT_TRUE(got);
  EXPECT_EQ(got->packet.bth->psn, 2u);
  EXPECT_EQ(demux_.kept(), 0u);  // the unowned ACK is not kept
  ASSERT_EQ(result_.events.size(), 2u);
  for (const auto& e : result_.events) {
    EXPECT_EQ(e.kind, report::EventKind::kReceived);
    EXPECT_EQ(e.step, "t.rcase:3");
    EXPECT_FALSE(e.frame.empty());
  }
  EXPECT_FALSE(result_.events[0].text.starts_with("a "));
  EXPECT_TRUE(result_.events[1].text.starts_with("a ")) << result_.events[1].text;
}

TEST_F(ReceiveDemuxTest, SkipsFramesThatAreNotRoce) {
  add("a", 0x100);
  std::vector<std::uint8_t> arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  ASSERT_TRUE(pair_.b->send(arp));
  EXPECT_FALSE(demux_.next_for(nullptr, soon()));
  EXPECT_TRUE(result_.events.empty());
}

TEST_F(ReceiveDemuxTest, RoutesCmByEitherCommId) {
  Connection& a = add("a", 0x100, 0xA1);
  Connection& b = add("b", 0x200, 0xB1);
  b.remote_comm_id = 0xB2;
  // A REP names the tester's comm ID as its remote one.
  CmRep rep;
  rep.local_comm_id = 0x55;
  rep.remote_comm_id = 0xA1;
  cm(rep);
  // A DREQ from the target carries its own comm ID as local.
  CmDreq dreq;
  dreq.local_comm_id = 0xB2;
  dreq.remote_comm_id = 0;
  cm(dreq);
  auto first = demux_.next_for(nullptr, soon());
  ASSERT_TRUE(first);
  EXPECT_EQ(demux_.owner_of(first->packet), &a);
  auto second = demux_.next_for(nullptr, soon());
  ASSERT_TRUE(second);
  EXPECT_EQ(demux_.owner_of(second->packet), &b);
}

TEST_F(ReceiveDemuxTest, RoutesTheTargetsFirstReqToThePassiveSide) {
  Connection& by_service = add("s", 0x100);
  Connection& by_comm = add("c", 0x200);
  passive_["s"].service_id = 0x1000;
  passive_["c"].service_id = 0x2000;
  passive_["c"].target_comm_id = 0xC0;
  CmReq req;
  req.local_comm_id = 0x99;
  req.service_id = 0x1000;
  cm(req, 1);
  req.local_comm_id = 0xC0;  // cm_connect said so, whatever the service ID
  req.service_id = 0x1000;
  cm(req, 2);
  auto r1 = demux_.next_for(nullptr, soon());
  auto r2 = demux_.next_for(nullptr, soon());
  ASSERT_TRUE(r1 && r2);
  EXPECT_EQ(demux_.owner_of(r1->packet), &by_service);
  EXPECT_EQ(demux_.owner_of(r2->packet), &by_comm);
  // Once its REQ was seen, the service ID no longer routes (a retried REQ goes by comm ID).
  passive_["s"].req_seen = true;
  EXPECT_EQ(demux_.owner_of(r1->packet), nullptr);
  by_service.remote_comm_id = 0x99;
  EXPECT_EQ(demux_.owner_of(r1->packet), &by_service);
}

TEST_F(ReceiveDemuxTest, RoutesCmByTidLast) {
  Connection& a = add("a", 0x100, 0xA1);
  a.req_tid = 0x4242;
  CmRej rej;  // comm IDs the tester does not know
  rej.local_comm_id = 0x31;
  rej.remote_comm_id = 0x32;
  cm(rej, 0x4242);
  auto got = demux_.next_for(&a, soon());
  ASSERT_TRUE(got);
  EXPECT_TRUE(std::holds_alternative<CmRej>(*got->packet.mad->cm));
}

TEST_F(ReceiveDemuxTest, WaitingKeepsEverythingInArrivalOrder) {
  Connection& a = add("a", 0x100);
  add("b", 0x200);
  ack(0x200, 1);
  ASSERT_TRUE(demux_.next_for(&a, soon()) == std::nullopt);  // b's ACK kept
  ack(0x100, 2);
  ack(0x999, 3);  // unowned: a wait keeps it too
  demux_.keep_until(soon());
  EXPECT_EQ(demux_.kept(), 3u);
  // Without a connection: the oldest kept frame first, owned or not.
  std::vector<std::uint32_t> order;
  while (auto r = demux_.next_for(nullptr, soon())) order.push_back(r->packet.bth->psn);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{1, 2, 3}));
}

TEST_F(ReceiveDemuxTest, NewFramesOnlyWhenAsked) {
  Connection& a = add("a", 0x100);
  add("b", 0x200);
  ack(0x200, 1);
  ack(0x100, 2);
  demux_.keep_until(soon());
  ack(0x100, 3);
  const auto fresh = demux_.next_for(&a, soon(), false);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->packet.bth->psn, 3u);
  EXPECT_EQ(demux_.kept(), 2u);
  demux_.clear();
  EXPECT_EQ(demux_.kept(), 0u);
}

TEST_F(ReceiveDemuxTest, APortFailureErrorsTheCase) {
  add("a", 0x100);
  pair_.a->close();
  try {
    demux_.next_for(nullptr, soon());
    FAIL() << "no CaseStop";
  } catch (const CaseStop& stop) {
    EXPECT_EQ(stop.verdict, report::Verdict::kError);
    EXPECT_TRUE(std::string(stop.what()).starts_with("receiving failed: ")) << stop.what();
  }
}

}  // namespace
}  // namespace roceconf::engine
