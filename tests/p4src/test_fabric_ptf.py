"""The fabric.p4 PTF suite (ptf_tests/fabric) through real veths on our switch: routing,
ECMP/E-ECMP, PacketIn/Out, ECN on a slow queue, INT values and reports (all three sink
modes, a single-hop path, INT within the port MTU), spraying, DLB flowlets, PFC pause/resume.
Needs root (veths), like every PTF run."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from ptf_tests.harness import REPO

pytestmark = pytest.mark.net  # PTF on veths, as root

SUITE_TESTS = 24


def test_fabric_ptf_suite_passes_on_our_switch() -> None:
    res = subprocess.run([sys.executable, "-m", "ptf_tests.harness", "--test-dir", "ptf_tests/fabric",
                          "--priority-queues", "8"], cwd=REPO, capture_output=True, text=True, timeout=900)
    output = res.stdout + res.stderr
    assert res.returncode == 0, output[-6000:]
    ran = re.search(r"Ran (\d+) tests?", output)
    assert ran and int(ran.group(1)) == SUITE_TESTS, output[-3000:]
