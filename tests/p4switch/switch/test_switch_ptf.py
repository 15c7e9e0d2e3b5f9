"""The PTF harness runs the basic suite through real veths, and refuses a missing BMv2 or a
missing P4Runtime server clearly."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from lab.p4rt_client import P4RuntimeClient
from lab.targets import free_tcp_port
from ptf_tests.harness import REPO

pytestmark = pytest.mark.net  # PTF on veths, as root


def harness(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptf_tests.harness", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=600)


def test_basic_ptf_suite_passes_on_our_switch() -> None:
    res = harness("--test-dir", "ptf_tests/basic")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "Ran 8 tests" in res.stderr + res.stdout
    assert res.stdout.splitlines()[-1] == "8 passed, 0 failed"  # one summary line across suites, last
    pairs = next(line for line in res.stdout.splitlines() if line.startswith("veth pairs")).split(": ")[1].split()
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    assert len(pairs) == 4 and not any(pair.split("/")[0] in links for pair in pairs)  # torn down


def test_bmv2_target_is_refused_clearly_when_not_installed() -> None:
    res = harness("--target", "bmv2", "--test-dir", "ptf_tests/basic")
    if shutil.which("p4c") is None or shutil.which("simple_switch_grpc") is None:
        assert res.returncode == 2 and "is not installed" in res.stderr
    else:
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]


def test_p4runtime_client_reports_a_missing_server_as_a_connection_error() -> None:

    with pytest.raises(ConnectionError, match="no P4Runtime server"):
        P4RuntimeClient(f"127.0.0.1:{free_tcp_port()}", timeout=0.5)
