"""Real TCP background traffic between the Mininet hosts of a live fabric, with iperf3.

The hosts' interfaces belong to the RoCE NIC model, and their kernels normally have no IPv4
address at all (topo/rnic_host.py). For a mixed-traffic run each host's kernel gets the
host's address as a /32, one route per peer out of its interface and a permanent neighbour
entry mapping every peer to the leaf's MAC (the leaf routes on IP, as for the NIC's own
frames; nothing answers ARP in this fabric). Its TCP then crosses the same P4 switches as
RoCE, with DSCP 0, so fabric.p4 classifies it to priority 0: best effort, no PFC. The NIC
model binds UDP 4791/4792 on that address, so the kernel stays quiet about RoCE packets, and
counts the TCP frames it also sees as the host's (``host_frames``), not as discards.

iperf3 servers and clients run in the hosts' network namespaces (``nsenter`` into the NIC
process's), are stopped by their PIDs, and write JSON to pipes; everything configured is
removed again when the ``with`` block ends, also after a failure. Throughput is reported in
fabric time: iperf3 measures wall-clock bits per second, the fabric's clock runs D times
slower (controller/calibrate.py).
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

REPORT_INTERVAL_S = 0.5  # iperf3 -i: wall seconds per interval report
STOP_TIMEOUT_S = 10.0
LONG_RUN_S = 3600  # clients run until stopped (by PID) with SIGINT; iperf3 then reports


@dataclass
class TcpFlow:
    """One iperf3 client -> server pair and what its JSON reports said."""

    src: str
    dst: str
    port: int
    started_at: float = 0.0  # time.monotonic() of the client's launch
    server: subprocess.Popen | None = None
    client: subprocess.Popen | None = None
    server_json: dict[str, Any] = field(default_factory=dict)
    client_json: dict[str, Any] = field(default_factory=dict)

    def received_intervals(self) -> list[tuple[float, float, int]]:
        """(start, end, bytes) received per interval, wall seconds from the client's launch."""
        return [(i["sum"]["start"], i["sum"]["end"], int(i["sum"]["bytes"]))
                for i in self.server_json.get("intervals", [])]

    @property
    def retransmits(self) -> int:
        return sum(int(i["sum"].get("retransmits", 0)) for i in self.client_json.get("intervals", []))


def namespace_cmd(state, host: str, *cmd: str) -> list[str]:
    """``cmd`` run in ``host``'s network namespace (its NIC process's)."""
    return ["nsenter", f"--net=/proc/{state.nics[host].pid}/ns/net", *cmd]


def default_pairs(hosts: list[str]) -> list[tuple[str, str]]:
    """Every host sends to the host half the list away: on a leaf/spine every flow crosses
    the spines, and every host both sends and receives TCP."""
    n = len(hosts)
    return [(hosts[i], hosts[(i + n // 2) % n]) for i in range(n)]


class TcpBackground:
    """``with TcpBackground(state, topo, pairs) as bg: bg.start(); ...; flows = bg.stop()``."""

    def __init__(self, state, topo, pairs: list[tuple[str, str]]) -> None:
        self.state = state
        self.topo = topo
        self.pairs = pairs
        self.flows: list[TcpFlow] = []
        self._configured: list[tuple[str, list[list[str]]]] = []  # host, undo commands

    # -- host stacks ------------------------------------------------------------------------
    def _run(self, host: str, *cmd: str) -> None:
        proc = subprocess.run(namespace_cmd(self.state, host, *cmd), capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{host}: {' '.join(cmd)}: {proc.stderr.strip()}")

    def _configure(self, host: str) -> None:
        h = self.topo.host(host)
        intf = f"{host}-eth0"
        gw = self.topo.switch(h.leaf).mac
        undo: list[list[str]] = []
        self._configured.append((host, undo))
        self._run(host, "ip", "addr", "add", f"{h.ip}/32", "dev", intf)
        undo.append(["ip", "addr", "del", f"{h.ip}/32", "dev", intf])
        for peer in self.topo.hosts:
            if peer.name == host:
                continue
            self._run(host, "ip", "neigh", "replace", peer.ip, "lladdr", gw, "dev", intf, "nud", "permanent")
            undo.append(["ip", "neigh", "del", peer.ip, "dev", intf])
            self._run(host, "ip", "route", "replace", f"{peer.ip}/32", "dev", intf)
            undo.append(["ip", "route", "del", f"{peer.ip}/32", "dev", intf])

    def _unconfigure(self) -> None:
        for host, undo in reversed(self._configured):
            for cmd in reversed(undo):  # best effort: a host whose namespace is gone has nothing left
                subprocess.run(namespace_cmd(self.state, host, *cmd), capture_output=True)
        self._configured.clear()

    def __enter__(self) -> TcpBackground:
        try:
            for host in sorted({h for pair in self.pairs for h in pair}):
                self._configure(host)
        except BaseException:
            self._unconfigure()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop()
        finally:
            self._unconfigure()

    # -- iperf3 -----------------------------------------------------------------------------
    def start(self) -> None:
        """One iperf3 server per pair on a random port, then the clients (TCP, DSCP 0)."""
        rng = random.Random()
        for src, dst in self.pairs:
            flow = TcpFlow(src, dst, rng.randrange(20000, 60000))
            dst_ip, src_ip = self.topo.host(dst).ip, self.topo.host(src).ip
            flow.server = subprocess.Popen(
                namespace_cmd(self.state, dst, "iperf3", "-s", "-1", "-B", dst_ip, "-p", str(flow.port),
                              "-i", str(REPORT_INTERVAL_S), "--json"),
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.flows.append(flow)
        time.sleep(0.5)  # the servers listen (a client that finds no server fails at once, below)
        for flow in self.flows:
            dst_ip, src_ip = self.topo.host(flow.dst).ip, self.topo.host(flow.src).ip
            flow.started_at = time.monotonic()
            flow.client = subprocess.Popen(
                namespace_cmd(self.state, flow.src, "iperf3", "-c", dst_ip, "-B", src_ip, "-p", str(flow.port),
                              "-t", str(LONG_RUN_S), "-i", str(REPORT_INTERVAL_S), "--tos", "0", "--json"),
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        time.sleep(0.5)
        failed = [f for f in self.flows if f.client is not None and f.client.poll() is not None]
        if failed:
            self.stop()
            f = failed[0]
            raise RuntimeError(f"iperf3 {f.src} -> {f.dst}: {f.client_json.get('error', 'exited at once')}")

    def stop(self) -> list[TcpFlow]:
        """Interrupt every client (iperf3 reports on SIGINT), let the servers report, collect."""
        for flow in self.flows:
            if flow.client is not None:
                flow.client_json = _finish(flow.client, signal.SIGINT)
                flow.client = None
        for flow in self.flows:
            if flow.server is not None:
                flow.server_json = _finish(flow.server, signal.SIGINT, wait_first=True)
                flow.server = None
        return self.flows


def _finish(proc: subprocess.Popen, sig: int, wait_first: bool = False) -> dict[str, Any]:
    """Stop ``proc`` (by its PID) and parse the JSON it printed ({} if none)."""
    if wait_first:  # a one-off server ends by itself once its client is gone
        try:
            out, _ = proc.communicate(timeout=STOP_TIMEOUT_S)
            return _parse(out)
        except subprocess.TimeoutExpired:
            pass
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        out, _ = proc.communicate(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return _parse(out)


def _parse(text: str | None) -> dict[str, Any]:
    try:
        return json.loads(text or "")
    except json.JSONDecodeError:
        return {}
