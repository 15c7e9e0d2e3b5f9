"""``incast``: N senders to one receiver, with and without PFC, under each congestion control,
and a victim flow that shares the upstream links but not the congested egress.

Two spines, two leaves: the N incast senders and the victim's sender sit on leaf2, the incast
receiver (h1_1) and the victim's receiver (h1_2) on leaf1. The spines carry 200 Gb/s towards
leaf1 but h1_1's port only 100, so leaf1's egress queue to h1_1 is the congestion point. With
PFC, leaf1 pauses the spines, the spines pause leaf2, leaf2 pauses the senders: the victim,
whose own egress (leaf1 -> h1_2) is idle, waits behind the pauses (head-of-line blocking and
congestion spreading, MetaRoCE's first pain). Without PFC the queue overflows instead.

Measured: peak depth of the congested queue (packets, the traffic manager's own maximum), PFC
frames the switches sent, time the NICs spent paused, drops, incast completion against the
ideal (N x size at line rate plus one base RTT), the victim's slowdown (its FCT over its ideal).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controller.workloads import workload_specs
from experiments import sim
from experiments.base import Claim, ClaimCheck, Point, PointResult
from experiments.report import Tabular, bar_plot, mean_by
from topo.builder import leaf_spine

NAME = "incast"
CCS = {"none": {"cc.algo": "none"}, "dcqcn": {"cc.algo": "dcqcn"},
       "hpcc": {"cc.algo": "hpcc", "int.sink_mode": "echo+report"}}
BASE_RTT_US = 8.0  # 4 links each way at 1 us, plus serialization: the topology's base RTT, about
VICTIM_SLOWED = 1.2  # a victim 20 % over its ideal FCT counts as slowed (its own egress is idle)

CLAIM_HOL = Claim("Gangidi et al., 'RDMA over Ethernet for Distributed AI Training at Meta Scale' (MetaRoCE), "
                  "SIGCOMM 2024; Guo et al., 'RDMA over Commodity Ethernet at Scale', SIGCOMM 2016",
                  "under incast, PFC without end-to-end CC pauses the fabric and slows a victim flow that does not "
                  "cross the congested port (head-of-line blocking, congestion spreading)")
CLAIM_CC = Claim("same sources; Zhu et al. (DCQCN), SIGCOMM 2015; Li et al. (HPCC), SIGCOMM 2019",
                 "congestion control removes most of it: fewer pauses and a smaller victim slowdown")
CLAIM_LOSSY = Claim("IEEE 802.1Qbb; Guo et al., SIGCOMM 2016",
                    "PFC keeps the incast lossless; without PFC (and without CC) it overflows the queue and drops")


class Incast(Tabular):
    name = NAME
    title = "Incast N:1 with a victim flow, PFC on/off, per congestion control"
    claims = [CLAIM_HOL, CLAIM_CC, CLAIM_LOSSY]
    columns = ("queue_peak_pkts", "pauses", "nic_paused_us", "drops_total", "incast_vs_ideal", "victim_slowdown",
               "retransmissions", "ok")

    def points(self, quick: bool, seeds: int = 1) -> list[Point]:
        if quick:
            grid = [(8, True, "none"), (8, True, "dcqcn")]
        else:
            grid = [(n, pfc, cc) for n in (8, 16, 32) for pfc in (True, False) for cc in CCS]
        return [Point(NAME, {"n": n, "pfc": pfc, "cc": cc}, seed, quick)
                for seed in range(1, seeds + 1) for n, pfc, cc in grid]

    def run_point(self, point: Point) -> dict[str, Any]:
        own, overrides = sim.split_params(point.params)
        n, cc = int(own.get("n", 8)), own.get("cc", "none")
        _, cc_over = sim.split_params(CCS[cc])
        for section, values in cc_over.items():
            overrides.setdefault(section, {}).update(values)
        overrides.setdefault("pfc", {})["enabled"] = bool(own.get("pfc", True))
        size = 256 * 1024 if point.quick else 1024 * 1024
        # queues sized so that N ingress ports' XOFF plus headroom fit (sim.lossless_queues):
        # with PFC on the run measures pauses, not tail drops
        topo = sim.lossless_queues(leaf_spine(2, 2, n + 1), "baseline", overrides)
        leaf2 = [h.name for h in topo.hosts if h.leaf == "leaf2"]
        sink, victim_dst = "h1_1", "h1_2"
        senders, victim_src = leaf2[:n], leaf2[n]
        hosts = [sink, victim_dst, *senders, victim_src]
        specs = workload_specs(topo, "incast", hosts, size=size)
        for spec in specs.values():
            spec["verify"] = False
        v_src, v_dst = hosts.index(victim_src), hosts.index(victim_dst)
        for h in (victim_src, victim_dst):
            specs[h].update(kind="p2p", src=v_src, dst=v_dst, size=n * size // 4)
        port = topo.host_port(sink)[1]
        m = sim.run(topo, "baseline", overrides, specs, seed=point.seed, workload=NAME)
        out = m.base_metrics()
        tm_port = m.sim.fabric.switches["leaf1"].device.tm.ports.get(port)
        ips = {h.name: h.ip for h in topo.hosts}
        incast = [msg for msg in m.result.messages if msg.dst == ips[sink]]
        victim = [msg for msg in m.result.messages if msg.src == ips[victim_src]]
        ideal_us = n * size * 8 / 100e3 + BASE_RTT_US
        paused = sum(nic.stats().get("summary", {}).get("counters", {}).get("pause_ns", 0)
                     for h, nic in m.sim.fabric.nics.items() if h in specs)
        out.update(queue_peak_pkts=max((q.max_depth for q in tm_port.queues), default=0) if tm_port else 0,
                   nic_paused_us=round(paused / 1e3, 1), drops_total=out["drops"] + out["tm_drops"],
                   incast_us=round(max((x.fct_us for x in incast), default=0.0), 2),
                   incast_vs_ideal=round(max((x.fct_us for x in incast), default=0.0) / ideal_us, 2),
                   victim_fct_us=round(victim[0].fct_us, 2) if victim else -1.0,
                   victim_slowdown=round(victim[0].slowdown, 2) if victim else -1.0)
        return out

    def check(self, results: list[PointResult]) -> list[ClaimCheck]:
        def key(r: PointResult) -> tuple[int, bool, str]:
            return r.point.params["n"], r.point.params["pfc"], r.point.params["cc"]

        pauses, slow = mean_by(results, key, "pauses"), mean_by(results, key, "victim_slowdown")
        drops = mean_by(results, key, "drops_total")
        ns = sorted({k[0] for k in pauses})
        hol, cc_parts, cc_holds, lossy = [], [], [], []
        for n in ns:
            if (n, True, "none") in pauses:
                hol.append((n, pauses[(n, True, "none")], slow[(n, True, "none")]))
            for cc in ("dcqcn", "hpcc"):
                if (n, True, cc) in pauses and (n, True, "none") in pauses:
                    cc_parts.append(f"N={n} {cc}: {pauses[(n, True, cc)]:.0f} pauses, victim x{slow[(n, True, cc)]:.2f}")
                    cc_holds.append(pauses[(n, True, cc)] < pauses[(n, True, "none")]
                                    and slow[(n, True, cc)] < slow[(n, True, "none")])
            if (n, False, "none") in drops:
                lossy.append((n, drops[(n, False, "none")]))
        checks = [ClaimCheck(CLAIM_HOL, "; ".join(f"N={n} PFC, no CC: {p:.0f} pause frames, victim slowdown x{s:.2f}"
                                                  for n, p, s in hol) or "no PFC/no-CC point ran",
                             bool(hol) and all(p > 0 and s > VICTIM_SLOWED for _, p, s in hol)),
                  ClaimCheck(CLAIM_CC, "; ".join(cc_parts) or "no CC point ran", bool(cc_holds) and all(cc_holds))]
        pfc_drops = {k: d for k, d in drops.items() if k[1]}
        if lossy and pfc_drops:
            lossless = sum(pfc_drops.values())
            checks.append(ClaimCheck(CLAIM_LOSSY, f"with PFC: {lossless:.0f} drops over {len(pfc_drops)} points; "
                                     + "; ".join(f"N={n} no PFC, no CC: {d:.0f} drops" for n, d in lossy),
                                     lossless == 0 and all(d > 0 for _, d in lossy)))
        return checks

    def plots(self, results: list[PointResult], out: Path) -> list[Path]:
        pngs = []
        for metric, label in (("victim_slowdown", "victim slowdown"), ("pauses", "PFC pause frames"),
                              ("queue_peak_pkts", "queue peak (pkts)")):
            vals = mean_by(results, lambda r: (r.point.params["n"], r.point.params["pfc"], r.point.params["cc"]), metric)
            groups: dict[str, dict[str, float]] = {}
            for (n, pfc, cc), v in vals.items():
                groups.setdefault(f"N={n}", {})[f"{cc}/{'pfc' if pfc else 'no-pfc'}"] = v
            pngs.append(bar_plot(out / f"{NAME}-{metric}.png", f"{self.title}: {label}", label, groups))
        return pngs


EXPERIMENT = Incast()
