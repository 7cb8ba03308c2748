// Shell helpers of the root-only engine tests: a command's output and the namespaces that exist.
#pragma once

#include <cstdio>
#include <set>
#include <sstream>
#include <string>

namespace roceconf::engine::test {

inline std::string run(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, p)) out += buffer;
  pclose(p);
  return out;
}

inline std::set<std::string> netns_list() {
  std::set<std::string> names;
  std::istringstream in(run("ip netns list 2>/dev/null"));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) names.insert(line.substr(0, line.find(' ')));
  return names;
}

}  // namespace roceconf::engine::test
