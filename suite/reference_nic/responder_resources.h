// The RC responder resources (the "responder resources" a requester is told about as
// max_dest_rd_atomic; spec-facts §4.3): what the responder keeps of
// each RDMA READ, atomic and ATOMIC WRITE it accepted so that a duplicate of it is answered
// again without executing it again. A READ is replayed by re-reading memory from the saved VA,
// R_Key and length; an atomic by sending the saved original value. There are
// max_dest_rd_atomic of them, reused oldest first, as rxe does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace roceconf::target {

struct ResponderResource {
  enum class Kind : std::uint8_t { kRead, kAtomic, kAtomicWrite };
  Kind kind = Kind::kRead;
  std::uint32_t first_psn = 0;
  std::uint32_t last_psn = 0;  // READ: first_psn + response packets - 1; otherwise first_psn
  // READ: the range the request named (a duplicate may ask for a part of it).
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint32_t length = 0;
  std::uint64_t original = 0;  // atomics: the remote value before the operation
};

class ResponderResources {
 public:
  explicit ResponderResources(std::size_t capacity = 0) : ring_(capacity) {}

  // Follows a new max_dest_rd_atomic, keeping the newest entries that still fit.
  void resize(std::size_t capacity);
  std::size_t capacity() const { return ring_.size(); }
  std::size_t size() const;

  // Saves `resource` in the next slot, dropping the oldest one when all are in use.
  void add(const ResponderResource& resource);
  // The newest resource whose [first_psn, last_psn] holds `psn` (modulo 2^24); nullptr if none.
  const ResponderResource* find(std::uint32_t psn) const;
  void clear();

 private:
  std::vector<std::optional<ResponderResource>> ring_;
  std::size_t next_ = 0;  // the slot the next add() takes: the oldest when the ring is full
};

}  // namespace roceconf::target
