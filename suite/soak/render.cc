#include "suite/soak/render.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include <fmt/format.h>

namespace roceconf::soak {

namespace {

constexpr std::uint32_t kPsnMask = 0xFFFFFF;
constexpr std::uint32_t kRecvRefill = 16;     // receives posted when a control QP runs out
constexpr std::uint64_t kTesterVa = 0x10000;  // where the target's RDMA requests point
constexpr std::uint32_t kTesterRkey = 0x1234;
constexpr std::uint32_t kVerifyChunk = 16 * 1024;

std::uint32_t packets(std::uint32_t len, std::uint32_t pmtu) {
  return len == 0 ? 1 : (len + pmtu - 1) / pmtu;
}

// A request the tester sent and the target executed: what a duplicate of it must get.
struct Request {
  OpKind kind = OpKind::kSend;
  std::uint32_t psn = 0, npk = 1, len = 0, offset = 0, imm = 0;
  std::uint8_t fill = 0;
  std::uint64_t operand = 0, swap = 0;
  std::optional<std::uint64_t> orig;  // atomics: the value returned
};

struct Model {
  bool opened = false;
  std::uint32_t pmtu = 1024;
  std::uint32_t next_psn = 0, msn = 0;
  bool nak_pending = false;
  std::vector<Request> history;     // the last requests, newest last
  std::vector<std::int16_t> bytes;  // the data area; -1: not known
  std::vector<std::optional<std::uint64_t>> words;
  std::uint32_t posted = 16;
  // The target as requester.
  std::uint32_t target_psn = 0, tester_msn = 0;
  std::uint64_t wr_id = 1;
};

class Renderer {
 public:
  Renderer(const Layout& layout, const std::vector<Op>& ops) : layout_(layout), ops_(ops) {
    models_.resize(layout.pmtus.size());
    for (std::size_t i = 0; i < models_.size(); ++i) {
      models_[i].pmtu = layout.pmtus[i];
      models_[i].bytes.assign(layout.data_area(), -1);
      models_[i].words.assign(layout.atomic_words, std::nullopt);
    }
  }

  Rendered run(const Header& header) {
    line(fmt::format("// {}", header.title), -1);
    for (const auto& d : header.description) line("// " + d, -1);
    line("clause: 9.4; 9.5; 9.7.4; 9.7.5; 11.4.2", -1);
    line(
        "rule: Every operation completes as the responder and requester rules predict: each "
        "ACK's PSN and MSN, the bytes of READ responses and memory, atomic original values, "
        "receive and send completions; a duplicate is not executed again and a PSN gap gets "
        "one NAK",
        -1);
    line("checked: unchecked", -1);
    line("level: MUST", -1);
    line(layout_.control ? "needs: control" : "needs: responder", -1);
    std::size_t i = 0;
    out_.receives_posted.assign(ops_.size(), 0);
    out_.gaps_open.assign(ops_.size(), 0);
    while (i < ops_.size()) {
      std::size_t end = i;
      while (end < ops_.size() && ops_[end].batch == ops_[i].batch) ++end;
      std::uint32_t posted = 0, gaps = 0;
      for (const Model& m : models_) {
        if (!m.opened) continue;
        posted += layout_.control ? m.posted : 0;
        gaps += m.nak_pending ? 1 : 0;
      }
      for (std::size_t k = i; k < end; ++k) {
        out_.receives_posted[k] = posted;
        out_.gaps_open[k] = gaps;
      }
      batch(i, end);
      i = end;
    }
    return std::move(out_);
  }

 private:
  void line(std::string text, int op) {
    out_.text += text;
    out_.text += '\n';
    out_.line_op.push_back(op);
  }

  static std::string name(std::uint8_t conn) { return fmt::format("c{}", conn); }

  Model& model(const Op& op) { return models_[op.conn]; }

  void open(const Op& op, int index) {
    Model& m = model(op);
    if (m.opened) return;
    m.opened = true;
    if (layout_.control)
      line(fmt::format("open {} pmtu={} timeout=18", name(op.conn), m.pmtu), index);
    else
      line(fmt::format("connect {} pmtu={}", name(op.conn), m.pmtu), index);
  }

