interface = veth0
target_mac = 02-00-00-00-00-01
target_ip = 198.51.100.2
tester_ip = 198.51.100.1
