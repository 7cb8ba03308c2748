#include "control/rcnf_private_data.h"

#include <algorithm>

#include <fmt/format.h>

namespace roceconf::control {

std::array<std::uint8_t, RcnfPrivateData::kSize> RcnfPrivateData::encode() const {
  std::array<std::uint8_t, kSize> out{};
  std::copy(kMagic.begin(), kMagic.end(), out.begin() + kMagicOffset);
  out[kVersionOffset] = version;
  be::store64(out.data() + kRegionVaOffset, region_va);
  be::store32(out.data() + kRkeyOffset, rkey);
  be::store32(out.data() + kRegionLengthOffset, region_length);
  be::store32(out.data() + kRecvDepthOffset, recv_depth);
  be::store32(out.data() + kRecvBufferSizeOffset, recv_buffer_size);
  return out;
}

std::expected<RcnfPrivateData, std::string> RcnfPrivateData::decode(Bytes private_data) {
  if (private_data.size() < kSize)
    return std::unexpected(
        fmt::format("REP private data of {} bytes is shorter than the {}-byte RCNF block",
                    private_data.size(), kSize));
  const std::uint8_t* p = private_data.data();
  if (!std::equal(kMagic.begin(), kMagic.end(), p + kMagicOffset))
    return std::unexpected(
        fmt::format("REP private data starts with {:02x} {:02x} {:02x} {:02x}, not \"RCNF\" "
                    "(52 43 4e 46): the peer does not follow the roceconf responder convention",
                    p[0], p[1], p[2], p[3]));
  if (p[kVersionOffset] != kVersion)
    return std::unexpected(fmt::format("RCNF version {} is not supported (this build reads {})",
                                       p[kVersionOffset], kVersion));
  RcnfPrivateData d;
  d.version = p[kVersionOffset];
  d.region_va = be::load64(p + kRegionVaOffset);
  d.rkey = be::load32(p + kRkeyOffset);
  d.region_length = be::load32(p + kRegionLengthOffset);
  d.recv_depth = be::load32(p + kRecvDepthOffset);
  d.recv_buffer_size = be::load32(p + kRecvBufferSizeOffset);
  return d;
}

}  // namespace roceconf::control