  // One batch: every tester request goes out, then each response is expected, then the
  // receive completions are polled; then the target's own requests, one doorbell at a time.
  void batch(std::size_t begin, std::size_t end) {
    struct Pending {
      int index;
      std::vector<std::string> expects;
    };
    std::vector<Pending> pending;
    std::map<std::uint8_t, std::pair<int, std::vector<std::string>>> polls;
    for (std::size_t i = begin; i < end; ++i) {
      const Op& op = ops_[i];
      if (op.conn >= models_.size() || is_target_op(op.kind)) continue;
      std::vector<std::string> sends, expects, completions;
      if (!request(op, sends, expects, completions)) continue;
      open(op, static_cast<int>(i));
      for (auto& s : sends) line(std::move(s), static_cast<int>(i));
      pending.push_back({static_cast<int>(i), std::move(expects)});
      auto& [last, list] = polls[op.conn];
      last = static_cast<int>(i);
      for (auto& c : completions) list.push_back(std::move(c));
    }
    for (auto& p : pending)
      for (auto& e : p.expects) line(std::move(e), p.index);
    if (layout_.control)
      for (auto& [conn, entry] : polls) {
        for (auto& c : entry.second) line(std::move(c), entry.first);
        line(fmt::format("poll {} empty", name(conn)), entry.first);
      }
    for (std::size_t i = begin; i < end; ++i)
      if (ops_[i].conn < models_.size() && is_target_op(ops_[i].kind) && layout_.control)
        target_request(ops_[i], static_cast<int>(i));
  }

  // The expectation of a READ response segment: its bytes when the model knows them (as a
  // pattern when they form one), else only its length.
  std::string content(const Model& m, std::uint32_t at, std::uint32_t len) const {
    if (len == 0) return "len=0";
    for (std::uint32_t k = 0; k < len; ++k)
      if (m.bytes[at + k] < 0) return fmt::format("len={}", len);
    const auto first = static_cast<std::uint8_t>(m.bytes[at]);
    bool pattern = true;
    for (std::uint32_t k = 0; k < len && pattern; ++k)
      pattern = static_cast<std::uint8_t>(m.bytes[at + k]) == static_cast<std::uint8_t>(first + k);
    if (pattern) return fmt::format("len={} fill={:#04x}", len, first);
    std::string hex;
    hex.reserve(2 * len);
    for (std::uint32_t k = 0; k < len; ++k)
      hex += fmt::format("{:02x}", static_cast<std::uint8_t>(m.bytes[at + k]));
    return fmt::format("len={} data={}", len, hex);
  }

  void place(Model& m, std::uint32_t at, std::uint32_t len, std::uint8_t fill) {
    for (std::uint32_t k = 0; k < len; ++k) m.bytes[at + k] = static_cast<std::uint8_t>(fill + k);
  }

  void read_responses(const Model& m, const std::string& c, std::uint32_t psn, std::uint32_t offset,
                      std::uint32_t len, std::vector<std::string>& expects) const {
    const std::uint32_t n = packets(len, m.pmtu);
    for (std::uint32_t s = 0; s < n; ++s) {
      const char* kind = n == 1       ? "READ_RESPONSE_ONLY"
                         : s == 0     ? "READ_RESPONSE_FIRST"
                         : s + 1 == n ? "READ_RESPONSE_LAST"
                                      : "READ_RESPONSE_MIDDLE";
      const std::uint32_t seg = std::min(m.pmtu, len - s * m.pmtu);
      expects.push_back(fmt::format("expect {} {} psn={} {}", c, kind, psn + s,
                                    content(m, offset + s * m.pmtu, seg)));
    }
  }

  void remember(Model& m, Request r) {
    m.history.push_back(r);
    if (m.history.size() > 8) m.history.erase(m.history.begin());
  }

