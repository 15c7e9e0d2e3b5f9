"""Live path: two ``rnic serve`` NICs, each in its own network namespace, connected by veth
pairs to one ``p4switch`` process running fabric.p4 in the root namespace. Routes go in over
P4Runtime (the switch's gRPC server, through ptf_tests/p4rt.py's client), the NICs are driven
over their management API, and an RDMA WRITE must arrive intact through the switch. With
INT configured (source and sink-to-host on the same leaf) the receiving NIC sees the
switch's hop on every data packet and echoes it, so the sender's HPCC gets it too.

Everything created here carries a unique tag and is removed by PID and by name in
``finally``, also when the test fails.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

from scapy.utils import rdpcap

from nicmodel import roce
from nicmodel.mgmt import NicClient
from ptf_tests.targets import (compile_program, free_tcp_port, push_pipeline, start_switch,
                               switch_command)
from ptf_tests.veth import quiet

REPO = Path(__file__).resolve().parents[2]
FABRIC_P4 = REPO / "p4src" / "fabric.p4"
DILATION = 2000  # fabric 100 Gb/s = 50 Mb/s of wall time: a Python switch keeps up
IPS = ("10.77.1.1", "10.77.2.2")
HOST_MACS = ("02:77:00:00:01:01", "02:77:00:00:02:02")
SWITCH_MACS = ("02:77:00:00:00:01", "02:77:00:00:00:02")  # switch port 1, port 2
SIZE = 200_000


def sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True)


def install_routes(client) -> None:
    """What a controller installs on a leaf with host 1 on port 1 and host 2 on port 2."""
    ig = "FabricIngress"
    for port, (ip, host_mac, sw_mac) in enumerate(zip(IPS, HOST_MACS, SWITCH_MACS), start=1):
        client.insert(client.table_entry(f"{ig}.routing.routing_v4", {"hdr.ipv4.dst_addr": f"{ip}/32"},
                                         f"{ig}.routing.route_to_port", {"port": port}))
        client.insert(client.table_entry(f"{ig}.next_hop.next_hop_mac",
                                         {"standard_metadata.egress_spec": port},
                                         f"{ig}.next_hop.set_next_hop_macs",
                                         {"src_mac": sw_mac, "dst_mac": host_mac}))
        client.insert(client.table_entry(f"{ig}.int_ingress.int_sink",
                                         {"standard_metadata.egress_spec": port},
                                         f"{ig}.int_ingress.int_sink_to_host"))
        client.insert(client.table_entry("FabricEgress.int_egress.int_transit_port",
                                         {"meta.out_port": port}, "FabricEgress.int_egress.int_transit",
                                         {"switch_id_value": 0x77, "link_rate_mbps": 100_000}))
    client.insert(client.table_entry(f"{ig}.classify.classify", {"hdr.ipv4.dscp": (26, 0x3F)},
                                     f"{ig}.classify.set_priority", {"priority": 3}, priority=10))
    client.insert(client.table_entry(f"{ig}.int_ingress.int_watchlist",
                                     {"hdr.ipv4.src_addr": (IPS[0], "255.255.255.255")},
                                     f"{ig}.int_ingress.int_source", {"max_hops": 5}, priority=10))


def test_rdma_write_through_live_fabric_switch(tmp_path: Path) -> None:
    tag = f"{os.getpid() % 10000}{secrets.token_hex(2)}"
    namespaces = [f"ig{tag}a", f"ig{tag}b"]
    sw_ifs = [f"ig{tag}s1", f"ig{tag}s2"]
    host_ifs = [f"ig{tag}h1", f"ig{tag}h2"]
    created_ns: list[str] = []
    created_links: list[str] = []
    nics: list[subprocess.Popen] = []
    switch = None
    client = None
    clients: list[NicClient] = []
    try:
        for ns, sw_if, host_if, ip, mac in zip(namespaces, sw_ifs, host_ifs, IPS, HOST_MACS):
            sh("ip", "netns", "add", ns)
            created_ns.append(ns)
            sh("ip", "link", "add", sw_if, "type", "veth", "peer", "name", host_if)
            created_links.append(sw_if)
            quiet(sw_if)
            sh("ip", "link", "set", sw_if, "up")
            sh("ip", "link", "set", host_if, "netns", ns)
            sh("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1")
            sh("ip", "-n", ns, "link", "set", host_if, "address", mac)
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", host_if)
            sh("ip", "-n", ns, "link", "set", host_if, "up")

        compiled = compile_program("ours", FABRIC_P4, tmp_path / "build")
        grpc_addr = f"127.0.0.1:{free_tcp_port()}"
        thrift = free_tcp_port()
        cmd = switch_command("ours", {1: sw_ifs[0], 2: sw_ifs[1]}, device_id=1, grpc_addr=grpc_addr,
                             thrift_port=thrift, cpu_port=255, priority_queues=8,
                             time_dilation=DILATION, pcap_dir=str(tmp_path / "pcap"))
        switch = start_switch(cmd, grpc_addr, thrift, tmp_path / "switch.log")
        switch.wait_ready()
        client = push_pipeline(grpc_addr, 1, compiled)
        install_routes(client)

        for ns, host_if, ip, mac, gw in zip(namespaces, host_ifs, IPS, HOST_MACS, SWITCH_MACS):
            log = (tmp_path / f"{ns}.log").open("w")
            nics.append(subprocess.Popen(
                ["ip", "netns", "exec", ns, sys.executable, "-m", "nicmodel.cli", "serve",
                 "--iface", host_if, "--ip", ip, "--mac", mac, "--gateway-mac", gw,
                 "--mgmt", str(tmp_path / f"{ns}.sock"), "--time-dilation", str(DILATION),
                 "--cc", "hpcc"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=REPO))
            log.close()
        socks = [tmp_path / f"{ns}.sock" for ns in namespaces]
        deadline = time.monotonic() + 30
        while not all(s.exists() for s in socks):
            assert all(p.poll() is None for p in nics), [(tmp_path / f"{n}.log").read_text() for n in namespaces]
            assert time.monotonic() < deadline, "rnic serve did not come up"
            time.sleep(0.05)
        clients = [NicClient(s) for s in socks]
        peers = [{"rank": i, "ip": ip, "mac": mac} for i, (ip, mac) in enumerate(zip(IPS, HOST_MACS))]
        for rank, c in enumerate(clients):
            c.start_workload({"kind": "p2p", "peers": peers, "rank": rank, "size": SIZE,
                              "src": 0, "dst": 1})
        deadline = time.monotonic() + 60
        while not all(c.workload_status()["done"] for c in clients) and time.monotonic() < deadline:
            time.sleep(0.05)
        status = [c.workload_status() for c in clients]
        assert [s["done"] for s in status] == [True, True], (status, switch.log_tail())
        assert status[0]["errors"] == [] and status[1]["errors"] == []
        assert status[1]["data_ok"] is True  # every byte arrived intact, through the switch
        assert clients[0].stats()["summary"]["completed"] == 1
        rx = clients[1].status()["counters"]
        assert rx["messages_received"] == 1
        assert clients[0].status()["counters"]["messages_sent"] == 1  # ACKs came back too
        assert not any(k.startswith(("drop_bad", "drop_truncated")) for k in rx), rx
        # the switch counted what it forwarded, readable over P4Runtime
        pkts, _ = client.read_counter("FabricIngress.counters.rx_port", 1)
        assert pkts >= SIZE // 1024
        switch.stop()  # completes the pcap files
        to_b = [roce.parse(bytes(f)) for f in rdpcap(str(tmp_path / "pcap" / f"{sw_ifs[1]}_out.pcap"))]
        data = [p for p in to_b if p.opcode in roce.OP_WRITE]
        assert len(data) >= SIZE // 1024
        for p in data:  # INT source and sink on this leaf: one hop, this switch's
            hops = p.int_stack.hops()
            assert [(h.switch_id, h.ingress_port, h.egress_port, h.queue_id) for h in hops] == [(0x77, 1, 2, 3)]
        times = [p.int_stack.hops()[0].ingress_ts_us for p in data]
        assert times == sorted(times) and times[-1] > times[0]  # fabric microseconds advance
    finally:
        for c in clients:
            c.close()
        for p in nics:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in nics:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if client is not None:
            client.close()
        if switch is not None:
            switch.stop()
        for link in created_links:
            subprocess.run(["ip", "link", "del", link], capture_output=True)
        for ns in created_ns:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    assert all(p.returncode == 0 for p in nics)
    assert not any(Path(f"/run/netns/{ns}").exists() for ns in namespaces)
