// Real captures read through PcapReader and decoded: every value below was read from the same
// frames with tshark 4.0 (`tshark -r FILE -T json`).
#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "capture/pcap_reader.h"
#include "dissector/packet.h"

namespace roceconf {
namespace {

struct Decoded {
  std::vector<std::vector<std::uint8_t>> bytes;  // owns what `packets` view
  std::vector<Packet> packets;
  std::vector<std::uint32_t> lengths;
};

// Loads a capture from the shared folder; empty when the folder is absent (the caller skips).
std::optional<Decoded> load(const std::string& name, LinkType link) {
  const std::filesystem::path path = std::filesystem::path(ROCECONF_SHARED_CAPTURES) / name;
  if (!std::filesystem::exists(path)) return std::nullopt;
  auto reader = PcapReader::open(path.string());
  EXPECT_TRUE(reader.has_value()) << reader.error();
  if (!reader) return std::nullopt;
  EXPECT_EQ(reader->link_type(), link);
  Decoded d;
  d.bytes.reserve(64);  // views into these must stay put
  for (;;) {
    auto next = reader->next();
    EXPECT_TRUE(next.has_value()) << next.error();
    if (!next || !*next) break;
    d.bytes.emplace_back((*next)->data.begin(), (*next)->data.end());
    d.lengths.push_back((*next)->orig_length);
  }
  for (const auto& b : d.bytes) d.packets.push_back(decode(b, link));
  return d;
}

template <typename M>
const M* cm(const Packet& p) {
  if (!p.mad || !p.mad->cm) return nullptr;
  return std::get_if<M>(&*p.mad->cm);
}

struct Row {
  std::uint32_t length;
  std::uint8_t opcode;
  std::uint32_t dqpn;
  std::uint32_t psn;
  std::uint32_t icrc;  // as tshark shows it: the wire bytes read big-endian
};

// montybeatnik/rdma-roce-lab: Linux rxe between two VMs, RoCEv2 over IPv4.
TEST(CaptureFixture, RxeReadWriteCapture) {
  auto d = load("montybeatnik_roce_capture_read-write-ecn.pcap", LinkType::kEthernet);
  if (!d) GTEST_SKIP() << "shared capture folder " << ROCECONF_SHARED_CAPTURES << " is absent";
  const Row rows[] = {
      {322, 0x64, 0x000001, 65, 0xde7cc43b},       {322, 0x64, 0x000001, 55, 0x9fdf4ef8},
      {322, 0x64, 0x000001, 66, 0xc1f0caf8},       {94, 0x0A, 0x000011, 9209053, 0x961a4bd6},
      {62, 0x11, 0x000011, 9209053, 0xb30cc2c0},   {74, 0x0C, 0x000011, 9209054, 0xa0f6dbbd},
      {1086, 0x0D, 0x000011, 9209054, 0xf402690c}, {1082, 0x0E, 0x000011, 9209055, 0x87a081c9},
      {1082, 0x0E, 0x000011, 9209056, 0x623149b5}, {1086, 0x0F, 0x000011, 9209057, 0x6c70a250},
      {322, 0x64, 0x000001, 67, 0x61915a27},       {322, 0x64, 0x000001, 56, 0x26be786d},
  };
  ASSERT_EQ(d->packets.size(), std::size(rows));
  for (std::size_t i = 0; i < std::size(rows); ++i) {
    SCOPED_TRACE("frame " + std::to_string(i + 1));
    const Packet& p = d->packets[i];
    EXPECT_EQ(d->lengths[i], rows[i].length);
    EXPECT_EQ(p.framing, Framing::kRoceV2);
    ASSERT_TRUE(p.ipv4 && p.bth && p.icrc);
    EXPECT_EQ(p.bth->opcode, rows[i].opcode);
    EXPECT_EQ(p.bth->dqpn, rows[i].dqpn);
    EXPECT_EQ(p.bth->psn, rows[i].psn);
    EXPECT_EQ(p.bth->pkey, 0xFFFF);
    EXPECT_EQ(p.icrc->value, std::byteswap(rows[i].icrc));  // Icrc::value is little-endian
    EXPECT_TRUE(p.icrc->ok());
    EXPECT_FALSE(p.has(FindingCode::kBadIcrc));
  }
  const Packet& write = d->packets[3];
  ASSERT_TRUE(write.reth);
  EXPECT_EQ(write.reth->va, 0xaaab09dd5000u);
  EXPECT_EQ(write.reth->rkey, 0x2d5u);
  EXPECT_EQ(write.reth->dmalen, 18u);
  EXPECT_EQ(write.bth->padcount, 2);
  ASSERT_TRUE(d->packets[4].aeth);
  EXPECT_EQ(d->packets[4].aeth->syndrome, 31);
  EXPECT_EQ(d->packets[4].aeth->msn, 1u);
  ASSERT_TRUE(d->packets[5].reth);
  EXPECT_EQ(d->packets[5].reth->dmalen, 4096u);
  ASSERT_TRUE(d->packets[9].aeth);
  EXPECT_EQ(d->packets[9].aeth->msn, 2u);

  // CM: REQ, REP, RTU, then DREQ, DREP; one TID for the whole exchange.
  for (std::size_t i : {0, 1, 2, 10, 11}) {
    ASSERT_TRUE(d->packets[i].deth && d->packets[i].mad) << "frame " << i + 1;
    EXPECT_EQ(d->packets[i].deth->qkey, kGsiQkey);
    EXPECT_EQ(d->packets[i].mad->header.tid, 0x252b5cf34u);
  }
  const CmReq* req = cm<CmReq>(d->packets[0]);
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->local_comm_id, 0x34cfb552u);
  EXPECT_EQ(req->service_id, 0x1061d2fu);
  EXPECT_EQ(req->local_qpn, 0x11u);
  EXPECT_EQ(req->starting_psn, 0xe1a47du);
  EXPECT_EQ(req->path_mtu, 3);
  const CmRep* rep = cm<CmRep>(d->packets[1]);
  ASSERT_NE(rep, nullptr);
  EXPECT_EQ(rep->local_comm_id, 0xa980e2d3u);
  EXPECT_EQ(rep->remote_comm_id, 0x34cfb552u);
  EXPECT_EQ(rep->starting_psn, 0x8c84ddu);
  const CmRtu* rtu = cm<CmRtu>(d->packets[2]);
  ASSERT_NE(rtu, nullptr);
  EXPECT_EQ(rtu->remote_comm_id, 0xa980e2d3u);
  const CmDreq* dreq = cm<CmDreq>(d->packets[10]);
  ASSERT_NE(dreq, nullptr);
  EXPECT_EQ(dreq->local_comm_id, 0x34cfb552u);
  const CmDrep* drep = cm<CmDrep>(d->packets[11]);
  ASSERT_NE(drep, nullptr);
  EXPECT_EQ(drep->local_comm_id, 0xa980e2d3u);
  EXPECT_EQ(drep->remote_comm_id, 0x34cfb552u);
}

// srinivaskoritala/rdma-softroce-demo: native InfiniBand from an Endace DAG tap (ERF records).
TEST(CaptureFixture, ErfInfiniBandCapture) {
  auto d = load("srinivaskoritala_infiniband.pcap", LinkType::kErf);
  if (!d) GTEST_SKIP() << "shared capture folder " << ROCECONF_SHARED_CAPTURES << " is absent";
  ASSERT_EQ(d->packets.size(), 43u);
  std::size_t with_bth = 0;
  for (std::size_t i = 0; i < d->packets.size(); ++i) {
    const Packet& p = d->packets[i];
    if (!p.bth) continue;
    ++with_bth;
    SCOPED_TRACE("frame " + std::to_string(i + 1));
    EXPECT_EQ(p.framing, Framing::kInfiniBand);
    ASSERT_TRUE(p.lrh && p.icrc && p.vcrc);
    EXPECT_TRUE(p.icrc->ok());
    EXPECT_TRUE(p.vcrc->ok());
  }
  EXPECT_EQ(with_bth, 43u);

  // Frame 1: SMP on QP0; frame 11: the RC ACK for the first connection.
  EXPECT_EQ(d->packets[0].icrc->value, std::byteswap(0x1065ef88u));  // tshark: wire bytes, BE
  EXPECT_EQ(d->packets[0].vcrc->value, std::byteswap(std::uint16_t{0x0037}));
  const Packet& ack = d->packets[10];
  EXPECT_EQ(ack.bth->opcode, opcode::kRcAck);
  EXPECT_EQ(ack.bth->dqpn, 0x870408u);
  EXPECT_EQ(ack.bth->psn, 13896277u);
  EXPECT_EQ(ack.lrh->slid, 1);
  EXPECT_EQ(ack.lrh->dlid, 4);
  ASSERT_TRUE(ack.aeth);
  EXPECT_EQ(ack.aeth->syndrome, 31);
  EXPECT_EQ(ack.aeth->msn, 1u);
  // The ACKs of the ping train count up their MSN.
  const std::pair<std::size_t, std::uint32_t> acks[] = {{15, 2}, {17, 3}, {19, 4}, {21, 5},
                                                        {23, 6}, {31, 1}, {38, 1}, {40, 2}};
  for (const auto& [frame, msn] : acks) {
    const Packet& p = d->packets[frame - 1];
    EXPECT_EQ(p.bth->opcode, opcode::kRcAck) << "frame " << frame;
    ASSERT_TRUE(p.aeth) << "frame " << frame;
    EXPECT_EQ(p.aeth->msn, msn) << "frame " << frame;
  }

  // Frames 7-9: CM REQ, REP, RTU for IPoIB connected mode (LID 4 <-> LID 1).
  const CmReq* req = cm<CmReq>(d->packets[6]);
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(d->packets[6].mad->header.tid, 0x10278648e9u);
  EXPECT_EQ(req->local_comm_id, 0xe9488627u);
  EXPECT_EQ(req->service_id, 0x1000000000000404u);
  EXPECT_EQ(req->local_qpn, 0x870408u);
  EXPECT_EQ(req->starting_psn, 0u);
  EXPECT_EQ(req->path_mtu, 4);
  const CmRep* rep = cm<CmRep>(d->packets[7]);
  ASSERT_NE(rep, nullptr);
  EXPECT_EQ(rep->local_comm_id, 0xf9024539u);
  EXPECT_EQ(rep->remote_comm_id, 0xe9488627u);
  EXPECT_EQ(rep->local_qpn, 0xfc0407u);
  EXPECT_EQ(rep->starting_psn, 0xd40a55u);
  const CmRtu* rtu = cm<CmRtu>(d->packets[8]);
  ASSERT_NE(rtu, nullptr);
  EXPECT_EQ(rtu->local_comm_id, 0xe9488627u);
  EXPECT_EQ(rtu->remote_comm_id, 0xf9024539u);
}

}  // namespace
}  // namespace roceconf
