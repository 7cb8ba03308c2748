"""The examples/ cases: all pass on the clean reference target through `roceconf run --cases
examples/`, each fails with the defect it is meant to catch, and they run under pytest too."""

import json
import os
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
    # examples/pytest.ini makes pytest collect every case file of the directory.
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", EXAMPLES],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 passed" in r.stdout
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "--roceconf-quirk", "pkey-unchecked", EXAMPLES],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 1 and "1 failed, 4 passed" in r.stdout, r.stdout
    assert "pkey-foreign-dropped-and-counted: FAIL" in r.stdout
