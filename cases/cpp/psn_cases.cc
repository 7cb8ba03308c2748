// PSN cases that need computed values (random starting PSNs), and header/ICRC cases that need
// bytes no script field reaches: a payload byte corrupted after the ICRC was computed, a bad
// IPv4 header checksum, a UDP destination port other than 4791.
#include <fmt/format.h>

#include <functional>
#include <string>
#include <vector>

#include "cases/builtin.h"
#include "cases/cpp/case_def.h"
#include "dissector/analysis/psn.h"
#include "dissector/icrc.h"

namespace roceconf::cases {

namespace {

using engine::CaseContext;
using engine::Connection;

constexpr const char* kSource = "cases/cpp/psn_cases.cc";

// Where the headers of an Ethernet + IPv4 frame the tester built start: behind its 802.1Q tag
// when it tags (a raw profile's vlan). SEND_ONLY: the payload follows the BTH.
struct At {
  std::size_t ip, udp, bth, payload;
};
At offsets(const std::vector<std::uint8_t>& f) {
  std::size_t ip = 14;
  while (f.size() >= ip + 4 &&
         ((f[ip - 2] == 0x81 && f[ip - 1] == 0x00) || (f[ip - 2] == 0x88 && f[ip - 1] == 0xA8)))
    ip += 4;
  return {ip, ip + 20, ip + 28, ip + 40};
}

void step(CaseContext& ctx, std::string_view what) {
  ctx.set_step(fmt::format("{}: {}", kSource, what));
}

// A request frame on `c` as `send` would build it, for the case to edit.
std::vector<std::uint8_t> request_frame(CaseContext& ctx, const Connection& c, std::string_view op,
                                        const engine::Assignments& a) {
  auto code = engine::request_opcode(op);
  if (!code) ctx.error(code.error());
  auto frame = engine::build_request(ctx.addresses(), c, *code, a);
  if (!frame) ctx.error(frame.error());
  return std::move(frame->bytes);
}

// The same SEND_ONLY PSN 0, intact, must then be ACKed: the dropped frame changed nothing.
void expect_intact_accepted(CaseContext& ctx, Connection& c) {
  step(ctx, "the same SEND_ONLY psn=0, intact, is ACKed");
  ctx.send(c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "64"}});
  ctx.expect(&c, {"ACK", {{"psn", "0"}, {"syndrome", "ack"}}}, ctx.timing().expect_window());
}

// A target QP whose expected PSN is chosen at random just below the wrap (where an implementation
// that keeps PSNs in a wider integer fails) must continue exactly from it. With CM the target
// chooses the PSN the tester sends from, so the QP is made through the control API.
void random_start(CaseContext& ctx) {
  ctx.require("control");
  const std::uint32_t start = psn::add(psn::kMask, -static_cast<std::int64_t>(ctx.random()() % 4));
  engine::Connection& c = ctx.new_connection("c");
  step(ctx, fmt::format("open c with expected PSN {:#08x}", start));
  ctx.open(c, {{"psn", std::to_string(start)}});
  for (int i = 0; i < 8; ++i) {
    step(ctx, fmt::format("SEND {} of 8 across the wrap", i + 1));
    ctx.send(c, "SEND_ONLY", {{"ackreq", "1"}, {"len", "16"}});
    ctx.expect(&c, {"ACK", {{"psn", std::to_string(i)}, {"syndrome", "ack"}}},
               ctx.timing().expect_window(), false);
  }
}

// icrc/payload-corruption-dropped: one payload byte flipped after the ICRC was computed, as a
// bit error on the wire would. The ICRC covers the payload, so the packet must be dropped.
void payload_corruption(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "connect c");
  ctx.connect(c, {});
  step(ctx, "SEND_ONLY psn=0 len=64 with payload byte 10 flipped after the ICRC");
  auto f = request_frame(ctx, c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "64"}});
  f[offsets(f).payload + 10] ^= 0x01;
  ctx.send_frame(std::move(f), "c SEND_ONLY psn=0 ackreq=1 len=64, payload byte 10 corrupted");
  step(ctx, "expect nothing from c");
  ctx.expect_nothing(&c, ctx.timing().silence_window());
  expect_intact_accepted(ctx, c);
}

// header/bad-ip-checksum-dropped: an IPv4 header checksum that does not verify. The ICRC masks
// the checksum, so the ICRC still checks: only the IP layer can (and must) reject it.
void bad_ip_checksum(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "connect c");
  ctx.connect(c, {});
  step(ctx, "SEND_ONLY psn=0 len=64 with a wrong IPv4 header checksum (ICRC good)");
  auto f = request_frame(ctx, c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "64"}});
  f[offsets(f).ip + 10] ^= 0x5A;  // header checksum, masked in the ICRC
  ctx.send_frame(std::move(f), "c SEND_ONLY psn=0 ackreq=1 len=64, IPv4 checksum wrong");
  step(ctx, "expect nothing from c");
  ctx.expect_nothing(&c, ctx.timing().silence_window());
  expect_intact_accepted(ctx, c);
}

