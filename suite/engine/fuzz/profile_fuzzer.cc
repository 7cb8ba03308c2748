// libFuzzer target for the raw target's profile (PROFILE.md): each input is parsed as a profile
// file and, when it parses, validated. Every rejection is one line that names the file, never a
// crash; an accepted profile can be validated.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "suite/engine/profile.h"

namespace {

constexpr std::string_view kSource = "fuzz.profile";

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "profile_fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

void check_error(const std::string& error) {
  if (error.empty()) fail("an empty error", error);
  if (error.find('\n') != std::string::npos) fail("an error of more than one line", error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto profile = roceconf::engine::parse_profile(text, kSource);
  if (!profile) {
    check_error(profile.error());
    if (!profile.error().starts_with(kSource))
      fail("an error that does not name the file", profile.error());
    return 0;
  }
  if (auto valid = roceconf::engine::validate(*profile); !valid) check_error(valid.error());
  return 0;
}
