"""``loss-recovery``: Go-Back-N against selective repeat under random loss on one link.

One flow crosses leaf1 -> spine1 -> leaf2 (one spine, one host per leaf); only the direction
leaf1 -> spine1 loses frames, at random with the given probability (``P4Fabric.impair``), so
ACKs and NAKs come back intact, as on a dirty fibre. Measured: goodput, resent packets per lost
packet (the amplification: every data frame is the same size, so bytes and packets agree),
completion time. DCQCN in both (profile ``baseline``), so only the recovery differs.

The Go-Back-N model is a hardware RNIC's (nicmodel/README.md, "Transport behaviour" and
"Parameters and their sources"): an out-of-order packet is dropped and one PSN-sequence NAK
sent per gap (IBA vol. 1 ch. 9.7), repeated only after 500 us (HPCC's ns-3 NACK interval),
outstanding packets bounded by the PSN window (IBA) with no BDP window (IRN), a 500 us
retransmission timeout (IBA local_ack_timeout n = 7). Selective repeat uses SACK blocks, which
are not standard RoCEv2 (reported below).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controller.workloads import workload_specs
from experiments import sim
from experiments.base import Claim, ClaimCheck, Point, PointResult
from experiments.report import Tabular, line_plot, mean_by
from topo.builder import leaf_spine

NAME = "loss-recovery"
LOSSES = (0.00001, 0.0001, 0.001, 0.01)
LOSSY = ("leaf1", "spine1")

CLAIM = Claim("Gangidi et al. (MetaRoCE), SIGCOMM 2024; Mittal et al. (IRN), SIGCOMM 2018",
              "Go-Back-N resends far more than it loses (every packet in flight behind a loss); selective repeat "
              "resends about what was lost and keeps goodput under loss")


class LossRecovery(Tabular):
    name = NAME
    title = "Loss recovery: Go-Back-N vs selective repeat under random loss on one link"
    claims = [CLAIM]
    columns = ("lost_pkts", "retransmissions", "amplification", "goodput_gbps", "completion_us", "timeouts", "ok")

    def points(self, quick: bool, seeds: int = 1) -> list[Point]:
        losses = (0.01,) if quick else LOSSES
        return [Point(NAME, {"reliability": rel, "loss": loss}, seed, quick)
                for seed in range(1, seeds + 1) for loss in losses for rel in ("gbn", "sr")]

    def run_point(self, point: Point) -> dict[str, Any]:
        own, overrides = sim.split_params(point.params)
        overrides.setdefault("nic", {})["reliability"] = own.get("reliability", "gbn")
        topo = leaf_spine(1, 2, 1)
        hosts = [h.name for h in topo.hosts]
        size = 2_000_000 if point.quick else 30_000_000
        specs = workload_specs(topo, "incast", hosts, size=size)
        for h in hosts:  # one flow, h1_1 -> h2_1: across the lossy leaf1 -> spine1
            specs[h].update(kind="p2p", src=0, dst=1, verify=point.quick)
        loss = float(own.get("loss", 0.01))
        m = sim.run(topo, "baseline", overrides, specs, seed=point.seed, workload=NAME,
                    impaired=[(*LOSSY, {"loss": loss})])
        lossy = [lk for n, lk in m.sim.fabric.links.items() if n.startswith(f"{LOSSY[0]}:") and n.endswith(LOSSY[1])]
        lost = sum(lk.counters.lost for lk in lossy)
        out = m.base_metrics()
        out.update(lost_pkts=lost, amplification=round(out["retransmissions"] / lost, 2) if lost else 0.0,
                   data_ok=all(s.get("data_ok") is not False for s in m.sim.statuses.values()))
        return out

    def check(self, results: list[PointResult]) -> list[ClaimCheck]:
        resent = mean_by(results, lambda r: (r.point.params["loss"], r.point.params["reliability"]), "retransmissions")
        amp = mean_by(results, lambda r: (r.point.params["loss"], r.point.params["reliability"]), "amplification")
        good = mean_by(results, lambda r: (r.point.params["loss"], r.point.params["reliability"]), "goodput_gbps")
        parts, holds = [], []
        for loss in sorted({k[0] for k in resent}):
            if (loss, "gbn") in resent and (loss, "sr") in resent:
                parts.append(f"{loss:.3%} loss: resent/lost GBN {amp[(loss, 'gbn')]:.1f} vs SR {amp[(loss, 'sr')]:.1f}, "
                             f"goodput {good[(loss, 'gbn')]:.1f} vs {good[(loss, 'sr')]:.1f} Gb/s")
                if resent[(loss, "gbn")] or resent[(loss, "sr")]:
                    holds.append(resent[(loss, "gbn")] > resent[(loss, "sr")])
        return [ClaimCheck(CLAIM, "; ".join(parts) or "no GBN/SR pair ran", bool(holds) and all(holds))]

    def plots(self, results: list[PointResult], out: Path) -> list[Path]:
        pngs = []
        for metric, label in (("amplification", "resent per lost packet"), ("goodput_gbps", "goodput (Gb/s)")):
            vals = mean_by(results, lambda r: (r.point.params["reliability"], r.point.params["loss"]), metric)
            series = {}
            for rel in ("gbn", "sr"):
                xs = sorted(loss for (rr, loss) in vals if rr == rel)
                series[rel] = ([x * 100 for x in xs], [vals[(rel, x)] for x in xs])
            pngs.append(line_plot(out / f"{NAME}-{metric}.png", f"{self.title}", "loss on one link (%)", label,
                                  series, logx=True))
        return pngs


EXPERIMENT = LossRecovery()
