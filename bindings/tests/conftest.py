"""Shared helpers of the Python module's tests: where the build put the CLI and the generator."""

import os
import shutil

import pytest

SOURCE_DIR = os.environ.get("ROCECONF_SOURCE_DIR",
                            os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..")))


def tool(env: str, name: str) -> str:
    path = os.environ.get(env) or shutil.which(name)
    if not path:
        pytest.skip(f"{name} not found (set {env})")
    return path


@pytest.fixture(scope="session")
def roceconf_cli() -> str:
    return tool("ROCECONF_CLI", "roceconf")


@pytest.fixture(scope="session")
def gen_capture(tmp_path_factory) -> str:
    """A 2,000-frame synthetic capture covering RC, UC, UD, CM, RoCEv1 and RoCEv2."""
    import subprocess
    out = str(tmp_path_factory.mktemp("gen") / "gen.pcap")
    subprocess.run([tool("ROCECONF_GEN", "roceconf-gen"), "--frames", "2000", "--seed", "7",
                    "--out", out], check=True, capture_output=True)
    return out
