// Packets from Python: encode a stack of layers through the C++ codec, decode bytes into a
// Frame whose layers Python reads by class name, and read capture files frame by frame.
#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "capture/pcap_reader.h"
#include "dissector/analysis/json/analysis_json.h"
#include "dissector/analysis/stream_analyzer.h"
#include "dissector/icrc.h"
#include "dissector/summary.h"
#include "json.h"
#include "layers.h"

namespace roceconf::python {

namespace {

// A decoded frame: the bytes and the packet that views them.
struct Frame {
  std::vector<std::uint8_t> bytes;
  Packet packet;
  LinkType link = LinkType::kEthernet;
  std::uint64_t time_ns = 0;
  bool icrc_checked = true;
  py::object analysis = py::none();  // read_pcap(analyze=True): the stream analysis, a dict
};

std::shared_ptr<Frame> decode_frame(std::vector<std::uint8_t> bytes, LinkType link,
                                    const DecodeOptions& options, std::uint64_t time_ns = 0) {
  auto f = std::make_shared<Frame>();
  f->bytes = std::move(bytes);
  f->link = link;
  f->time_ns = time_ns;
  f->icrc_checked = options.check_icrc;
  decode_into(f->packet, f->bytes, link, options);
  return f;
}

LinkType link_of(int value) {
  switch (static_cast<LinkType>(value)) {
    case LinkType::kEthernet:
    case LinkType::kRaw:
    case LinkType::kLinuxSll:
    case LinkType::kErf:
    case LinkType::kInfiniBand:
    case LinkType::kLinuxSll2:
      return static_cast<LinkType>(value);
  }
  raise("DecodeError",
        fmt::format("link type {} is not supported (1 Ethernet, 101 raw IP, 113/276 Linux SLL, "
                    "197 ERF, 247 InfiniBand)",
                    value));
}

py::dict layer_fields(const Packet& p, const LayerSpec& spec, std::size_t index) {
  // Field names as interned Python strings, made once: reading a capture builds many dicts.
  static std::map<const LayerSpec*, std::vector<py::object>>* keys =
      new std::map<const LayerSpec*, std::vector<py::object>>();
  auto& names = (*keys)[&spec];
  if (names.empty())
    for (const auto& f : spec.fields)
      names.push_back(
          py::reinterpret_steal<py::object>(PyUnicode_InternFromString(f.name.c_str())));
  py::dict d;
  for (std::size_t i = 0; i < spec.fields.size(); ++i) d[names[i]] = spec.fields[i].get(p, index);
  return d;
}

py::list frame_layers(const Frame& f) {
  py::list out;
  for (const auto& l : layer_specs()) {
    const std::size_t n = l.count(f.packet);
    for (std::size_t i = 0; i < n; ++i) out.append(py::str(l.cls));
  }
  return out;
}

// Fields that encode() computes from the rest of the frame when not given.
constexpr std::string_view kLengthFields[][2] = {
    {"Ether", "type"}, {"Dot1Q", "type"}, {"IP", "len"},     {"IPv6", "plen"},
    {"UDP", "len"},    {"GRH", "paylen"}, {"LRH", "pktlen"},
};

py::bytes encode_layers(const py::list& layers) {
  if (layers.empty()) raise("EncodeError", "an empty packet has no bytes");
  Packet p;
  Arena arena;
  std::set<std::tuple<std::string, std::size_t, std::string>> given;  // computed fields set
  std::vector<std::pair<const LayerSpec*, std::size_t>> stack;
  LinkType link = LinkType::kEthernet;
  for (std::size_t n = 0; n < layers.size(); ++n) {
    const auto item = layers[n].cast<py::tuple>();
    const std::string cls = item[0].cast<std::string>();
    const LayerSpec* spec = find_layer(cls);
    if (!spec) raise("EncodeError", fmt::format("unknown layer '{}'", cls));
    if (n == 0) {
      if (cls == "Ether")
        link = LinkType::kEthernet;
      else if (cls == "IP" || cls == "IPv6")
        link = LinkType::kRaw;
      else if (cls == "LRH")
        link = LinkType::kInfiniBand;
      else
        raise("EncodeError",
              fmt::format("a packet starts with Ether, IP, IPv6 or LRH, not {}", cls));
    }
    if (spec->count(p) > 0 && cls != "Dot1Q" && cls != "Raw")
      raise("EncodeError", fmt::format("{} appears twice in the packet", cls));
    spec->add(p);
    const std::size_t index = cls == "Dot1Q" ? p.vlans.size() - 1 : 0;
    stack.emplace_back(spec, index);
    for (const auto& [key, value] : item[1].cast<py::dict>()) {
      if (value.is_none()) continue;
      const std::string name = key.cast<std::string>();
      const FieldSpec* f = spec->field(name);
      if (!f) {
        std::string names;
        for (const auto& g : spec->fields) names += (names.empty() ? "" : ", ") + g.name;
        raise("EncodeError", fmt::format("{} has no field '{}' (fields: {})", cls, name, names));
      }
      f->set(p, index, value, arena);
      if (f->computed) given.emplace(cls, index, name);
    }
  }
  if (p.mad && !p.mad->cm && !p.payload.empty()) {
    p.mad->data = p.payload;  // a MAD of another class: its data area as given
    p.payload = {};
  }
  const auto is_given = [&](std::string_view cls, std::string_view name) {
    for (const auto& [c, i, n] : given)
      if (c == cls && n == name) return true;
    return false;
  };
  EncodeOptions o;
  o.link = link;
  o.fill_checksum = !is_given("IP", "chksum");
  o.fill_pad = !is_given("BTH", "padcount");
  o.fill_icrc = !is_given("BTH", "icrc") && !is_given("LRH", "vcrc");
  o.fill_dmalen = !is_given("RETH", "dmalen");
  if (p.vcrc && !p.icrc) p.icrc = Icrc{};
  bool lengths_given = false;
  for (const auto& [cls, name] : kLengthFields) lengths_given |= is_given(cls, name);
  if (!lengths_given) {
    const auto out = encode(p, o);
    return py::bytes(reinterpret_cast<const char*>(out.data()), out.size());
  }
  // Some lengths or types are given: take the others from a first encoding, keep the given ones.
  EncodeOptions first = o;
  first.fill_lengths = true;
  const auto draft = encode(p, first);
  DecodeOptions d;
  d.check_icrc = false;
  d.udp_port = p.udp ? p.udp->dport : Udp::kRocePort;
  const Packet computed = decode(draft, link, d);
  for (const auto& [spec, index] : stack)
    for (const auto& [cls, name] : kLengthFields) {
      if (spec->cls != cls || given.contains({std::string(cls), index, std::string(name)}))
        continue;
      if (spec->count(computed) <= index) continue;
      const FieldSpec* f = spec->field(name);
      f->set(p, index, f->get(computed, index), arena);
    }
  o.fill_lengths = false;
  const auto out = encode(p, o);
  return py::bytes(reinterpret_cast<const char*>(out.data()), out.size());
}

// ---------------------------------------------------------------------------------------------
// Stream analysis: the same StreamAnalyzer, and the same key names, as `roceconf decode --json`
// ("analysis") and the Wireshark plugin's roceconf.* analysis fields.
// ---------------------------------------------------------------------------------------------

// The analysis of a capture as it is read. A judgement a later frame makes about an earlier one
// (acked-by, nak-received: the plugin shows them on the request) is added to the earlier
// frame's dict while it is among the last kKept frames analysed.
class Analysis {
 public:
  Analysis() : analyzer_(options()) {}

