"""Live paths: ``rnic serve`` NICs, each in its own network namespace, behind ``p4switch``
processes running fabric.p4 in the root namespace, all joined by veth pairs. Each switch
gets its entries over P4Runtime (its own gRPC server; ptf_tests/p4rt.py's client) the way
a controller installs them, target settings over the runtime CLI, and the NICs are driven
over their management API. Every byte WRITEn must arrive intact; the switches' pcap files
then show what was on each wire, read with nicmodel's own parser.

Everything created carries a unique tag and is removed by PID and by name when a test
ends, also when it fails.
"""

from __future__ import annotations

import os
import queue
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from scapy.utils import RawPcapReader

from lab.p4rt_client import P4RuntimeClient
from lab.targets import SwitchProcess, compile_program, free_tcp_port, push_pipeline, start_switch, switch_command
from lab.veth import quiet
from nicmodel import int_md, roce
from nicmodel.int_md import report_hops
from nicmodel.mgmt import NicClient

pytestmark = pytest.mark.net  # switch and NIC processes on veths, as root

REPO = Path(__file__).resolve().parents[2]
FABRIC_P4 = REPO / "p4src" / "fabric.p4"
DILATION = 2000  # fabric 100 Gb/s = 50 Mb/s of wall time: Python switches keep up
SIZE = 64_000  # bytes per WRITE
CPU_PORT = 255
REPORT_PORT = 32766
HOST_PORT, UPLINK = 1, 3
IG, EG = "FabricIngress", "FabricEgress"


def sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True)


@dataclass(frozen=True)
class Host:
    ip: str
    mac: str
    gateway_mac: str  # the switch's MAC on the host's port


class Lab:
    """The namespaces, veths, switches and NICs of one test; ``close`` removes them all."""

    def __init__(self, tmp_path: Path, dilation: int = DILATION) -> None:
        self.tmp = tmp_path
        self.dilation = dilation
        self.tag = f"ig{os.getpid() % 10000}{secrets.token_hex(2)}"
        self.namespaces: list[str] = []
        self.links: list[str] = []
        self.switches: list[SwitchProcess] = []
        self.controllers: list[P4RuntimeClient] = []
        self.nic_procs: list[subprocess.Popen] = []
        self.nics: list[NicClient] = []
        self._compiled = None

    def host(self, host: Host) -> str:
        """A namespace with the host's end of a new veth pair; returns the switch's end."""
        n = len(self.namespaces)
        ns, sw_if, host_if = f"{self.tag}n{n}", f"{self.tag}s{n}", f"{self.tag}h{n}"
        sh("ip", "netns", "add", ns)
        self.namespaces.append(ns)
        sh("ip", "link", "add", sw_if, "type", "veth", "peer", "name", host_if)
        self.links.append(sw_if)
        self._up(sw_if)
        sh("ip", "link", "set", host_if, "netns", ns)
        sh("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1")
        sh("ip", "-n", ns, "link", "set", host_if, "address", host.mac)
        sh("ip", "-n", ns, "addr", "add", f"{host.ip}/24", "dev", host_if)
        sh("ip", "-n", ns, "link", "set", host_if, "up")
        log = (self.tmp / f"{ns}.log").open("w")
        self.nic_procs.append(subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, "-m", "nicmodel.cli", "serve",
             "--iface", host_if, "--ip", host.ip, "--mac", host.mac, "--gateway-mac", host.gateway_mac,
             "--mgmt", str(self.tmp / f"{ns}.sock"), "--time-dilation", str(self.dilation), "--cc", "hpcc"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=REPO))
        log.close()
        return sw_if

    def link(self) -> tuple[str, str]:
        """A veth pair in the root namespace (switch to switch)."""
        a, b = f"{self.tag}l{len(self.links)}", f"{self.tag}m{len(self.links)}"
        sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        self.links.append(a)
        self._up(a)
        self._up(b)
        return a, b

    @staticmethod
    def _up(ifname: str) -> None:
        quiet(ifname)
        sh("ip", "link", "set", ifname, "up")

    def switch(self, ports: dict[int, str]) -> tuple[SwitchProcess, P4RuntimeClient]:
        """A fabric.p4 switch on ``ports``, pipeline pushed over P4Runtime, pcap on."""
        if self._compiled is None:
            self._compiled = compile_program("ours", FABRIC_P4, self.tmp / "build")
        n = len(self.switches) + 1
        grpc_addr, thrift = f"127.0.0.1:{free_tcp_port()}", free_tcp_port()
        cmd = switch_command("ours", ports, device_id=n, grpc_addr=grpc_addr, thrift_port=thrift,
                             cpu_port=CPU_PORT, priority_queues=8, time_dilation=self.dilation,
                             pcap_dir=str(self.tmp / f"pcap{n}"))
        sw = start_switch(cmd, grpc_addr, thrift, self.tmp / f"switch{n}.log")
        self.switches.append(sw)
        sw.wait_ready()
        ctl = push_pipeline(grpc_addr, n, self._compiled)
        self.controllers.append(ctl)
        return sw, ctl

    def run(self, hosts: list[Host], spec: dict) -> list[NicClient]:
        """Start ``spec`` on every host's NIC (its rank = its index) and wait until done."""
        socks = [self.tmp / f"{ns}.sock" for ns in self.namespaces]
        deadline = time.monotonic() + 30
        while not all(s.exists() for s in socks):
            assert all(p.poll() is None for p in self.nic_procs), self.logs()
            assert time.monotonic() < deadline, "rnic serve did not come up"
            time.sleep(0.05)
        self.nics = [NicClient(s) for s in socks]
        peers = [{"rank": i, "ip": h.ip, "mac": h.mac} for i, h in enumerate(hosts)]
        for rank, c in enumerate(self.nics):  # as a controller does: one after another
            c.start_workload({**spec, "peers": peers, "rank": rank})
        deadline = time.monotonic() + 60
        while not all(c.workload_status()["done"] for c in self.nics) and time.monotonic() < deadline:
            time.sleep(0.05)
        status = [c.workload_status() for c in self.nics]
        assert all(s["done"] for s in status), (status, self.logs())
        assert [s["errors"] for s in status] == [[]] * len(hosts)
        return self.nics

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-2000:] for p in sorted(self.tmp.glob("*.log")))

    def wire(self, switch: int, ifname: str, direction: str = "out") -> list[roce.Packet]:
        """What switch ``switch`` (1-based) sent or received on ``ifname``, parsed as RoCEv2;
        call after the switch stopped (complete pcap)."""
        with RawPcapReader(str(self.tmp / f"pcap{switch}" / f"{ifname}_{direction}.pcap")) as pcap:
            return [roce.parse(frame) for frame, _ in pcap]

    def close(self) -> None:
        for c in self.nics:
            c.close()
        for p in self.nic_procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.nic_procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for ctl in self.controllers:
            ctl.close()
        for sw in self.switches:
            sw.stop()
        for link in self.links:
            subprocess.run(["ip", "link", "del", link], capture_output=True)
        for ns in self.namespaces:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@pytest.fixture
