#include "cli/decode_command.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <memory>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "capture/pcap_reader.h"
#include "capture/read_ahead.h"
#include "cli/json_fields.h"
#include "cli/split_command.h"
#include "dissector/analysis/connection_stats.h"
#include "dissector/analysis/json/analysis_json.h"
#include "dissector/analysis/stream_analyzer.h"
#include "dissector/summary.h"

namespace roceconf::cli {

namespace {

// Buffered stdout: one write per 64 KiB rather than one per line.
class Output {
 public:
  Output() = default;
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  ~Output() { flush(); }

  template <typename... Args>
  void print(fmt::format_string<Args...> fs, Args&&... args) {
    fmt::format_to(std::back_inserter(buf_), fs, std::forward<Args>(args)...);
    if (buf_.size() >= kFlushAt) flush();
  }
  void flush() {
    if (buf_.size() > 0) std::fwrite(buf_.data(), 1, buf_.size(), stdout);
    buf_.clear();
    std::fflush(stdout);
  }

 private:
  static constexpr std::size_t kFlushAt = 64 * 1024;
  fmt::memory_buffer buf_;
};

int fail(Output& out, std::string_view message) {
  out.flush();  // what was decoded comes before the error
  std::string line(message);
  std::replace(line.begin(), line.end(), '\n', ' ');
  fmt::print(stderr, "roceconf: error: {}\n", line);
  return kExitUsage;
}

double seconds_between(std::uint64_t first_ns, std::uint64_t ns) {
  return static_cast<double>(static_cast<std::int64_t>(ns - first_ns)) / 1e9;
}

constexpr std::size_t kFindingCodes = static_cast<std::size_t>(FindingCode::kLinkHeader) + 1;

// Totals without per-frame allocation: fixed arrays indexed by opcode and finding code.
class Stats {
 public:
  void add(const Packet& p) {
    ++frames_;
    ++framing_[static_cast<std::size_t>(p.framing)];
    if (p.bth) ++opcodes_[p.bth->opcode];
    if (p.icrc && !p.icrc->ok()) ++icrc_bad_;
    if (p.vcrc && !p.vcrc->ok()) ++vcrc_bad_;
    for (const Finding& f : p.findings) ++findings_[static_cast<std::size_t>(f.code)];
  }

  void print(Output& out, bool icrc_checked, double elapsed) const {
    const auto framing = [&](Framing f) { return framing_[static_cast<std::size_t>(f)]; };
    out.print("frames:           {}\n", frames_);
    out.print("RoCE frames:      {} (RoCEv2 {}, RoCEv1 {})\n",
              framing(Framing::kRoceV2) + framing(Framing::kRoceV1), framing(Framing::kRoceV2),
              framing(Framing::kRoceV1));
    out.print("IB frames:        {}\n", framing(Framing::kInfiniBand));
    if (icrc_checked)
      out.print("ICRC failures:    {}\n", icrc_bad_);
    else
      out.print("ICRC failures:    not checked (--no-icrc)\n");
    out.print("VCRC failures:    {}\n", vcrc_bad_);
    out.print("by opcode:{}\n",
              std::ranges::all_of(opcodes_, [](auto n) { return n == 0; }) ? " none" : "");
    for (std::size_t op = 0; op < opcodes_.size(); ++op) {
      if (opcodes_[op] == 0) continue;
      const OpcodeInfo& info = opcode_info(static_cast<std::uint8_t>(op));
      const std::string name = !info.valid || info.name.empty() ? fmt::format("opcode 0x{:02x}", op)
                                                                : std::string(info.name);
      out.print("  {:<32}{:>8}\n", name, opcodes_[op]);
    }
    out.print("findings by code:{}\n",
              std::ranges::all_of(findings_, [](auto n) { return n == 0; }) ? " none" : "");
    for (std::size_t c = 0; c < findings_.size(); ++c)
      if (findings_[c] != 0)
        out.print("  {:<32}{:>8}\n", finding_info(static_cast<FindingCode>(c)).code, findings_[c]);
    const double rate = static_cast<double>(frames_) / std::max(elapsed, 1e-9);
    out.print("speed:            {:.0f} frames/s ({} frames in {:.6f} s, {})\n", rate, frames_,
              elapsed, icrc_checked ? "decode + ICRC check" : "decode only");
  }

