"""The ``rnic`` command line: queries of a serving NIC, bad arguments."""

from __future__ import annotations

import json
import socket

import pytest

from nicmodel.cli import main, parse_rate, parse_size
from nicmodel.live import DatagramPort, LiveNic
from nicmodel.mgmt import MgmtServer
from nicmodel.workloads import pattern


@pytest.mark.parametrize("argv, message", [
    (["run", "p2p"], "invalid choice"),
    (["serve", "--ip", "10.0.0.1", "--line-rate", "fast"], "bad rate"),
    (["serve", "--ip", "10.0.0.1", "--cc", "bbr"], "invalid choice"),
    (["serve", "--ip", "10.0.0.1"], "required"),
])
def test_bad_arguments_exit_2_with_a_message(argv, message, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.net  # a raw socket needs root; without it the open fails before the name is checked
def test_serving_a_missing_interface_names_it(capsys) -> None:
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
    assert f"rnic: error: no NIC management API at {tmp_path / 'n.sock'}" in capsys.readouterr().err


WL_PEERS = [{"rank": 0, "ip": "10.79.1.1", "mac": "02:79:01:00:00:01"},
            {"rank": 1, "ip": "10.79.1.2", "mac": "02:79:01:00:00:02"}]


@pytest.fixture
def serving_pair(tmp_path):
    """Two live NICs joined by a datagram socket pair, each serving its management API."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    nics = [LiveNic(DatagramPort(s), p["ip"], p["mac"], time_dilation=100, guard_udp=False)
            for s, p in zip((a, b), WL_PEERS)]
    servers = [MgmtServer(n, tmp_path / f"w{i}.sock") for i, n in enumerate(nics)]
    for n, s in zip(nics, servers):
        n.start()
        s.start()
    try:
        yield nics, [str(tmp_path / f"w{i}.sock") for i in range(2)]
    finally:
        for s in servers:
            s.close()
        for n in nics:
            n.close()


def test_workload_starts_on_serving_nics_and_wait_reports_intact_data(serving_pair, tmp_path, capsys) -> None:
    nics, socks = serving_pair
    spec = {"kind": "p2p", "peers": WL_PEERS, "size": 64 * 1024, "src": 0, "dst": 1}
    (tmp_path / "spec0.json").write_text(json.dumps({**spec, "rank": 0}))
    assert main(["workload", "--mgmt", socks[0], "--spec", str(tmp_path / "spec0.json")]) == 0
    assert json.loads(capsys.readouterr().out) == {"started": True, "rank": 0, "kind": "p2p"}
    rc = main(["workload", "--mgmt", socks[1], "--spec", json.dumps({**spec, "rank": 1}),
               "--wait", "--timeout", "60"])
    captured = capsys.readouterr()
    final = json.loads(captured.out)
    assert rc == 0
    assert final["done"] and final["data_ok"] is True and final["errors"] == [] and final["progress"] == 1.0
    assert "p2p rank 1: 100%" in captured.err
    assert nics[1].workload_result() == pattern(0, 64 * 1024)  # the bytes really arrived


def test_workload_wait_on_the_sender_ends_when_its_writes_are_acknowledged(serving_pair, capsys) -> None:
    nics, socks = serving_pair
    spec = {"kind": "p2p", "peers": WL_PEERS, "size": 32 * 1024, "count": 2, "src": 0, "dst": 1}
    assert main(["workload", "--mgmt", socks[1], "--spec", json.dumps({**spec, "rank": 1})]) == 0
    capsys.readouterr()
    assert main(["workload", "--mgmt", socks[0], "--spec", json.dumps({**spec, "rank": 0}), "--wait"]) == 0
    final = json.loads(capsys.readouterr().out)
    assert final["done"] and final["errors"] == [] and final["data_ok"] is None  # a sender has nothing to check
    assert nics[1].workload_result() == pattern(0, 32 * 1024) * 2  # acknowledged means arrived


def test_workload_wait_times_out_and_bad_specs_are_refused(serving_pair, tmp_path, capsys) -> None:
    nics, socks = serving_pair
    spec = {"kind": "p2p", "peers": WL_PEERS, "rank": 0, "size": 1 << 20, "src": 0, "dst": 1}
    # rank 1 never starts, so rank 0 cannot finish: --wait gives up with exit 1
    assert main(["workload", "--mgmt", socks[0], "--spec", json.dumps(spec), "--wait", "--timeout", "0.3"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["done"] is False and "not done after 0.3 s" in captured.err
    # a second workload while one runs: the NIC refuses (bad_state), exit 1
    assert main(["workload", "--mgmt", socks[0], "--spec", json.dumps(spec)]) == 1
    assert "bad_state" in capsys.readouterr().err
    # specs the NIC rejects, and specs that are not JSON objects: exit 2, nothing started on NIC 1
    assert main(["workload", "--mgmt", socks[1], "--spec", json.dumps({**spec, "kind": "gossip", "rank": 1})]) == 2
    assert "invalid_params" in (err := capsys.readouterr().err) and "gossip" in err
    assert main(["workload", "--mgmt", socks[1], "--spec", json.dumps(spec)]) == 2  # rank 0 is not NIC 1
    assert "10.79.1.1" in capsys.readouterr().err
    assert main(["workload", "--mgmt", socks[1], "--spec", "{kind: p2p}"]) == 2
    assert "--spec: not valid JSON" in capsys.readouterr().err
    (tmp_path / "list.json").write_text("[1, 2]")
    assert main(["workload", "--mgmt", socks[1], "--spec", str(tmp_path / "list.json")]) == 2
    assert "must be a JSON object" in capsys.readouterr().err
    assert main(["workload", "--mgmt", socks[1], "--spec", str(tmp_path / "nosuch.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert nics[1].workload_status()["kind"] is None
    with pytest.raises(SystemExit) as e:
        main(["workload", "--mgmt", socks[1], "--spec", json.dumps(spec), "--timeout", "5"])
    assert e.value.code == 2 and "--timeout needs --wait" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["workload", "--mgmt", socks[1], "--spec", json.dumps(spec), "--wait", "--timeout", "-1"])
    assert e.value.code == 2 and "positive number of seconds" in capsys.readouterr().err


def test_size_and_rate_parsers() -> None:
    assert parse_size("64KiB") == 65536 and parse_size("1MB") == 10**6 and parse_size("4096") == 4096
    assert parse_rate("100G") == 100e9 and parse_rate("25Gbps") == 25e9 and parse_rate("1e9") == 1e9
