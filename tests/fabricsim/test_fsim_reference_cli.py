"""``fabricsim-ref``: workloads on the fast reference switch model from the shell, bad arguments."""

from __future__ import annotations

import json

import pytest

from fabricsim.reference_cli import main


def test_run_allreduce_prints_stats_and_writes_json_and_csv(tmp_path, capsys) -> None:
    rc = main(["allreduce", "--hosts", "4", "--size", "64KiB", "--cc", "hpcc",
               "--reliability", "sr", "--json", str(tmp_path / "s.json"), "--csv", str(tmp_path / "csv")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "messages        24/24 completed" in out and "goodput" in out and "switch" in out
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["summary"]["completed"] == 24 and len(doc["messages"]) == 24
    assert (tmp_path / "csv" / "messages.csv").read_text().count("\n") == 25


def test_run_incast_with_pfc_reports_pauses(capsys) -> None:
    rc = main(["incast", "--hosts", "5", "--size", "1MiB", "--pfc", "--no-ecn"])
    out = capsys.readouterr().out
    assert rc == 0
    pauses = next(line for line in out.splitlines() if line.startswith("pauses"))
    assert not pauses.startswith("pauses          0 frames")
    assert out.rstrip().endswith("0 drops")


@pytest.mark.parametrize("argv, message", [
    (["gossip"], "invalid choice"),
    (["p2p", "--size", "lots"], "bad size"),
    (["p2p", "--line-rate", "fast"], "bad rate"),
    (["p2p", "--cc", "bbr"], "invalid choice"),
])
def test_bad_arguments_exit_2_with_a_message(argv, message, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_bad_values_are_clear_errors(capsys) -> None:
    assert main(["allreduce", "--hosts", "3", "--size", "1000"]) == 2
    assert "multiple of the 3 ranks" in capsys.readouterr().err
    assert main(["poisson", "--cdf", "nosuch"]) == 2
    assert "unknown flow-size CDF" in capsys.readouterr().err
    assert main(["p2p", "--cc", "dcqcn", "--cc-param", "gain=2"]) == 2
    assert "unknown dcqcn parameter" in capsys.readouterr().err
