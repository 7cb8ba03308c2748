// The control API over an in-process NIC: every op, the errors for bad requests, and random
// requests that must never make it throw.
#include "suite/reference_nic/control_api.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "control/lines.h"

namespace roceconf::target {
namespace {

using json = nlohmann::json;

class ControlApiTest : public ::testing::Test {
 protected:
  explicit ControlApiTest(Quirks quirks = {})
      : nic_(config(quirks),
             [this](std::span<const std::uint8_t> f) { frames_.emplace_back(f.begin(), f.end()); }),
        api_(nic_) {}

  static NicConfig config(Quirks quirks) {
    NicConfig c;
    c.quirks = quirks;
    return c;
  }

  // Sends a request and returns the response; checks the envelope every response must have.
  json call(json request) {
    if (!request.contains("id")) request["id"] = next_id_++;
    json response = api_.handle(request);
    EXPECT_TRUE(response.contains("ok")) << response;
    EXPECT_EQ(response["id"], request["id"]) << response;
    return response;
  }
  json ok(const json& request) {
    json response = call(request);
    EXPECT_EQ(response["ok"], true) << request << " -> " << response;
    return response;
  }
  // The error line of a failed request.
  std::string error(const json& request) {
    json response = call(request);
    EXPECT_EQ(response["ok"], false) << request << " -> " << response;
    return response.value("error", "");
  }

  // A PD, a CQ and an RC QP in RESET; returns the QPN.
  std::uint32_t make_rc_qp() {
    pd_ = ok({{"op", "alloc_pd"}})["pd"];
    cq_ = ok({{"op", "create_cq"}, {"depth", 16}})["cq"];
    return ok({{"op", "create_qp"},
               {"qp_type", "RC"},
               {"pd", pd_},
               {"send_cq", cq_},
               {"recv_cq", cq_},
               {"cap", {{"max_send_wr", 8}, {"max_recv_wr", 8}}}})["qp_num"];
  }
  // RESET -> INIT -> RTR -> RTS toward 192.0.2.1.
  void connect(std::uint32_t qpn) {
    ok({{"op", "modify_qp"},
        {"qp_num", qpn},
        {"attr",
         {{"qp_state", "INIT"},
          {"pkey_index", 0},
          {"port_num", 1},
          {"qp_access_flags", {"REMOTE_WRITE", "REMOTE_READ"}}}}});
    ok({{"op", "modify_qp"},
        {"qp_num", qpn},
        {"attr",
         {{"qp_state", "RTR"},
          {"ah_attr", {{"dgid", "192.0.2.1"}, {"dmac", "02:00:00:00:00:aa"}}},
          {"path_mtu", 1024},
          {"dest_qp_num", 0x22},
          {"rq_psn", 100},
          {"max_dest_rd_atomic", 1},
          {"min_rnr_timer", 12}}}});
    ok({{"op", "modify_qp"},
        {"qp_num", qpn},
        {"attr",
         {{"qp_state", "RTS"},
          {"sq_psn", 200},
          {"timeout", 14},
          {"retry_cnt", 7},
          {"rnr_retry", 7},
          {"max_rd_atomic", 1}}}});
  }

