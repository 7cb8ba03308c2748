// roceconf-agent: runs on the DUT host. Responder mode (--listen) follows the responder
// convention so `roceconf run --target raw` can grade the device on the wire; control mode
// (--control) serves the control API over TCP so the control cases run against it too
// (`--agent HOST:PORT`). One thread, one poll loop. The control API drives the device (it can
// read and write registered memory), so controllers authenticate with a shared secret
// (--secret-file or $ROCECONF_AGENT_SECRET; control/CONTROL_API.md), and a wildcard
// --control address without one is refused.
#include <poll.h>
#include <signal.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "agent/control_server.h"
#include "agent/responder.h"
#include "control/auth.h"
#include "man/cli_roff.h"

namespace {

volatile std::sig_atomic_t stop_requested = 0;
void on_signal(int) {
  stop_requested = 1;
}

int error(const std::string& line) {
  fmt::print(stderr, "roceconf-agent: error: {}\n", line);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace roceconf::agent;
  CLI::App app{"roceconf-agent: the DUT side of roceconf (responder convention and control API)"};
  std::vector<std::string> listen;
  std::string control, secret_file;
  SessionOptions session;
  unsigned port_num = 1;
  ResponderConfig responder;
  app.add_option("--device", session.device, "RDMA device (ibv_devices), default: the first");
  app.add_option("--ib-port", port_num, "the device's port number")->check(CLI::Range(1, 255));
  app.add_option("--kernel-log", session.kernel_log,
                 "where the kernel_log op reads the host's kernel log records (default /dev/kmsg)");
  app.add_option("--listen", listen,
                 "responder: ADDR:PORT to accept rdma_cm connections on (rping's port is 7471); "
                 "repeat it for the IPv6 address ([ADDR]:PORT) of RoCEv2 over IPv6");
  app.add_option("--control", control,
                 "control API: HOST:PORT of the TCP socket (JSON lines); bind the test link's "
                 "address");
  app.add_option("--secret-file", secret_file,
                 "control API: file holding the secret controllers must prove (mode 600; "
                 "default: $ROCECONF_AGENT_SECRET)");
  app.add_option("--region-size", responder.region_size,
                 "responder: bytes of each connection's region")
      ->check(CLI::Range(8u, 1u << 30));
  app.add_option("--recv-depth", responder.recv_depth, "responder: receives kept posted")
      ->check(CLI::Range(1u, 4096u));
  app.add_option("--recv-buffer-size", responder.recv_buffer_size, "responder: bytes per receive")
      ->check(CLI::Range(1u, 1u << 20));
  bool man = false;
  // Hidden: the build writes roceconf-agent(8) with it, from this very tree.
  app.add_flag("--man", man, "print this command's man page (roff)")->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return error(fmt::format("{} (see --help)", e.what()));
  }
  if (man) {
    fmt::print("{}", roceconf::man::page(app, "8", ROCECONF_VERSION,
                                         ".BR roceconf (1),\n.BR roceconf\\-profile (5)"));
    return 0;
  }
  session.port = static_cast<std::uint8_t>(port_num);
  if (listen.empty() && control.empty())
    return error(
        "nothing to do: give --listen ADDR:PORT (responder), --control HOST:PORT, or both");

  if (!secret_file.empty() && control.empty())
    return error("--secret-file protects the control API: give --control HOST:PORT too");
  std::string secret;
  if (!control.empty()) {
    auto found = roceconf::control::find_secret(secret_file);
    if (!found) return error(found.error());
    if (*found) secret = std::move(**found);
  }

  std::unique_ptr<Responder> resp;
  if (!listen.empty()) {
    responder.listen.clear();
    for (const std::string& text : listen) {
      auto hp = split_host_port(text, "--listen");
      if (!hp) return error(hp.error());
      responder.listen.push_back(*hp);
    }
    auto r = Responder::start(responder);
    if (!r) return error(r.error());
    resp = std::move(*r);
    fmt::print(stderr,
               "roceconf-agent: responder listens on {} (region {} B, {} receives of {} B)\n",
               fmt::join(listen, " and "), responder.region_size, responder.recv_depth,
               responder.recv_buffer_size);
  }
  std::unique_ptr<ControlServer> server;
  if (!control.empty()) {
    auto s = ControlServer::listen(control, session, secret);
    if (!s) return error(s.error());
    server = std::move(*s);
    if (secret.empty()) {
      fmt::print(stderr,
                 "roceconf-agent: warning: the control API on {} has no secret: whoever reaches "
                 "it can read and write device memory (give --secret-file FILE)\n",
                 control);
    }
    fmt::print(stderr, "roceconf-agent: control API on {} ({})\n", control,
               secret.empty() ? "no authentication" : "controllers authenticate with the secret");
  }

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  enum class Kind { kCm, kCompletion, kAsync, kListen, kClient, kSessionCm };
  while (!stop_requested) {
    std::vector<pollfd> fds;
    std::vector<Kind> kinds;
    auto add = [&](int fd, Kind k) {
      if (fd < 0) return;
      fds.push_back({fd, POLLIN, 0});
      kinds.push_back(k);
    };
    if (resp) {
      add(resp->cm_fd(), Kind::kCm);
      add(resp->completion_fd(), Kind::kCompletion);
      add(resp->async_fd(), Kind::kAsync);
    }
    if (server) {
      add(server->listen_fd(), Kind::kListen);
      server->for_each_client([&](int fd) { add(fd, Kind::kClient); });
      server->for_each_cm_fd([&](int fd) { add(fd, Kind::kSessionCm); });
    }
    const int n = poll(fds.data(), fds.size(), 500);
    if (server) server->expire_unauthenticated(std::chrono::steady_clock::now());
    if (n <= 0) continue;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      switch (kinds[i]) {
        case Kind::kCm:
          resp->on_cm_event();
          break;
        case Kind::kCompletion:
          resp->on_completion();
          break;
        case Kind::kAsync:
          resp->on_async_event();
          break;
        case Kind::kListen:
          server->on_accept();
          break;
        case Kind::kClient:
          server->on_readable(fds[i].fd);
          break;
        case Kind::kSessionCm:
          server->on_cm_readable(fds[i].fd);
          break;
      }
    }
  }
  fmt::print(stderr, "roceconf-agent: stopping\n");
  return 0;
}
