// The one JSON codec of the control API's types (messages.h): requests to their JSON objects
// (with "op"; the transport adds "id"), and response objects back to their types. Requests carry
// only the fields ops.h declares for their op (codec_test checks it), responses are read with
// the request reader's rules (fields.h: numbers or "0x.." strings, hex bytes), and fields a
// response adds beyond its type are ignored, so a newer server still answers an older client.
#pragma once

#include <expected>
#include <string>

#include <nlohmann/json.hpp>

#include "control/messages.h"

namespace roceconf::control {

nlohmann::json encode(const Hello&);
nlohmann::json encode(const Auth&);
nlohmann::json encode(const AllocPd&);
nlohmann::json encode(const DeallocPd&);
nlohmann::json encode(const RegMr&);
nlohmann::json encode(const DeregMr&);
nlohmann::json encode(const WriteMr&);
nlohmann::json encode(const ReadMr&);
nlohmann::json encode(const AllocMw&);
nlohmann::json encode(const DeallocMw&);
nlohmann::json encode(const BindMw&);
nlohmann::json encode(const CreateCq&);
nlohmann::json encode(const DestroyCq&);
nlohmann::json encode(const ReqNotifyCq&);
nlohmann::json encode(const PollCq&);
nlohmann::json encode(const CqEvents&);
nlohmann::json encode(const CreateQp&);
nlohmann::json encode(const ModifyQp&);
nlohmann::json encode(const QueryQp&);
nlohmann::json encode(const DestroyQp&);
nlohmann::json encode(const PostSend&);
nlohmann::json encode(const PostRecv&);
nlohmann::json encode(const Counters&);
nlohmann::json encode(const KernelLog&);
nlohmann::json encode(const AsyncEvents&);
nlohmann::json encode(const Quirks&);
nlohmann::json encode(const CmConnect&);
nlohmann::json encode(const CmStatus&);
nlohmann::json encode(const CmDisconnect&);
nlohmann::json encode(const Reset&);

// The JSON forms of the structures inside requests (also what query_qp answers).
nlohmann::json encode(const QpAttr&);
nlohmann::json encode(const AddressVector&);
nlohmann::json encode(const QpCap&);
nlohmann::json encode(const SendWr&);
nlohmann::json encode(const RecvWr&);
// Responses' structures, as a server writes them (describe, field_text.h).
nlohmann::json encode(const WorkCompletion&);
nlohmann::json encode(const CmStatusReply&);

// Reads a response object (ok = true) as `Reply`; the error names the field that is missing or
// malformed ("poll_cq.wc[0].status: 'status' is missing").
template <typename Reply>
std::expected<Reply, std::string> decode(const nlohmann::json& response, std::string_view op);

// The request structures read back (field_text.h sets their fields by name): modify_qp's
// attributes ("where" prefixes errors: "modify_qp.attr") and a cm_connect request (its "op", if
// any, is not a field).
std::expected<QpAttr, std::string> decode_qp_attr(const nlohmann::json& attr,
                                                  std::string_view where);
std::expected<CmConnect, std::string> decode_cm_connect(const nlohmann::json& request);

// One line about a completion or an event, for verdicts and notes:
// "wr_id=1 status=SUCCESS opcode=SEND byte_len=0 qp_num=0x11".
std::string describe(const WorkCompletion& wc);
std::string describe(const AsyncEvent& event);
// modify_qp's attributes as sent: {"qp_state":"RTS","sq_psn":0}.
std::string describe(const QpAttr& attr);

}  // namespace roceconf::control
