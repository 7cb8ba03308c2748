// The codec against the declared field lists (ops.h): every request the typed client can write
// uses only the fields its op declares, at every depth; responses read back into their types,
// and a missing or malformed field is an error naming its path.
#include "control/codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "control/ops.h"

namespace roceconf::control {
namespace {

using nlohmann::json;

void expect_only(const json& object, keys::List declared, const std::string& where) {
  ASSERT_TRUE(object.is_object()) << where;
  for (const auto& [key, value] : object.items())
    EXPECT_NE(std::find(declared.begin(), declared.end(), key), declared.end())
        << where << ": '" << key << "' is not a declared field";
}

// The request's fields, and those of the objects inside it, are all declared.
void expect_declared(const json& request) {
  const std::string op = request.at("op");
  json body = request;
  body.erase("op");
  ASSERT_TRUE(op == "auth" || std::find(kOpNames.begin(), kOpNames.end(), op) != kOpNames.end())
      << op;
  expect_only(body, keys_of(op), op);
  auto av = [](const json& v, const std::string& w) { expect_only(v, keys::kAddressVector, w); };
  if (op == "modify_qp") {
    const json& a = body.at("attr");
    expect_only(a, keys::kQpAttr, "modify_qp.attr");
    if (a.contains("ah_attr")) av(a["ah_attr"], "ah_attr");
    if (a.contains("alt_ah_attr")) av(a["alt_ah_attr"], "alt_ah_attr");
    if (a.contains("cap")) expect_only(a["cap"], keys::kQpCap, "attr.cap");
  }
  if (op == "create_qp" && body.contains("cap")) expect_only(body["cap"], keys::kQpCap, "cap");
  if (op == "post_send")
    for (const json& w : body.at("wrs")) {
      expect_only(w, keys::kSendWr, "wr");
      for (const json& s : w.value("sg_list", json::array())) expect_only(s, keys::kSge, "sge");
      if (w.contains("rdma")) expect_only(w["rdma"], keys::kRdma, "rdma");
      if (w.contains("atomic")) expect_only(w["atomic"], keys::kAtomic, "atomic");
      if (w.contains("bind_mw")) expect_only(w["bind_mw"], keys::kBindMwWr, "bind_mw");
      if (w.contains("ud")) {
        expect_only(w["ud"], keys::kUd, "ud");
        av(w["ud"]["ah"], "ud.ah");
      }
    }
  if (op == "post_recv")
    for (const json& w : body.at("wrs")) {
      expect_only(w, keys::kRecvWr, "wr");
      for (const json& s : w.value("sg_list", json::array())) expect_only(s, keys::kSge, "sge");
    }
}

AddressVector full_av() {
  return {"192.0.2.1", "02:00:00:00:00:01", 5, 1, 64, 2, 3, 1, 0, 49152};
}

TEST(Codec, EveryRequestWritesOnlyItsDeclaredFields) {
  QpAttr attr;
  attr.qp_state = "RTR";
  attr.cur_qp_state = "INIT";
  attr.en_sqd_async_notify = true;
  attr.qp_access_flags = std::vector<std::string>{"REMOTE_WRITE"};
  attr.pkey_index = attr.alt_pkey_index = 0;
  attr.port_num = attr.alt_port_num = 1;
  attr.qkey = 7;
  attr.ah_attr = attr.alt_ah_attr = full_av();
  attr.path_mtu = 1024;
  attr.timeout = attr.alt_timeout = attr.retry_cnt = attr.rnr_retry = attr.min_rnr_timer = 1;
  attr.rq_psn = attr.sq_psn = attr.dest_qp_num = 9;
  attr.max_rd_atomic = attr.max_dest_rd_atomic = 1;
  attr.path_mig_state = "MIGRATED";
  attr.cap = QpCap{1, 2, 3, 4, 5};
  attr.sq_draining = false;  // an answer only: never written
  SendWr wr;
  wr.send_flags = {"SIGNALED", "INLINE"};
  wr.sg_list = {{0x1000, 16, 7}};
  wr.inline_data = std::vector<std::uint8_t>{1, 2};
  wr.imm_data = 1;
  wr.invalidate_rkey = 2;
  wr.rdma = SendWr::Rdma{0x2000, 3};
  wr.atomic = SendWr::Atomic{0x3000, 1, 2, 3};
  wr.ud = SendWr::Ud{full_av(), 0x11, 0x22};
  wr.bind_mw = SendWr::BindMw{4, 0x80000101, 1, 0x1000, 64, {"REMOTE_READ"}, true};
  CmConnect cm;
  cm.service_id = 1;
  cm.port = 2;
  cm.path_mtu = cm.starting_psn = 3;
  cm.pkey = 0xFFFF;
  cm.responder_resources = cm.initiator_depth = cm.retry_count = cm.rnr_retry_count = 1;
  cm.private_data = std::vector<std::uint8_t>{0xAB};
  cm.cm_response_timeout = cm.max_cm_retries = cm.packet_lifetime = 4;

  const std::vector<json> requests = {
      encode(Hello{}),
      encode(Auth{"00"}),
      encode(AllocPd{}),
      encode(DeallocPd{1}),
      encode(RegMr{1, 4096, {"LOCAL_WRITE"}, 0x10000}),
      encode(DeregMr{1}),
      encode(WriteMr{1, 8, {1, 2, 3}}),
      encode(ReadMr{1, 8, 3}),
      encode(AllocMw{1, 2}),
      encode(DeallocMw{4}),
      encode(BindMw{0x11, 4, 1, 0x1000, 64, {"REMOTE_WRITE"}, false, 9, {"SIGNALED"}}),
      encode(CreateCq{16}),
      encode(DestroyCq{1}),
      encode(ReqNotifyCq{1, true}),
      encode(PollCq{1, 4}),
      encode(CqEvents{50}),
      encode(CreateQp{"RC", 1, 2, 2, QpCap{1, 2, 3, 4, 5}, true}),
      encode(ModifyQp{0x11, attr}),
      encode(QueryQp{0x11}),
      encode(DestroyQp{0x11}),
      encode(PostSend{0x11, {wr, SendWr{}}}),
      encode(PostRecv{0x11, {RecvWr{1, {{0x1000, 16, 7}}}, RecvWr{}}}),
      encode(Counters{std::vector<std::string>{"rx_packets"}}),
      encode(KernelLog{1, 2, 3}),
      encode(AsyncEvents{}),
      encode(Quirks{}),
      encode(cm),
      encode(CmStatus{0x11}),
      encode(CmDisconnect{0x11}),
      encode(Reset{}),
  };
  std::set<std::string> ops;
  for (const json& r : requests) {
    expect_declared(r);
    ops.insert(r.at("op").get<std::string>());
  }
  // Every op but capabilities (hello's other name) has a request type.
  EXPECT_EQ(ops.size(), kOpNames.size() - 1 + 1 /* auth */);
  EXPECT_FALSE(encode(attr).contains("sq_draining"));
}

TEST(Codec, RequestsCarryTheApiForms) {
  const json w = encode(WriteMr{3, 0, {0xde, 0xad}});
  EXPECT_EQ(w, (json{{"op", "write_mr"}, {"handle", 3}, {"offset", 0}, {"data", "dead"}}));
  QpAttr a;
  a.qp_state = "ERR";
  EXPECT_EQ(encode(ModifyQp{7, a}),
            (json{{"op", "modify_qp"}, {"qp_num", 7}, {"attr", {{"qp_state", "ERR"}}}}));
  EXPECT_EQ(encode(PollCq{2, std::nullopt}), (json{{"op", "poll_cq"}, {"cq", 2}}))
      << "an optional field left empty is not sent";
  CmConnect cm;
  cm.service_id = 0x10612ac;
  EXPECT_EQ(encode(cm).at("service_id"), "0x10612ac") << "a Service ID is written in hex";
}

TEST(Codec, MemoryWindowRequestsCarryTheApiForms) {
  EXPECT_EQ(encode(AllocMw{3, 2}), (json{{"op", "alloc_mw"}, {"pd", 3}, {"type", 2}}));
  EXPECT_EQ(encode(BindMw{0x11, 4, 1, 0x1000, 64, {"REMOTE_READ"}, false, 9, {}}),
            (json{{"op", "bind_mw"},
                  {"qp_num", 0x11},
                  {"mw", 4},
                  {"mr", 1},
                  {"addr", 0x1000},
                  {"length", 64},
                  {"access", {"REMOTE_READ"}},
                  {"zero_based", false},
                  {"wr_id", 9}}));
  SendWr wr;
  wr.opcode = "BIND_MW";
  wr.bind_mw = SendWr::BindMw{4, std::nullopt, 1, 0x1000, 64, {"REMOTE_WRITE"}, true};
  EXPECT_EQ(encode(wr).at("bind_mw"), (json{{"mw", 4},
                                            {"mr", 1},
                                            {"addr", 0x1000},
                                            {"length", 64},
                                            {"access", {"REMOTE_WRITE"}},
                                            {"zero_based", true}}))
      << "no rkey: the server picks the next key byte";
  wr.bind_mw->rkey = 0x80000102;
  EXPECT_EQ(encode(wr).at("bind_mw").at("rkey"), 0x80000102);

  const auto mw = decode<AllocMwReply>(
      json{{"mw", 4}, {"rkey", 0x80000100}, {"type", 2}, {"pd", 1}}, "alloc_mw");
  ASSERT_TRUE(mw) << mw.error();
  EXPECT_EQ(mw->mw, 4u);
  EXPECT_EQ(mw->rkey, 0x80000100u);
  EXPECT_EQ(mw->type, 2u);
  const auto bound = decode<BindMwReply>(json{{"rkey", 0x80000101}}, "bind_mw");
  ASSERT_TRUE(bound) << bound.error();
  EXPECT_EQ(bound->rkey, 0x80000101u);
  EXPECT_FALSE(decode<BindMwReply>(json::object(), "bind_mw"));
}

TEST(Codec, OpKeysFollowTheOpNames) {
  ASSERT_EQ(op_keys().size(), kOpNames.size());
  for (std::size_t i = 0; i < kOpNames.size(); ++i) EXPECT_EQ(op_keys()[i].op, kOpNames[i]);
  EXPECT_TRUE(keys_of("no_such_op").empty());
  EXPECT_EQ(keys_of("auth").size(), 1u);
}

TEST(Codec, ResponsesReadBackIntoTheirTypes) {
  const auto wc = decode<PollCqReply>(
      json::parse(R"({"ok":true,"id":3,"wc":[{"wr_id":1,"status":"SUCCESS","opcode":"RECV",
        "vendor_err":0,"byte_len":32,"imm_data":0,"qp_num":17,"src_qp":0,"pkey_index":0,
        "slid":0,"sl":0,"dlid_path_bits":0,"wc_flags":["GRH"]}]})"),
      "poll_cq");
  ASSERT_TRUE(wc) << wc.error();
  ASSERT_EQ(wc->wc.size(), 1u);
  EXPECT_EQ(wc->wc[0].status, "SUCCESS");
  EXPECT_EQ(wc->wc[0].byte_len, 32u);
  EXPECT_EQ(wc->wc[0].qp_num, 17u);
  EXPECT_EQ(wc->wc[0].wc_flags, std::vector<std::string>{"GRH"});

  const auto ev = decode<CqEventsReply>(json{{"events", {3, 3, 5}}}, "cq_events");
  ASSERT_TRUE(ev) << ev.error();
  EXPECT_EQ(ev->events, (std::vector<std::uint32_t>{3, 3, 5}));
  EXPECT_FALSE(decode<CqEventsReply>(json{{"events", {-1}}}, "cq_events"));

  // A RoCE port's subnet fields and capability names, as hello gives them.
  const auto hello = decode<HelloReply>(json{{"target", "t"},
                                             {"protocol", 1},
                                             {"port",
                                              {{"lid", 0},
                                               {"sm_lid", 0},
                                               {"lmc", 0},
                                               {"max_vl_num", 1},
                                               {"link_layer", "Ethernet"},
                                               {"port_cap_flags", {"CM_SUP", "IP_BASED_GIDS"}}}}},
                                        "hello");
  ASSERT_TRUE(hello) << hello.error();
  ASSERT_TRUE(hello->port);
  EXPECT_EQ(hello->port->lid, 0u);
  EXPECT_EQ(hello->port->max_vl_num, 1u);
  EXPECT_EQ(hello->port->link_layer, "Ethernet");
  EXPECT_EQ(hello->port->port_cap_flags, (std::vector<std::string>{"CM_SUP", "IP_BASED_GIDS"}));
  EXPECT_FALSE(decode<HelloReply>(json{{"target", "t"}, {"protocol", 1}}, "hello")->port);

  // modify_qp's mask: one text from the reference target, a list from roceconf-agent.
  EXPECT_EQ(decode<ModifyQpReply>(json{{"attr_mask", "STATE, PKEY_INDEX"}}, "modify_qp")->attr_mask,
            (std::vector<std::string>{"STATE", "PKEY_INDEX"}));
  EXPECT_EQ(decode<ModifyQpReply>(json{{"attr_mask", {"STATE"}}}, "modify_qp")->attr_mask,
            std::vector<std::string>{"STATE"});

  const auto read = decode<ReadMrReply>(json{{"data", "00ff"}}, "read_mr");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->data, (std::vector<std::uint8_t>{0x00, 0xff}));

  // Both servers' forms of cm_connect: the reference's padded hex, the agent's without comm_id.
  const auto ref = decode<CmConnectReply>(
      json{{"comm_id", 5}, {"service_id", "0x0000000001060fa0"}, {"starting_psn", 9}},
      "cm_connect");
  ASSERT_TRUE(ref) << ref.error();
  EXPECT_EQ(ref->service_id, 0x1060fa0u);
  EXPECT_EQ(ref->comm_id, 5u);
  const auto agent = decode<CmConnectReply>(json{{"service_id", "0x1060fa0"}}, "cm_connect");
  ASSERT_TRUE(agent) << agent.error();
  EXPECT_FALSE(agent->comm_id);

  const auto events =
      decode<AsyncEventsReply>(json::parse(R"({"events":[{"event_type":"CQ_ERR","element":2},
                                {"event_type":"SRQ_ERR","element":null}],"dropped":0})"),
                               "async_events");
  ASSERT_TRUE(events) << events.error();
  EXPECT_EQ(events->events[0].element, 2u);
  EXPECT_FALSE(events->events[1].element);
  EXPECT_EQ(describe(events->events[0]), R"({"element":2,"event_type":"CQ_ERR"})");
}