def make_lab(tmp_path: Path):
    """``make_lab(dilation)``: a Lab for this test, torn down afterwards; the teardown also
    checks that every NIC exited cleanly and no namespace is left."""
    labs: list[Lab] = []

    def make(dilation: int = DILATION) -> Lab:
        labs.append(Lab(tmp_path, dilation))
        return labs[-1]

    yield make
    for lab in labs:
        lab.close()
    for lab in labs:
        assert all(p.returncode == 0 for p in lab.nic_procs), lab.logs()
        assert not any(Path(f"/run/netns/{ns}").exists() for ns in lab.namespaces)


def route(ctl: P4RuntimeClient, ip: str, port: int, sw_mac: str, next_mac: str) -> None:
    ctl.insert(ctl.table_entry(f"{IG}.routing.routing_v4", {"hdr.ipv4.dst_addr": f"{ip}/32"},
                               f"{IG}.routing.route_to_port", {"port": port}))
    ctl.insert(ctl.table_entry(f"{IG}.next_hop.next_hop_mac", {"standard_metadata.egress_spec": port},
                               f"{IG}.next_hop.set_next_hop_macs", {"src_mac": sw_mac, "dst_mac": next_mac}))


def roce_in_class_3(ctl: P4RuntimeClient) -> None:
    ctl.insert(ctl.table_entry(f"{IG}.classify.classify", {"hdr.ipv4.dscp": (26, 0x3F)},
                               f"{IG}.classify.set_priority", {"priority": 3}, priority=10))


def assert_clean(nics: list[NicClient]) -> None:
    """Every message went and came once, intact, nothing dropped or resent."""
    for c in nics:
        counters = c.status()["counters"]
        assert counters["frames_dropped"] == 0 and counters["retransmitted_pkts"] == 0, counters
    assert all(c.workload_status()["data_ok"] is not False for c in nics)


