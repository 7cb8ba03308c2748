// Test helper shared by every layer's tests: run a shell command and take its exit status and
// standard output, or ask whether a program is installed (tshark, xmllint, chromium).
#pragma once

#include <stdio.h>
#include <sys/wait.h>

#include <string>

namespace roceconf::testutil {

struct CommandResult {
  int status = -1;
  std::string output;
};

// Runs `command` through the shell; its exit status and stdout.
inline CommandResult run(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline bool have_program(const std::string& name) {
  return run("command -v " + name + " >/dev/null 2>&1").status == 0;
}

}  // namespace roceconf::testutil