  Nic nic_;
  ControlApi api_;
  std::vector<std::vector<std::uint8_t>> frames_;
  std::uint32_t pd_ = 0;
  std::uint32_t cq_ = 0;
  int next_id_ = 1;
};

TEST_F(ControlApiTest, HelloListsOpsDeviceAndPort) {
  const json r = ok({{"op", "hello"}});
  EXPECT_EQ(r["protocol"], ControlApi::kProtocolVersion);
  std::vector<std::string> ops = r["ops"];
  for (std::string_view op : ControlApi::ops())
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  EXPECT_EQ(ops.size(), ControlApi::ops().size());
  EXPECT_EQ(r["quirks"], json::array());
  EXPECT_EQ(r["device"]["max_qp"], nic_.device().attr().max_qp);
  EXPECT_EQ(r["port"]["ipv4"], "192.0.2.2");
  EXPECT_EQ(r["port"]["mac"], "02:00:00:00:00:01");
  EXPECT_EQ(r["port"]["pkeys"][0], 0xFFFF);
  // A RoCE port: no LID, LMC or SM, and no client reregistration (A17.5).
  EXPECT_EQ(r["port"]["lid"], 0);
  EXPECT_EQ(r["port"]["sm_lid"], 0);
  EXPECT_EQ(r["port"]["lmc"], 0);
  EXPECT_EQ(r["port"]["link_layer"], "Ethernet");
  EXPECT_EQ(r["port"]["port_cap_flags"], json({"CM_SUP", "IP_BASED_GIDS"}));
  bool v4_gid = false;
  for (const json& g : r["port"]["gids"]) v4_gid |= g["gid"] == "::ffff:192.0.2.2";
  EXPECT_TRUE(v4_gid) << r["port"]["gids"];
  // capabilities is the same answer under the name a tester may look for.
  json caps = ok({{"op", "capabilities"}});
  caps.erase("id");
  json hello = r;
  hello.erase("id");
  EXPECT_EQ(caps, hello);
}

class ControlApiQuirkTest : public ControlApiTest {
 protected:
  ControlApiQuirkTest() : ControlApiTest(quirks()) {}
  static Quirks quirks() {
    Quirks q;
    q.set(Quirk::kMsnStuck);
    return q;
  }
};

class ControlApiPortQuirkTest : public ControlApiTest {
 protected:
  ControlApiPortQuirkTest() : ControlApiTest(quirks()) {}
  static Quirks quirks() {
    Quirks q;
    q.set(Quirk::kPortLidReported);
    q.set(Quirk::kClientReregAdvertised);
    return q;
  }
};

TEST_F(ControlApiPortQuirkTest, PortReportsInfiniBandAttributes) {
  const json port = ok({{"op", "hello"}})["port"];
  EXPECT_EQ(port["lid"], 1);
  EXPECT_EQ(port["sm_lid"], 1);
  EXPECT_EQ(port["lmc"], 1);
  EXPECT_EQ(port["port_cap_flags"], json({"CM_SUP", "CLIENT_REG_SUP", "IP_BASED_GIDS"}));
}

TEST_F(ControlApiQuirkTest, HelloAndQuirksNameTheActiveQuirks) {
  EXPECT_EQ(ok({{"op", "hello"}})["quirks"], json({"msn-stuck"}));
  const json r = ok({{"op", "quirks"}});
  EXPECT_EQ(r["active"], json({"msn-stuck"}));
  EXPECT_EQ(r["known"].size(), all_quirks().size());
  for (const json& q : r["known"]) EXPECT_EQ(q["active"], q["name"] == "msn-stuck") << q;
}

TEST_F(ControlApiTest, PdAndMrLifecycleWithMemoryAccess) {
  const std::uint32_t pd = ok({{"op", "alloc_pd"}})["pd"];
  const json mr = ok({{"op", "reg_mr"},
                      {"pd", pd},
                      {"length", 64},
                      {"access", {"LOCAL_WRITE", "REMOTE_READ", "REMOTE_WRITE"}}});
  const std::uint32_t handle = mr["handle"];
  const Mr* model = nic_.device().mr(handle);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(mr["lkey"], model->lkey());
  EXPECT_EQ(mr["rkey"], model->rkey());
  EXPECT_EQ(mr["addr"], model->addr());
  EXPECT_EQ(mr["length"], 64);
  EXPECT_EQ(model->access(), access::kLocalWrite | access::kRemoteRead | access::kRemoteWrite);

  EXPECT_EQ(
      ok({{"op", "write_mr"}, {"handle", handle}, {"offset", 4}, {"data", "DEADbeef"}})["length"],
      4);
  EXPECT_EQ(model->bytes()[4], 0xDE);
  EXPECT_EQ(model->bytes()[7], 0xEF);
  EXPECT_EQ(ok({{"op", "read_mr"}, {"handle", handle}, {"offset", 3}, {"length", 6}})["data"],
            "00deadbeef00");
  // The last byte is reachable, one past it is not.
  ok({{"op", "write_mr"}, {"handle", handle}, {"offset", 63}, {"data", "01"}});
  EXPECT_NE(error({{"op", "write_mr"}, {"handle", handle}, {"offset", 63}, {"data", "0102"}})
                .find("outside MR"),
            std::string::npos);
  EXPECT_NE(error({{"op", "read_mr"}, {"handle", handle}, {"offset", 65}, {"length", 0}})
                .find("outside MR"),
            std::string::npos);

  // A PD with an MR is busy; after dereg_mr it goes.
  EXPECT_EQ(call({{"op", "dealloc_pd"}, {"pd", pd}})["errno"], "EBUSY");
  ok({{"op", "dereg_mr"}, {"handle", handle}});
  EXPECT_EQ(nic_.device().mr(handle), nullptr);
  ok({{"op", "dealloc_pd"}, {"pd", pd}});
}

TEST_F(ControlApiTest, RegMrTakesIovaAndRawAccessBits) {
  const std::uint32_t pd = ok({{"op", "alloc_pd"}})["pd"];
  const json mr = ok({{"op", "reg_mr"},
                      {"pd", pd},
                      {"length", 16},
                      {"access", access::kLocalWrite | access::kRemoteAtomic},
                      {"iova", "0x123400000"}});
  EXPECT_EQ(mr["addr"], 0x123400000u);
  EXPECT_EQ(nic_.device().mr(mr["handle"])->access(), access::kLocalWrite | access::kRemoteAtomic);
  // The verbs rule (remote write needs local write) comes back as the verbs error.
  const json bad =
      call({{"op", "reg_mr"}, {"pd", pd}, {"length", 16}, {"access", {"REMOTE_WRITE"}}});
  EXPECT_EQ(bad["ok"], false);
  EXPECT_EQ(bad["errno"], "EINVAL");
  EXPECT_EQ(bad["error"].get<std::string>().rfind("EINVAL: reg_mr:", 0), 0u) << bad;
}

TEST_F(ControlApiTest, CqOps) {
  const json cq = ok({{"op", "create_cq"}, {"depth", 4}});
  const std::uint32_t h = cq["cq"];
  EXPECT_EQ(cq["depth"], 4);
  ok({{"op", "req_notify_cq"}, {"cq", h}, {"solicited_only", true}});
  EXPECT_EQ(nic_.device().cq(h)->notify_mode(), CqNotify::kSolicited);
  ok({{"op", "req_notify_cq"}, {"cq", h}});
  EXPECT_EQ(nic_.device().cq(h)->notify_mode(), CqNotify::kNextComp);
  EXPECT_EQ(ok({{"op", "poll_cq"}, {"cq", h}, {"max", 4}})["wc"], json::array());
  // The armed CQ's next completion is one event on the channel; cq_events drains it.
  EXPECT_EQ(ok({{"op", "cq_events"}})["events"], json::array());
  nic_.device().cq(h)->push(Cqe{});
  nic_.device().cq(h)->push(Cqe{});
  EXPECT_EQ(ok({{"op", "cq_events"}, {"wait_ms", 10}})["events"], json({h}));
  EXPECT_EQ(ok({{"op", "cq_events"}})["events"], json::array());
  const json long_wait = call({{"op", "cq_events"}, {"wait_ms", 1001}});
  EXPECT_EQ(long_wait["ok"], false);
  EXPECT_NE(long_wait.value("error", "").find("cq_events.wait_ms"), std::string::npos) << long_wait;
  EXPECT_EQ(call({{"op", "create_cq"}, {"depth", 0}})["errno"], "EINVAL");
  ok({{"op", "destroy_cq"}, {"cq", h}});
  EXPECT_EQ(call({{"op", "poll_cq"}, {"cq", h}})["errno"], "ENOENT");
}

TEST_F(ControlApiTest, QpLifecycleModifyQueryAndFlushedCompletions) {
  const std::uint32_t qpn = make_rc_qp();
  EXPECT_EQ(ok({{"op", "query_qp"}, {"qp_num", qpn}})["attr"]["qp_state"], "RESET");
  connect(qpn);
  const json q = ok({{"op", "query_qp"}, {"qp_num", qpn}});
  EXPECT_EQ(q["attr"]["qp_state"], "RTS");
  EXPECT_EQ(q["attr"]["path_mtu"], 1024);
  EXPECT_EQ(q["attr"]["dest_qp_num"], 0x22);
  EXPECT_EQ(q["attr"]["rq_psn"], 100);
  EXPECT_EQ(q["attr"]["sq_psn"], 200);
  EXPECT_EQ(q["attr"]["qp_access_flags"], json({"REMOTE_WRITE", "REMOTE_READ"}));
  EXPECT_EQ(q["attr"]["ah_attr"]["dgid"], "::ffff:192.0.2.1");
  EXPECT_EQ(q["attr"]["ah_attr"]["dmac"], "02:00:00:00:00:aa");
  EXPECT_EQ(q["init_attr"]["qp_type"], "RC");
  EXPECT_EQ(q["init_attr"]["cap"]["max_send_wr"], 8);
  EXPECT_EQ(q["init_attr"]["send_cq"], cq_);

  const std::uint32_t mr =
      ok({{"op", "reg_mr"}, {"pd", pd_}, {"length", 256}, {"access", {"LOCAL_WRITE"}}})["handle"];
  const Mr* m = nic_.device().mr(mr);
  const json sge = {{"addr", m->addr()}, {"length", 64}, {"lkey", m->lkey()}};
  EXPECT_EQ(
      ok({{"op", "post_recv"},
          {"qp_num", qpn},
          {"wrs",
           {{{"wr_id", 7}, {"sg_list", {sge}}}, {{"wr_id", 8}, {"sg_list", {sge}}}}}})["posted"],
      2);
  // Two WRs in one request are one doorbell, as a chained ibv_post_send.
  ok({{"op", "post_send"},
      {"qp_num", qpn},
      {"wrs",
       {{{"wr_id", 1}, {"opcode", "SEND"}, {"send_flags", {"SIGNALED"}}, {"sg_list", {sge}}},
        {{"wr_id", 2},
         {"opcode", "RDMA_WRITE"},
         {"send_flags", {"SIGNALED"}},
         {"sg_list", {sge}},
         {"rdma", {{"remote_addr", "0x10000000"}, {"rkey", 0x100}}}}}}});
  const auto& sq = nic_.device().qp(qpn)->send_queue();
  ASSERT_EQ(sq.size(), 2u);
  EXPECT_EQ(sq[0].doorbell, sq[1].doorbell);
  EXPECT_EQ(sq[1].wr.rdma.remote_addr, 0x10000000u);

  // ERR flushes everything outstanding: the CQEs come back with their verbs names.
  ok({{"op", "modify_qp"}, {"qp_num", qpn}, {"attr", {{"qp_state", "ERR"}}}});
  const json wc = ok({{"op", "poll_cq"}, {"cq", cq_}, {"max", 16}})["wc"];
  ASSERT_EQ(wc.size(), 4u) << wc;
  std::vector<std::uint64_t> ids;
  for (const json& c : wc) {
    EXPECT_EQ(c["status"], "WR_FLUSH_ERR") << c;
    EXPECT_EQ(c["qp_num"], qpn);
    EXPECT_TRUE(c["wc_flags"].is_array());
    ids.push_back(c["wr_id"]);
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1, 2, 7, 8}));

