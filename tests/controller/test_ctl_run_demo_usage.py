"""``make run`` (``python -m controller.run_demo``) refuses bad arguments before starting anything.

Each case calls ``run_demo.main`` as ``make run`` does, as root (``os.geteuid`` reads 0, so the
argument checks are reached whoever runs the tests) and without a terminal. The compiler, the
Mininet fabric and the interface check are replaced by recorders: a usage error must exit 2
with a message naming the problem, and none of them may have been called, no state file
written and no output directory created.
"""

from __future__ import annotations

import io
import json
import sys

import pytest

import topo.fabric
from controller import run_demo
from topo.builder import leaf_spine


@pytest.fixture
def demo(monkeypatch, tmp_path, capsys):
    """``demo(*args) -> (exit code, stderr, what was started)`` for one run_demo.main call."""
    started: list[str] = []

    def record(what: str):
        def call(*args, **kwargs):
            started.append(what)
            raise AssertionError(f"{what} called for a usage error")
        return call

    monkeypatch.setattr(run_demo.os, "geteuid", lambda: 0)
    monkeypatch.setattr(sys, "stdin", io.StringIO())  # not a terminal
    monkeypatch.setattr(run_demo, "compile_fabric", record("compile_fabric"))
    monkeypatch.setattr(run_demo, "_check_names_free", record("interface check"))
    monkeypatch.setattr(topo.fabric, "FabricNet", record("FabricNet"))
    state, out = tmp_path / "state.json", tmp_path / "out"

    def run(*args: str) -> tuple[int, str, list[str]]:
        try:
            rc = run_demo.main(["--state", str(state), "--out", str(out), *args])
        except SystemExit as e:  # argparse's own usage errors
            rc = e.code
        assert not state.exists() and not out.exists()
        return rc, capsys.readouterr().err, started

    return run


@pytest.mark.parametrize("profiles, named", [("baseline,nope", "nope"), ("fast", "fast"), (",", "")])
def test_unknown_profiles(demo, profiles, named):
    rc, err, started = demo("--profiles", profiles)
    assert rc == 2 and started == []
    assert f"unknown profile(s) {named}" in err
    assert "profiles: baseline, ai-fabric" in err


@pytest.mark.parametrize("size", ["0", "-4096", "1001"])
def test_size_not_a_positive_multiple_of_the_hosts(demo, size):
    rc, err, started = demo("--size", size)
    assert (rc, started) == (2, [])
    assert "--size must be a positive multiple of the 4 hosts" in err


def test_size_follows_the_topology_and_rejects_non_numbers(demo):
    rc, err, started = demo("--hosts-per-leaf", "3", "--size", "4096")  # 6 hosts
    assert (rc, started) == (2, [])
    assert "multiple of the 6 hosts" in err
    rc, err, started = demo("--size", "lots")
    assert (rc, started) == (2, [])
    assert "argument --size: invalid int value: 'lots'" in err


def test_cli_needs_a_terminal(demo):
    rc, err, started = demo("--cli")
    assert (rc, started) == (2, [])
    assert "--cli needs a terminal; use --keep instead" in err


def test_bad_topology_file(demo, tmp_path):
    bad = leaf_spine().to_dict()
    bad["hosts"][0]["leaf"] = "spine1"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    rc, err, started = demo("--topology", str(path))
    assert (rc, started) == (2, [])
    assert "leaf 'spine1' is not a leaf switch" in err


def test_uplink_rate_oversubscribes_the_built_in_fabric(demo):
    """``--uplink-gbps`` sets the leaf-spine links and leaves the hosts' at 100 Gb/s; a rate
    the topology cannot have is a usage error."""
    args = run_demo.build_parser().parse_args(["--uplink-gbps", "25"])
    rates = {(link.a, link.b): link.rate_gbps for link in run_demo.load_topology(args).links}
    assert rates[("h1_1", "leaf1")] == 100 and rates[("leaf1", "spine1")] == 25
    rc, err, started = demo("--uplink-gbps", "0")
    assert (rc, started) == (2, [])
    assert "rate" in err
