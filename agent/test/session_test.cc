// The agent's request handling without a device: whatever a controller sends, the answer is one
// JSON line with ok = false and a clear error, and nothing crashes. Requests that pass
// validation reach the device and fail with ENODEV, naming why.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "agent/control_server.h"
#include "agent/session.h"
#include "control/ops.h"

namespace roceconf::agent {
namespace {

using nlohmann::json;

Session& no_device() {
  static Session s({.device = "roceconf-no-such-device", .port = 1});
  return s;
}

json answer(std::string_view line) {
  return json::parse(no_device().handle_line(line));
}

TEST(AgentSession, NotJsonIsRefusedWithNullId) {
  const json r = answer("{\"op\": \"hello\"");
  EXPECT_TRUE(r["id"].is_null());
  EXPECT_FALSE(r["ok"]);
  EXPECT_EQ(r["errno"], "EINVAL");
  EXPECT_NE(r["error"].get<std::string>().find("not valid JSON"), std::string::npos);
}

TEST(AgentSession, UnknownOpNamesTheKnownOnes) {
  const json r = answer(R"({"id": 3, "op": "create_qpp"})");
  EXPECT_EQ(r["id"], 3);
  EXPECT_FALSE(r["ok"]);
  const std::string e = r["error"];
  EXPECT_NE(e.find("unknown op 'create_qpp'"), std::string::npos) << e;
  EXPECT_NE(e.find("create_qp"), std::string::npos) << e;
}

TEST(AgentSession, UnknownFieldIsNeverIgnored) {
  const json r = answer(R"({"id": "a", "op": "create_cq", "depht": 4})");
  EXPECT_EQ(r["id"], "a");
  EXPECT_EQ(r["errno"], "EINVAL");
  EXPECT_NE(r["error"].get<std::string>().find("unknown field 'depht'"), std::string::npos);
}

// The fields each op takes are control/ops.h's, shared with the reference target: the agent
// takes what the reference takes (create_qp's older "type"), and refuses what it refuses.
TEST(AgentSession, FieldsAreTheSharedDeclaredOnes) {
  for (const auto& [op, keys] : control::op_keys()) {
    json request = {{"op", op}};
    for (std::string_view key : keys) request[std::string(key)] = json::object();
    const std::string e = answer(request.dump()).value("error", "");
    EXPECT_EQ(e.find("unknown field"), std::string::npos) << op << ": " << e;
    request["not_a_field"] = 1;
    const std::string refused = answer(request.dump()).value("error", "");
    EXPECT_NE(refused.find("unknown field 'not_a_field'"), std::string::npos)
        << op << ": " << refused;
  }
  const json typed =
      answer(R"({"op": "create_qp", "type": "RC", "pd": 1, "send_cq": 1, "recv_cq": 1})");
  EXPECT_EQ(typed["errno"], "ENOENT") << typed << ": 'type' is read as qp_type; there is no PD 1";
  const json both = answer(
      R"({"op": "create_qp", "type": "RC", "qp_type": "RC", "pd": 1, "send_cq": 1, "recv_cq": 1})");
  EXPECT_NE(both["error"].get<std::string>().find("give 'qp_type'"), std::string::npos) << both;
}

TEST(AgentSession, WrongTypesAndRangesNameTheField) {
  EXPECT_NE(answer(R"({"op": "create_cq", "depth": "abc"})")["error"].get<std::string>().find(
                "create_cq.depth: 'abc' is not an unsigned integer"),
            std::string::npos);
  EXPECT_NE(answer(R"({"op": "create_cq", "depth": -1})")["error"].get<std::string>().find(
                "create_cq.depth: must be an unsigned integer"),
            std::string::npos);
  EXPECT_NE(
      answer(
          R"({"op": "create_qp", "qp_type": "RD", "pd": 1, "send_cq": 1, "recv_cq": 1})")["error"]
          .get<std::string>()
          .find("create_qp.qp_type: 'RD' is not RC, UC or UD"),
      std::string::npos);
  EXPECT_EQ(answer(R"({"op": "post_send", "qp_num": 1, "wrs": {}})")["error"],
            "ENOENT: post_send: no QP 1");
  EXPECT_NE(
      answer(R"({"op": "modify_qp", "qp_num": 99999999999})")["error"].get<std::string>().find(
          "above the largest allowed value"),
      std::string::npos);
}

TEST(AgentSession, NonScalarIdIsRefused) {
  const json r = answer(R"({"id": [1], "op": "hello"})");
  EXPECT_TRUE(r["id"].is_null());
  EXPECT_FALSE(r["ok"]);
}

TEST(AgentSession, MissingOpAndNonObjects) {
  EXPECT_NE(answer(R"({"id": 1})")["error"].get<std::string>().find("'op' is missing"),
            std::string::npos);
  for (const char* line : {"[]", "42", "\"hello\"", "null", "true"}) {
    const json r = answer(line);
    EXPECT_FALSE(r["ok"]) << line;
    EXPECT_NE(r["error"].get<std::string>().find("expected an object"), std::string::npos) << line;
  }
}

TEST(AgentSession, WithoutTheDeviceVerbsAnswerEnodev) {
  const json r = answer(R"({"id": 1, "op": "hello"})");
  EXPECT_FALSE(r["ok"]);
  EXPECT_EQ(r["errno"], "ENODEV");
  // Either no device at all, or none of that name: the message says which.
  EXPECT_NE(r["error"].get<std::string>().find("RDMA device"), std::string::npos) << r["error"];
  EXPECT_EQ(answer(R"({"op": "cm_status", "qp_num": 7})")["error"],
            "ENOENT: cm_status: cm_connect never named QP 7");
  EXPECT_EQ(answer(R"({"op": "cm_connect", "qp_num": 7, "port": 7471})")["errno"], "ENOENT");
  const json d = answer(R"({"op": "destroy_cq", "cq": 9})");
  EXPECT_EQ(d["errno"], "ENOENT");
  EXPECT_EQ(d["error"], "ENOENT: destroy_cq: no CQ 9");
  const json e = answer(R"({"op": "cq_events", "wait_ms": 10})");
  EXPECT_EQ(e["errno"], "ENODEV");
  EXPECT_NE(e["error"].get<std::string>().find("cq_events: "), std::string::npos) << e["error"];
  EXPECT_EQ(answer(R"({"op": "cq_events", "wait_ms": 1001})")["errno"], "EINVAL");
  // Memory windows name what they lack the same way.
  EXPECT_EQ(answer(R"({"op": "alloc_mw", "pd": 1, "type": 2})")["error"],
            "ENOENT: alloc_mw: no PD 1");
  EXPECT_EQ(answer(R"({"op": "dealloc_mw", "mw": 3})")["error"],
            "ENOENT: dealloc_mw: no memory window 3");
  EXPECT_EQ(answer(R"({"op": "bind_mw", "qp_num": 5, "mw": 3})")["error"],
            "ENOENT: bind_mw: no QP 5");
}

TEST(AgentSession, GarbageNeverCrashes) {
  std::mt19937 rng(7);
  const std::string seeds[] = {
      R"({"id":1,"op":"post_send","qp_num":1,"wrs":[{"opcode":"SEND","sg_list":[{"addr":1,"length":2,"lkey":3}]}]})",
      R"({"id":2,"op":"modify_qp","qp_num":5,"attr":{"qp_state":"RTR","ah_attr":{"dgid":"192.0.2.1","dmac":"02:00:00:00:00:01"}}})",
      R"({"id":3,"op":"reg_mr","pd":1,"length":4096,"access":["LOCAL_WRITE","REMOTE_READ"]})",
      R"({"id":4,"op":"counters","names":["x"]})"};
  for (int i = 0; i < 3000; ++i) {
    std::string line = seeds[rng() % std::size(seeds)];
    const int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits && !line.empty(); ++e) {
      const std::size_t at = rng() % line.size();
      switch (rng() % 3) {
        case 0:
          line[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          line.erase(at, 1 + rng() % 8);
          break;
        default:
          line.insert(at, 1, "{}[]\":,0x-9aZ"[rng() % 13]);
          break;
      }
    }
    const std::string out = no_device().handle_line(line);
    const json r = json::parse(out, nullptr, false);
    ASSERT_FALSE(r.is_discarded()) << out;
    ASSERT_TRUE(r.contains("ok")) << out;
    if (!r["ok"].get<bool>()) {
      ASSERT_TRUE(r["error"].is_string()) << out;
    }
  }
}

TEST(AgentSession, HostPortForms) {
  EXPECT_EQ(split_host_port("192.0.2.1:7700", "--agent").value(),
            (std::pair<std::string, std::uint16_t>{"192.0.2.1", 7700}));
  EXPECT_EQ(split_host_port("[::1]:80", "--agent").value().first, "::1");
  EXPECT_FALSE(split_host_port("192.0.2.1", "--agent"));
  EXPECT_FALSE(split_host_port("h:0", "--agent"));
  EXPECT_FALSE(split_host_port("h:70000", "--agent"));
  EXPECT_NE(split_host_port("h:x", "--agent").error().find("--agent"), std::string::npos);
}

}  // namespace
}  // namespace roceconf::agent