  ok({{"op", "destroy_qp"}, {"qp_num", qpn}});
  EXPECT_EQ(call({{"op", "query_qp"}, {"qp_num", qpn}})["errno"], "ENOENT");
}

TEST_F(ControlApiTest, IllegalTransitionGivesTheVerbsError) {
  const std::uint32_t qpn = make_rc_qp();
  const json r = call({{"op", "modify_qp"}, {"qp_num", qpn}, {"attr", {{"qp_state", "RTS"}}}});
  EXPECT_EQ(r["ok"], false);
  EXPECT_EQ(r["errno"], "EINVAL");
  EXPECT_NE(r["error"].get<std::string>().find("RESET"), std::string::npos) << r;
  // A required attribute left out is named by the model.
  const json m = call({{"op", "modify_qp"}, {"qp_num", qpn}, {"attr", {{"qp_state", "INIT"}}}});
  EXPECT_EQ(m["errno"], "EINVAL");
  EXPECT_NE(m["error"].get<std::string>().find("PKEY_INDEX"), std::string::npos) << m;
}

TEST_F(ControlApiTest, PostSendFailureNamesTheBadWr) {
  const std::uint32_t qpn = make_rc_qp();
  connect(qpn);
  const json r =
      call({{"op", "post_send"},
            {"qp_num", qpn},
            {"wrs",
             {{{"wr_id", 1}, {"opcode", "SEND"}},
              {{"wr_id", 2},
               {"opcode", "SEND"},
               {"sg_list", json::array({{{"addr", 0}, {"length", 1}, {"lkey", 0}},
                                        {{"addr", 0}, {"length", 1}, {"lkey", 0}}})}}}}});
  EXPECT_EQ(r["ok"], false);
  EXPECT_EQ(r["bad_wr"], 1) << r;
  EXPECT_TRUE(r.contains("errno"));
}

