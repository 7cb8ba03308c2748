// Load-time checks of the case language: every verb, key, value, opcode, packet kind and
// connection name is checked when the script is parsed, with file:line, before the case runs.
#include <gtest/gtest.h>

#include "suite/engine/script.h"
#include "suite/engine/script_check.h"

namespace roceconf::engine {
namespace {

constexpr const char* kHead = "clause: x\nlevel: MUST\n";  // lines 1 and 2

// The parse error of a script whose steps start on line 3.
std::string error_of(const std::string& steps) {
  auto s = parse_script("cases/t/x.rcase", kHead + steps);
  return s ? std::string("(parsed)") : s.error();
}

TEST(ScriptCheck, UnknownVerb) {
  EXPECT_EQ(error_of("connect c\nfrobnicate c\n").substr(0, 46),
            "cases/t/x.rcase:4: unknown step 'frobnicate' (");
}

TEST(ScriptCheck, UnknownFieldOfAPacket) {
  const auto e = error_of("connect c\nsend c SEND_ONLY psn=0 ackreqq=1\n");
  EXPECT_TRUE(e.starts_with("cases/t/x.rcase:4: ")) << e;
  EXPECT_NE(e.find("ackreqq"), std::string::npos) << e;
}

TEST(ScriptCheck, UnknownOptionOfEachVerb) {
  for (const char* step :
       {"open c recvs=4", "accept c connect.bogus=1", "post recv c counts=1", "post send c lenn=1",
        "read c offs=0", "write c data=00", "create cq as q deep=4", "status c stat=established",
        "poll c statuss=SUCCESS", "query c qp_stat=ERR", "modify c qp_state=ERR expected=ok",
        "send c REJ reasons=1", "connect d bogus_req_field=1", "accept d bogus_rep_field=1"}) {
    SCOPED_TRACE(step);
    const auto e = error_of(std::string("open c\n") + step + "\n");
    EXPECT_TRUE(e.starts_with("cases/t/x.rcase:4: ")) << e;
    EXPECT_NE(e.find("unknown"), std::string::npos) << e;
  }
}

TEST(ScriptCheck, BadValues) {
  for (const char* step : {"connect d pmtu=1000",
                           "connect d rtu=maybe",
                           "open d pkey_index=x",
                           "open d access=ALL",
                           "accept d psn=0x1000000",
                           "status c state=happy",
                           "post send c len=2000000",
                           "poll c status=GREAT",
                           "poll c opcode=RECV|TELEPORT",
                           "poll c qp_num=d",
                           "query c qp_state=DONE",
                           "modify c qp_state=ERR expect=maybe",
                           "modify c ah_attr=x expect=EINVAL",  // objects are not set from text
                           "read c data=xyz",
                           "send c REQ service_id=abc",
                           "send c SEND_ONLY psn=zero",
                           "counter tx >= lots",
                           "counter tx ~ 1",
                           "wait forever",
                           "create cq as q depth=-1",
                           "open d cq=nosuch"}) {
    SCOPED_TRACE(step);
    const auto e = error_of(std::string("open c\n") + step + "\n");
    EXPECT_TRUE(e.starts_with("cases/t/x.rcase:4: ")) << e;
  }
}

TEST(ScriptCheck, UnknownOpcodeOrKind) {
  auto e = error_of("connect c\nsend c SEND_ONCE psn=0\n");
  EXPECT_TRUE(e.starts_with("cases/t/x.rcase:4: unknown opcode 'SEND_ONCE'")) << e;
  e = error_of("connect c\nexpect c ACKK psn=0\n");
  EXPECT_TRUE(e.starts_with("cases/t/x.rcase:4: ")) << e;
  EXPECT_NE(e.find("ACKK"), std::string::npos) << e;
  e = error_of("connect c\nexpect c ACK psn=0 or NACK psn=1\n");
  EXPECT_NE(e.find("NACK"), std::string::npos) << e;
  e = error_of("send c APR\n");  // a CM message the tester does not send
  EXPECT_TRUE(e.starts_with("cases/t/x.rcase:3: the tester does not send CM message 'APR'")) << e;
  EXPECT_EQ(error_of("connect c\nsend c LAP cm.alternate_local_lid=0x1234\n"), "(parsed)");
}

TEST(ScriptCheck, ConnectionNotMade) {
  for (const char* step :
       {"expect d ACK psn=0", "send d SEND_ONLY psn=0", "expect nothing from d", "poll d",
        "disconnect d", "post recv d", "read d", "send c SEND_ONLY dqpn=@d.local_qpn"}) {
    SCOPED_TRACE(step);
    const auto e = error_of(std::string("connect c\n") + step + "\n");
    EXPECT_TRUE(e.starts_with("cases/t/x.rcase:4: ")) << e;
    EXPECT_NE(e.find("'d'"), std::string::npos) << e;
  }
  // Made later is not made: a step names a connection made above it.
  EXPECT_TRUE(error_of("expect c ACK\nconnect c\n").starts_with("cases/t/x.rcase:3: "));
  // A CM message makes its connection; a later step may use it.
  EXPECT_EQ(error_of("send d REQ service_id=0x1060000000011ce\nexpect d REJ reason=28\n"),
            "(parsed)");
}

TEST(ScriptCheck, WellFormedStepsPass) {
  EXPECT_EQ(error_of("create cq as q depth=8\n"
                     "open c pmtu=1024 psn=0xfffffe recv=4 cq=q access=REMOTE_WRITE,REMOTE_READ\n"
                     "accept a rep=0 connect.cm_response_timeout=3 req.cm.retry_count=7\n"
                     "send a REP starting_psn=5 rnr_retry_count=7\n"
                     "status a state=established\n"
                     "send c SEND len=3000 fill=7\n"
                     "send c RDMA_WRITE_WITH_IMM len=100 imm=5\n"
                     "send c READ psn=1 len=64 offset=0\n"
                     "+0...1rtt expect c ACK psn=0 or NAK psn=1 syndrome=psn_seq_err\n"
                     "expect c READ_RESPONSE psn=1 len=64 after-earlier-acks\n"
                     "expect a REQ tid=@a.req_tid eventually\n"
                     "expect nothing from c\n"
                     "post send c len=64 imm=1 solicited=1\n"
                     "poll c cq=q status=SUCCESS|WR_FLUSH_ERR opcode=RECV qp_num=c wc_flags=\n"
                     "query c qp_state=RTS dest_qp_num=c\n"
                     "modify c qp_state=ERR expect=EINVAL\n"
                     "read c offset=0 len=4 data=00010203\n"
                     "counter snapshot\ncounter rx_nak >= 1\nwait 4rtt\n"
                     "note any = text here\n"),
            "(parsed)");
}

// The comparison of a control answer's fields with a step's: numbers as numbers, `A|B`, and a
// connection's name for its QP numbers.
TEST(ScriptCheck, ControlAnswersCompareByFieldName) {
  control::WorkCompletion wc;
  wc.wr_id = 3;
  wc.status = "WR_FLUSH_ERR";
  wc.qp_num = 0x12;
  const auto lookup = [&](std::string_view key) { return control::field(wc, key); };
  Connection c;
  c.name = "c";
  c.remote_qpn = 0x12;
  Assignments want;
  want.set("wr_id", "0x3");
  want.set("status", "SUCCESS|WR_FLUSH_ERR");
  want.set("qp_num", "c");
  EXPECT_TRUE(compare_fields(lookup, want, "wc", &c).empty());
  want.set("opcode", "RECV");
  want.set("no_such", "1");
  const auto diffs = compare_fields(lookup, want, "wc", &c);
  ASSERT_EQ(diffs.size(), 2u);
  EXPECT_EQ(diffs[0].field, "wc.opcode");
  EXPECT_EQ(diffs[0].expected, "RECV");
  EXPECT_EQ(diffs[0].actual, "");
  EXPECT_EQ(diffs[1].actual, "(absent)");
}

TEST(ScriptCheck, OptionsAreCheckedAtLoadNotWhenRun) {
  // The header's own errors keep their lines too.
  auto s = parse_script("f", "clause: x\nlevel: OFTEN\nconnect c\n");
  ASSERT_FALSE(s);
  EXPECT_TRUE(s.error().starts_with("f:2: ")) << s.error();
  EXPECT_TRUE(error_of("connect c psn=3\n").starts_with("cases/t/x.rcase:3: psn: with CM"));
}

// A Python case's ctx.step: the same checks, the connections are the context's.
TEST(ScriptCheck, OneStepChecksAgainstTheCaseConnections) {
  const auto known = [](const std::string& name) { return name == "c"; };
  auto s = parse_step("cases/py/x.py:12", "expect c ACK psn=0", known);
  ASSERT_TRUE(s) << s.error();
  EXPECT_TRUE(std::holds_alternative<step::Expect>(s->action));
  s = parse_step("cases/py/x.py:12", "expect d ACK psn=0", known);
  ASSERT_FALSE(s);
  EXPECT_TRUE(s.error().starts_with("cases/py/x.py:12: ")) << s.error();
  EXPECT_NE(s.error().find("'d'"), std::string::npos);
  s = parse_step("cases/py/x.py:13", "send c SEND_ONLY bogus=1", known);
  ASSERT_FALSE(s);
  EXPECT_TRUE(s.error().starts_with("cases/py/x.py:13: ")) << s.error();
  s = parse_step("cases/py/x.py:14", "poll c cq=made_in_python status=SUCCESS", known);
  EXPECT_TRUE(s) << s.error();  // the context's CQs are not known here: checked when run
}

}  // namespace
}  // namespace roceconf::engine