  // A tester request: the lines that send it, the responses expected, the completions it owes.
  // False when the operation cannot apply here (a duplicate with nothing to repeat).
  bool request(const Op& op, std::vector<std::string>& sends, std::vector<std::string>& expects,
               std::vector<std::string>& completions) {
    Model& m = model(op);
    const std::string c = name(op.conn);
    const std::uint32_t psn = m.next_psn;
    const auto need_receive = [&] {
      if (!layout_.control) return;
      if (m.posted == 0) {
        sends.push_back(
            fmt::format("post recv {} count={} len={}", c, kRecvRefill, layout_.recv_len));
        m.posted = kRecvRefill;
      }
      --m.posted;
    };
    const auto acked = [&](std::uint32_t npk) {
      m.msn = (m.msn + 1) & kPsnMask;
      m.next_psn += npk;
      m.nak_pending = false;
      expects.push_back(fmt::format("expect {} ACK psn={} syndrome=ack msn={}{}", c, psn + npk - 1,
                                    m.msn, npk > 1 ? " after-earlier-acks" : ""));
    };
    switch (op.kind) {
      case OpKind::kInit: {
        const std::uint32_t len =
            op.len == 0 ? layout_.data_area() : std::min(op.len, layout_.data_area());
        sends.push_back(fmt::format("send {} RDMA_WRITE psn={} offset=0 len={} fill={:#04x}", c,
                                    psn, len, op.fill));
        acked(packets(len, m.pmtu));
        place(m, 0, len, op.fill);
        out_.payload += len;
        return true;
      }
      case OpKind::kInitWords: {
        // A message per path MTU: a payload given as data= is one packet's.
        const std::uint32_t words = layout_.atomic_words * 8;
        for (std::uint32_t at = 0; at < words; at += m.pmtu) {
          const std::uint32_t n = std::min(m.pmtu, words - at);
          sends.push_back(fmt::format("send {} RDMA_WRITE psn={} offset={} len={} data={}", c,
                                      m.next_psn, layout_.data_area() + at, n,
                                      std::string(2 * n, '0')));
          m.msn = (m.msn + 1) & kPsnMask;
          expects.push_back(
              fmt::format("expect {} ACK psn={} syndrome=ack msn={}", c, m.next_psn, m.msn));
          ++m.next_psn;
        }
        m.nak_pending = false;
        std::ranges::fill(m.words, std::uint64_t{0});
        out_.payload += words;
        return true;
      }
      case OpKind::kVerify: {
        // The whole data area read back in READs of at most 16 KiB, each byte as the model has
        // it. Its PSNs and MSNs count like any READ's.
        const std::uint32_t data = layout_.data_area();
        for (std::uint32_t at = 0; at < data; at += kVerifyChunk) {
          const std::uint32_t len = std::min(kVerifyChunk, data - at);
          // One READ at a time: a responder may take a single READ in flight.
          sends.push_back(
              fmt::format("send {} READ psn={} offset={} len={}", c, m.next_psn, at, len));
          read_responses(m, c, m.next_psn, at, len, sends);
          m.next_psn += packets(len, m.pmtu);
          m.msn = (m.msn + 1) & kPsnMask;
        }
        m.nak_pending = false;
        return true;
      }
      case OpKind::kSend:
      case OpKind::kSendImm: {
        const bool imm = op.kind == OpKind::kSendImm;
        need_receive();
        sends.push_back(fmt::format("send {} {} psn={} len={} fill={:#04x}{}", c,
                                    imm ? "SEND_WITH_IMM" : "SEND", psn, op.len, op.fill,
                                    imm ? fmt::format(" imm={:#x}", op.imm) : ""));
        const std::uint32_t npk = packets(op.len, m.pmtu);
        acked(npk);
        if (imm)
          completions.push_back(fmt::format(
              "poll {} status=SUCCESS opcode=RECV byte_len={} imm_data={:#x} wc_flags=WITH_IMM "
              "qp_num={}",
              c, op.len, op.imm, c));
        else
          completions.push_back(fmt::format(
              "poll {} status=SUCCESS opcode=RECV byte_len={} qp_num={}", c, op.len, c));
        remember(m, {op.kind, psn, npk, op.len, 0, op.imm, op.fill, 0, 0, std::nullopt});
        out_.payload += op.len;
        return true;
      }
      case OpKind::kWrite:
      case OpKind::kWriteImm: {
        const bool imm = op.kind == OpKind::kWriteImm;
        if (op.offset + op.len > layout_.data_area()) return false;
        if (imm) need_receive();
        sends.push_back(fmt::format("send {} {} psn={} offset={} len={} fill={:#04x}{}", c,
                                    imm ? "RDMA_WRITE_WITH_IMM" : "RDMA_WRITE", psn, op.offset,
                                    op.len, op.fill, imm ? fmt::format(" imm={:#x}", op.imm) : ""));
        const std::uint32_t npk = packets(op.len, m.pmtu);
        acked(npk);
        place(m, op.offset, op.len, op.fill);
        if (imm)
          completions.push_back(fmt::format(
              "poll {} status=SUCCESS opcode=RECV_RDMA_WITH_IMM imm_data={:#x} wc_flags=WITH_IMM "
              "qp_num={}",
              c, op.imm, c));
        remember(m, {op.kind, psn, npk, op.len, op.offset, op.imm, op.fill, 0, 0, std::nullopt});
        out_.payload += op.len;
        return true;
      }
      case OpKind::kRead: {
        if (op.len == 0 || op.offset + op.len > layout_.data_area()) return false;
        sends.push_back(
            fmt::format("send {} READ psn={} offset={} len={}", c, psn, op.offset, op.len));
        const std::uint32_t npk = packets(op.len, m.pmtu);
        read_responses(m, c, psn, op.offset, op.len, expects);
        m.msn = (m.msn + 1) & kPsnMask;
        m.next_psn += npk;
        m.nak_pending = false;
        remember(m, {op.kind, psn, npk, op.len, op.offset, 0, 0, 0, 0, std::nullopt});
        out_.payload += op.len;
        return true;
      }
      case OpKind::kFetchAdd:
      case OpKind::kCmpSwap: {
        if (op.offset >= layout_.atomic_words) return false;
        auto& word = m.words[op.offset];
        const std::uint32_t at = layout_.data_area() + op.offset * 8;
        Request r{op.kind, psn, 1, 8, at, 0, 0, op.operand, op.swap, word};
        if (op.kind == OpKind::kFetchAdd) {
          sends.push_back(
              fmt::format("send {} FETCH_ADD psn={} offset={} add={:#x}", c, psn, at, op.operand));
          if (word) word = *word + op.operand;
        } else {
          // A compare that hits uses the word's value; one that misses, a value it cannot have.
          if (op.compare_hits && word) r.operand = *word;
          if (!op.compare_hits && word && r.operand == *word) r.operand = ~*word;
          sends.push_back(
              fmt::format("send {} COMPARE_SWAP psn={} offset={} compare={:#x} swap={:#x}", c, psn,
                          at, r.operand, op.swap));
          if (word && *word == r.operand) word = op.swap;
        }
        expects.push_back(fmt::format("expect {} ATOMIC_ACK psn={}{}", c, psn,
                                      r.orig ? fmt::format(" orig={:#x}", *r.orig) : ""));
        m.msn = (m.msn + 1) & kPsnMask;
        m.next_psn += 1;
        m.nak_pending = false;
        remember(m, r);
        return true;
      }
      case OpKind::kDupLast: {
        if (m.history.empty()) return false;
        const Request r = m.history.back();
        return duplicate(m, c, r, true, sends, expects);
      }
      case OpKind::kDupOld: {
        // The back-th single-packet SEND or WRITE before the last request.
        int left = op.back;
        for (auto it = m.history.rbegin() + (m.history.empty() ? 0 : 1); it != m.history.rend();
             ++it) {
          const bool single = (it->kind == OpKind::kSend || it->kind == OpKind::kSendImm ||
                               it->kind == OpKind::kWrite || it->kind == OpKind::kWriteImm) &&
                              it->npk == 1;
          if (single && --left == 0) return duplicate(m, c, *it, false, sends, expects);
        }
        return false;
      }
      case OpKind::kGap: {
        sends.push_back(fmt::format("send {} SEND_ONLY psn={} ackreq=1 len=16", c,
                                    psn + std::max<std::uint32_t>(op.gap, 1)));
        if (m.nak_pending) {
          expects.push_back(fmt::format("expect nothing from {}", c));  // one NAK per gap
        } else {
          expects.push_back(fmt::format("expect {} NAK psn={} syndrome=psn_seq_err", c, psn));
          m.nak_pending = true;
        }
        return true;
      }
      default:
        return false;
    }
  }