// header/wrong-udp-port-ignored: the same request to UDP port 4792 (ICRC recomputed) is not RoCEv2
// traffic and must not reach the QP.
void wrong_udp_port(CaseContext& ctx) {
  Connection& c = ctx.new_connection("c");
  step(ctx, "connect c");
  ctx.connect(c, {});
  step(ctx, "SEND_ONLY psn=0 len=64 to UDP port 4792 instead of 4791");
  auto f = request_frame(ctx, c, "SEND_ONLY", {{"psn", "0"}, {"ackreq", "1"}, {"len", "64"}});
  const std::uint16_t port = Udp::kRocePort + 1;
  const At at = offsets(f);
  f[at.udp + 2] = static_cast<std::uint8_t>(port >> 8);
  f[at.udp + 3] = static_cast<std::uint8_t>(port);
  refresh_roce_v2_ipv4_icrc(f, at.ip, at.bth);  // so only the port is wrong
  ctx.send_frame(std::move(f), "c SEND_ONLY psn=0 ackreq=1 len=64 to UDP port 4792");
  // Only c's traffic: a CM MAD still on its way for an earlier connection is not an answer.
  step(ctx, "expect nothing from c");
  ctx.expect_nothing(&c, ctx.timing().silence_window());
  expect_intact_accepted(ctx, c);
}

// psn cases are MUST and graded on the responder (needs are checked once, by the runner).
void add(engine::Catalogue& catalogue, std::string id, std::string title, std::string description,
         Cite cite, std::function<void(CaseContext&)> run) {
  add_case(catalogue, kSource, std::move(id), std::move(title), std::move(description),
           std::move(cite), "MUST", {"responder"}, std::move(run));
}

}  // namespace

void add_psn_cpp_cases(engine::Catalogue& catalogue) {
  engine::CaseDef def;
  def.id = "psn/random-start-continuity";
  def.area = "psn";
  def.title = "A random starting PSN near the wrap is continued exactly (ACK PSNs follow it)";
  def.description =
      "A target QP is made through the control API expecting a PSN a few below 0xFFFFFF, chosen "
      "by the run's seed (with CM the target chooses the PSN the tester sends from); eight SENDs "
      "cross the wrap and each must be ACKed with its own PSN.";
  def.citation = "9.7.1; 11.2.4.2";
  def.rule =
      "PSNs count modulo 2^24 from the expected receive PSN Modify QP set at RTR, whatever it is: "
      "each request across the wrap is ACKed with its own PSN";
  def.checked = "11.2.4.2: Annex A17 text, SIF sif_qp.c; unchecked: 9.7.1";
  def.requirement = "MUST";
  def.needs = {"control"};
  def.source = "cases/cpp/psn_cases.cc";
  def.run = random_start;
  catalogue.add(std::move(def));

  add(catalogue, "icrc/payload-corruption-dropped",
      "A packet whose payload was corrupted after the ICRC was computed is dropped silently",
      "A SEND_ONLY of 64 bytes has one payload bit flipped after its ICRC was computed, as a bit "
      "error in flight would. The ICRC covers the payload, so the packet must be discarded with "
      "no response and no effect; the same request resent intact is ACKed.",
      {"7.8.1; CA17-22 CA17-24",
       "The ICRC covers the payload: a packet corrupted after its ICRC was computed is discarded "
       "silently, with no effect",
       "7.8.1: 2026-12 source check; CA17-22, CA17-24: Annex A17 text"},
      payload_corruption);
  add(catalogue, "header/bad-ip-checksum-dropped",
      "A RoCEv2 packet with a bad IPv4 header checksum is dropped silently",
      "The IPv4 header checksum of a SEND_ONLY is made wrong; the ICRC, which masks the checksum, "
      "still checks. The IP layer must discard the datagram: no response, no effect; the same "
      "request with a correct checksum is ACKed.",
      {"RFC 1122 3.2.1.2; CA17-24",
       "A host verifies the IP header checksum and silently discards a datagram that fails; "
       "RoCEv2 runs over IP/UDP, and the ICRC (which masks the checksum) does not excuse it",
       "RFC 1122 text; CA17-24: Annex A17 text"},
      bad_ip_checksum);
  add(catalogue, "header/wrong-udp-port-ignored",
      "A request to a UDP port other than 4791 is not RoCEv2 and is not delivered",
      "A SEND_ONLY for the connection's QP, with a correct ICRC, is sent to UDP destination port "
      "4792. It is not RoCEv2 traffic: the target must not answer it on the connection nor "
      "execute it; the same request to port 4791 is ACKed.",
      {"CA17-20",
       "UDP destination port 4791 identifies RoCEv2: a packet to another port is not delivered "
       "to the transport",
       "CA17-20: Annex A17 text"},
      wrong_udp_port);
}

}  // namespace roceconf::cases
