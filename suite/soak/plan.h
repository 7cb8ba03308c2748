// What a soak sends: a seeded sequence of operations over a set of connections. An operation is
// abstract (which connection, what kind, how long, where): PSNs, MSNs, the data every READ must
// return and the completions every CQ must give are worked out when it is rendered (render.h),
// so any subsequence of a plan is still a valid, self-consistent sequence. That is what lets a
// failing soak be shrunk by dropping operations.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

namespace roceconf::soak {

enum class OpKind : std::uint8_t {
  // The tester as requester, the target as responder.
  kInit,       // a WRITE over the data area's first `len` bytes (0: all of it)
  kInitWords,  // zeros over the atomic words
  kVerify,     // READs of the whole data area, every byte against the model
  kSend,       // SEND (segmented at the path MTU)
  kSendImm,    // SEND with immediate
  kWrite,      // RDMA WRITE
  kWriteImm,   // RDMA WRITE with immediate
  kRead,       // RDMA READ
  kFetchAdd,   // FETCH_ADD on an atomic word
  kCmpSwap,    // CMP_SWAP on an atomic word
  kDupLast,    // the connection's last request again (its response "lost")
  kDupOld,     // an older single-packet SEND or WRITE again
  kGap,        // a request beyond the expected PSN (a lost packet)
  // The target as requester (control): WRs posted under one doorbell, the tester responds.
  kTargetSend,
  kTargetWrite,
  kTargetRead,
};

std::string_view op_kind_name(OpKind kind);  // "SEND", "WRITE_IMM", "DUP_LAST", ...
bool is_target_op(OpKind kind);

struct Op {
  std::uint32_t batch = 0;  // operations of one batch go out together (one per connection)
  std::uint8_t conn = 0;
  OpKind kind = OpKind::kSend;
  std::uint32_t len = 0;
  std::uint32_t offset = 0;  // into the data area; atomics: the word's index
  std::uint8_t fill = 0;     // the payload's pattern: byte i is (fill + i) mod 256
  std::uint32_t imm = 0;
  std::uint64_t operand = 0;  // FETCH_ADD: the addend; CMP_SWAP: the compare value
  std::uint64_t swap = 0;
  bool compare_hits = false;  // CMP_SWAP: compare with the word's value (else a value that misses)
  std::uint8_t count = 1;     // target operations: WRs under one doorbell
  std::uint8_t back = 1;      // kDupOld: how many requests before the last
  std::uint8_t gap = 1;       // kGap: PSNs skipped
};

// The connections of a soak and what their target QPs can take.
struct Layout {
  std::vector<std::uint32_t> pmtus;  // one per connection
  bool control = false;              // target QPs made through the control API (`open`)
  std::uint32_t region = 64 * 1024;  // bytes of each connection's region
  std::uint32_t recv_len = 4096;     // the largest SEND a receive takes
  std::uint32_t atomic_words = 64;   // at the region's end, after the data area
  std::uint32_t data_area() const { return region - atomic_words * 8; }
};

struct Mix {
  bool target_ops = true;  // the target as requester (needs control)
  bool faults = true;      // duplicates and PSN gaps
};

// `batches` batches of random operations: each connection's first operations are its kInit and
// kInitWords; then each batch gives a random subset of the connections one operation each
// (sizes around the path MTU's boundaries), and with control sometimes a target operation; last,
// a kVerify of every connection.
std::vector<Op> generate(const Layout& layout, const Mix& mix, std::uint32_t batches,
                         std::mt19937_64& random);

}  // namespace roceconf::soak
