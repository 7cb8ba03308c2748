"""`roceconf run --cases FILE|DIR`: Python cases run beside the built-in catalogue into the same
reports (JSON, JUnit), verdicts following the reference target's defects; mistakes are one
`roceconf: error:` line and exit 2. `python3 -m roceconf run` is the same command."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

CASES = '''
import roceconf

@roceconf.case(id="cli/duplicate-send", clause="IBA Vol 1 9.7.5.1.1", needs=["responder"])
def duplicate_send(ctx):
    """A duplicate SEND is re-ACKed with the same MSN."""
    c = ctx.connect()
    ctx.send(c, "SEND_ONLY", psn=0, ackreq=1, len=64)
    ctx.expect(c, "ACK", psn=0, msn=1)
    ctx.send(c, "SEND_ONLY", psn=0, ackreq=1, len=64)
    ctx.expect(c, "ACK", psn=0, msn=1)
'''


def run(cli, *args, cwd=None):
    return subprocess.run([cli, "run", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def verdicts(tmp_path):
    report = json.loads((tmp_path / "r.json").read_text())
    junit = ET.parse(tmp_path / "j.xml").getroot()
    by_id = {c["id"]: c for c in report["cases"]}
    cases = {t.get("name"): t for t in junit.iter("testcase")}
    return by_id, cases


@pytest.fixture
def case_file(tmp_path):
    path = tmp_path / "my_cases.py"
    path.write_text(CASES)
    return path


def test_pass_on_the_clean_reference_in_json_and_junit(roceconf_cli, case_file, tmp_path):
    r = run(roceconf_cli, "--cases", str(case_file), "--filter", "cli/*",
            "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "j.xml"))
    assert r.returncode == 0, r.stderr
    by_id, junit = verdicts(tmp_path)
    assert by_id["cli/duplicate-send"]["verdict"] == "pass"
    assert by_id["cli/duplicate-send"]["source"].endswith("my_cases.py:4")
    case = junit["cli/duplicate-send"]
    assert case.find("failure") is None and case.find("error") is None


def test_fail_with_a_quirk_in_json_and_junit(roceconf_cli, case_file, tmp_path):
    r = run(roceconf_cli, "--cases", str(case_file), "--filter", "cli/*", "--quirk",
            "msn-stuck", "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "j.xml"))
    assert r.returncode == 1
    by_id, junit = verdicts(tmp_path)
    c = by_id["cli/duplicate-send"]
    assert c["verdict"] == "fail"
    assert c["failed_step"].startswith("my_cases.py:9 expect c ACK psn=0 msn=1")
    assert any(d["field"] == "aeth.msn" for d in c["diffs"])
    failure = junit["cli/duplicate-send"].find("failure")
    assert failure is not None and "aeth.msn" in (failure.text or "") + failure.get("message", "")


def test_beside_the_catalogue_and_from_a_directory(roceconf_cli, case_file, tmp_path):
    listed = run(roceconf_cli, "--list").stdout.splitlines()
    with_cases = run(roceconf_cli, "--cases", str(tmp_path), "--list").stdout.splitlines()
    assert len(with_cases) == len(listed) + 1
    assert any(line.startswith("cli/duplicate-send") for line in with_cases)
    r = run(roceconf_cli, "--cases", str(tmp_path), "--quiet", "--json", str(tmp_path / "r.json"),
            "--junit", str(tmp_path / "j.xml"))
    assert r.returncode == 0, r.stderr
    by_id, _ = verdicts(tmp_path)
    assert "psn/gap-naks-once" in by_id and by_id["cli/duplicate-send"]["verdict"] == "pass"
    assert all(c["verdict"] in ("pass", "skip") for c in by_id.values())


def test_python_dash_m_is_the_same_command(case_file, tmp_path):
    r = subprocess.run([sys.executable, "-m", "roceconf", "run", "--cases", str(case_file),
                        "--filter", "cli/*", "--quirk", "msn-stuck", "--json",
                        str(tmp_path / "r.json"), "--junit", str(tmp_path / "j.xml")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    assert verdicts(tmp_path)[0]["cli/duplicate-send"]["verdict"] == "fail"


@pytest.mark.parametrize("content,message", [
    (None, "no such file or directory"),
    ("def broken(:\n", "SyntaxError"),
    ("x = 1\n", "no @roceconf.case function"),
    ("import roceconf\n@roceconf.case(id='psn/gap-naks-once', clause='x')\ndef f(ctx): pass\n",
     "is taken by"),
])
def test_mistakes_are_one_line_and_exit_2(roceconf_cli, tmp_path, content, message):
    path = tmp_path / "bad.py"
    if content is not None:
        path.write_text(content)
    r = run(roceconf_cli, "--cases", str(path), "--list")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("roceconf: error: ") and message in lines[0]


def test_missing_module_is_one_line(roceconf_cli, case_file, tmp_path):
    # A copy of the binary without the module next to it.
    lonely = tmp_path / "bin" / "roceconf"
    lonely.parent.mkdir()
    lonely.write_bytes(open(roceconf_cli, "rb").read())
    lonely.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([str(lonely), "run", "--cases", str(case_file)], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 2
    assert r.stderr.startswith("roceconf: error: --cases needs the Python module")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (the daemon runs in its own netns)")
def test_python_cases_against_the_daemon(roceconf_cli, case_file, tmp_path):
    r = run(roceconf_cli, "--cases", str(case_file), "--filter", "cli/*", "--target", "daemon",
            "--quirk", "msn-stuck", "--json", str(tmp_path / "r.json"), "--junit",
            str(tmp_path / "j.xml"))
    assert r.returncode == 1, r.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["target"]["kind"] == "daemon"
    assert verdicts(tmp_path)[0]["cli/duplicate-send"]["verdict"] == "fail"