 private:
  std::uint64_t frames_ = 0;
  std::uint64_t icrc_bad_ = 0;
  std::uint64_t vcrc_bad_ = 0;
  std::array<std::uint64_t, 4> framing_{};
  std::array<std::uint64_t, 256> opcodes_{};
  std::array<std::uint64_t, kFindingCodes> findings_{};
};

// Analysis state is bounded (request windows per channel, channels and CM connections kept),
// and per-frame results are not kept: memory stays flat however long the capture.
analysis::AnalyzerOptions stream_options() {
  analysis::AnalyzerOptions o;
  o.keep_results = false;
  return o;
}

int print_stats(PcapReader reader, const DecodeOptions& options, Output& out) {
  Stats stats;
  Packet packet;  // reused: decode_into keeps its storage
  const auto start = std::chrono::steady_clock::now();
  ReadAhead frames(std::move(reader));  // the file is read on a second core
  while (const ReadAhead::Batch* batch = frames.next()) {
    for (std::size_t i = 0; i < batch->size(); ++i) {
      decode_into(packet, batch->frame(i).data, frames.link_type(), options);
      stats.add(packet);
    }
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  stats.print(out, options.check_icrc, elapsed.count());  // totals up to a corrupt record too
  return frames.error().empty() ? kExitOk : fail(out, frames.error());
}

Json direction_json(const analysis::DirectionStats& d) {
  Json naks = Json::object();
  for (std::size_t i = 0; i < d.naks.size(); ++i) naks[analysis::nak_code_key(i)] = d.naks[i];
  Json rt = Json::object();
  rt["count"] = d.response_time.count();
  if (d.response_time.count() != 0) {
    rt["median_ns"] = d.response_time.quantile(0.5);
    rt["p99_ns"] = d.response_time.quantile(0.99);
    rt["min_ns"] = d.response_time.min();
    rt["max_ns"] = d.response_time.max();
  }
  Json j{{"channel", d.channel},  {"peer_channel", d.peer_channel}, {"connection", d.connection},
         {"source", d.requester}, {"destination", d.responder},     {"qpn", d.responder_qpn}};
  if (d.requester_qpn) j["source_qpn"] = *d.requester_qpn;
  j.update(Json{{"packets", d.packets},
                {"bytes", d.bytes},
                {"requests", d.requests},
                {"messages", d.messages},
                {"retransmissions", d.retransmissions},
                {"out_of_sequence", d.out_of_sequence},
                {"duplicates", d.duplicates},
                {"responses", d.responses},
                {"acks", d.acks},
                {"read_responses", d.read_responses},
                {"naks", std::move(naks)},
                {"rnr_naks", d.rnr_naks},
                {"rnr_wait_ns", d.rnr_wait_ns},
                {"not_captured", d.not_captured},
                {"response_time", std::move(rt)},
                {"delivered_bytes", d.delivered},
                {"seconds", d.seconds()},
                {"goodput_bps", d.goodput_bps()},
                {"gradable", d.gradable()}});
  return j;
}

std::string rate_text(double bps) {
  if (bps >= 1e9) return fmt::format("{:.2f} Gbit/s", bps / 1e9);
  if (bps >= 1e6) return fmt::format("{:.1f} Mbit/s", bps / 1e6);
  if (bps >= 1e3) return fmt::format("{:.1f} kbit/s", bps / 1e3);
  return fmt::format("{:.0f} bit/s", bps);
}

std::string duration_or_dash(std::int64_t ns) {
  return ns < 0 ? "-" : analysis::format_duration(ns);
}

// Writes connections as they are handed over, and the totals at the end.
class ConnectionPrinter {
 public:
  ConnectionPrinter(Output& out, bool json) : out_(out), json_(json) {
    if (!json_)
      out_.print(kRow, "conn", "CM", "requester -> responder", "packets", "bytes", "msgs",
                 "retrans", "oos", "dups", "NAK s/i/a/o/r", "RNR (wait)", "resp p50", "resp p99",
                 "goodput", "gaps", "grade");
  }

  void print(const analysis::ConnectionSummary& c) {
    ++count_;
    bound_ += c.connection != 0 ? 1 : 0;
    gradable_ += c.gradable() ? 1 : 0;
    if (json_) {
      Json j{{"connection", c.number}};
      if (c.connection != 0) j["cm_connection"] = c.connection;
      Json dirs = Json::array();
      for (const analysis::DirectionStats& d : c.directions) dirs.push_back(direction_json(d));
      j.update(Json{{"packets", c.packets()},
                    {"bytes", c.bytes()},
                    {"seconds", static_cast<double>(c.last_ns() - c.first_ns()) / 1e9},
                    {"goodput_bps", c.goodput_bps()},
                    {"gradable", c.gradable()},
                    {"directions", std::move(dirs)}});
      out_.print("{}\n", j.dump(-1, ' ', false, Json::error_handler_t::replace));
      return;
    }
    for (const analysis::DirectionStats& d : c.directions) {
      const std::string naks = fmt::format("{}", fmt::join(d.naks, "/"));
      const std::string rnr =
          d.rnr_naks == 0
              ? "0"
              : fmt::format("{} ({})", d.rnr_naks, analysis::format_duration(d.rnr_wait_ns));
      out_.print(kRow, c.number, c.connection != 0 ? std::to_string(c.connection) : "-",
                 fmt::format("{} -> {}", d.requester_text(), d.responder_text()), d.packets,
                 d.bytes, d.messages, d.retransmissions, d.out_of_sequence, d.duplicates, naks, rnr,
                 duration_or_dash(d.response_time.quantile(0.5)),
                 duration_or_dash(d.response_time.quantile(0.99)), rate_text(d.goodput_bps()),
                 d.not_captured, d.gradable() ? "complete" : "incomplete: not graded");
    }
  }

  void finish(std::uint64_t unattributed) {
    if (json_) return;
    out_.print("connections: {} ({} bound through CM, {} complete enough to grade)\n", count_,
               bound_, gradable_);
    if (unattributed != 0) out_.print("responses matched to no requests: {}\n", unattributed);
  }

 private:
  static constexpr auto kRow =
      "{:>4} {:>3}  {:<58} {:>8} {:>11} {:>7} {:>7} {:>5} {:>5}  {:<11} {:>10} {:>10} {:>10} "
      "{:>13} {:>6}  {}\n";
  Output& out_;
  bool json_;
  std::uint64_t count_ = 0;
  std::uint64_t bound_ = 0;
  std::uint64_t gradable_ = 0;
};

// Per connection (QP pair, bound through CM when the capture has the exchange) and direction:
// traffic, loss recovery, NAKs by code, RNR waits, response times and goodput, and whether the
// capture is complete enough to grade the responder (no PSN it acknowledged is missing). A
// connection is written when CM closes it (its state freed), the rest at the end.
int print_connections(PcapReader reader, const DecodeOptions& options, bool json, Output& out) {
  Packet packet;
  analysis::StreamAnalyzer analyzer(stream_options());
  analysis::ConnectionStats stats;
  ConnectionPrinter printer(out, json);
  ReadAhead frames(std::move(reader));
  std::uint64_t number = 0;
  while (const ReadAhead::Batch* batch = frames.next()) {
    for (std::size_t i = 0; i < batch->size(); ++i) {
      const CaptureFrame frame = batch->frame(i);
      decode_into(packet, frame.data, frames.link_type(), options);
      const WireClock wire = wire_clock(frame, frames.link_type());
      const analysis::FrameAnalysis& fa = analyzer.add(++number, wire.time_ns, packet);
      if (fa.rc) stats.add(packet, wire.length, wire.time_ns, *fa.rc);
      if (fa.cm && fa.cm->connection != 0 && fa.cm->state == analysis::CmState::kClosed &&
          !fa.cm->retransmission) {
        for (const analysis::ConnectionSummary& c : stats.close(fa.cm->connection))
          printer.print(c);
      }
    }
  }
  for (const analysis::ConnectionSummary& c : stats.connections()) printer.print(c);
  printer.finish(stats.unattributed());
  return frames.error().empty() ? kExitOk : fail(out, frames.error());
}

void print_json(Output& out, const Packet& packet, const CaptureFrame& frame, std::uint64_t number,
                double time, const analysis::FrameAnalysis& fa) {
  Json j = Json::object();
  j["frame"] = number;
  j["time"] = time;
  j["timestamp_ns"] = frame.time_ns;
  j["length"] = frame.orig_length;
  if (frame.data.size() != frame.orig_length) j["captured_length"] = frame.data.size();
  j["framing"] = framing_name(packet.framing);
  add_packet_json(j, packet);
  if (fa.rc || fa.cm || !fa.flags.empty()) j["analysis"] = analysis::analysis_json(fa);
  out.print("{}\n", j.dump(-1, ' ', false, Json::error_handler_t::replace));
}

int list_frames(PcapReader& reader, const DecodeOptions& options, bool json, Output& out) {
  Packet packet;
  std::uint64_t first_ns = 0;
  analysis::StreamAnalyzer analyzer(stream_options());
  for (;;) {
    auto next = reader.next();
    if (!next) return fail(out, next.error());
    if (!*next) return kExitOk;
    const CaptureFrame& frame = **next;
    const std::uint64_t number = reader.frames_read();
    if (number == 1) first_ns = frame.time_ns;
    const double time = seconds_between(first_ns, frame.time_ns);
    decode_into(packet, frame.data, reader.link_type(), options);
    if (json) {
      const analysis::FrameAnalysis& fa =
          analyzer.add(number, wire_clock(frame, reader.link_type()).time_ns, packet);
      print_json(out, packet, frame, number, time, fa);
    } else {
      out.print("{:>5} {:>12.6f} {}\n", number, time, summarize(packet, options.check_icrc));
    }
  }
}

}  // namespace

int run_decode(const DecodeArgs& args) {
  if (!args.split_dir.empty()) return run_split(args);
  Output out;
  auto reader = PcapReader::open(args.file);
  if (!reader) return fail(out, reader.error());
  DecodeOptions options;
  options.udp_port = args.udp_port;
  options.check_icrc = !args.no_icrc;
  if (args.stats) return print_stats(std::move(*reader), options, out);
  if (args.connections) return print_connections(std::move(*reader), options, args.json, out);
  return list_frames(*reader, options, args.json, out);
}

void add_decode_command(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<DecodeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "decode",
      "Decode a pcap/pcapng capture: one summary line per frame (number, seconds since "
      "the first frame, summary), JSON Lines, or totals");
  cmd->add_option("FILE", args->file, "capture file (pcap or pcapng)")->required();
  CLI::Option* json = cmd->add_flag("--json", args->json, "one JSON object per frame (JSON Lines)");
  cmd->add_flag("--stats", args->stats,
                "totals by opcode and finding, ICRC failures and decode speed")
      ->excludes(json);
  cmd->add_flag("--connections", args->connections,
                "per RC/UC connection and direction: packets, bytes, messages, "
                "retransmissions, out of sequence, duplicates, NAKs by code, RNR NAKs and "
                "waits, response time (median, p99), goodput, PSNs acknowledged but not "
                "captured, and whether the capture is complete enough to grade the responder "
                "(with --json: one object a connection)")
      ->excludes("--stats");
  cmd->add_option("--split-by-connection", args->split_dir,
                  "write one capture per RC/UC connection into DIR (new or empty): both "
                  "directions with the CM exchange that binds its QPNs, and other.pcap for "
                  "frames of no connection; each shard analyses as in the whole capture (with "
                  "--json: one object a shard)")
      ->option_text("DIR")
      ->excludes("--stats")
      ->excludes("--connections");
  cmd->add_option("--udp-port", args->udp_port, "UDP destination port that carries RoCEv2")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  cmd->add_flag("--no-icrc", args->no_icrc, "do not verify ICRCs");
  cmd->callback([args, &run] { run = [args] { return run_decode(*args); }; });
}

}  // namespace roceconf::cli
