"""``fabricctl sim run``: bad arguments are refused with a message and exit status 2 before
anything is simulated."""

from __future__ import annotations

import pytest

from controller.cli import main as fabricctl


@pytest.mark.parametrize("argv, message", [
    (["--topology", "fattree:3"], "even integer"),
    (["--topology", "leafspine:2x2"], "leafspine:NxMxK"),
    (["--topology", "/nonexistent/topo.yaml"], "No such file"),
    (["--profiles", "baseline,turbo"], "unknown profile(s) turbo"),
    (["--link-down", "leaf1-leaf2@1us"], "no cable between leaf1 and leaf2"),
    (["--workload", "poisson", "--load", "0.5"], "needs --duration"),
    (["--load", "0.5"], "--load is for the poisson workload"),
    (["--size", "1001"], "multiple of the 4 hosts"),
])
def test_bad_values_exit_2(argv, message, tmp_path, capsys) -> None:
    assert fabricctl(["sim", "run", *argv, "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("argv, message", [
    (["--duration", "soon"], "simulated duration"),
    (["--link-down", "leaf1@1us"], "A-B@T[:T2]"),
    (["--link-down", "leaf1-spine1@5us:2us"], "come up after"),
    (["--load", "2"], "load in (0, 1]"),
    (["--size", "lots"], "size such as"),
])
def test_bad_arguments_are_usage_errors(argv, message, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        fabricctl(["sim", "run", *argv])
    assert e.value.code == 2 and message in capsys.readouterr().err