TEST(Codec, KernelLogReadsItsLinesAndTheHostsClock) {
  EXPECT_EQ(encode(KernelLog{.since_unix_ns = 5, .max_lines = 0}),
            (json{{"op", "kernel_log"}, {"since_unix_ns", 5}, {"max_lines", 0}}));
  const auto log = decode<KernelLogReply>(
      json::parse(R"({"lines":[{"unix_ns":1700000000000000001,"text":"rdma_rxe: bad ICRC",
                  "priority":4,"seq":77},{"unix_ns":1700000000000000002,"text":"x"}],
                  "dropped":3,"now_unix_ns":1700000000000000009,"source":"/dev/kmsg",
                  "stamp_clock":"sched_debug"})"),
      "kernel_log");
  ASSERT_TRUE(log) << log.error();
  ASSERT_EQ(log->lines.size(), 2u);
  EXPECT_EQ(log->lines[0].unix_ns, 1'700'000'000'000'000'001);
  EXPECT_EQ(log->lines[0].priority, 4u);
  EXPECT_EQ(log->lines[0].seq, 77u);
  EXPECT_FALSE(log->lines[1].priority);
  EXPECT_EQ(log->dropped, 3u);
  EXPECT_EQ(log->now_unix_ns, 1'700'000'000'000'000'009);
  EXPECT_EQ(log->source, "/dev/kmsg");
  EXPECT_EQ(log->stamp_clock, "sched_debug");
  const auto no_clock = decode<KernelLogReply>(json{{"lines", json::array()}}, "kernel_log");
  ASSERT_FALSE(no_clock) << "now_unix_ns is what places the lines";
  EXPECT_NE(no_clock.error().find("now_unix_ns"), std::string::npos) << no_clock.error();
}

