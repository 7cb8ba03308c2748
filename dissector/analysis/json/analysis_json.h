// The stream analysis of one frame as JSON, with the names the Wireshark plugin's fields have
// (roceconf.psn.expected -> "psn": {"expected": ...}): what `roceconf decode --json` prints under
// "analysis" and Python's read_pcap(analyze=True) gives each packet. Its own library because the
// codec itself (also built for the fuzzers) does not depend on a JSON library.
#pragma once

#include <nlohmann/json.hpp>

#include "dissector/analysis/stream_analyzer.h"

namespace roceconf::analysis {

// {"name", "severity", "text"}.
nlohmann::ordered_json flag_json(const Flag& f);
// RC/UC ("channel", "role", "psn": {...} or the response's keys), CM ("cm_connection",
// "cm_message") and "flags". Judgements a later frame makes about this one (acked-by,
// nak-received) are not in it: they come with that later frame (StreamAnalyzer::answers()).
nlohmann::ordered_json analysis_json(const FrameAnalysis& fa);

}  // namespace roceconf::analysis
