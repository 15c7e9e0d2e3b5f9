"""The ``rnic`` command line: simulator runs, queries of a serving NIC, bad arguments."""

from __future__ import annotations

import json
import socket

import pytest

from nicmodel.cli import main, parse_rate, parse_size
from nicmodel.live import DatagramPort, LiveNic
from nicmodel.mgmt import MgmtServer


def test_run_allreduce_prints_stats_and_writes_json_and_csv(tmp_path, capsys) -> None:
    rc = main(["run", "allreduce", "--hosts", "4", "--size", "64KiB", "--cc", "hpcc",
               "--reliability", "sr", "--json", str(tmp_path / "s.json"), "--csv", str(tmp_path / "csv")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "messages        24/24 completed" in out and "goodput" in out and "switch" in out
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["summary"]["completed"] == 24 and len(doc["messages"]) == 24
    assert (tmp_path / "csv" / "messages.csv").read_text().count("\n") == 25


def test_run_incast_with_pfc_reports_pauses(capsys) -> None:
    rc = main(["run", "incast", "--hosts", "5", "--size", "1MiB", "--pfc", "--no-ecn"])
    out = capsys.readouterr().out
    assert rc == 0
    pauses = next(line for line in out.splitlines() if line.startswith("pauses"))
    assert not pauses.startswith("pauses          0 frames")
    assert out.rstrip().endswith("0 drops")


@pytest.mark.parametrize("argv, message", [
    (["run", "gossip"], "invalid choice"),
    (["run", "p2p", "--size", "lots"], "bad size"),
    (["run", "p2p", "--line-rate", "fast"], "bad rate"),
    (["run", "p2p", "--cc", "bbr"], "invalid choice"),
    (["serve", "--ip", "10.0.0.1"], "required"),
])
def test_bad_arguments_exit_2_with_a_message(argv, message, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_bad_values_are_clear_errors(capsys) -> None:
    assert main(["run", "allreduce", "--hosts", "3", "--size", "1000"]) == 2
    assert "multiple of the 3 ranks" in capsys.readouterr().err
    assert main(["run", "poisson", "--cdf", "nosuch"]) == 2
    assert "unknown flow-size CDF" in capsys.readouterr().err
    assert main(["run", "p2p", "--cc", "dcqcn", "--cc-param", "gain=2"]) == 2
    assert "unknown dcqcn parameter" in capsys.readouterr().err
    assert main(["serve", "--iface", "nosuchif0", "--ip", "10.0.0.1", "--mac", "02:00:00:00:00:01",
                 "--mgmt", "/tmp/never.sock"]) == 2
    assert "nosuchif0" in capsys.readouterr().err


def test_stats_and_status_query_a_serving_nic(tmp_path, capsys) -> None:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    nic = LiveNic(DatagramPort(a), "10.79.0.1", "02:79:00:00:00:01", guard_udp=False)
    server = MgmtServer(nic, tmp_path / "n.sock")
    server.start()
    try:
        assert main(["status", "--mgmt", str(tmp_path / "n.sock")]) == 0
        assert json.loads(capsys.readouterr().out)["ip"] == "10.79.0.1"
        assert main(["stats", "--mgmt", str(tmp_path / "n.sock")]) == 0
        assert "messages        0/0 completed" in capsys.readouterr().out
    finally:
        server.close()
        nic.close()
        b.close()
    assert main(["stats", "--mgmt", str(tmp_path / "n.sock")]) == 2
    assert "rnic: error" in capsys.readouterr().err


def test_size_and_rate_parsers() -> None:
    assert parse_size("64KiB") == 65536 and parse_size("1MB") == 10**6 and parse_size("4096") == 4096
    assert parse_rate("100G") == 100e9 and parse_rate("25Gbps") == 25e9 and parse_rate("1e9") == 1e9