namespace roceconf::agent {
namespace {

// kernel_log needs no device: the host's log, here a file of kmsg records.
TEST(AgentSession, KernelLogAnswersTheWindowsLines) {
  const std::string path = ::testing::TempDir() + "agent_kmsg_records";
  {
    std::ofstream out(path);
    out << "6,1,1000,-;rdma_rxe: loaded\n"
        << "4,2,2000,-;rdma_rxe: bad ICRC from 192.0.2.1\n SUBSYSTEM=infiniband\n"
        << "this is no record\n";
  }
  Session s({.device = "roceconf-no-such-device", .port = 1, .kernel_log = path});
  const json all = json::parse(s.handle_line(R"({"id": 1, "op": "kernel_log"})"));
  ASSERT_TRUE(all["ok"]) << all.dump();
  ASSERT_EQ(all["lines"].size(), 2u);
  EXPECT_EQ(all["lines"][1]["text"], "rdma_rxe: bad ICRC from 192.0.2.1");
  EXPECT_EQ(all["lines"][1]["priority"], 4);
  EXPECT_EQ(all["lines"][1]["seq"], 2);
  const std::int64_t gap = all["lines"][1]["unix_ns"].get<std::int64_t>() -
                           all["lines"][0]["unix_ns"].get<std::int64_t>();
  EXPECT_NEAR(static_cast<double>(gap), 1e6, 1e5) << "1 ms apart on the monotonic stamps";
  EXPECT_EQ(all["malformed"], 1);
  EXPECT_NE(all["malformed_first"].get<std::string>().find("this is no record"), std::string::npos);
  EXPECT_EQ(all["source"], path);
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  EXPECT_NEAR(
      static_cast<double>(all["now_unix_ns"].get<std::int64_t>()),
      static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()), 5e9);

