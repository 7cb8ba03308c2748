#include "dissector/analysis/connection_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dissector/analysis/test/frames.h"
#include "dissector/names.h"

namespace roceconf::analysis {
namespace {

using namespace opcode;
using test::ack;
using test::kQpA;
using test::kQpB;
using test::request;

// Runs frames through the analysis and the statistics, the way `decode --connections` does.
struct Counted {
  test::Stream stream;
  ConnectionStats stats;
  const FrameAnalysis& send(const Packet& p, std::uint32_t wire = 100) {
    const FrameAnalysis& fa = stream.send(p);
    if (fa.rc) stats.add(p, wire, stream.time_ns, *fa.rc);
    return fa;
  }
};

TEST(LatencyHistogram, QuantilesWithinTheBucketWidth) {
  LatencyHistogram h;
  EXPECT_EQ(h.quantile(0.5), -1);
  std::vector<std::int64_t> v;
  for (std::int64_t i = 1; i <= 1000; ++i) v.push_back(i * 1237);  // 1.2 µs .. 1.2 ms
  for (std::int64_t x : v) h.add(x);
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_EQ(h.min(), 1237);
  EXPECT_EQ(h.max(), 1237000);
  const auto near = [](std::int64_t got, std::int64_t want) {
    return std::abs(static_cast<double>(got - want)) <= 0.035 * static_cast<double>(want);
  };
  EXPECT_TRUE(near(h.quantile(0.5), 500 * 1237)) << h.quantile(0.5);
  EXPECT_TRUE(near(h.quantile(0.99), 990 * 1237)) << h.quantile(0.99);
  EXPECT_EQ(h.quantile(1.0), 1237000);  // kept within [min, max]

  LatencyHistogram same;
  for (int i = 0; i < 10; ++i) same.add(850);
  EXPECT_EQ(same.quantile(0.5), 850);
  EXPECT_EQ(same.quantile(0.99), 850);
  LatencyHistogram small;  // below 16 ns every value has its bucket
  for (std::int64_t x : {3, 5, 9}) small.add(x);
  EXPECT_EQ(small.quantile(0.5), 5);
}

TEST(ConnectionStats, CountsADirectionsRequestsAndTheirResponses) {
  Counted c;
  c.send(request(kRcSendFirst, 0, 1024));
  c.send(request(kRcSendLast, 1, 100));
  c.send(request(kRcSendOnly, 2, 8));
  c.send(ack(2, 2));  // coalesced: all three
  c.send(request(kRcSendOnly, 3, 8));
  c.send(request(kRcSendOnly, 5, 8));  // PSN 4 lost: out of sequence
  c.send(ack(4, 2, syndrome::kNakPsnSeqError));
  c.send(request(kRcSendOnly, 4, 8));  // go-back-N resend of 4 ...
  c.send(request(kRcSendOnly, 5, 8));  // ... and 5
  c.send(ack(5, 5));
  c.send(request(kRcSendOnly, 6, 8));
  c.send(ack(6, 5, 0x20 | 0x0E));  // RNR NAK
  c.send(request(kRcSendOnly, 6, 8));
  c.send(ack(6, 6));
  c.send(request(kRcWriteOnly, 7, 16));
  c.send(ack(7, 7, 0x62));  // NAK remote access

  const std::vector<ConnectionSummary> conns = c.stats.connections();
  ASSERT_EQ(conns.size(), 1u);
  ASSERT_EQ(conns[0].directions.size(), 1u);
  const DirectionStats& d = conns[0].directions[0];
  EXPECT_EQ(d.requester, "192.0.2.1");
  EXPECT_EQ(d.responder, "192.0.2.2");
  EXPECT_EQ(d.responder_qpn, kQpB);
  ASSERT_TRUE(d.requester_qpn.has_value());
  EXPECT_EQ(*d.requester_qpn, kQpA);
  EXPECT_EQ(d.requests, 10u);
  EXPECT_EQ(d.responses, 6u);
  EXPECT_EQ(d.packets, 16u);
  EXPECT_EQ(d.bytes, 1600u);
  // Messages: SEND 0-1, 2, 3, 4 (its first copy never on the wire), 5, 6, WRITE 7; the resends
  // of 5 and 6 are not new messages.
  EXPECT_EQ(d.messages, 7u);
  EXPECT_EQ(d.retransmissions, 3u);
  EXPECT_EQ(d.out_of_sequence, 1u);
  EXPECT_EQ(d.duplicates, 0u);
  EXPECT_EQ(d.acks, 3u);
  EXPECT_EQ(d.naks[0], 1u);  // PSN sequence error
  EXPECT_EQ(d.naks[2], 1u);  // remote access
  EXPECT_EQ(d.nak_total(), 2u);
  EXPECT_EQ(d.rnr_naks, 1u);
  EXPECT_EQ(d.rnr_wait_ns, 1000);          // frames are 1 µs apart
  EXPECT_EQ(d.response_time.count(), 5u);  // the NAK at PSN 4 answers no request seen
  // Accepted data once each: 1024 + 100 + 8 (PSN 2) + 8 (3) + 8 (4) + 8 (5) + 8 (6); the
  // out-of-sequence first copy of 5, the RNR-refused first copy of 6 and the WRITE refused
  // for its R_Key deliver nothing.
  EXPECT_EQ(d.delivered, 1024u + 100 + 8 * 5);
  EXPECT_TRUE(d.gradable());
  EXPECT_EQ(c.stats.unattributed(), 0u);
}

TEST(ConnectionStats, PairsBothDirectionsIntoOneConnection) {
  Counted c;
  c.send(request(kRcSendOnly, 100, 8));                    // A -> B
  c.send(ack(100, 1));                                     // B answers
  c.send(request(kRcSendOnly, 500, 8, /*from_a=*/false));  // B -> A
  c.send(ack(500, 1, 0x1F, /*from_b=*/false));             // A answers
  c.send(request(kRcSendOnly, 101, 8));
  c.send(ack(101, 2));
  const std::vector<ConnectionSummary> conns = c.stats.connections();
  ASSERT_EQ(conns.size(), 1u);
  ASSERT_EQ(conns[0].directions.size(), 2u);
  EXPECT_EQ(conns[0].number, 1u);
  EXPECT_EQ(conns[0].packets(), 6u);
  EXPECT_EQ(conns[0].directions[0].requests, 2u);
  EXPECT_EQ(conns[0].directions[1].requests, 1u);
  EXPECT_EQ(conns[0].directions[1].requester, "192.0.2.2");
  EXPECT_EQ(conns[0].directions[1].responder_qpn, kQpA);
  EXPECT_EQ(conns[0].directions[1].requester_qpn, kQpB);
  EXPECT_GT(conns[0].goodput_bps(), 0.0);
}

TEST(ConnectionStats, ReadResponsesDeliverInOrderDataOnce) {
  Counted c;
  c.send(test::read_request(0, 2048));
  c.send(test::read_response(kRcReadResponseFirst, 0, 1024, 1));
  c.send(test::read_response(kRcReadResponseLast, 1, 1024, 1));
  c.send(test::read_response(kRcReadResponseLast, 1, 1024, 1));  // repeated: nothing new
  const std::vector<ConnectionSummary> conns = c.stats.connections();
  ASSERT_EQ(conns.size(), 1u);
  const DirectionStats& d = conns[0].directions[0];
  EXPECT_EQ(d.messages, 1u);
  EXPECT_EQ(d.read_responses, 3u);
  EXPECT_EQ(d.delivered, 2048u);
}

TEST(ConnectionStats, CaptureGapsMakeADirectionUngradable) {
  Counted c;
  c.send(request(kRcSendOnly, 10, 8));
  c.send(request(kRcSendOnly, 11, 8));
  c.send(request(kRcSendOnly, 14, 8));
  c.send(ack(14, 5));  // acknowledges 12 and 13, which the capture never saw
  const std::vector<ConnectionSummary> conns = c.stats.connections();
  ASSERT_EQ(conns.size(), 1u);
  EXPECT_EQ(conns[0].directions[0].not_captured, 2u);
  EXPECT_FALSE(conns[0].gradable());
}

}  // namespace
}  // namespace roceconf::analysis
