// The plugin's Wireshark-free parts: the evidence comment parser and the field catalogue.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>

#include "dissector/analysis/stream_analyzer.h"
#include "dissector/evidence_comment.h"
#include "dissector/testing/traffic.h"
#include "dissector/wireshark/field_catalogue.h"
#include "dissector/wireshark/frame_report.h"
#include "dissector/wireshark/result_store.h"

namespace roceconf::wireshark {
namespace {

TEST(EvidenceComment, ParsesEveryKeyAndTheNote) {
  const auto c = parse_evidence_comment(
      "roceconf case=psn/gap-naks-once step=cases/psn/gap-naks-once.rcase:9 verdict=fail "
      "event=received failed=yes note=RC ACK psn=0x000011 msn=2 note=x");
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->failed_here);
  EXPECT_EQ(c->case_id, "psn/gap-naks-once");
  EXPECT_EQ(c->step, "cases/psn/gap-naks-once.rcase:9");
  EXPECT_EQ(c->verdict, "fail");
  EXPECT_EQ(c->event, "received");
  EXPECT_EQ(c->note, "RC ACK psn=0x000011 msn=2 note=x");
}

TEST(EvidenceComment, IgnoresUnknownKeysAndOtherComments) {
  const auto c = parse_evidence_comment("roceconf future=1 case=a verdict=pass junk event=sent");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->case_id, "a");
  EXPECT_EQ(c->verdict, "pass");
  EXPECT_EQ(c->event, "sent");
  EXPECT_EQ(c->step, "");
  EXPECT_EQ(c->note, "");
  EXPECT_FALSE(parse_evidence_comment("captured on eth0"));
  EXPECT_FALSE(parse_evidence_comment("roceconf"));
  EXPECT_TRUE(parse_evidence_comment("roceconf note=only a note"));
  EXPECT_EQ(parse_evidence_comment("roceconf note=only a note")->note, "only a note");
}

// The abbrevs plugin.cc declares itself (its ICRC and VCRC fields).
const std::vector<std::string> kOwn = {"roceconf.icrc.value", "roceconf.icrc.expected",
                                       "roceconf.vcrc.value", "roceconf.vcrc.expected"};

TEST(FieldCatalogue, OneFieldPerTableFieldWithItsLabelWidthAndBase) {
  const FieldCatalogue c = FieldCatalogue::build("roceconf", kOwn);
  std::map<std::string, const CatalogueField*> by_abbrev;
  for (const auto& f : c.fields())
    EXPECT_TRUE(by_abbrev.emplace(f.abbrev, &f).second) << "duplicate " << f.abbrev;
  for (const FieldDef& d : field_table()) {
    const std::string abbrev = "roceconf." + d.key();
    const bool own = std::ranges::find(kOwn, abbrev) != kOwn.end();
    ASSERT_EQ(by_abbrev.contains(abbrev), !own) << abbrev;
    if (own) continue;
    const CatalogueField& f = *by_abbrev[abbrev];
    EXPECT_EQ(f.label, d.label) << abbrev;
    EXPECT_EQ(f.hex, d.hex) << abbrev;
    EXPECT_EQ(f.kind, FieldCatalogue::kind_of(d.type)) << abbrev;
    EXPECT_EQ(f.values.size(), d.values.size()) << abbrev;
    EXPECT_EQ(c.find(d.layer, d.name, f.kind), &f - c.fields().data()) << abbrev;
  }
  const auto& sol = *by_abbrev.at("roceconf.bth.solicited");
  EXPECT_EQ(sol.label, "Solicited Event");
  EXPECT_EQ(sol.kind, FieldKind::kBool);
  EXPECT_NE(sol.blurb.find("se"), std::string::npos);
  const auto& opcode = *by_abbrev.at("roceconf.bth.opcode");
  EXPECT_EQ(opcode.width, 8);
  EXPECT_TRUE(opcode.hex);
  EXPECT_FALSE(opcode.values.empty());
  EXPECT_EQ(by_abbrev.at("roceconf.bth.pkey")->width, 16);
  EXPECT_EQ(by_abbrev.at("roceconf.bth.psn")->width,
            24);  // 24 bits, shown 0x000011 as in Wireshark's IB tree
  EXPECT_EQ(by_abbrev.at("roceconf.reth.va")->width, 64);
  EXPECT_EQ(by_abbrev.at("roceconf.aeth.credits")->width, 64);  // derived: no wire width
  EXPECT_FALSE(by_abbrev.at("roceconf.reth.dmalen")->hex);
  EXPECT_EQ(by_abbrev.at("roceconf.grh.sgid")->kind, FieldKind::kIpv6);
  EXPECT_EQ(by_abbrev.at("roceconf.eth.src")->kind, FieldKind::kEther);
  EXPECT_EQ(by_abbrev.at("roceconf.aeth.syndrome_name")->kind, FieldKind::kString);
  // MAD and CM fields, whether from the table or (until it has them) from the codec.
  for (const char* want : {"roceconf.mad.tid", "roceconf.cm.reason_name",
                           "roceconf.cm.service_timeout", "roceconf.cm.ap_status_name",
                           "roceconf.cm.sidr_status_name", "roceconf.cm.resp_time_value"})
    EXPECT_TRUE(by_abbrev.contains(want)) << want;
  EXPECT_GE(c.find("bth", "psn", FieldKind::kUnsigned), 0);
  EXPECT_EQ(c.find("bth", "psn", FieldKind::kString), -1);
  EXPECT_GE(c.find("icrc", "ok", FieldKind::kBool), 0);
  EXPECT_EQ(c.find("icrc", "value", FieldKind::kUnsigned), -1);  // the plugin's own
  // An IPv4 address in an IPv6 field (rdma_cm's) is shown mapped; a MAC is not an address there.
  EXPECT_EQ(c.find("grh", "sgid", FieldKind::kIpv4), c.find("grh", "sgid", FieldKind::kIpv6));
  EXPECT_EQ(c.find("grh", "sgid", FieldKind::kEther), -1);
}

