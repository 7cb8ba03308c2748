// The reference NIC's verbs resources (IBA Vol 1 ch. 10-11, the verbs of libibverbs): one device
// with one RoCEv2 port owning its protection domains, memory regions, completion queues, queue
// pairs, GID and P_Key tables, counters, completion channel and asynchronous event queue.
//
// Objects are named by small integers so the control socket (JSON) can refer to them: PDs, CQs
// and MRs by handles counted from 1 and never reused, QPs by their QP number. QPNs start at 0x11
// and are not reused while the QP lives (nor soon after: allocation moves forward and wraps at
// 2^24); QP1 is the GSI QP (the CM agent's), QP0 does not exist on RoCE.
//
// Thread safety: none. A Device belongs to the target's event loop, which calls every verb, the
// transport and the control API from one thread; nothing here locks. Objects returned by pointer
// live until destroyed through the Device.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "suite/reference_nic/async_events.h"
#include "suite/reference_nic/counters.h"
#include "suite/reference_nic/cq.h"
#include "suite/reference_nic/errors.h"
#include "suite/reference_nic/memory_window.h"
#include "suite/reference_nic/mr.h"
#include "suite/reference_nic/pd.h"
#include "suite/reference_nic/port_tables.h"
#include "suite/reference_nic/qp.h"
#include "suite/reference_nic/quirks.h"

namespace roceconf::target {

// What ibv_query_device reports (the subset the target enforces).
struct DeviceAttr {
  std::uint64_t node_guid = 0x020000FFFE000001;  // EUI-64 of the default MAC
  std::uint32_t max_qp = 1u << 16;
  std::uint32_t max_cq = 1u << 14;
  std::uint32_t max_cqe = (1u << 16) - 1;
  std::uint32_t max_pd = 1u << 14;
  std::uint32_t max_mr = 1u << 16;
  std::uint64_t max_mr_size = 1ull << 30;
  QpLimits qp;
};

struct DeviceConfig {
  DeviceAttr attr;
  // An empty GID table gets the link-local GID of the MAC at index 0, as every RoCE port has.
  Port port;
  // The lowest QPN handed out. QPNs are drawn from [first_qpn, 2^24) in a seeded random order
  // that repeats none before the space is used up (one after the other under sequential-qpns).
  std::uint32_t first_qpn = 0x11;
  // Seeds QPNs and memory keys; 0 derives one from the node GUID, so a run repeats exactly.
  std::uint64_t seed = 0;
  Quirks quirks;  // the resource-level defects (CQ overflow, QP transitions)
};

class Device {
 public:
  static constexpr std::uint32_t kGsiQpn = 1;

  explicit Device(DeviceConfig config = {});
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceAttr& attr() const { return attr_; }
  const Quirks& quirks() const { return quirks_; }
  Port& port() { return port_; }
  const Port& port() const { return port_; }
  Counters& counters() { return counters_; }
  const Counters& counters() const { return counters_; }
  CompChannel& comp_channel() { return channel_; }
  AsyncEventQueue& async_event_queue() { return events_; }
  // ibv_get_async_event, without blocking: the oldest event, if any.
  std::optional<AsyncEvent> poll_async_event() { return events_.poll(); }
  // Every pending event, oldest first; the queue is empty afterwards.
  std::vector<AsyncEvent> async_events() { return events_.drain(); }

  // ---- protection domains ----
  VerbsResult<std::uint32_t> alloc_pd();
  // EBUSY while MRs or QPs of the PD exist.
  VerbsResult<void> dealloc_pd(std::uint32_t pd);
  const Pd* pd(std::uint32_t handle) const;

  // ---- memory regions ----
  // ENOENT for an unknown PD; otherwise as MrTable::reg.
  VerbsResult<Mr*> reg_mr(const MrInit& init);
  VerbsResult<void> dereg_mr(std::uint32_t handle);
  Mr* mr(std::uint32_t handle) { return mrs_.find(handle); }
  MrTable& mr_table() { return mrs_; }

