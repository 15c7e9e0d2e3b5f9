"""``fabricctl tune``: search congestion-control parameters that minimise the completion time
of a collective (ring all-reduce by default) on a given topology, on the sweep's Dask engine.

    fabricctl tune --topology leafspine:2x2x2 --profile ai-fabric --size 256KiB --trials 24 --out out/tune

Optuna's TPE sampler proposes parameters (ask/tell); each batch of trials (one per worker) runs
as points of the sweep engine (``sweep.run_sweep``: one simulation per task, a failed task
retried once). Batches are told back in trial order, so a given seed proposes the same trials
whatever the cluster. The NIC algorithm is the profile's (``nic.cc``); the searched knobs are
that algorithm's (``SEARCH_SPACES``), on top of the profile's own ``nic.cc_params``. The
defaults (the profile as it is) run first, in the same cluster, and the report compares the
best trial with them.

The RoCEv2 deployment guide reports learned CC factors cutting all-reduce time by 8 %; what
this fabric gets depends on whether the workload congests at all: a ring all-reduce whose
flows never share a link sees no ECN marks, so DCQCN's factors cannot change it, while
HPCC's target utilisation eta paces even an uncongested flow.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
from dask.distributed import Client
from optuna.distributions import BaseDistribution, FloatDistribution, IntDistribution

from controller.profiles import PROFILES, settings_for
from controller.sim_cmd import _size, parse_topology
from controller.textfmt import ProgressBar, shown_path, table
from controller.workloads import workload_specs
from experiments import sim
from experiments.base import Point
from experiments.sweep import _positive_int, dask_client, run_sweep

# The knobs searched per algorithm, with ranges around the published values (nicmodel/cc/*.py
# cite the sources of the defaults). DCQCN: the decrease factor is alpha/2 with alpha's gain g;
# increases are R_AI, R_HAI, each timer period T. HPCC: target utilisation eta, the additive
# step W_AI = R_AI x base RTT, and maxStage additive steps before a multiplicative one.
SEARCH_SPACES: dict[str, dict[str, BaseDistribution]] = {
    "dcqcn": {
        "g": FloatDistribution(1 / 1024, 1 / 4, log=True),
        "rate_ai_bps": FloatDistribution(5e6, 2e9, log=True),
        "rate_hai_bps": FloatDistribution(50e6, 10e9, log=True),
        "timer_ns": IntDistribution(10_000, 110_000, step=5_000),
    },
    "hpcc": {
        "eta": FloatDistribution(0.80, 1.0),
        "rate_ai_bps": FloatDistribution(5e6, 2e9, log=True),
        "max_stage": IntDistribution(0, 10),
    },
}
WORKLOADS = ("all-reduce", "all-to-all", "incast")


@dataclass
class CollectiveObjective:
    """What a tuning trial runs on a worker: the collective on a fresh simulated fabric
    (``experiments.sim.run``) with the trial's ``nic.cc_params`` (the point's params, less its
    ``trial`` number) on top of the profile's."""

    name: str
    topology: str
    profile: str
    workload: str
    size: int

    def run_point(self, point: Point) -> dict[str, Any]:
        topo = parse_topology(self.topology)
        cc_params = {k: v for k, v in point.params.items() if k != "trial"}
        specs = workload_specs(topo, self.workload, [h.name for h in topo.hosts], size=self.size, seed=point.seed)
        measured = sim.run(topo, self.profile, {"nic": {"cc_params": cc_params}}, specs, seed=point.seed,
                           workload=self.workload)
        if not (measured.result.ok and measured.sim.done):
            raise RuntimeError("; ".join(measured.result.errors[:3]) or "the collective did not complete")
        m = measured.base_metrics()
        return {k: m[k] for k in ("completion_us", "retransmissions", "timeouts", "tm_drops", "cnps", "ecn_marks",
                                  "pauses")}


@dataclass
class TuneOutcome:
    defaults: dict[str, Any]  # the defaults' metrics (completion, CNPs, ECN marks, pauses)
    trials: list[dict[str, Any]]  # {"trial", "params", "completion_us" | None, "error" | None}

    @property
    def default_us(self) -> float:
        return self.defaults["completion_us"]

    @property
    def best(self) -> dict[str, Any] | None:
        done = [t for t in self.trials if t["completion_us"] is not None]
        return min(done, key=lambda t: (t["completion_us"], t["trial"])) if done else None

    def gain(self) -> float:
        """Completion time saved by the best trial, as a fraction of the defaults' (0 if none is better)."""
        best = self.best
        return max(0.0, 1 - best["completion_us"] / self.default_us) if best else 0.0


