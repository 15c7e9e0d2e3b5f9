"""``ecn-thresholds``: ECN marking at 30 %/70 % of the buffer (the guide's advice) against
tighter and looser thresholds, with DCQCN.

One switch: two long flows (2 MB quick, 20 MB full) into h1_1 make its egress queue the
bottleneck, and short flows (16 KB) from other hosts arrive into the same queue one after
another while they run. The buffer is the egress queue (``queue_depth_pkts`` of the topology)
in bytes of full frames; each setting puts Kmin/Kmax at fractions of it (Pmax 0.2, the
fabric default), and PFC's XOFF sits at half the buffer per ingress port, above the
thresholds, so that ECN acts first. Measured: queue mean/p99 while the long flows run, the long flows' goodput,
the short flows' FCT p50/p99.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from controller.workloads import workload_specs
from experiments import sim
from experiments.base import Claim, ClaimCheck, Point, PointResult
from experiments.report import Tabular, bar_plot, mean_by
from topo.builder import leaf_spine

NAME = "ecn-thresholds"
QUEUE_PKTS = 256
FRAME_BYTES = 1024 + 78  # a full data frame at MTU 1024 (headers and ICRC)
BUFFER_BYTES = QUEUE_PKTS * FRAME_BYTES
SETTINGS = {"tight": (0.05, 0.15), "guide-30-70": (0.30, 0.70), "loose": (0.60, 0.95)}
# ECN must act before PFC (the guide's rule): each long flow's ingress port may hold up to its
# share of the buffer before pausing, so the marking thresholds, not pauses, shape the queue
PFC_XOFF = BUFFER_BYTES // 2
SHORT_FLOWS = 6
NOISE = 0.02  # throughput differences within 2 % are not a cost
SHORT_BYTES = 16 * 1024

SOURCE = "RoCEv2 deployment guide (ECN Kmin/Kmax at about 30 %/70 % of the buffer)"
CLAIM = Claim(SOURCE, "the queue and the short flows' FCT grow with the thresholds: tight < 30 %/70 % < loose")
CLAIM_TPUT = Claim(SOURCE, "30 %/70 % keeps the long flows' throughput of loose settings, while tight thresholds "
                           "cost throughput")


class EcnThresholds(Tabular):
    name = NAME
    title = "ECN thresholds: 30 %/70 % of the buffer vs tight and loose (DCQCN)"
    claims = [CLAIM, CLAIM_TPUT]
    columns = ("kmin_bytes", "kmax_bytes", "queue_mean_pkts", "queue_p99_pkts", "long_goodput_gbps",
               "short_fct_p50_us", "short_fct_p99_us", "pauses", "ok")

    def points(self, quick: bool, seeds: int = 1) -> list[Point]:
        return [Point(NAME, {"ecn": s}, seed, quick) for seed in range(1, seeds + 1) for s in SETTINGS]

    def run_point(self, point: Point) -> dict[str, Any]:
        own, overrides = sim.split_params(point.params)
        lo, hi = SETTINGS[own.get("ecn", "guide-30-70")]
        kmin, kmax = round(lo * BUFFER_BYTES), round(hi * BUFFER_BYTES)
        overrides.setdefault("ecn", {}).update(kmin_bytes=kmin, kmax_bytes=kmax)
        overrides.setdefault("pfc", {}).update(xoff_bytes=PFC_XOFF, xon_bytes=PFC_XOFF * 3 // 4)
        long_bytes = 2_000_000 if point.quick else 20_000_000
        topo = replace(leaf_spine(1, 1, 3 + SHORT_FLOWS), queue_depth_pkts=QUEUE_PKTS)
        hosts = [h.name for h in topo.hosts]
        specs = workload_specs(topo, "incast", hosts, size=long_bytes)
        span_ns = long_bytes * 2 * 8 // 100  # the long flows' time at line rate
        for i, h in enumerate(hosts[3:]):  # short flows spread over the middle of the long flows
            specs[h].update(size=SHORT_BYTES, start_delay_ns=span_ns // 4 + i * span_ns // (2 * SHORT_FLOWS))
        for spec in specs.values():
            spec["verify"] = False
        leaf, port = topo.hosts[0].leaf, topo.host_port(hosts[0])[1]
        sampler = sim.Sampler(ports={"q": (leaf, port)})
        m = sim.run(topo, "baseline", overrides, specs, seed=point.seed, workload=NAME, sampler=sampler)
        out = m.base_metrics()
        ips = {h.name: h.ip for h in topo.hosts}
        longs = [x for x in m.result.messages if x.src in (ips[hosts[1]], ips[hosts[2]])]
        shorts = sorted(x.fct_us for x in m.result.messages if x.size == SHORT_BYTES)
        end_ns = min(x.fct_us for x in longs) * 1e3 if longs else 0  # while both long flows run
        q = sorted(d for t, d in zip(sampler.times_ns, sampler.queue["q"]) if t <= end_ns) or [0]
        out.update(kmin_bytes=kmin, kmax_bytes=kmax, queue_mean_pkts=round(sum(q) / len(q), 2),
                   queue_p99_pkts=sim.percentile(q, 0.99),
                   long_goodput_gbps=round(sum(x.size for x in longs) * 8 / (max(x.fct_us for x in longs) * 1e3), 2)
                   if longs else 0.0,
                   short_fct_p50_us=round(sim.percentile(shorts, 0.5), 2),
                   short_fct_p99_us=round(sim.percentile(shorts, 0.99), 2))
        return out

    def check(self, results: list[PointResult]) -> list[ClaimCheck]:
        q = mean_by(results, lambda r: r.point.params["ecn"], "queue_mean_pkts")
        fct = mean_by(results, lambda r: r.point.params["ecn"], "short_fct_p99_us")
        tput = mean_by(results, lambda r: r.point.params["ecn"], "long_goodput_gbps")
        if set(q) < set(SETTINGS):
            return [ClaimCheck(c, "not every setting ran", False) for c in self.claims]
        t, g, lo = "tight", "guide-30-70", "loose"
        return [ClaimCheck(CLAIM, "; ".join(f"{s}: queue {q[s]:.1f} pkts, short-flow FCT p99 {fct[s]:.1f} us"
                                            for s in SETTINGS),
                           q[t] < q[g] < q[lo] and fct[t] < fct[g] < fct[lo]),
                ClaimCheck(CLAIM_TPUT, "; ".join(f"{s}: long flows {tput[s]:.1f} Gb/s" for s in SETTINGS),
                           tput[g] >= 0.95 * tput[lo] and tput[t] < (1 - NOISE) * tput[g])]

    def plots(self, results: list[PointResult], out: Path) -> list[Path]:
        pngs = []
        for metric, label in (("queue_mean_pkts", "queue mean (pkts)"), ("short_fct_p99_us", "short-flow FCT p99 (us)"),
                              ("long_goodput_gbps", "long-flow goodput (Gb/s)")):
            vals = mean_by(results, lambda r: r.point.params["ecn"], metric)
            pngs.append(bar_plot(out / f"{NAME}-{metric}.png", f"{self.title}: {label}", label, {label: vals}))
        return pngs


EXPERIMENT = EcnThresholds()
