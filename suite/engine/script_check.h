// Load-time checks of the keys of script steps that are not packet fields: connect/open/accept
// options, cm_status fields, control-API steps (post, poll, query, modify, read, write) and CM
// messages a case sends, and the comparison of control answers with a step's fields. Packet fields
// are the frame builder's (check_request) and the matcher's (check_expectation). Each verb's keys
// are declared once here.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "control/field_text.h"
#include "reports/result.h"
#include "suite/engine/assignments.h"
#include "suite/engine/connection.h"

namespace roceconf::engine {

// The options of `verb` ("connect", "open", "accept", "new", "status", "create cq",
// "post recv", "post send", "read", "write"); `cqs` are the CQ names made so far (checked when
// `check_cqs`).
std::expected<void, std::string> check_options(std::string_view verb, const Assignments& a,
                                               const std::set<std::string>& cqs, bool check_cqs);

// `poll CONNECTION ... field=value`: ibv_wc fields (and cq=NAME).
std::expected<void, std::string> check_completion(const std::string& conn, const Assignments& a,
                                                  const std::set<std::string>& cqs, bool check_cqs);

// `query` / `modify` (with expect=ok|ERRNO): ibv_qp_attr fields.
std::expected<void, std::string> check_qp_attributes(const std::string& conn, const Assignments& a,
                                                     bool modify);

// `send c REQ|REP|...|ClassPortInfo field=value`: a CM message's fields and MAD header keys.
std::expected<void, std::string> check_cm_send(std::string_view message, const Assignments& a);

// The whole-message send names (SEND, RDMA_WRITE, WRITE, SEND_WITH_IMM, RDMA_WRITE_WITH_IMM):
// the opcode of a one-packet message, whose keys a message takes.
std::optional<std::uint8_t> message_opcode(std::string_view op);

// `post send c op=NAME`: the control API's send opcode for NAME (its own names and the short
// ones: WRITE, WRITE_WITH_IMM, READ, FETCH_ADD, CMP_SWAP); nullopt for anything else.
std::optional<std::string_view> send_op_name(std::string_view op);

// `@c.FIELD`: the fields a connection holds, and their values.
std::expected<void, std::string> check_connection_field(std::string_view field);
std::expected<std::uint64_t, std::string> connection_field(const Connection& c,
                                                           std::string_view field);

// Compares `key=value` pairs with a control answer's fields (control/field_text.h: a completion,
// QP attributes, a cm_status answer): `A|B` takes any of the values, a number compares as a
// number. With `c`, qp_num=NAME and dest_qp_num=NAME of c's name mean its QPs' numbers. A diff
// names "PREFIX.key".
using FieldLookup = std::function<std::optional<control::FieldValue>(std::string_view)>;
std::vector<report::FieldDiff> compare_fields(const FieldLookup& field, const Assignments& want,
                                              std::string_view prefix,
                                              const Connection* c = nullptr);

// The assignments with `@c.FIELD` values as 0, so the checks of their keys can run at load.
Assignments with_references_as_numbers(const Assignments& a);

}  // namespace roceconf::engine
