#include "suite/reference_nic/cq.h"

#include <algorithm>
#include <array>
#include <utility>

namespace roceconf::target {
namespace {

// The names are the control API's (control/verbs_names.h); the enums here carry the same values.
static_assert(control::verbs::kWcStatus.size() ==
              static_cast<std::size_t>(WcStatus::kGeneralErr) + 1);
static_assert(control::verbs::kWcOpcode.back().value ==
              static_cast<std::uint32_t>(WcOpcode::kRecvRdmaWithImm));

}  // namespace

std::string_view wc_status_name(WcStatus status) {
  return control::verbs::name_of(control::verbs::kWcStatus, static_cast<std::uint32_t>(status))
      .value_or("UNKNOWN");
}

std::optional<WcStatus> wc_status_from_name(std::string_view name) {
  const auto v = control::verbs::value_of(control::verbs::kWcStatus, name);
  return v ? std::optional<WcStatus>(static_cast<WcStatus>(*v)) : std::nullopt;
}

std::string_view wc_opcode_name(WcOpcode opcode) {
  return control::verbs::name_of(control::verbs::kWcOpcode, static_cast<std::uint32_t>(opcode))
      .value_or("UNKNOWN");
}

std::optional<WcOpcode> wc_opcode_from_name(std::string_view name) {
  const auto v = control::verbs::value_of(control::verbs::kWcOpcode, name);
  return v ? std::optional<WcOpcode>(static_cast<WcOpcode>(*v)) : std::nullopt;
}

std::string_view cq_notify_name(CqNotify mode) {
  switch (mode) {
    case CqNotify::kNone:
      return "none";
    case CqNotify::kNextComp:
      return "next";
    case CqNotify::kSolicited:
      return "solicited";
  }
  return "?";
}

std::optional<std::uint32_t> CompChannel::get_event() {
  if (events_.empty()) return std::nullopt;
  const std::uint32_t h = events_.front();
  events_.pop_front();
  return h;
}

Cq::Cq(std::uint32_t handle, std::uint32_t depth, Env env)
    : handle_(handle), depth_(depth), env_(env) {}

Cq::PushResult Cq::push(const Cqe& cqe, bool solicited) {
  if (overflowed_ || (env_.spilled && *env_.spilled)) {
    if (env_.counters) ++env_.counters->cq_overflow;
    return PushResult::kDropped;
  }
  if (entries_.size() >= depth_) {
    if (env_.overflow_late && !late_lost_) {
      late_lost_ = true;
      return PushResult::kDropped;
    }
    // The CQ is now in error: one CQ_ERR for it, nothing queued from here on.
    overflowed_ = true;
    if (env_.spilled) *env_.spilled = true;
    if (env_.counters) ++env_.counters->cq_overflow;
    if (env_.events) {
      env_.events->push(env_.overflow_late ? AsyncEvent{AsyncEventType::kQpFatal, cqe.qp_num}
                                           : AsyncEvent{AsyncEventType::kCqErr, handle_});
    }
    return PushResult::kOverflow;
  }
  entries_.push_back(cqe);
  const bool fires = notify_ == CqNotify::kNextComp ||
                     (notify_ == CqNotify::kSolicited &&
                      (solicited || cqe.status != WcStatus::kSuccess || env_.solicited_always));
  if (fires) {
    if (!env_.stays_armed) notify_ = CqNotify::kNone;
    ++comp_events_;
    if (env_.channel) env_.channel->notify(handle_);
  }
  return PushResult::kQueued;
}

std::vector<Cqe> Cq::poll(std::size_t max) {
  const std::size_t n = std::min(max, entries_.size());
  std::vector<Cqe> out(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(n));
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(n));
  return out;
}

std::optional<Cqe> Cq::poll_one() {
  if (entries_.empty()) return std::nullopt;
  Cqe c = entries_.front();
  entries_.pop_front();
  return c;
}

void Cq::req_notify(bool solicited_only) {
  if (!solicited_only) {
    notify_ = CqNotify::kNextComp;
  } else if (notify_ == CqNotify::kNone) {
    notify_ = CqNotify::kSolicited;
  }
}

std::size_t Cq::purge_qp(std::uint32_t qp_num) {
  return std::erase_if(entries_, [&](const Cqe& c) { return c.qp_num == qp_num; });
}

}  // namespace roceconf::target
