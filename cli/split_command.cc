#include "cli/split_command.h"

#include <pcap/pcap.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "capture/pcap_reader.h"
#include "capture/read_ahead.h"
#include "cli/decode_command.h"
#include "cli/json_fields.h"
#include "dissector/analysis/connection_groups.h"
#include "dissector/analysis/stream_analyzer.h"

namespace roceconf::cli {

namespace {

namespace fs = std::filesystem;

int fail(std::string_view message) {
  std::fflush(stdout);  // what was written comes before the error
  std::string line(message);
  std::replace(line.begin(), line.end(), '\n', ' ');
  fmt::print(stderr, "roceconf: error: {}\n", line);
  return kExitUsage;
}

// The same analysis as `decode --connections`, so that a shard graded later numbers and
// evicts nothing differently. Per-frame results are not kept: memory stays flat.
analysis::AnalyzerOptions stream_options() {
  analysis::AnalyzerOptions o;
  o.keep_results = false;
  return o;
}

// Open shards beyond the descriptor limit: the least recently written is closed and reopened
// for appending when its connection speaks again.
std::size_t max_open_shards() {
  constexpr std::size_t kWanted = 256;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kWanted;
  const auto usable = static_cast<std::size_t>(limit.rlim_cur);
  return std::clamp<std::size_t>(usable > 32 ? usable - 32 : 1, 1, kWanted);
}

class ShardWriter {
 public:
  ShardWriter(int dlt, int snapshot, fs::path dir)
      : dead_(pcap_open_dead_with_tstamp_precision(dlt, snapshot, PCAP_TSTAMP_PRECISION_NANO)),
        dir_(std::move(dir)),
        max_open_(max_open_shards()) {}
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;
  ~ShardWriter() {
    close_all();
    if (dead_ != nullptr) pcap_close(dead_);
  }

  void add(std::string name) {
    shards_.emplace_back();
    shards_.back().name = std::move(name);
  }
  const std::string& name(std::size_t i) const { return shards_[i].name; }
  std::uint64_t frames(std::size_t i) const { return shards_[i].frames; }
  bool created(std::size_t i) const { return shards_[i].created; }
  const std::string& error() const { return error_; }

