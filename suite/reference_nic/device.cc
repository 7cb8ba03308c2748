#include "suite/reference_nic/device.h"

#include <algorithm>
#include <utility>

namespace roceconf::target {

namespace {
std::uint64_t splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
}  // namespace

Device::Device(DeviceConfig config)
    : attr_(config.attr),
      quirks_(config.quirks),
      port_(std::move(config.port)),
      mrs_(MrTable::Limits{config.attr.max_mr, config.attr.max_mr_size}),
      first_qpn_(std::clamp<std::uint32_t>(config.first_qpn, 2, 0xFFFFFF)),
      next_qpn_(quirks_.has(Quirk::kSequentialQpns) ? first_qpn_ : 0) {
  std::uint64_t seed = config.seed != 0 ? config.seed : attr_.node_guid * 0xD1B54A32D192ED03ULL;
  for (auto& k : qpn_keys_) k = static_cast<std::uint32_t>(splitmix(seed));
  const MrTable::KeyPolicy keys = quirks_.has(Quirk::kSequentialRkeys)
                                      ? MrTable::KeyPolicy::kSequential
                                  : quirks_.has(Quirk::kRkeyReuse) ? MrTable::KeyPolicy::kReuse
                                                                   : MrTable::KeyPolicy::kRandom;
  mrs_.set_key_policy(keys, splitmix(seed));
  mrs_.set_check_pd(!quirks_.has(Quirk::kPdUnchecked));
  mrs_.set_va_wrap_unchecked(quirks_.has(Quirk::kRethVaWraps));
  mws_.set_quirks(quirks_);
  bool has_gid = false;
  for (std::uint32_t i = 0; i < port_.gid_table.size(); ++i) {
    has_gid |= port_.gid_table.at(i) != nullptr;
  }
  if (!has_gid && port_.gid_table.size() > 0) {
    (void)port_.gid_table.set(0, GidEntry{gid_link_local(port_.mac), GidType::kRoceV2});
  }
}

// ---- PDs ---------------------------------------------------------------------------------------

VerbsResult<std::uint32_t> Device::alloc_pd() {
  if (pds_.size() >= attr_.max_pd) {
    return verbs_error(VerbsStatus::kNoMem, "alloc_pd: {} PDs exist (max_pd)", attr_.max_pd);
  }
  const std::uint32_t h = next_pd_++;
  pds_[h] = Pd{h};
  return h;
}

VerbsResult<void> Device::dealloc_pd(std::uint32_t handle) {
  const auto it = pds_.find(handle);
  if (it == pds_.end()) return verbs_error(VerbsStatus::kNoEnt, "dealloc_pd: no PD {}", handle);
  const Pd& pd = it->second;
  if (const std::size_t windows = mws_.in_pd(handle)) {
    return verbs_error(VerbsStatus::kBusy, "dealloc_pd: PD {} still has {} memory window{}", handle,
                       windows, windows == 1 ? "" : "s");
  }
  if (pd.in_use()) {
    return verbs_error(VerbsStatus::kBusy, "dealloc_pd: PD {} still has {} MR{} and {} QP{}",
                       handle, pd.mr_count, pd.mr_count == 1 ? "" : "s", pd.qp_count,
                       pd.qp_count == 1 ? "" : "s");
  }
  pds_.erase(it);
  return {};
}

const Pd* Device::pd(std::uint32_t handle) const {
  const auto it = pds_.find(handle);
  return it == pds_.end() ? nullptr : &it->second;
}

// ---- MRs ---------------------------------------------------------------------------------------

VerbsResult<Mr*> Device::reg_mr(const MrInit& init) {
  const auto pd = pds_.find(init.pd);
  if (pd == pds_.end()) return verbs_error(VerbsStatus::kNoEnt, "reg_mr: no PD {}", init.pd);
  auto mr = mrs_.reg(init);
  if (mr) ++pd->second.mr_count;
  return mr;
}

VerbsResult<void> Device::dereg_mr(std::uint32_t handle) {
  const Mr* mr = mrs_.find(handle);
  if (!mr) return verbs_error(VerbsStatus::kNoEnt, "dereg_mr: no MR {}", handle);
  // As ibv_dereg_mr: a region with bound windows stays.
  if (const std::size_t windows = mws_.bound_to_mr(handle)) {
    return verbs_error(VerbsStatus::kBusy, "dereg_mr: MR {} has {} bound memory window{}", handle,
                       windows, windows == 1 ? "" : "s");
  }
  const std::uint32_t pd = mr->pd();
  auto ok = mrs_.dereg(handle);
  if (ok) --pds_.at(pd).mr_count;
  return ok;
}

// ---- CQs ---------------------------------------------------------------------------------------

VerbsResult<Cq*> Device::create_cq(std::uint32_t depth) {
  if (depth == 0 || depth > attr_.max_cqe) {
    return verbs_error(VerbsStatus::kInval, "create_cq: depth {} is outside 1..{} (max_cqe)", depth,
                       attr_.max_cqe);
  }
  if (cqs_.size() >= attr_.max_cq) {
    return verbs_error(VerbsStatus::kNoMem, "create_cq: {} CQs exist (max_cq)", attr_.max_cq);
  }
  const std::uint32_t h = next_cq_++;
  auto cq = std::make_unique<Cq>(
      h, depth,
      Cq::Env{&events_, &channel_, &counters_, quirks_.has(Quirk::kCqOverflowLate),
              quirks_.has(Quirk::kSolicitedEventAlways), quirks_.has(Quirk::kCqStaysArmed),
              quirks_.has(Quirk::kCqErrorSpills) ? &cq_spilled_ : nullptr});
  Cq* raw = cq.get();
  cqs_[h] = std::move(cq);
  return raw;
}

VerbsResult<void> Device::destroy_cq(std::uint32_t handle) {
  const auto it = cqs_.find(handle);
  if (it == cqs_.end()) return verbs_error(VerbsStatus::kNoEnt, "destroy_cq: no CQ {}", handle);
  // The cq-destroy-in-use defect takes the handle away but keeps the CQ for the QPs using it.
  if (it->second->use_count() && quirks_.has(Quirk::kCqDestroyInUse)) {
    orphaned_cqs_.push_back(std::move(it->second));
    cqs_.erase(it);
    return {};
  }
  if (const std::uint32_t n = it->second->use_count()) {
    return verbs_error(VerbsStatus::kBusy, "destroy_cq: CQ {} is used by {} QP{}", handle, n,
                       n == 1 ? "" : "s");
  }
  cqs_.erase(it);
  return {};
}

Cq* Device::cq(std::uint32_t handle) {
  const auto it = cqs_.find(handle);
  return it == cqs_.end() ? nullptr : it->second.get();
}

// ---- QPs ---------------------------------------------------------------------------------------

VerbsResult<std::uint32_t> Device::allocate_qpn(QpType type) {
  if (type == QpType::kGsi) {
    if (qps_.contains(kGsiQpn)) {
      return verbs_error(VerbsStatus::kExist, "create_qp: the GSI QP (QP1) already exists");
    }
    return kGsiQpn;
  }
  if (quirks_.has(Quirk::kSequentialQpns)) {
    // Forward through [first_qpn, 2^24), skipping live QPNs.
    const std::uint32_t range = 0xFFFFFF - first_qpn_ + 1;
    for (std::uint32_t tries = 0; tries < range; ++tries) {
      const std::uint32_t qpn = next_qpn_;
      next_qpn_ = next_qpn_ >= 0xFFFFFF ? first_qpn_ : next_qpn_ + 1;
      if (!qps_.contains(qpn)) return qpn;
    }
  } else {
    // A counter through a keyed permutation of the 24-bit space: unpredictable to an off-path
    // sender (ReDMArk), and a destroyed QPN does not come back until the counter wraps.
    for (std::uint32_t tries = 0; tries <= 0xFFFFFF; ++tries) {
      const std::uint32_t qpn = permute_qpn(next_qpn_);
      next_qpn_ = (next_qpn_ + 1) & 0xFFFFFF;
      if (qpn >= first_qpn_ && !qps_.contains(qpn)) return qpn;
    }
  }
  return verbs_error(VerbsStatus::kNoMem, "create_qp: no free QP number in [{:#x}, 0xffffff]",
                     first_qpn_);
}

VerbsResult<Qp*> Device::create_qp(const QpInit& init) {
  const auto pd = pds_.find(init.pd);
  if (pd == pds_.end()) return verbs_error(VerbsStatus::kNoEnt, "create_qp: no PD {}", init.pd);
  Cq* scq = cq(init.send_cq);
  if (!scq) return verbs_error(VerbsStatus::kNoEnt, "create_qp: no send CQ {}", init.send_cq);
  Cq* rcq = cq(init.recv_cq);
  if (!rcq) return verbs_error(VerbsStatus::kNoEnt, "create_qp: no receive CQ {}", init.recv_cq);
  if (auto ok = Qp::validate_init(init, attr_.qp); !ok) return std::unexpected(ok.error());
  if (qps_.size() >= attr_.max_qp) {
    return verbs_error(VerbsStatus::kNoMem, "create_qp: {} QPs exist (max_qp)", attr_.max_qp);
  }
  auto qpn = allocate_qpn(init.qp_type);
  if (!qpn) return std::unexpected(qpn.error());

  auto qp = std::make_unique<Qp>(
      *qpn, init, *scq, *rcq,
      Qp::Env{&port_, &attr_.qp, &events_, quirks_.has(Quirk::kIllegalTransitionAccepted),
              quirks_.has(Quirk::kPostBeforeReady), quirks_.has(Quirk::kCqOverrunKeepsQp)});
  Qp* raw = qp.get();
  qps_[*qpn] = std::move(qp);
  qp_age_[next_qp_serial_++] = *qpn;
  ++pd->second.qp_count;
  scq->attach();
  rcq->attach();
  return raw;
}

VerbsResult<void> Device::destroy_qp(std::uint32_t qp_num) {
  const auto it = qps_.find(qp_num);
  if (it == qps_.end()) {
    return verbs_error(VerbsStatus::kNoEnt, "destroy_qp: no QP {:#x}", qp_num);
  }
  Qp& qp = *it->second;
  // Its completions go with it (as RESET), so a later QP never sees them.
  qp.send_cq().purge_qp(qp_num);
  qp.recv_cq().purge_qp(qp_num);
  qp.send_cq().detach();
  qp.recv_cq().detach();
  --pds_.at(qp.pd()).qp_count;
  mws_.qp_destroyed(qp_num);
  std::erase_if(qp_age_, [&](const auto& entry) { return entry.second == qp_num; });
  qps_.erase(it);
  return {};
}

Qp* Device::qp(std::uint32_t qp_num) {
  const auto it = qps_.find(qp_num);
  return it == qps_.end() ? nullptr : it->second.get();
}

// ---- verbs by handle ---------------------------------------------------------------------------

VerbsResult<void> Device::modify_qp(std::uint32_t qp_num, const QpAttr& attr, QpAttrMask mask) {
  Qp* q = qp(qp_num);
  if (!q) return verbs_error(VerbsStatus::kNoEnt, "modify_qp: no QP {:#x}", qp_num);
  return q->modify(attr, mask);
}

VerbsResult<QpAttr> Device::query_qp(std::uint32_t qp_num) {
  Qp* q = qp(qp_num);
  if (!q) return verbs_error(VerbsStatus::kNoEnt, "query_qp: no QP {:#x}", qp_num);
  return q->query();
}

PostResult Device::post_send(std::uint32_t qp_num, std::span<const SendWr> wrs) {
  Qp* q = qp(qp_num);
  if (!q) {
    return std::unexpected(PostError{
        0, VerbsError{VerbsStatus::kNoEnt, fmt::format("post_send: no QP {:#x}", qp_num)}});
  }
  return q->post_send(wrs);
}

PostResult Device::post_recv(std::uint32_t qp_num, std::span<const RecvWr> wrs) {
  Qp* q = qp(qp_num);
  if (!q) {
    return std::unexpected(PostError{
        0, VerbsError{VerbsStatus::kNoEnt, fmt::format("post_recv: no QP {:#x}", qp_num)}});
  }
  return q->post_recv(wrs);
}

VerbsResult<std::vector<Cqe>> Device::poll_cq(std::uint32_t handle, std::size_t max) {
  Cq* c = cq(handle);
  if (!c) return verbs_error(VerbsStatus::kNoEnt, "poll_cq: no CQ {}", handle);
  return c->poll(max);
}

VerbsResult<void> Device::req_notify_cq(std::uint32_t handle, bool solicited_only) {
  Cq* c = cq(handle);
  if (!c) return verbs_error(VerbsStatus::kNoEnt, "req_notify_cq: no CQ {}", handle);
  c->req_notify(solicited_only);
  return {};
}

std::vector<std::uint32_t> Device::pd_handles() const {
  std::vector<std::uint32_t> out;
  for (const auto& [h, pd] : pds_) out.push_back(h);
  return out;
}

std::vector<std::uint32_t> Device::cq_handles() const {
  std::vector<std::uint32_t> out;
  for (const auto& [h, cq] : cqs_) out.push_back(h);
  return out;
}

std::vector<std::uint32_t> Device::qp_nums_by_age() const {
  std::vector<std::uint32_t> out;
  for (const auto& [serial, n] : qp_age_) out.push_back(n);
  return out;
}

std::uint32_t Device::permute_qpn(std::uint32_t counter) const {
  // Each step is a bijection of [0, 2^24): key XOR, multiplication by an odd number, xorshift.
  std::uint32_t x = counter & 0xFFFFFF;
  for (const std::uint32_t k : qpn_keys_) {
    x = (x ^ k) & 0xFFFFFF;
    x = (x * 0x2C1B3Du) & 0xFFFFFF;
    x ^= x >> 11;
    x = (x * 0x9E3779u) & 0xFFFFFF;
    x ^= x >> 7;
  }
  return x;
}

std::vector<std::uint32_t> Device::qp_nums() const {
  std::vector<std::uint32_t> out;
  for (const auto& [n, qp] : qps_) out.push_back(n);
  return out;
}

}  // namespace roceconf::target