  // ---- memory windows (device_windows.cc) ----
  // ENOENT for an unknown PD, EINVAL for a type other than 1 or 2.
  VerbsResult<Mw*> alloc_mw(std::uint32_t pd, MwType type);
  VerbsResult<void> dealloc_mw(std::uint32_t handle);
  Mw* mw(std::uint32_t handle) { return mws_.find(handle); }
  MwTable& mw_table() { return mws_; }
  // The bind verb (type 1): immediate errors (ENOENT, EINVAL, and the QP's post errors), else
  // a BIND_MW WQE on the QP's send queue and the window's new R_Key. The bind itself happens
  // when the WQE runs; a failure completes it with MW_BIND_ERR.
  VerbsResult<std::uint32_t> bind_mw(std::uint32_t qp_num, MwBind bind, std::uint64_t wr_id,
                                     std::uint32_t send_flags);
  // Runs a BIND_MW or LOCAL_INV WQE of `qp`: the completion status.
  WcStatus execute_local_op(Qp& qp, const SendWr& wr);
  // The responder's R_Key check for a request arriving on `qp`: a region's or a window's key.
  AccessResult check_remote(const Qp& qp, std::uint32_t rkey, std::uint64_t va, std::uint64_t len,
                            AccessFlags needed);

  // ---- completion queues ----
  // EINVAL for depth 0 or above max_cqe.
  VerbsResult<Cq*> create_cq(std::uint32_t depth);
  // EBUSY while a QP uses the CQ.
  VerbsResult<void> destroy_cq(std::uint32_t handle);
  Cq* cq(std::uint32_t handle);

  // ---- queue pairs ----
  // ENOENT for unknown PD/CQs, EINVAL for caps above the limits, EEXIST for a second GSI QP,
  // ENOMEM at max_qp.
  VerbsResult<Qp*> create_qp(const QpInit& init);
  VerbsResult<void> destroy_qp(std::uint32_t qp_num);
  Qp* qp(std::uint32_t qp_num);

  // ---- the verbs by handle, as the control API calls them (ENOENT for unknown handles) ----
  VerbsResult<void> modify_qp(std::uint32_t qp_num, const QpAttr& attr, QpAttrMask mask);
  VerbsResult<QpAttr> query_qp(std::uint32_t qp_num);
  PostResult post_send(std::uint32_t qp_num, std::span<const SendWr> wrs);
  PostResult post_recv(std::uint32_t qp_num, std::span<const RecvWr> wrs);
  VerbsResult<std::vector<Cqe>> poll_cq(std::uint32_t cq, std::size_t max);
  VerbsResult<void> req_notify_cq(std::uint32_t cq, bool solicited_only);

  // Live objects, in ascending order (for listings).
  std::vector<std::uint32_t> pd_handles() const;
  std::vector<std::uint32_t> cq_handles() const;
  std::vector<std::uint32_t> qp_nums() const;
  // Live QPNs, the oldest first.
  std::vector<std::uint32_t> qp_nums_by_age() const;
  std::vector<std::uint32_t> mr_handles() const { return mrs_.handles(); }
  std::vector<std::uint32_t> mw_handles() const { return mws_.handles(); }

 private:
  VerbsResult<std::uint32_t> allocate_qpn(QpType type);
  std::uint32_t permute_qpn(std::uint32_t counter) const;

  DeviceAttr attr_;
  Quirks quirks_;
  std::vector<std::unique_ptr<Cq>> orphaned_cqs_;  // destroyed in use (cq-destroy-in-use)
  Port port_;
  Counters counters_;
  AsyncEventQueue events_;
  CompChannel channel_;
  bool cq_spilled_ = false;  // cq-error-spills: a CQ overran, and every CQ stops taking entries
  MrTable mrs_;
  MwTable mws_;
  std::map<std::uint32_t, Pd> pds_;
  // CQs before QPs: QPs hold references to CQs and are destroyed first.
  std::map<std::uint32_t, std::unique_ptr<Cq>> cqs_;
  std::map<std::uint32_t, std::unique_ptr<Qp>> qps_;
  std::uint32_t next_pd_ = 1;
  std::uint32_t next_cq_ = 1;
  std::uint32_t first_qpn_;
  std::uint32_t next_qpn_;  // sequential-qpns: the next candidate; else the counter permuted
  std::array<std::uint32_t, 3> qpn_keys_{};        // the permutation's round keys
  std::map<std::uint64_t, std::uint32_t> qp_age_;  // creation serial -> QPN
  std::uint64_t next_qp_serial_ = 0;
};

}  // namespace roceconf::target
