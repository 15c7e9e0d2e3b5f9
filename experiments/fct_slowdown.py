"""``fct-slowdown``: Poisson traffic from the HPCC paper's flow-size distributions on a fat tree
(k = 4, 16 hosts; the quick form: 2 spines, 2 leaves, 8 hosts), FCT slowdown p50/p95/p99 by flow-size bucket, per profile.

Every host starts flows with Poisson arrivals at the given load of its link (destinations
uniform, one queue pair per flow, as the HPCC paper's ns-3 runs do), sizes drawn from the
WebSearch or FB Hadoop CDF (nicmodel/data/flow_size_cdf, their provenance in its README).
How long arrivals last is part of the form: the quick form starts 6 flows per host; the full
form starts flows for ``ARRIVALS_NS`` (250 us) of fabric time, and every flow then runs to
completion. The HPCC paper's runs last far longer; at the simulator's speed (thousands of
packet-hops per CPU second) 250 us of FB Hadoop arrivals on 16 hosts (120 KB mean: 8-18 flows
per host, 130-290 flows) is already minutes of CPU per point. WebSearch's mean flow is 1.7 MB:
250 us would start about one flow per host (9-18 in all, too few for a p95), so its window
(``ARRIVALS_NS_BY_CDF``) is 1 ms: about four times the flows for about four times the CPU.
The full grid lists the claim's pair (baseline, ai-fabric) first, so a run stopped early has
already checked the claim at every load.
Slowdown = FCT / ideal FCT (the flow alone: its frames, headers included, at line rate plus the
base RTT; nicmodel/stats.py). Plotted as the HPCC paper plots it: slowdown against flow size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controller.workloads import workload_specs
from experiments import sim
from experiments.base import Claim, ClaimCheck, Point, PointResult
from experiments.report import Tabular, pyplot
from topo.builder import fat_tree, leaf_spine

NAME = "fct-slowdown"
BUCKETS = ((0, 10_000, "<10KB"), (10_000, 100_000, "10-100KB"), (100_000, 1_000_000, "100KB-1MB"),
           (1_000_000, float("inf"), ">1MB"))
PROFILES_FULL = (("baseline", "ai-fabric"), ("dcqcn-table", "ai-dlb"))  # the claim's pair first
QUICK_FLOWS = 6  # flows per host in the quick form
ARRIVALS_NS = 250_000  # the full form's arrival window per host
ARRIVALS_NS_BY_CDF = {"websearch": 1_000_000}  # CDFs of long flows: a window that starts enough of them

# "well below": HPCC's short-flow p95 at most this fraction of DCQCN's (15 % lower or more)
WELL_BELOW = 0.85
CLAIM = Claim("Li et al., 'HPCC: High Precision Congestion Control', SIGCOMM 2019, figures 11-12",
              "HPCC cuts the tail (p95/p99) FCT slowdown of short flows well below DCQCN's, at every load")


class FctSlowdown(Tabular):
    name = NAME
    title = "FCT slowdown by flow size, Poisson traffic on a fat tree (k=4)"
    claims = [CLAIM]
    columns = ("flows", "short_p50", "short_p95", "short_p99", "all_p99", "pauses", "retransmissions", "ok")

    def points(self, quick: bool, seeds: int = 1) -> list[Point]:
        if quick:
            grid = [("fbhdp", 0.5, p) for p in ("baseline", "ai-fabric")]
        else:
            grid = [(cdf, load, p) for pair in PROFILES_FULL for cdf in ("fbhdp", "websearch")
                    for load in (0.3, 0.5, 0.7) for p in pair]
        return [Point(NAME, {"cdf": cdf, "load": load, "profile": p}, seed, quick)
                for seed in range(1, seeds + 1) for cdf, load, p in grid]

    def run_point(self, point: Point) -> dict[str, Any]:
        own, overrides = sim.split_params(point.params)
        # the quick form on a small leaf/spine: a fat tree's 20 switches take longer to configure
        profile = own.get("profile", "baseline")
        topo = sim.lossless_queues(leaf_spine(2, 2, 4) if point.quick else fat_tree(4), profile, overrides)
        hosts = [h.name for h in topo.hosts]
        cdf = own.get("cdf", "websearch")
        specs = workload_specs(topo, "poisson", hosts, size=1, cdf=cdf, load=float(own.get("load", 0.5)),
                               flows=QUICK_FLOWS, seed=point.seed, qp_per_flow=True,
                               duration_ns=None if point.quick else ARRIVALS_NS_BY_CDF.get(cdf, ARRIVALS_NS))
        m = sim.run(topo, profile, overrides, specs, seed=point.seed, workload=NAME)
        out = m.base_metrics()
        msgs = m.result.messages
        out["flows"] = len(msgs)
        for lo, hi, label in BUCKETS:
            s = sorted(x.slowdown for x in msgs if lo <= x.size < hi)
            out[f"slowdown[{label}]"] = {q: round(sim.percentile(s, v), 3) for q, v in
                                         (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))} | {"n": len(s)}
        short = sorted(x.slowdown for x in msgs if x.size < 100_000)
        out.update(short_p50=round(sim.percentile(short, 0.5), 3), short_p95=round(sim.percentile(short, 0.95), 3),
                   short_p99=round(sim.percentile(short, 0.99), 3),
                   all_p99=round(sim.percentile(sorted(x.slowdown for x in msgs), 0.99), 3))
        return out

    def check(self, results: list[PointResult]) -> list[ClaimCheck]:
        by: dict[tuple[str, float], dict[str, list[float]]] = {}
        for r in results:
            if r.ok:
                key = (r.point.params["cdf"], r.point.params["load"])
                by.setdefault(key, {}).setdefault(r.point.params["profile"], []).append(r.metrics["short_p95"])
        parts, holds = [], []
        for (cdf, load), prof in sorted(by.items()):
            if "baseline" in prof and "ai-fabric" in prof:
                d, h = sum(prof["baseline"]) / len(prof["baseline"]), sum(prof["ai-fabric"]) / len(prof["ai-fabric"])
                parts.append(f"{cdf} {load:.0%}: short-flow p95 slowdown DCQCN (baseline) {d:.2f} vs HPCC "
                             f"(ai-fabric) {h:.2f}")
                holds.append(h <= WELL_BELOW * d)
        return [ClaimCheck(CLAIM, "; ".join(parts) or "baseline and ai-fabric did not both run",
                           bool(holds) and all(holds))]

    def plots(self, results: list[PointResult], out: Path) -> list[Path]:
        """One figure per CDF and load, as the HPCC paper draws them: slowdown against flow
        size, a panel per percentile (p50, p95, p99), one line per profile."""
        pngs = []
        for cdf, load in sorted({(r.point.params["cdf"], r.point.params["load"]) for r in results if r.ok}):
            rows = [r for r in results if r.ok and r.point.seed == 1
                    and (r.point.params["cdf"], r.point.params["load"]) == (cdf, load)]
            if rows:
                pngs.append(_slowdown_figure(out / f"{NAME}-{cdf}-{int(load * 100)}.png",
                                             f"{cdf} at {load:.0%} load: FCT slowdown by flow size", rows))
        return pngs


def _slowdown_figure(path: Path, title: str, rows: list[PointResult]) -> Path:
    plt = pyplot()
    labels = [label for _, _, label in BUCKETS]
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.4), sharey=True)
    for ax, q in zip(axes, ("p50", "p95", "p99")):
        for r in rows:
            ys = [r.metrics[f"slowdown[{label}]"][q] for label in labels]
            ax.plot(range(len(labels)), ys, marker="o", markersize=3, linewidth=1, label=r.point.params["profile"])
        ax.set_xticks(range(len(labels)), labels, fontsize=8)
        ax.set_yscale("log")
        plain = plt.FuncFormatter(lambda v, _: f"{v:g}")
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(plain)
        ax.tick_params(axis="y", which="both", labelsize=7)
        ax.set_title(f"{q} slowdown", fontsize=9)
        ax.set_xlabel("flow size")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("FCT / ideal FCT")
    axes[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


EXPERIMENT = FctSlowdown()
