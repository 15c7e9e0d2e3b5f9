"""Two ``rnic serve`` processes on the two ends of a veth pair, each in its own network
namespace (as in Mininet), doing an RDMA WRITE through raw sockets, driven over the
management API's Unix sockets (namespaces share the file system)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nicmodel.mgmt import NicClient

pytestmark = pytest.mark.net  # veths, as root


def sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True)


def test_two_live_nics_write_over_a_veth_pair(tmp_path: Path) -> None:
    tag = f"{os.getpid() % 10000}{random.randrange(100, 1000)}"
    names = [f"n2a{tag}", f"n2b{tag}"]  # namespace and interface share the name
    ips = ["10.78.0.1", "10.78.0.2"]
    macs = ["02:78:00:00:00:01", "02:78:00:00:00:02"]
    procs: list[subprocess.Popen] = []
    created: list[str] = []
    try:
        for ns in names:
            sh("ip", "netns", "add", ns)
            created.append(ns)
        sh("ip", "link", "add", names[0], "type", "veth", "peer", "name", names[1])
        for ns, ip, mac in zip(names, ips, macs):
            sh("ip", "link", "set", ns, "netns", ns)
            sh("ip", "-n", ns, "link", "set", ns, "address", mac)
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", ns)  # the kernel sees RoCE too
            sh("ip", "-n", ns, "link", "set", ns, "up")
        for ns, ip, mac in zip(names, ips, macs):
            log = (tmp_path / f"{ns}.log").open("w")
            procs.append(subprocess.Popen(
                ["ip", "netns", "exec", ns, sys.executable, "-m", "nicmodel.cli", "serve",
                 "--iface", ns, "--ip", ip, "--mac", mac, "--mgmt", str(tmp_path / f"{ns}.sock"),
                 "--time-dilation", "100", "--cc", "dcqcn"],
                stdout=log, stderr=subprocess.STDOUT, cwd=Path(__file__).resolve().parents[2]))
        socks = [tmp_path / f"{ns}.sock" for ns in names]
        deadline = time.monotonic() + 30
        while not all(s.exists() for s in socks):
            assert all(p.poll() is None for p in procs), [(tmp_path / f"{n}.log").read_text() for n in names]
            assert time.monotonic() < deadline, "rnic serve did not come up"
            time.sleep(0.05)
        clients = [NicClient(s) for s in socks]
        peers = [{"rank": i, "ip": ip, "mac": mac} for i, (ip, mac) in enumerate(zip(ips, macs))]
        for rank, c in enumerate(clients):
            c.start_workload({"kind": "p2p", "peers": peers, "rank": rank, "size": 300_000, "src": 0, "dst": 1})
        deadline = time.monotonic() + 60
        while not all(c.workload_status()["done"] for c in clients) and time.monotonic() < deadline:
            time.sleep(0.05)
        status = [c.workload_status() for c in clients]
        assert [s["done"] for s in status] == [True, True], status
        assert status[1]["data_ok"] is True  # the 300 kB arrived intact
        stats = clients[0].stats()
        assert stats["summary"]["completed"] == 1
        counters = clients[1].status()["counters"]
        assert counters["messages_received"] == 1
        # the bound UDP ports kept the receiving kernel from answering with ICMP
        assert "drop_not_udp" not in clients[0].status()["counters"]
        for c in clients:
            c.close()
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for ns in created:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    assert all(p.returncode == 0 for p in procs)
    assert not any(Path(f"/run/netns/{ns}").exists() for ns in names)
