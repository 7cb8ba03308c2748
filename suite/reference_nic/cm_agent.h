// The CM agent on QP1 (IBA Vol 1 ch. 12, spec-facts §9): passive and active connection
// establishment (REQ/MRA/REP/RTU/REJ), release (DREQ/DREP), SIDR, duplicate and stale REQ
// handling, REP retransmission and timeouts, listeners by service ID including rdma_cm
// (Annex A11) service IDs.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dissector/packet.h"
#include "suite/reference_nic/cm_connection.h"
#include "suite/reference_nic/qp.h"

namespace roceconf::target {

class Nic;

// A SIDR_REP's answer for a datagram service (IBA 12.11): the UD QP and its Q_Key.
struct SidrAnswer {
  std::uint32_t qp_num = 0;
  std::uint32_t qkey = 0;
  std::vector<std::uint8_t> private_data;  // at most 136 bytes
};

// What an application listening on a service ID provides (the passive side).
struct ListenerCallbacks {
  // Creates the QP (in RESET) that will take the connection asked for by `req`; the agent then
  // moves it through INIT and RTR from the REQ's fields and to RTS on RTU or first data.
  // Returns its QP number, or a REJ reason (1 = no QP available, 3 = no resources ...).
  std::function<std::expected<std::uint32_t, std::uint16_t>(const CmReq& req)> create_qp;
  // REP private data (at most 196 bytes) for the QP, asked once it is in RTR.
  std::function<std::vector<std::uint8_t>(std::uint32_t qp_num)> private_data;
  std::function<void(std::uint32_t qp_num)> established;
  // DREQ received, or the connection failed (REJ, timeout): the QP is in ERR or destroyed.
  std::function<void(std::uint32_t qp_num)> disconnected;
  // Optional: answers a SIDR_REQ for the service with a UD QP, or a SIDR_REP status (2 = reject,
  // 3 = no QP). Without it a SIDR_REQ gets status 1: the service is not offered as a datagram
  // service.
  std::function<std::expected<SidrAnswer, std::uint8_t>(const CmSidrReq& req)> sidr;
};

// The active side: connect an existing QP (RESET or INIT) to a peer's service.
struct ConnectParams {
  std::uint64_t service_id = 0;
  AddressVector peer;  // dgid (::ffff:a.b.c.d for IPv4) and dmac of the peer
  std::uint32_t qp_num = 0;
  PathMtu path_mtu = PathMtu::k1024;
  std::uint32_t starting_psn = 0;  // the REQ's: the PSN our QP receives from (rq_psn)
  std::uint8_t responder_resources = 1;
  std::uint8_t initiator_depth = 1;
  std::uint8_t retry_count = 7;
  std::uint8_t rnr_retry_count = 7;
  std::uint16_t pkey = 0xFFFF;
  std::vector<std::uint8_t> private_data;  // at most 92 bytes (56 after an rdma_cm header)
};

// CM messages passed to callbacks view the received frame: copy what must outlive the call.
struct ConnectCallbacks {
  std::function<void(std::uint32_t qp_num, const CmRep& rep)> established;  // RTU sent, QP in RTS
  std::function<void(std::uint16_t reason)> rejected;                       // REJ received
  std::function<void()> timed_out;                                          // no REP in time
  std::function<void(std::uint32_t qp_num)> disconnected;                   // DREQ or DREP
};

// Timers and values the agent puts in its messages. Timeout fields are 5-bit CM codes
// (4.096 µs × 2^t); the defaults are Linux rdma_cm's (spec-facts §9.6).
struct CmAgentConfig {
  // Seeds communication IDs, starting PSNs and transaction IDs; 0 derives one from the node
  // GUID and the IP address, so two NICs differ and a run repeats exactly.
  std::uint64_t seed = 0;
  std::uint64_t timewait_ns = 1'000'000'000;
  std::uint8_t cm_response_timeout = 20;  // our REQ's CM response timeouts, ClassPortInfo's too
  std::uint8_t max_cm_retries = 15;       // for our REQs
  std::uint8_t packet_lifetime = 18;      // the RoCE path's packet lifetime
  std::uint8_t target_ack_delay = 15;     // REP: how late our ACKs may be
  std::uint8_t rnr_retry_count = 7;       // REP: how often the peer retries after our RNR NAKs
  std::uint8_t min_rnr_timer = 12;        // RTR: the timer our RNR NAKs carry (0.64 ms)
};

// CM message statistics (the CM_RECV_DUPLICATES / CM_XMIT_RETRIES groups of Linux cm.c).
struct CmCounters {
  std::uint64_t req_duplicates = 0;
  std::uint64_t rep_duplicates = 0;
  std::uint64_t rtu_duplicates = 0;
  std::uint64_t dreq_duplicates = 0;
  std::uint64_t mra_duplicates = 0;
  std::uint64_t req_retries = 0;
  std::uint64_t rep_retries = 0;
  std::uint64_t dreq_retries = 0;
  std::uint64_t rej_sent = 0;
  std::uint64_t rej_received = 0;
  std::uint64_t timeouts = 0;  // exchanges abandoned after the last retry