  // Each answer maps the stamps with the clock offset read at that moment, which may move by
  // some nanoseconds between calls: a window starting between the two lines selects the second.
  const std::int64_t between = all["lines"][0]["unix_ns"].get<std::int64_t>() + gap / 2;
  const json newest = json::parse(s.handle_line(
      json{{"op", "kernel_log"}, {"since_unix_ns", between}, {"max_lines", 5}}.dump()));
  ASSERT_EQ(newest["lines"].size(), 1u) << newest.dump();
  const json one = json::parse(s.handle_line(R"({"op": "kernel_log", "max_lines": 1})"));
  ASSERT_EQ(one["lines"].size(), 1u);
  EXPECT_EQ(one["lines"][0]["seq"], 2) << "the newest is kept";
  EXPECT_EQ(one["dropped"], 1);
  const json probe = json::parse(s.handle_line(R"({"op": "kernel_log", "max_lines": 0})"));
  EXPECT_TRUE(probe["lines"].empty());
  EXPECT_TRUE(probe.contains("now_unix_ns"));

  std::remove(path.c_str());
  const json gone = json::parse(s.handle_line(R"({"op": "kernel_log"})"));
  EXPECT_FALSE(gone["ok"]);
  EXPECT_EQ(gone["errno"], "ENOENT");
  EXPECT_NE(gone["error"].get<std::string>().find(path), std::string::npos);
}

}  // namespace
}  // namespace roceconf::agent