TEST(FieldCatalogue, WidthsFollowTheTableBits) {
  EXPECT_EQ(FieldCatalogue::width_of(1), 8);
  EXPECT_EQ(FieldCatalogue::width_of(8), 8);
  EXPECT_EQ(FieldCatalogue::width_of(9), 16);
  EXPECT_EQ(FieldCatalogue::width_of(16), 16);
  EXPECT_EQ(FieldCatalogue::width_of(20), 24);  // IPv6 flow label
  EXPECT_EQ(FieldCatalogue::width_of(24), 24);  // QPN, PSN
  EXPECT_EQ(FieldCatalogue::width_of(48), 48);
  EXPECT_EQ(FieldCatalogue::width_of(32), 32);
  EXPECT_EQ(FieldCatalogue::width_of(64), 64);
  EXPECT_EQ(FieldCatalogue::width_of(0), 64);
}

// The plugin's whole C++ path (decode, analysis, report) over generated and mutated traffic,
// two passes as Wireshark makes them. This is what runs under the sanitizers in CI, where
// tshark cannot load the instrumented plugin.
TEST(FrameReport, WellFormedOverGeneratedAndMutatedTraffic) {
  const FieldCatalogue catalogue = FieldCatalogue::build("roceconf", kOwn);
  TrafficGenerator gen(11);
  std::mt19937_64 rng(5);
  std::vector<std::vector<std::uint8_t>> frames;
  std::vector<LinkType> links;
  for (int i = 0; i < 4000; ++i) {
    LinkType link{};
    auto f = gen.next(&link);
    if (i % 3 == 2) f = mutate(f, link, rng);
    frames.push_back(std::move(f));
    links.push_back(link);
  }
  analysis::AnalyzerOptions options;
  options.keep_results = false;  // as the plugin runs it, with a ResultStore
  analysis::StreamAnalyzer analyzer(options);
  analysis::StreamAnalyzer reference;  // keeps its own results: what the store must give back
  ResultStore store;
  analysis::FrameAnalysis stored;
  Packet p;
  FrameReport report;
  std::string info;
  std::size_t flagged = 0, with_items = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const std::uint64_t n = i + 1;
      decode_into(p, Bytes(frames[i].data(), frames[i].size()), links[i]);
      if (!p.bth) continue;
      ReportInput in;
      in.packet = &p;
      in.frame_length = static_cast<std::uint32_t>(frames[i].size());
      in.analysis =
          pass == 0 ? &analyzer.add(n, static_cast<std::int64_t>(n) * 1000, p) : analyzer.result(n);
      in.cm = &analyzer.cm();
      in.catalogue = &catalogue;
      in.codec_fields = i % 2 == 0;
      if (i % 7 == 0)
        in.comment = parse_evidence_comment("roceconf case=a/b step=x:1 verdict=fail event=sent");
      build_report(in, report);
      build_info(in, info);
      if (!info.empty()) ++flagged;
      int depth = 0;
      for (const ReportItem& item : report.items) {
        ASSERT_LT(item.text, report.texts.size());
        ASSERT_LE(item.offset, in.frame_length);
        if (item.kind == ItemKind::kOpen) ++depth;
        if (item.kind == ItemKind::kClose) --depth;
        ASSERT_GE(depth, 0);
        if (item.kind == ItemKind::kCatalogue) {
          ASSERT_LT(item.code, catalogue.fields().size());
        } else if (item.kind < ItemKind::kCatalogue) {
          ASSERT_LT(item.code, static_cast<int>(Hf::kCount));
        }
      }
      ASSERT_EQ(depth, 0) << "frame " << n;
      if (!report.items.empty()) ++with_items;
    }
  }
  EXPECT_GT(flagged, 100u);
  EXPECT_GT(with_items, 4000u);
}

}  // namespace
}  // namespace roceconf::wireshark
