// Reports appear whole or not at all: a crash or Ctrl-C mid-write never leaves half a file where
// a CI job or a browser will read it.
#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace roceconf::report {

// Writes `content` to a temporary file in the directory of `path`, fsyncs it, and renames it over
// `path` (then fsyncs the directory). The file gets mode 0666 less the umask. The error is one
// line naming the path and what to do.
std::expected<void, std::string> write_file_atomic(const std::string& path,
                                                   std::string_view content);

}  // namespace roceconf::report
