// Typed messages walked and set by field name (field_text.h), and the verbs name tables
// (verbs_names.h) they use.
#include "control/field_text.h"

#include <gtest/gtest.h>

#include "control/codec.h"
#include "control/verbs_names.h"

namespace roceconf::control {
namespace {

TEST(FieldText, ACompletionReadsByFieldName) {
  WorkCompletion wc;
  wc.wr_id = 1001;
  wc.status = "WR_FLUSH_ERR";
  wc.opcode = "RECV";
  wc.imm_data = 0x11223344;
  wc.wc_flags = {"GRH", "WITH_IMM"};
  EXPECT_EQ(field(wc, "wr_id")->number, 1001u);
  EXPECT_EQ(field(wc, "imm_data")->text, "287454020");
  EXPECT_EQ(field(wc, "status")->text, "WR_FLUSH_ERR");
  EXPECT_FALSE(field(wc, "status")->number);
  EXPECT_EQ(field(wc, "wc_flags")->text, "GRH,WITH_IMM");
  EXPECT_FALSE(field(wc, "no_such_field"));
}

TEST(FieldText, QpAttributesReadByFieldName) {
  QpAttr a;
  a.qp_state = "ERR";
  a.path_mtu = 4096;
  a.qp_access_flags = std::vector<std::string>{};
  a.sq_draining = false;
  a.ah_attr = AddressVector{.dgid = "192.0.2.1", .dmac = "02:00:00:00:00:01", .hop_limit = 64};
  EXPECT_EQ(field(a, "qp_state")->text, "ERR");
  EXPECT_EQ(field(a, "path_mtu")->number, 4096u);
  EXPECT_EQ(field(a, "qp_access_flags")->text, "");
  EXPECT_EQ(field(a, "sq_draining")->text, "false");
  EXPECT_EQ(field(a, "ah_attr")->text,
            R"({"dgid":"192.0.2.1","dmac":"02:00:00:00:00:01","hop_limit":64})");
  EXPECT_FALSE(field(a, "timeout"));  // not given
}

TEST(FieldText, ACmStatusAnswerReadsByFieldName) {
  const CmStatusReply s{
      .state = "rejected", .reason = 28, .comm_id = {}, .cm_state = {}, .remote_qpn = {}};
  EXPECT_EQ(field(s, "state")->text, "rejected");
  EXPECT_EQ(field(s, "reason")->number, 28u);
  EXPECT_FALSE(field(s, "comm_id"));
}

TEST(FieldText, ModifyAttributesFromText) {
  const auto a = qp_attr_from_text({{"qp_state", "RTS"},
                                    {"sq_psn", "0x10"},
                                    {"timeout", "14"},
                                    {"qp_access_flags", "REMOTE_WRITE,REMOTE_READ"},
                                    {"en_sqd_async_notify", "1"}});
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ(a->qp_state, "RTS");
  EXPECT_EQ(a->sq_psn, 16u);
  EXPECT_EQ(a->timeout, 14);
  EXPECT_EQ(a->qp_access_flags, (std::vector<std::string>{"REMOTE_WRITE", "REMOTE_READ"}));
  EXPECT_EQ(a->en_sqd_async_notify, true);
  EXPECT_FALSE(a->path_mtu);

  // Access bits as a number become their names; none is the empty list.
  EXPECT_EQ(qp_attr_from_text({{"qp_access_flags", "6"}})->qp_access_flags,
            (std::vector<std::string>{"REMOTE_WRITE", "REMOTE_READ"}));
  EXPECT_EQ(qp_attr_from_text({{"qp_access_flags", "0"}})->qp_access_flags,
            std::vector<std::string>{});
  EXPECT_EQ(qp_attr_from_text({{"qp_access_flags", "none"}})->qp_access_flags,
            std::vector<std::string>{});

  const auto wide = qp_attr_from_text({{"timeout", "300"}});
  ASSERT_FALSE(wide);
  EXPECT_NE(wide.error().find("modify_qp.attr.timeout"), std::string::npos) << wide.error();
  EXPECT_FALSE(qp_attr_from_text({{"qp_access_flags", "0x100"}}));
  EXPECT_FALSE(qp_attr_from_text({{"ah_attr", "x"}}));
  EXPECT_FALSE(qp_attr_from_text({{"bogus", "1"}}));
  // The JSON sent is what the fields say.
  EXPECT_EQ(encode(*qp_attr_from_text({{"qp_state", "INIT"}, {"qp_access_flags", "0"}})),
            (nlohmann::json{{"qp_state", "INIT"}, {"qp_access_flags", nlohmann::json::array()}}));
}

TEST(FieldText, CmConnectFieldsFromText) {
  CmConnect r{.qp_num = 0x12, .service_id = 0x10, .dgid = "192.0.2.1", .dmac = "02:00:00:00:00:01"};
  ASSERT_TRUE(
      set_from_text(r, {{"retry_count", "3"}, {"private_data", "abcd"}, {"pkey", "0xffff"}}));
  EXPECT_EQ(r.retry_count, 3);
  EXPECT_EQ(r.private_data, (std::vector<std::uint8_t>{0xab, 0xcd}));
  EXPECT_EQ(r.pkey, 0xFFFF);
  EXPECT_EQ(r.service_id, 0x10u);  // untouched

  const CmConnect before = r;
  const auto bad = set_from_text(r, {{"retry_count", "3"}, {"no_such", "1"}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("unknown field 'no_such'"), std::string::npos) << bad.error();
  EXPECT_EQ(encode(r), encode(before));
  EXPECT_FALSE(set_from_text(r, {{"private_data", "abc"}}));  // odd hex
  EXPECT_FALSE(set_from_text(r, {{"retry_count", "256"}}));
}

TEST(VerbsNames, NamesAndValuesAreLibibverbs) {
  using namespace verbs;
  EXPECT_EQ(value_of(kWcStatus, "WR_FLUSH_ERR"), 5u);
  EXPECT_EQ(name_of(kWcStatus, 21), "GENERAL_ERR");
  EXPECT_EQ(value_of(kWcOpcode, "RECV_RDMA_WITH_IMM"), 129u);
  EXPECT_EQ(value_of(kWrOpcode, "SEND_WITH_INV"), 9u);
  EXPECT_EQ(value_of(kQpState, "RTS"), 3u);
  EXPECT_FALSE(value_of(kQpState, "READY"));
  EXPECT_EQ(value_of(kAccessFlags, "REMOTE_ATOMIC"), 8u);
  EXPECT_EQ(name_of(kWcFlags, 2), "WITH_IMM");
  EXPECT_EQ(name_of(kQpType, 2), "RC");
  EXPECT_EQ(attr_mask_bit("PATH_MTU"), 1u << 8);
  EXPECT_EQ(attr_mask_bit("path_mtu"), 1u << 8);
  EXPECT_EQ(attr_mask_bit("alt_timeout"), 1u << 14);
  EXPECT_FALSE(attr_mask_bit("bogus"));
  // Every attribute a modify_qp request may carry has a mask bit, and the reverse.
  for (const AttrName& a : kQpAttrMask) EXPECT_TRUE(attr_mask_bit(a.field)) << a.field;
}

}  // namespace
}  // namespace roceconf::control
