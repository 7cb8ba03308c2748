interface = eth1
interface = eth2
target_mac = 0c:42:a1:00:00:0
pmtu = 1000
capabilities = nonsense
