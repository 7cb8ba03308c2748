// The typed control client (control/client.h) against the reference NIC's ControlApi in process:
// what the codec writes the API takes, and what the API answers reads back into its types, op by
// op; a refused request keeps the API's errno and text.
#include <gtest/gtest.h>

#include <algorithm>

#include "control/client.h"
#include "control/ops.h"
#include "suite/reference_nic/control_api.h"

namespace roceconf::target {
namespace {

namespace ctl = control;

class ControlClientTest : public ::testing::Test {
 protected:
  ControlClientTest()
      : nic_(NicConfig{}, [](std::span<const std::uint8_t>) {}),
        api_(nic_),
        client_([this](const nlohmann::json& r) -> std::expected<nlohmann::json, std::string> {
          return api_.handle(r);
        }) {}

  template <typename T>
  T ok(ctl::Result<T> r) {
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return r ? std::move(*r) : T{};
  }

  Nic nic_;
  ControlApi api_;
  ctl::Client client_;
};

TEST_F(ControlClientTest, HelloListsTheDeclaredOps) {
  const auto hello = ok(client_.hello());
  EXPECT_EQ(hello.protocol, ctl::kProtocolVersion);
  ASSERT_EQ(hello.ops.size(), ctl::kOpNames.size());
  EXPECT_TRUE(std::equal(hello.ops.begin(), hello.ops.end(), ctl::kOpNames.begin()));
  ASSERT_TRUE(hello.port);
  EXPECT_EQ(hello.port->udp_port, 4791u);
  EXPECT_FALSE(hello.port->gids.empty());
  EXPECT_FALSE(hello.auth);
}

TEST_F(ControlClientTest, AQpBroughtUpWithTypedRequests) {
  const std::uint32_t pd = ok(client_.alloc_pd()).pd;
  const auto cq = ok(client_.create_cq(16));
  EXPECT_GE(cq.depth, 16u);
  ctl::QpCap cap;
  cap.max_send_wr = 8;
  cap.max_recv_wr = 8;
  const auto qp = ok(client_.create_qp({"RC", pd, cq.cq, cq.cq, cap, std::nullopt}));
  EXPECT_EQ(qp.cap.max_send_wr, 8u);

  ctl::QpAttr init;
  init.qp_state = "INIT";
  init.pkey_index = 0;
  init.port_num = 1;
  init.qp_access_flags = std::vector<std::string>{"REMOTE_WRITE"};
  const auto mask = ok(client_.modify_qp(qp.qp_num, init));
  EXPECT_EQ(mask.attr_mask.size(), 4u);
  ctl::QpAttr rtr;
  rtr.qp_state = "RTR";
  ctl::AddressVector av;
  av.dgid = "192.0.2.1";
  av.dmac = "02:00:00:00:00:aa";
  rtr.ah_attr = av;
  rtr.path_mtu = 1024;
  rtr.dest_qp_num = 0x22;
  rtr.rq_psn = 100;
  rtr.max_dest_rd_atomic = 1;
  rtr.min_rnr_timer = 12;
  ok(client_.modify_qp(qp.qp_num, rtr));

  const auto q = ok(client_.query_qp(qp.qp_num));
  EXPECT_EQ(q.attr.qp_state, "RTR");
  EXPECT_EQ(q.attr.path_mtu, 1024u);
  EXPECT_EQ(q.attr.rq_psn, 100u);
  ASSERT_TRUE(q.attr.ah_attr);
  EXPECT_EQ(q.attr.ah_attr->dmac, "02:00:00:00:00:aa");
  EXPECT_EQ(q.init_attr.qp_type, "RC");
  EXPECT_EQ(q.init_attr.pd, pd);

  const auto mr = ok(client_.reg_mr({pd, 256, {"LOCAL_WRITE"}, std::nullopt}));
  EXPECT_EQ(ok(client_.write_mr({mr.handle, 4, {1, 2, 3}})).length, 3u);
  EXPECT_EQ(ok(client_.read_mr({mr.handle, 3, 5})).data,
            (std::vector<std::uint8_t>{0, 1, 2, 3, 0}));
  EXPECT_EQ(ok(client_.post_recv(qp.qp_num, {{7, {{mr.addr, 64, mr.lkey}}}})).posted, 1u);
  EXPECT_TRUE(ok(client_.poll_cq(cq.cq)).wc.empty());

  ctl::QpAttr err;
  err.qp_state = "ERR";
  ok(client_.modify_qp(qp.qp_num, err));
  const auto flushed = ok(client_.poll_cq(cq.cq, 4));
  ASSERT_EQ(flushed.wc.size(), 1u);
  EXPECT_EQ(flushed.wc[0].wr_id, 7u);
  EXPECT_EQ(flushed.wc[0].status, "WR_FLUSH_ERR");
  EXPECT_EQ(flushed.wc[0].qp_num, qp.qp_num);

  ok(client_.destroy_qp(qp.qp_num));
  ok(client_.dereg_mr(mr.handle));
  ok(client_.destroy_cq(cq.cq));
  ok(client_.dealloc_pd(pd));
}

TEST_F(ControlClientTest, CountersQuirksAndEventsReadBack) {
  const auto all = ok(client_.counters());
  ASSERT_FALSE(all.counters.empty());
  const std::string name = all.counters.begin()->first;
  EXPECT_EQ(ok(client_.counters(std::vector<std::string>{name})).counters.size(), 1u);
  const auto quirks = ok(client_.quirks());
  EXPECT_FALSE(quirks.known.empty());
  EXPECT_TRUE(quirks.active.empty());
  EXPECT_TRUE(ok(client_.async_events()).events.empty());
}

// The reference NIC keeps no kernel log: kernel_log answers no line (never a made-up one), says
// so in `source`, and gives the clock the API was built with.
TEST_F(ControlClientTest, KernelLogHasNoLinesAndTheNicsClock) {
  Nic nic(NicConfig{}, [](std::span<const std::uint8_t>) {});
  ControlApi api(nic, [] { return std::int64_t{1'700'000'000'000'000'000}; });
  ctl::Client client([&](const nlohmann::json& r) -> std::expected<nlohmann::json, std::string> {
    return api.handle(r);
  });
  const auto log = ok(client.kernel_log({.since_unix_ns = 0, .max_lines = 10}));
  EXPECT_TRUE(log.lines.empty());
  EXPECT_EQ(log.source, "none");
  EXPECT_EQ(log.now_unix_ns, 1'700'000'000'000'000'000);
  const auto backwards = client.kernel_log({.since_unix_ns = 10, .until_unix_ns = 5});
  ASSERT_FALSE(backwards);
  EXPECT_NE(backwards.error().message.find("after until_unix_ns"), std::string::npos);
  EXPECT_GT(ok(client_.kernel_log({})).now_unix_ns, 1'600'000'000'000'000'000)
      << "without a clock given: the real-time clock";
}

// The fields each op takes are control/ops.h's (roceconf-agent's session test checks the same
// lists): a declared field is never "unknown", anything else is.
TEST_F(ControlClientTest, TheApiTakesExactlyTheDeclaredFields) {
  for (const auto& [op, keys] : ctl::op_keys()) {
    nlohmann::json request = {{"op", op}};
    for (std::string_view key : keys) request[std::string(key)] = nlohmann::json::object();
    const std::string e = api_.handle(request).value("error", "");
    EXPECT_EQ(e.find("unknown field"), std::string::npos) << op << ": " << e;
    request["not_a_field"] = 1;
    const std::string refused = api_.handle(request).value("error", "");
    EXPECT_NE(refused.find("unknown field 'not_a_field'"), std::string::npos)
        << op << ": " << refused;
  }
}

TEST_F(ControlClientTest, ARefusalKeepsTheApisErrnoAndText) {
  const auto gone = client_.destroy_cq(99);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().kind, ctl::Error::Kind::kRefused);
  EXPECT_EQ(gone.error().errno_name, "ENOENT");
  EXPECT_NE(gone.error().message.find("destroy_cq"), std::string::npos) << gone.error().message;
  const auto status = client_.cm_status(5);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().errno_name, "ENOENT");
}

}  // namespace
}  // namespace roceconf::target
