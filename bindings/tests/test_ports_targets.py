"""Ports and targets from Python: an in-memory pair, the reference target (with quirks) spoken
to with packets built here, its control API, and (as root) a raw socket on a veth pair and the
reference daemon."""

import os
import subprocess
import uuid

import pytest

import roceconf
from roceconf import BTH, DETH, IP, MAD, UDP, ClassPortInfo, Ether


def test_memory_pair():
    a, b = roceconf.memory_pair()
    frame = bytes(Ether() / IP() / UDP() / BTH(psn=9))
    a.send(frame)
    got, unix_ns = b.receive(timeout=1.0)
    assert got == frame and unix_ns > 0
    assert b.receive(timeout=0.01) is None
    a.close()
    a.close()  # idempotent
    with pytest.raises(roceconf.TransportError):
        a.send(frame)


def class_port_info_get(target):
    t, d = target.tester, target.device
    return (Ether(src=t["mac"], dst=d["mac"]) / IP(src=t["ip"], dst=d["ip"]) / UDP() /
            BTH() / MAD(method=0x01, tid=0x77) / ClassPortInfo())


def test_reference_target_answers_a_mad_built_here():
    target = roceconf.Target.reference()
    assert target.kind == "reference" and target.capabilities["control"]
    # The reference NIC models RoCEv2 congestion management (CNPs, a rate limiter); its own
    # packets are Not-ECT, as it declares.
    assert target.capabilities["congestion_management"] is True
    target.port.send(bytes(class_port_info_get(target)))
    data, _ = target.port.receive(timeout=1.0)
    answer = roceconf.parse(data)
    assert answer[MAD].method == 0x81 and answer[MAD].tid == 0x77
    assert "ClassPortInfo" in answer and answer[DETH].qkey == 0x80010000
    assert target.rtt() >= 0  # virtual time: the reference answers at once
    target.close()
    with pytest.raises(roceconf.TargetError):
        target.kind


def test_reference_target_quirks_and_control():
    with pytest.raises(roceconf.TargetError, match="no-such-quirk"):
        roceconf.Target.reference(["no-such-quirk"])
    target = roceconf.Target.reference(["dup-reexecute"])
    hello = target.control({"op": "hello"})
    assert hello["ok"] and "dup-reexecute" in hello["quirks"]
    pd = target.control({"op": "alloc_pd"})
    assert pd["ok"] and "pd" in pd
    bad = target.control({"op": "dealloc_pd", "pd": 999})
    assert not bad["ok"]


root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")


@root
def test_raw_socket_port_on_a_veth_pair():
    name = "rcpy" + uuid.uuid4().hex[:4]
    a, b = name + "a", name + "b"
    subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
    try:
        for dev in (a, b):
            subprocess.run(["ip", "link", "set", dev, "up"], check=True)
        pa = roceconf.raw_socket_port(a)
        pb = roceconf.raw_socket_port(b)
        frame = bytes(Ether(dst="02:00:00:00:00:02") / IP(src="192.0.2.1", dst="192.0.2.2") /
                      UDP() / BTH(psn=42))
        pa.send(frame)
        got = pb.receive(timeout=2.0)
        assert got is not None and roceconf.parse(got[0])[BTH].psn == 42
        pa.close()
        pb.close()
    finally:
        subprocess.run(["ip", "link", "del", a], check=False)
    with pytest.raises(roceconf.TransportError, match="not found"):
        roceconf.raw_socket_port("rcpy-missing0")


@root
def test_daemon_target(roceconf_cli):
    target = roceconf.Target.daemon(["msn-stuck"], roceconf_cli)
    try:
        assert target.kind == "daemon"
        assert "msn-stuck" in target.control({"op": "hello"})["quirks"]
        target.port.send(bytes(class_port_info_get(target)))
        for _ in range(10):
            got = target.port.receive(timeout=2.0)
            assert got is not None
            pkt = roceconf.parse(got[0], strict=False)
            if "MAD" in pkt and pkt[MAD].tid == 0x77:
                break
        else:
            pytest.fail("no ClassPortInfo answer")
    finally:
        target.close()


def test_control_client_errors(tmp_path):
    with pytest.raises(roceconf.TransportError):
        roceconf.ControlClient(str(tmp_path / "no.sock"), timeout=0.1)


def test_blocking_receive_releases_the_gil():
    import threading
    import time
    a, b = roceconf.memory_pair()
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    start = len(ticks)
    assert b.receive(timeout=0.3) is None  # blocks 0.3 s in C++
    during = len(ticks) - start
    done.set()
    t.join()
    assert during > 20, f"the other thread ran {during} times while receive() waited"
