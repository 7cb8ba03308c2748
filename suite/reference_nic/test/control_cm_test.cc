// The control API's CM ops (cm_connect, cm_status, cm_disconnect) on two NICs wired back to
// back: A is driven through the control API as the active side, B listens (or does not) with
// its CM agent as the passive side.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dissector/mad/rdma_cm.h"
#include "suite/reference_nic/cm_agent.h"
#include "suite/reference_nic/control_api.h"
#include "suite/reference_nic/nic.h"

namespace roceconf::target {
namespace {

using json = nlohmann::json;

constexpr std::uint64_t kService = 0x1000000000000042;
constexpr Ipv4Address kIpA{192, 0, 2, 1};
constexpr Ipv4Address kIpB{192, 0, 2, 2};
constexpr MacAddress kMacA{0x02, 0, 0, 0, 0, 0xA1};
constexpr MacAddress kMacB{0x02, 0, 0, 0, 0, 0xB2};
constexpr std::uint64_t kMs = 1'000'000;

NicConfig nic_config(Ipv4Address ip, MacAddress mac, std::uint64_t guid) {
  NicConfig c;
  c.ipv4 = ip;
  c.device.port.mac = mac;
  c.device.attr.node_guid = guid;
  return c;
}

class ControlCmTest : public ::testing::Test {
 protected:
  ControlCmTest()
      : a_(nic_config(kIpA, kMacA, 0x0200A1FFFE0000A1),
           [this](std::span<const std::uint8_t> f) {
             if (!drop_) queue_.emplace_back(1, std::vector(f.begin(), f.end()));
             sent_by_a_.emplace_back(f.begin(), f.end());
           }),
        b_(nic_config(kIpB, kMacB, 0x0200B2FFFE0000B2),
           [this](std::span<const std::uint8_t> f) {
             if (!drop_) queue_.emplace_back(0, std::vector(f.begin(), f.end()));
           }),
        api_(a_) {
    pd_b_ = *b_.device().alloc_pd();
    cq_b_ = (*b_.device().create_cq(64))->handle();
  }

  json call(json request) {
    request["id"] = next_id_++;
    json response = api_.handle(request);
    EXPECT_TRUE(response.contains("ok")) << response;
    return response;
  }
  json ok(const json& request) {
    json r = call(request);
    EXPECT_EQ(r["ok"], true) << request << " -> " << r;
    return r;
  }
  std::string error(const json& request, std::string_view errno_name = "") {
    json r = call(request);
    EXPECT_EQ(r["ok"], false) << request << " -> " << r;
    if (!errno_name.empty()) {
      EXPECT_EQ(r.value("errno", ""), errno_name) << r;
    }
    return r.value("error", "");
  }

  // An RC QP on A in RESET, made through the API.
  std::uint32_t qp_on_a() {
    const json pd = ok({{"op", "alloc_pd"}});
    const json cq = ok({{"op", "create_cq"}, {"depth", 16}});
    return ok({{"op", "create_qp"},
               {"qp_type", "RC"},
               {"pd", pd["pd"]},
               {"send_cq", cq["cq"]},
               {"recv_cq", cq["cq"]}})["qp_num"];
  }

  json connect_request(std::uint32_t qpn) {
    return {{"op", "cm_connect"},
            {"qp_num", qpn},
            {"service_id", "0x1000000000000042"},
            {"dgid", "192.0.2.2"},
            {"dmac", "02:00:00:00:00:b2"}};
  }

  void listen_on_b() {
    ListenerCallbacks l;
    l.create_qp = [this](const CmReq&) -> std::expected<std::uint32_t, std::uint16_t> {
      return (*b_.device().create_qp(
                  QpInit{QpType::kRc, pd_b_, cq_b_, cq_b_, QpCap{8, 8, 1, 1, 0}, false}))
          ->qp_num();
    };
    l.established = [this](std::uint32_t q) { b_established_.push_back(q); };
    ASSERT_TRUE(b_.cm().listen(kService, l));
  }

  void pump(std::uint64_t now = 0) {
    while (!queue_.empty()) {
      auto [to, frame] = std::move(queue_.front());
      queue_.pop_front();
      (to == 0 ? a_ : b_).receive(frame, now);
    }
  }

  // The CM message of a frame A sent.
  static CmMessage cm_of(const std::vector<std::uint8_t>& frame) {
    const Packet p = decode(frame);
    EXPECT_TRUE(p.mad && p.mad->cm);
    return *p.mad->cm;
  }

  std::string state_of(std::uint32_t qpn) {
    return ok({{"op", "cm_status"}, {"qp_num", qpn}})["state"];
  }