TEST(Codec, AMissingOrMalformedFieldNamesItsPath) {
  const auto missing =
      decode<PollCqReply>(json::parse(R"({"wc":[{"wr_id":1,"opcode":"RECV"}]})"), "poll_cq");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("poll_cq.wc[0]"), std::string::npos) << missing.error();
  EXPECT_NE(missing.error().find("status"), std::string::npos) << missing.error();

  const auto wrong = decode<CreateCqReply>(json{{"cq", "one"}, {"depth", 4}}, "create_cq");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().find("create_cq.cq"), std::string::npos) << wrong.error();

  const auto big = decode<AllocPdReply>(json{{"pd", 1ull << 40}}, "alloc_pd");
  ASSERT_FALSE(big) << "a PD handle is 32 bits";
  EXPECT_FALSE(decode<Empty>(json::array(), "dealloc_pd")) << "a response is an object";
}

}  // namespace
}  // namespace roceconf::control

namespace roceconf::control {
namespace {

TEST(Codec, QpAttrReadsBackWhatItWrites) {
  QpAttr a;
  a.qp_state = "RTR";
  a.path_mtu = 1024;
  a.qp_access_flags = std::vector<std::string>{"REMOTE_WRITE"};
  a.ah_attr = AddressVector{.dgid = "192.0.2.1", .dmac = "02:00:00:00:00:01", .hop_limit = 64};
  const auto back = decode_qp_attr(encode(a), "attr");
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->qp_state, "RTR");
  EXPECT_EQ(back->path_mtu, 1024u);
  EXPECT_EQ(back->qp_access_flags, a.qp_access_flags);
  ASSERT_TRUE(back->ah_attr);
  EXPECT_EQ(back->ah_attr->hop_limit, 64);
  EXPECT_FALSE(back->timeout);
  // A field modify_qp does not take is refused, named by its path.
  const auto bad = decode_qp_attr(json{{"sq_draining", true}}, "modify_qp.attr");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("modify_qp.attr: unknown field 'sq_draining'"), std::string::npos)
      << bad.error();
}