  // The request again, as first sent: executed once only. A SEND or WRITE is ACKed again with
  // the last PSN the responder took (C9-105), a READ replayed from memory as it is now, an
  // atomic answered with its saved original value.
  bool duplicate(Model& m, const std::string& c, const Request& r, bool last,
                 std::vector<std::string>& sends, std::vector<std::string>& expects) {
    switch (r.kind) {
      case OpKind::kSend:
      case OpKind::kSendImm:
        if (r.npk != 1) return false;
        sends.push_back(
            fmt::format("send {} {} psn={} len={} fill={:#04x}{}", c,
                        r.kind == OpKind::kSendImm ? "SEND_WITH_IMM" : "SEND", r.psn, r.len, r.fill,
                        r.kind == OpKind::kSendImm ? fmt::format(" imm={:#x}", r.imm) : ""));
        break;
      case OpKind::kWrite:
      case OpKind::kWriteImm:
        if (r.npk != 1) return false;
        sends.push_back(fmt::format(
            "send {} {} psn={} offset={} len={} fill={:#04x}{}", c,
            r.kind == OpKind::kWriteImm ? "RDMA_WRITE_WITH_IMM" : "RDMA_WRITE", r.psn, r.offset,
            r.len, r.fill, r.kind == OpKind::kWriteImm ? fmt::format(" imm={:#x}", r.imm) : ""));
        break;
      case OpKind::kRead:
        if (!last) return false;
        sends.push_back(
            fmt::format("send {} READ psn={} offset={} len={}", c, r.psn, r.offset, r.len));
        read_responses(m, c, r.psn, r.offset, r.len, expects);
        return true;
      case OpKind::kFetchAdd:
        if (!last) return false;
        sends.push_back(fmt::format("send {} FETCH_ADD psn={} offset={} add={:#x}", c, r.psn,
                                    r.offset, r.operand));
        expects.push_back(fmt::format("expect {} ATOMIC_ACK psn={}{}", c, r.psn,
                                      r.orig ? fmt::format(" orig={:#x}", *r.orig) : ""));
        return true;
      case OpKind::kCmpSwap:
        if (!last) return false;
        sends.push_back(
            fmt::format("send {} COMPARE_SWAP psn={} offset={} compare={:#x} swap={:#x}", c, r.psn,
                        r.offset, r.operand, r.swap));
        expects.push_back(fmt::format("expect {} ATOMIC_ACK psn={}{}", c, r.psn,
                                      r.orig ? fmt::format(" orig={:#x}", *r.orig) : ""));
        return true;
      default:
        return false;
    }
    expects.push_back(
        fmt::format("expect {} ACK psn={} syndrome=ack msn={}", c, m.next_psn - 1, m.msn));
    return true;
  }