  std::deque<std::pair<int, std::vector<std::uint8_t>>> queue_;
  std::vector<std::vector<std::uint8_t>> sent_by_a_;
  bool drop_ = false;
  Nic a_;
  Nic b_;
  ControlApi api_;
  std::uint32_t pd_b_ = 0;
  std::uint32_t cq_b_ = 0;
  std::vector<std::uint32_t> b_established_;
  int next_id_ = 1;
};

TEST_F(ControlCmTest, HelloListsTheCmOps) {
  const json ops = ok({{"op", "hello"}})["ops"];
  for (const char* op : {"cm_connect", "cm_status", "cm_disconnect"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
}

TEST_F(ControlCmTest, ConnectEstablishesThenDisconnects) {
  listen_on_b();
  const std::uint32_t qpn = qp_on_a();
  json request = connect_request(qpn);
  request["path_mtu"] = 2048;
  request["starting_psn"] = 0x123456;
  request["responder_resources"] = 3;
  request["initiator_depth"] = 2;
  request["retry_count"] = 6;
  request["rnr_retry_count"] = 5;
  const json r = ok(request);
  const std::uint32_t comm_id = r["comm_id"];
  EXPECT_NE(comm_id, 0u);
  EXPECT_EQ(r["starting_psn"], 0x123456);
  EXPECT_EQ(r["service_id"], "0x1000000000000042");
  EXPECT_EQ(state_of(qpn), "connecting");
  EXPECT_EQ(ok({{"op", "cm_status"}, {"qp_num", qpn}})["cm_state"], "REQ_SENT");

  // The REQ carries what was asked.
  ASSERT_EQ(sent_by_a_.size(), 1u);
  const CmReq req = std::get<CmReq>(cm_of(sent_by_a_[0]));
  EXPECT_EQ(req.local_comm_id, comm_id);
  EXPECT_EQ(req.service_id, kService);
  EXPECT_EQ(req.local_qpn, qpn);
  EXPECT_EQ(req.starting_psn, 0x123456u);
  EXPECT_EQ(req.path_mtu, 4);
  EXPECT_EQ(req.responder_resources, 3);
  EXPECT_EQ(req.initiator_depth, 2);
  EXPECT_EQ(req.retry_count, 6);
  EXPECT_EQ(req.rnr_retry_count, 5);
  EXPECT_EQ(req.transport_type, cm_transport::kRc);
  EXPECT_EQ(req.primary.remote_gid, gid_from_ipv4(kIpB));

  pump();
  ASSERT_EQ(b_established_.size(), 1u);
  const json s = ok({{"op", "cm_status"}, {"qp_num", qpn}});
  EXPECT_EQ(s["state"], "established");
  EXPECT_EQ(s["remote_qpn"], b_established_[0]);
  EXPECT_EQ(s["comm_id"], comm_id);
  EXPECT_EQ(s["cm_state"], "ESTABLISHED");
  EXPECT_FALSE(s.contains("reason"));
  const json q = ok({{"op", "query_qp"}, {"qp_num", qpn}})["attr"];
  EXPECT_EQ(q["qp_state"], "RTS");
  EXPECT_EQ(q["rq_psn"], 0x123456);
  EXPECT_EQ(q["dest_qp_num"], b_established_[0]);
  EXPECT_EQ(q["path_mtu"], 2048);

  ok({{"op", "cm_disconnect"}, {"qp_num", qpn}});
  EXPECT_EQ(state_of(qpn), "disconnecting");
  EXPECT_EQ(ok({{"op", "query_qp"}, {"qp_num", qpn}})["attr"]["qp_state"], "ERR");
  pump(1 * kMs);
  EXPECT_EQ(state_of(qpn), "disconnected");
  EXPECT_NE(error({{"op", "cm_disconnect"}, {"qp_num", qpn}}, "EINVAL").find("TIMEWAIT"),
            std::string::npos);
}

TEST_F(ControlCmTest, PortMakesAnRdmaCmServiceIdAndQpInInitIsTaken) {
  const std::uint32_t qpn = qp_on_a();
  ok({{"op", "modify_qp"},
      {"qp_num", qpn},
      {"attr",
       {{"qp_state", "INIT"},
        {"pkey_index", 0},
        {"port_num", 1},
        {"qp_access_flags", {"REMOTE_WRITE"}}}}});
  json request = connect_request(qpn);
  request.erase("service_id");
  request["port"] = 4321;
  request["private_data"] = "c0ffee";
  const json r = ok(request);
  EXPECT_EQ(r["service_id"], "0x00000000010610e1");
  const CmReq req = std::get<CmReq>(cm_of(sent_by_a_.back()));
  EXPECT_EQ(req.service_id, rdma_cm_service_id(rdma_cm_ps::kTcp, 4321));
  const auto header = decode_rdma_cm_header(req.private_data);
  ASSERT_TRUE(header);
  EXPECT_EQ(header->dst_ip, rdma_cm_ipv4(0xC0000202));
  // The consumer's bytes follow the 36-byte rdma_cm header.
  EXPECT_EQ(req.private_data[kRdmaCmHeaderSize], 0xC0);
  EXPECT_EQ(req.private_data[kRdmaCmHeaderSize + 2], 0xEE);
  // The QP kept its INIT attributes (the agent moves only a QP in RESET to INIT).
  EXPECT_EQ(ok({{"op", "query_qp"}, {"qp_num", qpn}})["attr"]["qp_access_flags"],
            json::array({"REMOTE_WRITE"}));
}

TEST_F(ControlCmTest, RejectionReportsTheReason) {
  // No listener on B: the REQ is rejected with reason 8 (invalid Service ID).
  const std::uint32_t qpn = qp_on_a();
  ok(connect_request(qpn));
  pump();
  const json s = ok({{"op", "cm_status"}, {"qp_num", qpn}});
  EXPECT_EQ(s["state"], "rejected");
  EXPECT_EQ(s["reason"], 8);
  EXPECT_EQ(s["cm_state"], "TIMEWAIT");
  EXPECT_EQ(ok({{"op", "query_qp"}, {"qp_num", qpn}})["attr"]["qp_state"], "ERR");
}

TEST_F(ControlCmTest, TimersOfOneConnectThenTimedOut) {
  const CmAgentConfig before = a_.cm().config();
  const std::uint32_t qpn = qp_on_a();
  json request = connect_request(qpn);
  request["cm_response_timeout"] = 8;
  request["packet_lifetime"] = 4;
  request["max_cm_retries"] = 2;
  drop_ = true;
  ok(request);
  const CmReq req = std::get<CmReq>(cm_of(sent_by_a_.back()));
  EXPECT_EQ(req.max_cm_retries, 2);
  EXPECT_EQ(req.remote_cm_response_timeout, 8);
  EXPECT_EQ(req.local_cm_response_timeout, 8);
  // Only this connection: the agent's configuration is as it was (but for the seed).
  const CmAgentConfig after = a_.cm().config();
  EXPECT_EQ(after.cm_response_timeout, before.cm_response_timeout);
  EXPECT_EQ(after.max_cm_retries, before.max_cm_retries);
  EXPECT_EQ(after.packet_lifetime, before.packet_lifetime);
  EXPECT_EQ(after.timewait_ns, before.timewait_ns);

  const std::uint64_t timeout = 2 * cm_timeout_ns(4) + cm_timeout_ns(8);
  ASSERT_EQ(a_.next_deadline(), timeout);
  a_.tick(timeout);
  a_.tick(2 * timeout);
  ASSERT_EQ(sent_by_a_.size(), 3u);  // the REQ and two retries, same comm ID and TID
  for (const auto& f : sent_by_a_) {
    const Packet p = decode(f);
    EXPECT_EQ(std::get<CmReq>(*p.mad->cm).local_comm_id, req.local_comm_id);
    EXPECT_EQ(p.mad->header.tid, decode(sent_by_a_[0]).mad->header.tid);
  }
  EXPECT_EQ(state_of(qpn), "connecting");
  a_.tick(3 * timeout);
  EXPECT_EQ(state_of(qpn), "timed_out");
  EXPECT_TRUE(std::holds_alternative<CmRej>(cm_of(sent_by_a_.back())));

  // A later connect without timers uses the agent's own again, with a fresh comm ID.
  const std::uint32_t other = qp_on_a();
  const json r = ok(connect_request(other));
  EXPECT_NE(r["comm_id"], req.local_comm_id);
  const CmReq second = std::get<CmReq>(cm_of(sent_by_a_.back()));
  EXPECT_EQ(second.max_cm_retries, 15);
  EXPECT_EQ(second.remote_cm_response_timeout, 20);
}

TEST_F(ControlCmTest, ANewConnectOfTheQpReplacesItsStatus) {
  const std::uint32_t qpn = qp_on_a();
  drop_ = true;
  json request = connect_request(qpn);
  request["max_cm_retries"] = 0;
  request["cm_response_timeout"] = 8;
  request["packet_lifetime"] = 4;
  ok(request);
  a_.tick(2 * kMs);  // one try of 1.2 ms, no retry
  EXPECT_EQ(state_of(qpn), "timed_out");
  ok({{"op", "modify_qp"}, {"qp_num", qpn}, {"attr", {{"qp_state", "RESET"}}}});
  drop_ = false;
  listen_on_b();
  ok(connect_request(qpn));
  EXPECT_EQ(state_of(qpn), "connecting");
  pump(3 * kMs);
  EXPECT_EQ(state_of(qpn), "established");
  // destroy_qp forgets the status.
  ok({{"op", "destroy_qp"}, {"qp_num", qpn}});
  EXPECT_NE(error({{"op", "cm_status"}, {"qp_num", qpn}}, "ENOENT").find("no cm_connect"),
            std::string::npos);
}

TEST_F(ControlCmTest, RequestErrors) {
  const std::uint32_t qpn = qp_on_a();
  json r = connect_request(qpn);
  r["bogus"] = 1;
  EXPECT_NE(error(r).find("unknown field 'bogus'"), std::string::npos);
  r = connect_request(qpn);
  r["port"] = 1;
  EXPECT_NE(error(r).find("not both"), std::string::npos);
  r.erase("port");
  r.erase("service_id");
  EXPECT_NE(error(r).find("not both"), std::string::npos);
  r = connect_request(qpn);
  r.erase("dgid");
  EXPECT_NE(error(r).find("'dgid' is missing"), std::string::npos);
  r = connect_request(qpn);
  r["dmac"] = "zz";
  EXPECT_NE(error(r).find("not a MAC address"), std::string::npos);
  r = connect_request(qpn);
  r["path_mtu"] = 1000;
  EXPECT_NE(error(r).find("not a path MTU"), std::string::npos);
  r = connect_request(qpn);
  r["starting_psn"] = 0x1000000;
  EXPECT_NE(error(r).find("above the largest"), std::string::npos);
  r = connect_request(qpn);
  r["retry_count"] = 8;
  EXPECT_NE(error(r).find("above the largest"), std::string::npos);
  r = connect_request(qpn);
  r["max_cm_retries"] = 16;
  EXPECT_NE(error(r).find("above the largest"), std::string::npos);
  r = connect_request(qpn);
  r["pkey"] = 0x7777;
  EXPECT_NE(error(r, "EINVAL").find("not in the P_Key table"), std::string::npos);
  r = connect_request(qpn);
  r["private_data"] = std::string(2 * 93, 'a');
  EXPECT_NE(error(r, "EINVAL").find("private data"), std::string::npos);
  EXPECT_NE(error(connect_request(0x999), "ENOENT").find("no QP"), std::string::npos);
  // Nothing was sent and no status kept for the failed connects.
  EXPECT_TRUE(sent_by_a_.empty());
  error({{"op", "cm_status"}, {"qp_num", qpn}}, "ENOENT");
  error({{"op", "cm_disconnect"}, {"qp_num", qpn}}, "ENOENT");
  EXPECT_NE(error({{"op", "cm_status"}, {"qp_num", qpn}, {"x", 1}}).find("unknown field 'x'"),
            std::string::npos);
  EXPECT_NE(error({{"op", "cm_disconnect"}}).find("'qp_num' is missing"), std::string::npos);

  // A QP in RTS cannot be connected; its earlier status stays.
  listen_on_b();
  ok(connect_request(qpn));
  pump();
  EXPECT_EQ(state_of(qpn), "established");
  EXPECT_NE(error(connect_request(qpn), "EINVAL").find("not RESET or INIT"), std::string::npos);
  EXPECT_EQ(state_of(qpn), "established");
  // A connect still waiting for its REP cannot be disconnected.
  const std::uint32_t waiting = qp_on_a();
  drop_ = true;
  ok(connect_request(waiting));
  EXPECT_NE(error({{"op", "cm_disconnect"}, {"qp_num", waiting}}, "EINVAL").find("REQ_SENT"),
            std::string::npos);
}

TEST_F(ControlCmTest, CallbacksAfterTheApiIsGoneChangeNothing) {
  const std::uint32_t qpn = qp_on_a();
  {
    ControlApi other(a_);
    json request = connect_request(qpn);
    request["id"] = 1;
    EXPECT_EQ(other.handle(request)["ok"], true);
  }
  pump();  // B rejects (no listener): the callback finds no status table
  EXPECT_EQ(a_.cm().counters().rej_received, 1u);
}

}  // namespace
}  // namespace roceconf::target