TEST_F(ControlApiTest, UdSendCarriesItsAddress) {
  const std::uint32_t pd = ok({{"op", "alloc_pd"}})["pd"];
  const std::uint32_t cq = ok({{"op", "create_cq"}, {"depth", 8}})["cq"];
  const std::uint32_t qpn = ok({{"op", "create_qp"},
                                {"type", "UD"},
                                {"pd", pd},
                                {"send_cq", cq},
                                {"recv_cq", cq},
                                {"cap", {{"max_send_wr", 4}, {"max_inline_data", 64}}}})["qp_num"];
  ok({{"op", "modify_qp"},
      {"qp_num", qpn},
      {"attr", {{"qp_state", "INIT"}, {"pkey_index", 0}, {"port_num", 1}, {"qkey", "0x1234"}}}});
  ok({{"op", "modify_qp"}, {"qp_num", qpn}, {"attr", {{"qp_state", "RTR"}}}});
  ok({{"op", "modify_qp"}, {"qp_num", qpn}, {"attr", {{"qp_state", "RTS"}, {"sq_psn", 0}}}});
  EXPECT_EQ(ok({{"op", "query_qp"}, {"qp_num", qpn}})["attr"]["qkey"], 0x1234);
  ok({{"op", "post_send"},
      {"qp_num", qpn},
      {"wrs",
       {{{"wr_id", 9},
         {"opcode", "SEND_WITH_IMM"},
         {"send_flags", {"INLINE", "SIGNALED", "SOLICITED"}},
         {"inline_data", "0102"},
         {"imm_data", 5},
         {"ud",
          {{"ah", {{"dgid", "192.0.2.1"}, {"dmac", "02:00:00:00:00:aa"}}},
           {"remote_qpn", 0x33},
           {"remote_qkey", 0x1234}}}}}}});
}