# --- two leaves, INT across them ------------------------------------------------------------

A = Host("10.77.1.1", "02:77:00:00:01:01", "02:77:71:00:00:01")
B = Host("10.77.2.2", "02:77:00:00:02:02", "02:77:72:00:00:01")
UPLINK_MACS = ("02:77:71:00:00:03", "02:77:72:00:00:03")


def install_leaf(ctl: P4RuntimeClient, i: int) -> None:
    """Leaf ``i`` (0: A's, id 0x71; 1: B's, id 0x72): routes, RoCE class, INT with the host's
    own leaf as source. Towards A the sink keeps the INT for A's NIC to echo (HPCC);
    towards B it strips it and reports to the controller (clone session 1 -> CPU port)."""
    me, other = (A, B) if i == 0 else (B, A)
    switch_id = 0x71 + i
    route(ctl, me.ip, HOST_PORT, me.gateway_mac, me.mac)
    route(ctl, other.ip, UPLINK, UPLINK_MACS[i], UPLINK_MACS[1 - i])
    roce_in_class_3(ctl)
    for port in (HOST_PORT, UPLINK):
        ctl.insert(ctl.table_entry(f"{EG}.int_egress.int_transit_port", {"meta.out_port": port},
                                   f"{EG}.int_egress.int_transit",
                                   {"switch_id_value": switch_id, "link_rate_mbps": 100_000}))
    ctl.insert(ctl.table_entry(f"{IG}.int_ingress.int_watchlist", {"hdr.ipv4.src_addr": (me.ip, "255.255.255.255")},
                               f"{IG}.int_ingress.int_source", {"max_hops": 5}, priority=10))
    sink = "int_sink_report" if i == 1 else "int_sink_to_host"
    ctl.insert(ctl.table_entry(f"{IG}.int_ingress.int_sink", {"standard_metadata.egress_spec": HOST_PORT},
                               f"{IG}.int_ingress.{sink}"))
    if i == 1:
        ctl.insert(ctl.clone_session(1, [CPU_PORT]))
        ctl.write(ctl.table_entry(f"{EG}.int_egress.int_report_encap", None, f"{EG}.int_egress.set_report_encap",
                                  {"src_mac": UPLINK_MACS[i], "dst_mac": "02:77:00:00:0c:0c",
                                   "src_ip": "10.77.0.1", "dst_ip": "10.77.0.100",
                                   "udp_dport": REPORT_PORT, "switch_id_value": switch_id},
                                  default=True), "MODIFY")


