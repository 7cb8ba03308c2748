#include "agent/identity.h"

#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace roceconf::agent {

namespace fs = std::filesystem;

std::string device_driver(const std::string& ibdev, const std::string& sysfs) {
  if (ibdev.empty() || ibdev.find('/') != std::string::npos) return {};
  const fs::path dev = fs::path(sysfs) / "class/infiniband" / ibdev;
  std::error_code ec;
  // Soft-RoCE devices have a `parent` attribute (the netdev); their `device` link, where there
  // is one, leads to the Ethernet NIC's driver, which is not the RDMA driver.
  if (fs::exists(dev / "parent", ec) && fs::exists(fs::path(sysfs) / "module/rdma_rxe", ec))
    return "rdma_rxe";
  const fs::path driver = fs::read_symlink(dev / "device/driver", ec);
  if (ec) return {};
  return driver.filename().string();
}

std::string kernel_release() {
  utsname u{};
  if (uname(&u) != 0) return {};
  return u.release;
}

std::string rdma_core_release_from(std::string_view path) {
  const auto slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  constexpr std::string_view kPrefix = "libibverbs.so.1.";
  if (!name.starts_with(kPrefix)) return {};
  name.remove_prefix(kPrefix.size());  // "<ABI>.<release>"
  const auto dot = name.find('.');
  if (dot == std::string_view::npos || dot == 0) return {};
  const std::string_view abi = name.substr(0, dot);
  const std::string_view release = name.substr(dot + 1);
  const auto digits_and_dots = [](std::string_view s) {
    return !s.empty() && std::isdigit(static_cast<unsigned char>(s.front())) &&
           std::all_of(s.begin(), s.end(), [](char c) {
             return c == '.' || std::isdigit(static_cast<unsigned char>(c));
           });
  };
  if (!digits_and_dots(abi) || !digits_and_dots(release)) return {};
  return std::string(release);
}

std::string rdma_core_release() {
  // The loaded objects name the file as loaded (the libibverbs.so.1 link); the release is in its
  // target. The agent links libibverbs, so it is loaded before main.
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        const std::string_view name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("/libibverbs.so") == std::string_view::npos) return 0;
        *static_cast<std::string*>(out) = name;
        return 1;
      },
      &found);
  if (found.empty()) return {};
  char resolved[PATH_MAX];
  if (!realpath(found.c_str(), resolved)) return {};
  return rdma_core_release_from(resolved);
}

}  // namespace roceconf::agent