  // The target posts `count` WRs under one doorbell; the tester reads each request, answers
  // (one coalesced ACK, or the READ responses), and the completions and landed data are checked.
  void target_request(const Op& op, int index) {
    Model& m = model(op);
    const std::string c = name(op.conn);
    const std::uint32_t count = std::max<std::uint32_t>(op.count, 1);
    if (op.len == 0 || op.offset + op.len * count > layout_.data_area()) return;
    open(op, index);
    const std::uint64_t wr = m.wr_id;
    m.wr_id += count;
    const std::uint32_t n = packets(op.len, m.pmtu);
    const auto seg_len = [&](std::uint32_t s) { return std::min(m.pmtu, op.len - s * m.pmtu); };
    const auto position = [&](std::uint32_t s) {
      return n == 1 ? "ONLY" : s == 0 ? "FIRST" : s + 1 == n ? "LAST" : "MIDDLE";
    };
    const char* opname = op.kind == OpKind::kTargetSend    ? "SEND"
                         : op.kind == OpKind::kTargetWrite ? "WRITE"
                                                           : "READ";
    if (op.kind == OpKind::kTargetRead)
      line(
          fmt::format("post send {} op=READ count={} len={} va={:#x} rkey={:#x} offset={} wr_id={}",
                      c, count, op.len, kTesterVa, kTesterRkey, op.offset, wr),
          index);
    else
      line(fmt::format(
               "post send {} op={} count={} len={} fill={:#04x} va={:#x} rkey={:#x} wr_id={}", c,
               opname, count, op.len, op.fill, kTesterVa, kTesterRkey, wr),
           index);
    std::vector<std::uint32_t> first_psn;
    for (std::uint32_t j = 0; j < count; ++j) {
      first_psn.push_back(m.target_psn);
      const std::uint64_t va = kTesterVa + std::uint64_t{j} * op.len;
      if (op.kind == OpKind::kTargetRead) {
        line(fmt::format("expect {} RDMA_READ_REQUEST psn={} va={:#x} dmalen={}", c, m.target_psn,
                         va, op.len),
             index);
        m.target_psn += n;
        continue;
      }
      for (std::uint32_t s = 0; s < n; ++s) {
        const auto fill = static_cast<std::uint8_t>(op.fill + j * op.len + s * m.pmtu);
        std::string extra;
        if (op.kind == OpKind::kTargetWrite && (s == 0))
          extra = fmt::format(" va={:#x} dmalen={}", va, op.len);
        line(fmt::format("expect {} {}_{} psn={} len={} fill={:#04x}{}", c,
                         op.kind == OpKind::kTargetSend ? "SEND" : "RDMA_WRITE", position(s),
                         m.target_psn, seg_len(s), fill, extra),
             index);
        ++m.target_psn;
      }
    }
    if (op.kind == OpKind::kTargetRead) {
      for (std::uint32_t j = 0; j < count; ++j) {
        const auto fill = static_cast<std::uint8_t>(op.fill + 37 * j);
        const std::uint32_t msn = (m.tester_msn + j + 1) & kPsnMask;
        for (std::uint32_t s = 0; s < n; ++s) {
          const auto seg_fill = static_cast<std::uint8_t>(fill + s * m.pmtu);
          const bool aeth = n == 1 || s == 0 || s + 1 == n;
          line(fmt::format("send {} RDMA_READ_RESPONSE_{} psn={}{} len={} fill={:#04x}", c,
                           position(s), first_psn[j] + s,
                           aeth ? fmt::format(" syndrome=0x1f msn={}", msn) : "", seg_len(s),
                           seg_fill),
               index);
        }
        place(m, op.offset + j * op.len, op.len, fill);
      }
    } else {
      line(fmt::format("send {} ACKNOWLEDGE psn={} syndrome=0x1f msn={}", c, m.target_psn - 1,
                       (m.tester_msn + count) & kPsnMask),
           index);
    }
    m.tester_msn = (m.tester_msn + count) & kPsnMask;
    const char* wc = op.kind == OpKind::kTargetSend    ? "SEND"
                     : op.kind == OpKind::kTargetWrite ? "RDMA_WRITE"
                                                       : "RDMA_READ";
    for (std::uint32_t j = 0; j < count; ++j)
      line(fmt::format("{}poll {} status=SUCCESS opcode={} wr_id={}{}", j == 0 ? "+20ms " : "", c,
                       wc, wr + j,
                       op.kind == OpKind::kTargetRead ? fmt::format(" byte_len={}", op.len) : ""),
           index);
    line(fmt::format("poll {} empty", c), index);
    if (op.kind == OpKind::kTargetRead)
      for (std::uint32_t j = 0; j < count; ++j)
        line(fmt::format("read {} offset={} len={} fill={:#04x}", c, op.offset + j * op.len, op.len,
                         static_cast<std::uint8_t>(op.fill + 37 * j)),
             index);
    out_.payload += std::uint64_t{op.len} * count;
  }

  const Layout& layout_;
  const std::vector<Op>& ops_;
  std::vector<Model> models_;
  Rendered out_;
};

}  // namespace

Rendered render(const Layout& layout, const std::vector<Op>& ops, const Header& header) {
  return Renderer(layout, ops).run(header);
}

int op_of_step(const Rendered& rendered, const std::string& failed_step) {
  // "PATH:LINE text": the number after the first ':' that is followed by digits and a space.
  for (std::size_t colon = failed_step.find(':'); colon != std::string::npos;
       colon = failed_step.find(':', colon + 1)) {
    int n = 0;
    const char* begin = failed_step.data() + colon + 1;
    const char* end = failed_step.data() + failed_step.size();
    auto [p, ec] = std::from_chars(begin, end, n);
    if (ec == std::errc() && p != begin && (p == end || *p == ' ')) {
      if (n >= 1 && static_cast<std::size_t>(n) <= rendered.line_op.size())
        return rendered.line_op[n - 1];
      return -1;
    }
  }
  return -1;
}

}  // namespace roceconf::soak
