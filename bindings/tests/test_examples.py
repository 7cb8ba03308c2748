"""The examples/ cases: all pass on the clean reference target through `roceconf run --cases
examples/`, each fails with the defect it is meant to catch, and they run under pytest too: the
PYTHON.md's pytest line as written, `pytest .` in a directory of case files, and a bad option as
pytest's one-line usage error."""

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR

EXAMPLES = os.path.join(SOURCE_DIR, "examples")


def verdicts(cli, tmp_path, *args):
    out = tmp_path / "r.json"
    r = subprocess.run([cli, "run", "--cases", EXAMPLES, "--filter", "vendor/*", "--quiet",
                        "--json", str(out), *args], capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    return {c["id"]: c["verdict"] for c in json.loads(out.read_text())["cases"]}


def test_examples_pass_on_the_clean_reference(roceconf_cli, tmp_path):
    v = verdicts(roceconf_cli, tmp_path)
    assert len(v) == 5 and set(v.values()) == {"pass"}, v


@pytest.mark.parametrize("quirk,case", [
    ("pkey-unchecked", "vendor/pkey-foreign-dropped-and-counted"),
    ("read-resp-split-wrong", "vendor/duplicate-read-partial-replay"),
    ("tid-mismatch", "vendor/qp1-class-port-info"),
])
def test_each_example_catches_its_defect(roceconf_cli, tmp_path, quirk, case):
    assert verdicts(roceconf_cli, tmp_path, "--quirk", quirk)[case] == "fail"


def test_examples_under_pytest(tmp_path):
    # The plugin collects every case file of the directory, no ini file needed.
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", EXAMPLES],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 passed" in r.stdout
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "--roceconf-quirk", "pkey-unchecked", EXAMPLES],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 1 and "1 failed, 4 passed" in r.stdout, r.stdout
    assert "pkey-foreign-dropped-and-counted: FAIL" in r.stdout


def readme_pytest_line():
    section = open(os.path.join(SOURCE_DIR, "bindings", "PYTHON.md"), encoding="utf-8").read()
    lines = [l for l in section.splitlines() if " -m pytest " in l]
    assert len(lines) == 1, lines
    return lines[0]


def test_the_readme_pytest_line_as_written():
    line = readme_pytest_line()
    build_python = os.path.join(SOURCE_DIR, "build", "python")
    here = os.environ.get("PYTHONPATH", "").split(os.pathsep)[0]
    if not (os.path.isdir(build_python) and here and os.path.samefile(build_python, here)):
        pytest.skip("the build tree is not build/ of the source tree: the page's line names it")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run(["/bin/sh", "-c", line], capture_output=True, text=True, cwd=SOURCE_DIR,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"\b5 passed\b", r.stdout), r.stdout


CASE_FILE = """import roceconf

@roceconf.case(id="mine/ack", clause="IBA Vol 1 9.7.5.1", needs=["responder"])
def acked(ctx):
    \"\"\"A SEND is ACKed.\"\"\"
    c = ctx.connect()
    sent = ctx.send(c, "SEND", len=3)
    assert sent[0][roceconf.BTH].padcount == 1
    ctx.expect(c, "ACK", psn=0)
"""


def test_pytest_dot_collects_case_files_without_an_ini(tmp_path):
    (tmp_path / "my_cases.py").write_text(CASE_FILE)
    (tmp_path / "helpers.py").write_text("X = 1\n")  # no case: not collected
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "."],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0 and "2 passed" in r.stdout, r.stdout + r.stderr
    # Matched by an ini's python_files, or named on the command line: collected once.
    (tmp_path / "pytest.ini").write_text("[pytest]\npython_files = *.py\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "."],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0 and "2 passed" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "my_cases.py"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("args,message", [
    (["--roceconf-quirk", "nosuch"], "--roceconf-quirk: unknown quirk 'nosuch' (known: "),
    (["--roceconf-target", "raw", "--roceconf-quirk", "msn-stuck"], "quirks are defects"),
    (["--roceconf-profile", "/nonexistent.yaml", "--roceconf-target", "raw"], "no such file"),
])
def test_a_bad_option_is_a_usage_error(tmp_path, args, message):
    (tmp_path / "my_cases.py").write_text(CASE_FILE)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args,
                        "my_cases.py"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 4, r.stdout + r.stderr
    lines = (r.stdout + r.stderr).strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ERROR: ") and message in lines[0], lines