TEST(Codec, CmConnectReadsBackWhatItWrites) {
  CmConnect r{.qp_num = 0x11,
              .service_id = 0x106000000000fa0ull,
              .dgid = "192.0.2.2",
              .dmac = "02:00:00:00:00:02"};
  r.private_data = std::vector<std::uint8_t>{0xde, 0xad};
  const auto back = decode_cm_connect(encode(r));  // "op" is the envelope's
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->qp_num, 0x11u);
  EXPECT_EQ(back->service_id, 0x106000000000fa0ull);
  EXPECT_EQ(back->private_data, r.private_data);
  EXPECT_FALSE(back->port);
  EXPECT_FALSE(decode_cm_connect(json{{"qp_num", 1}, {"dgid", "x"}, {"dmac", "y"}, {"typo", 1}}));
}

TEST(Codec, ResponseStructuresWriteTheirApiForm) {
  WorkCompletion wc;
  wc.wr_id = 7;
  wc.status = "SUCCESS";
  wc.opcode = "RECV";
  wc.wc_flags = {"WITH_IMM"};
  const json w = encode(wc);
  EXPECT_EQ(w.at("wr_id"), 7);
  EXPECT_EQ(w.at("wc_flags"), json::array({"WITH_IMM"}));
  EXPECT_EQ(w.size(), 13u);
  EXPECT_EQ(describe(wc), w.dump());
  const auto read = decode<PollCqReply>(json{{"ok", true}, {"wc", json::array({w})}}, "poll_cq");
  ASSERT_TRUE(read) << read.error();
  EXPECT_EQ(read->wc.at(0).wc_flags, wc.wc_flags);

  CmStatusReply s{
      .state = "established", .reason = {}, .comm_id = 5, .cm_state = {}, .remote_qpn = {}};
  EXPECT_EQ(encode(s), (json{{"state", "established"}, {"comm_id", 5}}));
  QpAttr a;
  a.qp_state = "RTS";
  a.sq_psn = 0;
  EXPECT_EQ(describe(a), R"({"qp_state":"RTS","sq_psn":0})");
}

}  // namespace
}  // namespace roceconf::control
