#include "dissector/analysis/json/analysis_json.h"

namespace roceconf::analysis {

namespace {

using Json = nlohmann::ordered_json;

std::string_view severity_text(Severity s) {
  return s == Severity::kError ? "error" : s == Severity::kWarning ? "warning" : "note";
}

}  // namespace

Json flag_json(const Flag& f) {
  return Json{{"name", f.name()}, {"severity", severity_text(f.severity())}, {"text", f.text()}};
}

Json analysis_json(const FrameAnalysis& fa) {
  Json a = Json::object();
  if (fa.rc) {
    const RcFrameInfo& rc = *fa.rc;
    a["channel"] = rc.channel;
    if (rc.peer_channel != 0) a["peer_channel"] = rc.peer_channel;
    if (rc.connection != 0) a["connection"] = rc.connection;
    a["role"] = rc.role == RcRole::kRequest ? "request" : "response";
    if (rc.role == RcRole::kRequest) {
      Json psn = Json::object();
      if (rc.expected_psn) psn["expected"] = *rc.expected_psn;
      psn["state"] = psn_state_name(rc.psn_state);
      if (rc.nak_due) psn["nak_due"] = true;
      if (rc.sender_next) psn["sender_next"] = *rc.sender_next;
      if (rc.retransmission) {
        psn["retransmission"] = true;
        if (rc.retransmission_of != 0) psn["retransmission_of"] = rc.retransmission_of;
        if (rc.resend_after_nak != 0) psn["resent_after_nak"] = rc.resend_after_nak;
      }
      a["psn"] = std::move(psn);
    } else {
      if (rc.request_frame != 0) a["ack_frame"] = rc.request_frame;
      if (rc.acked_count != 0) a["acked_count"] = rc.acked_count;
      if (rc.nak_cause_frame != 0) a["nak_cause"] = rc.nak_cause_frame;
      if (rc.not_captured != 0) a["not_captured"] = rc.not_captured;
      if (rc.capture_gaps != 0) a["capture_gaps"] = rc.capture_gaps;
    }
  }
  if (fa.cm) {
    a["cm_connection"] = fa.cm->connection;
    a["cm_message"] = fa.cm->message;
  }
  Json flags = Json::array();
  for (const Flag& f : fa.flags) flags.push_back(flag_json(f));
  a["flags"] = std::move(flags);
  return a;
}

}  // namespace roceconf::analysis
