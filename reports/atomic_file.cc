#include "reports/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

namespace roceconf::report {
namespace {

std::string advice(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return "create the directory or choose another output path";
    case EACCES:
    case EPERM:
    case EROFS:
      return "choose a writable directory or fix its permissions";
    case ENOSPC:
    case EDQUOT:
      return "free some disk space";
    case EISDIR:
      return "name a file, not a directory";
    default:
      return "check the path and the file system";
  }
}

std::unexpected<std::string> failure(const std::string& path, std::string_view what, int err) {
  return std::unexpected(
      fmt::format("cannot write {}: {}: {} ({})", path, what, std::strerror(err), advice(err)));
}

}  // namespace

std::expected<void, std::string> write_file_atomic(const std::string& path,
                                                   std::string_view content) {
  if (path.empty()) return std::unexpected(std::string("cannot write a file with an empty name"));
  const std::filesystem::path target(path);
  if (!target.has_filename()) return failure(path, "no file name", EISDIR);
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  // open() with 0666 rather than mkstemp(): the kernel applies the umask as for any other file
  // the user writes (mkstemp makes 0600, and reading the umask by setting it races threads).
  std::string temp;
  int fd = -1;
  std::random_device random;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    temp = (dir / fmt::format(".{}.{:08x}.tmp", target.filename().string(), random())).string();
    fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) return failure(path, "create temporary file", errno);
  }
  if (fd < 0) return failure(path, "create temporary file", EEXIST);
  const auto abandon = [&](std::string_view what, int err) {
    close(fd);
    unlink(temp.c_str());
    return failure(path, what, err);
  };

  for (std::size_t written = 0; written < content.size();) {
    const ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return abandon("write", errno);
    }
    written += static_cast<std::size_t>(n);
  }
  if (fsync(fd) != 0) return abandon("fsync", errno);
  if (close(fd) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    return failure(path, "close", err);
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    return failure(path, "rename", err);
  }
  // The rename itself is durable only once the directory is synced; failure here is harmless.
  if (const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return {};
}

}  // namespace roceconf::report
