// The MAD and CM field tables: the table-driven visitors reproduce the hand-written ones for
// every message type, each field is declared once, and every settable CM field of every
// message round-trips through encode and decode when set by name.
#include "dissector/mad/cm_fields.h"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dissector/layer.h"
#include "dissector/mad/mad.h"
#include "dissector/mad/mad_fields.h"
#include "dissector/mad/rdma_cm.h"
#include "dissector/packet.h"
#include "dissector/test/cm_legacy_visit.h"

namespace roceconf {
namespace {

using Buffer = std::array<std::uint8_t, kCmDataSize>;

std::string text(const FieldValue& value) {
  if (const auto* u = std::get_if<std::uint64_t>(&value)) return fmt::format("{:#x}", *u);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string_view>(&value)) return fmt::format("'{}'", *s);
  const auto* a = std::get_if<Address>(&value);
  const Bytes bytes = a ? a->bytes : std::get<Bytes>(value);
  return fmt::format("{}{:02x}", a ? "addr:" : "bytes:", fmt::join(bytes, ""));
}

// Records fields in emission order.
class Recorder : public FieldSink {
 public:
  void field(std::string_view layer, std::string_view name, const FieldValue& value) override {
    fields.emplace_back(fmt::format("{}.{}", layer, name), text(value));
  }
  std::vector<std::pair<std::string, std::string>> fields;
};

constexpr std::array<std::uint16_t, 12> kAttrs = {
    cm_attr::kClassPortInfo, cm_attr::kReq,     cm_attr::kMra,  cm_attr::kRej,
    cm_attr::kRep,           cm_attr::kRtu,     cm_attr::kDreq, cm_attr::kDrep,
    cm_attr::kSidrReq,       cm_attr::kSidrRep, cm_attr::kLap,  cm_attr::kApr};

void fill_random(Buffer& b, std::mt19937& rng) {
  for (auto& byte : b) byte = static_cast<std::uint8_t>(rng());
}

// An rdma_cm REQ: service ID in the TCP port space, header for `ip_version` in private data.
void make_rdma_cm_req(Buffer& b, std::uint8_t ip_version, std::mt19937& rng) {
  fill_random(b, rng);
  be::store64(b.data() + 8, rdma_cm_service_id(rdma_cm_ps::kTcp, 4791));
  RdmaCmHeader h;
  h.ip_version = ip_version;
  h.src_port = 0xBEEF;
  for (auto& x : h.src_ip) x = static_cast<std::uint8_t>(rng());
  for (auto& x : h.dst_ip) x = static_cast<std::uint8_t>(rng());
  encode_rdma_cm_header(h, std::span(b).subspan<kReqPrivateDataOffset, kRdmaCmHeaderSize>());
}

template <class F>
std::vector<std::pair<std::string, std::string>> record(F visit) {
  Recorder r;
  visit(r);
  return r.fields;
}

TEST(CmFieldTable, VisitEmitsWhatTheHandWrittenVisitorDidForEveryMessage) {
  std::mt19937 rng(13);
  std::set<std::string> seen;
  for (const std::uint16_t attr : kAttrs) {
    for (int round = 0; round < 40; ++round) {
      Buffer wire;
      if (attr == cm_attr::kReq && round % 4 == 1)
        make_rdma_cm_req(wire, round % 8 == 1 ? 4 : 6, rng);
      else
        fill_random(wire, rng);
      const auto msg = decode_cm(attr, wire);
      ASSERT_TRUE(msg.has_value());
      const auto want = record([&](FieldSink& s) { legacy::visit_cm_fields(*msg, s); });
      const auto got = record([&](FieldSink& s) { visit_cm_fields(*msg, s); });
      ASSERT_EQ(got, want) << cm_attr_name(attr) << " round " << round;
      for (const auto& [key, value] : got) seen.insert(key);
    }
  }
  // Every field of the table is emitted by some message (none is dead).
  for (const FieldDef& f : cm_field_table())
    EXPECT_TRUE(seen.contains(fmt::format("cm.{}", f.name))) << f.name;
}

TEST(MadFieldTable, VisitEmitsWhatTheHandWrittenVisitorDid) {
  std::mt19937 rng(7);
  for (const std::uint16_t attr : kAttrs) {
    std::array<std::uint8_t, kMadSize> raw;
    for (auto& byte : raw) byte = static_cast<std::uint8_t>(rng());
    raw[1] = kMgmtClassCm;
    be::store16(raw.data() + 16, attr);
    Findings findings;
    const auto mad = decode_mad(raw, 0, findings);
    ASSERT_TRUE(mad && mad->cm);
    const MadHeader& h = mad->header;
    std::vector<std::pair<std::string, std::string>> want = {
        {"mad.base_version", fmt::format("{:#x}", h.base_version)},
        {"mad.mgmt_class", fmt::format("{:#x}", h.mgmt_class)},
        {"mad.class_version", fmt::format("{:#x}", h.class_version)},
        {"mad.method", fmt::format("{:#x}", h.method)},
        {"mad.status", fmt::format("{:#x}", h.status)},
        {"mad.class_specific", fmt::format("{:#x}", h.class_specific)},
        {"mad.tid", fmt::format("{:#x}", h.tid)},
        {"mad.attr_id", fmt::format("{:#x}", h.attr_id)},
        {"mad.attr_mod", fmt::format("{:#x}", h.attr_mod)},
    };
    const auto cm = record([&](FieldSink& s) { legacy::visit_cm_fields(*mad->cm, s); });
    want.insert(want.end(), cm.begin(), cm.end());
    EXPECT_EQ(record([&](FieldSink& s) { visit_mad_fields(*mad, s); }), want);
  }
}

TEST(MadFieldTable, DeclaresTheHeader) {
  const auto t = mad_field_table();
  ASSERT_EQ(t.size(), 9u);
  for (const FieldDef& f : t) {
    EXPECT_EQ(f.layer, layer_name(Layer::kMad));
    EXPECT_FALSE(f.label.empty());
    EXPECT_TRUE(f.set != nullptr) << f.name;
  }
  EXPECT_EQ(t[6].name, "tid");
  EXPECT_EQ(t[6].bits, 64);
  EXPECT_TRUE(t[6].hex);
  EXPECT_EQ(t[3].value_name(mad_method::kGetResp), "GetResp");
  EXPECT_EQ(t[7].value_of("rep"), cm_attr::kRep);

  Packet p;
  EXPECT_FALSE(t[6].get(p, 0).has_value());
  EXPECT_FALSE(t[6].set(p, 1));
  p.mad.emplace();
  EXPECT_TRUE(t[6].set(p, 0x1122334455667788));
  EXPECT_EQ(p.mad->header.tid, 0x1122334455667788u);
  EXPECT_EQ(std::get<std::uint64_t>(*t[6].get(p, 0)), 0x1122334455667788u);
}

TEST(CmFieldTable, EachFieldOnceWithItsDeclaration) {
  std::set<std::string_view> names;
  for (const FieldDef& f : cm_field_table()) {
    EXPECT_TRUE(names.insert(f.name).second) << "declared twice: " << f.name;
    EXPECT_EQ(f.layer, layer_name(Layer::kCm));
    EXPECT_FALSE(f.label.empty()) << f.name;
    ASSERT_NE(f.get, nullptr) << f.name;
    switch (f.type) {
      case FieldType::kName:
        EXPECT_FALSE(f.settable()) << f.name;
        break;
      case FieldType::kBool:
        EXPECT_EQ(f.bits, 1) << f.name;
        EXPECT_NE(f.set, nullptr) << f.name;
        break;
      case FieldType::kUnsigned:
        // Settable numbers have their wire width; rdma_cm.* are read-only.
        EXPECT_EQ(f.set != nullptr, !f.name.starts_with("rdma_cm.")) << f.name;
        EXPECT_GT(f.bits, 0) << f.name;
        EXPECT_LE(f.bits, 64) << f.name;
        break;
      default:
        EXPECT_EQ(f.set, nullptr) << f.name;
        EXPECT_EQ(f.set_bytes != nullptr, !f.name.starts_with("rdma_cm.")) << f.name;
        EXPECT_EQ(f.bits, 0) << f.name;
    }
  }
  const auto field = [](std::string_view key) {
    const FieldDef* f = find_cm_field(key);
    EXPECT_NE(f, nullptr) << key;
    return f ? *f : FieldDef{};
  };
  EXPECT_EQ(field("local_comm_id").label, "Local Communication ID");
  for (const char* id : {"local_comm_id", "service_id", "local_ca_guid", "local_qpn", "pkey",
                         "starting_psn", "local_qkey", "primary_local_gid", "redirect_qkey"})
    EXPECT_TRUE(field(id).hex) << id;
  EXPECT_FALSE(field("retry_count").hex);
  EXPECT_EQ(field("local_qpn").bits, 24);
  EXPECT_EQ(field("capability_mask2").bits, 27);
  EXPECT_EQ(field("primary_remote_gid").type, FieldType::kIpv6);
  EXPECT_EQ(field("private_data").type, FieldType::kBytes);
  EXPECT_EQ(field("reason_name").type, FieldType::kName);
  EXPECT_EQ(field("reason").value_name(28), "Consumer-defined");
  EXPECT_EQ(field("reason").value_of("timeout"), 4u);
  EXPECT_EQ(field("transport_type").value_of("UC"), cm_transport::kUc);
  EXPECT_EQ(field("extended_transport_type").value_name(1), "XRC");
  EXPECT_EQ(field("message_mraed").value_name(1), "REP");
  EXPECT_EQ(field("sidr_status").value_name(3), "No QP available");
  EXPECT_EQ(field("ap_status").value_name(5), "Path is current");
  // Aliases the case language has always accepted for REQ fields.
  EXPECT_EQ(find_cm_field("transport"), find_cm_field("cm.transport_type"));
  EXPECT_EQ(find_cm_field("partition_key"), find_cm_field("pkey"));
  EXPECT_EQ(find_cm_field("local_ack_timeout"), find_cm_field("primary_local_ack_timeout"));
  EXPECT_EQ(find_cm_field("bogus"), nullptr);
}

TEST(CmFieldTable, OneFieldServesEveryMessageThatHasIt) {
  const FieldDef* qpn = find_cm_field("local_qpn");
  ASSERT_NE(qpn, nullptr);
  Packet p;
  EXPECT_FALSE(qpn->get(p, 0).has_value());
  EXPECT_FALSE(qpn->set(p, 5));
  p.mad.emplace();
  EXPECT_FALSE(qpn->get(p, 0).has_value());  // a MAD of no decoded CM message

  p.mad->cm = CmReq{.local_qpn = 0x123456};
  EXPECT_EQ(std::get<std::uint64_t>(*qpn->get(p, 0)), 0x123456u);
  p.mad->cm = CmRep{.local_qpn = 0xABCDEF};
  EXPECT_EQ(std::get<std::uint64_t>(*qpn->get(p, 0)), 0xABCDEFu);
  EXPECT_TRUE(qpn->set(p, 0x42));
  EXPECT_EQ(std::get<CmRep>(*p.mad->cm).local_qpn, 0x42u);
  p.mad->cm = CmMra{};
  EXPECT_FALSE(qpn->get(p, 0).has_value());
  EXPECT_FALSE(qpn->set(p, 1));

  const std::array<std::uint8_t, 3> data = {1, 2, 3};
  const FieldDef* pd = find_cm_field("private_data");
  EXPECT_TRUE(pd->set_bytes(p, data));
  EXPECT_EQ(std::get<CmMra>(*p.mad->cm).private_data.data(), data.data());
}

// A value for `f` that differs from `current` and fits the field.
std::uint64_t other_value(const FieldDef& f, std::uint64_t current) {
  std::uint64_t v = 0xA5C396E15A3C691Eu & f.max();
  if (v == current) v ^= 1;
  return v;
}

std::map<std::string_view, std::string> settable_values(const CmMessage& msg) {
  std::map<std::string_view, std::string> out;
  for (const FieldDef* f : cm_message_fields(msg))
    if (f->settable()) out[f->name] = text(*get_cm_field(msg, *f));
  return out;
}

TEST(CmFieldTable, EverySettableFieldOfEveryMessageRoundTrips) {
  std::mt19937 rng(42);
  std::size_t checked = 0;
  for (const std::uint16_t attr : kAttrs) {
    Buffer wire;
    fill_random(wire, rng);
    const CmMessage original = *decode_cm(attr, wire);
    const std::string_view name = cm_message_name(original);
    for (const FieldDef* f : cm_message_fields(original)) {
      if (!f->settable()) continue;
      CmMessage msg = original;
      const FieldValue before = *get_cm_field(msg, *f);
      std::vector<std::uint8_t> bytes;
      std::string want;
      if (f->set != nullptr) {
        const std::uint64_t cur = std::holds_alternative<bool>(before)
                                      ? std::uint64_t{std::get<bool>(before)}
                                      : std::get<std::uint64_t>(before);
        const std::uint64_t v = f->type == FieldType::kBool ? !cur : other_value(*f, cur);
        ASSERT_TRUE(set_cm_field(msg, f->name, v)) << name << " " << f->name;
        want = f->type == FieldType::kBool ? text(FieldValue{v != 0}) : text(FieldValue{v});
      } else {
        const Bytes old = std::holds_alternative<Address>(before) ? std::get<Address>(before).bytes
                                                                  : std::get<Bytes>(before);
        for (std::size_t i = 0; i < old.size(); ++i)
          bytes.push_back(static_cast<std::uint8_t>(old[i] ^ (0x5A + i)));
        ASSERT_TRUE(set_cm_field(msg, f->name, Bytes(bytes))) << name << " " << f->name;
        want = text(f->type == FieldType::kBytes ? FieldValue{Bytes(bytes)}
                                                 : FieldValue{Address{Bytes(bytes)}});
      }
      ASSERT_EQ(text(*get_cm_field(msg, *f)), want) << name << " " << f->name;

      Buffer out;
      encode_cm(msg, out);
      const CmMessage decoded = *decode_cm(attr, out);
      EXPECT_EQ(text(*get_cm_field(decoded, *f)), want) << name << " " << f->name;
      // Nothing else moved: the field's bits are its own.
      auto expect = settable_values(original);
      expect[f->name] = want;
      EXPECT_EQ(settable_values(decoded), expect) << name << " " << f->name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100u);  // the loop really ran over the messages
}

// A field's declared width is its exact footprint on the wire: set to all ones in an otherwise
// zero message, it sets `bits` bits of the encoded data area (8 per byte of a byte string).
TEST(CmFieldTable, DeclaredWidthIsTheWireFootprint) {
  const Buffer zero{};
  for (const std::uint16_t attr : kAttrs) {
    const CmMessage original = *decode_cm(attr, zero);
    for (const FieldDef* f : cm_message_fields(original)) {
      if (!f->settable()) continue;
      CmMessage msg = original;
      std::size_t want = f->bits;
      const std::vector<std::uint8_t> ones(kCmDataSize, 0xFF);
      if (f->set != nullptr) {
        ASSERT_TRUE(set_cm_field(msg, f->name, f->max()));
      } else {
        const FieldValue v = *get_cm_field(msg, *f);
        const std::size_t size = std::holds_alternative<Address>(v)
                                     ? std::get<Address>(v).bytes.size()
                                     : std::get<Bytes>(v).size();
        ASSERT_TRUE(set_cm_field(msg, f->name, Bytes(ones).first(size)));
        want = size * 8;
      }
      Buffer out;
      encode_cm(msg, out);
      std::size_t set_bits = 0;
      for (const std::uint8_t byte : out) set_bits += static_cast<std::size_t>(std::popcount(byte));
      EXPECT_EQ(set_bits, want) << cm_attr_name(attr) << " " << f->name;
    }
  }
}

TEST(CmFieldTable, SetErrorsNameTheMessageAndTheProblem) {
  CmMessage rep = CmRep{};
  auto r = set_cm_field(rep, "path_mtu", 3);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "REP has no field 'path_mtu' (REQ has)");
  r = set_cm_field(rep, "primary_sl", 3);
  EXPECT_EQ(r.error(), "REP has no field 'primary_sl' (REQ has)");
  CmMessage rtu = CmRtu{};
  r = set_cm_field(rtu, "remote_qpn", 3);
  EXPECT_EQ(r.error(), "RTU has no field 'remote_qpn' (DREQ and LAP have)");
  r = set_cm_field(rtu, "bogus", 1);
  EXPECT_EQ(r.error(), "RTU has no field 'bogus' (no CM message has)");

  CmMessage rej = CmRej{};
  r = set_cm_field(rej, "reason_name", 1);
  EXPECT_EQ(r.error(), "cm.reason_name is derived from other fields and cannot be set");
  r = set_cm_field(rej, "reason", 0x10000);
  EXPECT_EQ(r.error(), "cm.reason: 65536 does not fit in 16 bits (at most 0xffff)");
  r = set_cm_field(rej, "private_data", 1);
  EXPECT_EQ(r.error(), "cm.private_data takes bytes, not a number");
  const std::vector<std::uint8_t> big(kRejPrivateDataSize + 1, 0xAB);
  r = set_cm_field(rej, "private_data", Bytes(big));
  EXPECT_EQ(r.error(), "cm.private_data: 149 bytes do not fit in REJ's field");
  EXPECT_TRUE(set_cm_field(rej, "private_data", Bytes(big).first(kRejPrivateDataSize)));
  r = set_cm_field(rej, "reason", Bytes(big));
  EXPECT_EQ(r.error(), "cm.reason takes a number, not bytes");

  CmMessage req = CmReq{};
  r = set_cm_field(req, "primary_local_gid", Bytes(big).first(4));
  EXPECT_EQ(r.error(), "cm.primary_local_gid: a GID is 16 bytes, not 4");
  r = set_cm_field(req, "rdma_cm.port", 1);
  EXPECT_EQ(r.error(), "cm.rdma_cm.port is derived from other fields and cannot be set");
  ASSERT_TRUE(set_cm_field(req, "transport", 2));
  ASSERT_TRUE(set_cm_field(req, "cm.srq", 1));
  EXPECT_EQ(std::get<CmReq>(req).transport_type, 2);
  EXPECT_TRUE(std::get<CmReq>(req).srq);
  r = set_cm_field(req, "srq", 2);
  EXPECT_EQ(r.error(), "cm.srq: 2 does not fit in 1 bit (at most 0x1)");
}

}  // namespace
}  // namespace roceconf
