"""Many devices under pytest (roceconf.pytest_plugin, roceconf.fleet): the catalogue collected
per device, `pytest -n 4` over four reference targets with different quirks giving the verdicts
of four serial `roceconf run`s, the fleet report of that run in Chromium, a device that fails its
set-up beside intact ones, and (as root) four daemons on veth pairs."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

import roceconf
from roceconf import _roceconf as core
from roceconf.fleet import parse_device, profile_device

from conftest import SOURCE_DIR

RENDER = os.path.join(SOURCE_DIR, "reports", "test", "render_in_chromium.sh")
# Four devices, each with other defects (one with two).
QUIRKS = {"clean": [], "gap": ["psn-gap-ack"], "naks": ["nak-code-swap"],
          "cm": ["tid-mismatch", "icrc-unchecked"]}
# Their areas, and header/ for the run-level case that runs after the others.
FLEET_AREAS = ["psn/*", "nak/*", "cm/*", "icrc/*", "header/*"]


def pytest_cmd(*args):
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]


def devices_args(kind, quirks=QUIRKS):
    out = []
    for name, q in quirks.items():
        out += ["--roceconf-device", f"{name}={kind}" + (":" + ",".join(q) if q else "")]
    return out


def verdicts(report_path):
    with open(report_path, encoding="utf-8") as f:
        return {c["id"]: c["verdict"] for c in json.load(f)["cases"]}


def serial_runs(cli, tmp_path, kind, quirks, filters=(), clock="virtual"):
    """One `roceconf run` per device, one after the other: {name: verdicts}, wall seconds."""
    out = {}
    start = time.monotonic()
    for name, q in quirks.items():
        path = tmp_path / f"serial-{name}.json"
        args = [cli, "run", "--target", kind, "--quiet", "--force", "--json", str(path)]
        if clock != "virtual":
            args += ["--clock", clock]
        for quirk in q:
            args += ["--quirk", quirk]
        for f in filters:
            args += ["--filter", f]
        r = subprocess.run(args, capture_output=True, text=True, timeout=1800)
        assert r.returncode in (0, 1), r.stderr
        out[name] = verdicts(path)
    return out, time.monotonic() - start


def test_device_specs():
    assert parse_device("lab-a=reference") == roceconf.fleet.Device("lab-a", "reference")
    d = parse_device("b=reference:psn-gap-ack, nak-code-swap")
    assert (d.kind, d.quirks) == ("reference", ["psn-gap-ack", "nak-code-swap"])
    assert parse_device("c=daemon:msn-stuck").spec() == "c=daemon:msn-stuck"
    assert parse_device("r=raw:/etc/dut.profile").profile == "/etc/dut.profile"
    assert profile_device("/lab/cx6 rack4.profile").name == "cx6-rack4"
    for bad in ("noequals", "=reference", "a b=reference", "a=nic", "a=raw", "a@b=reference"):
        with pytest.raises(ValueError):
            parse_device(bad)


@pytest.mark.parametrize("args,message", [
    (["--roceconf-device", "a=nic"], "unknown kind 'nic'"),
    (["--roceconf-device", "a=reference", "--roceconf-device", "a=reference:msn-stuck"],
     "device name 'a' is given twice"),
    (["--roceconf-device", "a=reference:nosuch"], "device a: unknown quirk 'nosuch'"),
    (["--roceconf-device", "a=reference", "--roceconf-quirk", "msn-stuck"],
     "give a named device its quirks"),
    (["--roceconf-device", "a=reference", "--roceconf-catalogue", "nosuch/*"], "matches no case"),
    (["--roceconf-device", "a=reference", "-n", "2", "--dist", "loadfile"],
     "would split a device's cases"),
])
def test_bad_device_options_are_usage_errors(tmp_path, args, message):
    if "-n" in args:
        pytest.importorskip("xdist")
    r = subprocess.run(pytest_cmd(*args), capture_output=True, text=True, cwd=tmp_path,
                       timeout=120)
    assert r.returncode == 4, r.stdout + r.stderr
    assert message in r.stdout + r.stderr


def test_the_catalogue_is_collected_for_every_device(tmp_path):
    r = subprocess.run(pytest_cmd("--collect-only", "--roceconf-device", "a=reference",
                                  "--roceconf-device", "b=reference:psn-gap-ack"),
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    ids = [line for line in r.stdout.splitlines() if line.startswith("catalogue::")]
    catalogue = core.catalogue()
    sources = {c["source"].rsplit(".", 1)[-1] for c in catalogue}
    assert {"rcase", "cc"} <= sources  # scripts and C++ cases alike
    assert len(ids) == 2 * len(catalogue)
    for c in catalogue:
        assert f"catalogue::{c['id']}[a]" in ids and f"catalogue::{c['id']}[b]" in ids


@pytest.fixture(scope="module")
def fleet_run(roceconf_cli, tmp_path_factory):
    """The areas of the four devices' defects on four reference targets on the wall clock (as
    devices on a wire spend real time in windows and timeouts): serially by `roceconf run --clock
    real`, then in parallel by `pytest -n 4 --roceconf-clock real`, with the wall time of each.
    (Not the whole catalogue: the other areas add wall time and nothing this test checks.)"""
    pytest.importorskip("xdist")
    tmp = tmp_path_factory.mktemp("fleet")
    serial, serial_s = serial_runs(roceconf_cli, tmp, "reference", QUIRKS, FLEET_AREAS,
                                   clock="real")
    out = tmp / "fleet"
    start = time.monotonic()
    areas = [a for area in FLEET_AREAS for a in ("--roceconf-catalogue", area)]
    r = subprocess.run(pytest_cmd("-n", "4", *devices_args("reference"), *areas,
                                  "--roceconf-clock", "real", "--roceconf-fleet", str(out),
                                  "--junitxml", str(tmp / "pytest-junit.xml")),
                       capture_output=True, text=True, cwd=tmp, timeout=1800)
    parallel_s = time.monotonic() - start
    return {"serial": serial, "serial_s": serial_s, "parallel_s": parallel_s, "out": out,
            "pytest": r, "tmp": tmp}


def test_pytest_n4_gives_the_verdicts_of_four_serial_runs(fleet_run, capsys):
    r = fleet_run["pytest"]
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr  # the quirky devices fail cases
    out = fleet_run["out"]
    for name in QUIRKS:
        got, want = verdicts(out / f"{name}.json"), fleet_run["serial"][name]
        differ = {i: (want.get(i), got.get(i)) for i in sorted(set(got) | set(want))
                  if got.get(i) != want.get(i)}
        assert not differ, f"{name}: (serial, pytest -n 4) {differ}"
    fleet = json.loads((out / "fleet.json").read_text())
    assert [d["title"] for d in fleet["devices"]] == list(QUIRKS)
    assert "psn/gap-naks-once" in fleet["disagreements"]
    # Every case the devices disagree on differs in the serial runs too, and only those.
    serial = fleet_run["serial"]
    differ = [i for i in serial["clean"] if len({serial[n][i] for n in QUIRKS}) > 1]
    # (The same set: run-level cases such as header/sent-framing run last, so report order and
    # catalogue order differ.)
    assert sorted(fleet["disagreements"]) == sorted(differ)
    assert "roceconf fleet" in r.stdout and "fleet report " in r.stdout
    with capsys.disabled():
        print(f"\nfleet timing (reference targets, wall clock): 4 serial roceconf runs "
              f"{fleet_run['serial_s']:.1f} s, pytest -n 4 {fleet_run['parallel_s']:.1f} s, "
              f"{os.cpu_count()} CPUs")


def test_every_report_names_its_device(fleet_run):
    out = fleet_run["out"]
    report = json.loads((out / "gap.json").read_text())
    device = report["target"]["device"]
    assert device["label"] == "gap" and device["name"] == "roceconf reference NIC"
    assert device["fw_ver"] == roceconf.__version__ and device["quirks"] == "psn-gap-ack"
    html = (out / "gap.html").read_text()
    assert re.search(r'<p class="device">Device: <b>gap — roceconf reference NIC, fw_ver '
                     + re.escape(roceconf.__version__), html), html[:3000]
    props = {p.get("name"): p.get("value")
             for p in ET.parse(out / "gap.junit.xml").getroot().iter("property")}
    assert props["device.label"] == "gap" and props["device.fw_ver"] == roceconf.__version__
    # pytest's own JUnit names each test's device.
    cases = ET.parse(fleet_run["tmp"] / "pytest-junit.xml").getroot().iter("testcase")
    devices = {p.get("value") for c in cases for p in c.iter("property")
               if p.get("name") == "device"}
    assert devices == set(QUIRKS)
    fleet = json.loads((out / "fleet.json").read_text())
    cm = fleet["devices"][list(QUIRKS).index("cm")]
    assert cm["version"] == (f"roceconf reference NIC · fw {roceconf.__version__} · quirks "
                             "icrc-unchecked,tid-mismatch")  # in the reference NIC's order


def test_the_fleet_report_in_chromium(fleet_run):
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        pytest.skip("chromium not installed (apt-get install chromium)")
    out = fleet_run["out"]
    dom = out / "fleet.dom.html"
    r = subprocess.run(["sh", RENDER, str(out / "fleet.html"), str(dom)], capture_output=True,
                       text=True, timeout=300)
    if r.returncode == 77:
        pytest.skip(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    text = dom.read_text()
    assert '<table class="matrix" id="disagreement-matrix">' in text
    assert '<table class="matrix" id="case-matrix">' in text
    assert 'data-case="psn/gap-naks-once"' in text
    # The failing cell links to its diff, which is on the page.
    gap = list(QUIRKS).index("gap")
    anchor = f"d{gap}-case-psn-gap-naks-once"
    assert f'href="#{anchor}"' in text
    section = text[text.index(f'id="{anchor}"'):]
    section = section[:section.index("</section>")]
    assert "aeth.syndrome expected NAK vs actual 0x1f (ACK)" in section
    assert text.index('id="disagreement-matrix"') < text.index('id="case-matrix"')


BAD_PROFILE = """interface = rcnf-nosuch0
target_mac = 02:00:00:00:00:02
target_ip = 192.0.2.2
tester_ip = 192.0.2.1
device_name = mlx5_0
firmware = 22.36.1010
driver = mlx5_core
"""


def test_a_device_that_fails_its_set_up_leaves_the_others_intact(roceconf_cli, tmp_path):
    (tmp_path / "cx6.profile").write_text(BAD_PROFILE)
    serial, _ = serial_runs(roceconf_cli, tmp_path, "reference", {"a": []}, ["psn/*"])
    args = ["--roceconf-device", "a=reference", "--roceconf-profile", "cx6.profile",
            "--roceconf-catalogue", "psn/*", "--roceconf-fleet", "out"]
    try:
        import xdist  # noqa: F401
        args += ["-n", "2"]
    except ImportError:
        pass
    r = subprocess.run(pytest_cmd(*args), capture_output=True, text=True, cwd=tmp_path,
                       timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "device cx6 failed its set-up: " in r.stdout
    assert verdicts(tmp_path / "out" / "a.json") == serial["a"]
    fleet = json.loads((tmp_path / "out" / "fleet.json").read_text())
    a, cx6 = fleet["devices"]
    assert cx6["title"] == "cx6" and "rcnf-nosuch0" in cx6["setup_error"]
    assert cx6["version"] == "mlx5_0 · fw 22.36.1010 · mlx5_core"  # from the profile
    assert cx6["summary"]["total"] == 0 and a["summary"]["total"] == len(serial["a"])
    assert "SET-UP FAILED" in (tmp_path / "out" / "fleet.html").read_text()
    # The device's own HTML report says so too.
    assert "set-up failed: interface &#39;rcnf-nosuch0&#39; not found" in (
        tmp_path / "out" / "cx6.html").read_text()
    assert re.search(r"cx6 .*SET-UP FAILED: .*rcnf-nosuch0", r.stdout), r.stdout


def netns_names():
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return {line.split()[0] for line in r.stdout.splitlines() if line.strip()}


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (each daemon on its own veth pair)")
def test_daemons_on_veth_pairs(roceconf_cli, tmp_path, capsys):
    pytest.importorskip("xdist")
    if not shutil.which("ip"):
        pytest.skip("iproute2 not installed")
    areas = ["psn/*", "nak/*", "cm/*"]
    serial, serial_s = serial_runs(roceconf_cli, tmp_path, "daemon", QUIRKS, areas)
    # Beside them a real device whose agent is down (nothing listens on its port), reached
    # through a veth pair of namespaces this test makes (scripts/netns-pair.sh) and removes.
    prefix = f"rcfl{os.getpid() % 10000}"
    pair = os.path.join(SOURCE_DIR, "scripts", "netns-pair.sh")
    lines = subprocess.run(["bash", pair, "up", prefix], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    side = dict(kv.split("=", 1) for kv in lines[0].split()[1:])
    peer = dict(kv.split("=", 1) for kv in lines[1].split()[1:])
    try:
        with socket_port() as port:
            (tmp_path / "down.profile").write_text(
                f"interface = {side['if']}\nnetns = {side['netns']}\n"
                f"target_mac = {peer['mac']}\ntarget_ip = {peer['ip'].split('/')[0]}\n"
                f"tester_ip = {side['ip'].split('/')[0]}\nagent = 127.0.0.1:{port}\n"
                "capabilities = responder,control\n")
            args = ["-n", "4", *devices_args("daemon"), "--roceconf-profile", "down.profile",
                    "--roceconf-fleet", "out"]
            for a in areas:
                args += ["--roceconf-catalogue", a]
            start = time.monotonic()
            r = subprocess.run(pytest_cmd(*args), capture_output=True, text=True, cwd=tmp_path,
                               timeout=1800)
            parallel_s = time.monotonic() - start
    finally:
        subprocess.run(["bash", pair, "down", prefix], capture_output=True)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr
    for name in QUIRKS:
        assert verdicts(tmp_path / "out" / f"{name}.json") == serial[name], name
    fleet = json.loads((tmp_path / "out" / "fleet.json").read_text())
    down = fleet["devices"][-1]
    assert down["title"] == "down" and "cannot connect to the agent" in down["setup_error"]
    assert all(d["summary"]["total"] == len(serial[d["title"]]) for d in fleet["devices"][:-1])
    # Every daemon's namespaces are gone (named in its report: other tests make their own).
    used = set()
    for name in QUIRKS:
        target = json.loads((tmp_path / "out" / f"{name}.json").read_text())["target"]
        used |= set(re.findall(r"netns ([^,)]+)", target["description"]))
    assert len(used) == 2 * len(QUIRKS) and not used & netns_names(), used
    assert not {side["netns"], peer["netns"]} & netns_names()
    with capsys.disabled():
        print(f"\ndaemon fleet timing: 4 serial roceconf runs {serial_s:.1f} s, pytest -n 4 "
              f"{parallel_s:.1f} s")


class socket_port:
    """A TCP port nothing listens on while the block runs (bound, never listening)."""

    def __enter__(self):
        import socket
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return self.sock.getsockname()[1]

    def __exit__(self, *exc):
        self.sock.close()


def test_the_run_level_case_grades_the_devices_other_cases(tmp_path):
    """header/sent-framing runs after a device's other cases under pytest too and grades their
    packets, as `roceconf run` does."""
    out = tmp_path / "fleet"
    r = subprocess.run(pytest_cmd("--roceconf-device", "df=reference:df-clear",
                                  "--roceconf-catalogue", "header/sent-framing",
                                  "--roceconf-catalogue", "psn/in-order-ack",
                                  "--roceconf-fleet", str(out)),
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr
    cases = json.loads((out / "df.json").read_text())["cases"]
    assert [c["id"] for c in cases] == ["psn/in-order-ack", "header/sent-framing"]
    framing = cases[1]
    assert framing["verdict"] == "fail"
    assert "packets in 2 cases break framing" in framing["reason"], framing["reason"]