  // Calls f(name, value) for every counter, in a stable order ("cm_" prefixed names).
  template <typename F>
  void for_each(F&& f) const {
    f(std::string_view{"cm_req_duplicates"}, req_duplicates);
    f(std::string_view{"cm_rep_duplicates"}, rep_duplicates);
    f(std::string_view{"cm_rtu_duplicates"}, rtu_duplicates);
    f(std::string_view{"cm_dreq_duplicates"}, dreq_duplicates);
    f(std::string_view{"cm_mra_duplicates"}, mra_duplicates);
    f(std::string_view{"cm_req_retries"}, req_retries);
    f(std::string_view{"cm_rep_retries"}, rep_retries);
    f(std::string_view{"cm_dreq_retries"}, dreq_retries);
    f(std::string_view{"cm_rej_sent"}, rej_sent);
    f(std::string_view{"cm_rej_received"}, rej_received);
    f(std::string_view{"cm_timeouts"}, timeouts);
  }
};

// What a connection looks like from outside (tests, the control API).
struct CmConnectionInfo {
  bool active = false;
  CmState state = CmState::kReqSent;
  std::uint32_t local_comm_id = 0;
  std::uint32_t remote_comm_id = 0;
  std::uint64_t service_id = 0;
  std::uint32_t qp_num = 0;
  std::uint32_t remote_qpn = 0;
  std::uint32_t local_psn = 0;
};

class CmAgent {
 public:
  explicit CmAgent(Nic& nic);
  ~CmAgent();

  // Accept connections for `service_id` (any value; rdma_cm IDs from rdma_cm_service_id()).
  std::expected<void, std::string> listen(std::uint64_t service_id, ListenerCallbacks callbacks);
  // Sends a REQ; returns the local communication ID of the new connection.
  std::expected<std::uint32_t, std::string> connect(const ConnectParams& params,
                                                    ConnectCallbacks callbacks);
  // Sends a DREQ for an established connection (by local communication ID).
  std::expected<void, std::string> disconnect(std::uint32_t local_comm_id);

  // A MAD to QP1 that passed the GSI checks; `pkey_index` is where its P_Key sits in the table.
  // The packet may carry no MAD (too short for its header): dropped, as MADs not 256 bytes are.
  void on_mad(const Packet& packet, std::uint16_t pkey_index, std::uint64_t now_ns);
  // The first data packet arrived on a connection's QP in RTR: established without an RTU.
  void on_comm_est(std::uint32_t qp_num, std::uint64_t now_ns);

  void tick(std::uint64_t now_ns);
  std::optional<std::uint64_t> next_deadline() const;

  // Settings take effect for connections made afterwards; a new seed restarts the sequences.
  void configure(const CmAgentConfig& config);
  const CmAgentConfig& config() const { return config_; }
  const CmCounters& counters() const { return counters_; }
  // The malformed-mad-hangs-cm defect struck: the agent answers and sends nothing until reset.
  bool hung() const { return hung_; }
  // The connection a local communication ID names (until its TIMEWAIT ends).
  std::optional<CmConnectionInfo> connection(std::uint32_t local_comm_id) const;
  // The newest connection using `qp_num` (a listener knows its QPs, not their comm IDs).
  std::optional<std::uint32_t> comm_id_of_qp(std::uint32_t qp_num) const;

 private:
  using RemoteKey = std::pair<std::uint64_t, std::uint32_t>;  // CA GUID, comm ID or QPN
  enum class Ending { kDisconnected, kRejected, kTimedOut };

