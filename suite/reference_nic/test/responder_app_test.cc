// The built-in responder application against an in-process NIC: a peer's CM REQ for the rdma_cm
// TCP service ID gets a REP whose private data follows RESPONDER_CONVENTION.md, and the
// connection then takes SENDs (buffers reposted), WRITEs, READs and atomics on the announced
// region until a DREQ releases it.
#include "suite/reference_nic/responder_app.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "suite/reference_nic/cm_agent.h"
#include "suite/reference_nic/test/peer_frames.h"

namespace roceconf::target {
namespace {

constexpr std::uint16_t kPort = 7471;
constexpr std::uint32_t kPeerQpn = 0x99;
// The REQ's Starting PSN: where the target's requests start. The peer sends from the REP's
// (IBA 12.7.23, 12.7.36).
constexpr std::uint32_t kReqPsn = 0x1000;

TEST(RcnfPrivateData, EncodesTheDocumentedLayout) {
  RcnfPrivateData d;
  d.region_va = 0x0102030405060708;
  d.rkey = 0x11223344;
  d.region_length = 0x10000;
  d.recv_depth = 16;
  d.recv_buffer_size = 4096;
  const std::array<std::uint8_t, 32> expected = {
      'R',  'C',  'N',  'F',  1,    0,    0,    0,     // magic, version, reserved
      0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // region VA
      0x11, 0x22, 0x33, 0x44, 0x00, 0x01, 0x00, 0x00,  // R_Key, region length
      0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x10, 0x00,  // receive depth, buffer size
  };
  EXPECT_EQ(d.encode(), expected);
  // Decoding reads the first 32 bytes of a longer, zero-padded REP private data area.
  std::vector<std::uint8_t> padded(expected.begin(), expected.end());
  padded.resize(kRepPrivateDataSize, 0);
  const auto back = RcnfPrivateData::decode(padded);
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(*back, d);
}

TEST(RcnfPrivateData, DecodeSaysWhatIsWrong) {
  auto bytes = RcnfPrivateData{}.encode();
  EXPECT_NE(RcnfPrivateData::decode(Bytes(bytes).first(31)).error().find("shorter"),
            std::string::npos);
  auto wrong = bytes;
  wrong[0] = 'X';
  EXPECT_NE(RcnfPrivateData::decode(wrong).error().find("not \"RCNF\""), std::string::npos);
  auto future = bytes;
  future[4] = 2;
  EXPECT_NE(RcnfPrivateData::decode(future).error().find("version 2"), std::string::npos);
  // Reserved bytes are ignored, so a later revision may use them.
  auto reserved = bytes;
  reserved[6] = 0xFF;
  EXPECT_TRUE(RcnfPrivateData::decode(reserved));
}

// A peer host at 192.0.2.1 that speaks to the NIC (192.0.2.2) frame by frame.
class ResponderAppTest : public ::testing::Test {
 protected:
  ResponderAppTest()
      : nic_(NicConfig{},
             [this](std::span<const std::uint8_t> f) { sent_.emplace_back(f.begin(), f.end()); }) {}

  void start(ResponderAppConfig config = {}) {
    config.port = kPort;
    auto app = ResponderApp::start(nic_, config);
    ASSERT_TRUE(app) << app.error();
    app_ = std::move(*app);
  }

  Packet to_nic(std::uint8_t op, std::uint32_t dqpn, std::uint32_t psn) {
    return test::peer_packet(nic_.device().port().mac, nic_.config().ipv4, op, dqpn, psn);
  }

  void deliver(const Packet& p) {
    now_ += 1000;
    nic_.receive(encode(p), now_);
    app_->service();
  }

  void send_mad(const CmMessage& message, std::uint64_t tid) {
    deliver(test::peer_mad(nic_.device().port().mac, nic_.config().ipv4, message, tid));
  }

  CmReq req(std::uint32_t comm_id, std::uint32_t qpn) {
    return test::rdma_cm_req(nic_.config().ipv4, kPort, comm_id, qpn, kReqPsn, req_private_);
  }

  // The CM messages the NIC sent since the last call, decoded (views into kept frames).
  std::vector<CmMessage> cm_sent() {
    std::vector<CmMessage> out;
    for (; seen_ < sent_.size(); ++seen_) {
      kept_.push_back(decode(sent_[seen_]));
      const Packet& p = kept_.back();
      if (p.mad && p.mad->cm) out.push_back(*p.mad->cm);
    }
    return out;
  }
  std::optional<CmRep> rep() {
    for (const CmMessage& m : cm_sent())
      if (const auto* r = std::get_if<CmRep>(&m)) return *r;
    return std::nullopt;
  }

