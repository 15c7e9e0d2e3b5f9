"""Packets/s of fabric.p4 in process, per load-balancing profile, with the features each
profile turns on (``V1Pipeline.process``: parser, ingress, egress, deparser; no queueing).

- ``ecmp``: ECMP through the action selector, DSCP classification, ECN thresholds, PFC
  accounting (what the ``baseline`` profile uses);
- ``dlb+int``: flowlet DLB reading port load, INT source + hop push (``ai-fabric`` with HPCC);
- ``spray``: round-robin spraying.
RoCEv2 WRITE frames of 64 flows from port 1 to a 2-member group (ports 2, 3). CPU time of one
core, median of 5 rounds (``bench_exec.median_rate``), so the figure depends less on the
machine's other load.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bench.bench_exec import median_rate
from bench.result import Result
from p4rt.entries import ActionCall, Exact, GroupRef, Lpm, TableEntry, Ternary
from p4switch.exec import LoadedProgram, V1Pipeline
from ptf_tests.fabric.fabric_packets import roce

FABRIC = Path(__file__).resolve().parent.parent / "p4src" / "fabric.p4"
MEMBERS = (2, 3)
GROUP = 1
SECONDS = 1.0


def _entry(prog: LoadedProgram, table: str, match: dict, action: str, params: dict | None = None,
           priority: int = 0) -> None:
    prog.tables[table].insert(TableEntry(match, ActionCall(action, params or {}), priority))


def _common(prog: LoadedProgram, mode: int) -> None:
    _entry(prog, "FabricIngress.routing.routing_v4", {"hdr.ipv4.dst_addr": Lpm(0x0A000200, 24)},
           "FabricIngress.routing.set_nh_group", {"group_id": GROUP})
    _entry(prog, "FabricIngress.classify.classify", {"hdr.ipv4.dscp": Ternary(26, 0x3F)},
           "FabricIngress.classify.set_priority", {"priority": 3}, priority=10)
    _entry(prog, "FabricIngress.routing.lb_mode", {"meta.nh_group": Ternary(GROUP, 0xFFFF)},
           "FabricIngress.routing.set_lb_mode", {"mode": mode, "hash_qp": 0, "flowlet_timeout_us": 100},
           priority=10)
    members = {f"port{i}": (MEMBERS[i] if i < len(MEMBERS) else 0) for i in range(8)}
    _entry(prog, "FabricIngress.routing.lb_group", {"meta.nh_group": Exact(GROUP)},
           "FabricIngress.routing.set_lb_members", {"count": len(MEMBERS), **members})
    for port in MEMBERS:
        _entry(prog, "FabricIngress.next_hop.next_hop_mac", {"standard_metadata.egress_spec": Exact(port)},
               "FabricIngress.next_hop.set_next_hop_macs", {"src_mac": 0x020000000000 | port, "dst_mac": port})


def _ecmp(prog: LoadedProgram) -> None:
    _common(prog, 0)
    selector = prog.action_profiles["FabricIngress.routing.ecmp_selector"]
    for port in MEMBERS:
        selector.add_member(port, ActionCall("FabricIngress.routing.set_egress_port", {"port": port}))
    selector.add_group(GROUP, [(port, 1) for port in MEMBERS], max_size=8)
    prog.tables["FabricIngress.routing.ecmp"].insert(TableEntry({"meta.nh_group": Exact(GROUP)}, GroupRef(GROUP)))
    for port in MEMBERS:
        _entry(prog, "FabricEgress.ecn.ecn_thresholds",
               {"standard_metadata.egress_port": Exact(port), "meta.prio": Exact(3)},
               "FabricEgress.ecn.set_ecn_thresholds", {"kmin_pkts": 5, "kmax_pkts": 20, "pmax_scaled": 13107})
    _entry(prog, "FabricIngress.pfc.pfc_port", {"standard_metadata.ingress_port": Exact(1)},
           "FabricIngress.pfc.set_pfc_port", {"enable_mask_value": 0x08, "xoff_pkts": 1000, "xon_pkts": 500,
                                              "pause_quanta": 0xFFFF, "refresh_us": 100, "stale_us": 200_000})


def _dlb_int(prog: LoadedProgram) -> None:
    _common(prog, 1)
    _entry(prog, "FabricIngress.int_ingress.int_watchlist", {"hdr.ipv4.src_addr": Ternary(0x0A000101, 0xFFFFFFFF)},
           "FabricIngress.int_ingress.int_source", {"max_hops": 5}, priority=10)
    for port in MEMBERS:
        _entry(prog, "FabricEgress.int_egress.int_transit_port", {"meta.out_port": Exact(port)},
               "FabricEgress.int_egress.int_transit", {"switch_id_value": 1, "link_rate_mbps": 100000})


def _spray(prog: LoadedProgram) -> None:
    _common(prog, 2)


PROFILES = {"ecmp": _ecmp, "dlb+int": _dlb_int, "spray": _spray}


def workload(setup: Callable[[LoadedProgram], None]) -> tuple[V1Pipeline, int, list[bytes]]:
    """fabric.p4 configured by ``setup`` (one of PROFILES) and 64 RoCEv2 flows' frames:
    (pipeline, port, frames)."""
    prog = LoadedProgram.from_file(FABRIC)
    setup(prog)
    return V1Pipeline(prog), 1, [roce(sport=49152 + i, psn=i) for i in range(64)]


def _rate(setup: Callable[[LoadedProgram], None]) -> tuple[float, int]:
    pipe, port, frames = workload(setup)
    return median_rate(pipe.process, port, frames, SECONDS)


def run() -> list[Result]:
    results = []
    for name, setup in PROFILES.items():
        rate, out = _rate(setup)
        detail = "in process, CPU time, median of 5, 2 members" + ("" if out else "; warning: nothing forwarded")
        results.append(Result(f"fabric.p4 {name}", rate, "packets/s", detail))
    return results


if __name__ == "__main__":
    for r in run():
        print(f"{r.name:<24} {r.value:>12,.0f} {r.unit} {r.detail}")
