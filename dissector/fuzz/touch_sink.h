// Shared by the fuzz targets: a FieldSink that reads every byte of every value and finding, so
// that ASan catches a view past its frame.
#pragma once

#include <cstdint>
#include <string_view>
#include <variant>

#include "dissector/fields.h"
#include "dissector/finding.h"

namespace roceconf::fuzz {

class TouchSink : public FieldSink {
 public:
  void field(std::string_view layer, std::string_view name, const FieldValue& value) override {
    mix(layer);
    mix(name);
    std::visit([this](const auto& v) { touch(v); }, value);
  }
  void mix(std::string_view s) {
    for (char c : s) sum_ = sum_ * 31 + static_cast<unsigned char>(c);
  }
  void mix(Bytes b) {
    for (std::uint8_t c : b) sum_ = sum_ * 31 + c;
  }
  void touch(const Findings& findings) {
    for (const Finding& f : findings) {
      mix(f.code_name());
      mix(f.message);
      sum_ += f.offset;
    }
  }
  std::uint64_t sum() const { return sum_; }

 private:
  void touch(std::uint64_t v) { sum_ += v; }
  void touch(bool v) { sum_ += v; }
  void touch(std::string_view v) { mix(v); }
  void touch(Bytes v) { mix(v); }
  void touch(const Address& a) { mix(a.bytes); }

  std::uint64_t sum_ = 0;
};

}  // namespace roceconf::fuzz