  py::object add(std::uint64_t number, std::int64_t time_ns, const Packet& p) {
    const analysis::FrameAnalysis& fa = analyzer_.add(number, time_ns, p);
    for (const analysis::RcAnswer& answer : analyzer_.answers())
      if (const auto it = kept_.find(answer.request_frame); it != kept_.end())
        it->second["flags"].cast<py::list>().append(from_json(analysis::flag_json(answer.flag)));
    if (!fa.rc && !fa.cm && fa.flags.empty()) return py::none();
    py::dict a = from_json(analysis::analysis_json(fa)).cast<py::dict>();
    if (fa.rc && fa.rc->role == analysis::RcRole::kRequest) {
      kept_.emplace(number, a);
      order_.push_back(number);
      if (order_.size() > kKept) {
        kept_.erase(order_.front());
        order_.pop_front();
      }
    }
    return a;
  }

 private:
  static constexpr std::size_t kKept = 65536;
  // Bounded state, per-frame results not kept: memory stays flat however long the capture.
  static analysis::AnalyzerOptions options() {
    analysis::AnalyzerOptions o;
    o.keep_results = false;
    return o;
  }
  analysis::StreamAnalyzer analyzer_;
  std::unordered_map<std::uint64_t, py::dict> kept_;
  std::deque<std::uint64_t> order_;
};

// A capture file read frame by frame; the GIL is released while libpcap reads.
class CaptureIterator {
 public:
  CaptureIterator(const std::string& path, DecodeOptions options, bool analyze)
      : options_(options) {
    auto r = PcapReader::open(path);
    if (!r) raise("CaptureError", r.error());
    reader_ = std::make_unique<PcapReader>(std::move(*r));
    if (analyze) analysis_ = std::make_unique<Analysis>();
  }
  std::shared_ptr<Frame> next() {
    std::expected<std::optional<CaptureFrame>, std::string> got;
    {
      py::gil_scoped_release release;
      got = reader_->next();
    }
    if (!got) raise("CaptureError", got.error());
    if (!*got) throw py::stop_iteration();
    const auto& c = **got;
    auto frame =
        decode_frame({c.data.begin(), c.data.end()}, reader_->link_type(), options_, c.time_ns);
    if (analysis_)
      frame->analysis = analysis_->add(reader_->frames_read(),
                                       wire_clock(c, reader_->link_type()).time_ns, frame->packet);
    return frame;
  }
  int link() const { return static_cast<int>(reader_->link_type()); }

