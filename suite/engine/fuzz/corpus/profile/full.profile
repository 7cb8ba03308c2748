# ConnectX-6 Dx in rack 4, port 1, reached through this host's eth1
interface    = eth1
target_mac   = 0c:42:a1:00:00:02
target_ip    = 192.0.2.2
tester_ip    = 192.0.2.1
pmtu         = 4096        # the interface has MTU 9000
capabilities = responder   # `rping`-style listener following the RCNF convention
agent        = 192.0.2.2:7700   # roceconf-agent --control 192.0.2.2:7700 on the DUT host
agent_secret_file = /etc/roceconf/dut.secret
firmware     = 22.36.1010
