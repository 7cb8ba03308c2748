#include "control/ops.h"

#include <algorithm>

namespace roceconf::control {
namespace {

constexpr auto kOpKeys = std::to_array<OpKeys>({
    {"hello", keys::kNone},           {"capabilities", keys::kNone},
    {"alloc_pd", keys::kNone},        {"dealloc_pd", keys::kPd},
    {"reg_mr", keys::kRegMr},         {"dereg_mr", keys::kMrHandle},
    {"write_mr", keys::kWriteMr},     {"read_mr", keys::kReadMr},
    {"alloc_mw", keys::kAllocMw},     {"dealloc_mw", keys::kMw},
    {"bind_mw", keys::kBindMw},       {"create_cq", keys::kCreateCq},
    {"destroy_cq", keys::kCq},        {"req_notify_cq", keys::kReqNotifyCq},
    {"poll_cq", keys::kPollCq},       {"cq_events", keys::kCqEvents},
    {"create_qp", keys::kCreateQp},   {"modify_qp", keys::kModifyQp},
    {"query_qp", keys::kQpNum},       {"destroy_qp", keys::kQpNum},
    {"post_send", keys::kPost},       {"post_recv", keys::kPost},
    {"counters", keys::kCounters},    {"kernel_log", keys::kKernelLog},
    {"async_events", keys::kNone},    {"quirks", keys::kNone},
    {"cm_connect", keys::kCmConnect}, {"cm_status", keys::kQpNum},
    {"cm_disconnect", keys::kQpNum},  {"reset", keys::kNone},
});

constexpr bool same_order() {
  if (kOpKeys.size() != kOpNames.size()) return false;
  for (std::size_t i = 0; i < kOpNames.size(); ++i)
    if (kOpKeys[i].op != kOpNames[i]) return false;
  return true;
}
static_assert(same_order(), "kOpKeys must list kOpNames, in order");

}  // namespace

std::span<const OpKeys> op_keys() {
  return kOpKeys;
}

keys::List keys_of(std::string_view op) {
  const auto it =
      std::find_if(kOpKeys.begin(), kOpKeys.end(), [&](const OpKeys& k) { return k.op == op; });
  if (it != kOpKeys.end()) return it->keys;
  if (op == "auth") return keys::kAuth;
  return {};
}

}  // namespace roceconf::control