 private:
  std::unique_ptr<PcapReader> reader_;
  DecodeOptions options_;
  std::unique_ptr<Analysis> analysis_;
};

}  // namespace

void register_packets(py::module_& m) {
  py::class_<Frame, std::shared_ptr<Frame>>(m, "Frame",
                                            "A decoded frame: its bytes, layers and findings.")
      .def_property_readonly(
          "data",
          [](const Frame& f) {
            return py::bytes(reinterpret_cast<const char*>(f.bytes.data()), f.bytes.size());
          },
          "The frame's bytes as captured.")
      .def_readonly("time_ns", &Frame::time_ns, "Capture time since the Unix epoch (ns), or 0.")
      .def_property_readonly("link", [](const Frame& f) { return static_cast<int>(f.link); })
      .def_property_readonly("layers", &frame_layers, "Layer class names in wire order.")
      .def(
          "has",
          [](const Frame& f, const std::string& cls) {
            const LayerSpec* spec = find_layer(cls);
            return spec && spec->count(f.packet) > 0;
          },
          py::arg("cls"))
      .def(
          "fields",
          [](const Frame& f, const std::string& cls, std::size_t index) -> py::object {
            const LayerSpec* spec = find_layer(cls);
            if (!spec) raise("DecodeError", fmt::format("unknown layer '{}'", cls));
            if (spec->count(f.packet) <= index) return py::none();
            return layer_fields(f.packet, *spec, index);
          },
          py::arg("cls"), py::arg("index") = 0,
          "The fields of one layer as a dict, or None when the frame does not have it.")
      .def(
          "field",
          [](const Frame& f, const std::string& cls, const std::string& name) -> py::object {
            const LayerSpec* spec = find_layer(cls);
            const FieldSpec* field = spec ? spec->field(name) : nullptr;
            if (!field) raise("DecodeError", fmt::format("{} has no field '{}'", cls, name));
            if (spec->count(f.packet) == 0) return py::none();
            return field->get(f.packet, 0);
          },
          py::arg("cls"), py::arg("name"), "One field, or None when the layer is absent.")
      .def_property_readonly(
          "findings",
          [](const Frame& f) {
            py::list out;
            static constexpr const char* kSeverity[] = {"note", "warning", "error"};
            for (const auto& x : f.packet.findings)
              out.append(py::make_tuple(std::string(x.code_name()),
                                        std::string(layer_name(x.layer)), x.offset, x.message,
                                        kSeverity[static_cast<int>(x.severity())]));
            return out;
          },
          "(code, layer, offset, message, severity) for each finding.")
      .def_property_readonly(
          "icrc",
          [](const Frame& f) -> py::object {
            if (!f.packet.icrc) return py::none();
            return py::make_tuple(f.packet.icrc->value, f.packet.icrc->expected);
          },
          "(carried, computed) ICRC, or None for a frame without one.")
      .def_property_readonly(
          "undecoded",
          [](const Frame& f) -> py::object {
            // Decoding stops at the first header cut short; from there on the frame is kept
            // as it came, never as a zero-filled header.
            std::size_t at = f.bytes.size() + 1;
            for (const auto& x : f.packet.findings)
              if (x.code == FindingCode::kTruncated) at = std::min<std::size_t>(at, x.offset);
            if (at > f.bytes.size()) return py::none();
            return py::make_tuple(at, py::bytes(reinterpret_cast<const char*>(f.bytes.data() + at),
                                                f.bytes.size() - at));
          },
          "(offset, bytes) from the first header cut short to the end of the frame, or None.")
      .def_property_readonly(
          "framing", [](const Frame& f) { return std::string(framing_name(f.packet.framing)); })
      .def_property_readonly(
          "analysis", [](const Frame& f) { return f.analysis; },
          "The stream analysis (read_pcap(analyze=True)) as `roceconf decode --json` has it, or "
          "None.")
      .def("summary", [](const Frame& f) { return summarize(f.packet, f.icrc_checked); })
      .def("__len__", [](const Frame& f) { return f.bytes.size(); });

  m.def(
      "decode",
      [](const py::bytes& data, int link, std::uint16_t udp_port, bool check_icrc) {
        const std::string_view s = data;
        DecodeOptions o;
        o.udp_port = udp_port;
        o.check_icrc = check_icrc;
        return decode_frame({s.begin(), s.end()}, link_of(link), o);
      },
      py::arg("data"), py::arg("link") = 1, py::arg("udp_port") = Udp::kRocePort,
      py::arg("check_icrc") = true, "Decodes one frame; never fails (problems are findings).");
  m.def("encode", &encode_layers, py::arg("layers"),
        "Encodes [(class name, {field: value})] in wire order; computed fields fill themselves "
        "in unless given.");
  m.def(
      "icrc",
      [](const py::bytes& data, int link) -> py::object {
        const std::string_view s = data;
        const std::vector<std::uint8_t> b(s.begin(), s.end());
        const Packet p = decode(b, link_of(link));
        if (!p.icrc) return py::none();
        return py::int_(p.icrc->expected);
      },
      py::arg("data"), py::arg("link") = 1, "The ICRC the frame should carry, or None.");

  py::class_<CaptureIterator>(m, "CaptureIterator")
      .def(py::init(
               [](const std::string& path, std::uint16_t udp_port, bool check_icrc, bool analyze) {
                 DecodeOptions o;
                 o.udp_port = udp_port;
                 o.check_icrc = check_icrc;
                 return std::make_unique<CaptureIterator>(path, o, analyze);
               }),
           py::arg("path"), py::arg("udp_port") = Udp::kRocePort, py::arg("check_icrc") = true,
           py::arg("analyze") = false)
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &CaptureIterator::next)
      .def_property_readonly("link", &CaptureIterator::link);
}

}  // namespace roceconf::python
