#include "reports/json_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "reports/test/sample_run.h"

namespace roceconf::report {
namespace {

using nlohmann::json;

TEST(JsonWriter, TopLevel) {
  const json j = json::parse(to_json(test::sample_run()));
  EXPECT_EQ(j["tool"], "roceconf");
  EXPECT_EQ(j["version"], "0.1.0");
  EXPECT_EQ(j["target"]["kind"], "reference");
  EXPECT_EQ(j["target"]["quirks"], json::array({"psn-gap-ack"}));
  EXPECT_EQ(j["started"], "2023-11-14T22:13:20.123Z");
  EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 1.234);
  EXPECT_DOUBLE_EQ(j["rtt_us"].get<double>(), 41.0);
  EXPECT_DOUBLE_EQ(j["silence_ms"].get<double>(), 2.0);
  EXPECT_EQ(j["interrupted"], false);
  EXPECT_EQ(j["summary"],
            json::parse(R"({"pass":1,"fail":1,"skip":1,"error":1,"inconclusive":1,"total":5})"));
  EXPECT_EQ(j["areas"]["cm"]["error"], 1);
  EXPECT_EQ(j["areas"]["cm"]["inconclusive"], 1);
  EXPECT_EQ(j["areas"]["psn"]["total"], 2);
  for (const char* key : {"filter", "cases"}) EXPECT_TRUE(j.contains(key)) << key;
}

TEST(JsonWriter, CertificateIdentityAndWaivers) {
  RunResult run = test::sample_run();
  run.identity.evidence_path = "evidence.pcapng";
  run.identity.evidence_sha256 = std::string(64, 'e');
  run.waivers = {{"cm/mra", "2027-06-30", "timer out of reach", "w.txt:1"}};
  const json j = json::parse(to_json(run));
  const json& cert = j["certificate"];
  EXPECT_EQ(cert["headline"], "NOT CONFORMANT");
  EXPECT_EQ(cert["exit_status"], 1);
  EXPECT_EQ(cert["counts"]["waived"], 1);
  EXPECT_EQ(cert["counts"]["blocking"], 2);
  EXPECT_EQ(cert["blocking"], json::array({"psn/gap-naks-once", "cm/rej-reason"}));
  EXPECT_EQ(cert["waived"], json::array({"cm/mra"}));
  EXPECT_EQ(cert["waivers"][0]["status"], "applied");
  EXPECT_EQ(cert["waivers"][0]["verdict"], "inconclusive");
  EXPECT_EQ(cert["line"].get<std::string>().rfind("NOT CONFORMANT: 3 of 5 graded", 0), 0u);
  EXPECT_FALSE(cert["rule"].empty());
  const json& mra = j["cases"][4];
  EXPECT_EQ(mra["id"], "cm/mra");
  EXPECT_EQ(mra["verdict"], "inconclusive");  // the real verdict is kept
  EXPECT_EQ(mra["grade"], "waived");
  EXPECT_EQ(mra["waiver"]["reason"], "timer out of reach");
  EXPECT_EQ(mra["waiver"]["until"], "2027-06-30");
  EXPECT_FALSE(j["cases"][0].contains("waiver"));
  const json& id = j["identity"];
  EXPECT_EQ(id["device"]["name"], "roceconf reference NIC");
  EXPECT_EQ(j["target"]["device"]["fw_ver"], "0.1.0");
  EXPECT_EQ(id["tester_host"]["kernel"], "6.1.0-test");
  EXPECT_EQ(id["catalogue"]["version"], "2026.12");
  EXPECT_EQ(id["seed"], 7);
  EXPECT_EQ(id["evidence"]["sha256"], std::string(64, 'e'));
}

TEST(JsonWriter, EveryCaseHasTheRequiredKeys) {
  const json j = json::parse(to_json(test::sample_run()));
  ASSERT_EQ(j["cases"].size(), 5u);
  for (const json& c : j["cases"])
    for (const char* key : {"id", "area", "verdict", "clause", "reason", "title", "requirement",
                            "needs", "source", "failed_step", "diffs", "duration_ms", "events"})
      EXPECT_TRUE(c.contains(key)) << c["id"] << " lacks " << key;
  std::vector<std::string> verdicts;
  for (const json& c : j["cases"]) verdicts.push_back(c["verdict"]);
  EXPECT_EQ(verdicts, (std::vector<std::string>{"pass", "fail", "skip", "error", "inconclusive"}));
}

TEST(JsonWriter, CitationApartFromItsRule) {
  const json j = json::parse(to_json(test::sample_run()));
  const json& pass = j["cases"][0];
  EXPECT_EQ(pass["citation"], "9.7.5.1; 9.7.5.1.1 C9-81");
  EXPECT_EQ(pass["rule"], "An in-order request with AckReq set is ACKed with its own PSN");
  EXPECT_EQ(pass["release"], "IBA Vol 1 Release 1.2.1 + Annex A17");
  EXPECT_EQ(pass["checked"], "pib; unchecked: 9.7.5.1.1, C9-81");
  EXPECT_EQ(pass["clause"],
            "9.7.5.1; 9.7.5.1.1 C9-81 (IBA Vol 1 Release 1.2.1 + Annex A17): An in-order "
            "request with AckReq set is ACKed with its own PSN");
  EXPECT_EQ(j["cases"][1]["citation"], "");  // a case without one keeps its clause text
}

TEST(JsonWriter, FailingCaseDiffsAndEvents) {
  const json j = json::parse(to_json(test::sample_run()));
  const json& c = j["cases"][1];
  EXPECT_EQ(c["id"], "psn/gap-naks-once");
  EXPECT_EQ(c["diffs"][0], json::parse(R"({"field":"bth.psn","expected":"0x000010",
                                             "actual":"0x000011"})"));
  EXPECT_DOUBLE_EQ(c["duration_ms"].get<double>(), 2.5);
  const json& events = c["events"];
  ASSERT_EQ(events.size(), 11u);
  // Time order, relative to the case start.
  double last = -1;
  for (const json& e : events) {
    EXPECT_GE(e["t_us"].get<double>(), last);
    last = e["t_us"];
    const bool frame = e["kind"] == "sent" || e["kind"] == "received";
    EXPECT_EQ(e.contains("frame"), frame) << e;
  }
  EXPECT_EQ(events[1]["kind"], "sent");
  EXPECT_DOUBLE_EQ(events[1]["t_us"].get<double>(), 10.0);
  EXPECT_EQ(events[1]["frame"].get<std::string>().substr(0, 12), "020000000002");
  EXPECT_EQ(events[1]["frame"].get<std::string>().size(), 78u * 2);
  EXPECT_EQ(events[2]["kind"], "expect-met");  // recorded after, happened before
  EXPECT_EQ(events[3]["analysis"], json::array({"ack"}));
  EXPECT_EQ(events[3]["step"], "cases/psn/gap-naks-once.rcase:8");
  EXPECT_EQ(events[7]["kind"], "control");
  EXPECT_EQ(events[9]["kind"], "kernel-log");
  EXPECT_EQ(events[9]["host_unix_ns"].get<std::int64_t>() - test::kT0, 315'000 + 1'500'000)
      << "the host's own time of the line is kept";
  EXPECT_EQ(events[10]["kind"], "counter");
  EXPECT_EQ(events[10]["text"], "rcv_packets +2 (40 → 42)");
  EXPECT_FALSE(events[10].contains("host_unix_ns"));
}

TEST(JsonWriter, InvalidUtf8IsReplacedNotThrown) {
  RunResult run;
  CaseResult c;
  c.id = "x/y";
  c.reason = "bad \xff byte";
  run.cases = {c};
  json j;
  ASSERT_NO_THROW(j = json::parse(to_json(run)));
  EXPECT_EQ(j["cases"][0]["reason"], "bad \xEF\xBF\xBD byte");
  EXPECT_EQ(j["summary"]["error"], 1);  // a default CaseResult is an error
}

// Each case carries its measurements; the sec cases' are gathered in a section of their own.
TEST(JsonWriter, SecurityMeasurements) {
  RunResult run = test::sample_run();
  EXPECT_EQ(json::parse(to_json(run))["security_measurements"], json::array());
  CaseResult c;
  c.id = "sec/rkey-reuse";
  c.area = "sec";
  c.requirement = "MUST";
  c.verdict = Verdict::kPass;
  c.measurements = {
      {"R_Key after dereg_mr and reg_mr", "new", "a finding when it is the old one", false}};
  run.cases.push_back(c);
  const json j = json::parse(to_json(run));
  ASSERT_EQ(j["security_measurements"].size(), 1u);
  const json& s = j["security_measurements"][0];
  EXPECT_EQ(s["case"], "sec/rkey-reuse");
  EXPECT_EQ(s["verdict"], "pass");
  EXPECT_EQ(s["requirement"], "MUST");
  EXPECT_EQ(s["measurements"],
            json::parse(R"([{"name":"R_Key after dereg_mr and reg_mr","value":"new",)"
                        R"("threshold":"a finding when it is the old one","finding":false}])"));
  EXPECT_EQ(j["cases"].back()["measurements"], s["measurements"]);
  EXPECT_EQ(j["cases"][0]["measurements"], json::array());
}

}  // namespace
}  // namespace roceconf::report
