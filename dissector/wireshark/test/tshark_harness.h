// Test harness for the plugin: writes pcapng captures (with packet comments, as the suite's
// evidence does), runs tshark with the plugin from the build tree and a throw-away HOME, and
// reads `tshark -T json` back as per-frame field lists.
//
// tshark run by root ignores WIRESHARK_PLUGIN_DIR (root counts as privileged), so as root the
// harness runs it as `nobody` through setpriv. In sanitizer builds the sanitizer runtimes are
// preloaded into tshark (leak checking off: tshark's own allocations are not ours).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dissector/testing/shell_command.h"

namespace roceconf::wireshark::test {

struct Record {
  std::vector<std::uint8_t> bytes;
  std::string comment;
  std::int64_t ns = 0;
  std::uint32_t original_length = 0;  // 0: bytes.size()
};

inline void put32(std::string& out, std::uint32_t v) {
  out.append(reinterpret_cast<const char*>(&v), 4);
}
inline void put16(std::string& out, std::uint16_t v) {
  out.append(reinterpret_cast<const char*>(&v), 2);
}
inline void pad4(std::string& out) {
  while (out.size() % 4 != 0) out.push_back('\0');
}

// One pcapng section, one interface of `linktype`, nanosecond timestamps, host byte order
// (little-endian here; the byte-order magic tells readers).
inline void write_pcapng(const std::string& path, const std::vector<Record>& records,
                         std::uint16_t linktype = 1) {
  std::string out;
  auto block = [&out](std::uint32_t type, const std::string& body) {
    put32(out, type);
    put32(out, static_cast<std::uint32_t>(body.size() + 12));
    out += body;
    put32(out, static_cast<std::uint32_t>(body.size() + 12));
  };
  std::string shb;
  put32(shb, 0x1A2B3C4D);
  put16(shb, 1);
  put16(shb, 0);
  put32(shb, 0xFFFFFFFF);
  put32(shb, 0xFFFFFFFF);
  block(0x0A0D0D0A, shb);
  std::string idb;
  put16(idb, linktype);
  put16(idb, 0);
  put32(idb, 262144);
  put16(idb, 9);  // if_tsresol: 10^-9
  put16(idb, 1);
  idb.push_back(9);
  pad4(idb);
  put32(idb, 0);  // opt_endofopt
  block(1, idb);
  for (const Record& r : records) {
    std::string epb;
    const auto ts = static_cast<std::uint64_t>(r.ns);
    put32(epb, 0);
    put32(epb, static_cast<std::uint32_t>(ts >> 32));
    put32(epb, static_cast<std::uint32_t>(ts));
    put32(epb, static_cast<std::uint32_t>(r.bytes.size()));
    put32(epb,
          r.original_length != 0 ? r.original_length : static_cast<std::uint32_t>(r.bytes.size()));
    epb.append(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size());
    pad4(epb);
    if (!r.comment.empty()) {
      put16(epb, 1);  // opt_comment
      put16(epb, static_cast<std::uint16_t>(r.comment.size()));
      epb += r.comment;
      pad4(epb);
      put32(epb, 0);
    }
    block(6, epb);
  }
  std::ofstream(path, std::ios::binary).write(out.data(), static_cast<std::streamsize>(out.size()));
  ::chmod(path.c_str(), 0644);
}

// A temporary directory readable by the unprivileged tshark, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "roceconf-ws-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
    ::chmod(path_.c_str(), 0755);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out.push_back(c);
  }
  return out + "'";
}

// Why tshark with the plugin cannot run here, or "" when it can.
inline std::string tshark_unavailable() {
  if (!testutil::have_program("tshark")) return "tshark not installed (apt-get install tshark)";
  if (::geteuid() == 0 && !testutil::have_program("setpriv"))
    return "running as root needs setpriv (util-linux) to run tshark unprivileged";
  return "";
}

