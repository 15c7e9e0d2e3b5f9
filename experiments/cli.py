"""``fabricctl experiment list`` and ``fabricctl experiment run NAME``.

    fabricctl experiment run load-balancing --quick --out out/exp/lb

Runs every point of the experiment in this process, in virtual time (fabric.p4 on every
switch, the NIC model on every host), and writes under ``--out``: results.json/results.csv,
PNG plots and report.md (the table and one line per claim), which it also prints. ``--live``
runs the reduced live form where one exists (root, Mininet).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from controller import run_demo
from controller.textfmt import shown_path
from experiments import runner
from experiments.base import PointResult
from experiments.registry import EXPERIMENTS

# experiments with a reduced live form: the arguments of the Mininet demo that runs it
LIVE_FORMS = {
    # ECMP (baseline) against spraying (ai-fabric) on 4 spines, one host per leaf: a
    # reduced form (the NICs differ with the profile as well) of the simulated comparison
    "load-balancing": ["--spines", "4", "--leaves", "2", "--hosts-per-leaf", "2", "--profiles", "baseline,ai-fabric"],
}


def add_parser(sub: Any) -> None:
    ep = sub.add_parser("experiment", help="named experiments that check the literature's claims",
                        description="Reproducible experiments on the virtual-time fabric: a table, PNG plots and "
                                    "one line per claim (what the literature states, what this run measured, "
                                    "whether the direction holds).")
    esub = ep.add_subparsers(dest="experiment_command", required=True, metavar="SUBCOMMAND")
    esub.add_parser("list", help="the experiments and their claims")
    rp = esub.add_parser("run", help="run one experiment and write its report")
    rp.add_argument("name", metavar="NAME", help=" | ".join(EXPERIMENTS))
    rp.add_argument("--quick", action="store_true", help="the small form (seconds; what `make test` checks)")
    rp.add_argument("--seeds", type=_positive, default=1, help="seeds per point (default 1)")
    rp.add_argument("--out", type=Path, default=None, help="output directory (default out/experiments/NAME)")
    rp.add_argument("--live", action="store_true", help="run the reduced live form on the Mininet fabric (root)")


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def cmd_experiment(args: argparse.Namespace, state_path: Path) -> int:
    if args.experiment_command == "list":
        for e in EXPERIMENTS.values():
            print(f"{e.name:16} {e.title}")
            for c in e.claims:
                print(f"{'':16}   claim: {c.statement} [{c.source}]")
        return 0
    exp = EXPERIMENTS.get(args.name)
    if exp is None:
        print(f"fabricctl: error: unknown experiment {args.name!r} (experiments: {', '.join(EXPERIMENTS)})",
              file=sys.stderr)
        return 2
    out = args.out or Path("out/experiments") / exp.name
    if args.live:
        live = LIVE_FORMS.get(exp.name)
        if live is None:
            print(f"fabricctl: error: {exp.name} has no live form: it needs more simulated time than a "
                  f"time-dilated Mininet fabric runs in minutes; run it in virtual time (without --live). "
                  f"Live forms: {', '.join(LIVE_FORMS)}", file=sys.stderr)
            return 2
        return run_demo.main([*live, "--out", str(out)])

    def progress(i: int, n: int, r: PointResult) -> None:
        status = "ok" if r.ok else f"FAILED after {r.attempts} attempts: {r.error}"
        print(f"[{i}/{n}] {r.point.key()}: {status}", file=sys.stderr, flush=True)

    results, text = runner.run_and_report(exp, args.quick, args.seeds, out, progress)
    print(text)
    print(f"wrote {shown_path(out / 'report.md')}, results.json, results.csv", file=sys.stderr)
    return 1 if any(not r.ok for r in results) else 0


COMMANDS = {"experiment": cmd_experiment}
