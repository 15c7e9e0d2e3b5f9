"""Live NICs (real clock, background loop) managed over the JSON-lines API, wired by a
datagram socket pair so that no interface is needed; the veth test covers raw sockets."""

from __future__ import annotations

import json
import socket
import time

import pytest

from netbase.clock import DilatedClock
from nicmodel import Nic, QpConfig
from nicmodel.live import DatagramPort, LiveNic
from nicmodel.mgmt import MgmtError, MgmtServer, NicClient
from nicmodel.workloads import pattern

PEERS = [{"rank": 0, "ip": "10.77.0.1", "mac": "02:77:00:00:00:01"},
         {"rank": 1, "ip": "10.77.0.2", "mac": "02:77:00:00:00:02"}]


@pytest.fixture
def pair(tmp_path):
    a_sock, b_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    nics = [LiveNic(DatagramPort(s), p["ip"], p["mac"], time_dilation=100, guard_udp=False)
            for s, p in zip((a_sock, b_sock), PEERS)]
    servers = [MgmtServer(n, tmp_path / f"h{i}.sock") for i, n in enumerate(nics)]
    for n, s in zip(nics, servers):
        n.start()
        s.start()
    clients = [NicClient(tmp_path / f"h{i}.sock") for i in range(2)]
    try:
        yield nics, clients
    finally:
        for c in clients:
            c.close()
        for s in servers:
            s.close()
        for n in nics:
            n.close()


def wait_done(clients, limit_s: float = 60) -> list[dict]:
    """Poll until every NIC reports its workload done (a hang guard, not a speed check)."""
    deadline = time.monotonic() + limit_s
    while True:
        status = [c.workload_status() for c in clients]
        if all(s["done"] for s in status) or time.monotonic() > deadline:
            return status
        time.sleep(0.02)


def test_dilated_clock_divides_wall_time() -> None:
    wall = iter([1_000, 1_000 + 5_000_000])
    clock = DilatedClock(1000, source=lambda: next(wall))
    assert clock.now_ns() == 5_000  # 5 ms of wall time is 5 us of fabric time at D = 1000
    assert clock.wall_seconds(5_000) == pytest.approx(0.005)


def test_two_live_nics_write_through_the_management_api(pair) -> None:
    nics, clients = pair
    for c in clients:
        assert c.configure(cc="dcqcn", reliability="sr")["config"]["cc"] == "dcqcn"
    spec = {"kind": "p2p", "peers": PEERS, "size": 200_000, "count": 2, "src": 0, "dst": 1}
    for rank, c in enumerate(clients):
        assert c.start_workload({**spec, "rank": rank}) == {"started": True, "rank": rank, "kind": "p2p"}
    status = wait_done(clients)
    assert [s["done"] for s in status] == [True, True] and status[0]["progress"] == 1.0
    assert not status[0]["errors"] and not status[1]["errors"]
    assert status[1]["data_ok"] is True and status[0]["data_ok"] is None
    got = nics[1].workload_result()
    assert got[:200_000] == got[200_000:] == pattern(0, 200_000)  # both messages intact
    stats = clients[0].stats()
    json.dumps(stats)  # plain JSON all the way down
    assert stats["summary"]["completed"] == 2 and stats["summary"]["bytes"] == 400_000
    assert all(m["fct_ns"] > 0 for m in stats["messages"])
    assert stats["nic_counters"]["10.77.0.1"]["data_pkts_sent"] >= 2 * 196
    # the loop measured how late it acted on its timers (start delay, pacing) against the dilated clock
    lag = stats["nic_counters"]["10.77.0.1"]
    assert lag["sched_lag.timers"] > 0 and lag["sched_lag.max_ns"] >= lag["sched_lag.p99_ns"] >= 0
    st = clients[1].status()
    assert st["ip"] == "10.77.0.2" and st["time_dilation"] == 100 and st["config"]["reliability"] == "sr"
    # started one after another, each waited 0.25 s of wall time (2.5 ms of fabric time at
    # D = 100) so that the peer's queue pairs were up before the first WRITE
    assert [n.endpoint.spec.start_delay_ns for n in nics] == [2_500_000, 2_500_000]


