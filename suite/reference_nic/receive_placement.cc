#include "suite/reference_nic/receive_placement.h"

#include <fmt/format.h>

#include <algorithm>

namespace roceconf::target {

std::uint64_t sge_capacity(std::span<const Sge> sg_list) {
  std::uint64_t capacity = 0;
  for (const Sge& sge : sg_list) capacity += sge.length;
  return capacity;
}

std::expected<void, AccessError> place_at(MrTable& mrs, std::uint32_t pd,
                                          std::span<const Sge> sg_list, std::uint64_t offset,
                                          std::span<const std::uint8_t> data) {
  const std::uint64_t capacity = sge_capacity(sg_list);
  if (offset + data.size() > capacity) {
    return std::unexpected(AccessError{
        AccessFault::kLengthError,
        fmt::format("{} bytes at message offset {} do not fit the {} bytes of the scatter list",
                    data.size(), offset, capacity)});
  }
  std::size_t done = 0;
  std::uint64_t skip = offset;  // bytes of the list before the write starts
  for (const Sge& sge : sg_list) {
    if (done == data.size()) break;
    if (skip >= sge.length) {
      skip -= sge.length;
      continue;
    }
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(sge.length - skip, data.size() - done));
    const Sge piece{sge.addr + skip, static_cast<std::uint32_t>(n), sge.lkey};
    auto span = mrs.check_local(pd, piece, true);
    if (!span) return std::unexpected(std::move(span.error()));
    std::copy_n(data.begin() + static_cast<std::ptrdiff_t>(done), n, span->bytes.begin());
    done += n;
    skip = 0;
  }
  return {};
}

}  // namespace roceconf::target