TEST_F(ControlApiTest, CountersAllAndByName) {
  nic_.device().counters().icrc_error = 3;
  const json all = ok({{"op", "counters"}})["counters"];
  std::size_t n = 0;
  nic_.device().counters().for_each([&](std::string_view name, std::uint64_t value) {
    ++n;
    EXPECT_EQ(all[std::string(name)], value) << name;
  });
  EXPECT_EQ(all.size(), n);
  EXPECT_EQ(ok({{"op", "counters"}, {"names", {"icrc_error"}}})["counters"],
            json({{"icrc_error", 3}}));
  EXPECT_NE(error({{"op", "counters"}, {"names", {"no_such"}}}).find("no_such"), std::string::npos);
}

TEST_F(ControlApiTest, AsyncEventsDrain) {
  nic_.device().async_event_queue().push({AsyncEventType::kCommEst, 0x11});
  nic_.device().async_event_queue().push({AsyncEventType::kCqErr, 2});
  const json r = ok({{"op", "async_events"}});
  EXPECT_EQ(r["events"], json::parse(R"([{"event_type":"COMM_EST","element":17},
                                         {"event_type":"CQ_ERR","element":2}])"));
  EXPECT_EQ(r["dropped"], 0);
  EXPECT_EQ(ok({{"op", "async_events"}})["events"], json::array());
}