def test_management_errors_are_reported_and_change_nothing(pair, tmp_path) -> None:
    nics, clients = pair
    c = clients[0]
    with pytest.raises(MgmtError) as e:
        c.configure(cc="bbr")
    assert e.value.code == "invalid_params" and "bbr" in e.value.message
    with pytest.raises(MgmtError) as e:
        c.configure(cc="hpcc", cc_params={"eta": 7})
    assert e.value.code == "invalid_params"
    assert c.status()["config"]["cc"] == "none"  # all-or-nothing
    nics[0].port.ip_mtu = 1500  # as a raw port reads it from the interface
    with pytest.raises(MgmtError) as e:
        c.configure(mtu=4096)
    assert e.value.code == "invalid_params" and "interface MTU" in e.value.message
    assert c.configure(mtu=1024)["config"]["mtu"] == 1024
    with pytest.raises(MgmtError) as e:
        c.configure(colour="blue")
    assert e.value.code == "invalid_params"
    with pytest.raises(MgmtError) as e:
        c.call("launch_missiles")
    assert e.value.code == "unknown_method"
    with pytest.raises(MgmtError) as e:
        c.start_workload({"kind": "p2p", "peers": PEERS, "rank": 1})  # rank 1 is not this NIC
    assert e.value.code == "invalid_params"
    with pytest.raises(MgmtError) as e:
        c.start_workload({"kind": "gossip", "peers": PEERS, "rank": 0})
    assert e.value.code == "invalid_params" and "gossip" in e.value.message
    # a raw client sending garbage gets a parse error and the connection stays usable
    raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    raw.connect(str(tmp_path / "h0.sock"))
    f = raw.makefile("rwb")
    f.write(b"this is not json\n[1, 2]\n" + json.dumps({"id": 9, "method": "status"}).encode() + b"\n")
    f.flush()
    replies = [json.loads(f.readline()) for _ in range(3)]
    raw.close()
    assert [r.get("error", {}).get("code") for r in replies] == ["parse_error", "parse_error", None]
    assert replies[2]["id"] == 9 and replies[2]["result"]["ip"] == "10.77.0.1"


def test_second_workload_while_running_is_refused_then_reset_allows_it(pair) -> None:
    nics, clients = pair
    spec = {"kind": "p2p", "peers": PEERS, "rank": 0, "size": 1 << 20, "src": 0, "dst": 1}
    clients[0].start_workload(spec)  # rank 1 never starts: rank 0 keeps retrying
    with pytest.raises(MgmtError) as e:
        clients[0].start_workload(spec)
    assert e.value.code == "bad_state"
    assert clients[0].reset() == {"reset": True}
    assert clients[0].workload_status()["kind"] is None
    assert clients[0].start_workload(spec)["started"]


def test_mgmt_server_refuses_a_socket_path_in_use(pair, tmp_path) -> None:
    nics, _ = pair
    with pytest.raises(ValueError, match="already serves"):
        MgmtServer(nics[0], tmp_path / "h0.sock")
    (tmp_path / "plain").write_text("x")
    with pytest.raises(ValueError, match="not a socket"):
        MgmtServer(nics[0], tmp_path / "plain")


def test_mgmt_api_also_over_tcp_localhost(tmp_path) -> None:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    nic = LiveNic(DatagramPort(a), "10.77.1.1", "02:77:01:00:00:01", guard_udp=False)
    server = MgmtServer(nic, tmp_path / "t.sock", tcp_port=0)  # 0: any free port
    server.start()
    try:
        with NicClient(tcp=("127.0.0.1", server.tcp_port)) as c:
            assert c.status()["ip"] == "10.77.1.1"
            assert c.configure(cc="timely")["config"]["cc"] == "timely"
        with NicClient(tmp_path / "t.sock") as c:  # the same NIC through the Unix socket
            assert c.status()["config"]["cc"] == "timely"
    finally:
        server.close()
        nic.close()
        b.close()
    assert not (tmp_path / "t.sock").exists()


def test_interface_mtu_check_admits_the_largest_frame_the_nic_builds(tmp_path) -> None:
    """A WRITE-only-with-immediate of a full MTU carries both RETH and ImmDt: the largest
    IP packet the NIC sends. An interface MTU the live NIC accepts must carry it (else the
    kernel refuses the frame and the QP retries until it fails)."""
    mtu = 1024
    a = Nic("02:00:00:00:00:01", "10.0.0.1")
    b = Nic("02:00:00:00:00:02", "10.0.0.2")
    qa, qb = a.create_qp(QpConfig(mtu=mtu)), b.create_qp(QpConfig(mtu=mtu))
    qa.connect(b.mac, b.ip, qb.qpn, qb.config.initial_psn)
    qb.connect(a.mac, a.ip, qa.qpn, qa.config.initial_psn)
    src, dst = a.register_mr(bytearray(mtu)), b.register_mr(bytearray(mtu))
    qa.post_write(wr_id=1, mr=src, offset=0, length=mtu, remote_addr=dst.addr, rkey=dst.rkey, imm=7)
    frame = a.poll_transmit(0)
    assert frame[34 + 8] == 0x0B  # BTH opcode RDMA_WRITE_ONLY_WITH_IMMEDIATE
    ip_len = int.from_bytes(frame[16:18], "big")  # IPv4 total length
    a_sock, b_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    live = LiveNic(DatagramPort(a_sock), "10.0.0.1", "02:00:00:00:00:01", guard_udp=False)
    try:
        live.port.ip_mtu = ip_len - 1
        with pytest.raises(ValueError, match="interface MTU"):
            live.configure(mtu=mtu)
        live.port.ip_mtu = ip_len
        assert live.configure(mtu=mtu)["config"]["mtu"] == mtu
    finally:
        live.close()
        b_sock.close()
