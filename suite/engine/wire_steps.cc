#include "suite/engine/wire_steps.h"

#include <fmt/format.h>

#include <algorithm>

#include "dissector/summary.h"
#include "suite/engine/timing.h"

namespace roceconf::engine {

Addresses tester_addresses(const Target& target) {
  return {target.tester(), target.device(), Udp::kRocePort, target.marking()};
}

WireSteps::WireSteps(Port& port, EvidenceRecorder& evidence, ReceiveDemux& demux)
    : port_(port), evidence_(evidence), demux_(demux) {}

void WireSteps::transmit(std::vector<std::uint8_t> frame, std::string text) {
  // The summary line is the decoder's: what actually went on the wire.
  const Packet p = decode(frame);
  evidence_.record_frame(report::EventKind::kSent, text + "  |  " + summarize(p), p, frame, now());
  if (auto sent = port_.send(frame); !sent)
    evidence_.error("sending failed: " + sent.error().message);
}

Received WireSteps::expect(Connection* c, const std::vector<Expectation>& alternatives,
                           TimeNs window, ExpectMode mode) {
  if (alternatives.empty()) evidence_.error("expect: nothing to expect");
  const TimeNs deadline = add_saturating(now(), window);
  std::string what = fmt::format("expect {}", c ? c->name + " " : "");
  for (std::size_t i = 0; i < alternatives.size(); ++i)
    what += fmt::format("{}{} {}", i ? " or " : "", alternatives[i].kind,
                        alternatives[i].fields.text());
  std::vector<report::FieldDiff> first_diffs;
  std::string first_seen;
  // A connection's CNPs are read apart from its other frames (receive_demux.h); `any` reads all.
  const auto wants = [&](std::string_view kind) {
    return std::ranges::any_of(alternatives, [&](const Expectation& e) { return e.kind == kind; });
  };
  const Stream stream = c == nullptr || wants("any") || wants("*") ? Stream::kAll
                        : wants("CNP")                             ? Stream::kCnps
                                                                   : Stream::kNotCnps;
  for (;;) {
    auto r = demux_.next_for(c, deadline, true, stream);
    if (!r) {
      if (!first_diffs.empty())
        evidence_.fail(fmt::format("{}: got {} and nothing matching within {} ms", what, first_seen,
                                   window / kMillisecond),
                       first_diffs);
      evidence_.fail(fmt::format("{}: nothing arrived within {} ms", what, window / kMillisecond));
    }
    // The diffs of the alternative the packet came closest to.
    std::optional<std::vector<report::FieldDiff>> closest;
    for (const auto& e : alternatives) {
      auto diffs = match(r->packet, c, e);
      if (!diffs) evidence_.error(diffs.error());
      if (diffs->empty()) {
        if (on_match_) on_match_(c, r->packet);
        evidence_.record(report::EventKind::kExpectMet, what);
        return std::move(*r);
      }
      if (!closest || diffs->size() < closest->size()) closest = std::move(*diffs);
    }
    if (on_mismatch_) on_mismatch_(c, r->packet);
    if (mode == ExpectMode::kAfterEarlierAcks &&
        acknowledges_earlier(r->packet, c, alternatives.front())) {
      evidence_.record(report::EventKind::kNote,
                       fmt::format("passed over {} (an earlier PSN acknowledged)",
                                   describe_received(r->packet, c)));
      continue;
    }
    if (mode != ExpectMode::kEventually)
      evidence_.fail(fmt::format("{}: got {}", what, describe_received(r->packet, c)), *closest);
    if (first_diffs.empty()) {
      first_diffs = *closest;
      first_seen = describe_received(r->packet, c);
    }
  }
}

void WireSteps::expect_nothing(Connection* c, TimeNs window) {
  const TimeNs deadline = add_saturating(now(), window);
  if (auto r = demux_.next_for(c, deadline)) {
    evidence_.fail(fmt::format("expected nothing {}within {} ms, got {}",
                               c ? "from " + c->name + " " : "", window / kMillisecond,
                               describe_received(r->packet, c)));
  }
  evidence_.record(
      report::EventKind::kSilenceOk,
      fmt::format("nothing {}for {} ms", c ? "from " + c->name + " " : "", window / kMillisecond));
}

std::vector<Received> WireSteps::collect(Connection* c, TimeNs window) {
  const TimeNs deadline = add_saturating(now(), window);
  std::vector<Received> out;
  while (auto r = demux_.next_for(c, deadline)) out.push_back(std::move(*r));
  return out;
}

void WireSteps::wait(TimeNs duration) {
  demux_.keep_until(add_saturating(now(), duration));
}

}  // namespace roceconf::engine
