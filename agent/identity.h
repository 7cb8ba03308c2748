// What identifies the device under test beyond ibv_device_attr, for the agent's hello (and so
// for the reports): the kernel driver behind the ibv device, the kernel release and the
// rdma-core release of the libibverbs the agent runs on. Each is "" when it cannot be found.
#pragma once

#include <string>
#include <string_view>

namespace roceconf::agent {

// The kernel driver of ibv device `ibdev`: the driver bound to its parent device (mlx5_core,
// bnxt_en, irdma), or rdma_rxe for a Soft-RoCE device. `sysfs` is the root (tests pass their
// own tree).
std::string device_driver(const std::string& ibdev, const std::string& sysfs = "/sys");

// uname -r.
std::string kernel_release();

// The rdma-core release ("44.0") of the libibverbs this process loaded, read from the library's
// file name: rdma-core installs libibverbs.so.1.<ABI>.<release>.
std::string rdma_core_release();
// The release in a libibverbs file name ("/usr/lib/libibverbs.so.1.14.44.0" -> "44.0").
std::string rdma_core_release_from(std::string_view library_path);

}  // namespace roceconf::agent
