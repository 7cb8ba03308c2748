// The raw socket port's errors, which must say what to do. Traffic over a real veth pair is in
// netns_pair_test.cc.
#include "capture/port/raw_socket_port.h"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

namespace roceconf {
namespace {

TEST(RawSocketPortTest, AMissingInterfaceIsNamed) {
  auto port = RawSocketPort::open({.interface = "rcnf-missing0"});
  ASSERT_FALSE(port);
  EXPECT_EQ(port.error().code, PortErrorCode::kNotFound);
  EXPECT_EQ(port.error().message, "interface 'rcnf-missing0' not found (see `ip link`)");

  auto too_long = RawSocketPort::open({.interface = "an-interface-name-too-long"});
  ASSERT_FALSE(too_long);
  EXPECT_EQ(too_long.error().code, PortErrorCode::kNotFound);
}

TEST(RawSocketPortTest, AMissingNamespaceIsNamed) {
  auto port = RawSocketPort::open({.interface = "lo", .netns = "rcnf-no-such-ns"});
  ASSERT_FALSE(port);
  EXPECT_EQ(port.error().code, PortErrorCode::kNotFound);
  EXPECT_EQ(port.error().message,
            "network namespace 'rcnf-no-such-ns' not found (see `ip netns list`; "
            "scripts/netns-pair.sh up creates one)");
}

// Drops CAP_NET_RAW from the calling thread's effective set (capabilities are per thread).
bool drop_cap_net_raw() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  data[CAP_NET_RAW / 32].effective &= ~(1u << (CAP_NET_RAW % 32));
  return syscall(SYS_capset, &header, data) == 0;
}

TEST(RawSocketPortTest, WithoutCapNetRawTheErrorSaysHowToGetIt) {
  std::expected<std::unique_ptr<RawSocketPort>, PortError> port = std::unexpected(PortError{});
  bool dropped = false;
  // On a thread of its own, so the rest of the test process keeps its capabilities.
  std::thread t([&] {
    dropped = drop_cap_net_raw();
    if (dropped) port = RawSocketPort::open({.interface = "lo"});
  });
  t.join();
  if (!dropped) GTEST_SKIP() << "cannot drop CAP_NET_RAW on a thread here (capset failed)";
  ASSERT_FALSE(port);
  EXPECT_EQ(port.error().code, PortErrorCode::kPermission);
  EXPECT_EQ(port.error().message,
            "raw sockets need CAP_NET_RAW: run as root or `setcap cap_net_raw+ep build/roceconf`");
}

TEST(RawSocketPortTest, OpensOnLoopbackWhenPrivileged) {
  auto port = RawSocketPort::open({.interface = "lo"});
  if (!port && port.error().code == PortErrorCode::kPermission)
    GTEST_SKIP() << "needs CAP_NET_RAW: " << port.error().message;
  ASSERT_TRUE(port) << port.error().message;
  EXPECT_EQ((*port)->name(), "lo");
  EXPECT_GT((*port)->ifindex(), 0);
  // Nothing is sent on the host's loopback; an empty wait ends at its deadline.
  const TimeNs start = (*port)->clock().now_ns();
  auto got = (*port)->receive(start + 20'000'000);
  ASSERT_TRUE(got) << got.error().message;
  if (!*got) {
    EXPECT_GE((*port)->clock().now_ns() - start, 20'000'000);
  }
}

TEST(RawSocketVlan, RestoredTagGoesAfterTheMacs) {
  std::vector<std::uint8_t> frame = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x08, 0x00, 0x45};
  restore_vlan_tag(frame, 0x8100, 0xA064);  // priority 5, VLAN 100
  EXPECT_EQ(frame, (std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x81, 0x00,
                                              0xA0, 0x64, 0x08, 0x00, 0x45}));
  std::vector<std::uint8_t> runt = {1, 2, 3};
  restore_vlan_tag(runt, 0x8100, 1);
  EXPECT_EQ(runt.size(), 3u);  // no room for a tag: left alone
}

}  // namespace
}  // namespace roceconf