  // A connection up to RTU: returns the REP.
  CmRep connect(std::uint32_t comm_id = 0x1234, std::uint32_t qpn = kPeerQpn) {
    send_mad(req(comm_id, qpn), 0x10 + comm_id);
    const auto r = rep();
    EXPECT_TRUE(r) << "no REP";
    if (!r) return {};
    CmRtu rtu;
    rtu.local_comm_id = comm_id;
    rtu.remote_comm_id = r->local_comm_id;
    send_mad(rtu, 0x20 + comm_id);
    return *r;
  }

  Nic nic_;
  std::unique_ptr<ResponderApp> app_;
  std::vector<std::vector<std::uint8_t>> sent_;
  std::deque<Packet> kept_;
  std::size_t seen_ = 0;
  std::uint64_t now_ = 1'000'000;
  std::array<std::uint8_t, kReqPrivateDataSize> req_private_{};
};

TEST_F(ResponderAppTest, RepAnnouncesTheRegionAndReceiveQueue) {
  ResponderAppConfig config;
  config.region_size = 8192;
  config.recv_depth = 8;
  config.recv_buffer_size = 1024;
  start(config);
  send_mad(req(0x1234, kPeerQpn), 0x77);
  const auto r = rep();
  ASSERT_TRUE(r) << "no REP for the rdma_cm TCP service ID";
  const auto data = RcnfPrivateData::decode(r->private_data);
  ASSERT_TRUE(data) << data.error();

  ASSERT_EQ(app_->connections().size(), 1u);
  const ResponderApp::Connection& c = app_->connections().begin()->second;
  EXPECT_EQ(r->local_qpn, c.qp_num);
  const Mr* region = nic_.device().mr(c.region_mr);
  ASSERT_NE(region, nullptr);
  EXPECT_EQ(data->version, 1);
  EXPECT_EQ(data->region_va, region->addr());
  EXPECT_EQ(data->rkey, region->rkey());
  EXPECT_EQ(data->region_length, 8192u);
  EXPECT_EQ(data->recv_depth, 8u);
  EXPECT_EQ(data->recv_buffer_size, 1024u);
  EXPECT_EQ(region->access(), access::kLocalWrite | access::kRemote);
  EXPECT_EQ(app_->private_data(c.qp_num), data);

  // The receive buffers are up before the REP, the QP waits in RTR for the RTU.
  const Qp* qp = nic_.device().qp(c.qp_num);
  ASSERT_NE(qp, nullptr);
  EXPECT_EQ(qp->state(), QpState::kRtr);
  EXPECT_EQ(qp->recv_queue().size(), 8u);
}

TEST_F(ResponderAppTest, ServesSendsWritesReadsAndAtomicsThenReleasesOnDreq) {
  start();
  const CmRep r = connect();
  const auto data = RcnfPrivateData::decode(r.private_data);
  ASSERT_TRUE(data) << data.error();
  const ResponderApp::Connection& c = app_->connections().at(r.local_qpn);
  EXPECT_TRUE(c.established);
  EXPECT_EQ(nic_.device().qp(c.qp_num)->state(), QpState::kRts);
  EXPECT_EQ(nic_.device().qp(c.qp_num)->attr().sq_psn, kReqPsn);
  EXPECT_EQ(nic_.device().qp(c.qp_num)->attr().rq_psn, r.starting_psn);

  std::uint32_t psn = r.starting_psn;
  // SENDs use up receive buffers, which the app puts back: twice the depth goes through.
  const std::vector<std::uint8_t> payload = {1, 2, 3, 4, 5, 6, 7, 8};
  for (std::uint32_t i = 0; i < 2 * data->recv_depth; ++i) {
    Packet p = to_nic(opcode::kRcSendOnly, c.qp_num, psn++);
    p.payload = payload;
    deliver(p);
  }
  EXPECT_EQ(app_->connections().at(c.qp_num).receives, 2u * data->recv_depth);
  EXPECT_EQ(nic_.device().qp(c.qp_num)->recv_queue().size(), data->recv_depth);
  EXPECT_EQ(nic_.device().counters().rnr_nak_sent, 0u);

  // WRITE into the region, READ it back, fetch-and-add on it.
  Packet w = to_nic(opcode::kRcWriteOnly, c.qp_num, psn++);
  w.reth = Reth{data->region_va + 8, data->rkey, 8};
  w.payload = payload;
  deliver(w);
  const Mr* region = nic_.device().mr(c.region_mr);
  EXPECT_EQ(region->bytes()[8], 1);
  EXPECT_EQ(region->bytes()[15], 8);

  Packet rd = to_nic(opcode::kRcReadRequest, c.qp_num, psn++);
  rd.reth = Reth{data->region_va + 8, data->rkey, 8};
  deliver(rd);
  cm_sent();  // decodes everything sent so far into kept_
  ASSERT_FALSE(kept_.empty());
  const Packet& response = kept_.back();
  ASSERT_TRUE(response.bth);
  EXPECT_EQ(response.bth->opcode, opcode::kRcReadResponseOnly);
  EXPECT_EQ(std::vector<std::uint8_t>(response.payload.begin(), response.payload.end()), payload);

  Packet fa = to_nic(opcode::kRcFetchAdd, c.qp_num, psn++);
  fa.atomiceth = AtomicEth{data->region_va + 16, data->rkey, 5, 0};
  deliver(fa);
  cm_sent();
  ASSERT_TRUE(kept_.back().bth);
  EXPECT_EQ(kept_.back().bth->opcode, opcode::kRcAtomicAck) << "atomics need REMOTE_ATOMIC";
  // The 64-bit operand sits in host (little-endian) order in memory, as verbs hosts keep it.
  EXPECT_EQ(region->bytes()[16], 5);

  // DREQ: the agent reports the end, the next service() gives everything back.
  CmDreq dreq;
  dreq.local_comm_id = 0x1234;
  dreq.remote_comm_id = r.local_comm_id;
  dreq.remote_qpn = c.qp_num;
  const std::uint32_t qpn = c.qp_num;
  const std::uint32_t pd = c.pd;
  send_mad(dreq, 0x99);
  EXPECT_TRUE(app_->connections().empty());
  EXPECT_EQ(nic_.device().qp(qpn), nullptr);
  EXPECT_EQ(nic_.device().pd(pd), nullptr);
  EXPECT_TRUE(nic_.device().mr_handles().empty());
  EXPECT_TRUE(nic_.device().cq_handles().empty());
}

TEST_F(ResponderAppTest, EachConnectionHasItsOwnQpRegionAndPd) {
  start();
  const CmRep a = connect(0x1001, 0x91);
  const CmRep b = connect(0x1002, 0x92);
  const auto da = RcnfPrivateData::decode(a.private_data);
  const auto db = RcnfPrivateData::decode(b.private_data);
  ASSERT_TRUE(da && db);
  EXPECT_NE(a.local_qpn, b.local_qpn);
  EXPECT_NE(da->rkey, db->rkey);
  EXPECT_NE(da->region_va, db->region_va);
  EXPECT_NE(app_->connections().at(a.local_qpn).pd, app_->connections().at(b.local_qpn).pd);
}

TEST_F(ResponderAppTest, BeyondMaxConnectionsRejectsWithNoResources) {
  ResponderAppConfig config;
  config.max_connections = 1;
  start(config);
  connect(0x2001, 0x91);
  send_mad(req(0x2002, 0x92), 0x55);
  std::optional<CmRej> rej;
  for (const CmMessage& m : cm_sent())
    if (const auto* r = std::get_if<CmRej>(&m)) rej = *r;
  ASSERT_TRUE(rej);
  EXPECT_EQ(rej->reason, 3);  // no resources available
  EXPECT_EQ(app_->connections().size(), 1u);
}

TEST_F(ResponderAppTest, OtherServiceIdsAreNotOurs) {
  start();
  CmReq r = req(0x3001, 0x91);
  r.service_id = rdma_cm_service_id(rdma_cm_ps::kTcp, kPort + 1);
  send_mad(r, 0x66);
  EXPECT_TRUE(app_->connections().empty());
  EXPECT_FALSE(rep());
}

TEST_F(ResponderAppTest, BadConfigIsRefused) {
  const auto refused = [&](ResponderAppConfig c) {
    const auto app = ResponderApp::start(nic_, c);
    return app ? std::string() : app.error();
  };
  ResponderAppConfig c;
  c.region_size = 0;
  EXPECT_NE(refused(c).find("region size 0"), std::string::npos);
  c = {};
  c.recv_depth = 0;
  EXPECT_NE(refused(c).find("receive depth 0"), std::string::npos);
  c = {};
  c.recv_buffer_size = 0;
  EXPECT_NE(refused(c).find("receive buffers"), std::string::npos);
  // The service ID can be listened on once.
  start();
  EXPECT_NE(refused(ResponderAppConfig{}).find("cannot listen on rdma_cm TCP port 7471"),
            std::string::npos);
}

}  // namespace
}  // namespace roceconf::target
