// The identity the agent's hello adds: the kernel driver from a sysfs tree (a PCI device, a
// Soft-RoCE device, an unknown one), the rdma-core release from libibverbs' file name, and the
// kernel release.
#include "agent/identity.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/utsname.h>

#include <filesystem>
#include <fstream>
#include <regex>

namespace roceconf::agent {
namespace {

namespace fs = std::filesystem;

class FakeSysfs {
 public:
  FakeSysfs() {
    std::string pattern = (fs::temp_directory_path() / "rcnf-sysfs-XXXXXX").string();
    root_ = mkdtemp(pattern.data());
  }
  ~FakeSysfs() { fs::remove_all(root_); }
  const std::string& root() const { return root_; }
  fs::path path(const std::string& relative) const { return fs::path(root_) / relative; }

 private:
  std::string root_;
};

TEST(AgentIdentity, DriverOfAPciDeviceIsTheBoundDriver) {
  FakeSysfs sys;
  fs::create_directories(sys.path("bus/pci/drivers/mlx5_core"));
  fs::create_directories(sys.path("devices/pci0000:00/0000:00:02.0"));
  fs::create_symlink(sys.path("bus/pci/drivers/mlx5_core"),
                     sys.path("devices/pci0000:00/0000:00:02.0/driver"));
  fs::create_directories(sys.path("class/infiniband/mlx5_0"));
  fs::create_directory_symlink(sys.path("devices/pci0000:00/0000:00:02.0"),
                               sys.path("class/infiniband/mlx5_0/device"));
  EXPECT_EQ(device_driver("mlx5_0", sys.root()), "mlx5_core");
  EXPECT_EQ(device_driver("mlx5_1", sys.root()), "") << "no such device";
  EXPECT_EQ(device_driver("../mlx5_0", sys.root()), "") << "a name, not a path";
}

TEST(AgentIdentity, SoftRoceDeviceIsRdmaRxeNotItsNetdevsDriver) {
  FakeSysfs sys;
  fs::create_directories(sys.path("bus/virtio/drivers/virtio_net"));
  fs::create_directories(sys.path("devices/virtio0"));
  fs::create_symlink(sys.path("bus/virtio/drivers/virtio_net"), sys.path("devices/virtio0/driver"));
  fs::create_directories(sys.path("class/infiniband/rxe0"));
  fs::create_directory_symlink(sys.path("devices/virtio0"),
                               sys.path("class/infiniband/rxe0/device"));
  std::ofstream(sys.path("class/infiniband/rxe0/parent")) << "eth0\n";
  EXPECT_EQ(device_driver("rxe0", sys.root()), "virtio_net") << "rdma_rxe is not loaded";
  fs::create_directories(sys.path("module/rdma_rxe"));
  EXPECT_EQ(device_driver("rxe0", sys.root()), "rdma_rxe");
}

TEST(AgentIdentity, RdmaCoreReleaseFromTheLibraryName) {
  EXPECT_EQ(rdma_core_release_from("/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"), "44.0");
  EXPECT_EQ(rdma_core_release_from("libibverbs.so.1.14.50.1"), "50.1");
  EXPECT_EQ(rdma_core_release_from("/usr/lib/libibverbs.so.1"), "");
  EXPECT_EQ(rdma_core_release_from("/usr/lib/libibverbs.so.1.14"), "");
  EXPECT_EQ(rdma_core_release_from("/usr/lib/libibverbs.so.1.14.x"), "");
  EXPECT_EQ(rdma_core_release_from("/usr/lib/librdmacm.so.1.3.44.0"), "");
  // This process links libibverbs: its release is found (Debian: rdma-core 44.0 and later).
  const std::string here = rdma_core_release();
  EXPECT_TRUE(std::regex_match(here, std::regex(R"([0-9]+(\.[0-9]+)*)"))) << "'" << here << "'";
}

TEST(AgentIdentity, KernelIsUnameRelease) {
  utsname u{};
  ASSERT_EQ(uname(&u), 0);
  EXPECT_EQ(kernel_release(), u.release);
}

}  // namespace
}  // namespace roceconf::agent