TEST_F(ControlApiTest, RequestErrorsAreOneClearLine) {
  struct Case {
    json request;
    std::string expected;  // a fragment of the error
  };
  const std::vector<Case> cases = {
      {{{"op", "frobnicate"}}, "unknown op 'frobnicate'"},
      {json::object(), "'op' is missing"},
      {{{"op", 7}}, "'op' must be a string"},
      {{{"op", "create_cq"}}, "create_cq: 'depth' is missing"},
      {{{"op", "create_cq"}, {"depth", "sixteen"}},
       "create_cq.depth: 'sixteen' is not an unsigned"},
      {{{"op", "create_cq"}, {"depth", -1}}, "create_cq.depth: must be an unsigned integer"},
      {{{"op", "create_cq"}, {"depth", 1.5}}, "must be an unsigned integer"},
      {{{"op", "create_cq"}, {"depth", 4294967296}}, "above the largest allowed value 4294967295"},
      {{{"op", "create_cq"}, {"depth", 4}, {"dpeth", 4}}, "unknown field 'dpeth'"},
      {{{"op", "req_notify_cq"}, {"cq", 1}, {"solicited_only", 1}}, "must be true or false"},
      {{{"op", "reg_mr"}, {"pd", 1}, {"length", 8}, {"access", {"REMOTE_EVERYTHING"}}},
       "not a flag name"},
      {{{"op", "write_mr"}, {"handle", 1}, {"data", "abc"}}, "odd number of digits"},
      {{{"op", "create_qp"}, {"qp_type", "XRC"}, {"pd", 1}, {"send_cq", 1}, {"recv_cq", 1}},
       "'XRC' is not a QP type"},
      {{{"op", "modify_qp"}, {"qp_num", 17}, {"attr", {{"qp_state", "READY"}}}},
       "'READY' is not a QP state"},
      {{{"op", "modify_qp"}, {"qp_num", 17}, {"attr", {{"path_mtu", 1500}}}},
       "1500 is not a path MTU"},
      {{{"op", "modify_qp"}, {"qp_num", 17}, {"attr", {{"colour", "blue"}}}},
       "unknown field 'colour'"},
      {{{"op", "modify_qp"}, {"qp_num", 17}, {"attr", {{"ah_attr", {{"dgid", "192.0.2"}}}}}},
       "'192.0.2' is not an IPv4 or IPv6 address"},
      {{{"op", "modify_qp"},
        {"qp_num", 17},
        {"attr", {{"ah_attr", {{"dgid", "192.0.2.1"}, {"dmac", "02:00:00"}}}}}},
       "is not a MAC address"},
      {{{"op", "modify_qp"}, {"qp_num", 17}, {"attr", 3}}, "expected an object"},
      {{{"op", "post_send"}, {"qp_num", 17}, {"wrs", json::array()}}, "at least one work request"},
      {{{"op", "post_send"},
        {"qp_num", 17},
        {"wrs", {{{"opcode", "SEND"}, {"inline_data", "00"}}}}},
       "inline_data needs the INLINE send flag"},
      {{{"op", "post_send"}, {"qp_num", 17}, {"wrs", {{{"opcode", "SNED"}}}}},
       "'SNED' is not a send opcode"},
      {{{"op", "post_recv"}, {"qp_num", 17}, {"wrs", "all"}}, "post_recv.wrs: must be a list"},
      {{{"op", "alloc_pd"}, {"extra", 1}}, "unknown field 'extra' (known: none)"},
      {{{"op", "hello"}, {"id", {{"nested", 1}}}}, "'id' must be a number or a string"},
  };
  for (const Case& c : cases) {
    json request = c.request;
    const json r = api_.handle(request);
    EXPECT_EQ(r["ok"], false) << request;
    const std::string e = r.value("error", "");
    EXPECT_NE(e.find(c.expected), std::string::npos) << request << " -> " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST_F(ControlApiTest, UnknownHandlesAreEnoent) {
  const std::vector<json> requests = {
      {{"op", "dealloc_pd"}, {"pd", 99}},
      {{"op", "dereg_mr"}, {"handle", 99}},
      {{"op", "write_mr"}, {"handle", 99}, {"data", "00"}},
      {{"op", "read_mr"}, {"handle", 99}, {"length", 1}},
      {{"op", "destroy_cq"}, {"cq", 99}},
      {{"op", "req_notify_cq"}, {"cq", 99}},
      {{"op", "poll_cq"}, {"cq", 99}},
      {{"op", "modify_qp"}, {"qp_num", 99}, {"attr", {{"qp_state", "INIT"}}}},
      {{"op", "query_qp"}, {"qp_num", 99}},
      {{"op", "destroy_qp"}, {"qp_num", 99}},
      {{"op", "post_send"}, {"qp_num", 99}, {"wrs", {{{"opcode", "SEND"}}}}},
      {{"op", "post_recv"}, {"qp_num", 99}, {"wrs", {json::object()}}},
      {{"op", "create_qp"}, {"qp_type", "RC"}, {"pd", 99}, {"send_cq", 99}, {"recv_cq", 99}},
  };
  for (const json& request : requests) {
    const json r = call(request);
    EXPECT_EQ(r["ok"], false) << request;
    EXPECT_EQ(r["errno"], "ENOENT") << request << " -> " << r;
  }
}

TEST_F(ControlApiTest, LinesMalformedJsonAndIds) {
  json r = json::parse(api_.handle_line(R"({"id": "a", "op": "alloc_pd"})"));
  EXPECT_EQ(r["id"], "a");
  EXPECT_EQ(r["ok"], true);
  for (std::string_view bad : {"{", "not json", "{\"op\": }", "\xff\xfe{}", "[1,2", "\"\xc3\""}) {
    const std::string line = api_.handle_line(bad);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    r = json::parse(line);
    EXPECT_EQ(r["ok"], false);
    EXPECT_TRUE(r["id"].is_null());
    EXPECT_EQ(r["error"].get<std::string>().rfind("malformed JSON: ", 0), 0u) << r;
  }
  // Valid JSON that is not an object.
  r = json::parse(api_.handle_line("[1, 2]"));
  EXPECT_NE(r["error"].get<std::string>().find("must be a JSON object"), std::string::npos);
  // Without an id the answer has a null one.
  r = json::parse(api_.handle_line(R"({"op": "alloc_pd"})"));
  EXPECT_TRUE(r["id"].is_null());
  EXPECT_EQ(r["ok"], true);
}

// Random requests built from the API's own vocabulary, with values of every JSON type, against
// a NIC that holds live objects: every answer is an envelope, nothing throws.
TEST_F(ControlApiTest, RandomRequestsNeverCrash) {
  const std::uint32_t qpn = make_rc_qp();
  ok({{"op", "reg_mr"}, {"pd", pd_}, {"length", 64}, {"access", {"LOCAL_WRITE"}}});
  std::mt19937_64 rng(12345);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::vector<std::string> keys = {"pd",         "length",      "access",         "iova",
                                         "handle",     "offset",      "data",           "depth",
                                         "cq",         "max",         "solicited_only", "qp_type",
                                         "type",       "send_cq",     "recv_cq",        "cap",
                                         "sq_sig_all", "qp_num",      "attr",           "wrs",
                                         "names",      "qp_state",    "ah_attr",        "dgid",
                                         "dmac",       "path_mtu",    "wr_id",          "opcode",
                                         "sg_list",    "send_flags",  "rdma",           "atomic",
                                         "ud",         "inline_data", "lkey",           "addr",
                                         "rkey",       "max_send_wr", "pkey_index",     "port_num",
                                         "qkey"};
  std::function<json(int)> value = [&](int depth) -> json {
    switch (pick(depth > 2 ? 9 : 12)) {
      case 0:
        return nullptr;
      case 1:
        return static_cast<bool>(pick(2));
      case 2:
        return std::vector<std::uint64_t>{0, 1, 2, 3, 16, 255, 256, 1024, 65535}[pick(9)];
      case 3:
        return std::vector<std::uint64_t>{0xFFFFFFFFu, 0x100000000u, UINT64_MAX}[pick(3)];
      case 4:
        return -static_cast<std::int64_t>(pick(1000)) - 1;
      case 5:
        return 0.5 * static_cast<double>(pick(100));
      case 6:
        return std::vector<std::string>{"",     "RC",         "INIT",      "SEND",
                                        "0x10", "zz",         "192.0.2.1", "02:00:00:00:00:01",
                                        "RTS",  "LOCAL_WRITE"}[pick(10)];
      case 7:
        return static_cast<std::uint64_t>(qpn + pick(3));
      case 8:
        return static_cast<std::uint64_t>(pick(4));
      case 9: {
        json a = json::array();
        for (std::size_t i = pick(4); i > 0; --i) a.push_back(value(depth + 1));
        return a;
      }
      default: {
        json o = json::object();
        for (std::size_t i = pick(5); i > 0; --i) o[keys[pick(keys.size())]] = value(depth + 1);
        return o;
      }
    }
  };
  const auto ops = ControlApi::ops();
  int succeeded = 0;
  for (int i = 0; i < 20000; ++i) {
    json request = json::object();
    if (pick(20) != 0) request["op"] = std::string(ops[pick(ops.size())]);
    if (pick(2) != 0) request["id"] = i;
    for (std::size_t k = pick(5); k > 0; --k) request[keys[pick(keys.size())]] = value(0);
    json r;
    ASSERT_NO_THROW(r = api_.handle(request)) << request;
    ASSERT_TRUE(r["ok"].is_boolean()) << request;
    if (r["ok"] == false) {
      ASSERT_TRUE(r["error"].is_string()) << r;
      ASSERT_FALSE(r["error"].get<std::string>().empty());
    } else {
      ++succeeded;
    }
    ASSERT_NO_THROW((void)control::dump_line(r));
  }
  EXPECT_GT(succeeded, 500) << "the generator should reach the ops, not only their checks";
  // Random bytes as lines, and nesting far deeper than any recursion could follow.
  for (int i = 0; i < 2000; ++i) {
    std::string line(pick(64), '\0');
    for (char& ch : line) ch = "{}[]\":,0123456789aeflnrstu \\\x80\xff"[pick(31)];
    std::string out;
    ASSERT_NO_THROW(out = api_.handle_line(line)) << line;
    ASSERT_EQ(out.find('\n'), std::string::npos);
  }
  const std::string deep = R"({"op":"create_cq","id":1,"depth":)" + std::string(200000, '[') +
                           std::string(200000, ']') + "}";
  const json r = json::parse(api_.handle_line(deep));
  EXPECT_EQ(r["ok"], false);
  EXPECT_NE(r["error"].get<std::string>().find("got a list"), std::string::npos) << r["error"];
}

}  // namespace
}  // namespace roceconf::target