  std::uint64_t random();
  std::uint32_t new_comm_id();

  // ---- sending ----
  std::uint64_t reply_tid(std::uint64_t received_tid) const;
  std::uint64_t new_tid();
  std::uint16_t pkey_at(std::uint16_t pkey_index, const Packet& received) const;
  void transmit(Packet& packet, const Mad& mad);
  void reply(const Packet& received, std::uint16_t pkey, std::uint64_t tid,
             const CmMessage& message);
  // Keeps `message` as the connection's last message and sends it to the peer's CM.
  void send_stored(CmConnection& c, std::uint64_t tid, const CmMessage& message);
  void resend(CmConnection& c);
  void reject_req(const Packet& received, std::uint16_t pkey, const CmReq& req,
                  std::uint16_t reason, std::uint32_t local_comm_id = 0, Bytes ari = {});

  // ---- messages ----
  void on_get_or_set(const Packet& p, std::uint16_t pkey);
  void on_req(const Packet& p, const CmReq& req, std::uint16_t pkey_index, std::uint64_t now);
  void accept(const Packet& p, const CmReq& req, std::uint16_t pkey_index,
              const ListenerCallbacks& listener, std::uint64_t now);
  const CmConnection* pending_passive() const;
  void complete_passive(CmConnection& c, std::uint64_t now);
  void on_rep(const CmRep& rep, std::uint64_t now);
  void on_rtu(const CmRtu& rtu, std::uint64_t now);
  void on_rej(const CmRej& rej, std::uint64_t now);
  void on_mra(const CmMra& mra, std::uint64_t now);
  void on_dreq(const Packet& p, const CmDreq& dreq, std::uint16_t pkey, std::uint64_t now);
  void on_drep(const CmDrep& drep, std::uint64_t now);
  void on_lap(const Packet& p, const CmLap& lap, std::uint16_t pkey);
  void on_sidr_req(const Packet& p, const CmSidrReq& req, bool version_ok, std::uint16_t pkey);

  // ---- connection records ----
  CmConnection& add_connection(bool active);
  CmConnection* find(std::uint32_t local_comm_id);
  CmConnection* find_remote(std::uint64_t ca_guid, std::uint32_t remote_comm_id);
  // Records the peer's IDs; false when its comm ID already names another connection here.
  bool index_remote(CmConnection& c);
  void set_deadline(CmConnection& c, std::optional<std::uint64_t> deadline);
  void expire(CmConnection& c, std::uint64_t now);
  // The QP goes RTR (when deferred) and RTS; the connection is established.
  bool establish(CmConnection& c);
  void start_disconnect(CmConnection& c, std::uint64_t now);
  // The connection ends: QP to ERR, TIMEWAIT, then the application is told.
  void finish(CmConnection& c, Ending how, std::uint16_t reason, std::uint64_t now);
  void remove(std::uint32_t local_comm_id);
  void qp_to_error(std::uint32_t qp_num);

  Nic& nic_;
  CmAgentConfig config_;
  CmCounters counters_;
  std::uint64_t rng_ = 0;
  std::uint32_t id_operand_ = 0;
  std::uint32_t next_id_ = 0;
  std::uint32_t tid_high_ = 0;
  std::uint32_t next_tid_ = 0;
  std::uint32_t gsi_psn_ = 0;
  std::optional<std::uint32_t> last_psn_;  // sequential-psns: the last REP's Starting PSN
  bool hung_ = false;

  std::map<std::uint64_t, ListenerCallbacks> listeners_;
  std::unordered_map<std::uint32_t, CmConnection> connections_;
  std::unordered_map<std::uint32_t, ConnectCallbacks> connect_callbacks_;
  std::map<RemoteKey, std::uint32_t> by_remote_id_;    // (remote CA GUID, remote comm ID)
  std::map<RemoteKey, std::uint32_t> by_remote_qpn_;   // (remote CA GUID, remote QPN), live only
  std::multimap<std::uint32_t, std::uint32_t> by_qp_;  // our QPN -> local comm IDs
  std::set<std::pair<std::uint64_t, std::uint32_t>> timers_;  // (deadline, local comm ID)
};

}  // namespace roceconf::target
