"""Shared pieces of the cross-component tests: fabric.p4 compiled once, and a small model of
one switch built from the executor's public API (tables by P4Info name, V1Pipeline ingress
and egress with queueing metadata), so several switches can be chained in a test.

Table, action and parameter names are the ones p4src/README.md documents for controllers;
nothing here reaches into the executor's internals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from p4rt.entries import ActionCall, CloneSession, Exact, Lpm, Replica, TableEntry, Ternary
from p4switch.exec import LoadedProgram, QueueMeta, V1Pipeline
from p4switch.frontend import compile_file

ROOT = Path(__file__).resolve().parents[2]
FABRIC_P4 = ROOT / "p4src" / "fabric.p4"
CPU_PORT = 255
INT_REPORT_SESSION = 1
PFC_SESSION_BASE = 256

IG = "FabricIngress"
EG = "FabricEgress"


@pytest.fixture(scope="session")
def fabric_checked() -> Any:
    """fabric.p4 through the front end, once per test session (about a second)."""
    return compile_file(str(FABRIC_P4))


class FabricSwitch:
    """One fabric.p4 switch: its own tables and registers, a pipeline, and helpers that
    install entries the way a controller would (names from p4src/README.md)."""

    def __init__(self, checked: Any) -> None:
        self.prog = LoadedProgram.from_checked(checked)
        self.pipe = V1Pipeline(self.prog, cpu_port=CPU_PORT)

    def add(self, table: str, match: dict[str, Any], action: str, params: dict[str, int] | None = None,
            priority: int = 0) -> None:
        self.prog.tables[table].insert(TableEntry(match, ActionCall(action, params or {}), priority))

    # -- the README's building blocks ------------------------------------------------------
    def route(self, ip: int, port: int, src_mac: bytes, dst_mac: bytes) -> None:
        """/32 route to a port and the MAC rewrite on that port."""
        self.add(f"{IG}.routing.routing_v4", {"hdr.ipv4.dst_addr": Lpm(ip, 32)},
                 f"{IG}.routing.route_to_port", {"port": port})
        table = self.prog.tables[f"{IG}.next_hop.next_hop_mac"]
        if not any(e.match["standard_metadata.egress_spec"] == Exact(port) for e in table.entries()):
            self.add(f"{IG}.next_hop.next_hop_mac", {"standard_metadata.egress_spec": Exact(port)},
                     f"{IG}.next_hop.set_next_hop_macs", {"src_mac": int.from_bytes(src_mac, "big"),
                                                          "dst_mac": int.from_bytes(dst_mac, "big")})

    def classify_dscp(self, dscp: int, priority: int) -> None:
        self.add(f"{IG}.classify.classify", {"hdr.ipv4.dscp": Ternary(dscp, 0x3F)},
                 f"{IG}.classify.set_priority", {"priority": priority}, priority=10)

    def int_source(self, src_ip: int, max_hops: int = 5) -> None:
        self.add(f"{IG}.int_ingress.int_watchlist", {"hdr.ipv4.src_addr": Ternary(src_ip, 0xFFFFFFFF)},
                 f"{IG}.int_ingress.int_source", {"max_hops": max_hops}, priority=10)

    def int_transit(self, port: int, switch_id: int, link_rate_mbps: int) -> None:
        self.add(f"{EG}.int_egress.int_transit_port", {"meta.out_port": Exact(port)},
                 f"{EG}.int_egress.int_transit",
                 {"switch_id_value": switch_id, "link_rate_mbps": link_rate_mbps})

    def int_sink(self, port: int, report: bool) -> None:
        action = "int_sink_report" if report else "int_sink_to_host"
        self.add(f"{IG}.int_ingress.int_sink", {"standard_metadata.egress_spec": Exact(port)},
                 f"{IG}.int_ingress.{action}")

    def clone_session(self, session: int, port: int, cos: int = 0) -> None:
        self.prog.pre.set_clone_session(CloneSession(session, [Replica(port, 0)], cos=cos))

    # -- packets -----------------------------------------------------------------------------
    def forward(self, port: int, frame: bytes, now_us: int, latency_us: int = 0,
                qdepth: int = 0) -> list[tuple[int, bytes]]:
        """Ingress at ``now_us``, then egress of every resulting job as if each waited
        ``latency_us`` behind ``qdepth`` packets; returns the transmitted (port, frame)s."""
        out: list[tuple[int, bytes]] = []
        jobs = list(self.pipe.ingress(port, frame, now_us).to_egress)
        for job in jobs:
            q = QueueMeta(enq_timestamp=now_us, enq_qdepth=qdepth, deq_timedelta=latency_us,
                          deq_qdepth=qdepth)
            res = self.pipe.egress(job, q, now_us + latency_us)
            out.extend(res.transmit)
            jobs.extend(res.to_egress)
        return out


def drain_nic(nic: Any, now_ns: int) -> list[bytes]:
    """Every frame the NIC has to send, each at the time its port is free again."""
    out = []
    t = now_ns
    for _ in range(1000):
        f = nic.poll_transmit(t)
        if f is not None:
            out.append(f)
            continue
        nxt = nic.next_wakeup(t)
        if nxt is None or nxt > now_ns + 50_000:  # serialization waits only, not the RTO
            return out
        t = nxt
    raise AssertionError("NIC never went idle")


@pytest.fixture
def drain():
    """``drain(nic, now_ns)``: every frame a NIC model has to send right now."""
    return drain_nic


@pytest.fixture
def make_switch(fabric_checked: Any):
    """Factory of independent fabric.p4 switches (each with its own state)."""
    return lambda: FabricSwitch(fabric_checked)
