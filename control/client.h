// The typed client of the control API (CONTROL_API.md): each op a method that takes its
// request (messages.h) and returns its typed response, or why not. The client owns no socket: a
// Transport carries one request object to the target and brings its response object back (the
// engine's socket and TCP client, suite/engine/control_client.h; a case's recorded control step;
// the reference NIC in process). The JSON on the wire is codec.h's.
#pragma once

#include <expected>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "control/codec.h"
#include "control/messages.h"

namespace roceconf::control {

// Why a request has no typed response.
struct Error {
  enum class Kind {
    kRefused,    // the target answered ok = false: errno_name and message are its
    kTransport,  // the request or its response was lost (closed socket, timeout, ...)
    kMalformed,  // the response lacks a field of its type, or has one of the wrong type
  };
  Kind kind = Kind::kRefused;
  std::string errno_name;             // "EINVAL", "ENOENT", ... (kRefused, when the target says)
  std::string message;                // one line
  std::optional<std::size_t> bad_wr;  // a refused post: the first WR not posted
};

template <typename T>
using Result = std::expected<T, Error>;

// One request object out, its response object back (ok or not); the error is a transport
// failure. The transport numbers requests ("id") itself when it needs to.
using Transport =
    std::function<std::expected<nlohmann::json, std::string>(const nlohmann::json& request)>;

class Client {
 public:
  explicit Client(Transport transport) : transport_(std::move(transport)) {}

  // Any request type of messages.h.
  template <typename Request>
  Result<typename Request::Reply> call(const Request& request) {
    const auto response = transport_(encode(request));
    if (!response) return std::unexpected(Error{Error::Kind::kTransport, {}, response.error(), {}});
    if (auto refused = refusal(*response, Request::kOp))
      return std::unexpected(std::move(*refused));
    auto reply = decode<typename Request::Reply>(*response, Request::kOp);
    if (!reply) return std::unexpected(Error{Error::Kind::kMalformed, {}, reply.error(), {}});
    return std::move(*reply);
  }

  Result<HelloReply> hello() { return call(Hello{}); }
  Result<AuthReply> auth(std::string mac) { return call(Auth{std::move(mac)}); }
  // hello; when the server asks for authentication (its hello carries a nonce), auth with
  // HMAC-SHA256(secret, nonce) and hello again. A server that asks when no secret is given, or
  // asks by a method this client does not know, is a kRefused error saying so.
  Result<HelloReply> handshake(const std::optional<std::string>& secret);

  Result<AllocPdReply> alloc_pd() { return call(AllocPd{}); }
  Result<Empty> dealloc_pd(std::uint32_t pd) { return call(DeallocPd{pd}); }
  Result<RegMrReply> reg_mr(const RegMr& r) { return call(r); }
  Result<Empty> dereg_mr(std::uint32_t handle) { return call(DeregMr{handle}); }
  Result<WriteMrReply> write_mr(const WriteMr& r) { return call(r); }
  Result<ReadMrReply> read_mr(const ReadMr& r) { return call(r); }
  Result<AllocMwReply> alloc_mw(std::uint32_t pd, std::uint32_t type) {
    return call(AllocMw{pd, type});
  }
  Result<Empty> dealloc_mw(std::uint32_t mw) { return call(DeallocMw{mw}); }
  Result<BindMwReply> bind_mw(const BindMw& r) { return call(r); }
  Result<CreateCqReply> create_cq(std::uint32_t depth) { return call(CreateCq{depth}); }
  Result<Empty> destroy_cq(std::uint32_t cq) { return call(DestroyCq{cq}); }
  Result<Empty> req_notify_cq(std::uint32_t cq, bool solicited_only = false) {
    return call(ReqNotifyCq{cq, solicited_only});
  }
  Result<PollCqReply> poll_cq(std::uint32_t cq, std::optional<std::uint32_t> max = std::nullopt) {
    return call(PollCq{cq, max});
  }
  Result<CqEventsReply> cq_events(std::optional<std::uint32_t> wait_ms = std::nullopt) {
    return call(CqEvents{wait_ms});
  }
  Result<CreateQpReply> create_qp(const CreateQp& r) { return call(r); }
  Result<ModifyQpReply> modify_qp(std::uint32_t qp_num, QpAttr attr) {
    return call(ModifyQp{qp_num, std::move(attr)});
  }
  Result<QueryQpReply> query_qp(std::uint32_t qp_num) { return call(QueryQp{qp_num}); }
  Result<Empty> destroy_qp(std::uint32_t qp_num) { return call(DestroyQp{qp_num}); }
  Result<PostReply> post_send(std::uint32_t qp_num, std::vector<SendWr> wrs) {
    return call(PostSend{qp_num, std::move(wrs)});
  }
  Result<PostReply> post_recv(std::uint32_t qp_num, std::vector<RecvWr> wrs) {
    return call(PostRecv{qp_num, std::move(wrs)});
  }
  Result<CountersReply> counters(std::optional<std::vector<std::string>> names = std::nullopt) {
    return call(Counters{std::move(names)});
  }
  Result<KernelLogReply> kernel_log(const KernelLog& r) { return call(r); }
  Result<AsyncEventsReply> async_events() { return call(AsyncEvents{}); }
  Result<QuirksReply> quirks() { return call(Quirks{}); }
  Result<CmConnectReply> cm_connect(const CmConnect& r) { return call(r); }
  Result<CmStatusReply> cm_status(std::uint32_t qp_num) { return call(CmStatus{qp_num}); }
  Result<Empty> cm_disconnect(std::uint32_t qp_num) { return call(CmDisconnect{qp_num}); }
  Result<Empty> reset() { return call(Reset{}); }

 private:
  // The error of a response with ok = false (or without ok), else nullopt.
  static std::optional<Error> refusal(const nlohmann::json& response, std::string_view op);

  Transport transport_;
};

}  // namespace roceconf::control
