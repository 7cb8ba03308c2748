#include "dissector/wireshark/connection_tap.h"

#include <epan/packet.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dissector/analysis/connection_stats.h"
#include "dissector/analysis/stream_analyzer.h"

namespace roceconf::wireshark {
namespace {

constexpr const char* kTapName = "roceconf";
constexpr const char* kTableName = "RoCE connections";

enum Column : guint {
  kRequester,
  kResponder,
  kCm,
  kPackets,
  kBytes,
  kMessages,
  kRetransmissions,
  kOutOfSequence,
  kDuplicates,
  kNaks,
  kRnr,
  kRnrWait,
  kP50,
  kP99,
  kGoodput,
  kNotCaptured,
  kGrade,
  kColumns
};

// Column names and tshark's printf formats (Wireshark's dialog ignores the formats).
stat_tap_table_item kFields[kColumns] = {
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Requester", "%-28s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Responder", "%-28s"},
    {TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "CM", "%3s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Packets", "%8u"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Bytes", "%11.0f"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Messages", "%8u"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Retransmissions", "%7u"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Out of sequence", "%5u"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Duplicates", "%5u"},
    {TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "NAKs seq/inv/acc/op/rd", "%13s"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "RNR NAKs", "%4u"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "RNR wait (ms)", "%9.3f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Response p50 (us)", "%10.1f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Response p99 (us)", "%10.1f"},
    {TABLE_ITEM_FLOAT, TAP_ALIGN_RIGHT, "Goodput (Mbit/s)", "%9.3f"},
    {TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Not captured", "%5u"},
    {TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Grade", "%s"},
};

// The listener's own analysis: one per process (Wireshark and tshark open one such table).
struct Listener {
  analysis::StreamAnalyzer analyzer;
  analysis::ConnectionStats stats;
  std::unordered_map<std::uint32_t, guint> rows;  // direction (request channel) -> row
  std::uint64_t frames = 0;

  Listener() : analyzer(options()) {}
  static analysis::AnalyzerOptions options() {
    analysis::AnalyzerOptions o;
    o.keep_results = false;
    return o;
  }
};
std::unique_ptr<Listener> listener;

guint clamp_uint(std::uint64_t v) {
  return v > G_MAXUINT ? G_MAXUINT : static_cast<guint>(v);
}

double micros(std::int64_t ns) {
  return ns < 0 ? 0.0 : static_cast<double>(ns) / 1e3;
}

void free_item(stat_tap_table*, guint, guint, stat_tap_table_item_type* item) {
  if (item->type == TABLE_ITEM_STRING) {
    g_free(const_cast<char*>(item->value.string_value));
    item->value.string_value = nullptr;
  }
}

void set_string(stat_tap_table* table, guint row, guint column, const std::string& s) {
  stat_tap_table_item_type* item = stat_tap_get_field_data(table, row, column);
  free_item(table, row, column, item);
  item->type = TABLE_ITEM_STRING;
  item->value.string_value = g_strdup(s.c_str());
}
void set_uint(stat_tap_table* table, guint row, guint column, std::uint64_t v) {
  stat_tap_table_item_type* item = stat_tap_get_field_data(table, row, column);
  item->type = TABLE_ITEM_UINT;
  item->value.uint_value = clamp_uint(v);
}
void set_float(stat_tap_table* table, guint row, guint column, double v) {
  stat_tap_table_item_type* item = stat_tap_get_field_data(table, row, column);
  item->type = TABLE_ITEM_FLOAT;
  item->value.float_value = v;
}

void fill_row(stat_tap_table* table, guint row, const analysis::DirectionStats& d) {
  set_string(table, row, kRequester, d.requester_text());
  set_string(table, row, kResponder, d.responder_text());
  set_string(table, row, kCm, d.connection != 0 ? std::to_string(d.connection) : "-");
  set_uint(table, row, kPackets, d.packets);
  set_float(table, row, kBytes, static_cast<double>(d.bytes));
  set_uint(table, row, kMessages, d.messages);
  set_uint(table, row, kRetransmissions, d.retransmissions);
  set_uint(table, row, kOutOfSequence, d.out_of_sequence);
  set_uint(table, row, kDuplicates, d.duplicates);
  set_string(table, row, kNaks, fmt::format("{}", fmt::join(d.naks, "/")));
  set_uint(table, row, kRnr, d.rnr_naks);
  set_float(table, row, kRnrWait, static_cast<double>(d.rnr_wait_ns) / 1e6);
  set_float(table, row, kP50, micros(d.response_time.quantile(0.5)));
  set_float(table, row, kP99, micros(d.response_time.quantile(0.99)));
  set_float(table, row, kGoodput, d.goodput_bps() / 1e6);
  set_uint(table, row, kNotCaptured, d.not_captured);
  set_string(table, row, kGrade, d.gradable() ? "complete" : "incomplete: not graded");
}

// Drops every row: a retap (new filter, reload) starts the table over.
void reset_table(stat_tap_table* table) {
  for (guint row = 0; row < table->num_elements; ++row) {
    for (guint column = 0; column < table->num_fields; ++column)
      free_item(table, row, column, &table->elements[row][column]);
    g_free(table->elements[row]);
  }
  g_free(table->elements);
  table->elements = nullptr;
  table->num_elements = 0;
  listener = std::make_unique<Listener>();
}

void init_table(stat_tap_table_ui* ui) {
  if (stat_tap_table* existing = stat_tap_find_table(ui, kTableName)) {
    reset_table(existing);
    return;
  }
  stat_tap_add_table(ui, stat_tap_init_table(kTableName, kColumns, 0, nullptr));
  listener = std::make_unique<Listener>();
}

tap_packet_status on_packet(void* tapdata, packet_info* pinfo, epan_dissect_t*, const void* data,
                            tap_flags_t) {
  const auto* frame = static_cast<const TapFrame*>(data);
  auto* stat = static_cast<stat_data_t*>(tapdata);
  if (frame == nullptr || frame->packet == nullptr || stat == nullptr || !listener)
    return TAP_PACKET_DONT_REDRAW;
  stat_tap_table* table = stat_tap_find_table(stat->stat_tap_data, kTableName);
  if (table == nullptr) return TAP_PACKET_DONT_REDRAW;
  try {
    const std::int64_t time_ns =
        static_cast<std::int64_t>(pinfo->abs_ts.secs) * 1000000000 + pinfo->abs_ts.nsecs;
    const analysis::FrameAnalysis& fa =
        listener->analyzer.add(++listener->frames, time_ns, *frame->packet);
    if (!fa.rc) return TAP_PACKET_DONT_REDRAW;
    const analysis::DirectionStats* d =
        listener->stats.add(*frame->packet, pinfo->fd->pkt_len, time_ns, *fa.rc);
    if (d == nullptr) return TAP_PACKET_DONT_REDRAW;
    const auto [it, created] = listener->rows.try_emplace(d->channel, table->num_elements);
    if (created) {
      std::array<stat_tap_table_item_type, kColumns> blank{};
      stat_tap_init_table_row(table, it->second, kColumns, blank.data());
    }
    fill_row(table, it->second, *d);
    return TAP_PACKET_REDRAW;
  } catch (...) {
    // Out of memory is the only way here; epan cannot take a C++ exception.
    return TAP_PACKET_FAILED;
  }
}

stat_tap_table_ui table_ui = {
    REGISTER_STAT_GROUP_GENERIC,
    "RoCE connections (roceconf)",
    kTapName,
    "roceconf,conn",
    init_table,
    on_packet,
    reset_table,
    free_item,
    nullptr,
    kColumns,
    kFields,
    0,
    nullptr,
    nullptr,
    0,
};

}  // namespace

int register_connection_tap() {
  const int tap = register_tap(kTapName);
  register_stat_tap_table_ui(&table_ui);
  return tap;
}

}  // namespace roceconf::wireshark