// The command prefix running tshark with the plugin from the build tree; HOME is `home`.
inline std::string tshark_command(const std::string& home) {
  std::string env = "env HOME=" + quote(home) +
                    " WIRESHARK_PLUGIN_DIR=" + quote(ROCECONF_WIRESHARK_PLUGIN_DIR) +
                    " LC_ALL=C.UTF-8";
#ifdef ROCECONF_SANITIZER_PRELOAD
  env += " LD_PRELOAD=" + quote(ROCECONF_SANITIZER_PRELOAD) + " ASAN_OPTIONS=detect_leaks=0";
#endif
  // A hung tshark fails its test rather than stalling the run.
  env += " timeout 300 tshark";
  if (::geteuid() == 0) return "setpriv --reuid=nobody --regid=nogroup --clear-groups " + env;
  return env;
}

// Every value of every field of one frame, by filter name (subtree labels are skipped).
struct FrameFields {
  std::map<std::string, std::vector<std::string>> values;

  bool has(const std::string& field) const { return values.contains(field); }
  std::string get(const std::string& field) const {
    const auto it = values.find(field);
    return it == values.end() || it->second.empty() ? std::string() : it->second.front();
  }
  bool contains(const std::string& field, const std::string& value) const {
    const auto it = values.find(field);
    if (it == values.end()) return false;
    for (const auto& v : it->second)
      if (v == value) return true;
    return false;
  }
  std::string dump() const {
    std::string out;
    for (const auto& [k, vs] : values) {
      if (!k.starts_with("roceconf.") && !k.starts_with("_ws.expert")) continue;
      for (const auto& v : vs) out += "  " + k + " = " + v + "\n";
    }
    return out;
  }
};

inline void collect(const nlohmann::json& j, const std::string& key, FrameFields& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) collect(v, k, out);
  } else if (j.is_array()) {
    for (const auto& v : j) collect(v, key, out);
  } else if (j.is_string()) {
    out.values[key].push_back(j.get<std::string>());
  }
}

struct Dissection {
  int status = -1;
  std::string error;                // tshark's stderr
  std::vector<FrameFields> frames;  // frames[0] is frame 1
};

// `tshark -r path -2 -T json` (extra options before -T), parsed per frame.
inline Dissection dissect(const TempDir& dir, const std::string& capture,
                          const std::string& extra = "-2") {
  Dissection d;
  const std::string err = dir.file("stderr.txt");
  const auto r = testutil::run(tshark_command(dir.path()) + " -r " + quote(capture) + " " + extra +
                               " -T json --no-duplicate-keys -J 'frame roceconf' 2>" + quote(err));
  d.status = r.status;
  std::ifstream in(err);
  d.error.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  const auto json = nlohmann::json::parse(r.output, nullptr, false);
  if (!json.is_array()) return d;
  for (const auto& packet : json) {
    FrameFields f;
    collect(packet["_source"]["layers"], "", f);
    d.frames.push_back(std::move(f));
  }
  return d;
}

// `tshark -q -z roceconf,conn[,filter]` (the plugin's connections table): its rows, cells
// trimmed, with tshark's exit status and output.
struct ConnectionTable {
  int status = -1;
  std::string output;
  std::vector<std::vector<std::string>> rows;
};

inline ConnectionTable connection_table(const TempDir& home, const std::string& capture,
                                        const std::string& extra = "-z roceconf,conn") {
  ConnectionTable t;
  const auto r = testutil::run(tshark_command(home.path()) + " -r " + quote(capture) + " " + extra +
                               " -q 2>/dev/null");
  t.status = r.status;
  t.output = r.output;
  std::istringstream in(r.output);
  bool header = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("Requester |")) {
      header = true;
      continue;
    }
    if (!header || line.find('|') == std::string::npos) continue;
    std::vector<std::string> cells;
    std::istringstream cs(line);
    for (std::string cell; std::getline(cs, cell, '|');) {
      const auto b = cell.find_first_not_of(' ');
      const auto e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    t.rows.push_back(std::move(cells));
  }
  return t;
}

}  // namespace roceconf::wireshark::test
