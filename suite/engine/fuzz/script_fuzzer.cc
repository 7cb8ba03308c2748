// libFuzzer target for the case language: each input is parsed and checked as a .rcase script.
// A script that parses is a list of typed steps; one that does not gets one error that names
// the script and the line ("fuzz.rcase:LINE: what is wrong"), never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "suite/engine/script.h"

namespace {

constexpr const char* kPath = "fuzz.rcase";

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "script_fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto script = roceconf::engine::parse_script(kPath, text);
  if (!script) {
    const std::string& error = script.error();
    if (!error.starts_with(std::string(kPath) + ":"))
      fail("an error that does not name the script", error);
    if (error.find('\n') != std::string::npos) fail("an error of more than one line", error);
    return 0;
  }
  // A script that parsed parses again to the same steps: nothing depends on state left over.
  const auto again = roceconf::engine::parse_script(kPath, text);
  if (!again || again->steps.size() != script->steps.size())
    fail("a second parse differs", again ? "step count" : again.error());
  return 0;
}
