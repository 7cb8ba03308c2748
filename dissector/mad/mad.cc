#include "dissector/mad/mad.h"

#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "dissector/layer.h"

namespace roceconf {

namespace {

void add(Findings& findings, FindingCode code, std::uint32_t offset, std::string message) {
  findings.push_back(Finding{code, Layer::kMad, offset, std::move(message)});
}

bool method_valid(std::uint16_t attr_id, std::uint8_t method) {
  if (attr_id == cm_attr::kClassPortInfo) {
    return method == mad_method::kGet || method == mad_method::kSet ||
           method == mad_method::kGetResp;
  }
  return method == mad_method::kSend;
}

}  // namespace

std::optional<Mad> decode_mad(Bytes bytes, std::uint32_t base, Findings& findings) {
  const auto size = static_cast<std::uint32_t>(std::min<std::size_t>(bytes.size(), UINT32_MAX));
  if (bytes.size() < kMadHeaderSize) {
    add(findings, FindingCode::kMadLength, base + size,
        fmt::format("MAD is {} bytes: the 24-byte common header does not fit", bytes.size()));
    return std::nullopt;
  }
  const std::uint8_t* p = bytes.data();
  Mad mad;
  MadHeader& h = mad.header;
  h.base_version = p[0];
  h.mgmt_class = p[1];
  h.class_version = p[2];
  h.method = p[3];
  h.status = be::load16(p + 4);
  h.class_specific = be::load16(p + 6);
  h.tid = be::load64(p + 8);
  h.attr_id = be::load16(p + 16);
  h.resv = be::load16(p + 18);
  h.attr_mod = be::load32(p + 20);
  const std::size_t used = std::min(bytes.size(), kMadSize);
  mad.data = bytes.subspan(kMadHeaderSize, used - kMadHeaderSize);

  const bool is_cm = h.mgmt_class == kMgmtClassCm;
  if (bytes.size() < kMadSize) {
    add(findings, FindingCode::kMadLength, base + size,
        fmt::format("MAD is {} bytes, expected {}{}", bytes.size(), kMadSize,
                    is_cm ? "; CM message data incomplete, not decoded" : ""));
  } else if (bytes.size() > kMadSize) {
    add(findings, FindingCode::kMadLength, base + static_cast<std::uint32_t>(kMadSize),
        fmt::format("MAD is {} bytes, expected {}; trailing bytes ignored", bytes.size(),
                    kMadSize));
  }
  if (h.base_version != 1) {
    add(findings, FindingCode::kMadVersion, base,
        fmt::format("MAD base version {} (expected 1)", h.base_version));
  }
  if (!is_cm) return mad;

  if (h.class_version != kCmClassVersion) {
    add(findings, FindingCode::kMadVersion, base + 2,
        fmt::format("CM class version {} (expected {}); a CM rejects it with REJ reason 31",
                    h.class_version, kCmClassVersion));
  }
  if (h.resv != 0) {
    add(findings, FindingCode::kReservedBits, base + 18,
        fmt::format("MAD reserved field is 0x{:04x}, must be 0", h.resv));
  }
  const std::string_view attr_name = cm_attr_name(h.attr_id);
  if (attr_name.empty()) {
    add(findings, FindingCode::kMadAttribute, base + 16,
        fmt::format("unknown CM attribute 0x{:04x}", h.attr_id));
    return mad;
  }
  if (!method_valid(h.attr_id, h.method)) {
    add(findings, FindingCode::kMadAttribute, base + 3,
        fmt::format("method 0x{:02x} is not valid for CM {}", h.method, attr_name));
  }
  if (used == kMadSize) {
    const CmData data(p + kMadHeaderSize, kCmDataSize);
    mad.cm = decode_cm(h.attr_id, data);
    if (mad.cm) check_cm(*mad.cm, base + static_cast<std::uint32_t>(kMadHeaderSize), findings);
  }
  return mad;
}

void encode_mad(const Mad& mad, std::span<std::uint8_t, kMadSize> out) {
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  const MadHeader& h = mad.header;
  std::uint8_t* p = out.data();
  p[0] = h.base_version;
  p[1] = h.mgmt_class;
  p[2] = h.class_version;
  p[3] = h.method;
  be::store16(p + 4, h.status);
  be::store16(p + 6, h.class_specific);
  be::store64(p + 8, h.tid);
  be::store16(p + 16, mad.cm ? cm_attr_id(*mad.cm) : h.attr_id);
  be::store16(p + 18, h.resv);
  be::store32(p + 20, h.attr_mod);
  const auto data = out.subspan<kMadHeaderSize, kCmDataSize>();
  if (mad.cm) {
    encode_cm(*mad.cm, data);
  } else {
    std::copy_n(mad.data.begin(), std::min(mad.data.size(), kCmDataSize), data.begin());
  }
}

}  // namespace roceconf