  bool write(std::size_t i, const CaptureFrame& frame) {
    Shard& s = shards_[i];
    if (s.dumper == nullptr && !open(s, i)) return false;
    if (lru_.front() != i) lru_.splice(lru_.begin(), lru_, s.lru);
    pcap_pkthdr h{};
    h.ts.tv_sec = static_cast<time_t>(frame.time_ns / 1'000'000'000u);
    h.ts.tv_usec = static_cast<suseconds_t>(frame.time_ns % 1'000'000'000u);  // ns: nano handle
    h.caplen = static_cast<bpf_u_int32>(frame.data.size());
    h.len = frame.orig_length;
    pcap_dump(reinterpret_cast<u_char*>(s.dumper), &h, frame.data.data());
    ++s.frames;
    return true;
  }

  // Flushes and closes every open shard; false (error() set) when a write failed.
  bool close_all() {
    bool ok = true;
    while (!lru_.empty()) ok = close(shards_[lru_.back()]) && ok;
    return ok;
  }

 private:
  static constexpr std::size_t kBufferBytes = 32 << 10;

  struct Shard {
    std::string name;
    pcap_dumper_t* dumper = nullptr;
    bool created = false;
    std::uint64_t frames = 0;
    std::unique_ptr<char[]> buffer{};
    std::list<std::size_t>::iterator lru{};
  };

  bool open(Shard& s, std::size_t i) {
    if (dead_ == nullptr) return failed("libpcap cannot write this link type");
    if (lru_.size() >= max_open_ && !close(shards_[lru_.back()])) return false;
    const std::string path = (dir_ / s.name).string();
    if (!s.created) {
      std::FILE* file = std::fopen(path.c_str(), "wbx");
      if (file == nullptr)
        return failed(fmt::format("cannot create '{}': {}", path, std::strerror(errno)));
      s.buffer = std::make_unique<char[]>(kBufferBytes);
      std::setvbuf(file, s.buffer.get(), _IOFBF, kBufferBytes);
      s.dumper = pcap_dump_fopen(dead_, file);
      if (s.dumper == nullptr) {
        std::fclose(file);
        return failed(fmt::format("cannot write '{}': {}", path, pcap_geterr(dead_)));
      }
      s.created = true;
    } else {
      s.dumper = pcap_dump_open_append(dead_, path.c_str());
      if (s.dumper == nullptr)
        return failed(fmt::format("cannot reopen '{}': {}", path, pcap_geterr(dead_)));
    }
    lru_.push_front(i);
    s.lru = lru_.begin();
    return true;
  }

  bool close(Shard& s) {
    bool ok = true;
    if (s.dumper != nullptr) {
      // pcap_dump() reports nothing: a full disk shows in the flush or the stream's error flag.
      if (pcap_dump_flush(s.dumper) != 0 || std::ferror(pcap_dump_file(s.dumper)) != 0)
        ok = failed(fmt::format("cannot write '{}': {}", (dir_ / s.name).string(),
                                std::strerror(errno != 0 ? errno : EIO)));
      pcap_dump_close(s.dumper);
      s.dumper = nullptr;
      lru_.erase(s.lru);
    }
    s.buffer.reset();
    return ok;
  }

  bool failed(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  pcap_t* dead_ = nullptr;
  fs::path dir_;
  std::size_t max_open_;
  std::vector<Shard> shards_;
  std::list<std::size_t> lru_;  // open shards, most recently written first
  std::string error_;
};

// Removes what an unfinished split wrote, unless dismissed.
class Cleanup {
 public:
  Cleanup(fs::path partial, fs::path dir, bool remove_dir)
      : partial_(std::move(partial)), dir_(std::move(dir)), remove_dir_(remove_dir) {}
  Cleanup(const Cleanup&) = delete;
  Cleanup& operator=(const Cleanup&) = delete;
  ~Cleanup() {
    if (dismissed_) return;
    std::error_code ec;
    fs::remove_all(partial_, ec);
    if (remove_dir_) fs::remove(dir_, ec);  // only while empty
  }
  void dismiss() { dismissed_ = true; }

 private:
  fs::path partial_;
  fs::path dir_;
  bool remove_dir_;
  bool dismissed_ = false;
};

std::string shard_name(const analysis::ConnectionGroup& g, std::size_t width) {
  return fmt::format("conn-{:0{}}-{}.pcap", g.number, width, g.name());
}

Json endpoint_json(const analysis::ConnectionEndpoint& e) {
  Json j{{"address", e.address.to_string()}};
  if (e.qpn) j["qpn"] = *e.qpn;
  return j;
}

void print_shards(const ShardWriter& w, const analysis::ConnectionGroups& groups,
                  const fs::path& dir, bool json) {
  fmt::memory_buffer out;
  std::uint64_t total = 0;
  std::size_t shards = 0;
  const std::size_t other = groups.size();  // other.pcap comes last
  for (std::size_t i = 0; i <= other; ++i) {
    if (!w.created(i)) continue;
    ++shards;
    total += w.frames(i);
    const std::string path = (dir / w.name(i)).string();
    if (!json) {
      fmt::format_to(std::back_inserter(out), "{:>10}  {}\n", w.frames(i), path);
      continue;
    }
    Json j{{"file", path}, {"frames", w.frames(i)}};
    if (i == other) {
      j["kind"] = "other";
    } else {
      const analysis::ConnectionGroup& g = groups.groups()[i];
      j["kind"] = "connection";
      j["connection"] = g.number;
      j["endpoints"] = Json::array({endpoint_json(g.a), endpoint_json(g.b)});
      j["channels"] = g.channels;
      if (g.cm_connection != 0) j["cm_connection"] = g.cm_connection;
    }
    fmt::format_to(std::back_inserter(out), "{}\n",
                   j.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  if (!json)
    fmt::format_to(std::back_inserter(out), "{:>10}  total: {} shard{} ({} connection{}) in {}\n",
                   total, shards, shards == 1 ? "" : "s", groups.size(),
                   groups.size() == 1 ? "" : "s", dir.string());
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

int run_split(const DecodeArgs& args) {
  const fs::path dir = args.split_dir;
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  const bool existed = fs::exists(st);
  if (!existed && st.type() == fs::file_type::not_found) ec.clear();
  if (existed && !fs::is_directory(st))
    return fail(
        fmt::format("'{}' exists and is not a directory (give a new or empty directory "
                    "to split into)",
                    dir.string()));
  if (existed && !fs::is_empty(dir, ec))
    return fail(fmt::format("'{}' is not empty (give a new or empty directory to split into)",
                            dir.string()));
  if (ec) return fail(fmt::format("cannot read '{}': {}", dir.string(), ec.message()));

  DecodeOptions options;
  options.udp_port = args.udp_port;
  options.check_icrc = false;  // the stream analysis does not look at ICRCs

  auto reader = PcapReader::open(args.file);
  if (!reader) return fail(reader.error());
  const int dlt = reader->dlt();
  const int snapshot = reader->snapshot() > 0 ? reader->snapshot() : 262144;

  // Pass 1: which frames belong together.
  analysis::ConnectionGroups groups;
  std::uint64_t frames = 0;
  std::string read_error;  // a corrupt record: the frames before it are split, then the error
  {
    analysis::StreamAnalyzer analyzer(stream_options());
    ReadAhead input(std::move(*reader));
    Packet packet;
    while (const ReadAhead::Batch* batch = input.next()) {
      for (std::size_t i = 0; i < batch->size(); ++i) {
        const CaptureFrame frame = batch->frame(i);
        decode_into(packet, frame.data, input.link_type(), options);
        const analysis::FrameAnalysis& fa =
            analyzer.add(++frames, static_cast<std::int64_t>(frame.time_ns), packet);
        groups.observe(packet, fa, analyzer.cm());
      }
    }
    read_error = input.error();
  }
  groups.finish();

  if (!existed && !fs::create_directories(dir, ec) && ec)
    return fail(fmt::format("cannot create '{}': {}", dir.string(), ec.message()));
  // Shards are written here and moved out once complete: a split that dies midway leaves no
  // shard that looks whole.
  const fs::path partial = dir / ".partial";
  if (!fs::create_directory(partial, ec) && ec) {
    if (!existed) fs::remove(dir, ec);
    return fail(fmt::format("cannot create '{}': {}", partial.string(), ec.message()));
  }
  Cleanup cleanup(partial, dir, !existed);

  ShardWriter writer(dlt, snapshot, partial);
  std::size_t width = 4;
  for (std::size_t n = groups.size(); n >= 10000; n /= 10) ++width;
  for (const analysis::ConnectionGroup& g : groups.groups()) writer.add(shard_name(g, width));
  writer.add("other.pcap");

  // Pass 2: the same analysis again, each frame to its group's shard.
  auto again = PcapReader::open(args.file);
  if (!again) return fail(again.error());
  std::uint64_t written = 0;
  {
    analysis::StreamAnalyzer analyzer(stream_options());
    ReadAhead input(std::move(*again));
    Packet packet;
    while (written < frames) {
      const ReadAhead::Batch* batch = input.next();
      if (batch == nullptr) break;
      for (std::size_t i = 0; i < batch->size() && written < frames; ++i) {
        const CaptureFrame frame = batch->frame(i);
        decode_into(packet, frame.data, input.link_type(), options);
        const analysis::FrameAnalysis& fa =
            analyzer.add(++written, static_cast<std::int64_t>(frame.time_ns), packet);
        const std::uint32_t g = groups.group_of(fa);
        if (!writer.write(g == 0 ? groups.size() : g - 1, frame)) return fail(writer.error());
      }
    }
  }
  if (!writer.close_all()) return fail(writer.error());
  // Both passes must have seen the same frames: a capture still being written, or replaced,
  // would put frames in the wrong shards.
  bool same = written == frames && writer.frames(groups.size()) == groups.other_frames();
  for (const analysis::ConnectionGroup& g : groups.groups())
    same = same && writer.frames(g.number - 1) == g.frames;
  if (!same)
    return fail(
        fmt::format("'{}' changed while it was being split (split a finished capture)", args.file));

  for (std::size_t i = 0; i <= groups.size(); ++i) {
    if (!writer.created(i)) continue;
    fs::rename(partial / writer.name(i), dir / writer.name(i), ec);
    if (!ec) continue;
    const std::string why = ec.message();
    for (std::size_t j = 0; j < i; ++j)  // all shards or none
      if (writer.created(j)) fs::remove(dir / writer.name(j), ec);
    return fail(fmt::format("cannot move '{}' into '{}': {}", writer.name(i), dir.string(), why));
  }
  fs::remove(partial, ec);
  cleanup.dismiss();

  print_shards(writer, groups, dir, args.json);
  return read_error.empty() ? kExitOk : fail(read_error);
}

}  // namespace roceconf::cli
