#include "control/fields.h"

#include <algorithm>
#include <charconv>

namespace roceconf::control {

using nlohmann::json;

std::string shown(const json& v) {
  if (v.is_array()) return "a list";
  if (v.is_object()) return "an object";
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

Fields::Fields(const json& object, std::string where, bool request)
    : obj_(object), where_(std::move(where)), request_(request) {
  if (!obj_.is_object()) fail("{}: expected an object, got {}", where_, shown(obj_));
}

void Fields::only(std::span<const std::string_view> known) const {
  for (const auto& [key, value] : obj_.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    if (request_ && (key == "id" || key == "op")) continue;
    std::string list;
    for (std::string_view k : known) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
    fail("{}: unknown field '{}' (known: {})", where_, key, list.empty() ? "none" : list);
  }
}

const json& Fields::at(std::string_view key) const {
  const auto it = obj_.find(key);
  if (it == obj_.end()) fail("{}: '{}' is missing", where_, key);
  return *it;
}

std::uint64_t Fields::u(std::string_view key, std::uint64_t max) const {
  return to_unsigned(at(key), path(key), max);
}

bool Fields::boolean(std::string_view key, bool fallback) const {
  if (!has(key)) return fallback;
  const json& v = at(key);
  if (!v.is_boolean()) fail("{}: must be true or false, got {}", path(key), shown(v));
  return v.get<bool>();
}

std::string Fields::text(std::string_view key) const {
  const json& v = at(key);
  if (!v.is_string()) fail("{}: must be a string, got {}", path(key), shown(v));
  return v.get<std::string>();
}

const json& Fields::array(std::string_view key) const {
  const json& v = at(key);
  if (!v.is_array()) fail("{}: must be a list, got {}", path(key), shown(v));
  return v;
}

std::uint64_t Fields::to_unsigned(const json& v, const std::string& where, std::uint64_t max) {
  std::uint64_t value = 0;
  if (v.is_number_unsigned()) {
    value = v.get<std::uint64_t>();
  } else if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    value = static_cast<std::uint64_t>(v.get<std::int64_t>());
  } else if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    const bool is_hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const char* first = s.data() + (is_hex ? 2 : 0);
    const char* last = s.data() + s.size();
    const auto [end, ec] = std::from_chars(first, last, value, is_hex ? 16 : 10);
    if (first == last || ec != std::errc{} || end != last)
      fail("{}: '{}' is not an unsigned integer (decimal, or hex with 0x)", where, s);
  } else {
    fail("{}: must be an unsigned integer, got {}", where, shown(v));
  }
  if (value > max) fail("{}: {} is above the largest allowed value {}", where, value, max);
  return value;
}

std::vector<std::uint8_t> Fields::hex(std::string_view key) const {
  const std::string s = text(key);
  if (s.size() % 2 != 0) fail("{}: hex data has an odd number of digits ({})", path(key), s.size());
  std::vector<std::uint8_t> out(s.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto [end, ec] = std::from_chars(s.data() + 2 * i, s.data() + 2 * i + 2, out[i], 16);
    if (ec != std::errc{} || end != s.data() + 2 * i + 2)
      fail("{}: '{}' at offset {} is not a hex byte", path(key), s.substr(2 * i, 2), 2 * i);
  }
  return out;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(bytes.size() * 2, '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xF];
  }
  return out;
}

}  // namespace roceconf::control