def tune(client: Client, objective: CollectiveObjective, algo: str, trials: int, batch: int, seed: int = 1,
         progress: ProgressBar | None = None) -> TuneOutcome:
    """The defaults, then ``trials`` Optuna trials in batches of ``batch`` on ``client``."""
    space = SEARCH_SPACES[algo]
    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=max(2, min(10, trials // 3)))
    study = optuna.create_study(direction="minimize", sampler=sampler)
    reference = run_sweep(client, objective, [Point(objective.name, {"trial": "defaults"}, seed)])[0]
    if not reference.ok:
        raise RuntimeError(f"the defaults failed: {reference.error}")
    outcome = TuneOutcome(reference.metrics, [])
    while len(outcome.trials) < trials:
        asked = [study.ask(space) for _ in range(min(batch, trials - len(outcome.trials)))]
        points = [Point(objective.name, {"trial": t.number, **t.params}, seed) for t in asked]
        for t, r in zip(asked, run_sweep(client, objective, points)):
            value = r.metrics.get("completion_us") if r.ok else None
            study.tell(t, value, state=None if r.ok else optuna.trial.TrialState.FAIL)
            outcome.trials.append({"trial": t.number, "params": t.params, "completion_us": value, "error": r.error})
        if progress is not None:
            best = outcome.best
            progress.update(len(outcome.trials) / trials, f"{len(outcome.trials)}/{trials} trials"
                            + (f", best {best['completion_us']:.1f} us" if best else ""))
    return outcome


def report(outcome: TuneOutcome, objective: CollectiveObjective, algo: str) -> str:
    keys = list(SEARCH_SPACES[algo])
    rows = [[t["trial"], *(_fmt(t["params"][k]) for k in keys),
             t["completion_us"] if t["completion_us"] is not None else f"FAILED: {t['error']}"] for t in outcome.trials]
    lines = [table(["trial", *keys, "completion us"], rows), ""]
    best = outcome.best
    lines.append(f"{objective.workload} of {objective.size // 1024} KiB per host on {objective.topology}, profile "
                 f"{objective.profile} ({algo}), virtual time, fabric microseconds:")
    d = outcome.defaults
    lines.append(f"  defaults: {outcome.default_us:.2f} us ({d['ecn_marks']} ECN marks, {d['cnps']} CNPs, "
                 f"{d['pauses']} PFC pauses, {d['tm_drops']} queue drops, {d['retransmissions']} resent packets, "
                 f"{d['timeouts']} timeouts)")
    if best is None:
        lines.append("  no trial completed")
    else:
        change = best["completion_us"] / outcome.default_us - 1
        shown = ", ".join(f"{k}={_fmt(v)}" for k, v in best["params"].items())
        lines.append(f"  best (trial {best['trial']}): {best['completion_us']:.2f} us ({change:+.1%}) with {shown}")
    lines.append("  (the RoCEv2 deployment guide reports learned CC factors cutting all-reduce time by 8 %)")
    return "\n".join(lines)


def _fmt(v: Any) -> Any:
    return float(f"{v:.4g}") if isinstance(v, float) else v


def add_parser(sub: Any) -> None:
    sp = sub.add_parser("tune", help="search CC parameters that minimise all-reduce time, on Dask",
                        description="Search the profile's congestion-control parameters (DCQCN: g, R_AI, R_HAI, "
                                    "T; HPCC: eta, W_AI, maxStage) with Optuna to minimise the completion time "
                                    "of a collective on the virtual-time fabric; each trial is one simulation "
                                    "on Dask (a LocalCluster, or --scheduler). Reports the best against the "
                                    "defaults. See docs/sweeps.md.")
    sp.add_argument("--topology", default="leafspine:2x2x2",
                    help="topology FILE, leafspine:NxMxK or fattree:K (default leafspine:2x2x2)")
    sp.add_argument("--profile", default="baseline", help="fabric profile whose NIC algorithm is tuned (default baseline)")
    sp.add_argument("--workload", choices=WORKLOADS, default="all-reduce", help="collective (default all-reduce)")
    sp.add_argument("--size", type=_size, default=256 * 1024, help="bytes per host (default 256 KiB)")
    sp.add_argument("--trials", type=_positive_int, default=16, help="trials beside the defaults (default 16)")
    sp.add_argument("--seed", type=int, default=1, help="simulation and sampler seed (default 1)")
    sp.add_argument("--workers", type=_positive_int, default=None,
                    help="LocalCluster worker processes, also the batch size (default: one per core)")
    sp.add_argument("--scheduler", metavar="ADDRESS", default=None, help="use the Dask cluster at ADDRESS")
    sp.add_argument("--out", type=Path, default=Path("out/tune"), help="output directory (default out/tune)")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar")


def cmd_tune(args: argparse.Namespace, state_path: Path) -> int:
    if args.workers and args.scheduler:
        print("fabricctl: error: --workers sizes a LocalCluster; with --scheduler the cluster is yours", file=sys.stderr)
        return 2
    if args.profile not in PROFILES:
        print(f"fabricctl: error: unknown profile {args.profile!r} (profiles: {', '.join(PROFILES)})", file=sys.stderr)
        return 2
    algo = settings_for(args.profile).nic.cc
    if algo not in SEARCH_SPACES:
        print(f"fabricctl: error: profile {args.profile} runs {algo}; tune searches {', '.join(SEARCH_SPACES)}",
              file=sys.stderr)
        return 2
    try:
        topo = parse_topology(args.topology)
    except (ValueError, OSError) as e:
        print(f"fabricctl: error: {e}", file=sys.stderr)
        return 2
    if args.workload == "all-reduce" and args.size % len(topo.hosts):
        print(f"fabricctl: error: --size must be a multiple of the {len(topo.hosts)} hosts", file=sys.stderr)
        return 2
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    objective = CollectiveObjective("tune", args.topology, args.profile, args.workload, args.size)
    bar = None if args.no_progress else ProgressBar(f"tune {algo}")
    with dask_client(args.workers, args.scheduler) as client:
        batch = args.workers or max(1, len(client.scheduler_info()["workers"]))
        outcome = tune(client, objective, algo, args.trials, batch, args.seed, bar)
    text = report(outcome, objective, algo)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "tune.json"
    path.write_text(json.dumps({"topology": args.topology, "profile": args.profile, "algorithm": algo,
                                "workload": args.workload, "size": args.size, "seed": args.seed,
                                "defaults": outcome.defaults, "best": outcome.best, "gain": outcome.gain(),
                                "trials": outcome.trials}, indent=1) + "\n")
    print(f"wrote {shown_path(path)}")
    return 0 if outcome.best is not None else 1


COMMANDS = {"tune": cmd_tune}
