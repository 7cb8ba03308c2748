// Python cases for a program that embeds the interpreter: `roceconf run --cases` loads them into
// its own process through this, so the command line calls down into Python and nothing calls
// back up into it. The header has no Python in it; the command line links roceconf_python_embed.
#pragma once

#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace roceconf::engine {
struct CaseDef;
}

namespace roceconf::python {

class EmbeddedCases {
 public:
  // Starts the interpreter (without its signal handlers: the run keeps its own), makes the
  // package `roceconf` importable from `package_dir` with this program's own core as
  // roceconf._roceconf, and imports the @roceconf.case functions of `paths` (files or
  // directories). Errors are one line: a file that does not import, no case found.
  static std::expected<std::unique_ptr<EmbeddedCases>, std::string> load(
      const std::string& package_dir, const std::vector<std::string>& paths);
  ~EmbeddedCases();  // drops the cases, then stops the interpreter

  // Runs `body` with the interpreter's lock released, so cases take it only while they run.
  int run(const std::function<int(const std::vector<engine::CaseDef>&)>& body);

  EmbeddedCases(const EmbeddedCases&) = delete;
  EmbeddedCases& operator=(const EmbeddedCases&) = delete;

 private:
  EmbeddedCases();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace roceconf::python