def test_rdma_writes_and_int_through_two_live_leaves(make_lab) -> None:
    """A --1[leaf 0x71]3-- 3[leaf 0x72]1-- B; each host WRITEs to the other."""
    lab = make_lab()
    host_ifs = [lab.host(A), lab.host(B)]
    up1, up2 = lab.link()
    leaves = [lab.switch({HOST_PORT: host_ifs[0], UPLINK: up1}),
              lab.switch({HOST_PORT: host_ifs[1], UPLINK: up2})]
    for i, (_, ctl) in enumerate(leaves):
        install_leaf(ctl, i)
    nics = lab.run([A, B], {"kind": "alltoall", "size": SIZE})
    assert [c.workload_status()["data_ok"] for c in nics] == [True, True]
    assert_clean(nics)
    for c in nics:
        assert c.status()["counters"]["messages_received"] == 1
    for _, ctl in leaves:  # each leaf counted its host's frames, read over P4Runtime
        assert ctl.read_counter(f"{IG}.counters.rx_port", HOST_PORT)[0] >= SIZE // 1024

    reports = []  # leaf 2's INT reports of the A -> B packets, as PacketIns
    while True:
        try:
            reports.append(leaves[1][1].packet_in(timeout=1.0))
        except queue.Empty:
            break
    for sw, _ in leaves:
        sw.stop()  # completes the pcap files
    to_a = [p for p in lab.wire(1, host_ifs[0]) if p.opcode in roce.OP_WRITE]
    to_b = [p for p in lab.wire(2, host_ifs[1]) if p.opcode in roce.OP_WRITE]
    assert len(to_a) == len(to_b) == -(-SIZE // 1024)

    # Towards A (to-host sink): B's leaf as source, then A's leaf; fabric time advances.
    for p in to_a:
        assert [(h.switch_id, h.ingress_port, h.egress_port, h.queue_id) for h in p.int_stack.hops()] == [
            (0x72, HOST_PORT, UPLINK, 3), (0x71, UPLINK, HOST_PORT, 3)]
    times = [p.int_stack.hops()[1].ingress_ts_us for p in to_a]
    assert times == sorted(times) and times[-1] > times[0]

    # Towards B (report sink): plain RoCEv2, and one report per data packet.
    assert all(p.int_stack is None for p in to_b)
    assert len(reports) == len(to_b)
    seqs = []
    for frame, meta in reports:
        assert meta["ingress_port"] == UPLINK
        assert int.from_bytes(frame[36:38], "big") == REPORT_PORT
        rep = int_md.parse_report(frame)
        assert (rep.hop_count, rep.switch_id) == (2, 0x72)
        seqs.append(rep.seq_no)
        assert rep.inner[26:34] == bytes([10, 77, 1, 1, 10, 77, 2, 2])
        stack = rep.stack()
        assert [(h.switch_id, h.ingress_port, h.egress_port) for h in stack.hops()] == [
            (0x71, HOST_PORT, UPLINK), (0x72, UPLINK, HOST_PORT)]
        bth = 42 + stack.nbytes
        assert rep.inner[bth] in roce.OP_WRITE and len(rep.inner) == bth + roce.BTH_LEN
        assert report_hops(frame) == stack.hops()  # as the controller's collector reads it
    assert sorted(seqs) == list(range(len(reports)))


# --- one switch, a slow port, PFC keeps it lossless ----------------------------------------

C = Host("10.78.1.1", "02:78:00:00:01:01", "02:78:00:00:00:01")
D = Host("10.78.2.2", "02:78:00:00:02:02", "02:78:00:00:00:02")
XOFF, XON = 4, 2
PFC_SESSION = 256 + 1
PFC_SIZE = 200_000  # 196 packets: three times the queue capacity (64), lost without PFC
# The switch must see XOFF before the 64-packet queue is full. Frames in flight between the
# NIC and the switch's pipeline (socket buffers while the switch process waits for a CPU)
# are the "cable" here: at D=10000 the NIC sends 1.2 k packets per wall second, so the
# headroom of 60 packets covers a 50 ms scheduling stall on this shared machine.
PFC_DILATION = 10_000


def test_pfc_pauses_live_sender_and_loses_nothing(make_lab) -> None:
    """C --1[switch]2-- D with port 2 ten times slower than C's NIC: the queue towards D
    fills, fabric.p4 pauses class 3 on port 1, C's NIC obeys, the switch resumes it at XON;
    no packet is lost (the lossless queue never reaches its 64-packet capacity)."""
    lab = make_lab(PFC_DILATION)
    port_c, port_d = lab.host(C), lab.host(D)
    sw, ctl = lab.switch({1: port_c, 2: port_d})
    route(ctl, C.ip, 1, C.gateway_mac, C.mac)
    route(ctl, D.ip, 2, D.gateway_mac, D.mac)
    roce_in_class_3(ctl)
    ctl.insert(ctl.table_entry(f"{IG}.pfc.pfc_port", {"standard_metadata.ingress_port": 1},
                               f"{IG}.pfc.set_pfc_port",
                               {"enable_mask_value": 1 << 3, "xoff_pkts": XOFF, "xon_pkts": XON,
                                "pause_quanta": 0xFFFF, "refresh_us": 100, "stale_us": 200_000}))
    ctl.insert(ctl.clone_session(PFC_SESSION, [1]))
    cli = subprocess.run([sys.executable, "-m", "p4rt.runtime_cli", "--thrift-port",
                          str(sw.thrift_port)], input="set_port_rate 2 10000000000\n",
                         capture_output=True, text=True, timeout=30)
    assert cli.returncode == 0, cli.stdout + cli.stderr

    nics = lab.run([C, D], {"kind": "p2p", "size": PFC_SIZE, "src": 0, "dst": 1})
    assert nics[1].workload_status()["data_ok"] is True
    assert_clean(nics)
    sender = nics[0].status()["counters"]
    assert sender["pause_frames_received"] >= 2 and sender["pause_ns"] > 0
    pauses = ctl.read_counter(f"{IG}.pfc.pfc_pauses_sent", 1 * 8 + 3)[0]
    resumes = ctl.read_counter(f"{EG}.pfc.pfc_resumes_sent", 1 * 8 + 3)[0]
    assert pauses >= 1 and resumes >= 1
    assert sender["pause_frames_received"] == pauses + resumes
